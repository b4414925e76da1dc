/* convgen's generated max pooling and max-pooling fragments (convgen_plan_pool) against cuDNN's
 * pooling in the same run, ZNNi's 3-D layers of 80 maps: plain max pooling against
 * cudnnPoolingForward, and the fragments against ZNNi's baseline, cuDNN's pooling evaluated once
 * per offset of the window (each on the input shifted by the offset, written to its fragment's
 * slot: strided tensor descriptors, no copies). Every output is compared with cuDNN's (a maximum
 * is exact: they must be equal). Reports ms, GB/s (x read once, y written), the fraction of the
 * measured copy bandwidth and the speedup. */
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

typedef struct pool_case {
    convgen_pool_desc d;
    convgen_plan *plan;
    cudnnHandle_t dnn;
    cudnnPoolingDescriptor_t pool;
    cudnnTensorDescriptor_t x_view, y_view;
    int fragments, sets;
    int64_t out[3], in_elems, out_elems;
    float *x[BENCH_MAX_SETS], *y[BENCH_MAX_SETS], *y_dnn;
} pool_case;

static bool convgen_once(void *state, int set)
{
    pool_case *c = state;
    return convgen_execute_pool(c->plan, c->x[set], c->y[set], NULL) == CONVGEN_SUCCESS;
}

/* cuDNN: one pooling per offset (one in all for MAX), each on x shifted by the offset. */
static bool dnn_into(pool_case *c, const float *x, float *y)
{
    const float one = 1.0f, zero = 0.0f;
    const int *p = c->d.window;
    int64_t plane = c->d.in[1] * c->d.in[2], row = c->d.in[2];
    for (int f = 0; f < c->fragments; ++f) {
        int64_t shift = (int64_t)(f / (p[1] * p[2])) * plane + (int64_t)(f / p[2] % p[1]) * row + f % p[2];
        if (cudnnPoolingForward(c->dnn, c->pool, &one, c->x_view, x + shift, &zero, c->y_view,
                                y + (int64_t)f * c->d.n * c->d.c * c->out[0] * c->out[1] * c->out[2]) != CUDNN_STATUS_SUCCESS)
            return false;
    }
    return true;
}

static bool dnn_once(void *state, int set)
{
    pool_case *c = state;
    return dnn_into(c, c->x[set], c->y[set]);
}

/* x's view for cuDNN: the extent a pooling of stride p reads for `out` outputs (p out), with x's
 * own strides; y's, dense. */
static bool describe_views(pool_case *c)
{
    int64_t *in = c->d.in;
    int xd[5] = {(int)c->d.n, (int)c->d.c, 0, 0, 0}, yd[5] = {(int)c->d.n, (int)c->d.c, 0, 0, 0};
    int xs[5] = {(int)(c->d.c * in[0] * in[1] * in[2]), (int)(in[0] * in[1] * in[2]), (int)(in[1] * in[2]), (int)in[2], 1};
    int ys[5] = {(int)(c->d.c * c->out[0] * c->out[1] * c->out[2]), (int)(c->out[0] * c->out[1] * c->out[2]),
                 (int)(c->out[1] * c->out[2]), (int)c->out[2], 1};
    int window[3], pad[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i)
        xd[2 + i] = (int)(c->d.window[i] * c->out[i]), yd[2 + i] = (int)c->out[i], window[i] = c->d.window[i];
    return cudnnCreateTensorDescriptor(&c->x_view) == CUDNN_STATUS_SUCCESS &&
           cudnnCreateTensorDescriptor(&c->y_view) == CUDNN_STATUS_SUCCESS &&
           cudnnCreatePoolingDescriptor(&c->pool) == CUDNN_STATUS_SUCCESS &&
           cudnnSetTensorNdDescriptor(c->x_view, CUDNN_DATA_FLOAT, 5, xd, xs) == CUDNN_STATUS_SUCCESS &&
           cudnnSetTensorNdDescriptor(c->y_view, CUDNN_DATA_FLOAT, 5, yd, ys) == CUDNN_STATUS_SUCCESS &&
           cudnnSetPoolingNdDescriptor(c->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, window, pad, window) ==
               CUDNN_STATUS_SUCCESS;
}

static bool prepare(pool_case *c, convgen_context *ctx)
{
    int64_t batch;
    if (convgen_pool_output(&c->d, &batch, c->out) != CONVGEN_SUCCESS || convgen_plan_pool(ctx, &c->d, &c->plan) != CONVGEN_SUCCESS) {
        fprintf(stderr, "pooling: %s\n", convgen_last_error());
        return false;
    }
    c->fragments = (int)(batch / c->d.n);
    c->in_elems = c->d.n * c->d.c * c->d.in[0] * c->d.in[1] * c->d.in[2];
    c->out_elems = batch * c->d.c * c->out[0] * c->out[1] * c->out[2];
    c->sets = bench_sets_for((double)(c->in_elems + c->out_elems) * 4);
    float *host = malloc((size_t)c->in_elems * sizeof *host);
    bool ok = host && describe_views(c) && bench_cuda_ok(cudaMalloc((void **)&c->y_dnn, (size_t)c->out_elems * 4), "y");
    for (int64_t i = 0; ok && i < c->in_elems; ++i)
        host[i] = (float)((i * 2654435761u) % 2001) / 1000.0f - 1.0f;
    for (int s = 0; ok && s < c->sets; ++s)
        ok = bench_cuda_ok(cudaMalloc((void **)&c->x[s], (size_t)c->in_elems * 4), "x") &&
             bench_cuda_ok(cudaMalloc((void **)&c->y[s], (size_t)c->out_elems * 4), "y") &&
             bench_cuda_ok(cudaMemcpy(c->x[s], host, (size_t)c->in_elems * 4, cudaMemcpyHostToDevice), "x copy");
    free(host);
    return ok;
}

/* Outputs that differ from cuDNN's (both runs on set 0). */
static int64_t mismatches(pool_case *c)
{
    float *a = malloc((size_t)c->out_elems * 4), *b = malloc((size_t)c->out_elems * 4);
    int64_t bad = -1;
    if (a && b && convgen_once(c, 0) && dnn_into(c, c->x[0], c->y_dnn) &&
        cudaMemcpy(a, c->y[0], (size_t)c->out_elems * 4, cudaMemcpyDeviceToHost) == cudaSuccess &&
        cudaMemcpy(b, c->y_dnn, (size_t)c->out_elems * 4, cudaMemcpyDeviceToHost) == cudaSuccess) {
        bad = 0;
        for (int64_t i = 0; i < c->out_elems; ++i)
            bad += a[i] != b[i];
    }
    free(a);
    free(b);
    return bad;
}

static void release(pool_case *c)
{
    for (int s = 0; s < c->sets; ++s)
        cudaFree(c->x[s]), cudaFree(c->y[s]);
    cudaFree(c->y_dnn);
    cudnnDestroyTensorDescriptor(c->x_view);
    cudnnDestroyTensorDescriptor(c->y_view);
    cudnnDestroyPoolingDescriptor(c->pool);
    convgen_plan_destroy(c->plan);
}

int bench_pool(convgen_context *ctx, int runs, double copy_gbs, const char *device, const char *out_dir)
{
    const convgen_pool_desc cases[] = {
        {CONVGEN_POOL_MAX, 3, 1, 80, {96, 96, 96}, {2, 2, 2}},
        {CONVGEN_POOL_MAX, 3, 8, 80, {48, 48, 48}, {2, 2, 2}},
        {CONVGEN_POOL_FRAGMENTS, 3, 1, 80, {95, 95, 95}, {2, 2, 2}},
        {CONVGEN_POOL_FRAGMENTS, 3, 8, 80, {47, 47, 47}, {2, 2, 2}},
        {CONVGEN_POOL_FRAGMENTS, 3, 1, 80, {95, 95, 95}, {2, 2, 1}},
    };
    cudnnHandle_t dnn;
    bench_table t;
    if (cudnnCreate(&dnn) != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "pooling: no cuDNN handle\n");
        return 1;
    }
    if (!bench_table_open(&t, out_dir, "pool", "max pooling and max-pooling fragments against cuDNN's pooling", device, runs)) {
        cudnnDestroy(dnn);
        return 1;
    }
    fprintf(t.md, "\ncuDNN's fragments: its pooling once per offset of the window (ZNNi's baseline), on x shifted by the "
                  "offset through a strided descriptor.\n\n| pooling | n x c x in | window | out | convgen ms | GB/s | "
                  "%% copy | cuDNN ms | GB/s | %% copy | speedup | outputs unlike cuDNN's |\n| --- | --- | --- | --- | "
                  "---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    fprintf(t.csv, "pooling,n,c,in,window,out,convgen_ms,convgen_gbs,cudnn_ms,cudnn_gbs,speedup,mismatches\n");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pool_case c = {.d = cases[i], .dnn = dnn};
        if (!prepare(&c, ctx)) {
            release(&c);
            continue;
        }
        double mine = bench_median_ms(convgen_once, &c, c.sets, 3, runs);
        double theirs = bench_median_ms(dnn_once, &c, c.sets, 3, runs);
        double bytes = (double)(c.in_elems + c.out_elems) * 4;
        const char *kind = c.fragments > 1 ? "fragments" : "max";
        char shape[64], window[16], out[32];
        snprintf(shape, sizeof shape, "%lld x %lld x %lldx%lldx%lld", (long long)c.d.n, (long long)c.d.c,
                 (long long)c.d.in[0], (long long)c.d.in[1], (long long)c.d.in[2]);
        snprintf(window, sizeof window, "%dx%dx%d", c.d.window[0], c.d.window[1], c.d.window[2]);
        snprintf(out, sizeof out, "%s%lldx%lldx%lld", c.fragments > 1 ? "fragments x " : "", (long long)c.out[0],
                 (long long)c.out[1], (long long)c.out[2]);
        fprintf(t.md, "| %s | %s | %s | %s |", kind, shape, window, out);
        fprintf(t.csv, "%s,%lld,%lld,%lldx%lldx%lld,%s,%s,", kind, (long long)c.d.n, (long long)c.d.c, (long long)c.d.in[0],
                (long long)c.d.in[1], (long long)c.d.in[2], window, out);
        bench_print_times(t.md, t.csv, mine, theirs, bytes, copy_gbs);
        int64_t bad = mismatches(&c);
        fprintf(t.md, " %lld |\n", (long long)bad);
        fprintf(t.csv, ",%lld\n", (long long)bad);
        release(&c);
    }
    cudnnDestroy(dnn);
    return bench_table_close(&t);
}
