#!/bin/sh
# ninja install: the header, both libraries, the CLI, a pkg-config file and the Python package, under
# $DESTDIR$prefix. usage (in the folder of build.ninja): install.sh SRC BUILDDIR PREFIX ARCHS
# convgen.h includes no CUDA header, so Cflags needs none; Libs.private lists what libconvgen
# links (build.ninja's libs: NVRTC, cuFFT, cuBLAS; the driver is loaded at run time), for
# `pkg-config --static --libs` when a program links libconvgen.a.
set -eu
src=$1 build=$2 prefix=$3
root=${DESTDIR:-}$prefix
mkdir -p "$root/include" "$root/lib/pkgconfig" "$root/bin" "$root/share/convgen"
install -m 644 "$src/bench/layers.txt" "$root/share/convgen/layers.txt"
install -m 644 "$src/runtime/convgen.h" "$root/include/convgen.h"
install -m 644 "$build/libconvgen.a" "$root/lib/libconvgen.a"
install -m 755 "$build/libconvgen.so.0" "$root/lib/libconvgen.so.0"
ln -sf libconvgen.so.0 "$root/lib/libconvgen.so"
install -m 755 "$build/convgen" "$root/bin/convgen"
[ -x "$build/convgen-bench" ] && install -m 755 "$build/convgen-bench" "$root/bin/convgen-bench"
version=$(sed -n 's/^#define CONVGEN_VERSION_STRING "\(.*\)"/\1/p' "$src/runtime/convgen.h")
cuda_lib=$(sed -n 's/^cuda_lib = //p' build.ninja)
# The first run of a program built with `pkg-config --libs convgen` must find libconvgen.so.0
# without LD_LIBRARY_PATH or ldconfig: Libs carries an rpath to libdir, except under /usr,
# whose lib is searched anyway (/usr/local/lib is only in ld.so's cache, after ldconfig).
rpath='-Wl,-rpath,${libdir} '
[ "$prefix" = /usr ] && rpath=
cat >"$root/lib/pkgconfig/convgen.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: convgen
Description: fully specialized CUDA convolution kernels, generated per layer shape and JIT-compiled with NVRTC
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} $rpath-lconvgen
Libs.private: -L$cuda_lib -Wl,-rpath,$cuda_lib -lnvrtc -lcufft -lcublas -ldl -lpthread -lm
PC
# The Python package (python/convgen, no compiled part), with the library's folder written into
# it (convgen/_paths.py) so that `import convgen` finds libconvgen.so.0 without CONVGEN_LIBRARY:
# into the folder of python3's own path under the prefix where it has one (Debian's
# /usr/local/lib/python3.X/dist-packages), else its posix_prefix scheme's (add that to
# PYTHONPATH). share/convgen/python-path says which. Skipped, saying so, without a python3.
if command -v python3 >/dev/null 2>&1; then
    purelib=$(python3 - "$prefix" <<'PY'
import sys, sysconfig
prefix = sys.argv[1].rstrip("/")
own = [p for p in sys.path if p.startswith(prefix + "/lib/") and p.endswith("-packages")]
print(own[0] if own else sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix, "platbase": prefix}))
PY
)
    mkdir -p "${DESTDIR:-}$purelib/convgen"
    for f in "$src"/python/convgen/*.py; do
        install -m 644 "$f" "${DESTDIR:-}$purelib/convgen/$(basename "$f")"
    done
    printf '# written by ninja install: where libconvgen.so.0 is\nLIBDIR = %s\n' "'$prefix/lib'" \
        >"${DESTDIR:-}$purelib/convgen/_paths.py"
    echo "$purelib" >"$root/share/convgen/python-path"
    echo "installed the Python package in ${DESTDIR:-}$purelib/convgen"
else
    echo "no python3: the Python package (python/convgen) was not installed"
fi
echo "installed convgen $version in $root"
