/* Creating a network executor (net_exec.h): its limits, and its patch, chosen one of three ways.
 *
 * The cost model (generator/net/net_segments.c) ranks the patches of both modes, and is right
 * about their order where one patch is clearly better; but two within a few tens of percent of
 * each other are a coin toss for it: its convolution rates are fitted over many layers, and the
 * host mode's chunks meet the bus in ways it only bounds. So at effort measure (on a GPU) the
 * model's best few run, each as the real pipeline over a volume of one patch and of two (the
 * difference is a patch in steady state, the rest what the first and last patch leave
 * unoverlapped), and the fastest for the volume wins. Their layers are planned at the
 * network's effort, so each convolution runs the algorithm it will run with. The winner is kept
 * as wisdom (wisdom.h), keyed by the GPU, the network, the volume and the limits: the next
 * network of the same plans it without timing anything. At effort estimate, or offline, the
 * model's best stands; a caller's fragment extent is taken as given. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_exec.h"
#include "reference.h"
#include "wisdom.h"

#define OFFLINE_MEMORY ((size_t)16 << 30) /* what an offline context plans for without a limit */
#define OFFLINE_BUS 25e9 /* host <-> device bytes/s an offline context plans for: PCIe 4 x16, pinned */

static size_t weight_bytes(const cg_net *net)
{
    size_t bytes = 0;
    for (int i = 0; i < net->count; ++i)
        if (net->layers[i].kind == CG_NET_CONV)
            bytes += (size_t)(cg_net_weight_count(net, i) + net->layers[i].k) * sizeof(float);
    return bytes;
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

/* A quarter of the machine's memory: the host mode's pinned tensors by default. */
static size_t default_host_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? (size_t)pages / 4 * (size_t)page : (size_t)4 << 30;
}
/* ---- the patch, measured ---- */

/* The candidates: the model's best of each mode, then its next best, while within this factor
 * of the best and at most this many. */
#define MEASURE_WITHIN 1.3
#define MEASURE_MOST 3
#define EXHAUSTIVE_WITHIN 2.0
#define EXHAUSTIVE_MOST CG_NET_MAX_CANDIDATES
#define TIMED_RUNS 2 /* each volume's, the least taken, after one that warms up */

static double volume_seconds(const convgen_net *n, const int64_t volume[3], double per_voxel)
{
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    double voxels = 1;
    for (int d = 3 - n->net.rank; d < 3; ++d) {
        if (!volume[d])
            return per_voxel * 1e6;
        voxels *= (double)(volume[d] - fov[d] + 1);
    }
    return per_voxel * voxels;
}

static wisdom_net_key key_of(const convgen_net *n, const int64_t volume[3], convgen_net_mode asked)
{
    wisdom_net_key k = {.memory_limit = n->memory_limit, .host_limit = n->host_limit, .mode = asked};
    wisdom_gpu_name(k.gpu, sizeof k.gpu, n->ctx->device_name);
    snprintf(k.arch, sizeof k.arch, "%s", n->ctx->arch);
    snprintf(k.version, sizeof k.version, "%s", CONVGEN_VERSION_STRING);
    cg_net_text(&n->net, k.net, sizeof k.net); /* CG_NET_TEXT_MAX holds any network */
    memcpy(k.volume, volume, sizeof k.volume);
    return k;
}

static int by_modeled(const void *a, const void *b)
{
    double x = ((const cg_net_candidate *)a)->modeled, y = ((const cg_net_candidate *)b)->modeled;
    return (x > y) - (x < y);
}

/* Whether m is a permutation of k (the same extents, in another order). */
static bool permuted(const int64_t m[3], const int64_t k[3])
{
    int64_t a[3] = {m[0], m[1], m[2]}, b[3] = {k[0], k[1], k[2]};
    for (int i = 0; i < 3; ++i)
        for (int j = i + 1; j < 3; ++j) {
            int64_t t;
            if (a[j] < a[i])
                t = a[i], a[i] = a[j], a[j] = t;
            if (b[j] < b[i])
                t = b[i], b[i] = b[j], b[j] = t;
        }
    return memcmp(a, b, sizeof a) == 0;
}

/* The model's candidates into c, modeled fastest first, those within `within` of its best: each
 * allowed mode's best, then the next best of either, a patch the model rates the same as one
 * listed in another order (n337's 30x40x40, 40x30x40, 40x40x30 for a cube) left out, so that
 * the few timed differ in more than the order of their extents. Their count. */
static int model_candidates(const convgen_net *n, const int64_t volume[3], convgen_net_mode asked, double within,
                            int most, cg_net_candidate *c)
{
    enum { LOOKS = 12 }; /* each a search of the patches: about a second for n337's host mode */
    const cg_net_budget b = cg_net_budget_of(n);
    int64_t tried[2][LOOKS][3];
    double next[2];
    int tries[2] = {0, 0}, count = 0;
    for (int h = 0; h < 2; ++h) {
        bool skip = asked == (h ? CONVGEN_NET_DEVICE : CONVGEN_NET_HOST);
        next[h] = skip ? INFINITY : cg_net_best_fragment(&n->net, &b, h, volume, tried[h], 0, tried[h][0]);
    }
    double best = fmin(next[0], next[1]);
    bool seeded[2] = {false, false};
    while (count < most) {
        int h = !seeded[0] ? 0 : !seeded[1] ? 1 : next[1] < next[0]; /* each mode's best first */
        seeded[h] = true;
        if (next[h] == INFINITY || next[h] > best * within) { /* nothing more of this mode within the margin */
            next[h] = INFINITY;
            if (next[!h] == INFINITY)
                break;
            continue;
        }
        const int64_t *m = tried[h][tries[h]++];
        double modeled = volume_seconds(n, volume, next[h]);
        bool repeat = false;
        for (int i = 0; i < count; ++i)
            repeat |= c[i].mode == (h ? CONVGEN_NET_HOST : CONVGEN_NET_DEVICE) && permuted(m, c[i].m) &&
                      fabs(modeled - c[i].modeled) <= c[i].modeled / 100;
        if (!repeat) {
            cg_net_candidate *k = &c[count++];
            *k = (cg_net_candidate){.mode = h ? CONVGEN_NET_HOST : CONVGEN_NET_DEVICE, .measured = -1, .modeled = modeled};
            memcpy(k->m, m, sizeof k->m);
        }
        next[h] = tries[h] < LOOKS ? cg_net_best_fragment(&n->net, &b, h, volume, tried[h], tries[h], tried[h][tries[h]])
                                   : INFINITY;
    }
    qsort(c, (size_t)count, sizeof *c, by_modeled);
    return count;
}

/* Seconds of convgen_net_infer over a volume of extent `ext` (depth first), the least of
 * TIMED_RUNS after one that warms up. */
static convgen_status time_volume(convgen_net *n, const float *x, float *y, const int64_t ext[3], double *seconds)
{
    int64_t in[CONVGEN_MAX_RANK];
    cg_net_spatial(n->net.rank, ext, in);
    *seconds = INFINITY;
    convgen_status s = CONVGEN_SUCCESS;
    for (int r = 0; r <= TIMED_RUNS && s == CONVGEN_SUCCESS; ++r) {
        double start = cg_now_s();
        s = convgen_net_infer(n, x, in, y, NULL);
        if (r > 0)
            *seconds = fmin(*seconds, cg_now_s() - start);
    }
    return s;
}

/* The planned patch's seconds for the volume (a million output voxels where not given): a
 * volume of one patch takes t1, one of two patches side by side (along the width) t2; a patch
 * in steady state t2 - t1, and the first and last patch's unoverlapped part t1 - (t2 - t1). */
static convgen_status time_patch(convgen_net *n, const int64_t volume[3], double *seconds)
{
    const cg_net_patch *p = &n->patch;
    int64_t one[3], two[3], fov[3];
    memcpy(one, p->in, sizeof one), memcpy(two, p->in, sizeof two);
    two[2] += p->out[2];
    double in_elems = (double)n->net.c * (double)two[0] * (double)two[1] * (double)two[2],
           out_elems = (double)p->shape[n->net.count].c * (double)p->out[0] * (double)p->out[1] * 2.0 * (double)p->out[2];
    if (in_elems * 4 > (double)SIZE_MAX / 2 || out_elems * 4 > (double)SIZE_MAX / 2)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "a volume of two patches passes the address space");
    float *x = malloc((size_t)in_elems * sizeof *x), *y = malloc((size_t)out_elems * sizeof *y);
    convgen_status s = x && y ? CONVGEN_SUCCESS
                              : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of host memory for a volume of two patches "
                                        "(%.0f MiB)", (in_elems + out_elems) * 4 / 1048576.0);
    uint64_t state = 12345;
    if (s == CONVGEN_SUCCESS)
        cg_fill_random(x, (int64_t)in_elems, &state);
    double t1 = 0, t2 = 0;
    if (s == CONVGEN_SUCCESS)
        s = time_volume(n, x, y, one, &t1);
    if (s == CONVGEN_SUCCESS)
        s = time_volume(n, x, y, two, &t2);
    free(x), free(y);
    if (s != CONVGEN_SUCCESS)
        return s;
    double steady = t2 - t1 > 0 ? t2 - t1 : t2 / 2, edges = t1 - steady > 0 ? t1 - steady : 0;
    cg_net_field_of_view(&n->net, fov);
    double patches = 1, voxels = 1;
    bool known = true;
    for (int d = 3 - n->net.rank; d < 3; ++d) {
        if (!volume[d]) {
            known = false, voxels *= (double)p->out[d];
            continue;
        }
        int64_t out = volume[d] - fov[d] + 1;
        patches *= (double)((out + p->out[d] - 1) / p->out[d]);
        voxels *= (double)out;
    }
    *seconds = volume_seconds(n, volume, (patches * steady + (known ? edges : 0)) / voxels);
    return CONVGEN_SUCCESS;
}

/* Candidate c planned, its buffers made, timed, the buffers released. */
static void time_candidate(convgen_net *n, const int64_t volume[3], cg_net_candidate *c)
{
    convgen_status s = cg_net_plan_patch(n, c->m, c->mode);
    if (s == CONVGEN_SUCCESS)
        s = cg_net_allocate(n);
    if (s == CONVGEN_SUCCESS)
        s = convgen_net_random_weights(n, 1);
    if (s == CONVGEN_SUCCESS)
        s = time_patch(n, volume, &c->measured);
    if (s != CONVGEN_SUCCESS) {
        c->measured = -1;
        snprintf(c->why, sizeof c->why, "%s", convgen_last_error());
        cg_debug("net: the patch of fragments %lldx%lldx%lld (%s mode) did not run: %s", (long long)c->m[0],
                 (long long)c->m[1], (long long)c->m[2], c->mode == CONVGEN_NET_HOST ? "host" : "device", c->why);
    }
    cg_net_free(n);
}

static int by_measured(const void *a, const void *b)
{
    double x = ((const cg_net_candidate *)a)->measured, y = ((const cg_net_candidate *)b)->measured;
    x = x < 0 ? INFINITY : x, y = y < 0 ? INFINITY : y;
    return (x > y) - (x < y);
}

static convgen_status from_wisdom(convgen_net *n, const wisdom_net_key *key)
{
    wisdom_net_entry e;
    if (!wisdom_net_lookup(key, n->effort, &e))
        return CONVGEN_ERROR_NOT_SUPPORTED;
    convgen_status s = cg_net_plan_patch(n, e.fragment, (convgen_net_mode)e.mode);
    if (s != CONVGEN_SUCCESS) { /* measured under a limit a little larger (within 1/32), say */
        cg_debug("net: wisdom's patch of fragments %lldx%lldx%lld failed to plan (%s): measuring again",
                (long long)e.fragment[0], (long long)e.fragment[1], (long long)e.fragment[2], convgen_last_error());
        return CONVGEN_ERROR_NOT_SUPPORTED;
    }
    n->patch_by = CG_NET_PATCH_WISDOM;
    n->tried = 1;
    n->candidate[0] = (cg_net_candidate){.mode = (convgen_net_mode)e.mode, .measured = e.seconds, .modeled = -1};
    memcpy(n->candidate[0].m, e.fragment, sizeof e.fragment);
    return CONVGEN_SUCCESS;
}

/* The cost model's best few, timed; the fastest kept as wisdom. */
static convgen_status tune_patch(convgen_net *n, const int64_t volume[3], convgen_net_mode asked,
                                 const wisdom_net_key *key)
{
    bool exhaustive = n->effort == CONVGEN_EFFORT_EXHAUSTIVE;
    cg_net_candidate c[CG_NET_MAX_CANDIDATES];
    int count = model_candidates(n, volume, asked, exhaustive ? EXHAUSTIVE_WITHIN : MEASURE_WITHIN,
                                 exhaustive ? EXHAUSTIVE_MOST : MEASURE_MOST, c);
    if (count < 2)
        return CONVGEN_ERROR_NOT_SUPPORTED; /* nothing to compare: the model's choice */
    for (int i = 0; i < count; ++i)
        time_candidate(n, volume, &c[i]);
    qsort(c, (size_t)count, sizeof *c, by_measured);
    n->tried = count; /* explain lists them, also where none ran */
    memcpy(n->candidate, c, sizeof *c * (size_t)count);
    if (c[0].measured < 0)
        return CONVGEN_ERROR_NOT_SUPPORTED; /* none ran: the model's choice, whose own failure says why */
    convgen_status s = cg_net_plan_patch(n, c[0].m, c[0].mode);
    if (s != CONVGEN_SUCCESS)
        return s;
    n->patch_by = CG_NET_PATCH_MEASURED;
    wisdom_net_entry e = {.key = *key, .effort = n->effort, .mode = c[0].mode, .seconds = c[0].measured};
    memcpy(e.fragment, c[0].m, sizeof e.fragment);
    if (wisdom_net_add(&e) != CONVGEN_SUCCESS)
        cg_warn("net: %s", convgen_last_error());
    else
        wisdom_save_env();
    return CONVGEN_SUCCESS;
}

/* ---- the patch ---- */

/* The caller's fragment extent in the asked mode; under AUTO in device mode where its tensors
 * and weights fit the memory limit, else in host mode. */
static convgen_status plan_asked(convgen_net *n, const int64_t m[3], convgen_net_mode asked)
{
    if (asked != CONVGEN_NET_AUTO)
        return cg_net_plan_patch(n, m, asked);
    convgen_status s = cg_net_plan_patch(n, m, CONVGEN_NET_DEVICE);
    return s == CONVGEN_ERROR_WORKSPACE_LIMIT ? cg_net_plan_patch(n, m, CONVGEN_NET_HOST) : s;
}

/* The caller's fragment extent, or the best that plans (a convolution's workspace may not fit
 * what the tensors leave: then the next best); under AUTO the better of the two modes' bests. */
static convgen_status choose_patch(convgen_net *n, const int64_t asked[3], const int64_t volume_asked[3],
                                   convgen_net_mode asked_mode)
{
    int64_t m[3], volume[3] = {0, 0, 0};
    int skip = 3 - n->net.rank;
    int64_t fov[3];
    cg_net_field_of_view(&n->net, fov);
    for (int d = skip; d < 3; ++d) {
        volume[d] = volume_asked[d - skip];
        if (volume[d] && volume[d] < fov[d])
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "volume[%d] = %lld is smaller than the network's field of view, "
                           "%lld: no output", d - skip, (long long)volume[d], (long long)fov[d]);
    }
    memcpy(n->volume, volume, sizeof volume);
    if (asked[0] || asked[1] || asked[2]) {
        for (int d = 0; d < n->net.rank; ++d)
            if (asked[d] < 1)
                return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "fragment[%d] = %lld: give every dimension's, or none",
                               d, (long long)asked[d]);
        for (int d = 0; d < 3; ++d)
            m[d] = d < skip ? 1 : asked[d - skip];
        n->patch_by = CG_NET_PATCH_GIVEN;
        return plan_asked(n, m, asked_mode);
    }
    /* an earlier measurement's, at any effort (estimate too: a measured patch beats the model's
     * guess) and offline for any GPU of the architecture */
    wisdom_load_env();
    wisdom_net_key key = key_of(n, volume, asked_mode);
    if (n->ctx->offline)
        key.gpu[0] = '\0';
    if (from_wisdom(n, &key) == CONVGEN_SUCCESS)
        return CONVGEN_SUCCESS;
    if (n->effort != CONVGEN_EFFORT_ESTIMATE && !n->ctx->offline) {
        convgen_status s = tune_patch(n, volume, asked_mode, &key);
        if (s != CONVGEN_ERROR_NOT_SUPPORTED)
            return s;
    }
    n->patch_by = CG_NET_PATCH_MODELED;
    int64_t tried[2][8][3];
    int tries[2] = {0, 0};
    convgen_status s = CONVGEN_ERROR_WORKSPACE_LIMIT;
    const cg_net_budget b = cg_net_budget_of(n);
    while (s == CONVGEN_ERROR_WORKSPACE_LIMIT && tries[0] + tries[1] < 8) {
        int64_t dm[3], hm[3];
        double device = asked_mode == CONVGEN_NET_HOST ? INFINITY
                                                       : cg_net_best_fragment(&n->net, &b, false, volume, tried[0], tries[0], dm);
        double host = asked_mode == CONVGEN_NET_DEVICE ? INFINITY
                                                       : cg_net_best_fragment(&n->net, &b, true, volume, tried[1], tries[1], hm);
        if (device == INFINITY && host == INFINITY)
            return cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "memory_limit = %zu bytes%s: no patch fits", n->memory_limit,
                           asked_mode == CONVGEN_NET_DEVICE ? " (device mode)" : " and the host mode's");
        int h = host < device;
        memcpy(m, h ? hm : dm, sizeof m);
        memcpy(tried[h][tries[h]++], m, sizeof m);
        s = cg_net_plan_patch(n, m, h ? CONVGEN_NET_HOST : CONVGEN_NET_DEVICE);
    }
    return s;
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
    if (s == CONVGEN_SUCCESS && (o.mode < CONVGEN_NET_AUTO || o.mode > CONVGEN_NET_HOST))
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "mode = %d is not a convgen_net_mode", o.mode);
    if (s == CONVGEN_SUCCESS && (o.effort < CONVGEN_EFFORT_MEASURE || o.effort > CONVGEN_EFFORT_EXHAUSTIVE))
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "effort = %d is not a convgen_effort", o.effort);
    if (s == CONVGEN_SUCCESS) {
        n->memory_limit = o.memory_limit ? o.memory_limit : default_memory(ctx);
        if (!n->memory_limit)
            s = cg_fail(CONVGEN_ERROR_CUDA, "memory_limit = 0 and the device's free memory could not be read: give one");
        n->host_limit = o.host_memory_limit ? o.host_memory_limit : default_host_memory();
        n->effort = o.effort;
        n->weight_bytes = weight_bytes(&n->net);
        n->bw_up = n->bw_down = OFFLINE_BUS;
        if (s == CONVGEN_SUCCESS && !ctx->offline && o.mode != CONVGEN_NET_DEVICE && cg_net_measure_bus(n) != CONVGEN_SUCCESS)
            n->bw_up = n->bw_down = OFFLINE_BUS; /* (a full device, say) the host mode is planned on the default */
        if (s == CONVGEN_SUCCESS)
            s = choose_patch(n, o.fragment, o.volume, (convgen_net_mode)o.mode);
    }
    if (s == CONVGEN_SUCCESS && !ctx->offline) {
        s = cg_net_allocate(n);
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

