#!/bin/sh
# The device call of session 85's A/Bs (winograd's tensor GEMM with op(A) from registers): a change
# under test against the tree without it, in one call. Run from the repository root with carry
# [.deps, the patch], the change applied in the tree and saved as the patch (PATCH, default
# devrun.patch), e.g.
#   patch -p1 < bench/probes/gemm_tc_setmaxnreg.patch && git diff -- generator templates tests > devrun.patch
# What it runs: both trees built in parallel (the base by reversing the patch), the GPU test groups
# GROUPS1 (default winograd_tensor) bounded by TEST_LIMIT, then per layer of AB_LAYERS `convgen-bench
# --no-cudnn --runs 30 --algo auto` on the new tree and the base, alternating (the wisdom's picks),
# and unless NO_PROF is set ncu of R4 accgrad's, V3 accgrad's and S32 fprop's products in both;
# stops starting layers when LIMIT seconds are near. Everything lands in $OUT/r.tgz.
set -u
PATCH=${PATCH:-devrun.patch}
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
LIMIT=${LIMIT:-540}
R=$OUT/r; mkdir -p $R
dnn=$(python3 -c 'import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])')
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt; cat $R/gpu.txt
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r . /tmp/base/ && rm -rf /tmp/base/build
(cd /tmp/base && patch -R -p1 < "$PATCH" > $R/patch.txt 2>&1 &&
 SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/base-dr > $R/base-build.txt 2>&1) &
SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/dr > $R/new-build.txt 2>&1 || { tail -30 $R/new-build.txt; exit 1; }
export LD_LIBRARY_PATH=/tmp/convgen-deps/usr/lib/x86_64-linux-gnu:$dnn/lib
export CONVGEN_CACHE_DIR=/tmp/cg-cache
ninja -j16 build/tests/test_gpu_conv > $R/tb.txt 2>&1 || { tail $R/tb.txt; exit 1; }
echo "built at $(el) s"
CONVGEN_TEST_GROUPS="${GROUPS1:-winograd_tensor}" timeout ${TEST_LIMIT:-150} build/tests/test_gpu_conv > $R/test1.txt 2>&1
echo "test rc $? at $(el) s"
grep -E "^\[  (PASSED|FAILED)|FAILED TEST|runs within|ERROR|error" $R/test1.txt | head -12
wait
grep -c . $R/patch.txt; tail -2 $R/base-build.txt
ab() { # layer [bench options]
  l=$1; shift
  for t in new base; do
    d=.; [ $t = base ] && d=/tmp/base
    timeout 90 $d/build/convgen-bench --no-cudnn --runs 30 "$@" $l > $R/bench-$t-$l.txt 2>&1
    grep "| convgen |" $R/bench-$t-$l.txt | grep -v "w once" | awk -F'|' -v t=$t '{printf "%s %s %s %-40s %s %s\n", t, $2, $3, substr($5,1,40), $6, $11}'
  done
}
prof() { # name kernel-regex convgen-check-arguments...
  n=$1 k=$2; shift 2
  for t in new base; do
    [ $(( LIMIT - $(el) )) -ge 25 ] || break
    d=.; [ $t = base ] && d=/tmp/base
    timeout 60 ncu -k regex:$k --launch-count 1 --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats -o $R/ncu-$n-$t $d/build/convgen check "$@" > $R/ncu-$n-$t.txt 2>&1
    ncu -i $R/ncu-$n-$t.ncu-rep --page details --csv --print-details all > $R/ncu-$n-$t.csv 2>&1
    grep -E '"Duration"|Registers Per|L1/TEX Cache Throughput|"Compute \(SM\) Throughput"|DRAM Throughput' $R/ncu-$n-$t.csv | cut -d, -f13-15 | sed "s/^/$n $t /"
  done
}
for l in ${AB_LAYERS:-R4 V3 V4 V5 R3 S32 L5 B2 V2 V1 L5c R2 F1 B1 Z3 U3}; do
  [ $(( LIMIT - $(el) )) -ge 60 ] || break
  ab $l --algo auto
  if [ -z "${NO_PROF:-}" ]; then [ $l = R4 ] && prof R4a products --algo auto --pass accgrad R4; [ $l = V3 ] && prof V3a products --algo auto --pass accgrad V3; [ $l = S32 ] && prof S32f products --algo auto --pass fprop S32; fi
done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz . && cd / && rm -rf $R
