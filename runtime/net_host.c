/* The network executor's host mode (ZNNi section VII-A, "GPU + host RAM"): a patch too large
 * for the device keeps its tensors in pinned host memory, and the network runs in segments:
 *
 *   for each segment (consecutive layers whose chunk fits the device):
 *       for each chunk (nb batch entries, or one entry's kc output maps), two slots in flight:
 *           up:      the chunk's input rows, one copy (stream `up`)
 *           compute: the segment's layers on it, ping-ponging two buffers (the caller's stream)
 *           down:    its output rows, one copy per fragment the poolings made (stream `down`)
 *
 * Each segment is as long as one batch entry allows: every layer kept on the device saves a
 * round trip of its tensor over the bus, and after a pooling the fragments are independent
 * entries, so the network's tail usually runs whole per chunk. A layer whose one entry does not
 * fit is cut by output maps (its weights and bias are slices: w + k0 C kernel); the inputs are
 * never cut by channel, which would need the partial sums added outside the convolution and
 * the epilogue after them. The cost of a patch is the cost model's: per segment the slowest of
 * three, its convolutions' seconds together (the network cost model's), its bytes up and its
 * bytes down (at the measured bandwidths), since the three overlap across chunks, plus one
 * chunk's share of the other two (the pipeline's filling and draining). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net_exec.h"

#define CHUNK_LAUNCH_S 20e-6 /* a chunk's copies and launches beyond its work */
#define HOST_COPY 5e9        /* bytes/s of packing a patch and placing its output, one core */

/* Tensor t's elements in a chunk of segment s: nb of layer first's N entries, and where split
 * kc of its maps (the input of a convolution that comes first keeps all of its channels).
 * Exact: every count is below 2^62 (cg_net_patch_of). */
static int64_t chunk_elems(const cg_net *net, const cg_net_patch *p, const host_segment *s, int t)
{
    const cg_net_tensor *x = &p->shape[t];
    bool sliced = s->kc && !(t == s->first && net->layers[s->first].kind == CG_NET_CONV);
    return x->batch / s->batch * s->nb * (sliced ? s->kc : x->c) * x->ext[0] * x->ext[1] * x->ext[2];
}

static int poolings(const cg_net *net)
{
    int count = 0;
    for (int i = 0; i < net->count; ++i)
        count += net->layers[i].kind == CG_NET_POOL;
    return count;
}

/* A full chunk's device buffers (input, output, the largest step output between) into s; their
 * bytes, twice the input and output (two slots) and twice the largest between (ping-pong). The
 * steps are the segment's layers, then, where it interleaves, one interleaving per pooling,
 * each of the last tensor's size. */
static double chunk_bytes(const cg_net *net, const cg_net_patch *p, host_segment *s)
{
    int layers = s->end - s->first, steps = layers + (s->interleave ? poolings(net) : 0);
    s->in_bytes = 4.0 * (double)chunk_elems(net, p, s, s->first);
    s->mid_bytes = 0;
    for (int i = 0; i < steps - 1; ++i)
        s->mid_bytes = fmax(s->mid_bytes, 4.0 * (double)chunk_elems(net, p, s, i < layers ? s->first + 1 + i : s->end));
    s->out_bytes = s->interleave ? 4.0 * (double)cg_net_dense_elems(net, p) : 4.0 * (double)chunk_elems(net, p, s, s->end);
    return 2 * (s->in_bytes + s->out_bytes + s->mid_bytes);
}

/* The largest nb (split: kc) for which a chunk fits `budget`, spread evenly over the chunks;
 * 0 where not even one fits. */
static int64_t fit_chunk(const cg_net *net, const cg_net_patch *p, host_segment *s, double budget)
{
    int64_t total = s->kc ? p->shape[s->end].c : s->batch, lo = 0, hi = total;
    while (lo < hi) { /* the bytes grow with the chunk: the largest that fits */
        int64_t mid = (lo + hi + 1) / 2;
        *(s->kc ? &s->kc : &s->nb) = mid;
        if (chunk_bytes(net, p, s) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (!lo)
        return 0;
    int64_t chunks = (total + lo - 1) / lo, even = (total + chunks - 1) / chunks;
    *(s->kc ? &s->kc : &s->nb) = even;
    chunk_bytes(net, p, s);
    return even;
}

/* Segment s's traffic, work and modeled seconds for the whole patch. */
static void segment_cost(const convgen_net *n, const cg_net_patch *p, host_segment *s)
{
    const cg_net *net = &n->net;
    int64_t maps = p->shape[s->end].c;
    s->chunks = s->kc ? s->batch * ((maps + s->kc - 1) / s->kc) : (s->batch + s->nb - 1) / s->nb;
    s->fragments = p->shape[s->end].batch / s->batch;
    double in = 4.0 * (double)cg_net_tensor_elems(&p->shape[s->first]);
    bool reread = s->kc && net->layers[s->first].kind == CG_NET_CONV; /* every slice reads the whole entry */
    s->up = reread ? in * (double)((maps + s->kc - 1) / s->kc) : in;
    s->down = s->interleave ? 4.0 * (double)cg_net_dense_elems(net, p)
                            : 4.0 * (double)cg_net_tensor_elems(&p->shape[s->end]);
    s->work = 0;
    for (int i = s->first; i < s->end; ++i)
        s->work += cg_net_layer_seconds(n, p, i);
    /* the three overlap across chunks, but the pipeline fills and drains at each end: one chunk
     * runs them in turn */
    double up = s->up / n->bw_up, down = s->down / n->bw_down, slowest = fmax(s->work, fmax(up, down));
    s->seconds = slowest + (s->work + up + down - slowest) / (double)s->chunks + (double)s->chunks * CHUNK_LAUNCH_S;
}

double cg_net_host_segments(const convgen_net *n, const cg_net_patch *p, host_segment *out, int *segments)
{
    const cg_net *net = &n->net;
    double largest = 4.0 * (double)cg_net_dense_elems(net, p);
    for (int i = 0; i <= net->count; ++i)
        largest = fmax(largest, 4.0 * (double)cg_net_tensor_elems(&p->shape[i]));
    if (2 * largest > (double)n->host_limit || n->weight_bytes >= n->memory_limit / 2)
        return INFINITY;
    double budget = (double)(n->memory_limit / 2 - n->weight_bytes), seconds = 0;
    host_segment seg[CG_NET_MAX_LAYERS + 1];
    int count = 0;
    for (int first = 0; first < net->count; first = seg[count++].end) {
        host_segment *s = &seg[count];
        /* the longest run of layers one entry of which fits */
        *s = (host_segment){.first = first, .batch = p->shape[first].batch, .nb = 1};
        int end = 0;
        for (s->end = first + 1; s->end <= net->count; ++s->end)
            if (chunk_bytes(net, p, s) <= budget)
                end = s->end;
        if (end) {
            s->end = end;
            fit_chunk(net, p, s, budget);
        } else { /* one layer, and the poolings after it, a slice of maps at a time */
            s->kc = 1;
            for (s->end = first + 1; s->end < net->count && net->layers[s->end].kind == CG_NET_POOL; ++s->end) {
                ++s->end;
                bool fits = chunk_bytes(net, p, s) <= budget;
                --s->end;
                if (!fits)
                    break;
            }
            if (!fit_chunk(net, p, s, budget))
                return INFINITY;
        }
    }
    /* the interleavings (none without poolings: the last tensor is the dense patch): in the last
     * segment where it is one chunk of everything, else alone */
    host_segment *last = &seg[count - 1];
    host_segment whole = *last;
    whole.interleave = true;
    if (!poolings(net)) {
        /* nothing to undo */
    } else if (!last->kc && last->nb == last->batch && chunk_bytes(net, p, &whole) <= budget) {
        *last = whole;
    } else {
        seg[count] = (host_segment){.first = net->count, .end = net->count, .interleave = true,
                                    .batch = p->shape[net->count].batch, .nb = p->shape[net->count].batch};
        if (chunk_bytes(net, p, &seg[count++]) > budget)
            return INFINITY;
    }
    for (int i = 0; i < count; ++i) {
        segment_cost(n, p, &seg[i]);
        seconds += seg[i].seconds;
    }
    /* the patch packed and its output placed by the host, between the patches */
    seconds += (4.0 * (double)cg_net_tensor_elems(&p->shape[0]) + 4.0 * (double)cg_net_dense_elems(net, p)) / HOST_COPY;
    if (out)
        memcpy(out, seg, sizeof seg[0] * (size_t)count);
    *segments = count;
    return seconds;
}

/* ---- plans ---- */

/* Segment s's plans for a chunk of nb entries (kc maps): its layers', the interleavings are
 * the device mode's (the whole final tensor). */
static convgen_status plan_chunk(convgen_net *n, host_segment *s, int64_t nb, int64_t kc, size_t workspace_limit,
                                 convgen_plan **plan)
{
    const cg_net_patch *p = &n->patch;
    convgen_status st = CONVGEN_SUCCESS;
    for (int i = s->first; i < s->end && st == CONVGEN_SUCCESS; ++i) {
        const cg_net_tensor *t = &p->shape[i];
        int64_t batch = t->batch / s->batch * nb;
        if (n->net.layers[i].kind == CG_NET_CONV)
            st = cg_net_plan_conv(n, i, batch, kc ? kc : n->net.layers[i].k, t, workspace_limit, &plan[i - s->first]);
        else
            st = cg_net_plan_pool(n, i, CONVGEN_POOL_FRAGMENTS, batch, kc ? kc : t->c, t->ext, &plan[i - s->first]);
    }
    return st;
}

void cg_net_host_release(convgen_net *n)
{
    for (int j = 0; j < n->segments; ++j)
        for (int t = 0; t < 2; ++t)
            for (int i = 0; i < CG_NET_MAX_LAYERS; ++i) {
                convgen_plan_destroy(n->seg[j].plan[t][i]);
                n->seg[j].plan[t][i] = NULL;
            }
}

convgen_status cg_net_host_plan(convgen_net *n)
{
    double in = 0, out = 0, mid = 0;
    for (int j = 0; j < n->segments; ++j) {
        in = fmax(in, n->seg[j].in_bytes), out = fmax(out, n->seg[j].out_bytes), mid = fmax(mid, n->seg[j].mid_bytes);
    }
    n->in_bytes = (size_t)in, n->out_bytes = (size_t)out, n->buf_bytes = (size_t)mid;
    double most = 4.0 * (double)cg_net_dense_elems(&n->net, &n->patch);
    for (int i = 0; i <= n->net.count; ++i)
        most = fmax(most, 4.0 * (double)cg_net_tensor_elems(&n->patch.shape[i]));
    n->tensor_bytes = (size_t)most;
    size_t fixed = 2 * (n->in_bytes + n->out_bytes + n->buf_bytes) + n->weight_bytes;
    if (fixed >= n->memory_limit)
        return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes: the host mode's chunks need %zu",
                       n->memory_limit, fixed);
    convgen_status s = CONVGEN_SUCCESS;
    for (int j = 0; j < n->segments && s == CONVGEN_SUCCESS; ++j) {
        host_segment *g = &n->seg[j];
        int64_t total = g->kc ? n->patch.shape[g->end].c : g->batch, size = g->kc ? g->kc : g->nb;
        s = plan_chunk(n, g, g->kc ? 1 : g->nb, g->kc, n->memory_limit - fixed, g->plan[0]);
        if (s == CONVGEN_SUCCESS && total % size) /* the last chunk's */
            s = plan_chunk(n, g, g->kc ? 1 : total % size, g->kc ? total % size : 0, n->memory_limit - fixed,
                           g->plan[1]);
    }
    return s;
}

/* ---- memory ---- */

convgen_status cg_net_host_allocate(convgen_net *n)
{
    convgen_status s = CONVGEN_SUCCESS;
    for (int t = 0; t < 2 && s == CONVGEN_SUCCESS; ++t)
        s = cg_net_cuda(n, n->ctx->drv->MemAllocHost((void **)&n->tensor[t], n->tensor_bytes),
                        "cuMemAllocHost (a patch's tensors)");
    return s;
}

void cg_net_host_free(convgen_net *n)
{
    for (int t = 0; t < 2; ++t)
        if (n->tensor[t])
            n->ctx->drv->MemFreeHost(n->tensor[t]);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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
            double t0 = now_s();
            s = cg_net_cuda(n, d ? drv->MemcpyDtoHAsync(host, dev, bytes, NULL) : drv->MemcpyHtoDAsync(dev, host, bytes, NULL),
                            "measuring the bus");
            if (s == CONVGEN_SUCCESS)
                s = cg_net_cuda(n, drv->CtxSynchronize(), "measuring the bus");
            if (r)
                best[d] = fmin(best[d], now_s() - t0);
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

/* Chunk j of segment g: its first entry and entries, its first map and maps (of the output). */
typedef struct chunk {
    int64_t b0, bn, k0, kn;
    bool last; /* the last chunk's shape (its own plans) */
} chunk;

static chunk chunk_of(const convgen_net *n, const host_segment *g, int64_t j)
{
    int64_t maps = n->patch.shape[g->end].c;
    if (g->kc) {
        int64_t slices = (maps + g->kc - 1) / g->kc, k0 = j % slices * g->kc;
        int64_t kn = maps - k0 < g->kc ? maps - k0 : g->kc;
        return (chunk){.b0 = j / slices, .bn = 1, .k0 = k0, .kn = kn, .last = kn != g->kc};
    }
    int64_t b0 = j * g->nb, bn = g->batch - b0 < g->nb ? g->batch - b0 : g->nb;
    return (chunk){.b0 = b0, .bn = bn, .k0 = 0, .kn = maps, .last = bn != g->nb};
}

static int64_t ext_elems(const cg_net_tensor *t) { return t->ext[0] * t->ext[1] * t->ext[2]; }

/* The chunk's layers on the slot's input into its output, on `stream`. */
static convgen_status compute_chunk(convgen_net *n, const host_segment *g, const chunk *c, const pipe_slot *p,
                                    convgen_stream stream)
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
            s = convgen_execute_bias(g->plan[c->last][i], (const float *)from, w, b, y, (void *)n->workspace,
                                     n->workspace_bytes, stream);
        } else {
            s = convgen_execute_pool(g->plan[c->last][i], (const float *)from, y, stream);
        }
        from = (CUdeviceptr)y;
    }
    return s;
}

/* The chunk's output rows into the host tensor: one copy per fragment f, to rows f N + b. */
static convgen_status download(convgen_net *n, const host_segment *g, const chunk *c, const pipe_slot *p, float *dst)
{
    const cg_driver *drv = n->ctx->drv;
    if (g->interleave)
        return cg_net_cuda(n, drv->MemcpyDtoHAsync(dst, p->dev_out, (size_t)cg_net_dense_elems(&n->net, &n->patch) * 4,
                                                   n->down), "cuMemcpyDtoHAsync (a dense patch)");
    const cg_net_tensor *t = &n->patch.shape[g->end];
    int64_t e = ext_elems(t), rows = c->bn * c->kn * e;
    convgen_status s = CONVGEN_SUCCESS;
    for (int64_t f = 0; f < g->fragments && s == CONVGEN_SUCCESS; ++f)
        s = cg_net_cuda(n, drv->MemcpyDtoHAsync(dst + ((f * g->batch + c->b0) * t->c + c->k0) * e,
                                                p->dev_out + (CUdeviceptr)(f * rows * 4), (size_t)rows * 4, n->down),
                        "cuMemcpyDtoHAsync (a chunk)");
    return s;
}

typedef struct chunk_run {
    const host_segment *g;
    chunk c;
    float *dst;
} chunk_run;

static convgen_status compute_step(convgen_net *n, const pipe_slot *p, convgen_stream stream, void *arg)
{
    const chunk_run *r = arg;
    return compute_chunk(n, r->g, &r->c, p, stream);
}

static convgen_status download_step(convgen_net *n, const pipe_slot *p, void *arg)
{
    const chunk_run *r = arg;
    return download(n, r->g, &r->c, p, r->dst);
}

/* Chunk j of segment g through slot `slot`: its input rows of src up, the segment's layers,
 * its output rows into dst. Returns without waiting. */
static convgen_status run_chunk(convgen_net *n, const host_segment *g, int64_t j, int64_t slot, const float *src,
                                float *dst, convgen_stream stream)
{
    chunk_run r = {g, chunk_of(n, g, j), dst};
    const cg_net_tensor *t = &n->patch.shape[g->first];
    int64_t e = ext_elems(t);
    bool whole_entry = !g->kc || g->first == g->end || n->net.layers[g->first].kind == CG_NET_CONV;
    int64_t at = whole_entry ? r.c.b0 * t->c * e : (r.c.b0 * t->c + r.c.k0) * e;
    int64_t count = whole_entry ? r.c.bn * t->c * e : r.c.kn * e;
    const slot_steps steps = {compute_step, download_step, &r};
    return cg_net_through_slot(n, &n->slot[slot], src + at, (size_t)count * 4, &steps, stream);
}

convgen_status cg_net_host_patch(convgen_net *n, const float *x, const int64_t ext[3], const int64_t origin[3],
                                 float *y, const int64_t out[3], const int64_t out_origin[3], convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    cg_net_pack_input(n, x, ext, origin, n->tensor[0]);
    convgen_status s = CONVGEN_SUCCESS;
    int64_t issued = 0; /* chunks so far: chunk i goes through slot i % 2 */
    for (int j = 0; j < n->segments && s == CONVGEN_SUCCESS; ++j) {
        const host_segment *g = &n->seg[j];
        /* its input is what the segment before wrote: all of it down before the first copy up */
        if (j > 0)
            s = cg_net_cuda(n, drv->StreamWaitEvent(n->up, n->slot[(issued - 1) % 2].downloaded, 0), "cuStreamWaitEvent");
        for (int64_t c = 0; c < g->chunks && s == CONVGEN_SUCCESS; ++c)
            s = run_chunk(n, g, c, issued++ % 2, n->tensor[j % 2], n->tensor[(j + 1) % 2], stream);
    }
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->EventSynchronize(n->slot[(issued - 1) % 2].downloaded), "running a patch in host mode");
    if (s == CONVGEN_SUCCESS)
        cg_net_place_output(n, n->tensor[n->segments % 2], y, out, out_origin);
    return s;
}

/* ---- explain ---- */

void cg_net_host_explain(const convgen_net *n, cg_buf *b)
{
    cg_buf_printf(b, "host mode: the patch's tensors in pinned host memory (2 x %.1f MiB), bus %.1f GB/s up, %.1f GB/s "
                  "down\n", (double)n->tensor_bytes / 1048576.0, n->bw_up * 1e-9, n->bw_down * 1e-9);
    double total = 0;
    bool timed = true;
    for (int j = 0; j < n->segments; ++j) {
        const host_segment *g = &n->seg[j];
        double ms = 0;
        bool tail = g->plan[1][0] != NULL; /* the last chunk runs plans of its own */
        for (int i = g->first; i < g->end; ++i) {
            char how[64];
            if (n->net.layers[i].kind != CG_NET_CONV)
                continue;
            double full = cg_net_layer_ms(g->plan[0][i - g->first], how, sizeof how);
            double last = tail ? cg_net_layer_ms(g->plan[1][i - g->first], how, sizeof how) : full;
            timed &= full >= 0 && last >= 0;
            ms += fmax(full, 0) * (double)(g->chunks - 1) + fmax(last, 0);
        }
        char what[96];
        if (g->first == g->end)
            snprintf(what, sizeof what, "the interleavings");
        else if (g->end - g->first == 1)
            snprintf(what, sizeof what, "layer %d%s", g->first, g->interleave ? " and the interleavings" : "");
        else
            snprintf(what, sizeof what, "layers %d-%d%s", g->first, g->end - 1, g->interleave ? " and the interleavings" : "");
        char size[64];
        if (g->kc)
            snprintf(size, sizeof size, "%lld maps of one entry", (long long)g->kc);
        else
            snprintf(size, sizeof size, "%lld of %lld entries", (long long)g->nb, (long long)g->batch);
        double up = g->up / n->bw_up * 1e3, down = g->down / n->bw_down * 1e3, slowest = fmax(ms, fmax(up, down));
        cg_buf_printf(b, "  segment %d: %s, %lld chunks of %s; %.1f MiB up (%.3g ms), %.1f MiB down (%.3g ms), "
                      "convolutions %.3g ms\n", j, what, (long long)g->chunks, size, g->up / 1048576.0, up,
                      g->down / 1048576.0, down, ms);
        total += slowest + (ms + up + down - slowest) / (double)g->chunks; /* as segment_cost */
    }
    const cg_net_patch *p = &n->patch;
    if (timed && total > 0)
        cg_buf_printf(b, "predicted: %.3g ms a patch (each segment's convolutions, copies up and copies down "
                      "overlapping but for one chunk's), %.4g output voxels/s\n", total,
                      (double)(p->out[0] * p->out[1] * p->out[2]) / (total * 1e-3));
}
