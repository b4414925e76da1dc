/* Timing: CUDA events around each run, a spin kernel ahead of the start event, buffer sets
 * sized from the L2, and the kernels the bench compiles for itself. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "context.h"
#include "jit.h"
#include "templates.h"

/* The wait queued ahead of each start event: longer than the host takes to enqueue the event,
 * one run (cuDNN's and cuFFT's host paths included) and the stop event. */
#define SPIN_NS 50000ull

static const cg_driver *spin_driver;
static CUfunction spin_fn; /* NULL until bench_timing_init: runs are timed without the wait */
static size_t l2_bytes;

bool bench_load_kernel(convgen_context *ctx, const char *template_name, tmpl_value *values, const char *name,
                       CUfunction *fn)
{
    char *src = NULL;
    cache_kernel k = {0};
    convgen_kernel_origin origin;
    tmpl_set_str(values, "kernel_name", name);
    bool ok = cg_render_template(template_name, values, &src) == CONVGEN_SUCCESS &&
              jit_get(src, name, ctx->arch, NULL, &k, &origin) == CONVGEN_SUCCESS &&
              ctx_load_function(ctx, &k, src, name, fn) == CONVGEN_SUCCESS;
    if (!ok)
        fprintf(stderr, "convgen-bench: %s: %s\n", name, convgen_last_error());
    cache_kernel_free(&k);
    free(src);
    return ok;
}

bool bench_timing_init(convgen_context *ctx)
{
    int l2 = 0;
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
    l2_bytes = l2 > 0 ? (size_t)l2 : 50u << 20;
    tmpl_value *v = tmpl_map();
    spin_driver = ctx->drv;
    bool ok = bench_load_kernel(ctx, "bench_spin.cu", v, "convgen_bench_spin", &spin_fn);
    tmpl_unref(v);
    if (!ok)
        spin_fn = NULL;
    return ok;
}

int bench_sets_for(double bytes_per_set)
{
    if (bytes_per_set >= 2.0 * (double)l2_bytes)
        return 1;
    double sets = ceil(4.0 * (double)l2_bytes / fmax(bytes_per_set, 1.0));
    return sets > BENCH_MAX_SETS ? BENCH_MAX_SETS : (int)sets;
}

static bool spin(void)
{
    if (!spin_fn)
        return true;
    unsigned long long ns = SPIN_NS;
    void *args[] = {&ns};
    CUresult r = spin_driver->LaunchKernel(spin_fn, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL);
    if (r != CUDA_SUCCESS)
        fprintf(stderr, "convgen-bench: spin kernel launch failed (%d)\n", (int)r);
    return r == CUDA_SUCCESS;
}

bool bench_cuda_ok(int err, const char *what)
{
    if (err == cudaSuccess)
        return true;
    fprintf(stderr, "convgen-bench: %s: %s\n", what, cudaGetErrorString((cudaError_t)err));
    return false;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Events around each run, the GPU held by the spin kernel while the host enqueues them: the
 * time is the device's, launch latency excluded. */
double bench_median_ms(bench_run_fn run, void *state, int sets, int warmup, int runs)
{
    for (int i = 0; i < warmup; ++i)
        if (!run(state, i % sets))
            return -1;
    if (!bench_cuda_ok(cudaDeviceSynchronize(), "warm-up"))
        return -1;
    cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)runs);
    float *ms = malloc(sizeof *ms * (size_t)runs);
    bool ok = ev && ms;
    int created = 0;
    while (ok && created < 2 * runs && (ok = bench_cuda_ok(cudaEventCreate(&ev[created]), "cudaEventCreate")))
        ++created;
    for (int i = 0; ok && i < runs; ++i) {
        ok = spin() && bench_cuda_ok(cudaEventRecord(ev[2 * i], 0), "cudaEventRecord") && run(state, i % sets) &&
             bench_cuda_ok(cudaEventRecord(ev[2 * i + 1], 0), "cudaEventRecord");
    }
    ok = ok && bench_cuda_ok(cudaDeviceSynchronize(), "timed runs");
    for (int i = 0; ok && i < runs; ++i)
        ok = bench_cuda_ok(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    double median = -1;
    if (ok) {
        qsort(ms, (size_t)runs, sizeof *ms, by_value);
        median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    }
    for (int i = 0; i < created; ++i)
        cudaEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return median;
}

bool bench_table_open(bench_table *t, const char *out_dir, const char *name, const char *title, const char *device,
                      int runs)
{
    char timing[320];
    snprintf(timing, sizeof timing, "CUDA events, median of %d runs after 3 warm-up runs, each behind a %.0f us spin "
             "kernel so launch latency stays out; inputs rotate among buffer sets so that 4x the L2 passes between two "
             "uses of one (at most %d sets)", runs, SPIN_NS / 1e3, BENCH_MAX_SETS);
    return bench_table_open_timed(t, out_dir, name, title, device, timing);
}

bool bench_table_open_timed(bench_table *t, const char *out_dir, const char *name, const char *title,
                            const char *device, const char *timing)
{
    char md_path[4096], csv_path[4096];
    snprintf(md_path, sizeof md_path, "%s/%s.md", out_dir ? out_dir : "/tmp", name);
    snprintf(csv_path, sizeof csv_path, "%s/%s.csv", out_dir ? out_dir : "/tmp", name);
    t->md = fopen(md_path, "w+");
    t->csv = fopen(csv_path, "w");
    if (!t->md || !t->csv) {
        fprintf(stderr, "convgen-bench: cannot write %s\n", t->md ? csv_path : md_path);
        if (t->md)
            fclose(t->md);
        if (t->csv)
            fclose(t->csv);
        return false;
    }
    fprintf(t->md, "# convgen bench: %s\n\n", title);
    fprintf(t->md, "- device: %s\n- timing: %s\n\n", device, timing);
    return true;
}

int bench_table_close(bench_table *t)
{
    rewind(t->md);
    int c;
    while ((c = fgetc(t->md)) != EOF)
        putchar(c);
    return (fclose(t->md) != 0) | (fclose(t->csv) != 0);
}

/* " ms | GB/s | % copy |" of one side, or n/a where its runs failed. */
static void print_side(FILE *md, double ms, double bytes, double copy_gbs)
{
    double gbs = bytes / (ms * 1e-3) / 1e9;
    if (ms > 0)
        fprintf(md, " %.4f | %.0f | %.0f%% |", ms, gbs, 100 * gbs / copy_gbs);
    else
        fprintf(md, " n/a | | |");
}

void bench_print_times(FILE *md, FILE *csv, double mine, double theirs, double bytes, double copy_gbs)
{
    print_side(md, mine, bytes, copy_gbs);
    print_side(md, theirs, bytes, copy_gbs);
    bool both = mine > 0 && theirs > 0;
    if (both)
        fprintf(md, " %.2f |", theirs / mine);
    else
        fprintf(md, " n/a |");
    fprintf(csv, "%.6f,%.1f,%.6f,%.1f,%.4f", mine > 0 ? mine : NAN, mine > 0 ? bytes / (mine * 1e-3) / 1e9 : NAN,
            theirs > 0 ? theirs : NAN, theirs > 0 ? bytes / (theirs * 1e-3) / 1e9 : NAN, both ? theirs / mine : NAN);
}
