/* convgen-bench: convgen against cuDNN on the same GPU, in one run. Host code in C; the only
 * kernel of its own (the FMA ceiling) is a template like every other kernel. */
#ifndef BENCH_H
#define BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "convgen.h"
#include "driver.h"
#include "template/tmpl.h"

/* Buffer sets rotated between runs: enough that 4x the L2 passes between two uses of one set,
 * down to sets of 400 KiB on the H100 (smaller data stays partly in L2). */
#define BENCH_MAX_SETS 512

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

/* Reads the L2 size and compiles the spin kernel that bench_median_ms queues ahead of each
 * start event; without it (false, after a message) runs are timed with launch latency. */
bool bench_timing_init(convgen_context *ctx);
/* Buffer sets for data of this size: 1 from twice the L2, else enough for 4x the L2. */
int bench_sets_for(double bytes_per_set);
/* A Markdown table and its CSV twin, DIR/name.md and DIR/name.csv (DIR: out_dir or /tmp); open
 * writes the title, device and timing lines. close prints the Markdown to stdout and closes
 * both, nonzero if a write failed. */
typedef struct bench_table {
    FILE *md, *csv;
} bench_table;
bool bench_table_open(bench_table *t, const char *out_dir, const char *name, const char *title, const char *device,
                      int runs);
/* The same with the table's own timing line (after "- timing: "). */
bool bench_table_open_timed(bench_table *t, const char *out_dir, const char *name, const char *title,
                            const char *device, const char *timing);
int bench_table_close(bench_table *t);
/* The timing columns of an FFT row, convgen's then the library's: ms, GB/s (bytes moved over
 * the time), % of copy bandwidth, and the speedup; n/a (NaN in the CSV) where runs failed. */
void bench_print_times(FILE *md, FILE *csv, double mine, double theirs, double bytes, double copy_gbs);

/* Renders template_name with `values` (kernel_name set to name), compiles and loads it. */
bool bench_load_kernel(convgen_context *ctx, const char *template_name, tmpl_value *values, const char *name,
                       CUfunction *fn);

/* ---- cuDNN (bench_cudnn.c, bench_cudnn_graph.c) ---- */
typedef struct bench_cudnn bench_cudnn;
/* One API's best for one math mode. */
typedef struct bench_cudnn_best {
    bool ok;
    char algo[128];   /* legacy: "FFT_TILING"; graph: "eng12 TILE_SIZE=3,STAGES=4" ("tc": tensor cores) */
    double ms;
    double ref_error; /* ||out - ref|| / ||ref|| against the float64 reference; NaN: not measured */
    char why[192];    /* when !ok */
} bench_cudnn_best;
/* cuDNN's best for one math mode: the legacy API's, the graph API's, and which won. */
typedef struct bench_cudnn_pick {
    bench_cudnn_best legacy, graph;
    int winner;       /* 0 legacy, 1 graph, -1 neither ran */
    char graph_summary[160]; /* configurations tried, for the report */
} bench_cudnn_pick;
/* The error of an output (device memory, set 0's inputs) against the float64 reference. */
typedef double (*bench_error_fn)(void *state, const float *out);

bench_cudnn *bench_cudnn_create(void);
void bench_cudnn_destroy(bench_cudnn *c);
const char *bench_cudnn_version(void);
/* cuDNN at its strongest on one pass, in strict fp32 (picks[0]) and with TF32 allowed
 * (picks[1]): the legacy API's cudnnFind…AlgorithmEx pick (FMA math, or default math), and the
 * graph API's engine configurations (at most graph_configs; 0: legacy only), each API's best
 * timed with events, median of `runs`. Each API's best output is checked with `error` (NULL:
 * not checked). If `reference` is not NULL, the strict winner writes its output on set 0 there
 * (device memory, out's size). */
void bench_cudnn_pass(bench_cudnn *c, const convgen_conv_desc *d, convgen_pass pass, bench_buffers *b, int runs,
                      int graph_configs, bench_error_fn error, void *error_state, float *reference,
                      bench_cudnn_pick picks[2]);

/* ---- ceilings (bench_ceilings.c) ---- */
double bench_copy_bandwidth_gbs(void);          /* device-to-device copy, bytes read + written */
double bench_fma_tflops(convgen_context *ctx);  /* fp32 FMA throughput of a template kernel */

/* ---- FFTs (bench_fft.c) ---- */
/* Generated 1-D C2C FFTs against cuFFT; prints a table and writes DIR/fft.md and fft.csv. */
int bench_fft(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir);
/* R2C and C2R, rank 1, 2 and 3 (bench_fft_real.c): fft-real.md and fft-real.csv in out_dir. A
 * non-zero only_rank or only_n keeps the rows of that rank or size. */
int bench_fft_real(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir,
                   int only_rank, int only_n);

/* convgen's max pooling and max-pooling fragments (convgen_plan_pool) against cuDNN's pooling, the
 * fragments against cuDNN once per window offset (ZNNi's baseline), on ZNNi's 3-D layers. */
int bench_pool(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir);

/* ZNNi's networks (bench/nets/NAME.net; count 0: all four) over random cubes of `side`: convgen's
 * executor against ZNNi's cuDNN baseline and cuDNN's dense (dilated) form (bench_net.c);
 * net.md and net.csv in out_dir. */
int bench_net(convgen_context *ctx, int runs, const char *device, const char *out_dir, const char *const *names,
              int count, int64_t side);

#endif
