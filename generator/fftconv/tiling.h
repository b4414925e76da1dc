/* The index arithmetic of FFT convolution along one spatial dimension, for stride 1: which
 * Fourier sizes to try, how overlap-save cuts a long signal into tiles whose transform size
 * follows the kernel rather than the image, and how "convolution in parts" (overlap-add over
 * both operands) cuts the weight gradient's two long operands into blocks that are each
 * transformed once. Pure integer arithmetic, checked on the CPU against direct convolution
 * (tests/test_fft_tiling.c); a 2-D or 3-D tiling is the product of its dimensions'.
 *
 * Every operation here is a cross-correlation y[o] = sum_i x[o + i - pad_before] w[i] of a
 * signal x (zero outside [0, in)) with a kernel of `extent` taps (dilated extent for a dilated
 * kernel). fprop is that; bprop is the same with dy as the signal, the flipped kernel and
 * pad_before' = extent - 1 - pad_before; accgrad correlates the padded input with dy (parts). */
#ifndef CG_FFT_TILING_H
#define CG_FFT_TILING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* The Fourier sizes 2^a 3^b 5^c 7^d in [n, 2^ceil(log2 n)], ascending (fbfft section 4: the
 * autotuner times each). Returns how many were written (at most `max`). */
int fft_basis_candidates(int64_t n, int64_t *sizes, int max);

/* The smallest 2^a 3^b of at least n, for n in [1, 2^40] (else 0): a size whose generated
 * transforms take only radices 2, 3 and 4; they run radices 5 and 7 as plain DFTs, much slower
 * (bench/NOTES.md, "Issue 30, session 86"). */
int64_t fft_three_smooth_at_least(int64_t n);

/* Overlap-save along one dimension: tiles of n_fft inputs, each giving `step` outputs. */
typedef struct fft_tiling {
    int64_t in, out, extent, pad_before; /* the correlation: out = in + pads - extent + 1 */
    int64_t n_fft;                       /* the transform size, >= extent */
    int64_t step;                        /* valid outputs per tile: n_fft - extent + 1 */
    int64_t tiles;                       /* ceil(out / step) */
} fft_tiling;

/* One tile: the transform's input is the window [src, src + len) of the signal placed at
 * `offset` inside the n_fft points (the rest zero: clipped loads); its outputs 0 .. count - 1
 * are outputs first .. first + count - 1 of the correlation (clipped stores). */
typedef struct fft_tile {
    int64_t src, len, offset; /* input window */
    int64_t first, count;     /* valid outputs */
} fft_tile;

/* Checks the sizes (error names the field) and fills t. n_fft = 0 picks the smallest size that
 * needs a single tile. */
bool fft_tiling_make(int64_t in, int64_t out, int64_t extent, int64_t pad_before, int64_t n_fft, fft_tiling *t,
                     char *err, size_t errlen);
void fft_tiling_tile(const fft_tiling *t, int64_t index, fft_tile *tile);

/* Convolution in parts for the weight gradient dw[i] = sum_o xp[o + i] dy[o], i < extent, where
 * xp is the input padded by pad_before (xp[j] = x[j - pad_before]): dy is cut into blocks of
 * `block` outputs and xp into blocks of the same length; block b of dy meets blocks b .. b +
 * shifts - 1 of xp. With n_fft >= 2 block - 1 the circular correlation of two blocks holds every
 * lag in (-block, block) unaliased, so the products of each shift d, summed over b in the
 * frequency domain, need one inverse transform: lag l of shift d is tap i = d block + l. */
typedef struct fft_parts {
    int64_t in, out, extent, pad_before;
    int64_t block;    /* outputs of dy per block = inputs of xp per block */
    int64_t n_fft;    /* >= 2 block - 1 */
    int64_t dy_blocks; /* ceil(out / block) */
    int64_t x_blocks;  /* blocks of xp that any dy block meets: dy_blocks + shifts - 1 */
    int64_t shifts;    /* 1 + ceil((extent - 1) / block): the relative offsets d of a meeting */
} fft_parts;

bool fft_parts_make(int64_t in, int64_t out, int64_t extent, int64_t pad_before, int64_t block, int64_t n_fft,
                    fft_parts *p, char *err, size_t errlen);
/* The parts of an accgrad dimension from fft_conv_dims (whose `out` are the taps and `extent`
 * the length of dy, the other way round from fft_parts). */
typedef struct fft_conv_dim fft_conv_dim;
bool fft_parts_for(const fft_conv_dim *d, int64_t block, int64_t n_fft, fft_parts *p, char *err, size_t errlen);
/* Block j of xp as a window of x: [src, src + len) placed at `offset` inside the block (the
 * rest of the block zero). */
void fft_parts_x_block(const fft_parts *p, int64_t j, int64_t *src, int64_t *len, int64_t *offset);
/* Block b of dy: outputs [first, first + count). */
void fft_parts_dy_block(const fft_parts *p, int64_t b, int64_t *first, int64_t *count);
/* The taps of shift d: lag l in [lo, hi] of the shift's circular correlation (index l mod
 * n_fft) is tap d * block + l, kept where 0 <= tap < extent. */
void fft_parts_shift_lags(const fft_parts *p, int64_t d, int64_t *lo, int64_t *hi);

/* One spatial dimension of a layer's pass as such a correlation: fprop correlates x with the
 * dilated (and for convolution mode flipped) kernel; bprop correlates dy with that kernel
 * reversed, padded by extent - 1 - pad_before; accgrad correlates x with dy as the "kernel"
 * (extent = the output size) and keeps `extent` outputs g[i], the weight gradient's taps.
 * tap(f) says where weight tap f sits: in the correlation's kernel (fprop, bprop) or among
 * its outputs (accgrad). The channel sums of a pass are sums of such correlations. */
struct fft_conv_dim {
    int64_t in, out, extent, pad_before; /* the correlation */
    int64_t kernel_extent;               /* the dilated kernel: (kernel - 1) * dilation + 1 */
    int64_t taps, dilation;
    bool flip; /* convolution mode: weight tap f is kernel position taps - 1 - f */
    bool reverse; /* bprop: positions counted from the end */
};

/* Fills dims[0 .. p->rank - 1]; false (err names the field) unless every stride is 1. A padding
 * beyond the kernel's extent gives bprop a negative pad_before, which the tilings accept. */
bool fft_conv_dims(const cg_problem *p, convgen_pass pass, fft_conv_dim *dims, char *err, size_t errlen);
int64_t fft_conv_dim_tap(const fft_conv_dim *d, int64_t f);

#endif
