/* Whole-volume sliding-window inference of a ConvNet (ZNNi): a plan of plans. The arithmetic
 * (field of view, patches, each layer's tensor under max-pooling fragments) is the generator's
 * (generator/net/net.h); here are the device side and the loop over patches:
 *
 *   for each patch of the volume (overlap = field of view - 1, the last ones moved back inside):
 *       pack its input [C][patch] on the host, copy it to the device
 *       every layer on the device, ping-ponging two buffers: a convolution plan with the layer's
 *           bias and ReLU as its epilogue, or max-pooling fragments (the batch grows p^3-fold)
 *       the final fragments interleaved back into the dense patch, last pooling first
 *       copy the dense patch back and place it into y
 *
 * Nothing inside a patch is computed twice: the fragments are ZNNi's dense evaluation. Patches
 * overlap only in their inputs, and where the volume is not a multiple of the patch the last
 * patch of a dimension moves back to end at the volume's edge (its outputs the previous one
 * also made are made again and agree). Patches flow through two slots (start_patch): while
 * one computes, the next one's input is packed and goes up, and the previous one's output comes
 * down and is placed. A net runs one convgen_net_infer at a time: the slots are its own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "convgen.h"
#include "net/net.h"
#include "reference.h"
#include "util.h"

/* The chosen fragment extents are at most this a side. */
#define MAX_FRAGMENT 32
#define OFFLINE_MEMORY ((size_t)16 << 30) /* what an offline context plans for without a limit */

typedef struct pipe_slot {
    float *host_in, *host_out;      /* pinned */
    CUdeviceptr dev_in, dev_out;
    CUevent uploaded, computed, downloaded;
    bool used;                      /* a patch went through it: its events were recorded */
} pipe_slot;

struct convgen_net {
    convgen_context *ctx;
    cg_net net;
    cg_net_patch patch;
    size_t memory_limit;
    int effort;
    convgen_plan *layer[CG_NET_MAX_LAYERS];      /* a convolution's, or a pooling's fragments */
    convgen_plan *interleave[CG_NET_MAX_LAYERS]; /* the poolings', undone, the last one first */
    int interleaves;
    CUdeviceptr w[CG_NET_MAX_LAYERS], bias[CG_NET_MAX_LAYERS];
    CUdeviceptr buf[2], workspace;
    size_t buf_bytes, workspace_bytes, weight_bytes;
    /* Two slots of the patch pipeline: while one patch computes, the next one's input goes up
     * and the previous one's output comes down, each in pinned host memory and a device buffer
     * of its own, on streams of their own; events order them. */
    pipe_slot slot[2];
    size_t in_bytes, out_bytes; /* a packed patch's input [C][patch.in], dense output [K][patch.out] */
    CUstream up, down;
};

static int64_t tensor_elems(const cg_net_tensor *t) { return t->batch * t->c * t->ext[0] * t->ext[1] * t->ext[2]; }

/* The two activation buffers' bytes: the largest tensor (the interleaving keeps the last's size). */
static size_t buffer_bytes(const cg_net *net, const cg_net_patch *patch)
{
    int64_t most = 0;
    for (int i = 0; i <= net->count; ++i)
        most = tensor_elems(&patch->shape[i]) > most ? tensor_elems(&patch->shape[i]) : most;
    return (size_t)most * sizeof(float);
}

static size_t weight_bytes(const cg_net *net)
{
    size_t bytes = 0;
    for (int i = 0; i < net->count; ++i)
        if (net->layers[i].kind == CG_NET_CONV)
            bytes += (size_t)(cg_net_weight_count(net, i) + net->layers[i].k) * sizeof(float);
    return bytes;
}

/* A layer's extents as a descriptor takes them: the last `rank` of depth, height, width. */
static void spatial(int rank, const int64_t ext[3], int64_t out[CONVGEN_MAX_RANK])
{
    for (int d = 0; d < rank; ++d)
        out[d] = ext[3 - rank + d];
}

static convgen_status plan_conv(convgen_net *n, int i, size_t workspace_limit)
{
    const cg_net_layer *l = &n->net.layers[i];
    const cg_net_tensor *t = &n->patch.shape[i];
    convgen_conv_desc d = {.rank = n->net.rank, .n = t->batch, .c = t->c, .k = l->k,
                           .epilogue = CONVGEN_EPILOGUE_BIAS | (l->relu ? CONVGEN_EPILOGUE_RELU : 0)};
    spatial(d.rank, t->ext, d.in);
    const int64_t size[3] = {l->size[0], l->size[1], l->size[2]};
    spatial(d.rank, size, d.kernel);
    convgen_plan_options o = {.workspace_limit = workspace_limit, .effort = n->effort};
    convgen_status s = convgen_plan_conv_ex(n->ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_AUTO, &o, &n->layer[i]);
    if (s != CONVGEN_SUCCESS)
        return s;
    size_t ws = 0;
    convgen_plan_workspace_size(n->layer[i], &ws);
    n->workspace_bytes = ws > n->workspace_bytes ? ws : n->workspace_bytes;
    return CONVGEN_SUCCESS;
}

static convgen_status plan_pool(convgen_net *n, int i, convgen_pool_mode mode, int64_t batch, int64_t c,
                                const int64_t ext[3], convgen_plan **plan)
{
    const int *p = n->net.layers[i].size;
    convgen_pool_desc d = {.mode = mode, .rank = n->net.rank, .n = batch, .c = c};
    spatial(d.rank, ext, d.in);
    for (int k = 0; k < d.rank; ++k)
        d.window[k] = p[3 - d.rank + k];
    return convgen_plan_pool(n->ctx, &d, plan);
}

/* The poolings undone, last first: each gives back its batch's fragments as dense volumes. */
static convgen_status plan_interleaves(convgen_net *n)
{
    const cg_net_tensor *last = &n->patch.shape[n->net.count];
    int64_t ext[3] = {last->ext[0], last->ext[1], last->ext[2]};
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = n->net.count - 1; i >= 0 && s == CONVGEN_SUCCESS; --i) {
        if (n->net.layers[i].kind != CG_NET_POOL)
            continue;
        s = plan_pool(n, i, CONVGEN_POOL_INTERLEAVE, n->patch.shape[i].batch, last->c, ext,
                      &n->interleave[n->interleaves++]);
        for (int d = 0; d < 3; ++d)
            ext[d] *= n->net.layers[i].size[d];
    }
    return s;
}

static void release_plans(convgen_net *n)
{
    for (int i = 0; i < CG_NET_MAX_LAYERS; ++i) {
        convgen_plan_destroy(n->layer[i]);
        convgen_plan_destroy(n->interleave[i]);
        n->layer[i] = n->interleave[i] = NULL;
    }
    n->interleaves = 0;
    n->workspace_bytes = 0;
}

/* What a patch holds besides the convolutions' workspace: the two activation buffers, the two
 * slots' input and output, the weights. Element counts stay under 2^62 (cg_net_patch_of): the
 * sums are taken in doubles so that no product wraps. */
static double fixed_bytes(const convgen_net *n, const cg_net_patch *patch)
{
    double in = (double)tensor_elems(&patch->shape[0]), last = (double)patch->shape[n->net.count].c;
    double out = last * (double)patch->out[0] * (double)patch->out[1] * (double)patch->out[2];
    return 2.0 * ((double)buffer_bytes(&n->net, patch) + 4.0 * (in + out)) + (double)n->weight_bytes;
}

/* Every layer's plan for the patch of fragment extent m, the convolutions' workspace under what
 * the tensors and weights leave of the memory limit. */
static convgen_status plan_patch(convgen_net *n, const int64_t m[3])
{
    release_plans(n);
    convgen_status s = cg_net_patch_of(&n->net, m, &n->patch);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (fixed_bytes(n, &n->patch) >= (double)n->memory_limit)
        return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes: the patch of fragments %lldx%lldx%lld "
                       "needs %.0f for its tensors and weights", n->memory_limit, (long long)m[0], (long long)m[1],
                       (long long)m[2], fixed_bytes(n, &n->patch));
    n->buf_bytes = buffer_bytes(&n->net, &n->patch);
    n->in_bytes = (size_t)tensor_elems(&n->patch.shape[0]) * sizeof(float);
    n->out_bytes = (size_t)(n->patch.shape[n->net.count].c * n->patch.out[0] * n->patch.out[1] * n->patch.out[2]) *
                   sizeof(float);
    size_t fixed = 2 * (n->buf_bytes + n->in_bytes + n->out_bytes) + n->weight_bytes; /* fixed_bytes's, exact */
    for (int i = 0; i < n->net.count && s == CONVGEN_SUCCESS; ++i)
        s = n->net.layers[i].kind == CG_NET_CONV
                ? plan_conv(n, i, n->memory_limit - fixed)
                : plan_pool(n, i, CONVGEN_POOL_FRAGMENTS, n->patch.shape[i].batch, n->patch.shape[i].c,
                            n->patch.shape[i].ext, &n->layer[i]);
    return s == CONVGEN_SUCCESS ? plan_interleaves(n) : s;
}

/* What a patch costs per output voxel: its multiply-adds over the dense outputs it gives, or,
 * for a known volume, all its patches' (the last ones moved back, overlapping) over the
 * volume's outputs. Infinite where the patch does not fit the volume. */
static double cost_per_voxel(const convgen_net *n, const cg_net_patch *patch, const int64_t volume[3])
{
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    double patches = 1, voxels = 1;
    for (int d = 0; d < 3; ++d) {
        if (!volume[d]) {
            voxels *= (double)patch->out[d];
            continue;
        }
        int64_t out = volume[d] - fov[d] + 1;
        if (patch->in[d] > volume[d])
            return INFINITY;
        patches *= (double)((out + patch->out[d] - 1) / patch->out[d]);
        voxels *= (double)out;
    }
    return patches * cg_net_patch_macs(&n->net, patch) / voxels;
}

/* The fragment extents (each 1..MAX_FRAGMENT; rank 2: a depth of 1) whose tensors and weights
 * take at most half the memory (the rest for the convolutions' workspaces), by cost per output
 * voxel, the fewest patches first among equals; `tried` of them already failed to plan. */
static bool best_fragment(const convgen_net *n, const int64_t volume[3], int64_t tried[][3], int tries, int64_t m[3])
{
    double best = INFINITY;
    int64_t lo0 = n->net.rank == 2 ? 1 : MAX_FRAGMENT;
    for (int64_t a = 1; a <= lo0; ++a)
        for (int64_t b = 1; b <= MAX_FRAGMENT; ++b)
            for (int64_t c = 1; c <= MAX_FRAGMENT; ++c) {
                const int64_t cand[3] = {a, b, c};
                bool done = false;
                for (int t = 0; t < tries; ++t)
                    done |= memcmp(tried[t], cand, sizeof cand) == 0;
                cg_net_patch patch;
                if (done || cg_net_patch_of(&n->net, cand, &patch) != CONVGEN_SUCCESS ||
                    fixed_bytes(n, &patch) > n->memory_limit / 2)
                    continue;
                double cost = cost_per_voxel(n, &patch, volume) * (1 + 1e-9 * (double)(3 * MAX_FRAGMENT - a - b - c));
                if (cost < best)
                    best = cost, memcpy(m, cand, sizeof cand);
            }
    return best < INFINITY;
}

/* The caller's fragment extent, or the best that plans (a convolution's workspace may not fit
 * what the tensors leave: then the next best). */
static convgen_status choose_patch(convgen_net *n, const int64_t asked[3], const int64_t volume_asked[3])
{
    int64_t m[3], volume[3] = {0, 0, 0};
    int skip = 3 - n->net.rank;
    for (int d = skip; d < 3; ++d)
        volume[d] = volume_asked[d - skip];
    if (asked[0] || asked[1] || asked[2]) {
        for (int d = 0; d < n->net.rank; ++d)
            if (asked[d] < 1)
                return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "fragment[%d] = %lld: give every dimension's, or none",
                               d, (long long)asked[d]);
        for (int d = 0; d < 3; ++d)
            m[d] = d < skip ? 1 : asked[d - skip];
        return plan_patch(n, m);
    }
    int64_t tried[8][3];
    convgen_status s = CONVGEN_ERROR_WORKSPACE_LIMIT;
    for (int t = 0; t < 8 && s == CONVGEN_ERROR_WORKSPACE_LIMIT; ++t) {
        if (!best_fragment(n, volume, tried, t, m))
            return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes: no patch%s fits", n->memory_limit,
                           volume[0] + volume[1] + volume[2] ? " inside the volume" : "");
        memcpy(tried[t], m, sizeof m);
        s = plan_patch(n, m);
    }
    return s;
}

static convgen_status cuda(const convgen_net *n, CUresult r, const char *what)
{
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(n->ctx->drv, r, what);
}

/* The device buffers: weights (zeroed until set), activations, workspace, and the host's
 * packed patches. */
static convgen_status allocate(convgen_net *n)
{
    const cg_driver *drv = n->ctx->drv;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < n->net.count && s == CONVGEN_SUCCESS; ++i) {
        if (n->net.layers[i].kind != CG_NET_CONV)
            continue;
        size_t wb = (size_t)cg_net_weight_count(&n->net, i) * 4, bb = (size_t)n->net.layers[i].k * 4;
        s = cuda(n, drv->MemAlloc(&n->w[i], wb), "cuMemAlloc (weights)");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemAlloc(&n->bias[i], bb), "cuMemAlloc (bias)");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemsetD8(n->w[i], 0, wb), "cuMemsetD8");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemsetD8(n->bias[i], 0, bb), "cuMemsetD8");
    }
    for (int b = 0; b < 2 && s == CONVGEN_SUCCESS; ++b)
        s = cuda(n, drv->MemAlloc(&n->buf[b], n->buf_bytes), "cuMemAlloc (activations)");
    if (s == CONVGEN_SUCCESS && n->workspace_bytes)
        s = cuda(n, drv->MemAlloc(&n->workspace, n->workspace_bytes), "cuMemAlloc (workspace)");
    for (int j = 0; j < 2 && s == CONVGEN_SUCCESS; ++j) {
        pipe_slot *p = &n->slot[j];
        s = cuda(n, drv->MemAllocHost((void **)&p->host_in, n->in_bytes), "cuMemAllocHost (a patch's input)");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemAllocHost((void **)&p->host_out, n->out_bytes), "cuMemAllocHost (a patch's output)");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemAlloc(&p->dev_in, n->in_bytes), "cuMemAlloc (a patch's input)");
        if (s == CONVGEN_SUCCESS)
            s = cuda(n, drv->MemAlloc(&p->dev_out, n->out_bytes), "cuMemAlloc (a patch's output)");
        CUevent *events[3] = {&p->uploaded, &p->computed, &p->downloaded};
        for (int e = 0; e < 3 && s == CONVGEN_SUCCESS; ++e)
            s = cuda(n, drv->EventCreate(events[e], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    if (s == CONVGEN_SUCCESS) /* non-blocking: no implicit order with the legacy default stream */
        s = cuda(n, drv->StreamCreate(&n->up, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->StreamCreate(&n->down, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return s;
}

static size_t default_memory(convgen_context *ctx)
{
    size_t free_bytes = 0, total = 0;
    if (ctx->offline)
        return OFFLINE_MEMORY;
    if (ctx->drv->CtxPushCurrent(ctx->primary) != CUDA_SUCCESS)
        return 0;
    if (ctx->drv->MemGetInfo(&free_bytes, &total) != CUDA_SUCCESS)
        free_bytes = 0;
    CUcontext popped;
    ctx->drv->CtxPopCurrent(&popped);
    return free_bytes / 10 * 9;
}

convgen_status convgen_net_create(convgen_context *ctx, const char *text, const convgen_net_options *options,
                                  convgen_net **out)
{
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "net is NULL");
    *out = NULL;
    if (!ctx || !text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", ctx ? "text" : "ctx");
    convgen_net *n = calloc(1, sizeof *n);
    if (!n)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a network");
    n->ctx = ctx;
    convgen_net_options o = options ? *options : (convgen_net_options){0};
    convgen_status s = cg_net_parse(text, &n->net);
    for (int d = 0; d < CONVGEN_MAX_RANK && s == CONVGEN_SUCCESS; ++d) {
        if (o.fragment[d] < 0 || (d >= n->net.rank && o.fragment[d]))
            s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "fragment[%d] = %lld must be %s", d, (long long)o.fragment[d],
                        d >= n->net.rank ? "0 past the network's rank" : ">= 0");
        else if (o.volume[d] < 0 || (d >= n->net.rank && o.volume[d]))
            s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "volume[%d] = %lld must be %s", d, (long long)o.volume[d],
                        d >= n->net.rank ? "0 past the network's rank" : ">= 0");
    }
    if (s == CONVGEN_SUCCESS) {
        n->memory_limit = o.memory_limit ? o.memory_limit : default_memory(ctx);
        if (!n->memory_limit)
            s = cg_fail(CONVGEN_ERROR_CUDA, "memory_limit = 0 and the device's free memory could not be read: give one");
        n->effort = o.effort;
        n->weight_bytes = weight_bytes(&n->net);
        if (s == CONVGEN_SUCCESS)
            s = choose_patch(n, o.fragment, o.volume);
    }
    if (s == CONVGEN_SUCCESS && !ctx->offline) {
        CUresult r = ctx->drv->CtxPushCurrent(ctx->primary);
        s = r == CUDA_SUCCESS ? allocate(n) : cg_cuda_fail(ctx->drv, r, "cuCtxPushCurrent");
        CUcontext popped;
        if (r == CUDA_SUCCESS)
            ctx->drv->CtxPopCurrent(&popped);
        if (s == CONVGEN_SUCCESS)
            s = convgen_net_random_weights(n, 1);
    }
    if (s != CONVGEN_SUCCESS) {
        convgen_net_destroy(n);
        return s;
    }
    *out = n;
    return CONVGEN_SUCCESS;
}

void convgen_net_destroy(convgen_net *n)
{
    if (!n)
        return;
    release_plans(n);
    const cg_driver *drv = n->ctx->drv;
    if (drv && drv->CtxPushCurrent(n->ctx->primary) == CUDA_SUCCESS) {
        CUdeviceptr *all[] = {n->w, n->bias};
        for (int a = 0; a < 2; ++a)
            for (int i = 0; i < CG_NET_MAX_LAYERS; ++i)
                if (all[a][i])
                    drv->MemFree(all[a][i]);
        for (int b = 0; b < 2; ++b)
            if (n->buf[b])
                drv->MemFree(n->buf[b]);
        if (n->workspace)
            drv->MemFree(n->workspace);
        for (int j = 0; j < 2; ++j) {
            pipe_slot *p = &n->slot[j];
            if (p->host_in)
                drv->MemFreeHost(p->host_in);
            if (p->host_out)
                drv->MemFreeHost(p->host_out);
            CUdeviceptr dev[2] = {p->dev_in, p->dev_out};
            for (int b = 0; b < 2; ++b)
                if (dev[b])
                    drv->MemFree(dev[b]);
            CUevent events[3] = {p->uploaded, p->computed, p->downloaded};
            for (int e = 0; e < 3; ++e)
                if (events[e])
                    drv->EventDestroy(events[e]);
        }
        CUstream streams[2] = {n->up, n->down};
        for (int i = 0; i < 2; ++i)
            if (streams[i])
                drv->StreamDestroy(streams[i]);
        CUcontext popped;
        drv->CtxPopCurrent(&popped);
    }
    free(n);
}

static convgen_status with_context(const convgen_net *n)
{
    if (n->ctx->offline)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "the network's context is offline (arch %s)", n->ctx->arch);
    return cuda(n, n->ctx->drv->CtxPushCurrent(n->ctx->primary), "cuCtxPushCurrent");
}

static void without_context(const convgen_net *n)
{
    CUcontext popped;
    n->ctx->drv->CtxPopCurrent(&popped);
}

convgen_status convgen_net_set_weights(convgen_net *n, int layer, const float *w, const float *bias)
{
    if (!n || !w || !bias)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", !n ? "net" : !w ? "w" : "bias");
    int64_t count = cg_net_weight_count(&n->net, layer);
    if (!count)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer = %d is not a convolution of the network's %d layers", layer,
                       n->net.count);
    convgen_status s = with_context(n);
    if (s != CONVGEN_SUCCESS)
        return s;
    const cg_driver *drv = n->ctx->drv;
    s = cuda(n, drv->MemcpyHtoD(n->w[layer], w, (size_t)count * 4), "cuMemcpyHtoD (w)");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->MemcpyHtoD(n->bias[layer], bias, (size_t)n->net.layers[layer].k * 4), "cuMemcpyHtoD (bias)");
    /* a pageable copy may still be in flight on return, and the caller's stream need not wait
     * for the legacy one: the weights are whole before any patch reads them */
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->CtxSynchronize(), "copying the weights");
    without_context(n);
    return s;
}

convgen_status convgen_net_random_weights(convgen_net *n, uint64_t seed)
{
    if (!n)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "net is NULL");
    uint64_t state = 0x9E3779B97F4A7C15ull ^ (seed << 1 | 1);
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < n->net.count && s == CONVGEN_SUCCESS; ++i) {
        int64_t count = cg_net_weight_count(&n->net, i), k = n->net.layers[i].k;
        if (!count)
            continue;
        float *w = malloc((size_t)(count + k) * sizeof *w);
        if (!w)
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of host memory for layer %d's weights", i);
        cg_fill_random(w, count + k, &state);
        float a = (float)sqrt(6.0 / (double)(count / k));
        for (int64_t j = 0; j < count + k; ++j)
            w[j] *= j < count ? a : a / 10;
        s = convgen_net_set_weights(n, i, w, w + count);
        free(w);
    }
    return s;
}

/* ---- inference ---- */

/* Where patch t of a dimension starts in the output: every patch_out, the last moved back to
 * end at the output's edge. */
static int64_t patch_start(int64_t t, int64_t patch_out, int64_t total)
{
    int64_t at = t * patch_out;
    return at + patch_out > total ? total - patch_out : at;
}

/* x [C][in] at `origin` into the packed patch [C][patch.in]. */
static void pack_input(const convgen_net *n, const float *x, const int64_t in[3], const int64_t origin[3], float *dst)
{
    const int64_t *e = n->patch.in;
    for (int64_t c = 0; c < n->net.c; ++c)
        for (int64_t z = 0; z < e[0]; ++z)
            for (int64_t r = 0; r < e[1]; ++r, dst += e[2])
                memcpy(dst, x + ((c * in[0] + origin[0] + z) * in[1] + origin[1] + r) * in[2] + origin[2],
                       (size_t)e[2] * sizeof *dst);
}

/* The dense patch [K][patch.out] into y [K][out] at `origin`. */
static void place_output(const convgen_net *n, const float *src, float *y, const int64_t out[3],
                         const int64_t origin[3])
{
    const int64_t *e = n->patch.out;
    for (int64_t k = 0; k < n->patch.shape[n->net.count].c; ++k)
        for (int64_t z = 0; z < e[0]; ++z)
            for (int64_t r = 0; r < e[1]; ++r, src += e[2])
                memcpy(y + ((k * out[0] + origin[0] + z) * out[1] + origin[1] + r) * out[2] + origin[2], src,
                       (size_t)e[2] * sizeof *src);
}

/* Every layer on the slot's input into its output, on `stream`: the convolutions and poolings
 * ping-pong between the two activation buffers, the last interleaving writes dev_out. */
static convgen_status compute(convgen_net *n, const pipe_slot *p, convgen_stream stream)
{
    CUdeviceptr from = p->dev_in;
    int next = 0, steps = n->net.count + n->interleaves;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < steps && s == CONVGEN_SUCCESS; ++i, next ^= 1) {
        const float *x = (const float *)from;
        float *y = (float *)(i == steps - 1 ? p->dev_out : n->buf[next]);
        if (i >= n->net.count)
            s = convgen_execute_pool(n->interleave[i - n->net.count], x, y, stream);
        else if (n->net.layers[i].kind == CG_NET_CONV)
            s = convgen_execute_bias(n->layer[i], x, (const float *)n->w[i], (const float *)n->bias[i], y,
                                     (void *)n->workspace, n->workspace_bytes, stream);
        else
            s = convgen_execute_pool(n->layer[i], x, y, stream);
        from = (CUdeviceptr)y;
    }
    return s;
}

/* Patch t of the volume into slot t % 2: once the slot's last patch has gone up, pack this one;
 * up on `up` once that patch computed (dev_in free), compute on `stream` once up and once the
 * slot's last output came down (dev_out free), down on `down`. Returns without waiting. */
static convgen_status start_patch(convgen_net *n, pipe_slot *p, const float *x, const int64_t ext[3],
                                  const int64_t origin[3], convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    CUstream cs = (CUstream)stream;
    convgen_status s = p->used ? cuda(n, drv->EventSynchronize(p->uploaded), "uploading a patch") : CONVGEN_SUCCESS;
    if (s != CONVGEN_SUCCESS)
        return s;
    pack_input(n, x, ext, origin, p->host_in);
    if (p->used)
        s = cuda(n, drv->StreamWaitEvent(n->up, p->computed, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->MemcpyHtoDAsync(p->dev_in, p->host_in, n->in_bytes, n->up), "cuMemcpyHtoDAsync (a patch)");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->EventRecord(p->uploaded, n->up), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->StreamWaitEvent(cs, p->uploaded, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS && p->used)
        s = cuda(n, drv->StreamWaitEvent(cs, p->downloaded, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = compute(n, p, stream);
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->EventRecord(p->computed, cs), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->StreamWaitEvent(n->down, p->computed, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->MemcpyDtoHAsync(p->host_out, p->dev_out, n->out_bytes, n->down), "cuMemcpyDtoHAsync (a patch)");
    if (s == CONVGEN_SUCCESS)
        s = cuda(n, drv->EventRecord(p->downloaded, n->down), "cuEventRecord");
    p->used = true;
    return s;
}

/* Waits for a slot's patch to come down and places it into y. */
static convgen_status finish_patch(convgen_net *n, const pipe_slot *p, float *y, const int64_t out[3],
                                   const int64_t origin[3])
{
    convgen_status s = cuda(n, n->ctx->drv->EventSynchronize(p->downloaded), "running a patch");
    if (s == CONVGEN_SUCCESS)
        place_output(n, p->host_out, y, out, origin);
    return s;
}

/* The volume's extents depth first (rank 2: depth 1), checked against the patch; its dense
 * output's and the patches per dimension. */
static convgen_status volume_extents(const convgen_net *n, const int64_t in[], int64_t ext[3], int64_t out[3],
                                     int64_t tiles[3])
{
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    int skip = 3 - n->net.rank;
    for (int d = 0; d < 3; ++d) {
        ext[d] = d < skip ? 1 : in[d - skip];
        out[d] = ext[d] - fov[d] + 1;
        if (ext[d] < n->patch.in[d] || ext[d] >= ((int64_t)1 << 31))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in[%d] = %lld must be %lld..2^31 - 1: the patch's input (its "
                           "output %lld, the field of view %lld)", d - skip, (long long)ext[d],
                           (long long)n->patch.in[d], (long long)n->patch.out[d], (long long)fov[d]);
        tiles[d] = (out[d] + n->patch.out[d] - 1) / n->patch.out[d];
    }
    return CONVGEN_SUCCESS;
}

convgen_status convgen_net_infer(convgen_net *n, const float *x, const int64_t in[CONVGEN_MAX_RANK], float *y,
                                 convgen_stream stream)
{
    if (!n || !x || !in || !y)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", !n ? "net" : !x ? "x" : !in ? "in" : "y");
    int64_t ext[3], out[3], tiles[3], origin[2][3];
    convgen_status s = volume_extents(n, in, ext, out, tiles);
    if (s == CONVGEN_SUCCESS)
        s = with_context(n);
    if (s != CONVGEN_SUCCESS)
        return s;
    int64_t count = tiles[0] * tiles[1] * tiles[2];
    for (int j = 0; j < 2; ++j)
        n->slot[j].used = false;
    /* patch t starts while patch t - 1 computes; then t - 1 is placed while t computes */
    for (int64_t t = 0; s == CONVGEN_SUCCESS && t <= count; ++t) {
        if (t < count) {
            const int64_t idx[3] = {t / (tiles[1] * tiles[2]), t / tiles[2] % tiles[1], t % tiles[2]};
            for (int d = 0; d < 3; ++d)
                origin[t % 2][d] = patch_start(idx[d], n->patch.out[d], out[d]);
            s = start_patch(n, &n->slot[t % 2], x, ext, origin[t % 2], stream);
        }
        if (s == CONVGEN_SUCCESS && t > 0)
            s = finish_patch(n, &n->slot[(t - 1) % 2], y, out, origin[(t - 1) % 2]);
    }
    if (s != CONVGEN_SUCCESS) /* leave nothing in flight behind an error */
        n->ctx->drv->CtxSynchronize();
    without_context(n);
    return s;
}

convgen_status convgen_net_patch(const convgen_net *n, int64_t in[CONVGEN_MAX_RANK], int64_t out[CONVGEN_MAX_RANK],
                                 int64_t fragment[CONVGEN_MAX_RANK])
{
    if (!n || !in || !out || !fragment)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", !n ? "net" : !in ? "in" : !out ? "out" : "fragment");
    int skip = 3 - n->net.rank;
    for (int d = 0; d < n->net.rank; ++d)
        in[d] = n->patch.in[d + skip], out[d] = n->patch.out[d + skip], fragment[d] = n->patch.m[d + skip];
    return CONVGEN_SUCCESS;
}

/* ---- explain ---- */

/* A convolution plan's algorithm and time into `how`: measured where AUTO timed it (or wisdom
 * recorded it), else the cost model's estimate; its milliseconds, < 0 where none is known. */
static double layer_ms(const convgen_plan *plan, char *how, size_t size)
{
    convgen_choice ch = {0};
    convgen_candidate c = {.estimate_ms = -1};
    if (convgen_plan_choice(plan, &ch) != CONVGEN_SUCCESS)
        return snprintf(how, size, "?"), -1;
    if (ch.winner >= 0 && ch.candidate_count > 0)
        convgen_plan_candidate(plan, ch.winner, &c);
    double ms = ch.ms >= 0 ? ch.ms : c.estimate_ms;
    if (ms >= 0)
        snprintf(how, size, "%s, %.3g ms (%s)", convgen_algo_name(ch.algo), ms, ch.ms >= 0 ? "measured" : "estimated");
    else
        snprintf(how, size, "%s", convgen_algo_name(ch.algo));
    return ms;
}

convgen_status convgen_net_explain(const convgen_net *n, char **text)
{
    if (!n || !text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", n ? "text" : "net");
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    const cg_net_patch *p = &n->patch;
    cg_buf b = {0};
    cg_buf_printf(&b, "field of view %lldx%lldx%lld; patch %lldx%lldx%lld -> dense %lldx%lldx%lld (fragments of "
                  "%lldx%lldx%lld)\n", (long long)fov[0], (long long)fov[1], (long long)fov[2], (long long)p->in[0],
                  (long long)p->in[1], (long long)p->in[2], (long long)p->out[0], (long long)p->out[1],
                  (long long)p->out[2], (long long)p->m[0], (long long)p->m[1], (long long)p->m[2]);
    double total_ms = 0;
    bool timed = true;
    for (int i = 0; i < n->net.count; ++i) {
        const cg_net_layer *l = &n->net.layers[i];
        const cg_net_tensor *t = &p->shape[i + 1];
        char how[64] = "max-pooling fragments";
        if (l->kind == CG_NET_CONV) {
            double ms = layer_ms(n->layer[i], how, sizeof how);
            timed &= ms >= 0;
            total_ms += ms > 0 ? ms : 0;
        }
        cg_buf_printf(&b, "  %2d %-4s %dx%dx%d -> %lld x %lld x %lldx%lldx%lld, %.1f MiB  %s\n", i,
                      l->kind == CG_NET_CONV ? "conv" : "pool", l->size[0], l->size[1], l->size[2], (long long)t->batch,
                      (long long)t->c, (long long)t->ext[0], (long long)t->ext[1], (long long)t->ext[2],
                      (double)tensor_elems(t) * 4 / 1048576.0, how);
    }
    if (timed && total_ms > 0)
        cg_buf_printf(&b, "predicted: %.3g ms of convolutions a patch, %.4g output voxels/s (poolings, copies and "
                      "overlaps across patches not counted)\n", total_ms,
                      (double)(p->out[0] * p->out[1] * p->out[2]) / (total_ms * 1e-3));
    cg_buf_printf(&b, "memory: 2 x %.1f MiB activations, %.1f MiB weights, %.1f MiB workspace (limit %.1f MiB)\n",
                  (double)n->buf_bytes / 1048576.0, (double)n->weight_bytes / 1048576.0,
                  (double)n->workspace_bytes / 1048576.0, (double)n->memory_limit / 1048576.0);
    if (!b.data)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the explanation");
    *text = b.data;
    return CONVGEN_SUCCESS;
}
