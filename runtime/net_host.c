/* The network executor's host mode (ZNNi section VII-A, "GPU + host RAM"): a patch too large
 * for the device keeps its tensors in pinned host memory, and the network runs in segments:
 *
 *   for each patch (its input packed, and the previous one's output placed, by a host thread
 *   meanwhile, through the two slots' staging buffers):
 *   for each segment (consecutive layers whose chunk fits the device):
 *       for each chunk (nb batch entries, or one entry's kc output maps or dq depth rows), two
 *       slots in flight:
 *           up:      the chunk's input rows, one copy (stream `up`)
 *           compute: the segment's layers on it, ping-ponging two buffers (the caller's stream)
 *           down:    its output rows, one copy per fragment the poolings made (stream `down`)
 *
 * Each segment is as long as one batch entry allows: every layer kept on the device saves a
 * round trip of its tensor over the bus, and after a pooling the fragments are independent
 * entries, so the network's tail usually runs whole per chunk. A layer whose one entry does not
 * fit is cut by output maps (its weights and bias are slices: w + k0 C kernel) or by depth rows
 * (each chunk reads the rows of its input that its rows see: overlap-save in depth), whichever
 * the cost model prefers; the inputs are never cut by channel, which would need the partial
 * sums added outside the convolution and the epilogue after them. Where the interleavings do
 * not fit the last segment's one chunk, the host places the final fragments. How the network
 * is cut, and what a patch costs, is planned by the generator (cg_net_segments,
 * generator/net/net_segments.c); here are the plans, the memory and the run. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_exec.h"

cg_net_budget cg_net_budget_of(const convgen_net *n)
{
    cg_net_budget b = {.host_bytes = (double)n->host_limit, .bus_up = n->bw_up, .bus_down = n->bw_down,
                       .sm_count = n->ctx->sm_count};
    if (n->weight_bytes < n->memory_limit / 2) /* else no room: 0 */
        b.device_bytes = (double)(n->memory_limit / 2 - n->weight_bytes);
    b.device_limit = (double)n->memory_limit - (double)n->weight_bytes;
    return b;
}

double cg_net_host_segments(const convgen_net *n, const cg_net_patch *p, cg_net_segment *seg, int *segments)
{
    cg_net_budget b = cg_net_budget_of(n);
    return cg_net_segments(&n->net, p, &b, seg, segments);
}

/* ---- plans ---- */

/* Segment s's plans for a chunk of nb entries (kc maps, dq rows of its last tensor): its
 * layers', the interleavings are the device mode's (the whole final tensor). */
static convgen_status plan_chunk(convgen_net *n, const cg_net_segment *s, int64_t nb, int64_t kc, int64_t dq,
                                 size_t workspace_limit, convgen_plan **plan)
{
    const cg_net_patch *p = &n->patch;
    int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1];
    if (dq)
        cg_net_slab_rows(&n->net, s, 0, dq, from, rows);
    convgen_status st = CONVGEN_SUCCESS;
    for (int i = s->first; i < s->end && st == CONVGEN_SUCCESS; ++i) {
        cg_net_tensor t = p->shape[i];
        if (dq)
            t.ext[0] = rows[i];
        int64_t batch = t.batch / s->batch * nb;
        if (n->net.layers[i].kind == CG_NET_CONV)
            st = cg_net_plan_conv(n, i, batch, kc ? kc : n->net.layers[i].k, &t, workspace_limit, &plan[i - s->first]);
        else
            st = cg_net_plan_pool(n, i, CONVGEN_POOL_FRAGMENTS, batch, kc ? kc : t.c, t.ext, &plan[i - s->first]);
    }
    return st;
}

void cg_net_host_release(convgen_net *n)
{
    for (int j = 0; j < n->segments; ++j)
        for (int t = 0; t < 2; ++t)
            for (int i = 0; i < CG_NET_MAX_LAYERS; ++i) {
                convgen_plan_destroy(n->chunk_plan[j][t][i]);
                n->chunk_plan[j][t][i] = NULL;
            }
}

convgen_status cg_net_host_plan(convgen_net *n)
{
    double in = 0, out = 0, mid = 0;
    for (int j = 0; j < n->segments; ++j) {
        in = fmax(in, n->seg[j].in_bytes), out = fmax(out, n->seg[j].out_bytes), mid = fmax(mid, n->seg[j].mid_bytes);
    }
    n->in_bytes = (size_t)in, n->out_bytes = (size_t)out, n->buf_bytes = (size_t)mid;
    bool pair = n->segments > 1; /* the pair's own buffers */
    n->pair_out_bytes = pair ? (size_t)n->seg[n->segments - 1].out_bytes : 0;
    n->pair_in_bytes = pair ? (size_t)n->seg[0].in_bytes : 0;
    n->tensor_bytes = (size_t)cg_net_boundary_elems(&n->patch, n->seg, n->segments) * sizeof(float);
    n->stage_in_bytes = (size_t)cg_net_tensor_elems(&n->patch.shape[0]) * sizeof(float);
    n->stage_out_bytes = (size_t)cg_net_stage_out_elems(&n->net, &n->patch) * sizeof(float);
    size_t fixed = (size_t)cg_net_chunk_buffer_bytes(n->seg, n->segments) + n->weight_bytes;
    if (fixed >= n->memory_limit)
        return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes: the host mode's chunks need %zu",
                       n->memory_limit, fixed);
    convgen_status s = CONVGEN_SUCCESS;
    for (int j = 0; j < n->segments && s == CONVGEN_SUCCESS; ++j) {
        cg_net_segment *g = &n->seg[j];
        bool cut = g->kc || g->dq;
        int64_t rest = cg_net_chunk_total(&n->patch, g) % cg_net_chunk_size(g);
        s = plan_chunk(n, g, cut ? 1 : g->nb, g->kc, g->dq, n->memory_limit - fixed, n->chunk_plan[j][0]);
        if (s == CONVGEN_SUCCESS && rest) /* the last chunk's */
            s = plan_chunk(n, g, cut ? 1 : rest, g->kc ? rest : 0, g->dq ? rest : 0, n->memory_limit - fixed,
                           n->chunk_plan[j][1]);
    }
    return s;
}

/* ---- memory ---- */

convgen_status cg_net_host_allocate(convgen_net *n)
{
    const cg_driver *drv = n->ctx->drv;
    convgen_status s = CONVGEN_SUCCESS;
    for (int t = 0; t < 2 && s == CONVGEN_SUCCESS && n->tensor_bytes; ++t) /* none for one segment */
        s = cg_net_cuda(n, drv->MemAllocHost((void **)&n->tensor[t], n->tensor_bytes), "cuMemAllocHost (a patch's tensors)");
    for (int k = 0; k < 2 && s == CONVGEN_SUCCESS && n->segments > 1; ++k) {
        pipe_slot *last = &n->pair[0][k], *first = &n->pair[1][k];
        last->dev_in = n->slot[k].dev_in, first->dev_out = n->slot[k].dev_out; /* the slots', shared */
        s = cg_net_cuda(n, drv->MemAlloc(&last->dev_out, n->pair_out_bytes), "cuMemAlloc (the pair's output)");
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->MemAlloc(&first->dev_in, n->pair_in_bytes), "cuMemAlloc (the pair's input)");
        for (int r = 0; r < 2; ++r) {
            CUevent *events[3] = {&n->pair[r][k].uploaded, &n->pair[r][k].computed, &n->pair[r][k].downloaded};
            for (int e = 0; e < 3 && s == CONVGEN_SUCCESS; ++e)
                s = cg_net_cuda(n, drv->EventCreate(events[e], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        }
    }
    return s;
}

void cg_net_host_free(convgen_net *n)
{
    const cg_driver *drv = n->ctx->drv;
    for (int t = 0; t < 2; ++t)
        if (n->tensor[t])
            drv->MemFreeHost(n->tensor[t]);
    for (int k = 0; k < 2; ++k) {
        if (n->pair[0][k].dev_out) /* the others are the slots' */
            drv->MemFree(n->pair[0][k].dev_out);
        if (n->pair[1][k].dev_in)
            drv->MemFree(n->pair[1][k].dev_in);
        for (int r = 0; r < 2; ++r) {
            CUevent events[3] = {n->pair[r][k].uploaded, n->pair[r][k].computed, n->pair[r][k].downloaded};
            for (int e = 0; e < 3; ++e)
                if (events[e])
                    drv->EventDestroy(events[e]);
        }
    }
    n->tensor[0] = n->tensor[1] = NULL;
    memset(n->pair, 0, sizeof n->pair);
}

convgen_status cg_net_host_measure(convgen_net *n)
{
    const cg_driver *drv = n->ctx->drv;
    const size_t bytes = (size_t)64 << 20;
    void *host = NULL;
    CUdeviceptr dev = 0;
    convgen_status s = cg_net_cuda(n, drv->MemAllocHost(&host, bytes), "cuMemAllocHost (measuring the bus)");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->MemAlloc(&dev, bytes), "cuMemAlloc (measuring the bus)");
    double best[2] = {INFINITY, INFINITY};
    for (int r = 0; r < 4 && s == CONVGEN_SUCCESS; ++r) /* the first of each is a warm-up */
        for (int d = 0; d < 2 && s == CONVGEN_SUCCESS; ++d) {
            double t0 = cg_now_s();
            s = cg_net_cuda(n, d ? drv->MemcpyDtoHAsync(host, dev, bytes, NULL) : drv->MemcpyHtoDAsync(dev, host, bytes, NULL),
                            "measuring the bus");
            if (s == CONVGEN_SUCCESS)
                s = cg_net_cuda(n, drv->CtxSynchronize(), "measuring the bus");
            if (r)
                best[d] = fmin(best[d], cg_now_s() - t0);
        }
    if (s == CONVGEN_SUCCESS)
        n->bw_up = (double)bytes / best[0], n->bw_down = (double)bytes / best[1];
    if (host)
        drv->MemFreeHost(host);
    if (dev)
        drv->MemFree(dev);
    return s;
}

/* ---- running a patch ---- */

/* Chunk j of segment g: its first entry and entries, its first map and maps, its first depth
 * row and rows (of the output). */
typedef struct chunk {
    int64_t b0, bn, k0, kn, q0, qn;
    bool last; /* the last chunk's shape (its own plans) */
} chunk;

static chunk chunk_of(const convgen_net *n, const cg_net_segment *g, int64_t j)
{
    const cg_net_tensor *t = &n->patch.shape[g->end];
    int64_t maps = t->c, depth = t->ext[0];
    if (g->dq) {
        int64_t slabs = (depth + g->dq - 1) / g->dq, q0 = j % slabs * g->dq;
        int64_t qn = depth - q0 < g->dq ? depth - q0 : g->dq;
        return (chunk){.b0 = j / slabs, .bn = 1, .k0 = 0, .kn = maps, .q0 = q0, .qn = qn, .last = qn != g->dq};
    }
    if (g->kc) {
        int64_t slices = (maps + g->kc - 1) / g->kc, k0 = j % slices * g->kc;
        int64_t kn = maps - k0 < g->kc ? maps - k0 : g->kc;
        return (chunk){.b0 = j / slices, .bn = 1, .k0 = k0, .kn = kn, .qn = depth, .last = kn != g->kc};
    }
    int64_t b0 = j * g->nb, bn = g->batch - b0 < g->nb ? g->batch - b0 : g->nb;
    return (chunk){.b0 = b0, .bn = bn, .k0 = 0, .kn = maps, .qn = depth, .last = bn != g->nb};
}

static int64_t ext_elems(const cg_net_tensor *t) { return t->ext[0] * t->ext[1] * t->ext[2]; }

/* The chunk's layers (its shape's `plans`) on the slot's input into its output, on `stream`. */
static convgen_status compute_chunk(convgen_net *n, const cg_net_segment *g, convgen_plan *const *plans, const chunk *c,
                                    const pipe_slot *p, convgen_stream stream)
{
    int steps = g->end - g->first + (g->interleave ? n->interleaves : 0);
    CUdeviceptr from = p->dev_in;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < steps && s == CONVGEN_SUCCESS; ++i) {
        float *y = (float *)(i == steps - 1 ? p->dev_out : n->buf[i % 2]);
        int layer = g->first + i;
        if (layer >= g->end) {
            s = convgen_execute_pool(n->interleave[layer - g->end], (const float *)from, y, stream);
        } else if (n->net.layers[layer].kind == CG_NET_CONV) {
            int64_t per_map = cg_net_weight_count(&n->net, layer) / n->net.layers[layer].k;
            const float *w = (const float *)n->w[layer] + c->k0 * per_map, *b = (const float *)n->bias[layer] + c->k0;
            s = convgen_execute_bias(plans[i], (const float *)from, w, b, y, (void *)n->workspace,
                                     n->workspace_bytes, stream);
        } else {
            s = convgen_execute_pool(plans[i], (const float *)from, y, stream);
        }
        from = (CUdeviceptr)y;
    }
    return s;
}

/* The chunk's output rows into the host tensor: per fragment f, its entries' maps (each its
 * depth rows q0..) to rows f N + b. */
static convgen_status download(convgen_net *n, const cg_net_segment *g, const chunk *c, const pipe_slot *p, float *dst)
{
    if (g->interleave)
        return cg_net_copy_rows(n, false, dst, 0, p->dev_out, 0, (size_t)cg_net_dense_elems(&n->net, &n->patch) * 4,
                                1, n->down);
    const cg_net_tensor *t = &n->patch.shape[g->end];
    int64_t e = ext_elems(t), plane = t->ext[1] * t->ext[2], rows = c->bn * c->kn, width = c->qn * plane;
    convgen_status s = CONVGEN_SUCCESS;
    for (int64_t f = 0; f < g->fragments && s == CONVGEN_SUCCESS; ++f)
        s = cg_net_copy_rows(n, false, dst + ((f * g->batch + c->b0) * t->c + c->k0) * e + c->q0 * plane, (size_t)e * 4,
                             p->dev_out + (CUdeviceptr)(f * rows * width * 4), (size_t)width * 4, (size_t)width * 4,
                             (size_t)rows, n->down);
    return s;
}

typedef struct chunk_run {
    const cg_net_segment *g;
    convgen_plan *const *plans;
    chunk c;
    float *dst;
} chunk_run;

static convgen_status compute_step(convgen_net *n, const pipe_slot *p, convgen_stream stream, void *arg)
{
    const chunk_run *r = arg;
    return compute_chunk(n, r->g, r->plans, &r->c, p, stream);
}

static convgen_status download_step(convgen_net *n, const pipe_slot *p, void *arg)
{
    const chunk_run *r = arg;
    return download(n, r->g, &r->c, p, r->dst);
}

/* Chunk j of segment `index` through `slot`: its input rows of src up, the segment's layers, its
 * output rows into dst. `prev`: the slot chunk j - 1 went through (NULL for a run's first), whose
 * input rows that this chunk reads too it keeps on the device. Returns without waiting. */
static convgen_status run_chunk(convgen_net *n, int index, int64_t j, pipe_slot *slot, const pipe_slot *prev,
                                const float *src, float *dst, convgen_stream stream)
{
    const cg_net_segment *g = &n->seg[index];
    chunk_run r = {g, NULL, chunk_of(n, g, j), dst};
    r.plans = n->chunk_plan[index][r.c.last];
    const cg_net_tensor *t = &n->patch.shape[g->first];
    int64_t e = ext_elems(t);
    slot_input in;
    if (g->dq) { /* the entry's every channel, the input rows its output rows see */
        int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1], plane = t->ext[1] * t->ext[2];
        cg_net_slab_rows(&n->net, g, r.c.q0, r.c.qn, from, rows);
        in = (slot_input){.src = src + r.c.b0 * t->c * e + from[g->first] * plane,
                          .width = (size_t)(rows[g->first] * plane) * 4, .height = (size_t)t->c, .pitch = (size_t)e * 4};
        if (prev && r.c.q0 > 0) { /* the rows chunk j - 1 of this entry read too, one from the device */
            int64_t pfrom[CG_NET_MAX_LAYERS + 1], prows[CG_NET_MAX_LAYERS + 1];
            cg_net_slab_rows(&n->net, g, r.c.q0 - g->dq, g->dq, pfrom, prows);
            int64_t kept = pfrom[g->first] + prows[g->first] - from[g->first];
            if (kept > 0 && kept <= rows[g->first]) {
                in.kept = (size_t)(kept * plane) * 4, in.kept_pitch = (size_t)(prows[g->first] * plane) * 4;
                in.kept_from = prev->dev_in + (CUdeviceptr)((prows[g->first] - kept) * plane * 4);
            }
        }
    } else {
        bool whole_entry = !g->kc || n->net.layers[g->first].kind == CG_NET_CONV;
        int64_t at = whole_entry ? r.c.b0 * t->c * e : (r.c.b0 * t->c + r.c.k0) * e;
        int64_t count = whole_entry ? r.c.bn * t->c * e : r.c.kn * e;
        in = (slot_input){.src = src + at, .width = (size_t)count * 4, .height = 1, .pitch = (size_t)count * 4};
    }
    const slot_steps steps = {compute_step, download_step, &r};
    return cg_net_through_slot(n, slot, &in, &steps, stream);
}

/* Whether the host undoes the poolings (the interleavings did not fit the last segment's one
 * chunk): the last segment's output is the final fragments. */
static bool host_places_fragments(const convgen_net *n)
{
    return n->interleaves > 0 && !n->seg[n->segments - 1].interleave; /* one interleaving a pooling */
}

/* Segment j of a patch (an item of the pipeline): the rows it reads and writes, its chunks so far. */
typedef struct segment_run {
    int j;
    const float *src;
    float *dst;
    int64_t done;
} segment_run;

/* Segment j of patch t: its input and output. Segment 0 reads the patch's staged input, the last
 * writes its staged output, the rest ping-pong the two host tensors; the patch's phase flips
 * that order where needed for the first segment of patch t + 1 to write the tensor the last
 * segment of patch t does not read (they run together). */
static segment_run segment_of(const convgen_net *n, int64_t t, int j)
{
    int phase = (int)(t * (n->segments - 1) % 2), last = n->segments - 1;
    return (segment_run){.j = j,
                         .src = j ? n->tensor[(j + phase) % 2] : n->slot[t % 2].host_in,
                         .dst = j == last ? n->slot[t % 2].host_out : n->tensor[(j + 1 + phase) % 2]};
}

/* The chunks of `count` segments (one, or a patch's last and the next one's first, which read
 * nothing the other writes), the one least far along first: one alone alternates the two slots,
 * a pair each its two of n->pair. Their input all down before the first copy up; *last: the
 * slot the last chunk went through (NULL before any). */
static convgen_status run_together(convgen_net *n, segment_run *run, int count, pipe_slot **last, convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    convgen_status s = CONVGEN_SUCCESS;
    if (*last)
        s = cg_net_cuda(n, drv->StreamWaitEvent(n->up, (*last)->downloaded, 0), "cuStreamWaitEvent");
    for (int64_t issued = 0;; ++issued) {
        int next = -1;
        for (int i = 0; i < count; ++i) {
            const cg_net_segment *g = &n->seg[run[i].j];
            if (run[i].done < g->chunks &&
                (next < 0 || (double)run[i].done / (double)g->chunks <
                                 (double)run[next].done / (double)n->seg[run[next].j].chunks))
                next = i;
        }
        if (next < 0 || s != CONVGEN_SUCCESS)
            return s;
        segment_run *r = &run[next];
        /* each run's chunks alternate two slots: chunk j - 1's is the other */
        pipe_slot *slot = count == 1 ? &n->slot[issued % 2] : &n->pair[next][r->done % 2];
        pipe_slot *prev = !r->done ? NULL : count == 1 ? &n->slot[(issued + 1) % 2] : &n->pair[next][(r->done + 1) % 2];
        *last = slot;
        s = run_chunk(n, r->j, r->done++, slot, prev, r->src, r->dst, stream);
    }
}

/* The host's share of the pipeline: a patch's output placed into y, the next one's input packed. */
typedef struct host_work {
    const convgen_net *n;
    const float *x, *placed;
    const int64_t *ext, *out;
    float *y, *packed;
    int64_t place_at[3], pack_at[3];
    convgen_status status;
} host_work;

static void *do_host_work(void *arg)
{
    host_work *w = arg;
    w->status = CONVGEN_SUCCESS;
    if (w->placed && host_places_fragments(w->n))
        w->status = cg_net_place_fragments(&w->n->net, &w->n->patch, w->placed, w->y, w->out, w->place_at);
    else if (w->placed)
        cg_net_place_output(w->n, w->placed, w->y, w->out, w->place_at);
    if (w->packed)
        cg_net_pack_input(w->n, w->x, w->ext, w->pack_at, w->packed);
    return NULL;
}

convgen_status cg_net_host_infer(convgen_net *n, const float *x, const int64_t ext[3], float *y, const int64_t out[3],
                                 const int64_t tiles[3], convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    int64_t count = tiles[0] * tiles[1] * tiles[2], at[3];
    pipe_slot *last = NULL;
    /* Two patches in flight where there are two segments or more: step t runs the last segment
     * of patch t - 1 together with the first of patch t (the one mostly computing, the other
     * mostly copying), then patch t's segments between. Meanwhile a host thread places the
     * patch done a step before and packs the next one. */
    int late = n->segments > 1;
    cg_net_patch_origin(n, 0, tiles, out, at);
    cg_net_pack_input(n, x, ext, at, n->slot[0].host_in);
    convgen_status s = CONVGEN_SUCCESS;
    for (int64_t t = 0; t < count + late && s == CONVGEN_SUCCESS; ++t) {
        host_work w = {.n = n, .x = x, .ext = ext, .out = out, .y = y};
        int64_t placed = t - 1 - late; /* done in step t - 1 */
        if (placed >= 0) {
            w.placed = n->slot[placed % 2].host_out;
            cg_net_patch_origin(n, placed, tiles, out, w.place_at);
        }
        if (t + 1 < count) {
            w.packed = n->slot[(t + 1) % 2].host_in;
            cg_net_patch_origin(n, t + 1, tiles, out, w.pack_at);
        }
        pthread_t thread;
        bool apart = pthread_create(&thread, NULL, do_host_work, &w) == 0; /* else in turn, below */
        segment_run run[2];
        int together = 0;
        if (late && t > 0)
            run[together++] = segment_of(n, t - 1, n->segments - 1);
        if (t < count)
            run[together++] = segment_of(n, t, 0);
        s = run_together(n, run, together, &last, stream);
        for (int j = 1; j < n->segments - 1 && t < count && s == CONVGEN_SUCCESS; ++j) {
            segment_run one = segment_of(n, t, j);
            s = run_together(n, &one, 1, &last, stream);
        }
        if (s == CONVGEN_SUCCESS)
            s = cg_net_cuda(n, drv->EventSynchronize(last->downloaded), "running a patch in host mode");
        if (apart)
            pthread_join(thread, NULL);
        else
            do_host_work(&w);
        if (s == CONVGEN_SUCCESS && w.status != CONVGEN_SUCCESS) /* its message was the thread's own */
            s = cg_fail(w.status, "out of host memory placing a patch's final fragments");
    }
    host_work final = {.n = n, .placed = n->slot[(count - 1) % 2].host_out, .out = out, .y = y};
    cg_net_patch_origin(n, count - 1, tiles, out, final.place_at);
    if (s == CONVGEN_SUCCESS)
        do_host_work(&final), s = final.status;
    return s;
}

/* ---- explain ---- */

/* Segment j's convolutions over all its chunks, by their plans' times (measured or estimated);
 * *timed false where some plan knows none. */
static double segment_ms(const convgen_net *n, int j, bool *timed)
{
    const cg_net_segment *g = &n->seg[j];
    double ms = 0;
    bool tail = n->chunk_plan[j][1][0] != NULL; /* the last chunk runs plans of its own */
    /* the last of each entry's cuts where cut, else the last of all */
    int64_t lasts = tail ? (g->kc || g->dq ? g->batch : 1) : 0;
    for (int i = g->first; i < g->end; ++i) {
        char how[64];
        if (n->net.layers[i].kind != CG_NET_CONV)
            continue;
        double full = cg_net_layer_ms(n->chunk_plan[j][0][i - g->first], how, sizeof how);
        double last = tail ? cg_net_layer_ms(n->chunk_plan[j][1][i - g->first], how, sizeof how) : full;
        *timed &= full >= 0 && last >= 0;
        ms += fmax(full, 0) * (double)(g->chunks - lasts) + fmax(last, 0) * (double)lasts;
    }
    return ms;
}

void cg_net_host_explain(const convgen_net *n, cg_buf *b)
{
    cg_buf_printf(b, "host mode: the patch's tensors in pinned host memory (2 x %.1f MiB, and 2 x (%.1f + %.1f) MiB "
                  "its input and output staged), bus %.1f GB/s up, %.1f GB/s down\n", (double)n->tensor_bytes / 1048576.0,
                  (double)n->stage_in_bytes / 1048576.0, (double)n->stage_out_bytes / 1048576.0, n->bw_up * 1e-9,
                  n->bw_down * 1e-9);
    double work[CG_NET_MAX_LAYERS + 1], up[CG_NET_MAX_LAYERS + 1], down[CG_NET_MAX_LAYERS + 1];
    int64_t chunks[CG_NET_MAX_LAYERS + 1];
    bool timed = true;
    for (int j = 0; j < n->segments; ++j) {
        const cg_net_segment *g = &n->seg[j];
        double ms = segment_ms(n, j, &timed);
        char what[96];
        if (g->end - g->first == 1)
            snprintf(what, sizeof what, "layer %d%s", g->first, g->interleave ? " and the interleavings" : "");
        else
            snprintf(what, sizeof what, "layers %d-%d%s", g->first, g->end - 1, g->interleave ? " and the interleavings" : "");
        char size[64];
        if (g->dq)
            snprintf(size, sizeof size, "%lld depth rows of one entry", (long long)g->dq);
        else if (g->kc)
            snprintf(size, sizeof size, "%lld maps of one entry", (long long)g->kc);
        else
            snprintf(size, sizeof size, "%lld of %lld entries", (long long)g->nb, (long long)g->batch);
        work[j] = ms * 1e-3, up[j] = g->up / n->bw_up, down[j] = g->down / n->bw_down, chunks[j] = g->chunks;
        cg_buf_printf(b, "  segment %d: %s, %lld chunks of %s; %.1f MiB up (%.3g ms), %.1f MiB down (%.3g ms), "
                      "convolutions %.3g ms%s\n", j, what, (long long)g->chunks, size, g->up / 1048576.0, up[j] * 1e3,
                      g->down / 1048576.0, down[j] * 1e3, ms,
                      n->segments > 1 && j == n->segments - 1 ? " (beside the next patch's segment 0)" : "");
    }
    double total = 1e3 * fmax(cg_net_patch_seconds(n->segments, work, up, down, chunks),
                              cg_net_host_work_seconds(&n->net, &n->patch)); /* ms */
    if (host_places_fragments(n))
        cg_buf_printf(b, "  the interleavings: by the host, from the final fragments into the dense output\n");
    const cg_net_patch *p = &n->patch;
    if (timed && total > 0)
        cg_buf_printf(b, "predicted: %.3g ms a patch (each segment's convolutions, copies up and copies down "
                      "overlapping but for one chunk's; the last segment and the next patch's first together; the "
                      "host's packing and placing beside them), %.4g output voxels/s\n", total,
                      (double)(p->out[0] * p->out[1] * p->out[2]) / (total * 1e-3));
}

/* ---- profile ---- */

/* The wall-clock milliseconds of `count` segments run together through the pipeline, from the
 * first copy up to the last copy down. */
static convgen_status time_segments(convgen_net *n, segment_run *run, int count, double *ms)
{
    pipe_slot *last = NULL;
    double t0 = cg_now_s();
    convgen_status s = run_together(n, run, count, &last, NULL);
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, n->ctx->drv->EventSynchronize(last->downloaded), "profiling a segment");
    *ms = (cg_now_s() - t0) * 1e3;
    return s;
}

convgen_status cg_net_host_profile(convgen_net *n, int runs, cg_buf *b)
{
    int last = n->segments - 1, rows = n->segments + (last > 0);
    double t[CG_NET_MAX_LAYERS + 2][CG_NET_PROFILE_RUNS];
    convgen_status s = cg_net_cuda(n, n->ctx->drv->CtxSynchronize(), "cuCtxSynchronize");
    for (int r = 0; r <= runs && s == CONVGEN_SUCCESS; ++r) /* run 0 warms up */
        for (int j = 0; j < rows && s == CONVGEN_SUCCESS; ++j) {
            /* the pair: patch 0's last segment beside patch 1's first, as cg_net_host_infer runs them */
            segment_run run[2] = {segment_of(n, 0, j < n->segments ? j : last), segment_of(n, 1, 0)};
            double ms = 0;
            s = time_segments(n, run, j < n->segments ? 1 : 2, &ms);
            if (r > 0)
                t[j][r - 1] = ms;
        }
    if (s != CONVGEN_SUCCESS) { /* leave nothing in flight behind an error */
        n->ctx->drv->CtxSynchronize();
        return s;
    }
    cg_buf_printf(b, "one patch in host mode, each segment timed alone through the pipeline (wall clock, median of "
                  "%d runs), beside the cost model's (the slowest of its convolutions, copies up and copies down, "
                  "and a chunk's share of the other two):\n", runs);
    double total = 0, modeled_total = 0, work[2], up[2], down[2];
    int64_t chunks[2];
    for (int j = 0; j < rows; ++j) {
        bool timed = true, pair = j == n->segments;
        int at[2] = {pair ? last : j, 0};
        for (int k = 0; k < 1 + pair; ++k) {
            const cg_net_segment *g = &n->seg[at[k]];
            work[k] = segment_ms(n, at[k], &timed), chunks[k] = g->chunks;
            up[k] = g->up / n->bw_up * 1e3, down[k] = g->down / n->bw_down * 1e3;
        }
        if (pair)
            work[0] += work[1], up[0] += up[1], down[0] += down[1], chunks[0] += chunks[1];
        double modeled = cg_net_pipeline_seconds(work[0], up[0], down[0], chunks[0]);
        const char *bound = work[0] >= fmax(up[0], down[0]) ? "convolutions" : up[0] >= down[0] ? "copies up"
                                                                                               : "copies down";
        double ms = cg_median(t[j], runs);
        if (pair)
            cg_buf_printf(b, "  segments %d and 0 (the next patch's) together: %9.3f ms, modeled %.3g (%s)\n", last, ms,
                          modeled, bound);
        else
            cg_buf_printf(b, "  segment %d: %9.3f ms, modeled %.3g%s (%s)\n", j, ms, modeled, timed ? "" : "?", bound);
        if (last == 0 || pair || (j > 0 && j < last))
            total += ms, modeled_total += modeled;
    }
    const cg_net_patch *p = &n->patch;
    cg_buf_printf(b, "a patch, two in flight: %.3f ms (modeled %.3g), %.4g output voxels/s (the host's packing and "
                  "placing beside it not counted)\n", total, modeled_total,
                  (double)(p->out[0] * p->out[1] * p->out[2]) / (total * 1e-3));
    return CONVGEN_SUCCESS;
}
