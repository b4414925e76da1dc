#!/bin/sh
# The device call that times winograd_streamed_output.patch (issue 30, sessions 88-89; NOTES
# "session 89", Next 1): the streamed tree against the tree without it, interleaved, three runs a
# variant on the grouped layers. Run from the repository root with carry [.deps, devrun.patch],
# the patch applied in the tree and copied as devrun.patch:
#   patch -p1 < bench/probes/winograd_streamed_output.patch && cp bench/probes/winograd_streamed_output.patch devrun.patch
# Variants: base (the patch reversed, in /tmp/base), rule (the patch's G), one (CG_PROBE_GROUP=999:
# one group, streamed). The GPU group winograd_tensor runs first (with the repeat test). LIMIT:
# the seconds to stay within (default 300). Everything lands in $OUT/r.tgz.
set -u
PATCH=devrun.patch
LIMIT=${LIMIT:-300}
. bench/probes/device_ab.sh
build_both "$PATCH"
test_groups winograd_tensor 90
grep -E "runs,|unlike" $R/test1.txt | head
wait
tail -1 $R/base-build.txt
rep=1
b() { # tag layer env...: fprop and bprop of the layer, the tag's tree and environment
  tag=$1 l=$2; shift 2
  [ $(( LIMIT - $(el) )) -ge 15 ] || return 0
  d=.; [ $tag = base ] && d=/tmp/base
  env "$@" timeout 90 $d/build/convgen-bench --no-cudnn --runs 50 --algo auto $l > $R/bench-$tag-$l-$rep.txt 2>&1
  grep "| convgen |" $R/bench-$tag-$l-$rep.txt | grep -v "w once" | grep -v accgrad |
    awk -F'|' -v t=$tag -v r=$rep '{printf "%-6s r%s %s %s %s\n", t, r, $2, $3, $6}'
}
for rep in 1 2 3; do
  for l in S32 V2 R3; do b base $l; b one $l CG_PROBE_GROUP=999; b rule $l; done
done
for rep in 1 2; do
  for l in V3 V4 R4; do b base $l; b rule $l; done
done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz . && cd / && rm -rf $R
