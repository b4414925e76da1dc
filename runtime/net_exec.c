/* The network executor's pieces both modes share (net_exec.h): each layer's plan, where each
 * patch of a volume starts, packing a patch and placing its output, the copies of rows, and the
 * pipeline slot an item goes through. */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "net_exec.h"


convgen_status cg_net_plan_conv(convgen_net *n, int i, int64_t batch, int64_t k, const cg_net_tensor *t,
                                size_t workspace_limit, convgen_plan **plan)
{
    const cg_net_layer *l = &n->net.layers[i];
    convgen_conv_desc d = {.rank = n->net.rank, .n = batch, .c = t->c, .k = k,
                           .epilogue = CONVGEN_EPILOGUE_BIAS | (l->relu ? CONVGEN_EPILOGUE_RELU : 0)};
    cg_net_spatial(d.rank, t->ext, d.in);
    const int64_t size[3] = {l->size[0], l->size[1], l->size[2]};
    cg_net_spatial(d.rank, size, d.kernel);
    convgen_plan_options o = {.workspace_limit = workspace_limit, .effort = n->effort};
    convgen_status s = convgen_plan_conv_ex(n->ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_AUTO, &o, plan);
    if (s != CONVGEN_SUCCESS)
        return s;
    size_t ws = 0;
    convgen_plan_workspace_size(*plan, &ws);
    n->workspace_bytes = ws > n->workspace_bytes ? ws : n->workspace_bytes;
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_plan_pool(convgen_net *n, int i, convgen_pool_mode mode, int64_t batch, int64_t c,
                                const int64_t ext[3], convgen_plan **plan)
{
    const int *p = n->net.layers[i].size;
    convgen_pool_desc d = {.mode = mode, .rank = n->net.rank, .n = batch, .c = c};
    cg_net_spatial(d.rank, ext, d.in);
    for (int k = 0; k < d.rank; ++k)
        d.window[k] = p[3 - d.rank + k];
    return convgen_plan_pool(n->ctx, &d, plan);
}




void cg_net_patch_origin(const convgen_net *n, int64_t t, const int64_t tiles[3], const int64_t out[3], int64_t at[3])
{
    const int64_t idx[3] = {t / (tiles[1] * tiles[2]), t / tiles[2] % tiles[1], t % tiles[2]};
    for (int d = 0; d < 3; ++d) {
        at[d] = idx[d] * n->patch.out[d];
        at[d] = at[d] + n->patch.out[d] > out[d] ? out[d] - n->patch.out[d] : at[d];
        at[d] = at[d] < 0 ? 0 : at[d]; /* a patch larger than the volume: its one patch runs past the edge */
    }
}

/* Packing a patch and placing its output are row copies between pageable and pinned memory,
 * several host threads at once: one core moves some 5 GB/s, and where a volume is one patch
 * (n337's 448^3: 370 MB in, 600 MB out) nothing else overlaps them. */
#define HOST_THREADS 8

typedef struct planes_job {
    const convgen_net *n;
    const float *from;
    float *to;
    const int64_t *vol, *at; /* the volume's (in or out) extent, the patch's origin in it */
    int64_t first, end;      /* the patch's planes ([C or K][depth]) this job copies */
    bool pack;
} planes_job;

/* Planes [first, end) of a patch: packed from x (zeros past the volume's edge), or placed into
 * y (only what lies inside it). */
static void *copy_planes(void *arg)
{
    const planes_job *j = arg;
    const int64_t *e = j->pack ? j->n->patch.in : j->n->patch.out, *v = j->vol, *at = j->at;
    const int64_t depth = cg_net_inside(e[0], at[0], v[0]), rows = cg_net_inside(e[1], at[1], v[1]),
                  width = cg_net_inside(e[2], at[2], v[2]);
    for (int64_t q = j->first; q < j->end; ++q) {
        const int64_t c = q / e[0], z = q % e[0];
        for (int64_t r = 0; r < e[1]; ++r) {
            const int64_t packed = (q * e[1] + r) * e[2], dense = ((c * v[0] + at[0] + z) * v[1] + at[1] + r) * v[2] + at[2];
            bool in = z < depth && r < rows;
            if (j->pack) {
                if (in)
                    memcpy(j->to + packed, j->from + dense, (size_t)width * sizeof(float));
                memset(j->to + packed + (in ? width : 0), 0, (size_t)(e[2] - (in ? width : 0)) * sizeof(float));
            } else if (in) {
                memcpy(j->to + dense, j->from + packed, (size_t)width * sizeof(float));
            }
        }
    }
    return NULL;
}

/* The threads a copy of `bytes` takes: one below a few MiB (starting threads costs more than
 * they save), else up to HOST_THREADS of the cores this process may run on. */
static int64_t copy_threads(double bytes)
{
    cpu_set_t set;
    int64_t cores = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    if (bytes < (double)(4 << 20) || cores < 1)
        return 1;
    return cores < HOST_THREADS ? cores : HOST_THREADS;
}

/* `planes` planes split over copy_threads' threads, this one doing the first share; a thread
 * that cannot start leaves its share to this one. */
static void copy_patch(const planes_job *all, int64_t planes)
{
    const int64_t *e = all->pack ? all->n->patch.in : all->n->patch.out;
    int64_t count = copy_threads(4.0 * (double)planes * (double)e[1] * (double)e[2]);
    count = count < planes ? count : planes;
    planes_job job[HOST_THREADS];
    pthread_t thread[HOST_THREADS];
    bool started[HOST_THREADS] = {false};
    for (int64_t t = 0; t < count; ++t) {
        job[t] = *all;
        job[t].first = planes * t / count, job[t].end = planes * (t + 1) / count;
        if (t > 0)
            started[t] = pthread_create(&thread[t], NULL, copy_planes, &job[t]) == 0;
    }
    copy_planes(&job[0]);
    for (int64_t t = 1; t < count; ++t)
        if (started[t])
            pthread_join(thread[t], NULL);
        else
            copy_planes(&job[t]);
}

void cg_net_pack_input(const convgen_net *n, const float *x, const int64_t in[3], const int64_t origin[3], float *dst)
{
    const planes_job job = {.n = n, .from = x, .to = dst, .vol = in, .at = origin, .pack = true};
    copy_patch(&job, n->net.c * n->patch.in[0]);
}

void cg_net_place_output(const convgen_net *n, const float *src, float *y, const int64_t out[3],
                         const int64_t origin[3])
{
    const planes_job job = {.n = n, .from = src, .to = y, .vol = out, .at = origin, .pack = false};
    copy_patch(&job, n->patch.shape[n->net.count].c * n->patch.out[0]);
}


convgen_status cg_net_copy_rows(const convgen_net *n, bool up, void *host, size_t host_pitch, CUdeviceptr dev,
                                size_t dev_pitch, size_t width, size_t height, CUstream stream)
{
    const cg_driver *drv = n->ctx->drv;
    if (height == 1 || (host_pitch == width && dev_pitch == width))
        return cg_net_cuda(n, up ? drv->MemcpyHtoDAsync(dev, host, width * height, stream)
                                 : drv->MemcpyDtoHAsync(host, dev, width * height, stream),
                           up ? "cuMemcpyHtoDAsync" : "cuMemcpyDtoHAsync");
    const size_t max_pitch = ((size_t)1 << 31) - 1; /* CU_DEVICE_ATTRIBUTE_MAX_PITCH on every GPU so far */
    if (host_pitch > max_pitch || dev_pitch > max_pitch) {
        convgen_status s = CONVGEN_SUCCESS;
        for (size_t r = 0; r < height && s == CONVGEN_SUCCESS; ++r)
            s = cg_net_copy_rows(n, up, (char *)host + r * host_pitch, width, dev + r * dev_pitch, width, width, 1, stream);
        return s;
    }
    CUDA_MEMCPY2D c = {.WidthInBytes = width, .Height = height};
    c.srcMemoryType = up ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    c.dstMemoryType = up ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    if (up)
        c.srcHost = host, c.srcPitch = host_pitch, c.dstDevice = dev, c.dstPitch = dev_pitch;
    else
        c.srcDevice = dev, c.srcPitch = dev_pitch, c.dstHost = host, c.dstPitch = host_pitch;
    return cg_net_cuda(n, drv->Memcpy2DAsync(&c, stream), "cuMemcpy2DAsync");
}

/* The first in->kept bytes of each of in's rows, from the other slot's input into dev_in, on n->up:
 * one 2-D copy, or a copy a row past the driver's 2 GiB pitch. */
static convgen_status copy_kept_rows(convgen_net *n, const slot_input *in, CUdeviceptr dev_in)
{
    const cg_driver *drv = n->ctx->drv;
    const size_t max_pitch = ((size_t)1 << 31) - 1; /* as cg_net_copy_rows */
    if (in->kept_pitch > max_pitch || in->width > max_pitch) {
        convgen_status s = CONVGEN_SUCCESS;
        for (size_t r = 0; r < in->height && s == CONVGEN_SUCCESS; ++r)
            s = cg_net_cuda(n, drv->MemcpyDtoDAsync(dev_in + r * in->width, in->kept_from + r * in->kept_pitch, in->kept,
                                                    n->up), "cuMemcpyDtoDAsync (the rows kept)");
        return s;
    }
    CUDA_MEMCPY2D c = {.WidthInBytes = in->kept, .Height = in->height, .srcMemoryType = CU_MEMORYTYPE_DEVICE,
                       .srcDevice = in->kept_from, .srcPitch = in->kept_pitch, .dstMemoryType = CU_MEMORYTYPE_DEVICE,
                       .dstDevice = dev_in, .dstPitch = in->width};
    return cg_net_cuda(n, drv->Memcpy2DAsync(&c, n->up), "cuMemcpy2DAsync (the rows kept)");
}

convgen_status cg_net_through_slot(convgen_net *n, pipe_slot *p, const slot_input *in, const slot_steps *steps,
                                   convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    CUstream cs = (CUstream)stream;
    convgen_status s = CONVGEN_SUCCESS;
    if (p->used) /* dev_in free once the slot's last item computed */
        s = cg_net_cuda(n, drv->StreamWaitEvent(n->up, p->computed, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS && in->kept) /* on n->up: after the other slot's upload, before its next */
        s = copy_kept_rows(n, in, p->dev_in);
    if (s == CONVGEN_SUCCESS && in->width > in->kept)
        s = cg_net_copy_rows(n, true, (void *)((const char *)in->src + in->kept), in->pitch, p->dev_in + in->kept,
                             in->width, in->width - in->kept, in->height, n->up);
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->EventRecord(p->uploaded, n->up), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->StreamWaitEvent(cs, p->uploaded, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS && p->used) /* dev_out free once the slot's last output came down */
        s = cg_net_cuda(n, drv->StreamWaitEvent(cs, p->downloaded, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = steps->compute(n, p, stream, steps->arg);
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->EventRecord(p->computed, cs), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->StreamWaitEvent(n->down, p->computed, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = steps->download(n, p, steps->arg);
    if (s == CONVGEN_SUCCESS)
        s = cg_net_cuda(n, drv->EventRecord(p->downloaded, n->down), "cuEventRecord");
    p->used = true;
    return s;
}


/* A convolution plan's algorithm and time into `how`: measured where AUTO timed it (or wisdom
 * recorded it), else the cost model's estimate; its milliseconds, < 0 where none is known. */
double cg_net_layer_ms(const convgen_plan *plan, char *how, size_t size)
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
