/* Whole-volume sliding-window inference of a ConvNet (ZNNi): a plan of plans. The arithmetic
 * (field of view, patches, each layer's tensor under max-pooling fragments) is the generator's
 * (generator/net/net.h); here are the device side and the loop over patches:
 *
 *   for each patch of the volume (overlap = field of view - 1, the last ones moved back inside,
 *   or past the edge where the patch is larger than the volume):
 *       pack its input [C][patch] on the host, copy it to the device
 *       every layer on the device, ping-ponging two buffers: a convolution plan with the layer's
 *           bias and ReLU as its epilogue, or max-pooling fragments (the batch grows p^3-fold)
 *       the final fragments interleaved back into the dense patch, last pooling first
 *       copy the dense patch back and place it into y
 *
 * Nothing inside a patch is computed twice: the fragments are ZNNi's dense evaluation. Patches
 * overlap only in their inputs, and where the volume is not a multiple of the patch the last
 * patch of a dimension moves back to end at the volume's edge (its outputs the previous one
 * also made are made again and agree). A dimension the patch is larger than takes one patch
 * that runs past the edge: its input zeros there, the outputs they reach not placed (448^3
 * for n337 is one patch of 452^3, where patches inside it would be eight of 268^3). Patches flow through two slots (start_patch): while
 * one computes, the next one's input is packed and goes up, and the previous one's output comes
 * down and is placed. A net runs one convgen_net_infer at a time: the slots are its own.
 *
 * That is the device mode. Where a patch worth running does not fit the device, the host mode
 * (net_host.c) keeps a patch's tensors in pinned host memory and runs the network in segments,
 * a chunk at a time through the same slots. net_create.c chooses the patch and the mode. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_exec.h"
#include "reference.h"

static convgen_status with_context(const convgen_net *n)
{
    if (n->ctx->offline)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "the network's context is offline (arch %s)", n->ctx->arch);
    return cg_net_cuda(n, n->ctx->drv->CtxPushCurrent(n->ctx->primary), "cuCtxPushCurrent");
}

static void without_context(const convgen_net *n)
{
    CUcontext popped;
    n->ctx->drv->CtxPopCurrent(&popped);
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
        s = cg_net_plan_pool(n, i, CONVGEN_POOL_INTERLEAVE, n->patch.shape[i].batch, last->c, ext,
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
    cg_net_host_release(n);
    n->segments = n->interleaves = 0;
    n->workspace_bytes = 0;
}

/* What a patch holds in device mode besides the convolutions' workspace: its tensors
 * (cg_net_device_patch_bytes), the weights. */
static double fixed_bytes(const convgen_net *n, const cg_net_patch *patch)
{
    return cg_net_device_patch_bytes(&n->net, patch) + (double)n->weight_bytes;
}

/* Device mode: every layer's plan for the patch, the convolutions' workspace under what the
 * tensors and weights leave of the memory limit. */
static convgen_status plan_device(convgen_net *n)
{
    const cg_net_patch *p = &n->patch;
    if (fixed_bytes(n, p) >= (double)n->memory_limit)
        return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes: the patch of fragments %lldx%lldx%lld "
                       "needs %.0f for its tensors and weights", n->memory_limit, (long long)p->m[0], (long long)p->m[1],
                       (long long)p->m[2], fixed_bytes(n, p));
    n->buf_bytes = (size_t)cg_net_largest_elems(&n->net, p) * sizeof(float);
    n->in_bytes = (size_t)cg_net_tensor_elems(&p->shape[0]) * sizeof(float);
    n->out_bytes = (size_t)cg_net_dense_elems(&n->net, p) * sizeof(float);
    size_t fixed = 2 * (n->buf_bytes + n->in_bytes + n->out_bytes) + n->weight_bytes; /* fixed_bytes's, exact */
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < n->net.count && s == CONVGEN_SUCCESS; ++i)
        s = n->net.layers[i].kind == CG_NET_CONV
                ? cg_net_plan_conv(n, i, p->shape[i].batch, n->net.layers[i].k, &p->shape[i], n->memory_limit - fixed,
                                   &n->layer[i])
                : cg_net_plan_pool(n, i, CONVGEN_POOL_FRAGMENTS, p->shape[i].batch, p->shape[i].c, p->shape[i].ext,
                                   &n->layer[i]);
    return s;
}

/* The patch of fragment extent m in `mode` (DEVICE or HOST): its plans, and the host mode's
 * segments. */
convgen_status cg_net_plan_patch(convgen_net *n, const int64_t m[3], convgen_net_mode mode)
{
    release_plans(n);
    convgen_status s = cg_net_patch_of(&n->net, m, &n->patch);
    if (s != CONVGEN_SUCCESS)
        return s;
    n->mode = mode;
    if (mode == CONVGEN_NET_HOST) {
        if (cg_net_host_segments(n, &n->patch, n->seg, &n->segments) == INFINITY)
            return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes, host_memory_limit = %zu: the patch "
                           "of fragments %lldx%lldx%lld does not fit the host mode (a layer's single map or depth row of "
                           "one entry, or two of its tensors in host memory)", n->memory_limit, n->host_limit, (long long)m[0],
                           (long long)m[1], (long long)m[2]);
        s = cg_net_host_plan(n);
    } else {
        s = plan_device(n);
    }
    return s == CONVGEN_SUCCESS ? plan_interleaves(n) : s;
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
        s = cg_net_cuda(n, drv->MemAlloc(&n->w[i], wb), "cuMemAlloc (weights)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemAlloc(&n->bias[i], bb), "cuMemAlloc (bias)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemsetD8(n->w[i], 0, wb), "cuMemsetD8");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemsetD8(n->bias[i], 0, bb), "cuMemsetD8");
    }
    for (int b = 0; b < 2 && s == CONVGEN_SUCCESS && n->buf_bytes; ++b) /* host mode: none in one-layer segments */
        s = cg_net_cuda(n, drv->MemAlloc(&n->buf[b], n->buf_bytes), "cuMemAlloc (activations)");
    if (s == CONVGEN_SUCCESS && n->workspace_bytes)
        s = cg_net_cuda(n, drv->MemAlloc(&n->workspace, n->workspace_bytes), "cuMemAlloc (workspace)");
    for (int j = 0; j < 2 && s == CONVGEN_SUCCESS; ++j) {
        pipe_slot *p = &n->slot[j];
        bool host = n->mode == CONVGEN_NET_HOST;
        s = cg_net_cuda(n, drv->MemAllocHost((void **)&p->host_in, host ? n->stage_in_bytes : n->in_bytes),
                        "cuMemAllocHost (a patch's input)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemAllocHost((void **)&p->host_out, host ? n->stage_out_bytes : n->out_bytes),
                            "cuMemAllocHost (a patch's output)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemAlloc(&p->dev_in, n->in_bytes), "cuMemAlloc (a patch's input)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemAlloc(&p->dev_out, n->out_bytes), "cuMemAlloc (a patch's output)");
        CUevent *events[3] = {&p->uploaded, &p->computed, &p->downloaded};
        for (int e = 0; e < 3 && s == CONVGEN_SUCCESS; ++e)
            s = cg_net_cuda(n, drv->EventCreate(events[e], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    if (s == CONVGEN_SUCCESS && n->mode == CONVGEN_NET_HOST) /* after the slots: the pair shares their buffers */
        s = cg_net_host_allocate(n);
    if (s == CONVGEN_SUCCESS) /* non-blocking: no implicit order with the legacy default stream */
        s = cg_net_cuda(n, drv->StreamCreate(&n->up, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->StreamCreate(&n->down, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    return s;
}

convgen_status cg_net_allocate(convgen_net *n)
{
    convgen_status s = with_context(n);
    if (s == CONVGEN_SUCCESS) {
        s = allocate(n);
        without_context(n);
    }
    return s;
}

convgen_status cg_net_measure_bus(convgen_net *n)
{
    convgen_status s = with_context(n);
    if (s != CONVGEN_SUCCESS)
        return s;
    s = cg_net_host_measure(n);
    without_context(n);
    return s;
}

void cg_net_free(convgen_net *n)
{
    const cg_driver *drv = n->ctx->drv;
    if (!drv || drv->CtxPushCurrent(n->ctx->primary) != CUDA_SUCCESS)
        return;
    CUdeviceptr *all[] = {n->w, n->bias};
    for (int a = 0; a < 2; ++a)
        for (int i = 0; i < CG_NET_MAX_LAYERS; ++i)
            if (all[a][i])
                drv->MemFree(all[a][i]), all[a][i] = 0;
    for (int b = 0; b < 2; ++b)
        if (n->buf[b])
            drv->MemFree(n->buf[b]), n->buf[b] = 0;
    if (n->workspace)
        drv->MemFree(n->workspace), n->workspace = 0;
    cg_net_host_free(n);
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
        *p = (pipe_slot){0};
    }
    CUstream streams[2] = {n->up, n->down};
    for (int i = 0; i < 2; ++i)
        if (streams[i])
            drv->StreamDestroy(streams[i]);
    n->up = n->down = NULL;
    CUcontext popped;
    drv->CtxPopCurrent(&popped);
}

void convgen_net_destroy(convgen_net *n)
{
    if (!n)
        return;
    release_plans(n);
    cg_net_free(n);
    free(n);
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
    s = cg_net_cuda(n, drv->MemcpyHtoD(n->w[layer], w, (size_t)count * 4), "cuMemcpyHtoD (w)");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->MemcpyHtoD(n->bias[layer], bias, (size_t)n->net.layers[layer].k * 4), "cuMemcpyHtoD (bias)");
    /* a pageable copy may still be in flight on return, and the caller's stream need not wait
     * for the legacy one: the weights are whole before any patch reads them */
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->CtxSynchronize(), "copying the weights");
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

/* Every layer on the slot's input into its output, on `stream`: the convolutions and poolings
 * ping-pong between the two activation buffers, the last interleaving writes dev_out. With
 * `marks`, an event is recorded before each step. */
static convgen_status compute(convgen_net *n, const pipe_slot *p, convgen_stream stream, CUevent *marks)
{
    CUdeviceptr from = p->dev_in;
    int next = 0, steps = n->net.count + n->interleaves;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < steps && s == CONVGEN_SUCCESS; ++i, next ^= 1) {
        if (marks) /* profiling: an event before every step */
            s = cg_net_cuda(n, n->ctx->drv->EventRecord(marks[i], (CUstream)stream), "cuEventRecord");
        if (s != CONVGEN_SUCCESS)
            break;
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

static convgen_status compute_patch(convgen_net *n, const pipe_slot *p, convgen_stream stream, void *arg)
{
    (void)arg;
    return compute(n, p, stream, NULL);
}

static convgen_status download_patch(convgen_net *n, const pipe_slot *p, void *arg)
{
    (void)arg;
    return cg_net_cuda(n, n->ctx->drv->MemcpyDtoHAsync(p->host_out, p->dev_out, n->out_bytes, n->down),
                       "cuMemcpyDtoHAsync (a patch)");
}

/* Patch t of the volume into slot t % 2: once the slot's last patch has gone up, pack this one
 * and send it through the slot. Returns without waiting. */
static convgen_status start_patch(convgen_net *n, pipe_slot *p, const float *x, const int64_t ext[3],
                                  const int64_t origin[3], convgen_stream stream)
{
    convgen_status s = p->used ? cg_net_cuda(n, n->ctx->drv->EventSynchronize(p->uploaded), "uploading a patch")
                               : CONVGEN_SUCCESS;
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_net_pack_input(n, x, ext, origin, p->host_in);
    const slot_steps steps = {compute_patch, download_patch, NULL};
    const slot_input in = {.src = p->host_in, .width = n->in_bytes, .height = 1, .pitch = n->in_bytes};
    return cg_net_through_slot(n, p, &in, &steps, stream);
}

/* Waits for a slot's patch to come down and places it into y. */
static convgen_status finish_patch(convgen_net *n, const pipe_slot *p, float *y, const int64_t out[3],
                                   const int64_t origin[3])
{
    convgen_status s = cg_net_cuda(n, n->ctx->drv->EventSynchronize(p->downloaded), "running a patch");
    if (s == CONVGEN_SUCCESS)
        cg_net_place_output(n, p->host_out, y, out, origin);
    return s;
}

/* The volume's extents depth first (rank 2: depth 1), checked against the field of view; its
 * dense output's and the patches per dimension (one where the patch is larger: it runs past
 * the edge). */
static convgen_status volume_extents(const convgen_net *n, const int64_t in[], int64_t ext[3], int64_t out[3],
                                     int64_t tiles[3])
{
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    int skip = 3 - n->net.rank;
    for (int d = 0; d < 3; ++d) {
        ext[d] = d < skip ? 1 : in[d - skip];
        out[d] = ext[d] - fov[d] + 1;
        if (ext[d] < fov[d] || ext[d] >= ((int64_t)1 << 31))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in[%d] = %lld must be %lld..2^31 - 1: the network's field of "
                           "view, for one output", d - skip, (long long)ext[d], (long long)fov[d]);
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
    if (n->mode == CONVGEN_NET_HOST)
        s = cg_net_host_infer(n, x, ext, y, out, tiles, stream);
    /* patch t starts while patch t - 1 computes; then t - 1 is placed while t computes */
    for (int64_t t = 0; s == CONVGEN_SUCCESS && t <= count && n->mode == CONVGEN_NET_DEVICE; ++t) {
        if (t < count) {
            cg_net_patch_origin(n, t, tiles, out, origin[t % 2]);
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

/* ---- profile ---- */

/* Device mode: each step of one patch between events, on slot 0's input, `runs` times; the
 * median milliseconds of each step into ms[0 .. steps). */
static convgen_status profile_steps(convgen_net *n, int runs, double *ms)
{
    const cg_driver *drv = n->ctx->drv;
    int steps = n->net.count + n->interleaves;
    CUevent marks[2 * CG_NET_MAX_LAYERS + 1] = {0};
    double t[2 * CG_NET_MAX_LAYERS][CG_NET_PROFILE_RUNS];
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i <= steps && s == CONVGEN_SUCCESS; ++i)
        s = cg_net_cuda(n, drv->EventCreate(&marks[i], CU_EVENT_DEFAULT), "cuEventCreate");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->CtxSynchronize(), "cuCtxSynchronize");
    for (int r = 0; r <= runs && s == CONVGEN_SUCCESS; ++r) { /* run 0 warms up */
        s = compute(n, &n->slot[0], NULL, marks);
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->EventRecord(marks[steps], NULL), "cuEventRecord");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->EventSynchronize(marks[steps]), "profiling a patch");
        for (int i = 0; i < steps && s == CONVGEN_SUCCESS && r > 0; ++i) {
            float e = 0;
            s = cg_net_cuda(n, drv->EventElapsedTime(&e, marks[i], marks[i + 1]), "cuEventElapsedTime");
            t[i][r - 1] = e;
        }
    }
    for (int i = 0; i < steps && s == CONVGEN_SUCCESS; ++i) {
        ms[i] = cg_median(t[i], runs);
    }
    for (int i = 0; i <= steps; ++i)
        if (marks[i])
            drv->EventDestroy(marks[i]);
    return s;
}

/* The host's milliseconds packing a patch's input and placing its output (median of
 * CG_NET_PROFILE_RUNS, after one that touches the pages), on a volume the patch's size; false
 * where there is no host memory for it. */
static bool profile_host(const convgen_net *n, double *pack_ms, double *place_ms)
{
    const cg_net_patch *p = &n->patch;
    const int64_t zero[3] = {0, 0, 0};
    float *x = malloc((size_t)n->in_bytes), *y = malloc((size_t)n->out_bytes);
    double t[2][CG_NET_PROFILE_RUNS];
    if (x && y) {
        memset(x, 0, n->in_bytes);
        for (int r = 0; r <= CG_NET_PROFILE_RUNS; ++r) {
            double start = cg_now_s();
            cg_net_pack_input(n, x, p->in, zero, n->slot[0].host_in);
            double mid = cg_now_s();
            cg_net_place_output(n, n->slot[0].host_out, y, p->out, zero);
            if (r > 0)
                t[0][r - 1] = (mid - start) * 1e3, t[1][r - 1] = (cg_now_s() - mid) * 1e3;
        }
        *pack_ms = cg_median(t[0], CG_NET_PROFILE_RUNS), *place_ms = cg_median(t[1], CG_NET_PROFILE_RUNS);
    }
    bool measured = x && y;
    free(x), free(y);
    return measured;
}

convgen_status convgen_net_profile(convgen_net *n, char **text)
{
    if (!n || !text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", n ? "text" : "net");
    convgen_status s = with_context(n);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (n->mode == CONVGEN_NET_HOST) {
        cg_buf b = {0};
        s = cg_net_host_profile(n, CG_NET_PROFILE_RUNS, &b);
        without_context(n);
        if (s == CONVGEN_SUCCESS && !b.data)
            s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the profile");
        if (s != CONVGEN_SUCCESS)
            return free(b.data), s;
        *text = b.data;
        return CONVGEN_SUCCESS;
    }
    double ms[2 * CG_NET_MAX_LAYERS] = {0};
    s = profile_steps(n, CG_NET_PROFILE_RUNS, ms);
    without_context(n);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_buf b = {0};
    double total = 0;
    cg_buf_printf(&b, "one patch, each step timed alone (median of %d runs):\n", CG_NET_PROFILE_RUNS);
    for (int i = 0; i < n->net.count + n->interleaves; ++i) {
        char how[64] = "max-pooling fragments";
        if (i >= n->net.count)
            snprintf(how, sizeof how, "interleaving");
        else if (n->net.layers[i].kind == CG_NET_CONV)
            cg_net_layer_ms(n->layer[i], how, sizeof how);
        cg_buf_printf(&b, "  %2d %-4s %9.3f ms  %s\n", i, i >= n->net.count ? "" : n->net.layers[i].kind == CG_NET_CONV ?
                      "conv" : "pool", ms[i], how);
        total += ms[i];
    }
    const cg_net_patch *p = &n->patch;
    cg_buf_printf(&b, "total %.3f ms a patch: %.4g output voxels/s (its dense outputs; overlaps across patches not "
                  "counted)\n", total, (double)(p->out[0] * p->out[1] * p->out[2]) / (total * 1e-3));
    double pack_ms, place_ms;
    if (profile_host(n, &pack_ms, &place_ms))
        cg_buf_printf(&b, "host: %.3f ms packing a patch's input, %.3f ms placing its output (beside other patches' "
                      "layers; a volume's first and last patch alone)\n", pack_ms, place_ms);
    if (!b.data)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the profile");
    *text = b.data;
    return CONVGEN_SUCCESS;
}

/* ---- explain ---- */

/* How the patch was chosen, and what the candidates timed took. */
static void explain_choice(const convgen_net *n, cg_buf *b)
{
    bool whole = true;
    for (int d = 3 - n->net.rank; d < 3; ++d)
        whole &= n->volume[d] > 0;
    const char *unit = whole ? "s for the volume" : "s a million output voxels";
    const cg_net_candidate *c = n->candidate;
    switch (n->patch_by) {
    case CG_NET_PATCH_GIVEN:
        cg_buf_puts(b, "patch: as given\n");
        break;
    case CG_NET_PATCH_MODELED:
        if (n->tried) {
            cg_buf_printf(b, "patch: the cost model's best; none of the %d timed ran:\n", n->tried);
            for (int i = 0; i < n->tried; ++i)
                cg_buf_printf(b, "  fragments %lldx%lldx%lld, %s mode: %s\n", (long long)c[i].m[0], (long long)c[i].m[1],
                              (long long)c[i].m[2], c[i].mode == CONVGEN_NET_HOST ? "host" : "device", c[i].why);
        } else {
            cg_buf_printf(b, "patch: the cost model's best%s\n", n->effort == CONVGEN_EFFORT_ESTIMATE || n->ctx->offline
                          ? "" : " (no other within its margin to time)");
        }
        break;
    case CG_NET_PATCH_WISDOM:
        cg_buf_printf(b, "patch: from wisdom, measured before (%.4g %s)\n", c[0].measured, unit);
        break;
    case CG_NET_PATCH_MEASURED:
        cg_buf_printf(b, "patch: the fastest of the cost model's best %d, each run over a volume of one patch and of "
                      "two:\n", n->tried);
        for (int i = 0; i < n->tried; ++i) {
            cg_buf_printf(b, "  fragments %lldx%lldx%lld, %s mode: ", (long long)c[i].m[0], (long long)c[i].m[1],
                          (long long)c[i].m[2], c[i].mode == CONVGEN_NET_HOST ? "host" : "device");
            if (c[i].measured >= 0)
                cg_buf_printf(b, "%.4g %s measured, %.4g modeled\n", c[i].measured, unit, c[i].modeled);
            else
                cg_buf_printf(b, "did not run: %s\n", c[i].why);
        }
        break;
    }
}

/* Layer i's plan: device mode's, or a full chunk's of the host mode's segment that holds it. */
static const convgen_plan *layer_plan(const convgen_net *n, int i)
{
    for (int j = 0; j < n->segments; ++j)
        if (i >= n->seg[j].first && i < n->seg[j].end)
            return n->chunk_plan[j][0][i - n->seg[j].first];
    return n->layer[i];
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
    explain_choice(n, &b);
    double total_ms = 0;
    bool timed = true;
    for (int i = 0; i < n->net.count; ++i) {
        const cg_net_layer *l = &n->net.layers[i];
        const cg_net_tensor *t = &p->shape[i + 1];
        char how[64] = "max-pooling fragments";
        if (l->kind == CG_NET_CONV) {
            double ms = cg_net_layer_ms(layer_plan(n, i), how, sizeof how);
            timed &= ms >= 0;
            total_ms += ms > 0 ? ms : 0;
        }
        cg_buf_printf(&b, "  %2d %-4s %dx%dx%d -> %lld x %lld x %lldx%lldx%lld, %.1f MiB  %s%s\n", i,
                      l->kind == CG_NET_CONV ? "conv" : "pool", l->size[0], l->size[1], l->size[2], (long long)t->batch,
                      (long long)t->c, (long long)t->ext[0], (long long)t->ext[1], (long long)t->ext[2],
                      (double)cg_net_tensor_elems(t) * 4 / 1048576.0, how,
                      l->kind == CG_NET_CONV && n->mode == CONVGEN_NET_HOST ? ", a chunk's" : "");
    }
    if (n->mode == CONVGEN_NET_HOST)
        cg_net_host_explain(n, &b);
    else if (timed && total_ms > 0)
        cg_buf_printf(&b, "predicted: %.3g ms of convolutions a patch, %.4g output voxels/s (poolings, copies and "
                      "overlaps across patches not counted)\n", total_ms,
                      (double)(p->out[0] * p->out[1] * p->out[2]) / (total_ms * 1e-3));
    cg_buf_printf(&b, "memory: 2 x %.1f MiB activations, 2 x (%.1f + %.1f) MiB %s input and output, ",
                  (double)n->buf_bytes / 1048576.0, (double)n->in_bytes / 1048576.0, (double)n->out_bytes / 1048576.0,
                  n->mode == CONVGEN_NET_HOST ? "a chunk's" : "a patch's");
    if (n->mode == CONVGEN_NET_HOST && n->segments > 1)
        cg_buf_printf(&b, "2 x (%.1f + %.1f) MiB the pair's own output and input, ", (double)n->pair_out_bytes / 1048576.0,
                      (double)n->pair_in_bytes / 1048576.0);
    cg_buf_printf(&b, "%.1f MiB weights, %.1f MiB workspace (limit %.1f MiB)\n", (double)n->weight_bytes / 1048576.0,
                  (double)n->workspace_bytes / 1048576.0, (double)n->memory_limit / 1048576.0);
    if (!b.data)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the explanation");
    *text = b.data;
    return CONVGEN_SUCCESS;
}
