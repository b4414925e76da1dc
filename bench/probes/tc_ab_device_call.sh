#!/bin/sh
# The device call of session 85's A/Bs (winograd's tensor GEMM with op(A) from registers): a change
# under test against the tree without it, in one call. Run from the repository root with carry
# [.deps, the patch], the change applied in the tree and saved as the patch (PATCH, default
# devrun.patch), e.g.
#   patch -p1 < bench/probes/SOME.patch && git diff -- generator templates tests > devrun.patch
# What it runs: both trees built in parallel (the base by reversing the patch), the GPU test groups
# GROUPS1 (default winograd_tensor) bounded by TEST_LIMIT, then per layer of AB_LAYERS `convgen-bench
# --no-cudnn --runs 30 --algo auto` on the new tree and the base, alternating (the wisdom's picks),
# and unless NO_PROF is set ncu of R4 accgrad's, V3 accgrad's and S32 fprop's products in both;
# stops starting layers when LIMIT seconds are near. Everything lands in $OUT/r.tgz.
set -u
PATCH=${PATCH:-devrun.patch}
LIMIT=${LIMIT:-540}
. bench/probes/device_ab.sh
build_both "$PATCH"
test_groups "${GROUPS1:-winograd_tensor}" ${TEST_LIMIT:-150}
wait
grep -c . $R/patch.txt; tail -2 $R/base-build.txt
for l in ${AB_LAYERS:-R4 V3 V4 V5 R3 S32 L5 B2 V2 V1 L5c R2 F1 B1 Z3 U3}; do
  [ $(( LIMIT - $(el) )) -ge 60 ] || break
  ab $l --algo auto
  if [ -z "${NO_PROF:-}" ]; then [ $l = R4 ] && prof R4a products --algo auto --pass accgrad R4; [ $l = V3 ] && prof V3a products --algo auto --pass accgrad V3; [ $l = S32 ] && prof S32f products --algo auto --pass fprop S32; fi
done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz . && cd / && rm -rf $R
