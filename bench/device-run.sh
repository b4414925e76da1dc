#!/bin/sh
# On a GPU machine: configure, build, run every test suite with the GPU tests, print the
# compile report of the layer set and check layers of it against the CPU reference. Logs go
# under OUTDIR. Packages the machine lacks (cmocka, xxhash, libdivide) may be carried as
# Debian .deb files in .deps/: they are unpacked into a private prefix, never into /.
# usage: bench/device-run.sh OUTDIR [LAYER NAME...]
set -u
out=${1:?usage: bench/device-run.sh OUTDIR [LAYER...]}
shift
layers=${*:-L2 L4 R4 G1 B1 Z3}
mkdir -p "$out"
cd "$(dirname "$0")/.."

if ! pkg-config --exists cmocka 2>/dev/null && ls .deps/*.deb >/dev/null 2>&1; then
    pfx=${TMPDIR:-/tmp}/convgen-deps
    for deb in .deps/*.deb; do dpkg -x "$deb" "$pfx"; done
    for pc in "$pfx"/usr/lib/x86_64-linux-gnu/pkgconfig/*.pc; do
        sed -i "s|/usr|$pfx/usr|g" "$pc"
    done
    export PKG_CONFIG_PATH="$pfx/usr/lib/x86_64-linux-gnu/pkgconfig"
    export CPATH="$pfx/usr/include" LIBRARY_PATH="$pfx/usr/lib/x86_64-linux-gnu"
    export LD_LIBRARY_PATH="$pfx/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export CONVGEN_CACHE_DIR="${CONVGEN_CACHE_DIR:-${TMPDIR:-/tmp}/convgen-cache}"

step() { # name command...: runs, logs to OUTDIR/name.log, reports the status
    name=$1
    shift
    start=$(date +%s)
    "$@" >"$out/$name.log" 2>&1
    rc=$?
    echo "[$name] exit $rc in $(($(date +%s) - start)) s"
    return $rc
}

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv >"$out/gpu.txt" 2>&1
step configure ./configure || { tail -20 "$out/configure.log"; exit 1; }
step build ninja -j16 || { tail -40 "$out/build.log"; exit 1; }
step test ninja test
tail -n 15 "$out/test.log"
grep -h '^== ' "$out/test.log"
for l in $layers; do
    step "compile-$l" build/convgen compile "$l"
    cat "$out/compile-$l.log"
    step "check-$l" build/convgen check "$l"
    cat "$out/check-$l.log"
done
tail -n 1 "$out/test.log"
