#!/bin/sh
# On a GPU machine: configure, build, run every test suite with the GPU tests, check a few
# layers against the CPU reference, and run the bench against cuDNN. Everything lands under
# OUTDIR: logs, the bench's Markdown table and CSV, the speedup plot, and a copy of those named
# results/<gpu>-<date>.{md,csv,png} ready for bench/results/.
#
# usage: bench/device-run.sh OUTDIR [LAYER NAME...]    (bench layers; default every 2-D layer)
# environment: CHECK_LAYERS (default "L2 L4 R4 G1 B1 Z3"; empty: none), SKIP_TESTS=1, SKIP_BENCH=1,
#   TESTS="test_fft_batched ..." (only those test programs), BENCH_FFT_ONLY=1 (only --fft),
#   SANITIZE=address,undefined (configure --sanitize=...; with CUDA_VISIBLE_DEVICES= the suite
#   runs as CI does, its GPU tests skipped)
# Exits non-zero when any step failed.
#
# Packages the machine lacks (cmocka, xxhash, libdivide) may be carried as Debian .deb files in
# .deps/: they are unpacked into a private prefix, never into /.
set -u
out=${1:?usage: bench/device-run.sh OUTDIR [LAYER...]}
shift
mkdir -p "$out" && out=$(cd "$out" && pwd)
cd "$(dirname "$0")/.."

if ! pkg-config --exists cmocka 2>/dev/null && ls .deps/*.deb >/dev/null 2>&1; then
    pfx=${TMPDIR:-/tmp}/convgen-deps
    for deb in .deps/*.deb; do dpkg -x "$deb" "$pfx"; done
    for pc in "$pfx"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
        sed -i "s|=/usr|=$pfx/usr|g; s| -I/usr| -I$pfx/usr|g; s| -L/usr| -L$pfx/usr|g" "$pc"
    done
    export PKG_CONFIG_PATH="$pfx/usr/lib/x86_64-linux-gnu/pkgconfig"
    export CPATH="$pfx/usr/include" LIBRARY_PATH="$pfx/usr/lib/x86_64-linux-gnu"
    export LD_LIBRARY_PATH="$pfx/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export CONVGEN_CACHE_DIR="${CONVGEN_CACHE_DIR:-${TMPDIR:-/tmp}/convgen-cache}"

failed=
step() { # name command...: runs, logs to OUTDIR/name.log, reports the status
    name=$1
    shift
    start=$(date +%s)
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    echo "[$name] exit $rc in $(($(date +%s) - start)) s"
    [ "$rc" -eq 0 ] || failed="$failed $name"
    return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
step configure ./configure ${SANITIZE:+--sanitize=$SANITIZE} || { tail -20 "$out/configure.log"; exit 1; }
grep cuDNN "$out/configure.log"
step build ninja -j16 || { tail -40 "$out/build.log"; exit 1; }
if [ -z "${SKIP_TESTS:-}" ]; then
    if [ -n "${TESTS:-}" ]; then
        step build-tests ninja -j16 $(for t in $TESTS; do echo "build/tests/$t"; done) &&
            step test sh tests/run.sh build $(for t in $TESTS; do echo "build/tests/$t"; done)
    else
        step test ninja test
    fi
    grep -h '^== ' "$out/test.log"
    tail -n 1 "$out/test.log"
    # the Python package on the GPU, whether or not the machine's python3 has pytest (the
    # suite test_python needs it; test_gpu.py also runs alone)
    step python-gpu env CONVGEN_LIBRARY=build/libconvgen.so.0 PYTHONPATH=python python3 python/tests/test_gpu.py
    cat "$out/python-gpu.log"
    # convgen.nn where the machine's python3 has PyTorch (exit 3: skipped, saying why)
    step python-torch env CONVGEN_LIBRARY=build/libconvgen.so.0 PYTHONPATH=python python3 python/tests/test_torch.py
    cat "$out/python-torch.log"
    for l in ${CHECK_LAYERS-L2 L4 R4 G1 B1 Z3}; do
        step "compile-$l" build/convgen compile "$l"
        step "check-$l" build/convgen check "$l"
        cat "$out/check-$l.log"
    done
fi
if [ -z "${SKIP_BENCH:-}" ] && [ -x build/convgen-bench ]; then
    rm -rf "$out/bench" && mkdir -p "$out/bench" # no table of an earlier run is copied as today's
    if [ -z "${BENCH_FFT_ONLY:-}" ]; then
        step bench build/convgen bench --out "$out/bench" "$@"
        tail -n 8 "$out/bench.log"
        # the same execute call from Python, beside the C figure in bench.md's JIT lines
        [ -f "$out/bench/bench.md" ] && step python-call env CONVGEN_LIBRARY=build/libconvgen.so.0 \
            PYTHONPATH=python python3 bench/python_call.py "$out/bench/bench.md" && cat "$out/python-call.log"
    fi
    step bench-fft build/convgen bench --fft --no-cudnn --out "$out/bench"
    grep '^|' "$out/bench-fft.log" | tail -n 22
    if [ -f "$out/bench/bench.csv" ]; then
        python3 bench/plot.py "$out/bench/bench.csv" "$out/bench/bench.png" >"$out/plot.log" 2>&1 ||
            echo "plot failed: $(tail -n 3 "$out/plot.log")"
    fi
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 | tr 'A-Z ' 'a-z-' | tr -cd 'a-z0-9-')
    name=$gpu-$(date -u +%Y-%m-%d)
    mkdir -p "$out/results"
    for ext in md csv png; do
        [ -f "$out/bench/bench.$ext" ] && cp "$out/bench/bench.$ext" "$out/results/$name.$ext"
        [ -f "$out/bench/fft.$ext" ] && cp "$out/bench/fft.$ext" "$out/results/$name-fft.$ext"
        [ -f "$out/bench/fft-real.$ext" ] && cp "$out/bench/fft-real.$ext" "$out/results/$name-fft-real.$ext"
    done
    echo "results: $out/results/$name.*"
fi
if [ -n "$failed" ]; then
    echo "failed steps:$failed"
    exit 1
fi
