#!/bin/sh
# emit-snapshot.sh BUILD DIR [LAYERS]: everything the generator decides, as files, for proving
# that a refactor changes no behaviour (diff two snapshots with tools/emit-diff.sh).
#
# Writes into DIR (no GPU needed; BUILD is a build folder with convgen and convgen-gen):
#   emit/LAYER.ALGO.cu        convgen emit --algo ALGO --pass all LAYER, every registered
#                             algorithm (its stderr and exit status when not applicable)
#   emit/LAYER.ALGO.VARIANT.cu the same with each --gemm and, for winograd, each --tile
#   tune/LAYER.txt            convgen tune offline at effort exhaustive: every candidate, its
#                             cost-model estimate and workspace, the winner
#   set/                      convgen generate --ninja over LAYERS (the kernel set's sources)
#   fft/*.cu                  convgen emit --algo fft --n N: batched FFT plans
# LAYERS defaults to bench/layers.txt; $ALGOS overrides the list of algorithms.
set -u
build=${1:?usage: emit-snapshot.sh BUILD DIR [LAYERS]}
dir=${2:?usage: emit-snapshot.sh BUILD DIR [LAYERS]}
src=$(cd "$(dirname "$0")/.." && pwd)
layers=${3:-$src/bench/layers.txt}
cg="$build/convgen"
[ -x "$cg" ] || { echo "emit-snapshot.sh: no $cg" >&2; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/emit" "$dir/tune" "$dir/set" "$dir/fft" || exit 1

# what a command printed and how it ended, in one file
capture() {
    out=$1
    shift
    "$@" >"$out" 2>"$out.err"
    echo "exit $?" >>"$out.err"
}

algos=${ALGOS:-direct direct-window cufft fft fft-tiled fft-fused winograd winograd-fused}
names=$(awk '!/^#/ && NF >= 8 { print $1 }' "$layers")
for l in $names; do
    for a in $algos; do
        capture "$dir/emit/$l.$a.cu" "$cg" emit --layers "$layers" --algo "$a" --pass all "$l"
    done
    for a in fft fft-tiled winograd; do
        for g in cublas generated; do
            capture "$dir/emit/$l.$a.gemm-$g.cu" "$cg" emit --layers "$layers" --algo "$a" --gemm "$g" --pass all "$l"
        done
    done
    for t in 2 4 6; do
        capture "$dir/emit/$l.winograd.tile-$t.cu" "$cg" emit --layers "$layers" --algo winograd --tile "$t" --pass all "$l"
        capture "$dir/emit/$l.winograd-fused.tile-$t.cu" "$cg" emit --layers "$layers" --algo winograd-fused --tile "$t" --pass all "$l"
    done
    capture "$dir/emit/$l.fft.fourier.cu" "$cg" emit --layers "$layers" --algo fft --fourier 128 --pass all "$l"
    capture "$dir/emit/$l.fft-tiled.limit.cu" "$cg" emit --layers "$layers" --algo fft-tiled --workspace-limit 100000000 --pass all "$l"
    capture "$dir/tune/$l.txt" "$cg" tune --layers "$layers" --arch sm_90 --effort exhaustive --pass all "$l"
done

capture "$dir/set/generate.txt" "$build/convgen-gen" generate --set "$layers" --out "$dir/set" --arch sm_90 \
    --wisdom "$src/bench/wisdom/nvidia-h100-80gb-hbm3.wisdom" --ninja "$dir/set/set.ninja"
# the ninja file names the build's paths; the sources are what matters
rm -f "$dir/set/set.ninja"
sed -i "s|$dir|SNAPSHOT|g" "$dir/set/generate.txt"

for n in 8 16 35 64 128 256; do
    capture "$dir/fft/r2c-$n.cu" "$cg" emit --algo fft --n "$n" --batch 4 --channels 3
    capture "$dir/fft/c2r-$n.cu" "$cg" emit --algo fft --type c2r --n "$n" --batch 4 --layout transposed --order reversed
    capture "$dir/fft/c2c-$n.cu" "$cg" emit --algo fft --type c2c-forward --n "$n" --batch 8
done
capture "$dir/fft/window.cu" "$cg" emit --algo fft --n 64 --batch 2 --window 20x30 --offset 3x5 --pitch 40
echo "emit-snapshot.sh: $(find "$dir" -type f | wc -l) files in $dir"
