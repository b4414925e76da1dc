#!/bin/sh
# ninja install: the header, both libraries, the CLI and a pkg-config file, under
# $DESTDIR$prefix. usage: install.sh SRC BUILDDIR PREFIX ARCHS
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
cat >"$root/lib/pkgconfig/convgen.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: convgen
Description: fully specialized CUDA convolution kernels, generated per layer shape and JIT-compiled with NVRTC
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -lconvgen
Libs.private: -L$cuda_lib -Wl,-rpath,$cuda_lib -lnvrtc -ldl -lpthread -lm
PC
echo "installed convgen $version in $root"
