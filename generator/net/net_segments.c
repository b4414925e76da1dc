/* A network's planning: its cost model; the patch it runs by (the fragment extents of least
 * time per output voxel); and the host mode's segments (ZNNi section VII-A, "GPU + host RAM";
 * runtime/net_host.c runs what it plans): which runs of layers one batch entry of a patch fits
 * on the device, how each is cut into chunks (batch entries, or one entry's output maps or depth
 * rows), the bytes each sends over the bus and what a patch costs. All arithmetic: it plans for
 * any GPU from the budget it is given. */
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "net/net.h"

/* The multiply-adds a second one multiprocessor gives a network's 3x3x3 convolutions, as the
 * cost model counts them (direct multiply-adds, whatever the algorithm ran): n337's on an H200,
 * its 1024^3 volume at 46.9 M voxels/s (bench/NOTES.md, "The host mode: workspace, depth cuts
 * through convolutions"). Larger kernels run at more by FFT and Winograd: n537's, n726's and
 * n926's measured rates over 448^3 follow (kernel volume / 27)^0.66 within 10%. Ranks patches
 * and modes; explain shows each layer's own estimate. */
#define MAC_RATE_PER_SM 4.6e11

/* A convolution's seconds for `out_elems` outputs from c channels, by the rate above. */
static double conv_seconds(const cg_net *net, int i, double out_elems, double c, int sm_count)
{
    const cg_net_layer *l = &net->layers[i];
    double volume = (double)l->size[0] * l->size[1] * l->size[2];
    int sm = sm_count > 0 ? sm_count : 132;
    return out_elems * c * volume / (MAC_RATE_PER_SM * sm * pow(volume / 27, 0.66));
}

double cg_net_layer_seconds(const cg_net *net, const cg_net_patch *p, int i, int sm_count)
{
    if (net->layers[i].kind != CG_NET_CONV)
        return 0;
    return conv_seconds(net, i, (double)cg_net_tensor_elems(&p->shape[i + 1]), (double)p->shape[i].c, sm_count);
}

void cg_net_slab_rows(const cg_net *net, const cg_net_segment *s, int64_t q0, int64_t dq, int64_t from[],
                      int64_t rows[])
{
    from[s->end] = q0, rows[s->end] = dq;
    for (int i = s->end - 1; i >= s->first; --i) {
        int64_t size = net->layers[i].size[0];
        bool conv = net->layers[i].kind == CG_NET_CONV;
        from[i] = conv ? from[i + 1] : from[i + 1] * size;
        rows[i] = conv ? rows[i + 1] + size - 1 : rows[i + 1] * size + size - 1;
    }
}

#define CHUNK_LAUNCH_S 20e-6 /* a chunk's copies and launches beyond its work */
/* bytes/s of packing a patch and placing its output on up to 8 host threads (runtime/net_exec.c):
 * n337's 452^3 patch, 970 MB, in 48 ms on the H200 machine's 16 cores */
#define HOST_COPY 2e10

/* Tensor t's elements in a chunk of segment s: nb of layer first's N entries; where cut by maps,
 * kc of them (the input of a convolution that comes first keeps all of its channels); where
 * cut by depth, the rows of a chunk of dq (rows[t], cg_net_slab_rows). Exact: every count is
 * below 2^62 (cg_net_patch_of). */
static int64_t chunk_elems(const cg_net *net, const cg_net_patch *p, const cg_net_segment *s, int t)
{
    const cg_net_tensor *x = &p->shape[t];
    bool sliced = s->kc && !(t == s->first && net->layers[s->first].kind == CG_NET_CONV);
    int64_t depth = x->ext[0];
    if (s->dq) {
        int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1];
        cg_net_slab_rows(net, s, 0, s->dq, from, rows);
        depth = rows[t];
    }
    return x->batch / s->batch * s->nb * (sliced ? s->kc : x->c) * depth * x->ext[1] * x->ext[2];
}

static int poolings(const cg_net *net)
{
    int count = 0;
    for (int i = 0; i < net->count; ++i)
        count += net->layers[i].kind == CG_NET_POOL;
    return count;
}

/* The workspace the fast algorithms want, in bytes per byte of one batch entry's input and
 * output: Winograd F(4x4x4, 3x3x3)'s transforms take 3.4-3.7 (n337's 80-map layers) and
 * fft-tiled's tile spectra 4.1-6.1 (5^3 to 9^3 kernels), by their plans. MAC_RATE_PER_SM is
 * their rate; a chunk planned without the room runs a fused algorithm, 2.7x slower on n337's
 * layer 2 (winograd-fused against winograd, by the cost model; a patch through 1 GiB measured
 * 427 against 324 ms a segment, bench/NOTES.md), so a chunk leaves it. One entry's: a plan
 * sub-batches under its workspace limit. */
static double fast_workspace_ratio(const cg_net_layer *l)
{
    return l->size[0] <= 3 && l->size[1] <= 3 && l->size[2] <= 3 ? 4.0 : 6.5;
}

/* The most workspace any convolution of s wants for one entry of a chunk (fast_workspace_ratio). */
static double chunk_workspace(const cg_net *net, const cg_net_patch *p, const cg_net_segment *s)
{
    double most = 0;
    for (int i = s->first; i < s->end; ++i) {
        if (net->layers[i].kind != CG_NET_CONV)
            continue;
        double entries = (double)(p->shape[i].batch / s->batch * s->nb);
        double bytes = 4.0 * (double)(chunk_elems(net, p, s, i) + chunk_elems(net, p, s, i + 1)) / entries;
        most = fmax(most, fast_workspace_ratio(&net->layers[i]) * bytes);
    }
    return most;
}

/* A full chunk's device buffers (input, output, the largest step output between) and the
 * workspace its convolutions want into s; the bytes it takes: twice the input and output (two
 * slots), twice the largest between (ping-pong), and the workspace. The steps are the
 * segment's layers, then, where it interleaves, one interleaving per pooling, each of the last
 * tensor's size. */
static double chunk_bytes(const cg_net *net, const cg_net_patch *p, cg_net_segment *s)
{
    int layers = s->end - s->first, steps = layers + (s->interleave ? poolings(net) : 0);
    s->in_bytes = 4.0 * (double)chunk_elems(net, p, s, s->first);
    s->mid_bytes = 0;
    for (int i = 0; i < steps - 1; ++i)
        s->mid_bytes = fmax(s->mid_bytes, 4.0 * (double)chunk_elems(net, p, s, i < layers ? s->first + 1 + i : s->end));
    s->out_bytes = s->interleave ? 4.0 * (double)cg_net_dense_elems(net, p) : 4.0 * (double)chunk_elems(net, p, s, s->end);
    s->ws_bytes = chunk_workspace(net, p, s);
    return 2 * (s->in_bytes + s->out_bytes + s->mid_bytes) + s->ws_bytes;
}

/* What a chunk of s counts: nb entries, kc maps or dq rows, and how many of them there are. */
static int64_t *chunk_size_field(cg_net_segment *s) { return s->dq ? &s->dq : s->kc ? &s->kc : &s->nb; }

int64_t cg_net_chunk_total(const cg_net_patch *p, const cg_net_segment *s)
{
    return s->dq ? p->shape[s->end].ext[0] : s->kc ? p->shape[s->end].c : s->batch;
}

int64_t cg_net_chunk_size(const cg_net_segment *s) { return s->dq ? s->dq : s->kc ? s->kc : s->nb; }

/* The largest chunk (nb, kc or dq) that fits `budget`, spread evenly over the chunks; 0 where
 * not even one fits. */
static int64_t fit_chunk(const cg_net *net, const cg_net_patch *p, cg_net_segment *s, double budget)
{
    int64_t total = cg_net_chunk_total(p, s), lo = 0, hi = total;
    while (lo < hi) { /* the bytes grow with the chunk: the largest that fits */
        int64_t mid = (lo + hi + 1) / 2;
        *chunk_size_field(s) = mid;
        if (chunk_bytes(net, p, s) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (!lo)
        return 0;
    int64_t chunks = (total + lo - 1) / lo, even = (total + chunks - 1) / chunks;
    *chunk_size_field(s) = even;
    chunk_bytes(net, p, s);
    return even;
}

double cg_net_pipeline_seconds(double work, double up, double down, int64_t chunks)
{
    /* the three overlap across chunks, but the pipeline fills and drains at each end: one chunk
     * runs them in turn */
    double slowest = fmax(work, fmax(up, down));
    return slowest + (work + up + down - slowest) / (double)chunks;
}

double cg_net_patch_seconds(int count, const double work[], const double up[], const double down[],
                            const int64_t chunks[])
{
    double seconds = 0;
    for (int j = 0; j < count; ++j)
        seconds += (double)chunks[j] * CHUNK_LAUNCH_S;
    for (int j = count > 1; j < count - (count > 1); ++j)
        seconds += cg_net_pipeline_seconds(work[j], up[j], down[j], chunks[j]);
    if (count > 1) /* the last segment beside the next patch's first */
        seconds += cg_net_pipeline_seconds(work[0] + work[count - 1], up[0] + up[count - 1], down[0] + down[count - 1],
                                           chunks[0] + chunks[count - 1]);
    return seconds;
}

/* The depth rows a fast algorithm computes at once (Winograd F(4x4x4, 3x3x3)'s tiles; fft-tiled's
 * are deeper): a depth chunk's convolution of fewer rows costs as many. n337 through 1 GiB,
 * chunked to one row of layer 2 (8 fragments), ran that segment in 441 ms against 253 modeled
 * without it (bench/NOTES.md). A floor, not a rounding up: longer chunks pay their last tile's
 * rows already in the measured rate. */
#define DEPTH_TILE 4

/* A depth-cut segment's bytes up and convolutions' seconds over its chunks of dq rows and the
 * last of fewer: each computes the rows its rows see (at least DEPTH_TILE), so the rows between
 * chunks are computed twice; but each input row goes up once (a chunk keeps on the device the
 * rows its predecessor read too: runtime/net_host.c). */
static void slab_traffic(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, cg_net_segment *s)
{
    int64_t depth = p->shape[s->end].ext[0], full = depth / s->dq, rest = depth % s->dq;
    int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1];
    const cg_net_tensor *x = &p->shape[s->first];
    cg_net_slab_rows(net, s, 0, depth, from, rows);
    s->up = 4.0 * (double)s->batch * (double)(x->batch / s->batch * x->c * rows[s->first] * x->ext[1] * x->ext[2]);
    s->work = 0;
    for (int k = 0; k < 2; ++k) {
        int64_t dq = k ? rest : s->dq, count = (k ? rest > 0 : full) * s->batch;
        if (!count)
            continue;
        cg_net_slab_rows(net, s, 0, dq, from, rows);
        for (int i = s->first; i < s->end; ++i) {
            const cg_net_tensor *y = &p->shape[i + 1];
            int64_t computed = rows[i + 1] < DEPTH_TILE ? DEPTH_TILE : rows[i + 1];
            computed = computed < y->ext[0] ? computed : y->ext[0]; /* no more rows than the tensor has */
            double outs = (double)(y->batch / s->batch * y->c * computed * y->ext[1] * y->ext[2]);
            if (net->layers[i].kind == CG_NET_CONV)
                s->work += (double)count * conv_seconds(net, i, outs, (double)p->shape[i].c, b->sm_count);
        }
    }
}

/* Segment s's traffic, work and modeled seconds for the whole patch. */
static void segment_cost(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, cg_net_segment *s)
{
    int64_t total = cg_net_chunk_total(p, s), size = cg_net_chunk_size(s), pieces = (total + size - 1) / size;
    s->chunks = s->kc || s->dq ? s->batch * pieces : pieces;
    s->fragments = p->shape[s->end].batch / s->batch;
    s->down = s->interleave ? 4.0 * (double)cg_net_dense_elems(net, p)
                            : 4.0 * (double)cg_net_tensor_elems(&p->shape[s->end]);
    if (s->dq) {
        slab_traffic(net, p, b, s);
    } else {
        double in = 4.0 * (double)cg_net_tensor_elems(&p->shape[s->first]);
        bool reread = s->kc && net->layers[s->first].kind == CG_NET_CONV; /* every slice reads the whole entry */
        s->up = reread ? in * (double)pieces : in;
        s->work = 0;
        for (int i = s->first; i < s->end; ++i)
            s->work += cg_net_layer_seconds(net, p, i, b->sm_count);
    }
    s->seconds = cg_net_pipeline_seconds(s->work, s->up / b->bus_up, s->down / b->bus_down, s->chunks) +
                 (double)s->chunks * CHUNK_LAUNCH_S; /* alone; a patch's: cg_net_patch_seconds */
}

/* Where not even one entry of layer `first` fits, the ways to cut it into cut[] (their count):
 * by maps, that layer and the poolings after it that still fit; by depth rows, each run of
 * layers from it whose one-row chunk fits, ending before a convolution or the network's end
 * (a depth cut spans convolutions: every layer it keeps saves its tensor's round trip over the
 * bus, for the rows its chunks compute twice). */
static int entry_cuts(const cg_net *net, const cg_net_patch *p, double budget, int first, cg_net_segment cut[])
{
    int count = 0;
    for (int k = 0; k < 2; ++k) {
        cg_net_segment c = {.first = first, .batch = p->shape[first].batch, .nb = 1};
        *(k ? &c.dq : &c.kc) = 1;
        if (k && p->shape[first].ext[0] == 1) /* by depth only where there is one: rank 3 */
            continue;
        for (c.end = first + 1; c.end <= net->count; ++c.end) {
            if (chunk_bytes(net, p, &c) > budget)
                break;
            bool next_fits = false;
            if (c.end < net->count) {
                ++c.end;
                next_fits = chunk_bytes(net, p, &c) <= budget;
                --c.end;
            }
            bool before_conv = c.end == net->count || net->layers[c.end].kind == CG_NET_CONV;
            if (before_conv || !next_fits) {
                cut[count] = c;
                if (fit_chunk(net, p, &cut[count], budget) > 0)
                    ++count;
            }
            if (!k && (before_conv || !next_fits)) /* by maps: one convolution and its poolings */
                break;
        }
    }
    return count;
}

double cg_net_host_work_seconds(const cg_net *net, const cg_net_patch *p)
{
    return 4.0 * (double)(cg_net_tensor_elems(&p->shape[0]) + cg_net_dense_elems(net, p)) / HOST_COPY;
}

double cg_net_chunk_buffer_bytes(const cg_net_segment *seg, int count)
{
    double in = 0, out = 0, mid = 0;
    for (int j = 0; j < count; ++j)
        in = fmax(in, seg[j].in_bytes), out = fmax(out, seg[j].out_bytes), mid = fmax(mid, seg[j].mid_bytes);
    double pair = count > 1 ? seg[count - 1].out_bytes + seg[0].in_bytes : 0;
    return 2 * (in + out + mid + pair);
}

int64_t cg_net_boundary_elems(const cg_net_patch *p, const cg_net_segment *seg, int count)
{
    int64_t most = 0;
    for (int j = 0; j < count - 1; ++j)
        most = cg_net_tensor_elems(&p->shape[seg[j].end]) > most ? cg_net_tensor_elems(&p->shape[seg[j].end]) : most;
    return most;
}

double cg_net_host_bytes(const cg_net *net, const cg_net_patch *p, const cg_net_segment *seg, int count)
{
    return 2 * 4.0 * ((double)cg_net_boundary_elems(p, seg, count) + (double)cg_net_tensor_elems(&p->shape[0]) +
                      (double)cg_net_stage_out_elems(net, p));
}

/* The search for a patch's segments: the plan being built, and the best so far. */
typedef struct segment_search {
    const cg_net *net;
    const cg_net_patch *p;
    const cg_net_budget *b;
    double budget; /* a chunk's buffers and workspace (chunk_bytes) fit in this */
    cg_net_segment seg[CG_NET_MAX_LAYERS + 1], best[CG_NET_MAX_LAYERS + 1];
    int best_count;
    double best_seconds;
    int visits; /* the search's partial plans so far (SEARCH_VISITS) */
} segment_search;

/* The partial plans one search visits at most: the ways to cut a deep network multiply (about
 * 2.6^L for L layers none of whose entries fits), and the bound below prunes most but not all;
 * past this many the best plan found so far stands. n337's plans are the same with 60 or 2000;
 * twenty 80-map 3^3 convolutions through 1 GiB plan in 12 s with it (35 s with 2000). */
#define SEARCH_VISITS 200

/* The least a plan that begins with q->seg[0..count) can take: each segment but the first at its
 * slowest of work, copies up and copies down (the last one's, beside the first, no less), and
 * every chunk's launches. */
static double plan_bound(const segment_search *q, int count)
{
    double seconds = 0;
    for (int j = 0; j < count; ++j) {
        const cg_net_segment *g = &q->seg[j];
        seconds += (double)g->chunks * CHUNK_LAUNCH_S;
        if (j > 0)
            seconds += fmax(g->work, fmax(g->up / q->b->bus_up, g->down / q->b->bus_down));
    }
    return seconds;
}

/* A whole plan of `count` segments in q->seg: its interleavings (none without poolings: the last
 * tensor is the dense patch; in the last segment where it is one chunk of everything, else the
 * host places the final fragments), its memory, its seconds; kept where the best. */
static void finish_plan(segment_search *q, int count)
{
    const cg_net *net = q->net;
    cg_net_segment seg[CG_NET_MAX_LAYERS + 1];
    memcpy(seg, q->seg, sizeof seg[0] * (size_t)count);
    cg_net_segment *last = &seg[count - 1], whole = *last;
    whole.interleave = true;
    if (poolings(net) && !last->kc && !last->dq && last->nb == last->batch && chunk_bytes(net, q->p, &whole) <= q->budget) {
        *last = whole;
        segment_cost(net, q->p, q->b, last);
    }
    double ws = 0;
    for (int i = 0; i < count; ++i)
        ws = fmax(ws, seg[i].ws_bytes);
    if (cg_net_chunk_buffer_bytes(seg, count) + ws >= q->b->device_limit ||
        cg_net_host_bytes(net, q->p, seg, count) > q->b->host_bytes)
        return;
    double work[CG_NET_MAX_LAYERS + 1], up[CG_NET_MAX_LAYERS + 1], down[CG_NET_MAX_LAYERS + 1];
    int64_t chunks[CG_NET_MAX_LAYERS + 1];
    for (int i = 0; i < count; ++i) {
        work[i] = seg[i].work, up[i] = seg[i].up / q->b->bus_up, down[i] = seg[i].down / q->b->bus_down;
        chunks[i] = seg[i].chunks;
    }
    double seconds = fmax(cg_net_patch_seconds(count, work, up, down, chunks), cg_net_host_work_seconds(net, q->p));
    if (seconds < q->best_seconds) {
        q->best_seconds = seconds, q->best_count = count;
        memcpy(q->best, seg, sizeof seg[0] * (size_t)count);
    }
}

/* Every plan of layers first.. after the `count` segments in q->seg: each segment the longest
 * run of layers one entry of which fits, in as few chunks as fit; where not even one entry of
 * a layer fits, each way to cut it (entry_cuts). */
static void search_segments(segment_search *q, int first, int count)
{
    if (++q->visits > SEARCH_VISITS || plan_bound(q, count) >= q->best_seconds)
        return;
    if (first == q->net->count) {
        finish_plan(q, count);
        return;
    }
    cg_net_segment *s = &q->seg[count];
    *s = (cg_net_segment){.first = first, .batch = q->p->shape[first].batch, .nb = 1};
    int end = 0;
    for (s->end = first + 1; s->end <= q->net->count; ++s->end)
        if (chunk_bytes(q->net, q->p, s) <= q->budget)
            end = s->end;
    if (end) {
        s->end = end;
        fit_chunk(q->net, q->p, s, q->budget);
        segment_cost(q->net, q->p, q->b, s);
        search_segments(q, end, count + 1);
        return;
    }
    cg_net_segment cut[2 * CG_NET_MAX_LAYERS];
    int cuts = entry_cuts(q->net, q->p, q->budget, first, cut);
    for (int i = 0; i < cuts; ++i) {
        q->seg[count] = cut[i];
        segment_cost(q->net, q->p, q->b, &q->seg[count]);
        search_segments(q, cut[i].end, count + 1);
    }
}

/* The shares of the device memory a chunk may take: the larger, the fewer chunks and rows
 * computed twice, but the segments' buffers are each the largest of any segment's, so chunks
 * that each fit may not fit together; and a smaller share can cut the network elsewhere. */
static const double chunk_shares[] = {0.7, 0.5, 0.35, 0.25, 0.18, 0.12, 0.08};

double cg_net_segments(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, cg_net_segment *out,
                       int *segments)
{
    if (b->device_limit <= 0)
        return INFINITY;
    segment_search q = {.net = net, .p = p, .b = b, .best_seconds = INFINITY};
    /* from the largest share down, while a smaller one finds a better plan (or none fit yet) */
    for (size_t i = 0; i < sizeof chunk_shares / sizeof chunk_shares[0]; ++i) {
        double before = q.best_seconds;
        q.budget = chunk_shares[i] * b->device_limit, q.visits = 0;
        search_segments(&q, 0, 0);
        if (before < INFINITY && !(q.best_seconds < before))
            break;
    }
    if (q.best_seconds < INFINITY) {
        if (out)
            memcpy(out, q.best, sizeof q.best[0] * (size_t)q.best_count);
        *segments = q.best_count;
    }
    return q.best_seconds;
}

/* ---- the patch ---- */

/* The fragment extents tried are 1..MAX_FRAGMENT a side, and for a known volume the least that
 * covers it in 1..MAX_PATCHES patches (fragment_candidates): at most MAX_CANDIDATES a side, so
 * that host mode's search (cg_net_segments for each) stays within seconds. */
#define MAX_FRAGMENT 32
#define MAX_PATCHES 24
#define MAX_CANDIDATES (MAX_FRAGMENT + MAX_PATCHES)

double cg_net_device_patch_bytes(const cg_net *net, const cg_net_patch *p)
{
    double in = (double)cg_net_tensor_elems(&p->shape[0]), out = (double)cg_net_dense_elems(net, p);
    return 2.0 * 4.0 * ((double)cg_net_largest_elems(net, p) + in + out);
}

/* A patch's bytes up (its input) and down (its dense output). */
static void patch_io_bytes(const cg_net *net, const cg_net_patch *p, double *in, double *out)
{
    *in = 4.0 * (double)cg_net_tensor_elems(&p->shape[0]), *out = 4.0 * (double)cg_net_dense_elems(net, p);
}

/* The seconds a patch takes by the cost model, INFINITY where it does not fit: in device mode
 * its convolutions, or where longer its copies up or down or the host's packing and placing
 * (each overlaps other patches' work); in host mode its segments'. */
static double patch_seconds(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, bool host)
{
    int segments;
    if (host)
        return cg_net_segments(net, p, b, NULL, &segments);
    if (cg_net_device_patch_bytes(net, p) > b->device_bytes)
        return INFINITY;
    double seconds = 0, in, out;
    patch_io_bytes(net, p, &in, &out);
    for (int i = 0; i < net->count; ++i)
        seconds += cg_net_layer_seconds(net, p, i, b->sm_count);
    return fmax(fmax(seconds, cg_net_host_work_seconds(net, p)), fmax(in / b->bus_up, out / b->bus_down));
}

/* The seconds a volume's first and last patch leave uncovered: while patch t computes, t + 1
 * is packed and goes up and t - 1 comes down and is placed, but nothing computes beside the
 * first one's packing and upload or the last one's download and placing. One patch pays all
 * of it (a 452^3 patch of n337 on an H200: 0.21 s beside 0.95 s of layers). */
static double fill_and_drain_seconds(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b)
{
    double in, out;
    patch_io_bytes(net, p, &in, &out);
    return cg_net_host_work_seconds(net, p) + in / b->bus_up + out / b->bus_down;
}

/* What a patch costs per output voxel: its seconds over the dense outputs it gives, or, for a
 * known volume, all its patches' (the last ones moved back, overlapping) and the pipeline's
 * fill and drain over the volume's outputs. A dimension the patch is larger than takes one
 * patch whose input runs past the volume's edge (zeros there, and the outputs they reach
 * dropped): no overlap, but outputs computed for nothing. Infinite where the volume has no
 * output or the patch does not fit the memory. */
static double cost_per_voxel(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, bool host,
                             const int64_t volume[3], double best)
{
    int64_t fov[3];
    cg_net_field_of_view(net, fov);
    double patches = 1, voxels = 1;
    bool known = false;
    for (int d = 0; d < 3; ++d) {
        if (!volume[d]) {
            voxels *= (double)p->out[d];
            continue;
        }
        int64_t out = volume[d] - fov[d] + 1;
        if (out < 1)
            return INFINITY;
        patches *= (double)((out + p->out[d] - 1) / p->out[d]);
        voxels *= (double)out;
        known = true;
    }
    double edges = known ? fill_and_drain_seconds(net, p, b) : 0;
    if (host) { /* the segments' search is long: not where the convolutions alone cost more than `best` */
        double work = 0;
        for (int i = 0; i < net->count; ++i)
            work += cg_net_layer_seconds(net, p, i, b->sm_count);
        if ((patches * work + edges) / voxels >= best)
            return INFINITY;
    }
    return (patches * patch_seconds(net, p, b, host) + edges) / voxels;
}

/* The fragment extents worth trying in dimension d: 1..MAX_FRAGMENT, and for a known volume
 * also the least extent that covers its outputs in k patches, for k = 1 .. MAX_PATCHES (a larger
 * one in the same number of patches only adds work): so one patch of the whole volume, however
 * large, is among them. Ascending, without repeats; their count (at most MAX_CANDIDATES). */
static int fragment_candidates(const cg_net *net, const int64_t volume[3], int d, int64_t *cand)
{
    int count = 0;
    for (int64_t m = 1; m <= MAX_FRAGMENT; ++m)
        cand[count++] = m;
    int64_t fov[3], one[3] = {1, 1, 1};
    cg_net_patch unit;
    cg_net_field_of_view(net, fov);
    if (!volume[d] || volume[d] < fov[d] || cg_net_patch_of(net, one, &unit) != CONVGEN_SUCCESS)
        return count;
    int64_t out = volume[d] - fov[d] + 1, stride = unit.stride[d]; /* a fragment voxel's dense outputs */
    int64_t whole = (out + stride - 1) / stride;                     /* fragment extent of one patch */
    int64_t more[MAX_PATCHES];
    int extra = 0;
    for (int64_t k = 1; k <= MAX_PATCHES; ++k) { /* the largest first, descending */
        int64_t m = (whole + k - 1) / k;
        if (m <= MAX_FRAGMENT)
            break;
        if (!extra || m < more[extra - 1])
            more[extra++] = m;
    }
    while (extra > 0)
        cand[count++] = more[--extra];
    return count;
}

double cg_net_best_fragment(const cg_net *net, const cg_net_budget *b, bool host, const int64_t volume[3],
                            int64_t tried[][3], int tries, int64_t m[3])
{
    int64_t cand[3][MAX_CANDIDATES];
    int count[3];
    for (int d = 0; d < 3; ++d) {
        if (net->rank == 2 && d == 0)
            cand[d][0] = 1, count[d] = 1; /* a depth of 1 */
        else
            count[d] = fragment_candidates(net, volume, d, cand[d]);
    }
    double best = INFINITY;
    /* the largest first: the good patches are large, and once one is known the host mode's
     * search skips every patch whose convolutions alone cost more (cost_per_voxel) */
    for (int i = count[0] - 1; i >= 0; --i)
        for (int j = count[1] - 1; j >= 0; --j)
            for (int k = count[2] - 1; k >= 0; --k) {
                const int64_t c[3] = {cand[0][i], cand[1][j], cand[2][k]};
                bool done = false;
                for (int t = 0; t < tries; ++t)
                    done |= memcmp(tried[t], c, sizeof c) == 0;
                cg_net_patch p;
                if (done || cg_net_patch_of(net, c, &p) != CONVGEN_SUCCESS)
                    continue;
                /* among equals, the larger fragments: fewer patches, less overlap */
                double cost = cost_per_voxel(net, &p, b, host, volume, best) * (1 + 1e-9 / (double)(c[0] + c[1] + c[2]));
                if (cost <= best && cost < INFINITY) /* of equals, the first in ascending order */
                    best = cost, memcpy(m, c, sizeof c);
            }
    return best;
}
