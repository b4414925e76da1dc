/* A complex FFT of n points held in one thread's registers (fft-fused's row and column
 * transforms): mixed-radix decimation in time as a list of in-place butterflies on an array
 * x[n] indexed by constants, every twiddle factor a constant. */
#ifndef CG_FFT_REGS_H
#define CG_FFT_REGS_H

#include <stdbool.h>
#include <stddef.h>

#include "template/tmpl.h"

/* Radices up to 7: convgen's tiles are 2^a 3^b 5^c 7^d points (the weights' R2C takes them). */
enum { REG_FFT_MAX_N = 64, REG_FFT_MAX_RADIX = 7 };

/* One butterfly: b_t = sum_s x[regs[s]] w_m^(sign s k) w_r^(sign s t), written to x[regs[t]]:
 * radix r, and the input twiddle w_m^(sign s k) as the pair (k, m). */
typedef struct reg_butterfly {
    int radix, k, m;
    int regs[REG_FFT_MAX_RADIX];
} reg_butterfly;

typedef struct reg_fft {
    int n, sign, count;
    reg_butterfly b[REG_FFT_MAX_N * 6]; /* at most n / 2 butterflies per level, log2 n levels */
    int out[REG_FFT_MAX_N];             /* X[k] ends in x[out[k]] */
} reg_fft;

/* The schedule of the DFT X[k] = sum_j x[j] exp(sign 2 pi i j k / n): radices 4, 2 and the odd
 * primes of n. False if n is outside 1..REG_FFT_MAX_N or has a prime factor above
 * REG_FFT_MAX_RADIX. */
bool cg_reg_fft(int n, int sign, reg_fft *f);

/* Runs the schedule on x = re + i im in double precision (the CPU check of the butterflies and
 * the output order): element f->out[k] then holds X[k]. */
void cg_reg_fft_eval(const reg_fft *f, double *re, double *im);

/* The radices of n's levels, outermost first ("4x4", "5x7"), into buf. */
void cg_reg_fft_radices(int n, char *buf, size_t size);

/* The template value: {n, sign, butterflies: [{radix, regs, tw: [coefficient per input],
 * cos, sin (odd radices)}], out}. */
tmpl_value *cg_reg_fft_value(const reg_fft *f);

/* Two real rows as one complex transform Z = A + i B (the "two for the price of one" packing):
 * split[k] = {k, z, zm}, the registers of Z_k and Z_(n-k) that give A_k = Z_k + conj Z_(n-k) and
 * B_k = -i (Z_k - conj Z_(n-k)), twice the true ones, for the h = n / 2 + 1 bins of a row. */
tmpl_value *cg_reg_fft_split_value(const reg_fft *fwd, int h);
/* The inverse: Z_k = A_k + i B_k from two rows' half spectra, merge[k] = {k, kind, src} (see
 * fft_regs.c), so that one complex inverse gives the two real rows as its two parts. */
tmpl_value *cg_reg_fft_merge_value(int n, int h);

/* Where a register transform's values go or come from: {reg, at} for i < count, register
 * first + i (regs[first + i] where regs is given, a transform's outputs) and element
 * (skip + i) * step of a buffer. */
tmpl_value *cg_reg_placements(const int *regs, int first, int count, int skip, int step);

#endif
