/* cuDNN 9 as the yardstick: its legacy convolution API, all algorithms through
 * cudnnFind…AlgorithmEx, and its graph API's engines (bench_cudnn_graph.c); the faster wins.
 * Only the bench links cuDNN; the library never does. */
#include <cudnn.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_cudnn_graph.h"

/* cuDNN may use this much workspace in Find and in the timed runs. */
#define CUDNN_WORKSPACE (2ull << 30)

struct bench_cudnn {
    cudnnHandle_t handle;
    void *workspace;
};

static const char *const fwd_names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                                        "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwd_data_names[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
static const char *const bwd_filter_names[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
                                               "FFT_TILING"};

const char *bench_cudnn_version(void)
{
    static char text[32];
    size_t v = cudnnGetVersion();
    snprintf(text, sizeof text, "%zu.%zu.%zu", v / 10000, v / 100 % 100, v % 100);
    return text;
}

bench_cudnn *bench_cudnn_create(void)
{
    bench_cudnn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    cudnnStatus_t s = cudnnCreate(&c->handle);
    if (s != CUDNN_STATUS_SUCCESS) {
        fprintf(stderr, "convgen-bench: cuDNN: %s\n", cudnnGetErrorString(s));
        free(c);
        return NULL;
    }
    if (!bench_cuda_ok(cudaMalloc(&c->workspace, CUDNN_WORKSPACE), "cuDNN workspace")) {
        cudnnDestroy(c->handle);
        free(c);
        return NULL;
    }
    return c;
}

void bench_cudnn_destroy(bench_cudnn *c)
{
    if (!c)
        return;
    cudnnDestroy(c->handle);
    cudaFree(c->workspace);
    free(c);
}

typedef struct descs {
    cudnnTensorDescriptor_t x, y;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
} descs;

static void set_dims(int *dst, int64_t a, int64_t b, const int64_t *spatial, int rank)
{
    dst[0] = (int)a;
    dst[1] = (int)b;
    for (int i = 0; i < rank; ++i)
        dst[2 + i] = (int)spatial[i];
}

static void packed_strides(const int *dims, int nd, int *strides)
{
    strides[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * dims[i + 1];
}

/* Descriptors of the layer; false (with why) where cuDNN's legacy API cannot state it. */
static bool make_descs(const convgen_conv_desc *d, bool tf32, descs *ds, char *why, size_t why_size)
{
    int64_t out[CONVGEN_MAX_RANK];
    convgen_output_size(d, out);
    int nd = d->rank + 2, xd[5], wd[5], yd[5], xs[5], ys[5], pad[3], str[3], dil[3];
    for (int i = 0; i < d->rank; ++i) {
        if (d->pad_before[i] != d->pad_after[i]) {
            snprintf(why, why_size, "cuDNN takes symmetric padding only");
            return false;
        }
        pad[i] = (int)d->pad_before[i];
        str[i] = (int)(d->stride[i] ? d->stride[i] : 1);
        dil[i] = (int)(d->dilation[i] ? d->dilation[i] : 1);
    }
    set_dims(xd, d->n, d->c, d->in, d->rank);
    set_dims(wd, d->k, d->c, d->kernel, d->rank);
    set_dims(yd, d->n, d->k, out, d->rank);
    packed_strides(xd, nd, xs);
    packed_strides(yd, nd, ys);
    cudnnCreateTensorDescriptor(&ds->x);
    cudnnCreateTensorDescriptor(&ds->y);
    cudnnCreateFilterDescriptor(&ds->w);
    cudnnCreateConvolutionDescriptor(&ds->conv);
    cudnnStatus_t s = cudnnSetTensorNdDescriptor(ds->x, CUDNN_DATA_FLOAT, nd, xd, xs);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetTensorNdDescriptor(ds->y, CUDNN_DATA_FLOAT, nd, yd, ys);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetFilterNdDescriptor(ds->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, nd, wd);
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetConvolutionNdDescriptor(ds->conv, d->rank, pad, str, dil,
                                            d->mode == CONVGEN_CONVOLUTION ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION,
                                            CUDNN_DATA_FLOAT);
    /* Strict fp32: FMA math forbids tensor-core (TF32) algorithms. */
    if (s == CUDNN_STATUS_SUCCESS)
        s = cudnnSetConvolutionMathType(ds->conv, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH);
    if (s != CUDNN_STATUS_SUCCESS)
        snprintf(why, why_size, "descriptors: %s", cudnnGetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

static void free_descs(descs *ds)
{
    cudnnDestroyTensorDescriptor(ds->x);
    cudnnDestroyTensorDescriptor(ds->y);
    cudnnDestroyFilterDescriptor(ds->w);
    cudnnDestroyConvolutionDescriptor(ds->conv);
}

typedef struct timed {
    bench_cudnn *c;
    descs *ds;
    convgen_pass pass;
    int algo;
    size_t ws;
    bench_buffers *b;
    float *target; /* NULL: the set's own output */
} timed;

static bool run_once(void *state, int set)
{
    timed *t = state;
    const float one = 1.0f, zero = 0.0f;
    bench_buffers *b = t->b;
    float *out = t->target ? t->target : b->out[set];
    cudnnStatus_t s;
    switch (t->pass) {
    case CONVGEN_FPROP:
        s = cudnnConvolutionForward(t->c->handle, &one, t->ds->x, b->in0[set], t->ds->w, b->in1[set], t->ds->conv,
                                    (cudnnConvolutionFwdAlgo_t)t->algo, t->c->workspace, t->ws, &zero, t->ds->y, out);
        break;
    case CONVGEN_BPROP:
        s = cudnnConvolutionBackwardData(t->c->handle, &one, t->ds->w, b->in1[set], t->ds->y, b->in0[set], t->ds->conv,
                                         (cudnnConvolutionBwdDataAlgo_t)t->algo, t->c->workspace, t->ws, &zero,
                                         t->ds->x, out);
        break;
    default:
        s = cudnnConvolutionBackwardFilter(t->c->handle, &one, t->ds->x, b->in0[set], t->ds->y, b->in1[set], t->ds->conv,
                                           (cudnnConvolutionBwdFilterAlgo_t)t->algo, t->c->workspace, t->ws, &zero,
                                           t->ds->w, out);
    }
    if (s != CUDNN_STATUS_SUCCESS)
        fprintf(stderr, "convgen-bench: cuDNN run: %s\n", cudnnGetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

/* The fastest successful algorithm per cudnnFind…Ex (its results come sorted by time). */
static cudnnStatus_t find_best(bench_cudnn *c, descs *ds, convgen_pass pass, bench_buffers *b, timed *t, char *name)
{
    int n = 0;
    cudnnStatus_t s;
    cudnnConvolutionFwdAlgoPerf_t f[8];
    cudnnConvolutionBwdDataAlgoPerf_t bd[8];
    cudnnConvolutionBwdFilterAlgoPerf_t bf[8];
    if (pass == CONVGEN_FPROP) {
        s = cudnnFindConvolutionForwardAlgorithmEx(c->handle, ds->x, b->in0[0], ds->w, b->in1[0], ds->conv, ds->y,
                                                   b->out[0], 8, &n, f, c->workspace, CUDNN_WORKSPACE);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; ++i)
            if (f[i].status == CUDNN_STATUS_SUCCESS) {
                t->algo = f[i].algo, t->ws = f[i].memory, strcpy(name, fwd_names[f[i].algo]);
                return s;
            }
    } else if (pass == CONVGEN_BPROP) {
        s = cudnnFindConvolutionBackwardDataAlgorithmEx(c->handle, ds->w, b->in1[0], ds->y, b->in0[0], ds->conv, ds->x,
                                                        b->out[0], 6, &n, bd, c->workspace, CUDNN_WORKSPACE);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; ++i)
            if (bd[i].status == CUDNN_STATUS_SUCCESS) {
                t->algo = bd[i].algo, t->ws = bd[i].memory, strcpy(name, bwd_data_names[bd[i].algo]);
                return s;
            }
    } else {
        s = cudnnFindConvolutionBackwardFilterAlgorithmEx(c->handle, ds->x, b->in0[0], ds->y, b->in1[0], ds->conv,
                                                          ds->w, b->out[0], 7, &n, bf, c->workspace, CUDNN_WORKSPACE);
        for (int i = 0; s == CUDNN_STATUS_SUCCESS && i < n; ++i)
            if (bf[i].status == CUDNN_STATUS_SUCCESS) {
                t->algo = bf[i].algo, t->ws = bf[i].memory, strcpy(name, bwd_filter_names[bf[i].algo]);
                return s;
            }
    }
    return s == CUDNN_STATUS_SUCCESS ? CUDNN_STATUS_NOT_SUPPORTED : s;
}

/* The legacy API's pick for one math mode, timed; ds and t stay set up for a later run. */
static void legacy_best(bench_cudnn *c, const convgen_conv_desc *d, convgen_pass pass, bool tf32, bench_buffers *b,
                        int runs, descs *ds, timed *t, bench_cudnn_best *best)
{
    *t = (timed){.c = c, .ds = ds, .pass = pass, .b = b};
    if (!make_descs(d, tf32, ds, best->why, sizeof best->why))
        return;
    cudnnStatus_t s = find_best(c, ds, pass, b, t, best->algo);
    if (s != CUDNN_STATUS_SUCCESS) {
        snprintf(best->why, sizeof best->why, "Find: %s", cudnnGetErrorString(s));
        return;
    }
    best->ms = bench_median_ms(run_once, t, b->sets, 3, runs);
    best->ok = best->ms > 0;
    if (!best->ok)
        snprintf(best->why, sizeof best->why, "a timed run failed");
}

/* One run of an API's best on set 0 into `out`. */
static bool write_output(int api, timed *t, bench_graph *g, bool tf32, float *out)
{
    if (api == 1)
        return bench_graph_write(g, tf32, out);
    t->target = out;
    bool good = run_once(t, 0) && bench_cuda_ok(cudaDeviceSynchronize(), "cuDNN check run");
    t->target = NULL;
    return good;
}

/* Each API's error against float64 (run into set 0's output), then the winner: the faster. */
static void judge(timed *t, bench_graph *g, bool tf32, bench_buffers *b, bench_error_fn error, void *error_state,
                  bench_cudnn_pick *pick)
{
    bench_cudnn_best *side[2] = {&pick->legacy, &pick->graph};
    pick->winner = -1;
    for (int api = 0; api < 2; ++api) {
        side[api]->ref_error = NAN;
        if (!side[api]->ok)
            continue;
        if (error && write_output(api, t, g, tf32, b->out[0]))
            side[api]->ref_error = error(error_state, b->out[0]);
        if (pick->winner < 0 || side[api]->ms < side[pick->winner]->ms)
            pick->winner = api;
    }
}

void bench_cudnn_pass(bench_cudnn *c, const convgen_conv_desc *d, convgen_pass pass, bench_buffers *b, int runs,
                      int graph_configs, bench_error_fn error, void *error_state, float *reference,
                      bench_cudnn_pick picks[2])
{
    descs ds[2] = {0};
    timed t[2];
    for (int m = 0; m < 2; ++m) {
        picks[m] = (bench_cudnn_pick){.legacy.ms = -1, .graph.ms = -1, .winner = -1};
        legacy_best(c, d, pass, m, b, runs, &ds[m], &t[m], &picks[m].legacy);
    }
    char why[192] = "graph API off (--cudnn-graph 0)";
    bench_graph *g = graph_configs > 0 ? bench_graph_create(c->handle, c->workspace, CUDNN_WORKSPACE, d, pass, b,
                                                            graph_configs, why, sizeof why)
                                       : NULL;
    if (!g && graph_configs > 0)
        fprintf(stderr, "convgen-bench: cuDNN %s: legacy API only: %s\n", convgen_pass_name(pass), why);
    for (int m = 0; m < 2; ++m) {
        bench_cudnn_best *gb = &picks[m].graph;
        if (g) {
            gb->ok = bench_graph_best(g, m, runs, &gb->ms, gb->algo, sizeof gb->algo, gb->why, sizeof gb->why);
            bench_graph_summary(g, picks[m].graph_summary, sizeof picks[m].graph_summary);
        } else {
            snprintf(gb->why, sizeof gb->why, "%s", why);
        }
        judge(&t[m], g, m, b, error, error_state, &picks[m]);
    }
    if (reference && picks[0].winner >= 0 && !write_output(picks[0].winner, &t[0], g, false, reference))
        picks[0].winner = -1; /* no strict output to compare convgen with */
    bench_graph_destroy(g);
    free_descs(&ds[0]);
    free_descs(&ds[1]);
}
