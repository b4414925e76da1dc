/* convgen's generated 1-D complex FFTs against cuFFT's batched plans, in the same run: forward
 * transforms, natural and digit-reversed order, at 1024 transforms and at ~128 MiB of input, with
 * time, GB/s (bytes read + written), the fraction of the measured copy bandwidth and the error
 * against cuFFT. */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "context.h"
#include "fft/fft_kernel.h"
#include "jit.h"

static const int sizes[] = {8, 12, 16, 32, 49, 64, 100, 128, 243, 256};
#define SIZE_COUNT (sizeof sizes / sizeof sizes[0])
#define BIG_BYTES (128ll << 20)

typedef struct fft_case {
    convgen_context *ctx;
    CUfunction fn;
    cg_kernel kernel;
    cufftHandle plan;
    int sets;
    float2 *in[BENCH_MAX_SETS], *out[BENCH_MAX_SETS];
} fft_case;

static bool convgen_once(void *state, int set)
{
    fft_case *c = state;
    const cg_driver *drv = c->ctx->drv;
    void *null = NULL;
    void *args[4] = {&c->in[set], &null, &c->out[set], &null};
    CUcontext popped;
    drv->CtxPushCurrent(c->ctx->primary);
    CUresult r = drv->LaunchKernel(c->fn, c->kernel.grid[0], 1, 1, c->kernel.block[0], 1, 1, 0, NULL, args, NULL);
    drv->CtxPopCurrent(&popped);
    return r == CUDA_SUCCESS;
}

static bool cufft_once(void *state, int set)
{
    fft_case *c = state;
    return cufftExecC2C(c->plan, (cufftComplex *)c->in[set], (cufftComplex *)c->out[set], CUFFT_FORWARD) == CUFFT_SUCCESS;
}

static double rel_error(const float2 *a_dev, const float2 *b_dev, size_t elems)
{
    float2 *a = malloc(elems * sizeof *a), *b = malloc(elems * sizeof *b);
    double d = 0, r = 0;
    if (a && b && cudaMemcpy(a, a_dev, elems * sizeof *a, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(b, b_dev, elems * sizeof *b, cudaMemcpyDeviceToHost) == cudaSuccess)
        for (size_t i = 0; i < elems; ++i) {
            d += pow(a[i].x - b[i].x, 2) + pow(a[i].y - b[i].y, 2);
            r += pow(b[i].x, 2) + pow(b[i].y, 2);
        }
    else
        d = NAN;
    free(a);
    free(b);
    return isnan(d) ? INFINITY : sqrt(d / r);
}

static bool prepare(fft_case *c, int n, long long batch, bool natural)
{
    convgen_fft_desc d = {.rank = 1, .n = n, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_FORWARD,
                          .batch = batch, .order = natural ? CONVGEN_FFT_ORDER_NATURAL : CONVGEN_FFT_ORDER_DIGIT_REVERSED};
    cg_fft_problem sp;
    cache_kernel k = {0};
    convgen_kernel_origin origin;
    size_t bytes = (size_t)batch * n * sizeof(float2);
    c->sets = bench_sets_for(2.0 * (double)bytes);
    bool ok = cg_fft_problem_init(&sp, &d) == CONVGEN_SUCCESS && cg_fft_c2c_kernel(&sp, &c->kernel) == CONVGEN_SUCCESS &&
              jit_get(c->kernel.source, c->kernel.name, c->ctx->arch, NULL, &k, &origin) == CONVGEN_SUCCESS &&
              ctx_load_function(c->ctx, &k, c->kernel.source, c->kernel.name, &c->fn) == CONVGEN_SUCCESS &&
              cufftPlan1d(&c->plan, n, CUFFT_C2C, (int)batch) == CUFFT_SUCCESS;
    cache_kernel_free(&k);
    float *host = ok ? malloc(bytes) : NULL;
    for (size_t i = 0; host && i < bytes / sizeof(float); ++i)
        host[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    for (int s = 0; ok && s < c->sets; ++s)
        ok = bench_cuda_ok(cudaMalloc((void **)&c->in[s], bytes), "FFT input") &&
             bench_cuda_ok(cudaMalloc((void **)&c->out[s], bytes), "FFT output") && host &&
             bench_cuda_ok(cudaMemcpy(c->in[s], host, bytes, cudaMemcpyHostToDevice), "FFT input copy");
    free(host);
    if (!ok)
        fprintf(stderr, "convgen-bench: FFT n = %d: %s\n", n, convgen_last_error());
    return ok;
}

static void release(fft_case *c)
{
    for (int s = 0; s < BENCH_MAX_SETS; ++s) {
        cudaFree(c->in[s]);
        cudaFree(c->out[s]);
    }
    cufftDestroy(c->plan);
    free(c->kernel.source);
}

static void row(FILE *f, FILE *csv, int n, long long batch, bool natural, int runs, double copy_gbs,
                convgen_context *ctx)
{
    fft_case c = {.ctx = ctx};
    if (!prepare(&c, n, batch, natural)) {
        release(&c);
        return;
    }
    double mine = bench_median_ms(convgen_once, &c, c.sets, 3, runs);
    double theirs = bench_median_ms(cufft_once, &c, c.sets, 3, runs);
    size_t elems = (size_t)batch * n;
    float2 *ref = NULL;
    double err = NAN; /* a digit-reversed spectrum is not comparable with cuFFT's */
    if (natural && bench_cuda_ok(cudaMalloc((void **)&ref, elems * sizeof *ref), "reference") && cufft_once(&c, 0) &&
        bench_cuda_ok(cudaMemcpy(ref, c.out[0], elems * sizeof *ref, cudaMemcpyDeviceToDevice), "copy") &&
        convgen_once(&c, 0) && bench_cuda_ok(cudaDeviceSynchronize(), "check run"))
        err = rel_error(c.out[0], ref, elems);
    cudaFree(ref);
    const char *order = natural ? "natural" : "digit-reversed";
    fprintf(f, "| %d | %lld | %s |", n, batch, order);
    fprintf(csv, "%d,%lld,%s,", n, batch, order);
    bench_print_times(f, csv, mine, theirs, 2.0 * elems * sizeof(float2), copy_gbs);
    fprintf(f, " %.1e |\n", err);
    fprintf(csv, ",%.3e\n", err);
    release(&c);
}

int bench_fft(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir)
{
    bench_table t;
    if (!bench_table_open(&t, out_dir, "fft", "1-D complex FFT, forward, against cuFFT (cufftExecC2C, natural order)",
                          device, runs))
        return 1;
    FILE *md = t.md, *csv = t.csv;
    fprintf(csv, "n,batch,order,convgen_ms,convgen_gbs,cufft_ms,cufft_gbs,speedup,rel_error\n");
    fprintf(md, "Bytes = input read + output written; %% copy = of the copy bandwidth measured in this run "
                "(%.0f GB/s). Speedup = cuFFT time / convgen time. The digit-reversed order is what FFT convolution "
                "uses (forward -> pointwise -> inverse, no reordering); the error column compares natural-order "
                "output with cuFFT's.\n\n", copy_gbs);
    fprintf(md, "| n | transforms | convgen order | convgen ms | GB/s | %% copy | cuFFT ms | GB/s | %% copy | speedup | "
                "rel. error |\n");
    fprintf(md, "| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (size_t i = 0; i < SIZE_COUNT; ++i)
        for (int natural = 1; natural >= 0; --natural) {
            row(md, csv, sizes[i], 1024, natural, runs, copy_gbs, ctx);
            row(md, csv, sizes[i], BIG_BYTES / (sizes[i] * (long long)sizeof(float2)), natural, runs, copy_gbs, ctx);
        }
    return bench_table_close(&t);
}
