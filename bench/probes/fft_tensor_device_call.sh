#!/bin/sh
# The device call for fft's complex tensor GEMM (sessions 82-83) and the tensor GEMM's staggered
# warpgroups (session 83), adaptive to the device time left (LIMIT seconds; GROUPS1: the GPU test
# groups, default fft_tensor). Run from the repository root with carry [the patches, .deps], where
# the patches (PATCHES, default devrun82b.patch) are the changes under test, made here by e.g.
#   git diff 3521dc0 -- generator/gemm_complex_tc.c templates/gemm_complex_tc.cu templates/gemm_fetch.cuh > devrun82b.patch
#   cp bench/probes/gemm_tc_stagger.patch devrun83s.patch && patch -p1 < devrun83s.patch  (session 83's stagger)
# (bench/probes/fft_tensor_candidate.patch, applied for session 83's retune, is in the tree since 100c0ea.)
# What it runs: the GPU groups (each bounded: a hang ends the group, not the call); on an H100
# with time for it, the 2-D layers of the bench set retuned at effort exhaustive into a copy of
# the shipped wisdom (tune checks every candidate's output against the first's); then, as time
# allows, A/Bs against the tree without the patches (all reversed): fft's passes (L3 first), ncu
# of L3 fprop's products, winograd's tensor GEMM on R4 and S32 (WINO_AB=1) with ncu of R4
# accgrad's products. AB_LAYERS: the layers after L3 (default L4 F2 V3).
set -u
LIMIT=${LIMIT:-560}
PATCHES=${PATCHES:-devrun82b.patch}
. bench/probes/device_ab.sh
build_both $PATCHES
test_groups "${GROUPS1:-fft_tensor}" ${TEST_LIMIT:-200}
for l in ${CHECKS:-}; do # "LAYER:pass:algo options" (timeout: a hang ends the check)
  set -- $(echo $l | tr ':' ' ')
  timeout 60 ./build/convgen check --pass $2 $(echo $3 | tr ',' ' ') $1 > $R/check-$1-$2.txt 2>&1; echo "check $l rc $?"
  grep -iE "error|within|max" $R/check-$1-$2.txt | head -3
done
left=$(( LIMIT - $(el) ))
if grep -q "H100" $R/gpu.txt && [ $left -ge 220 ] && [ -z "${NO_TUNE:-}" ]; then
  grep -vE '^\S+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+x[0-9]+x[0-9]+ ' bench/layers.txt > $R/layers2d.txt
  cp bench/wisdom/nvidia-h100-80gb-hbm3.wisdom $R/new.wisdom # the 2-D entries replaced, the 3-D kept
  timeout $(( left - 100 )) ./build/convgen tune --set $R/layers2d.txt --pass all --effort exhaustive --wisdom $R/new.wisdom --csv $R/tune.csv > $R/tune.txt 2>&1
  echo "tune rc $? at $(el) s (limit $(( left - 100 )) s)"; tail -1 $R/new.wisdom; cp $R/new.wisdom $R/tune.csv $OUT/
  grep -i -c "differ\|mismatch\|error" $R/tune.txt
fi
wait
[ $(( LIMIT - $(el) )) -ge 40 ] && ab L3 --algo fft
prof L3f products --algo fft --gemm tensor --pass fprop L3
if [ -n "${WINO_AB:-}" ]; then
  [ $(( LIMIT - $(el) )) -ge 40 ] && ab R4 --algo winograd --tile 4x4
  prof R4a products --algo winograd --gemm tensor --tile 4x4 --pass accgrad R4
  [ $(( LIMIT - $(el) )) -ge 40 ] && ab S32 --algo winograd --tile 6x6
fi
for l in ${AB_LAYERS:-L4 F2 V3}; do
  [ $(( LIMIT - $(el) )) -ge 35 ] || break
  if [ $l = V3 ]; then [ -n "${WINO_AB:-}" ] && ab V3 --algo winograd; else ab $l --algo fft; fi
done
echo "done at $(el) s"
cd $R && tar czf $OUT/r.tgz --exclude='*.ncu-rep' . && cd / && rm -rf $R
