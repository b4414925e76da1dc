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
for rep in 1 2 3; do
  for l in S32 V2 R3; do variant base $l; variant one $l CG_PROBE_GROUP=999; variant rule $l; done
done
for rep in 1 2; do
  for l in V3 V4 R4; do variant base $l; variant rule $l; done
done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz . && cd / && rm -rf $R
