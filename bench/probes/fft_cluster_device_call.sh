#!/bin/sh
# The device call that times fft_tensor_cluster.patch (issue 30, session 90; NOTES "session 90",
# Next 1): fft's complex tensor GEMM with clusters of 2 or 4 row blocks sharing op(B)'s tiles
# (CG_PROBE_CLUSTER), against the tree without it, interleaved, on the layers whose wisdom runs that
# GEMM. Run from the repository root with carry [.deps, devrun.patch], the patch applied and copied:
#   patch -p1 < bench/probes/fft_tensor_cluster.patch && cp bench/probes/fft_tensor_cluster.patch devrun.patch
# The GPU group fft_tensor runs first (its kernels unclustered: the knob is unset), then F2, L3, L4
# fprop and bprop by variant() (base; c2, c4: the knob at 2 and 4; 2 runs each), then ncu of F2
# fprop's products in both trees and at c4 (L2 and DRAM throughput, registers, occupancy). LIMIT:
# the seconds to stay within (default 330; ~400 s of device time with the start). Results in
# $OUT/r.tgz.
set -u
LIMIT=${LIMIT:-330}
. bench/probes/device_ab.sh
build_both devrun.patch
test_groups fft_tensor 70
wait
tail -1 $R/base-build.txt
for rep in 1 2; do
  for l in F2 L3 L4; do variant base $l; variant c2 $l CG_PROBE_CLUSTER=2; variant c4 $l CG_PROBE_CLUSTER=4; done
done
prof F2f products --algo auto --pass fprop F2
if [ $(( LIMIT - $(el) )) -ge 25 ]; then
  CG_PROBE_CLUSTER=4 timeout 60 ncu -k regex:products --launch-count 1 --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section MemoryWorkloadAnalysis -o $R/ncu-F2f-c4 ./build/convgen check --algo auto --pass fprop F2 > $R/ncu-F2f-c4.txt 2>&1
  ncu -i $R/ncu-F2f-c4.ncu-rep --page details --csv > $R/ncu-F2f-c4.csv 2>&1
  grep -E '"Duration"|L2 Cache Throughput|DRAM Throughput|Registers Per|Achieved Occupancy' $R/ncu-F2f-c4.csv | cut -d, -f13-15
fi
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz . && cd / && rm -rf $R
