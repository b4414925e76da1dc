/* The PAD and CLIP op kinds (op_kinds.h): an operand into the zero-padded images of the Fourier
 * basis (overlap-save tiles too), and the output back out of them, scaled (convolution in parts
 * summed over its shifts). Their kernels are program.c's; the cost is the copy bandwidth. */
#include "fftconv.h"
#include "cpu_dft.h"
#include "op_kinds.h"

/* The source index of padded position q along one dimension, or -1 (the pad kernel's rule). */
static int64_t pad_source(const cg_placement *pl, int64_t size, int64_t q)
{
    int64_t v = pl->mirror && q ? size - q : q;
    if (v >= pl->limit)
        return -1;
    int64_t step = pl->step < 0 ? -pl->step : pl->step, t = pl->step < 0 ? pl->base - v : v - pl->base;
    if (t < 0 || t % step)
        return -1;
    return t / step < pl->count ? t / step : -1;
}

void fc_pad_tile_index(const cg_pad_op *op, int64_t t, int64_t *tile)
{
    for (int d = op->rank - 1; d >= 0; --d) {
        int64_t n = op->dims[d].tiles > 0 ? op->dims[d].tiles : 1;
        tile[d] = t % n;
        t /= n;
    }
}

float fc_pad_value(const cg_pad_op *op, const float *image, const int64_t *tile, const int64_t *q)
{
    int64_t counts[CONVGEN_MAX_RANK], src[CONVGEN_MAX_RANK];
    for (int d = 0; d < op->rank; ++d) {
        cg_placement shifted = op->dims[d];
        shifted.base -= tile[d] * shifted.tile_step;
        counts[d] = shifted.count;
        if ((src[d] = pad_source(&shifted, op->size[d], q[d])) < 0)
            return 0.0f;
    }
    return image[cg_index_flat(src, counts, op->rank)];
}

int64_t fc_pad_operand_points(const cg_pad_op *op)
{
    int64_t points = 1;
    for (int d = 0; d < op->rank; ++d)
        points *= op->dims[d].count;
    return points;
}

static convgen_status evaluate_pad(const cg_kernel_op *kop, const cg_op_buffers *b)
{
    const cg_pad_op *op = &kop->pad;
    int64_t points = 1, tensor_points = fc_pad_operand_points(op), tiles = op->tiles > 0 ? op->tiles : 1;
    for (int d = 0; d < op->rank; ++d)
        points *= op->size[d];
    float *padded = (float *)(b->ws + op->real_offset);
    for (int64_t g = 0; g < tiles * op->images; ++g) { /* [tile][image] */
        int64_t image = g % op->images, tile[CONVGEN_MAX_RANK], q[CONVGEN_MAX_RANK] = {0};
        fc_pad_tile_index(op, g / op->images, tile);
        do
            padded[g * points + cg_index_flat(q, op->size, op->rank)] =
                fc_pad_value(op, b->in[op->operand] + image * tensor_points, tile, q);
        while (cg_index_next(q, op->size, op->rank));
    }
    return CONVGEN_SUCCESS;
}

/* Convolution in parts: tap o of each image, the sum over the shifts that reach it. */
static void evaluate_parts_clip(const cg_pad_op *op, const cg_op_buffers *b)
{
    int64_t counts[CONVGEN_MAX_RANK], shifts[CONVGEN_MAX_RANK], points = 1, out_points = 1;
    for (int d = 0; d < op->rank; ++d) {
        counts[d] = op->dims[d].count, shifts[d] = op->dims[d].shifts;
        points *= op->size[d], out_points *= counts[d];
    }
    const float *padded = (const float *)(b->ws + op->real_offset);
    for (int64_t g = 0; g < op->images; ++g) {
        int64_t o[CONVGEN_MAX_RANK] = {0};
        do {
            double sum = 0;
            int64_t sh[CONVGEN_MAX_RANK] = {0};
            do {
                int64_t pos[CONVGEN_MAX_RANK];
                bool reached = true;
                for (int d = 0; d < op->rank; ++d) {
                    const cg_placement *pl = &op->dims[d];
                    int64_t lag = pl->base + pl->step * o[d] - sh[d] * pl->block;
                    reached &= lag > -pl->block && lag < pl->block;
                    pos[d] = lag < 0 ? lag + op->size[d] : lag;
                }
                if (reached)
                    sum += padded[(cg_index_flat(sh, shifts, op->rank) * op->images + g) * points +
                                  cg_index_flat(pos, op->size, op->rank)];
            } while (cg_index_next(sh, shifts, op->rank));
            b->out[g * out_points + cg_index_flat(o, counts, op->rank)] = (float)(sum * op->scale);
        } while (cg_index_next(o, counts, op->rank));
    }
}

static convgen_status evaluate_clip(const cg_kernel_op *kop, const cg_op_buffers *b)
{
    const cg_pad_op *op = &kop->pad;
    if (op->dims[0].shifts > 0) {
        evaluate_parts_clip(op, b);
        return CONVGEN_SUCCESS;
    }
    int64_t counts[CONVGEN_MAX_RANK], points = 1, out_points = 1;
    for (int d = 0; d < op->rank; ++d)
        counts[d] = op->dims[d].count, points *= op->size[d], out_points *= counts[d];
    const float *padded = (const float *)(b->ws + op->real_offset);
    for (int64_t g = 0; g < op->images; ++g) {
        int64_t o[CONVGEN_MAX_RANK] = {0}, pos[CONVGEN_MAX_RANK];
        do {
            int64_t tile = 0;
            for (int d = 0; d < op->rank; ++d) { /* tiled: tile o / step, at o % step */
                const cg_placement *pl = &op->dims[d];
                int64_t t = pl->tile_step ? o[d] / pl->tile_step : 0, r = o[d] - t * pl->tile_step;
                tile = tile * (pl->tiles > 0 ? pl->tiles : 1) + t;
                pos[d] = pl->base + pl->step * r;
            }
            b->out[g * out_points + cg_index_flat(o, counts, op->rank)] =
                (float)(padded[(tile * op->images + g) * points + cg_index_flat(pos, op->size, op->rank)] * op->scale);
        } while (cg_index_next(o, counts, op->rank));
    }
    return CONVGEN_SUCCESS;
}

/* The padded images written (or read) once, the operand read (or written). */
static cg_work pad_work(const cg_kernel_op *kop, int sm_count)
{
    (void)sm_count;
    const cg_pad_op *op = &kop->pad;
    cg_work w = {.efficiency = 1, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
    w.bytes = 8 * cg_product(op->size, op->rank) * (double)op->images * (op->tiles > 0 ? op->tiles : 1);
    return w;
}

static const char *describe_pad(const cg_kernel_op *op)
{
    return op->pad.operand ? "zero-pad w into the transform's images" : "zero-pad the input into the transform's images";
}

static const char *describe_clip(const cg_kernel_op *op)
{
    (void)op;
    return "clip the output out of the transform's images";
}

const cg_op_class cg_op_pad = {CG_OP_PAD, "pad", evaluate_pad, pad_work, describe_pad};
const cg_op_class cg_op_clip = {CG_OP_CLIP, "clip", evaluate_clip, pad_work, describe_clip};
