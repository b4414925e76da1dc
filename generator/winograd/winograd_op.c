/* The WINOGRAD op kind (op_kinds.h) of the winograd and winograd-fused planners: on the CPU
 * (cg_program_evaluate) each tile through the exact matrices of its ops (rationals to doubles),
 * results stored in fp32 where the kernels store them; the CUDA of the kernels is checked on the
 * GPU. Its work for the cost model, and its description. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "op_kinds.h"
#include "util.h"
#include "winograd_plan.h"
#include "winograd_transform.h"

/* The fused kernels' measured rate: about 30% of the GEMMs' (convgen tune over the bench set:
 * bench/results/...-tune.csv); accgrad's less. */
#define WINOGRAD_FUSED_EFFICIENCY 0.21
#define WINOGRAD_FUSED_ACCGRAD_EFFICIENCY 0.19
/* sm_90's cluster kernel: 1.27x the one-block kernel's rate on V3 and F2, 1.24x on L5 (H200,
 * bench/results/nvidia-h200-2026-12-02-wino-cluster.md); since its weights came by bulk copies
 * (6g) 1.10x that on V3, 1.24x on L5 fprop, 0.94x on F2 fprop (nvidia-h200-2026-12-03-wino-tma.md);
 * with its weights blocked (6i) within 1-3% of 6g (nvidia-h200-2026-12-03-wino-blocked.md) */
#define WINOGRAD_FUSED_CLUSTER_EFFICIENCY 0.28
/* its 8 x 8 tiles (alpha 8; 128 outputs a block where the clusters fill the GPU, session 56),
 * since session 58 with its products on the tensor cores in 3xTF32, the tiles as the mma's A and
 * the weights as its B (every alpha-8 form, the only one with 128 outputs a block; H200,
 * bench/results/nvidia-h200-2026-12-04-wino-tensor.md): V3 0.812 ms, V4 0.760, L5 0.386 / 0.682,
 * S32 0.286 / 0.345, Z3 0.388, Z5 0.935 / 1.167 and F2 fprop 0.495 at 128 outputs a block, F2
 * bprop 0.534 at 64. These put its estimates at ~0.86 of its measured times, as `winograd`'s are
 * (0.81-0.94 there): the model then ranks it first on S32, behind `winograd` on V3, V4 fprop, L5
 * and Z3, as measured (V4 bprop, 4% ahead measured, it ranks behind). */
#define WINOGRAD_FUSED_CLUSTER_TENSOR_WIDE_EFFICIENCY 0.42
#define WINOGRAD_FUSED_CLUSTER_TENSOR_EFFICIENCY 0.34

typedef double wino_matrix[WINO_MAX_ALPHA][WINO_MAX_ALPHA];
typedef double wino_tile[WINO_MAX_ALPHA][WINO_MAX_ALPHA][WINO_MAX_ALPHA]; /* depth, height, width */

/* An op's matrices along its dimensions: a[d] is rows[d] x cols[d]. */
typedef struct op_matrices {
    wino_matrix a[CG_WINO_DIMS];
    int rows[CG_WINO_DIMS], cols[CG_WINO_DIMS];
} op_matrices;

/* The op's matrices (those of its stage, or of `stage` where it is not the op's own). */
static bool matrices_of(const cg_wino_op *op, cg_wino_stage stage, op_matrices *mx)
{
    for (int d = 0; d < CG_WINO_DIMS; ++d) {
        wino_transform t;
        char err[160];
        if (!wino_derive(op->m[d], op->r[d], &t, err, sizeof err))
            return false;
        const cg_q(*q)[WINO_MAX_ALPHA] = wino_matrix_rows(&t, stage, &mx->rows[d], &mx->cols[d]);
        for (int i = 0; i < mx->rows[d]; ++i)
            for (int j = 0; j < mx->cols[d]; ++j)
                mx->a[d][i][j] = cg_q_double(q[i][j]);
    }
    return true;
}

/* out = in with matrix a (rows x cols) applied along `axis`: in's extents are ext, out's the same
 * but rows along axis. */
static void apply_along(const wino_matrix a, int rows, int cols, int axis, const int ext[CG_WINO_DIMS],
                        const wino_tile in, wino_tile out)
{
    int o[CG_WINO_DIMS], e[CG_WINO_DIMS] = {ext[0], ext[1], ext[2]};
    e[axis] = rows;
    for (o[0] = 0; o[0] < e[0]; ++o[0])
        for (o[1] = 0; o[1] < e[1]; ++o[1])
            for (o[2] = 0; o[2] < e[2]; ++o[2]) {
                int i[CG_WINO_DIMS] = {o[0], o[1], o[2]};
                double sum = 0;
                for (i[axis] = 0; i[axis] < cols; ++i[axis])
                    sum += a[o[axis]][i[axis]] * in[i[0]][i[1]][i[2]];
                out[o[0]][o[1]][o[2]] = sum;
            }
}

/* v = d transformed by a2, a1 and a0 along its three dimensions in turn (the tensor product). */
static void transform(const op_matrices *mx, const wino_tile d, wino_tile v)
{
    wino_tile u, w;
    const int *r = mx->rows, *c = mx->cols;
    apply_along(mx->a[2], r[2], c[2], 2, (const int[]){c[0], c[1], c[2]}, d, u);
    apply_along(mx->a[1], r[1], c[1], 1, (const int[]){c[0], c[1], r[2]}, u, w);
    apply_along(mx->a[0], r[0], c[0], 0, (const int[]){c[0], r[1], r[2]}, w, v);
}

static int64_t tile_count(const cg_wino_op *op) { return op->tiles[0] * op->tiles[1] * op->tiles[2]; }
static int64_t points(const int64_t size[CG_WINO_DIMS]) { return size[0] * size[1] * size[2]; }

/* Every tile of every volume into the workspace as [e][channel][outer][tile] (the weights' single
 * tile blocked where op->u_rows says: wino_u_at), or in the tensor-core GEMM's pieces (op->pieces:
 * cg_tc_at, the padding zeros; where op->pieces.lo, each value's lo half after its piece). */
static void run_tiles(const cg_wino_op *op, const op_matrices *mx, const float *src, float *buf)
{
    int64_t tiles = tile_count(op), columns = op->outer * tiles,
            e_stride = op->pieces.rows ? wino_pieces_floats(op)
                       : op->u_rows    ? wino_u_floats(op, op->channels, op->outer)
                                       : op->channels * columns;
    if (op->pieces.rows)
        memset(buf, 0, sizeof *buf * (size_t)(e_stride * mx->rows[0] * mx->rows[1] * mx->rows[2]));
    const int *r = mx->rows, *c = mx->cols;
    wino_tile d, v;
    for (int64_t o = 0; o < op->outer; ++o)
        for (int64_t ch = 0; ch < op->channels; ++ch)
            for (int64_t t = 0; t < tiles; ++t) {
                int64_t at = op->planes_transposed ? ch * op->outer + o : o * op->channels + ch;
                const float *volume = src + at * points(op->size);
                int64_t tz = t / (op->tiles[1] * op->tiles[2]), t0 = t / op->tiles[2] % op->tiles[1],
                        t1 = t % op->tiles[2];
                for (int k = 0; k < c[0]; ++k)
                    for (int i = 0; i < c[1]; ++i)
                        for (int j = 0; j < c[2]; ++j) {
                            int64_t z = tz * op->step[0] - op->offset[0] + (op->flip ? c[0] - 1 - k : k);
                            int64_t y = t0 * op->step[1] - op->offset[1] + (op->flip ? c[1] - 1 - i : i);
                            int64_t x = t1 * op->step[2] - op->offset[2] + (op->flip ? c[2] - 1 - j : j);
                            bool inside = z >= 0 && z < op->size[0] && y >= 0 && y < op->size[1] && x >= 0 &&
                                          x < op->size[2];
                            d[k][i][j] = inside ? volume[(z * op->size[1] + y) * op->size[2] + x] : 0.0;
                        }
                transform(mx, d, v);
                int64_t in_e = op->pieces.rows ? (op->channel_rows ? cg_tc_at(op->pieces, columns, ch, o * tiles + t)
                                                                   : cg_tc_at(op->pieces, op->channels, o * tiles + t, ch))
                               : op->u_rows    ? wino_u_at(op, op->channels, op->outer, ch, o)
                                               : (ch * op->outer + o) * tiles + t;
                for (int z = 0; z < r[0]; ++z)
                    for (int y = 0; y < r[1]; ++y)
                        for (int x = 0; x < r[2]; ++x) {
                            float *to = &buf[((z * r[1] + y) * r[2] + x) * e_stride + in_e];
                            to[0] = (float)v[z][y][x];
                            if (op->pieces.lo)
                                to[cg_tc_lo_offset(op->pieces)] = cg_tf32_lo(to[0]);
                        }
            }
}

/* Every (row, outer, tile) of the products through AT into its outputs, clipped. */
static void run_output(const cg_wino_op *op, const op_matrices *mx, const float *buf, float *out)
{
    int64_t tiles = tile_count(op), columns = op->outer * tiles, e_stride = op->rows * columns;
    const int *r = mx->rows, *c = mx->cols;
    wino_tile d, v;
    for (int64_t row = 0; row < op->rows; ++row)
        for (int64_t col = 0; col < columns; ++col) {
            int64_t o = col / tiles, t = col % tiles, tz = t / (op->tiles[1] * op->tiles[2]),
                    t0 = t / op->tiles[2] % op->tiles[1], t1 = t % op->tiles[2];
            for (int k = 0; k < c[0]; ++k)
                for (int i = 0; i < c[1]; ++i)
                    for (int j = 0; j < c[2]; ++j) { /* the runs' products added, where the GEMM split its sum */
                        const float *at = buf + ((k * c[1] + i) * c[2] + j) * e_stride + row * columns + col;
                        float sum = at[0];
                        for (int64_t s = 1; s < op->splits; ++s)
                            sum += at[s * op->partial];
                        d[k][i][j] = sum;
                    }
            transform(mx, d, v);
            float *volume = out + o * op->outer_stride + row * op->row_stride;
            for (int k = 0; k < r[0]; ++k)
                for (int i = 0; i < r[1]; ++i)
                    for (int j = 0; j < r[2]; ++j) {
                        int64_t z = tz * op->m[0] + k, y = t0 * op->m[1] + i, x = t1 * op->m[2] + j;
                        if (z >= op->size[0] || y >= op->size[1] || x >= op->size[2])
                            continue;
                        int64_t at = (z * op->size[1] + y) * op->size[2] + x;
                        volume[op->flip ? points(op->size) - 1 - at : at] = (float)v[k][i][j];
                    }
        }
}

/* The weights' transforms U [e][channel][row] that a fused op with weights_inside makes from in1:
 * those of its weights' G op (winograd_fused.c's transform_w), into a buffer of their own. */
static float *weights_inside(const cg_wino_op *op, const float *in1)
{
    cg_wino_op g = *op;
    g.stage = CG_WINO_G, g.operand = 1, g.outer = op->rows, g.u_rows = 0, g.pieces = (cg_tc_pieces){0};
    g.flip = op->weights_flip, g.planes_transposed = op->weights_transposed;
    for (int d = 0; d < CG_WINO_DIMS; ++d)
        g.size[d] = op->r[d], g.tiles[d] = 1, g.step[d] = 0, g.offset[d] = 0;
    op_matrices mg;
    if (!matrices_of(&g, CG_WINO_G, &mg))
        return NULL;
    float *u = malloc(sizeof *u * (size_t)(mg.rows[0] * mg.rows[1] * mg.rows[2] * op->channels * op->rows));
    if (u)
        run_tiles(&g, &mg, in1, u);
    return u;
}

/* The fused op: its tiles (BT) into V [e][c][tile], the products with the weights' transforms
 * (at `weights` in the workspace, or made from in1) per element in double, M [e][row][tile], then
 * its outputs (AT), through buffers of its own. */
static bool run_fused(const cg_wino_op *op, const float *const in[2], float *out, const char *ws)
{
    cg_wino_op b = *op, a = *op;
    b.stage = CG_WINO_BT, a.stage = CG_WINO_AT, a.splits = 0; /* M is its own, one run */
    b.u_rows = 0; /* the weights' layout, not V's */
    for (int d = 0; d < CG_WINO_DIMS; ++d)
        a.size[d] = op->out_size[d];
    op_matrices mb, ma;
    if (!matrices_of(&b, CG_WINO_BT, &mb) || !matrices_of(&a, CG_WINO_AT, &ma))
        return false;
    int64_t e_count = (int64_t)mb.rows[0] * mb.rows[1] * mb.rows[2], columns = op->outer * tile_count(op);
    float *v = malloc(sizeof *v * (size_t)(e_count * op->channels * columns));
    float *m = malloc(sizeof *m * (size_t)(e_count * op->rows * columns));
    float *made = op->weights_inside ? weights_inside(op, in[1]) : NULL;
    if (!v || !m || (op->weights_inside && !made)) {
        free(v), free(m), free(made);
        return false;
    }
    run_tiles(&b, &mb, in[0], v);
    /* [e][channel][row], or blocked (wino_u_at) */
    const float *u = made ? made : (const float *)(ws + op->weights);
    int64_t u_floats = wino_u_floats(op, op->channels, op->rows);
    for (int64_t e = 0; e < e_count; ++e)
        for (int64_t r = 0; r < op->rows; ++r)
            for (int64_t t = 0; t < columns; ++t) {
                double sum = 0;
                for (int64_t c = 0; c < op->channels; ++c)
                    sum += (double)u[e * u_floats + wino_u_at(op, op->channels, op->rows, c, r)] *
                           v[(e * op->channels + c) * columns + t];
                m[(e * op->rows + r) * columns + t] = (float)sum;
            }
    run_output(&a, &ma, m, out);
    free(v), free(m), free(made);
    return true;
}

/* The fused accgrad op: the tiles of in0 (BT) into V [e][c][column] and those of in1 (G) into
 * D [e][row][column], then per run of columns the products summed in double, M [e][row][c],
 * through AT into the run's planes (out, or its partial result in the workspace). */
static bool run_fused_accgrad(const cg_wino_op *op, const float *const in[2], float *out, char *ws)
{
    cg_wino_op b = *op, g = *op, a = *op;
    b.stage = CG_WINO_BT, b.flip = false; /* `flip` reverses dw's planes, not the tiles */
    g.stage = CG_WINO_G, g.flip = false, g.channels = op->rows;
    a.stage = CG_WINO_AT, a.rows = op->rows, a.outer = op->channels, a.splits = 0; /* each run by itself */
    for (int d = 0; d < CG_WINO_DIMS; ++d) {
        g.size[d] = op->out_size[d], g.offset[d] = 0;
        a.tiles[d] = 1, a.size[d] = op->m[d];
    }
    op_matrices mb, mg, ma;
    if (!matrices_of(&b, CG_WINO_BT, &mb) || !matrices_of(&g, CG_WINO_G, &mg) || !matrices_of(&a, CG_WINO_AT, &ma))
        return false;
    int64_t e_count = (int64_t)mb.rows[0] * mb.rows[1] * mb.rows[2], columns = op->outer * tile_count(op);
    float *v = malloc(sizeof *v * (size_t)(e_count * op->channels * columns));
    float *dy = malloc(sizeof *dy * (size_t)(e_count * op->rows * columns));
    float *m = malloc(sizeof *m * (size_t)(e_count * op->rows * op->channels));
    bool ok = v && dy && m;
    if (ok) {
        run_tiles(&b, &mb, in[0], v);
        run_tiles(&g, &mg, in[1], dy);
    }
    for (int64_t s = 0; ok && s < op->splits; ++s) {
        int64_t first = s * op->split_columns, end = first + op->split_columns < columns ? first + op->split_columns : columns;
        for (int64_t e = 0; e < e_count; ++e)
            for (int64_t r = 0; r < op->rows; ++r)
                for (int64_t c = 0; c < op->channels; ++c) {
                    double sum = 0;
                    for (int64_t t = first; t < end; ++t)
                        sum += (double)dy[(e * op->rows + r) * columns + t] * v[(e * op->channels + c) * columns + t];
                    m[(e * op->rows + r) * op->channels + c] = (float)sum;
                }
        run_output(&a, &ma, m, op->splits == 1 ? out : (float *)(ws + op->buffer) + s * op->partial);
    }
    free(v), free(dy), free(m);
    return ok;
}

/* The sum of the partial results, in the kernel's order. */
static void run_sum(const cg_wino_op *op, float *out, const char *ws)
{
    const float *part = (const float *)(ws + op->buffer);
    for (int64_t i = 0; i < op->partial; ++i) {
        float sum = 0.0f;
        for (int64_t s = 0; s < op->splits; ++s)
            sum += part[s * op->partial + i];
        out[i] = sum;
    }
}

static bool run_op(const cg_wino_op *op, const cg_op_buffers *b)
{
    if (op->stage == CG_WINO_FUSED)
        return run_fused(op, b->in, b->out, b->ws);
    if (op->stage == CG_WINO_FUSED_ACCGRAD)
        return run_fused_accgrad(op, b->in, b->out, b->ws);
    if (op->stage == CG_WINO_SUM) {
        run_sum(op, b->out, b->ws);
        return true;
    }
    op_matrices mx;
    if (!matrices_of(op, op->stage, &mx))
        return false;
    float *buf = (float *)(b->ws + op->buffer);
    if (op->stage == CG_WINO_AT)
        run_output(op, &mx, buf, b->out);
    else
        run_tiles(op, &mx, b->in[op->operand], buf);
    return true;
}

static convgen_status evaluate_winograd(const cg_kernel_op *op, const cg_op_buffers *b)
{
    return run_op(&op->wino, b) ? CONVGEN_SUCCESS
                                : cg_fail(CONVGEN_ERROR_INTERNAL, "its Winograd transform cannot be derived");
}

/* x rounded up to a multiple of block (as it is, for a block of 0), in double. */
static double round_up(int64_t x, int64_t block)
{
    return block > 0 ? (double)((x + block - 1) / block * block) : (double)x;
}

/* The transforms move their planes and transforms at the copy bandwidth; the fused kernels also
 * multiply-add each element of a tile's transform over the channels (or the images' tiles). */
static cg_work winograd_work(const cg_kernel_op *op, int sm_count)
{
    (void)sm_count;
    const cg_wino_op *w = &op->wino;
    double alpha = 1, tiles = (double)tile_count(w), planes = (double)w->outer * w->channels;
    double plane = (double)points(w->size), outputs = (double)points(w->out_size), m = 1;
    for (int d = 0; d < CG_WINO_DIMS; ++d)
        alpha *= w->m[d] + w->r[d] - 1, m *= w->m[d];
    cg_work k = {.efficiency = WINOGRAD_FUSED_EFFICIENCY, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
    switch (w->stage) {
    case CG_WINO_BT: case CG_WINO_G: /* planes in, transforms out (with their lo halves: twice) */
        k.bytes = 4 * planes * (plane + alpha * tiles * (w->pieces.lo ? 2 : 1));
        break;
    case CG_WINO_AT: /* transforms in, outputs out */
        k.bytes = 4 * (double)w->rows * w->outer * tiles * (alpha + m);
        break;
    case CG_WINO_FUSED: /* tiles in, products summed over the channels, outputs out */
        if (w->cluster && w->u_fragments) /* alpha 8: the tensor products */
            k.efficiency = w->row_block == 128 ? WINOGRAD_FUSED_CLUSTER_TENSOR_WIDE_EFFICIENCY
                                               : WINOGRAD_FUSED_CLUSTER_TENSOR_EFFICIENCY;
        else if (w->cluster) /* alpha 6, 64 outputs a block: the FFMA products */
            k.efficiency = WINOGRAD_FUSED_CLUSTER_EFFICIENCY;
        k.flops = 2 * alpha * tiles * planes * round_up(w->rows, w->row_block);
        k.bytes = 4 * (planes * plane + (double)w->rows * w->outer * outputs + alpha * w->channels * w->rows);
        if (w->weights_inside) { /* w read in place of U; each block of tiles transforms its chunks' w */
            double taps = (double)w->r[0] * w->r[1] * w->r[2], a1 = (double)(w->m[1] + w->r[1] - 1),
                   a2 = (double)(w->m[2] + w->r[2] - 1),
                   filter_flops = 2 * w->r[0] * (a2 * w->r[2] * w->r[1] + a1 * a2 * w->r[1]), /* rows, columns */
                blocks = w->tile_block > 0 ? round_up(w->outer * tile_count(w), w->tile_block) / w->tile_block : 1;
            k.bytes -= 4 * (alpha - taps) * w->channels * w->rows;
            k.flops += blocks * w->channels * round_up(w->rows, w->row_block) * filter_flops;
        }
        break;
    case CG_WINO_FUSED_ACCGRAD: /* both operands' tiles in, products summed over the images' tiles */
        k.efficiency = WINOGRAD_FUSED_ACCGRAD_EFFICIENCY;
        k.flops = 2 * alpha * tiles * planes * round_up(w->rows, w->row_block) *
                  (w->channel_scale > 0 ? w->channel_scale : 1);
        k.bytes = 4 * (planes * plane + (double)w->rows * w->outer * outputs) + 4.0 * w->splits * w->partial;
        break;
    default: /* SUM: partial results summed */
        k.bytes = 4.0 * (double)(w->splits + 1) * w->partial;
    }
    return k;
}

static const char *describe_winograd(const cg_kernel_op *op)
{
    switch (op->wino.stage) {
    case CG_WINO_BT: return "Winograd transform of the data (BT d B)";
    case CG_WINO_G: return "Winograd transform of the filters (G g GT)";
    case CG_WINO_AT: return "Winograd inverse transform (AT m A)";
    case CG_WINO_FUSED: return "fused Winograd: transforms, products over the channels, inverse";
    case CG_WINO_FUSED_ACCGRAD: return "fused Winograd accgrad: transforms, products over the tiles, inverse";
    default: return "sum of the partial results";
    }
}

const cg_op_class cg_op_winograd = {CG_OP_WINOGRAD, "winograd", evaluate_winograd, winograd_work, describe_winograd};
