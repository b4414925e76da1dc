#!/bin/sh
# Session 82's device call for fft's complex tensor GEMM, adaptive to the device time left (LIMIT
# seconds; GROUPS1: the GPU test groups, default fft_tensor). Run from the repository root with
# carry [this script, devrun82b.patch, .deps], where devrun82b.patch is the kernel's change since
# 3521dc0, made here by
#   git diff 3521dc0 -- generator/gemm_complex_tc.c templates/gemm_complex_tc.cu templates/gemm_fetch.cuh > devrun82b.patch
# and, for the retune, bench/probes/fft_tensor_candidate.patch applied to the tree (patch -p1).
# What it runs: the GPU groups; on an H100 with time for it, the 2-D layers of the bench set
# retuned at effort exhaustive into a copy of the shipped wisdom (tune checks every candidate's
# output against the first's); then, as time allows, an A/B of the fft passes against the tree
# before the transposition (devrun82b.patch reversed) and ncu of L3 fprop's products.
set -u
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
LIMIT=${LIMIT:-560}
R=$OUT/r; mkdir -p $R
dnn=$(python3 -c 'import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])')
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt; cat $R/gpu.txt
rm -rf /tmp/base && mkdir -p /tmp/base && cp -r . /tmp/base/ && rm -rf /tmp/base/build
(cd /tmp/base && patch -R -p1 < devrun82b.patch > $R/patch.txt 2>&1 && SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/base-dr > $R/base-build.txt 2>&1) &
SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/dr > $R/new-build.txt 2>&1 || { tail -30 $R/new-build.txt; exit 1; }
export LD_LIBRARY_PATH=/tmp/convgen-deps/usr/lib/x86_64-linux-gnu:$dnn/lib
export CONVGEN_CACHE_DIR=/tmp/cg-cache
ninja -j16 build/tests/test_gpu_conv > $R/tb.txt 2>&1 || { tail $R/tb.txt; exit 1; }
echo "built at $(el) s"
CONVGEN_TEST_GROUPS="${GROUPS1:-fft_tensor}" build/tests/test_gpu_conv > $R/test1.txt 2>&1; echo "test ${GROUPS1:-fft_tensor} rc $? at $(el) s"
grep -E "^\[  (PASSED|FAILED)|FAILED TEST" $R/test1.txt | head -5
left=$(( LIMIT - $(el) ))
if grep -q "H100" $R/gpu.txt && [ $left -ge 220 ]; then
  grep -vE '^\S+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+x[0-9]+x[0-9]+ ' bench/layers.txt > $R/layers2d.txt
  cp bench/wisdom/nvidia-h100-80gb-hbm3.wisdom $R/new.wisdom # the 2-D entries replaced, the 3-D kept
  timeout $left ./build/convgen tune --set $R/layers2d.txt --pass all --effort exhaustive --wisdom $R/new.wisdom --csv $R/tune.csv > $R/tune.txt 2>&1
  echo "tune rc $? at $(el) s (limit $left s)"; tail -1 $R/new.wisdom; cp $R/new.wisdom $R/tune.csv $OUT/
  grep -i -c "differ\|mismatch\|error" $R/tune.txt
fi
wait
ab() {
  for t in new base; do
    d=.; [ $t = base ] && d=/tmp/base
    $d/build/convgen-bench --no-cudnn --algo fft --runs 30 $1 > $R/bench-$t-$1.txt 2>&1
    grep "| convgen |" $R/bench-$t-$1.txt | grep -v "w once" | awk -F'|' -v t=$t '{printf "%s %s %s %-28s %s %s\n", t, $2, $3, $5, $6, $11}'
  done
}
[ $(( LIMIT - $(el) )) -ge 40 ] && ab L3
for t in new base; do
  [ $(( LIMIT - $(el) )) -ge 20 ] || break
  d=.; [ $t = base ] && d=/tmp/base
  ncu -k regex:products --launch-count 1 --section SpeedOfLight --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats -o $R/ncu-$t $d/build/convgen check --algo fft --gemm tensor --pass fprop L3 > $R/ncu-$t.txt 2>&1
  ncu -i $R/ncu-$t.ncu-rep --page details --csv > $R/ncu-$t.csv 2>&1
  grep -E '"Duration"|Registers Per|Issue Slots Busy|"Executed Ipc Active"|"Executed Instructions"' $R/ncu-$t.csv | cut -d, -f10-13 | sed "s/^/$t /"
done
for l in L4 F2 F1 L2; do [ $(( LIMIT - $(el) )) -ge 35 ] && ab $l; done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz --exclude='*.ncu-rep' . && cd / && rm -rf $R
