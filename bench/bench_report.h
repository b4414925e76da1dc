/* The bench's results: rows per layer, pass and implementation, the ceilings, the JIT
 * figures; printed as Markdown, written as Markdown and CSV. */
#ifndef BENCH_REPORT_H
#define BENCH_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "convgen.h"
#include "layer.h"

typedef struct bench_row {
    char layer[32];
    convgen_pass pass;
    char impl[16];   /* convgen, cudnn-fp32, cudnn-tf32 */
    char algo[160];  /* cuDNN rows: "<api>: <algorithm or engine>" of the winner */
    double ms;       /* < 0: not run */
    double flops;    /* time-domain equivalent FLOPs of the pass */
    double rel_error;/* against cuDNN strict fp32's winner; NaN for cuDNN's own rows */
    double ref_error;/* against the float64 reference at sampled points; NaN: not measured */
    char note[192];
    /* cuDNN rows: each API's best (ms < 0: none ran; the note says why) */
    char legacy_algo[192], graph_algo[192]; /* or why none ran */
    double legacy_ms, graph_ms, legacy_error, graph_error;
    char graph_configs[160]; /* what the graph API tried */
} bench_row;

typedef struct sample_list {
    double *v;
    int count, cap;
} sample_list;

typedef struct bench_report {
    char gpu[256], device[768], cudnn_version[32], date[32];
    double copy_gbs, fma_tflops;
    bench_row *rows;
    int count, cap;
    sample_list cold_ms, disk_ms, memory_us;
    sample_list wisdom_ms; /* AUTO plans of tuned shapes: from wisdom, kernels from the disk cache */
    double call_us;        /* a cached plan's convgen_execute, host time per call (< 0: not measured) */
} bench_report;

bench_report *bench_report_create(void);
void bench_report_destroy(bench_report *r);
void bench_report_add(bench_report *r, const bench_row *row);
/* Times planning a tuned layer and pass again with AUTO (wisdom holds the choice; the memory
 * cache is cleared first, so its kernels come from the disk cache). */
void bench_report_auto_replan(bench_report *r, convgen_context *ctx, const cg_layer *l, convgen_pass pass);
/* Records the NVRTC compile times of a fresh plan's kernels. */
void bench_report_jit_plan(bench_report *r, const convgen_plan *plan);
/* Plans every benchmarked layer again with the benchmarked algorithms (`algos` a comma-separated
 * list, NULL: all): from the disk cache (memory cleared), then from memory. */
void bench_report_jit_replan(bench_report *r, convgen_context *ctx, const cg_layer *layers, int count,
                             const char *const *names, int name_count, const char *algos);
/* The layer whose execute call bench_report_call_overhead times (python/bench_call.py times the
 * same from Python): small enough that the GPU keeps up with the calls. */
#define BENCH_CALL_LAYER "1 8 8 16x16 3x3 1 1"
/* Times convgen_execute of a cached direct fprop plan of BENCH_CALL_LAYER on the host clock:
 * the median over rounds of 200 calls (each round synchronized) of a call's microseconds. */
void bench_report_call_overhead(bench_report *r, convgen_context *ctx);
/* Whether `name` is a whole entry of the comma-separated `list`; true for every name when list is
 * NULL. */
bool bench_algo_listed(const char *list, const char *name);
void bench_report_print(const bench_report *r, FILE *f);
/* DIR/bench.md and DIR/bench.csv; 0 on success. */
int bench_report_write(const bench_report *r, const char *dir);

#endif
