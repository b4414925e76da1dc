# The pieces the A/B device calls share (sourced by fft_tensor_device_call.sh and
# tc_ab_device_call.sh, from the repository root, with $OUT set and LIMIT the seconds to stay
# within): the results folder $R, the elapsed seconds (el), both trees built, a bounded GPU test
# run, the bench of both trees (ab) or of variants (variant), and ncu of both trees. The base tree
# is this one with the patches reversed, in /tmp/base; its build runs in the background (wait for
# it before ab, variant or prof).
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=$OUT/r; mkdir -p $R
dnn=$(python3 -c 'import nvidia.cudnn; print(list(nvidia.cudnn.__path__)[0])')
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv > $R/gpu.txt; cat $R/gpu.txt

build_both() { # patch files: the change under test, reversed for the base
  rm -rf /tmp/base && mkdir -p /tmp/base && cp -r . /tmp/base/ && rm -rf /tmp/base/build
  (cd /tmp/base && for p in "$@"; do patch -R -p1 < $p >> $R/patch.txt 2>&1 || exit 1; done &&
   SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/base-dr > $R/base-build.txt 2>&1) &
  SKIP_TESTS=1 SKIP_BENCH=1 sh bench/device-run.sh $R/dr > $R/new-build.txt 2>&1 || { tail -30 $R/new-build.txt; exit 1; }
  export LD_LIBRARY_PATH=/tmp/convgen-deps/usr/lib/x86_64-linux-gnu:$dnn/lib
  export CONVGEN_CACHE_DIR=/tmp/cg-cache
  ninja -j16 build/tests/test_gpu_conv > $R/tb.txt 2>&1 || { tail $R/tb.txt; exit 1; }
  echo "built at $(el) s"
}

test_groups() { # groups seconds: the GPU test groups on the new tree (a hang ends the run, not the call)
  CONVGEN_TEST_GROUPS="$1" timeout $2 build/tests/test_gpu_conv > $R/test1.txt 2>&1
  echo "test $1 rc $? at $(el) s"
  grep -E "^\[  (PASSED|FAILED)|FAILED TEST|runs within|ERROR" $R/test1.txt | head -12
}

ab() { # layer [bench options]: the convgen rows of both trees
  l=$1; shift
  for t in new base; do
    d=.; [ $t = base ] && d=/tmp/base
    timeout 90 $d/build/convgen-bench --no-cudnn --runs 30 "$@" $l > $R/bench-$t-$l.txt 2>&1
    grep "| convgen |" $R/bench-$t-$l.txt | grep -v "w once" | awk -F'|' -v t=$t '{printf "%s %s %s %-40s %s %s\n", t, $2, $3, substr($5,1,40), $6, $11}'
  done
}

variant() { # tag layer env...: fprop and bprop of the layer in the base tree (tag base) or this one
  # under the environment (a probe's knobs), the run's number $rep in the file's name
  tag=$1 l=$2; shift 2
  [ $(( LIMIT - $(el) )) -ge 15 ] || return 0
  d=.; [ $tag = base ] && d=/tmp/base
  env "$@" timeout 90 $d/build/convgen-bench --no-cudnn --runs 50 --algo auto $l > $R/bench-$tag-$l-$rep.txt 2>&1
  grep "| convgen |" $R/bench-$tag-$l-$rep.txt | grep -v "w once" | grep -v accgrad |
    awk -F'|' -v t=$tag -v r=$rep '{printf "%-6s r%s %s %s %s\n", t, r, $2, $3, $6}'
}

prof() { # name kernel-regex convgen-check-arguments...: one launch of the kernel under ncu, both trees
  n=$1 k=$2; shift 2
  for t in new base; do
    [ $(( LIMIT - $(el) )) -ge 25 ] || break
    d=.; [ $t = base ] && d=/tmp/base
    timeout 60 ncu -k regex:$k --launch-count 1 --section SpeedOfLight --section LaunchStats --section ComputeWorkloadAnalysis \
      --section InstructionStats --section MemoryWorkloadAnalysis --section WarpStateStats -o $R/ncu-$n-$t $d/build/convgen check "$@" > $R/ncu-$n-$t.txt 2>&1
    ncu -i $R/ncu-$n-$t.ncu-rep --page details --csv --print-details all > $R/ncu-$n-$t.csv 2>&1
    grep -E '"Duration"|Registers Per|Issue Slots Busy|L1/TEX Cache Throughput|"Compute \(SM\) Throughput"|DRAM Throughput' $R/ncu-$n-$t.csv | cut -d, -f13-15 | sed "s/^/$n $t /"
  done
}
