/* convgen-bench: convgen against cuDNN on the same GPU, in one run. Host code in C; the only
 * kernel of its own (the FMA ceiling) is a template like every other kernel. */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convgen.h"

#define BENCH_MAX_SETS 8

/* Device buffers of one layer and pass: `sets` copies of the inputs and outputs, rotated
 * between runs when a layer's data fits in L2, so runs time memory and not the cache. */
typedef struct bench_buffers {
    int sets;
    int64_t elems[3]; /* in0, in1, out (convgen_execute's order) */
    float *in0[BENCH_MAX_SETS], *in1[BENCH_MAX_SETS], *out[BENCH_MAX_SETS];
    void *workspace;
    size_t workspace_bytes;
} bench_buffers;

/* One timed run on buffer set `set`; returns false on an error (after printing it). */
typedef bool (*bench_run_fn)(void *state, int set);

/* Median over `runs` runs of the time between CUDA events around one run, after `warmup`
 * untimed runs; negative if a run failed. */
double bench_median_ms(bench_run_fn run, void *state, int sets, int warmup, int runs);

/* A CUDA runtime call that must succeed; prints the call and error. */
bool bench_cuda_ok(int err, const char *what);

/* ---- cuDNN (bench_cudnn.c) ---- */
typedef struct bench_cudnn bench_cudnn;
typedef struct bench_cudnn_pick {
    bool ok;
    char algo[48];  /* e.g. "FFT_TILING" */
    double ms;
    char why[160];  /* when !ok */
} bench_cudnn_pick;

bench_cudnn *bench_cudnn_create(void);
void bench_cudnn_destroy(bench_cudnn *c);
const char *bench_cudnn_version(void);
/* Finds the fastest algorithm of the pass with cudnnFind…AlgorithmEx (strict fp32: FMA math
 * only; or TF32 allowed), then times it with events, median of `runs`. If `reference` is not
 * NULL, the strict run writes its output on set 0 there (device memory, out's size). */
bench_cudnn_pick bench_cudnn_run(bench_cudnn *c, const convgen_conv_desc *d, convgen_pass pass, bool tf32,
                                 bench_buffers *b, int runs, float *reference);

/* ---- ceilings (bench_ceilings.c) ---- */
double bench_copy_bandwidth_gbs(void);          /* device-to-device copy, bytes read + written */
double bench_fma_tflops(convgen_context *ctx);  /* fp32 FMA throughput of a template kernel */

/* ---- FFTs (bench_fft.c) ---- */
/* Generated 1-D C2C FFTs against cuFFT; prints a table and writes DIR/fft.md and fft.csv. */
int bench_fft(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir);
/* R2C and C2R, rank 1 and 2 (bench_fft_real.c): fft-real.md and fft-real.csv in out_dir. A
 * non-zero only_rank or only_n keeps the rows of that rank or size. */
int bench_fft_real(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir,
                   int only_rank, int only_n);

#endif
