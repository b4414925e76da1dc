/* The device's two ceilings, measured in the same run as the layers: copy bandwidth and the
 * fp32 FMA rate. Every ratio in NOTES.md is against these, not the datasheet. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "context.h"
#include "jit.h"
#include "templates.h"
#include "template/tmpl.h"

#define COPY_BYTES (1ull << 30)

typedef struct copy_state {
    void *src, *dst;
} copy_state;

static bool copy_once(void *state, int set)
{
    (void)set;
    copy_state *c = state;
    return bench_cuda_ok(cudaMemcpyAsync(c->dst, c->src, COPY_BYTES, cudaMemcpyDeviceToDevice, 0), "copy");
}

double bench_copy_bandwidth_gbs(void)
{
    copy_state c = {0};
    double ms = -1;
    if (bench_cuda_ok(cudaMalloc(&c.src, COPY_BYTES), "copy source") &&
        bench_cuda_ok(cudaMalloc(&c.dst, COPY_BYTES), "copy destination") &&
        bench_cuda_ok(cudaMemset(c.src, 0x3f, COPY_BYTES), "copy source fill"))
        ms = bench_median_ms(copy_once, &c, 1, 3, 20);
    cudaFree(c.src);
    cudaFree(c.dst);
    return ms > 0 ? 2.0 * COPY_BYTES / (ms * 1e-3) / 1e9 : -1;
}

enum { FMA_THREADS = 256, FMA_CHAINS = 8, FMA_UNROLL = 16, FMA_ITERATIONS = 2048, FMA_BLOCKS_PER_SM = 8 };

typedef struct fma_state {
    convgen_context *ctx;
    CUfunction fn;
    unsigned blocks;
    float *in, *out;
} fma_state;

static bool fma_once(void *state, int set)
{
    (void)set;
    fma_state *f = state;
    void *null = NULL;
    void *args[4] = {&f->in, &f->in, &f->out, &null};
    const cg_driver *drv = f->ctx->drv;
    CUcontext popped;
    drv->CtxPushCurrent(f->ctx->primary);
    CUresult r = drv->LaunchKernel(f->fn, f->blocks, 1, 1, FMA_THREADS, 1, 1, 0, NULL, args, NULL);
    drv->CtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS)
        fprintf(stderr, "convgen-bench: FMA kernel launch failed (%d)\n", (int)r);
    return r == CUDA_SUCCESS;
}

static bool load_fma_kernel(fma_state *f)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_int(v, "threads", FMA_THREADS);
    tmpl_set_int(v, "chains", FMA_CHAINS);
    tmpl_set_int(v, "unroll", FMA_UNROLL);
    tmpl_set_int(v, "iterations", FMA_ITERATIONS);
    bool ok = bench_load_kernel(f->ctx, "bench_fma.cu", v, "convgen_bench_fma", &f->fn);
    tmpl_unref(v);
    return ok;
}

double bench_fma_tflops(convgen_context *ctx)
{
    fma_state f = {.ctx = ctx, .blocks = (unsigned)(ctx->sm_count * FMA_BLOCKS_PER_SM)};
    const float in[2] = {0.999f, 0.001f};
    double ms = -1;
    if (load_fma_kernel(&f) && bench_cuda_ok(cudaMalloc((void **)&f.in, sizeof in), "FMA input") &&
        bench_cuda_ok(cudaMalloc((void **)&f.out, sizeof(float) * f.blocks * FMA_THREADS), "FMA output") &&
        bench_cuda_ok(cudaMemcpy(f.in, in, sizeof in, cudaMemcpyHostToDevice), "FMA input copy"))
        ms = bench_median_ms(fma_once, &f, 1, 3, 20);
    cudaFree(f.in);
    cudaFree(f.out);
    double flops = 2.0 * FMA_CHAINS * FMA_UNROLL * FMA_ITERATIONS * (double)FMA_THREADS * f.blocks;
    return ms > 0 ? flops / (ms * 1e-3) / 1e12 : -1;
}
