/* convgen's generated R2C and C2R FFTs (through the public convgen_plan_fft API) against cuFFT's
 * batched plans, in the same run: rank 1 and 2, n = 8..256, at 1024 transforms and at ~128 MiB of
 * input; rank 3, n = 16..64, at 64 volumes and at ~128 MiB. Windowed rows (a window smaller than
 * n, as FFT convolution uses) charge cuFFT with the padded copy (R2C) or the clipping copy (C2R)
 * its user must make; convgen reads and writes the window in place. Rank 3 windows are not
 * charged a copy (one 3-D copy per volume would cost cuFFT more API calls than transforms): its
 * time there is the transform of the padded volume alone, and the pruning table sets convgen's
 * pruned transform of a kernel-sized window against its own transform of the whole cube. Reports ms, GB/s (bytes read + written by convgen's transform), the
 * fraction of the measured copy bandwidth, the speedup and the error against cuFFT. */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static const int sizes[] = {8, 16, 32, 64, 128, 256};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])
#define BIG_BYTES (128ll << 20)
#define VOLUME_MAX_N 64 /* convgen's rank 3 transforms go up to n = 64 */

typedef struct real_case {
    convgen_fft_desc d;
    convgen_plan *plan;
    cufftHandle cufft;
    bool windowed;
    int sets;
    long long count;
    size_t real_bytes, spec_bytes;  /* convgen's two sides (the real one holds the window only) */
    void *in[BENCH_MAX_SETS], *out[BENCH_MAX_SETS];
    void *cufft_in[BENCH_MAX_SETS];  /* C2R: cuFFT overwrites a multi-dimensional C2R's input */
    void *ws;
    size_t ws_bytes;
    float *padded;                   /* cuFFT's n (x n) real buffer, when windowed */
    void *cufft_out;                 /* cuFFT's output where it differs from convgen's */
} real_case;

static int rows_of(const real_case *c) { return c->d.rank == 2 ? c->d.window[0] : 1; }

/* Points of one signal (n^rank) and of one window. */
static size_t signal_points(const real_case *c)
{
    size_t s = 1;
    for (int i = 0; i < c->d.rank; ++i)
        s *= (size_t)c->d.n;
    return s;
}
static size_t window_points(const real_case *c)
{
    size_t s = 1;
    for (int i = 0; i < c->d.rank; ++i)
        s *= (size_t)c->d.window[i];
    return s;
}

/* Rank 3 windows: cuFFT transforms the padded volume with no copy (see the top). */
static bool charged_copy(const real_case *c) { return c->windowed && c->d.rank < 3; }

/* The window <-> padded-signal copy a cuFFT user makes: one 3-D copy for the whole batch. */
static bool window_copy(real_case *c, const void *from, void *to, bool into_padded)
{
    int n = c->d.n, w = c->d.window[c->d.rank - 1], h = rows_of(c);
    struct cudaMemcpy3DParms p = {0};
    struct cudaPitchedPtr win = {.ptr = into_padded ? (void *)from : to, .pitch = w * sizeof(float),
                                 .xsize = w * sizeof(float), .ysize = (size_t)h};
    struct cudaPitchedPtr pad = {.ptr = into_padded ? to : (void *)from, .pitch = n * sizeof(float),
                                 .xsize = n * sizeof(float), .ysize = c->d.rank == 2 ? (size_t)n : 1};
    p.srcPtr = into_padded ? win : pad;
    p.dstPtr = into_padded ? pad : win;
    p.extent = (struct cudaExtent){.width = w * sizeof(float), .height = (size_t)h, .depth = (size_t)c->count};
    p.kind = cudaMemcpyDeviceToDevice;
    return cudaMemcpy3DAsync(&p, NULL) == cudaSuccess;
}

static bool convgen_once(void *state, int set)
{
    real_case *c = state;
    return convgen_execute_fft(c->plan, c->in[set], c->out[set], c->ws, c->ws_bytes, NULL) == CONVGEN_SUCCESS;
}

static bool cufft_once(void *state, int set)
{
    real_case *c = state;
    if (c->d.type == CONVGEN_FFT_R2C) {
        if (charged_copy(c) && !window_copy(c, c->in[set], c->padded, true))
            return false;
        return cufftExecR2C(c->cufft, c->windowed ? c->padded : (float *)c->in[set], (cufftComplex *)c->out[set]) ==
               CUFFT_SUCCESS;
    }
    float *real = c->windowed ? c->padded : (float *)c->out[set];
    if (cufftExecC2R(c->cufft, (cufftComplex *)c->cufft_in[set], real) != CUFFT_SUCCESS)
        return false;
    return !charged_copy(c) || window_copy(c, c->padded, c->out[set], false);
}

/* C2R: cuFFT's own copy of the input, restored before runs whose output is compared. */
static bool refresh_cufft_input(real_case *c)
{
    if (c->d.type != CONVGEN_FFT_C2R)
        return true;
    for (int s = 0; s < c->sets; ++s)
        if (!bench_cuda_ok(cudaMemcpy(c->cufft_in[s], c->in[s], c->spec_bytes, cudaMemcpyDeviceToDevice), "cuFFT input"))
            return false;
    return true;
}

static double rel_error(const float *a_dev, const float *b_dev, size_t floats)
{
    float *a = malloc(floats * sizeof *a), *b = malloc(floats * sizeof *b);
    double d = 0, r = 0;
    if (a && b && cudaMemcpy(a, a_dev, floats * sizeof *a, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(b, b_dev, floats * sizeof *b, cudaMemcpyDeviceToHost) == cudaSuccess)
        for (size_t i = 0; i < floats; ++i)
            d += pow((double)a[i] - b[i], 2), r += pow((double)b[i], 2);
    else
        d = NAN;
    free(a);
    free(b);
    return isnan(d) ? INFINITY : sqrt(d / r);
}

static float *random_floats(size_t count)
{
    float *h = malloc(count * sizeof *h);
    for (size_t i = 0; h && i < count; ++i)
        h[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    return h;
}

/* C2R inputs must be Hermitian halves: cuFFT's R2C of random real data. */
static bool hermitian_input(real_case *c, void *dst)
{
    int n = c->d.n, dims[3] = {n, n, n};
    size_t floats = (size_t)c->count * signal_points(c);
    float *host = random_floats(floats), *dev = NULL;
    cufftHandle p;
    bool ok = host && bench_cuda_ok(cudaMalloc((void **)&dev, floats * sizeof(float)), "C2R source") &&
              bench_cuda_ok(cudaMemcpy(dev, host, floats * sizeof(float), cudaMemcpyHostToDevice), "C2R source copy") &&
              cufftPlanMany(&p, c->d.rank, dims, NULL, 1, 0, NULL, 1, 0, CUFFT_R2C, (int)c->count) == CUFFT_SUCCESS;
    if (ok) {
        ok = cufftExecR2C(p, dev, dst) == CUFFT_SUCCESS && bench_cuda_ok(cudaDeviceSynchronize(), "C2R source FFT");
        cufftDestroy(p);
    }
    cudaFree(dev);
    free(host);
    return ok;
}

static bool prepare(real_case *c, convgen_context *ctx)
{
    int n = c->d.n, dims[3] = {n, n, n};
    int half = n / 2 + 1;
    c->real_bytes = (size_t)c->count * window_points(c) * sizeof(float);
    c->spec_bytes = (size_t)c->count * signal_points(c) / n * half * 2 * sizeof(float);
    bool r2c = c->d.type == CONVGEN_FFT_R2C;
    size_t in_bytes = r2c ? c->real_bytes : c->spec_bytes, out_bytes = r2c ? c->spec_bytes : c->real_bytes;
    c->sets = bench_sets_for((double)(in_bytes + out_bytes));
    if (convgen_plan_fft(ctx, &c->d, &c->plan) != CONVGEN_SUCCESS ||
        convgen_plan_workspace_size(c->plan, &c->ws_bytes) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen-bench: FFT plan n = %d: %s\n", n, convgen_last_error());
        return false;
    }
    bool ok = cufftPlanMany(&c->cufft, c->d.rank, dims, NULL, 1, 0, NULL, 1, 0, r2c ? CUFFT_R2C : CUFFT_C2R,
                            (int)c->count) == CUFFT_SUCCESS;
    if (ok && c->ws_bytes)
        ok = bench_cuda_ok(cudaMalloc(&c->ws, c->ws_bytes), "FFT workspace");
    if (ok && c->windowed) {
        size_t padded = (size_t)c->count * signal_points(c) * sizeof(float);
        ok = bench_cuda_ok(cudaMalloc((void **)&c->padded, padded), "cuFFT padded buffer") &&
             bench_cuda_ok(cudaMemset(c->padded, 0, padded), "cuFFT padding");
    }
    float *host = ok && r2c ? random_floats(in_bytes / sizeof(float)) : NULL;
    for (int s = 0; ok && s < c->sets; ++s) {
        ok = bench_cuda_ok(cudaMalloc(&c->in[s], in_bytes), "FFT input") &&
             bench_cuda_ok(cudaMalloc(&c->out[s], out_bytes), "FFT output");
        if (ok && r2c)
            ok = host && bench_cuda_ok(cudaMemcpy(c->in[s], host, in_bytes, cudaMemcpyHostToDevice), "FFT input copy");
        else if (ok)
            ok = (s ? bench_cuda_ok(cudaMemcpy(c->in[s], c->in[0], in_bytes, cudaMemcpyDeviceToDevice), "copy")
                    : hermitian_input(c, c->in[0])) &&
                 bench_cuda_ok(cudaMalloc(&c->cufft_in[s], in_bytes), "cuFFT input");
    }
    free(host);
    return ok && bench_cuda_ok(cudaMalloc(&c->cufft_out, out_bytes), "cuFFT output");
}

static void release(real_case *c)
{
    for (int s = 0; s < BENCH_MAX_SETS; ++s) {
        cudaFree(c->cufft_in[s]);
        cudaFree(c->in[s]);
        cudaFree(c->out[s]);
    }
    cudaFree(c->ws);
    cudaFree(c->padded);
    cudaFree(c->cufft_out);
    if (c->cufft)
        cufftDestroy(c->cufft);
    convgen_plan_destroy(c->plan);
}

static void row(FILE *md, FILE *csv, convgen_context *ctx, int rank, convgen_fft_type type, int n, long long count,
                int window, bool transposed, int runs, double copy_gbs)
{
    real_case c = {.d = {.rank = rank, .n = n, .type = type, .batch = count}, .count = count, .windowed = window < n};
    c.d.layout = transposed ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL;
    for (int i = 0; i < rank; ++i) /* the same size along every dimension */
        c.d.window[i] = window;
    const char *what = type == CONVGEN_FFT_R2C ? (transposed ? "R2C, transposed" : "R2C")
                                               : (transposed ? "C2R, transposed" : "C2R");
    if (!prepare(&c, ctx)) {
        fprintf(md, "| %d-D %s | %d | %d | %lld | failed: %s |\n", rank, what, n, window, count, convgen_last_error());
        release(&c);
        return;
    }
    double mine = bench_median_ms(convgen_once, &c, c.sets, 3, runs);
    refresh_cufft_input(&c);
    double theirs = bench_median_ms(cufft_once, &c, c.sets, 3, runs);
    /* Error: convgen's output against cuFFT's (with its copy) on set 0. */
    size_t out_bytes = type == CONVGEN_FFT_R2C ? c.spec_bytes : c.real_bytes;
    double err = NAN; /* a transposed spectrum is not comparable with cuFFT's, nor a rank 3 window's */
    bool comparable = !transposed && (rank < 3 || !c.windowed);
    if (comparable && refresh_cufft_input(&c) && convgen_once(&c, 0) && bench_cuda_ok(cudaMemcpy(c.cufft_out, c.out[0], out_bytes, cudaMemcpyDeviceToDevice), "copy") &&
        cufft_once(&c, 0) && bench_cuda_ok(cudaDeviceSynchronize(), "check runs"))
        err = rel_error(c.cufft_out, c.out[0], out_bytes / sizeof(float));
    else if (comparable)
        err = INFINITY;
    fprintf(md, "| %d-D %s | %d | %d | %lld |", rank, what, n, window, count);
    fprintf(csv, "%d,%s,%d,%d,%lld,", rank, what, n, window, count);
    bench_print_times(md, csv, mine, theirs, (double)(c.real_bytes + c.spec_bytes), copy_gbs);
    fprintf(md, " %.1e |\n", err);
    fprintf(csv, ",%.3e\n", err);
    release(&c);
}

/* ZNNi's pruning: convgen's R2C of a k^3 kernel zero-padded to n^3 against its own transform of the
 * whole n^3 cube (the same n and volume count), and the C2R that keeps only a k^3 corner. */
static double own_ms(convgen_context *ctx, convgen_fft_type type, int n, long long count, int window, int runs)
{
    real_case c = {.d = {.rank = 3, .n = n, .type = type, .batch = count, .window = {window, window, window}},
                   .count = count, .windowed = window < n};
    double ms = prepare(&c, ctx) ? bench_median_ms(convgen_once, &c, c.sets, 3, runs) : NAN;
    release(&c);
    return ms;
}

static void pruning_table(FILE *md, FILE *csv, convgen_context *ctx, int runs, int only_n)
{
    static const int shapes[][2] = {{16, 3}, {32, 3}, {32, 5}, {32, 9}, {64, 5}, {64, 9}};
    fprintf(md, "\n### Pruning (rank 3)\n\nconvgen's transform of a k^3 window zero-padded to n^3 (R2C: a kernel's "
                "transform reads only the window's planes and rows; C2R: only the window's planes and rows are "
                "computed and written) against its own transform of the whole cube, 1024 volumes (n = 64: 128).\n\n");
    fprintf(md, "| transform | n | k | pruned ms | whole ms | speedup |\n| --- | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int type = CONVGEN_FFT_R2C; type <= CONVGEN_FFT_C2R; ++type) {
            int n = shapes[i][0], k = shapes[i][1];
            if (only_n && n != only_n)
                continue;
            long long count = n == 64 ? 128 : 1024;
            double pruned = own_ms(ctx, (convgen_fft_type)type, n, count, k, runs);
            double whole = own_ms(ctx, (convgen_fft_type)type, n, count, n, runs);
            const char *what = type == CONVGEN_FFT_R2C ? "R2C" : "C2R";
            fprintf(md, "| 3-D %s | %d | %d | %.4f | %.4f | %.2f |\n", what, n, k, pruned, whole, whole / pruned);
            fprintf(csv, "3,%s pruned %d^3,%d,%d,%lld,%.5f,,%.5f,,%.3f,\n", what, k, n, k, count, pruned, whole,
                    whole / pruned);
        }
}

int bench_fft_real(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir,
                   int only_rank, int only_n)
{
    bench_table table;
    if (!bench_table_open(&table, out_dir, "fft-real", "R2C and C2R FFTs against cuFFT (cufftPlanMany, natural layout)",
                          device, runs))
        return 1;
    FILE *md = table.md, *csv = table.csv;
    fprintf(csv, "rank,type,n,window,transforms,convgen_ms,convgen_gbs,cufft_ms,cufft_gbs,speedup,rel_error\n");
    fprintf(md, "Bytes = convgen's input read + output written (the real side holds the window only); %% copy = of "
                "the copy bandwidth measured in this run (%.0f GB/s). Where the window is smaller than n, cuFFT's "
                "time includes the copy its user must make: window -> zero-padded buffer before R2C, padded "
                "result -> window after C2R (one cudaMemcpy3DAsync); in 3-D it does not (the padded volume's "
                "transform alone), and the error is not compared. Speedup = cuFFT time / convgen time.\n\n",
            copy_gbs);
    fprintf(md, "| transform | n | window | transforms | convgen ms | GB/s | %% copy | cuFFT ms | GB/s | %% copy | "
                "speedup | rel. error |\n");
    fprintf(md, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    /* --fft-n: that size alone, whether or not the default list has it (e.g. 60 = 4 x 3 x 5) */
    const int *list = only_n ? &only_n : sizes;
    const size_t count = only_n ? 1 : SIZE_COUNT;
    for (int rank = 1; rank <= 3; ++rank)
        for (int type = CONVGEN_FFT_R2C; type <= CONVGEN_FFT_C2R; ++type)
            for (size_t i = 0; i < count; ++i) {
                int n = list[i];
                if ((only_rank && rank != only_rank) || (rank == 3 && (n < 16 || n > VOLUME_MAX_N)))
                    continue;
                long long per = (long long)(rank >= 2 ? n : 1) * (rank == 3 ? n : 1) *
                                (type == CONVGEN_FFT_R2C ? n * 4 : (n / 2 + 1) * 8);
                convgen_fft_type t = (convgen_fft_type)type;
                row(md, csv, ctx, rank, t, n, rank == 3 ? 64 : 1024, n, false, runs, copy_gbs);
                row(md, csv, ctx, rank, t, n, BIG_BYTES / per, n, false, runs, copy_gbs);
                if (rank >= 2) { /* the layout FFT convolution uses; a convolution's window in its Fourier basis */
                    row(md, csv, ctx, rank, t, n, BIG_BYTES / per, n, true, runs, copy_gbs);
                    row(md, csv, ctx, rank, t, n, BIG_BYTES / per, n - n / 8, false, runs, copy_gbs);
                }
            }
    if (!only_rank || only_rank == 3)
        pruning_table(md, csv, ctx, runs, only_n);
    return bench_table_close(&table);
}
