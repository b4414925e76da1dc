/* Whole networks (issue 29, ZNNi's benchmark): convgen's executor against two cuDNN baselines in
 * the same process, on the same random weights.
 *
 *   convgen   convgen_net_infer over a volume from host memory to host memory: patches, their
 *             transfers, the fragments interleaved back, all included.
 *   (a) ZNNi  ZNNi's baseline on convgen's patch: cuDNN's convolutions (for each layer the fastest
 *             strict-fp32 algorithm cudnnFindConvolutionForwardAlgorithmEx finds) with
 *             cudnnAddTensor and cudnnActivationForward for the bias and ReLU, and each pooling
 *             as max-pooling fragments by cuDNN's pooling once per window offset (on the input
 *             shifted by the offset, through strided descriptors). Timed per patch on the GPU
 *             alone, no transfers (in cuDNN's favour), times the patches the volume needs.
 *             Where convgen's patch passes cuDNN's 2^31 elements a tensor (n337's one patch of
 *             452^3 for 448^3), (a) takes its own patch of least work, and convgen runs once
 *             more on that patch: the same-patch comparison beside the best-patch one.
 *   (b) dense The form users run today: every convolution dilated by the product of the pooling
 *             windows before it and every pooling of stride 1 (dilated too: one cuDNN pooling
 *             per sub-lattice of the dilation, through strided descriptors), once over the
 *             largest cube that fits (memory, and 2^31 elements a tensor). Its output is compared
 *             with convgen's on the same cube.
 *
 * Throughput is output voxels per second. */
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "net/net.h"
#include "reference.h"
#include "util.h"

#define DNN_WORKSPACE (4ull << 30)
#define MAX_VIEWS 512 /* pooling views a layer: offsets (a) or sub-lattices (b) */

/* One layer of a cuDNN evaluation. */
typedef struct dnn_layer {
    cudnnTensorDescriptor_t x, y, bias;
    cudnnFilterDescriptor_t w;
    cudnnConvolutionDescriptor_t conv;
    cudnnConvolutionFwdAlgo_t algo;
    cudnnPoolingDescriptor_t pool;
    int views;
    cudnnTensorDescriptor_t xv[MAX_VIEWS], yv[MAX_VIEWS];
    int64_t x_at[MAX_VIEWS], y_at[MAX_VIEWS]; /* the views' first elements */
} dnn_layer;

typedef struct dnn_eval {
    cudnnHandle_t h;
    const cg_net *net;
    bool dense;
    int64_t ext[3];  /* the input's extent */
    dnn_layer layer[CG_NET_MAX_LAYERS];
    cudnnActivationDescriptor_t relu;
    float *buf[2], *ws, *w[CG_NET_MAX_LAYERS], *b[CG_NET_MAX_LAYERS];
    size_t buf_elems;
    int out_buf;     /* which buffer holds the output */
    int64_t out_elems;
} dnn_eval;

static bool ok(cudnnStatus_t s, const char *what)
{
    if (s != CUDNN_STATUS_SUCCESS)
        fprintf(stderr, "net bench: %s: %s\n", what, cudnnGetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

/* A 5-D tensor [n][c][ext] with the strides of [n][c][full] times `step` along the extent. */
static bool tensor(cudnnTensorDescriptor_t *t, int64_t n, int64_t c, const int64_t ext[3], const int64_t full[3],
                   int64_t step)
{
    int dims[5] = {(int)n, (int)c, (int)ext[0], (int)ext[1], (int)ext[2]};
    int strides[5] = {(int)(c * full[0] * full[1] * full[2]), (int)(full[0] * full[1] * full[2]),
                      (int)(full[1] * full[2] * step), (int)(full[2] * step), (int)step};
    return ok(cudnnCreateTensorDescriptor(t), "tensor") &&
           ok(cudnnSetTensorNdDescriptor(*t, CUDNN_DATA_FLOAT, 5, dims, strides), "tensor descriptor");
}

/* Convolution layer i: x [n][c][ext] -> y [n][k][ext - d (kernel - 1)], its algorithm found. */
static bool conv_layer(dnn_eval *e, int i, int64_t n, int64_t c, const int64_t ext[3], int64_t d, int64_t out[3])
{
    const cg_net_layer *l = &e->net->layers[i];
    dnn_layer *L = &e->layer[i];
    for (int k = 0; k < 3; ++k)
        out[k] = ext[k] - d * (l->size[k] - 1);
    int wd[5] = {(int)l->k, (int)c, l->size[0], l->size[1], l->size[2]}, pad[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    int dil[3] = {(int)d, (int)d, (int)d}, bd[5] = {1, (int)l->k, 1, 1, 1}, bs[5] = {(int)l->k, 1, 1, 1, 1};
    bool good = tensor(&L->x, n, c, ext, ext, 1) && tensor(&L->y, n, l->k, out, out, 1) &&
                ok(cudnnCreateFilterDescriptor(&L->w), "filter") &&
                ok(cudnnSetFilterNdDescriptor(L->w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 5, wd), "filter descriptor") &&
                ok(cudnnCreateConvolutionDescriptor(&L->conv), "convolution") &&
                ok(cudnnSetConvolutionNdDescriptor(L->conv, 3, pad, one, dil, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
                   "convolution descriptor") &&
                ok(cudnnSetConvolutionMathType(L->conv, CUDNN_FMA_MATH), "strict fp32 math") &&
                ok(cudnnCreateTensorDescriptor(&L->bias), "bias") &&
                ok(cudnnSetTensorNdDescriptor(L->bias, CUDNN_DATA_FLOAT, 5, bd, bs), "bias descriptor");
    /* (a): every algorithm timed (cudnnFind), the fastest kept; (b)'s layers take seconds each,
     * so there its heuristics' first choice that fits the workspace */
    cudnnConvolutionFwdAlgoPerf_t perf[8];
    int found = 0;
    if (good && !e->dense)
        good = ok(cudnnFindConvolutionForwardAlgorithmEx(e->h, L->x, e->buf[0], L->w, e->w[i], L->conv, L->y, e->buf[1],
                                                         8, &found, perf, e->ws, DNN_WORKSPACE),
                  "cudnnFindConvolutionForwardAlgorithmEx");
    else if (good)
        good = ok(cudnnGetConvolutionForwardAlgorithm_v7(e->h, L->x, L->w, L->conv, L->y, 8, &found, perf),
                  "cudnnGetConvolutionForwardAlgorithm_v7");
    bool chosen = false;
    for (int p = 0; p < found && !chosen; ++p)
        if (perf[p].status == CUDNN_STATUS_SUCCESS && perf[p].memory <= DNN_WORKSPACE)
            L->algo = perf[p].algo, chosen = true;
    return good && chosen;
}

/* A view of [n][c][full] from `start`, every `step`-th element of `ext` a dimension. */
static bool view(dnn_layer *L, int v, int64_t n, int64_t c, const int64_t full[3], const int64_t start[3],
                 const int64_t ext[3], int64_t step, bool input)
{
    int64_t at = (start[0] * full[1] + start[1]) * full[2] + start[2];
    cudnnTensorDescriptor_t *t = input ? &L->xv[v] : &L->yv[v];
    *(input ? &L->x_at[v] : &L->y_at[v]) = at;
    return tensor(t, n, c, ext, full, step);
}

/* ZNNi's fragments of pooling i: for each offset o, x shifted by o pooled (window = stride = p)
 * into fragment o's slot, y [p^3][n][c][out], out = (ext - p + 1) / p. */
static bool fragment_layer(dnn_eval *e, int i, int64_t n, int64_t c, const int64_t ext[3], int64_t out[3])
{
    dnn_layer *L = &e->layer[i];
    const int *p = e->net->layers[i].size;
    int win[3] = {p[0], p[1], p[2]}, pad[3] = {0, 0, 0};
    int64_t span[3], zero[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k)
        out[k] = (ext[k] - p[k] + 1) / p[k], span[k] = out[k] * p[k];
    bool good = ok(cudnnCreatePoolingDescriptor(&L->pool), "pooling") &&
                ok(cudnnSetPoolingNdDescriptor(L->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, win, pad, win),
                   "pooling descriptor");
    L->views = p[0] * p[1] * p[2];
    for (int f = 0; f < L->views && good; ++f) {
        const int64_t o[3] = {f / (p[1] * p[2]), f / p[2] % p[1], f % p[2]};
        good = view(L, f, n, c, ext, o, span, 1, true) && view(L, f, n, c, out, zero, out, 1, false);
        L->y_at[f] = (int64_t)f * n * c * out[0] * out[1] * out[2];
    }
    return good;
}

/* Stride-1 pooling i dilated by d: for each sub-lattice s of the dilation, the points s + d j of
 * x pooled by a window p of stride 1 into the same points of y, out = ext - d (p - 1). */
static bool dilated_pool_layer(dnn_eval *e, int i, int64_t c, const int64_t ext[3], int64_t d, int64_t out[3])
{
    dnn_layer *L = &e->layer[i];
    const int *p = e->net->layers[i].size;
    int win[3] = {p[0], p[1], p[2]}, pad[3] = {0, 0, 0}, one[3] = {1, 1, 1};
    for (int k = 0; k < 3; ++k)
        out[k] = ext[k] - d * (p[k] - 1);
    bool good = ok(cudnnCreatePoolingDescriptor(&L->pool), "pooling") &&
                ok(cudnnSetPoolingNdDescriptor(L->pool, CUDNN_POOLING_MAX, CUDNN_NOT_PROPAGATE_NAN, 3, win, pad, one),
                   "pooling descriptor");
    if (d * d * d > MAX_VIEWS)
        return fprintf(stderr, "net bench: a dilation of %lld has more sub-lattices than %d\n", (long long)d, MAX_VIEWS),
               false;
    L->views = (int)(d * d * d);
    for (int v = 0; v < L->views && good; ++v) {
        const int64_t s[3] = {v / (d * d), v / d % d, v % d};
        int64_t xe[3], ye[3];
        for (int k = 0; k < 3; ++k)
            ye[k] = (out[k] - s[k] + d - 1) / d, xe[k] = ye[k] + p[k] - 1;
        good = view(L, v, 1, c, ext, s, xe, d, true) && view(L, v, 1, c, out, s, ye, d, false);
    }
    return good;
}

/* Descriptors, buffers and algorithms of the whole evaluation, for an input of `ext` (batch 1). */
static bool build(dnn_eval *e, const float *const *w, const float *const *b)
{
    const cg_net *net = e->net;
    int64_t shapes[CG_NET_MAX_LAYERS + 1][5], n = 1, c = net->c, d = 1, ext[3] = {e->ext[0], e->ext[1], e->ext[2]};
    size_t most = 0;
    for (int i = 0; i <= net->count; ++i) { /* the tensors, to size the buffers first */
        size_t elems = (size_t)(n * c * ext[0] * ext[1] * ext[2]);
        most = elems > most ? elems : most;
        memcpy(shapes[i], (int64_t[5]){n, c, ext[0], ext[1], ext[2]}, sizeof shapes[i]);
        if (i == net->count)
            break;
        const cg_net_layer *l = &net->layers[i];
        for (int k = 0; k < 3; ++k)
            ext[k] = l->kind == CG_NET_CONV ? ext[k] - d * (l->size[k] - 1)
                     : e->dense             ? ext[k] - d * (l->size[k] - 1)
                                            : (ext[k] - l->size[k] + 1) / l->size[k];
        if (l->kind == CG_NET_CONV)
            c = l->k;
        else if (e->dense)
            d *= l->size[0]; /* isotropic windows only: checked by the caller */
        else
            n *= l->size[0] * l->size[1] * l->size[2];
    }
    e->buf_elems = most;
    e->out_elems = (int64_t)(shapes[net->count][0] * shapes[net->count][1] * shapes[net->count][2] *
                             shapes[net->count][3] * shapes[net->count][4]);
    bool good = ok(cudnnCreate(&e->h), "handle") && bench_cuda_ok(cudaMalloc((void **)&e->ws, DNN_WORKSPACE), "workspace") &&
                bench_cuda_ok(cudaMalloc((void **)&e->buf[0], most * 4), "activations") &&
                bench_cuda_ok(cudaMalloc((void **)&e->buf[1], most * 4), "activations") &&
                ok(cudnnCreateActivationDescriptor(&e->relu), "activation") &&
                ok(cudnnSetActivationDescriptor(e->relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0), "relu");
    uint64_t state = 99;
    if (good) /* random input for Find (the runs overwrite it: no timing depends on the values) */
        for (size_t at = 0; at < most && good; at += 1 << 20) {
            size_t count = most - at < (1u << 20) ? most - at : 1u << 20;
            float *host = malloc(count * 4);
            if (host)
                cg_fill_random(host, (int64_t)count, &state);
            good = host && bench_cuda_ok(cudaMemcpy(e->buf[0] + at, host, count * 4, cudaMemcpyHostToDevice), "x");
            free(host);
        }
    d = 1;
    for (int i = 0; i < net->count && good; ++i) {
        const cg_net_layer *l = &net->layers[i];
        const int64_t *s = shapes[i];
        int64_t out[3];
        if (l->kind == CG_NET_CONV) {
            size_t wn = (size_t)(l->k * s[1] * l->size[0] * l->size[1] * l->size[2]);
            good = bench_cuda_ok(cudaMalloc((void **)&e->w[i], wn * 4), "w") &&
                   bench_cuda_ok(cudaMalloc((void **)&e->b[i], (size_t)l->k * 4), "b") &&
                   bench_cuda_ok(cudaMemcpy(e->w[i], w[i], wn * 4, cudaMemcpyHostToDevice), "w") &&
                   bench_cuda_ok(cudaMemcpy(e->b[i], b[i], (size_t)l->k * 4, cudaMemcpyHostToDevice), "b") &&
                   conv_layer(e, i, s[0], s[1], s + 2, d, out);
        } else {
            good = e->dense ? dilated_pool_layer(e, i, s[1], s + 2, d, out) : fragment_layer(e, i, s[0], s[1], s + 2, out);
            d *= e->dense ? l->size[0] : 1;
        }
    }
    return good;
}

/* The whole evaluation once, on buf[0]'s input. */
static bool run(dnn_eval *e)
{
    const float one = 1.0f, zero = 0.0f;
    int cur = 0;
    for (int i = 0; i < e->net->count; ++i, cur ^= 1) {
        dnn_layer *L = &e->layer[i];
        float *x = e->buf[cur], *y = e->buf[cur ^ 1];
        if (e->net->layers[i].kind == CG_NET_CONV) {
            if (!ok(cudnnConvolutionForward(e->h, &one, L->x, x, L->w, e->w[i], L->conv, L->algo, e->ws, DNN_WORKSPACE,
                                            &zero, L->y, y), "cudnnConvolutionForward") ||
                !ok(cudnnAddTensor(e->h, &one, L->bias, e->b[i], &one, L->y, y), "cudnnAddTensor"))
                return false;
            if (e->net->layers[i].relu &&
                !ok(cudnnActivationForward(e->h, e->relu, &one, L->y, y, &zero, L->y, y), "cudnnActivationForward"))
                return false;
            continue;
        }
        for (int v = 0; v < L->views; ++v)
            if (!ok(cudnnPoolingForward(e->h, L->pool, &one, L->xv[v], x + L->x_at[v], &zero, L->yv[v], y + L->y_at[v]),
                    "cudnnPoolingForward"))
                return false;
    }
    e->out_buf = cur;
    return true;
}

static void destroy(dnn_eval *e)
{
    for (int i = 0; i < CG_NET_MAX_LAYERS; ++i) {
        dnn_layer *L = &e->layer[i];
        cudnnDestroyTensorDescriptor(L->x), cudnnDestroyTensorDescriptor(L->y), cudnnDestroyTensorDescriptor(L->bias);
        cudnnDestroyFilterDescriptor(L->w);
        cudnnDestroyConvolutionDescriptor(L->conv);
        cudnnDestroyPoolingDescriptor(L->pool);
        for (int v = 0; v < L->views; ++v)
            cudnnDestroyTensorDescriptor(L->xv[v]), cudnnDestroyTensorDescriptor(L->yv[v]);
        cudaFree(e->w[i]), cudaFree(e->b[i]);
    }
    cudaFree(e->buf[0]), cudaFree(e->buf[1]), cudaFree(e->ws);
    cudnnDestroyActivationDescriptor(e->relu);
    if (e->h)
        cudnnDestroy(e->h);
}

/* Median milliseconds of `runs` evaluations after one, by events. */
static double time_eval(dnn_eval *e, int runs)
{
    cudaEvent_t a, b;
    double t[64];
    runs = runs < 64 ? runs : 64;
    cudaEventCreate(&a), cudaEventCreate(&b);
    bool good = run(e) && bench_cuda_ok(cudaDeviceSynchronize(), "cuDNN's evaluation");
    for (int r = 0; r < runs && good; ++r) {
        float ms = 0;
        cudaEventRecord(a, NULL);
        good = run(e);
        cudaEventRecord(b, NULL);
        good = good && bench_cuda_ok(cudaEventSynchronize(b), "cuDNN's evaluation");
        cudaEventElapsedTime(&ms, a, b);
        t[r] = ms;
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    return good ? cg_median(t, runs) : NAN;
}

/* ---- convgen ---- */

/* convgen's executor for cubes of `side` (its patch chosen for them, or of fragments m), with
 * the shared weights; its plan printed. */
static convgen_net *open_convgen(convgen_context *ctx, const char *text, const cg_net *net, float *const *w,
                                 float *const *b, int64_t side, const int64_t *m)
{
    /* each convolution's algorithm by the cost model: timing every candidate of layers that
     * take seconds a run (direct's on n726's 7^3 ones) would take the bench's minutes */
    convgen_net_options o = {.volume = {side, side, side}, .effort = CONVGEN_EFFORT_ESTIMATE};
    if (m)
        memcpy(o.fragment, m, sizeof o.fragment);
    convgen_net *exe;
    if (convgen_net_create(ctx, text, &o, &exe) != CONVGEN_SUCCESS) {
        fprintf(stderr, "net bench: convgen: %s\n", convgen_last_error());
        return NULL;
    }
    bool good = true;
    for (int i = 0; i < net->count && good; ++i)
        if (net->layers[i].kind == CG_NET_CONV)
            good = convgen_net_set_weights(exe, i, w[i], b[i]) == CONVGEN_SUCCESS;
    char *plan = NULL;
    if (good && convgen_net_explain(exe, &plan) == CONVGEN_SUCCESS)
        printf("%s", plan), free(plan);
    if (!good)
        convgen_net_destroy(exe), fprintf(stderr, "net bench: convgen: %s\n", convgen_last_error());
    return good ? exe : NULL;
}

/* Median seconds of `runs` inferences of x (a cube of `side`) into y, after one. */
static double time_infer(convgen_net *exe, const float *x, int64_t side, float *y, int runs)
{
    double t[64];
    runs = runs < 64 ? runs : 64;
    for (int r = -1; r < runs; ++r) {
        double start = cg_now_s();
        if (convgen_net_infer(exe, x, (int64_t[3]){side, side, side}, y, NULL) != CONVGEN_SUCCESS) {
            fprintf(stderr, "net bench: convgen: %s\n", convgen_last_error());
            return NAN;
        }
        if (r >= 0)
            t[r] = cg_now_s() - start;
    }
    return cg_median(t, runs);
}

/* The dense form's multiply-adds over a cube of `side` (its convolutions, dilated). */
static double dense_flops(const cg_net *net, int64_t side)
{
    double flops = 0;
    int64_t ext = side, c = net->c, d = 1;
    for (int i = 0; i < net->count; ++i) {
        const cg_net_layer *l = &net->layers[i];
        ext -= d * (l->size[0] - 1);
        if (l->kind == CG_NET_CONV)
            flops += 2.0 * (double)c * (double)l->k * l->size[0] * l->size[1] * l->size[2] * pow((double)ext, 3), c = l->k;
        else
            d *= l->size[0];
    }
    return flops;
}

/* The largest cube the dense form can run: its biggest tensor under 2^31 elements, its two
 * buffers under a third of the free memory, and, to keep a run within seconds, its convolutions
 * under DENSE_FLOPS (n926's 9^3 layers dilated by 4 pass it from a side of about 230). */
#define DENSE_FLOPS 150e12
static int64_t dense_side(const cg_net *net)
{
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    int64_t widest = net->c, fov[3];
    for (int i = 0; i < net->count; ++i)
        widest = net->layers[i].kind == CG_NET_CONV && net->layers[i].k > widest ? net->layers[i].k : widest;
    cg_net_field_of_view(net, fov);
    double cap = fmin(2147483647.0 / (double)widest, (double)free_bytes / 3 / 2 / 4 / (double)widest);
    int64_t side = (int64_t)cbrt(cap);
    while (side > fov[0] + 16 && dense_flops(net, side) > DENSE_FLOPS)
        --side;
    return side;
}

/* The weights every evaluation shares: uniform in +-sqrt(6 / fan-in) (He's: ReLU halves the
 * variance, this doubles it back, so the signal lives through eight layers), biases a tenth of
 * that. */
static bool make_weights(const cg_net *net, float **w, float **b)
{
    uint64_t state = 2026;
    for (int i = 0; i < net->count; ++i) {
        const cg_net_layer *l = &net->layers[i];
        int64_t count = cg_net_weight_count(net, i), fan = count / l->k;
        if (!count)
            continue;
        w[i] = malloc((size_t)count * 4), b[i] = malloc((size_t)l->k * 4);
        if (!w[i] || !b[i])
            return false;
        cg_fill_random(w[i], count, &state);
        cg_fill_random(b[i], l->k, &state);
        float a = (float)sqrt(6.0 / (double)fan);
        for (int64_t j = 0; j < count; ++j)
            w[i][j] *= a;
        for (int64_t j = 0; j < l->k; ++j)
            b[i][j] *= a / 10;
    }
    return true;
}

/* ||got - want|| / ||want|| over n outputs; NaN where want is all zeros (no comparison: a
 * network whose ReLUs zeroed everything would agree with anything). */
static double difference(const float *got, const float *want, int64_t n)
{
    double d2 = 0, r2 = 0;
    for (int64_t i = 0; i < n; ++i)
        d2 += ((double)got[i] - want[i]) * ((double)got[i] - want[i]), r2 += (double)want[i] * want[i];
    return r2 > 0 ? sqrt(d2 / r2) : NAN;
}

/* (b) over a cube of `side`: its median ms, and (dense_x, dense_y: malloc'ed) its random input
 * and its output from one more run on that input. */
static double dense_form(const cg_net *net, float *const *w, float *const *b, int64_t side, int runs, float **dense_x,
                         float **dense_y, int64_t *y_elems)
{
    dnn_eval e = {.net = net, .dense = true, .ext = {side, side, side}};
    size_t in_bytes = (size_t)(net->c * side * side * side) * 4;
    double ms = NAN;
    *dense_x = *dense_y = NULL;
    if (build(&e, (const float *const *)w, (const float *const *)b) && (*dense_x = malloc(in_bytes)) &&
        bench_cuda_ok(cudaMemcpy(*dense_x, e.buf[0], in_bytes, cudaMemcpyDeviceToHost), "(b)'s input"))
        ms = time_eval(&e, runs);
    *y_elems = e.out_elems;
    if (!isnan(ms) && (*dense_y = malloc((size_t)e.out_elems * 4)) &&
        bench_cuda_ok(cudaMemcpy(e.buf[0], *dense_x, in_bytes, cudaMemcpyHostToDevice), "(b)'s input") && run(&e) &&
        bench_cuda_ok(cudaMemcpy(*dense_y, e.buf[e.out_buf], (size_t)e.out_elems * 4, cudaMemcpyDeviceToHost),
                      "(b)'s output")) {
        destroy(&e);
        return ms;
    }
    destroy(&e);
    free(*dense_x), free(*dense_y);
    *dense_x = *dense_y = NULL;
    return ms;
}

/* Whether every tensor of (a) on the patch stays under 2^31 elements (cuDNN's descriptors take
 * int sizes and strides). */
static bool cudnn_fits(const cg_net *net, const cg_net_patch *patch)
{
    for (int i = 0; i <= net->count; ++i) {
        const cg_net_tensor *t = &patch->shape[i];
        if ((double)t->batch * (double)t->c * (double)(t->ext[0] * t->ext[1] * t->ext[2]) >= 2147483647.0)
            return false;
    }
    return true;
}

/* (a)'s patch for a cube of `side`: convgen's (fragments pm), or where that passes cuDNN's 2^31
 * elements a tensor, the fragments (1..64 a side) under that limit of least work for the cube,
 * patches past the cube's edge allowed as convgen's are; false where none fits. */
static bool znni_patch(const cg_net *net, int64_t side, const int64_t pm[3], cg_net_patch *ap)
{
    if (pm[0] && cg_net_patch_of(net, pm, ap) == CONVGEN_SUCCESS && cudnn_fits(net, ap))
        return true;
    int64_t fov[3];
    cg_net_field_of_view(net, fov);
    double least = INFINITY;
    cg_net_patch cand;
    for (int64_t a = 1; a <= 64; ++a)
        for (int64_t b = 1; b <= 64; ++b)
            for (int64_t c = 1; c <= 64; ++c) {
                const int64_t m[3] = {a, b, c};
                if (cg_net_patch_of(net, m, &cand) != CONVGEN_SUCCESS || !cudnn_fits(net, &cand))
                    continue;
                double patches = 1;
                for (int d = 0; d < 3; ++d)
                    patches *= ceil((double)(side - fov[d] + 1) / (double)cand.out[d]);
                double work = patches * cg_net_patch_macs(net, &cand) * (1 + 1e-9 / (double)(a + b + c));
                if (work < least)
                    least = work, *ap = cand;
            }
    return least < INFINITY;
}

/* One network: convgen over a cube of `side`, (a) on convgen's patch, (b) over the largest cube
 * it can run, convgen's output on that cube against (b)'s. */
static void bench_one(convgen_context *ctx, const char *name, int64_t side, int runs, bench_table *t)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench/nets/%s.net", CONVGEN_SOURCE_DIR, name);
    char *text = cg_read_file(path, 1u << 20, NULL);
    cg_net net;
    float *w[CG_NET_MAX_LAYERS] = {0}, *b[CG_NET_MAX_LAYERS] = {0};
    bool isotropic = true;
    if (!text || cg_net_parse(text, &net) != CONVGEN_SUCCESS || net.rank != 3) {
        fprintf(stderr, "net bench: %s: %s\n", path, text ? convgen_last_error() : "cannot read it");
        free(text);
        return;
    }
    for (int i = 0; i < net.count; ++i)
        isotropic &= net.layers[i].size[0] == net.layers[i].size[1] && net.layers[i].size[1] == net.layers[i].size[2];
    if (!isotropic || !make_weights(&net, w, b)) { /* cubes: every extent of the tables is a side */
        fprintf(stderr, "net bench: %s: %s\n", path, isotropic ? "out of memory" : "windows and kernels must be cubes");
        for (int i = 0; i < CG_NET_MAX_LAYERS; ++i)
            free(w[i]), free(b[i]);
        free(text);
        return;
    }
    int64_t fov[3], pin[3] = {0}, pout[3] = {0}, pm[3] = {0}, dside = dense_side(&net), dense_elems = 0;
    cg_net_field_of_view(&net, fov);
    double voxels = pow((double)(side - fov[0] + 1), 3), mine = NAN, a_ms = NAN, b_ms = NAN, diff = NAN;
    printf("%s over %lld^3:\n", name, (long long)side);
    /* convgen */
    int64_t in_elems = net.c * side * side * side, out_elems = net.layers[net.count - 1].k * (int64_t)voxels;
    float *x = malloc((size_t)in_elems * 4), *y = malloc((size_t)out_elems * 4);
    uint64_t state = 7;
    convgen_net *exe = x && y ? open_convgen(ctx, text, &net, w, b, side, NULL) : NULL;
    if (exe) {
        cg_fill_random(x, in_elems, &state);
        convgen_net_patch(exe, pin, pout, pm);
        mine = time_infer(exe, x, side, y, runs);
        convgen_net_destroy(exe);
    }
    printf("  convgen: %.4g voxels/s\n", voxels / mine);
    /* (a) on convgen's patch, or where that passes cuDNN's 2^31 elements a tensor, its own; then
     * convgen on (a)'s patch too, its output against the first's (other patches, other kernels) */
    cg_net_patch ap = {0};
    const bool fits = znni_patch(&net, side, pm, &ap);
    double same = fits && memcmp(ap.m, pm, sizeof pm) == 0 ? mine : NAN;
    float *y2 = fits && isnan(same) && !isnan(mine) ? malloc((size_t)out_elems * 4) : NULL;
    if (y2 && (exe = open_convgen(ctx, text, &net, w, b, side, ap.m))) {
        same = time_infer(exe, x, side, y2, runs);
        if (!isnan(same))
            printf("  convgen on (a)'s patch: %.4g voxels/s, its output differs from the first's by %.3g\n",
                   voxels / same, difference(y2, y, out_elems));
        convgen_net_destroy(exe);
    }
    free(x), free(y), free(y2);
    char patch[64], a_patch[64] = "-";
    snprintf(patch, sizeof patch, "%lldx%lldx%lld -> %lldx%lldx%lld", (long long)pin[0], (long long)pin[1],
             (long long)pin[2], (long long)pout[0], (long long)pout[1], (long long)pout[2]);
    if (fits)
        memcpy(pin, ap.in, sizeof pin), memcpy(pout, ap.out, sizeof pout);
    if (fits)
        snprintf(a_patch, sizeof a_patch, "%lldx%lldx%lld -> %lldx%lldx%lld", (long long)pin[0], (long long)pin[1],
                 (long long)pin[2], (long long)pout[0], (long long)pout[1], (long long)pout[2]);
    double patches = 1;
    for (int k = 0; k < 3; ++k)
        patches *= pout[k] ? ceil((double)(side - fov[k] + 1) / (double)pout[k]) : NAN;
    dnn_eval a = {.net = &net, .ext = {pin[0], pin[1], pin[2]}};
    if (fits && build(&a, (const float *const *)w, (const float *const *)b))
        a_ms = time_eval(&a, runs);
    destroy(&a);
    printf("  (a): %.4g ms a patch of %lldx%lldx%lld, %.0f patches\n", a_ms, (long long)pin[0], (long long)pin[1],
           (long long)pin[2], patches);
    /* (b), and convgen on its cube */
    float *dx = NULL, *dy = NULL;
    if (dside >= fov[0])
        b_ms = dense_form(&net, w, b, dside, 2, &dx, &dy, &dense_elems); /* seconds a run: 2 after one */
    float *cy = dy ? malloc((size_t)dense_elems * 4) : NULL;
    if (cy && (exe = open_convgen(ctx, text, &net, w, b, dside, NULL))) {
        if (convgen_net_infer(exe, dx, (int64_t[3]){dside, dside, dside}, cy, NULL) == CONVGEN_SUCCESS)
            diff = difference(cy, dy, dense_elems);
        int64_t nonzero = 0;
        for (int64_t i = 0; i < dense_elems; ++i)
            nonzero += dy[i] != 0;
        printf("  (b): %.4g ms over %lld^3, %lld of %lld outputs nonzero; convgen's differ by %.3g\n", b_ms,
               (long long)dside, (long long)nonzero, (long long)dense_elems, diff);
        convgen_net_destroy(exe);
    }
    free(cy), free(dx), free(dy);
    double b_voxels = pow((double)(dside - fov[0] + 1), 3);
    double mine_vps = voxels / mine, a_vps = voxels / (patches * a_ms * 1e-3), b_vps = b_voxels / (b_ms * 1e-3),
           same_vps = voxels / same;
    char diff_text[48];
    if (isnan(diff)) /* nothing to compare with: every output zero after the last ReLU */
        snprintf(diff_text, sizeof diff_text, "not compared: (b) is all zeros");
    else
        snprintf(diff_text, sizeof diff_text, "%.2e", diff);
    fprintf(t->md, "| %s | %lld^3 | %s | %.4g | %s | %.4g | %.2f | %.4g | %.2f | %lld^3 | %.4g | %.2f | %s |\n", name,
            (long long)side, patch, mine_vps, a_patch, a_vps, mine_vps / a_vps, same_vps, same_vps / a_vps,
            (long long)dside, b_vps, mine_vps / b_vps, diff_text);
    fprintf(t->csv, "%s,%lld,%s,%.6g,%s,%.6g,%.4f,%.6g,%.4f,%lld,%.6g,%.4f,%.3e\n", name, (long long)side, patch, mine_vps,
            a_patch, a_vps, mine_vps / a_vps, same_vps, same_vps / a_vps, (long long)dside, b_vps, mine_vps / b_vps, diff);
    fflush(t->md), fflush(t->csv);
    for (int i = 0; i < CG_NET_MAX_LAYERS; ++i)
        free(w[i]), free(b[i]);
    free(text);
}

int bench_net(convgen_context *ctx, int runs, const char *device, const char *out_dir, const char *const *names,
              int count, int64_t side)
{
    static const char *const all[] = {"n337", "n537", "n726", "n926"};
    bench_table t;
    setvbuf(stdout, NULL, _IOLBF, 0); /* the plans as they come: a network takes minutes */
    char timing[256];
    snprintf(timing, sizeof timing, "convgen: wall clock of convgen_net_infer, median of %d runs after one; (a) and "
             "(b): CUDA events over the whole evaluation, median of %d and of 2 runs after one", runs, runs);
    if (!bench_table_open_timed(&t, out_dir, "net", "ZNNi's networks, whole volumes: convgen against cuDNN", device,
                                timing))
        return 1;
    fprintf(t.md, "\nOutput voxels per second. convgen: convgen_net_infer over a random cube, host memory to host "
                  "memory (transfers included), median of the runs, each layer's algorithm chosen by the cost model (auto's "
                  "ESTIMATE). (a) ZNNi's baseline on convgen's patch: cuDNN's "
                  "convolutions (fastest strict-fp32 algorithm by cudnnFind), cudnnAddTensor and "
                  "cudnnActivationForward, cuDNN's pooling once per window offset; the patch on the GPU alone (no "
                  "transfers) times the patches of the cube; where convgen's patch passes cuDNN's 2^31 elements a "
                  "tensor, the fragments under that limit of least work for the cube (a patch may run past the cube's "
                  "edge, as convgen's may); 'same patch': convgen on (a)'s patch. (b) dense: cuDNN's convolutions "
                  "dilated by the "
                  "poolings before them and stride-1 pooling (one per sub-lattice of the dilation), over the largest "
                  "cube it can run; 'difference' is convgen's output on that cube against (b)'s, "
                  "||convgen - (b)|| / ||(b)||. Weights shared, uniform in +-sqrt(6 / fan-in), biases in a tenth of that.\n\n"
                  "| network | cube | convgen's patch | convgen | (a)'s patch | (a) ZNNi | speedup | convgen, same patch | "
                  "speedup | (b) cube | (b) dense | speedup | difference |\n"
                  "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |\n");
    fprintf(t.csv, "network,cube,patch,convgen_vps,znni_patch,znni_vps,speedup_a,same_patch_vps,speedup_same,dense_cube,"
                   "dense_vps,speedup_b,difference\n");
    for (int i = 0; i < (count ? count : 4); ++i)
        bench_one(ctx, count ? names[i] : all[i], side, runs, &t);
    return bench_table_close(&t);
}
