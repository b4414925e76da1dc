# The paths issue 27 moved (generator/ and templates/ in folders by family), for
# tools/emit-diff.sh: what an emitted header said before, as it says it now.
s|generator/cufft_conv\.c and fft_tiles\.c|generator/fftconv/program.c and fft_tiled.c|g
s|generator/cufft_conv\.c|generator/fftconv/program.c|g
s|generator/fft_fused\.c|generator/fftconv/fft_fused.c|g
s|generator/fft_regs\.c|generator/fft/fft_regs.c|g
s|generator/fft_real\.c|generator/fft/fft_real.c|g
s|generator/fft_kernel\.c|generator/fft/fft_kernel.c|g
s|generator/direct\.c|generator/direct/direct.c|g
s|generator/direct_window\.c|generator/direct/direct_window.c|g
s|generator/winograd\.c|generator/winograd/winograd.c|g
s|generator/winograd_fused\.c|generator/winograd/winograd_fused.c|g
s|templates/cufft_conv\.cu|templates/fftconv/pad_clip.cu|g
s|templates/transpose\.cu|templates/fftconv/transpose.cu|g
s|templates/fft_fused\.cu|templates/fftconv/fft_fused.cu|g
s|templates/fft_real\.cu|templates/fft/fft_real.cu|g
s|templates/fft_real_cluster\.cuh|templates/fft/fft_real_cluster.cuh|g
s|templates/fft1d\.cu|templates/fft/fft1d.cu|g
s|templates/direct\.cu|templates/direct/direct.cu|g
s|templates/direct_window\.cu|templates/direct/direct_window.cu|g
s|templates/winograd\.cu|templates/winograd/winograd.cu|g
s|templates/winograd_fused\.cu|templates/winograd/winograd_fused.cu|g
s|templates/winograd_fused_accgrad\.cu|templates/winograd/winograd_fused_accgrad.cu|g
