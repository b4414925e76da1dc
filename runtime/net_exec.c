/* The network executor's pieces both modes share (net_exec.h): each layer's plan, where each
 * patch of a volume starts, packing a patch and placing its output, the copies of rows, and the
 * pipeline slot an item goes through. */
#include <math.h>
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

/* The elements of [0, e) that lie inside [0, in) from `origin` on. */
static int64_t inside(int64_t e, int64_t origin, int64_t in)
{
    int64_t left = in - origin;
    return left < 0 ? 0 : left < e ? left : e;
}

/* x [C][in] at `origin` into the packed patch [C][patch.in]; where the patch runs past the
 * volume's edge, zeros (the outputs they reach lie past the volume's and are not placed). */
void cg_net_pack_input(const convgen_net *n, const float *x, const int64_t in[3], const int64_t origin[3], float *dst)
{
    const int64_t *e = n->patch.in;
    const int64_t depth = inside(e[0], origin[0], in[0]), rows = inside(e[1], origin[1], in[1]),
                  width = inside(e[2], origin[2], in[2]);
    for (int64_t c = 0; c < n->net.c; ++c)
        for (int64_t z = 0; z < e[0]; ++z)
            for (int64_t r = 0; r < e[1]; ++r, dst += e[2]) {
                int64_t copied = z < depth && r < rows ? width : 0;
                if (copied)
                    memcpy(dst, x + ((c * in[0] + origin[0] + z) * in[1] + origin[1] + r) * in[2] + origin[2],
                           (size_t)copied * sizeof *dst);
                memset(dst + copied, 0, (size_t)(e[2] - copied) * sizeof *dst);
            }
}

/* The dense patch [K][patch.out] into y [K][out] at `origin`: the part inside out. */
void cg_net_place_output(const convgen_net *n, const float *src, float *y, const int64_t out[3],
                         const int64_t origin[3])
{
    const int64_t *e = n->patch.out;
    const int64_t depth = inside(e[0], origin[0], out[0]), rows = inside(e[1], origin[1], out[1]),
                  width = inside(e[2], origin[2], out[2]);
    for (int64_t k = 0; k < n->patch.shape[n->net.count].c; ++k)
        for (int64_t z = 0; z < e[0]; ++z)
            for (int64_t r = 0; r < e[1]; ++r, src += e[2])
                if (z < depth && r < rows)
                    memcpy(y + ((k * out[0] + origin[0] + z) * out[1] + origin[1] + r) * out[2] + origin[2], src,
                           (size_t)width * sizeof *src);
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

convgen_status cg_net_through_slot(convgen_net *n, pipe_slot *p, const slot_input *in, const slot_steps *steps,
                                   convgen_stream stream)
{
    const cg_driver *drv = n->ctx->drv;
    CUstream cs = (CUstream)stream;
    convgen_status s = CONVGEN_SUCCESS;
    if (p->used) /* dev_in free once the slot's last item computed */
        s = cg_net_cuda(n, drv->StreamWaitEvent(n->up, p->computed, 0), "cuStreamWaitEvent");
    if (s == CONVGEN_SUCCESS)
        s = cg_net_copy_rows(n, true, (void *)in->src, in->pitch, p->dev_in, in->width, in->width, in->height, n->up);
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
