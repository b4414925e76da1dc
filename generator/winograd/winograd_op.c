/* The WINOGRAD op kind (op_kinds.h) of the winograd and winograd-fused planners: on the CPU
 * (cg_program_evaluate) each tile through the exact matrices of its ops (rationals to doubles),
 * results stored in fp32 where the kernels store them; the CUDA of the kernels is checked on the
 * GPU. Its work for the cost model, and its description. */
#include <stdint.h>
#include <stdlib.h>

#include "op_kinds.h"
#include "util.h"
#include "winograd_plan.h"
#include "winograd_transform.h"

/* The fused kernels' measured rate: about 30% of the GEMMs' (convgen tune over the bench set:
 * bench/results/...-tune.csv); accgrad's less. */
#define WINOGRAD_FUSED_EFFICIENCY 0.21
#define WINOGRAD_FUSED_ACCGRAD_EFFICIENCY 0.19

typedef double wino_matrix[WINO_MAX_ALPHA][WINO_MAX_ALPHA];

/* The op's matrix along dimension d: rows x cols doubles. */
static bool matrix_of(const cg_wino_op *op, int d, wino_matrix a, int *rows, int *cols)
{
    wino_transform t;
    char err[160];
    if (!wino_derive(op->m[d], op->r[d], &t, err, sizeof err))
        return false;
    const cg_q(*q)[WINO_MAX_ALPHA] = wino_matrix_rows(&t, op->stage, rows, cols);
    for (int i = 0; i < *rows; ++i)
        for (int j = 0; j < *cols; ++j)
            a[i][j] = cg_q_double(q[i][j]);
    return true;
}

/* v = a0 d a1^T for d cols[0] x cols[1]. */
static void transform(wino_matrix a[2], const int rows[2], const int cols[2], wino_matrix d, wino_matrix v)
{
    for (int y = 0; y < rows[0]; ++y)
        for (int x = 0; x < rows[1]; ++x) {
            double sum = 0;
            for (int i = 0; i < cols[0]; ++i)
                for (int j = 0; j < cols[1]; ++j)
                    sum += a[0][y][i] * d[i][j] * a[1][x][j];
            v[y][x] = sum;
        }
}

/* Every tile of every plane into the workspace as [e][channel][outer][tile]. */
static void run_tiles(const cg_wino_op *op, wino_matrix a[2], const int rows[2], const int cols[2], const float *src,
                      float *buf)
{
    int64_t tiles = op->tiles[0] * op->tiles[1], e_stride = op->channels * op->outer * tiles;
    wino_matrix d, v;
    for (int64_t o = 0; o < op->outer; ++o)
        for (int64_t c = 0; c < op->channels; ++c)
            for (int64_t t = 0; t < tiles; ++t) {
                int64_t at = op->planes_transposed ? c * op->outer + o : o * op->channels + c;
                const float *plane = src + at * op->size[0] * op->size[1];
                int64_t t0 = t / op->tiles[1], t1 = t % op->tiles[1];
                for (int i = 0; i < cols[0]; ++i)
                    for (int j = 0; j < cols[1]; ++j) {
                        int64_t y = t0 * op->step[0] - op->offset[0] + (op->flip ? cols[0] - 1 - i : i);
                        int64_t x = t1 * op->step[1] - op->offset[1] + (op->flip ? cols[1] - 1 - j : j);
                        bool inside = y >= 0 && y < op->size[0] && x >= 0 && x < op->size[1];
                        d[i][j] = inside ? plane[y * op->size[1] + x] : 0.0;
                    }
                transform(a, rows, cols, d, v);
                for (int y = 0; y < rows[0]; ++y)
                    for (int x = 0; x < rows[1]; ++x)
                        buf[(y * rows[1] + x) * e_stride + (c * op->outer + o) * tiles + t] = (float)v[y][x];
            }
}

/* Every (row, outer, tile) of the products through AT into its outputs, clipped. */
static void run_output(const cg_wino_op *op, wino_matrix a[2], const int rows[2], const int cols[2], const float *buf,
                       float *out)
{
    int64_t tiles = op->tiles[0] * op->tiles[1], columns = op->outer * tiles, e_stride = op->rows * columns;
    wino_matrix d, v;
    for (int64_t r = 0; r < op->rows; ++r)
        for (int64_t col = 0; col < columns; ++col) {
            int64_t o = col / tiles, t = col % tiles, t0 = t / op->tiles[1], t1 = t % op->tiles[1];
            for (int i = 0; i < cols[0]; ++i)
                for (int j = 0; j < cols[1]; ++j)
                    d[i][j] = buf[(i * cols[1] + j) * e_stride + r * columns + col];
            transform(a, rows, cols, d, v);
            float *plane = out + o * op->outer_stride + r * op->row_stride;
            for (int i = 0; i < rows[0]; ++i)
                for (int j = 0; j < rows[1]; ++j) {
                    int64_t y = t0 * op->m[0] + i, x = t1 * op->m[1] + j;
                    if (y >= op->size[0] || x >= op->size[1])
                        continue;
                    plane[op->flip ? (op->size[0] - 1 - y) * op->size[1] + op->size[1] - 1 - x : y * op->size[1] + x] =
                        (float)v[i][j];
                }
        }
}

/* The fused op: its tiles (BT) into V [e][c][tile], the products with the weights' transforms
 * per element in double, M [e][row][tile], then its outputs (AT), through buffers of its own. */
static bool run_fused(const cg_wino_op *op, const float *in0, float *out, const char *ws)
{
    cg_wino_op b = *op, a = *op;
    b.stage = CG_WINO_BT, a.stage = CG_WINO_AT;
    a.size[0] = op->out_size[0], a.size[1] = op->out_size[1];
    wino_matrix mb[2], ma[2];
    int rb[2], cb[2], ra[2], ca[2];
    for (int d = 0; d < 2; ++d)
        if (!matrix_of(&b, d, mb[d], &rb[d], &cb[d]) || !matrix_of(&a, d, ma[d], &ra[d], &ca[d]))
            return false;
    int64_t e_count = (int64_t)rb[0] * rb[1], columns = op->outer * op->tiles[0] * op->tiles[1];
    float *v = malloc(sizeof *v * (size_t)(e_count * op->channels * columns));
    float *m = malloc(sizeof *m * (size_t)(e_count * op->rows * columns));
    if (!v || !m) {
        free(v), free(m);
        return false;
    }
    run_tiles(&b, mb, rb, cb, in0, v);
    const float *u = (const float *)(ws + op->weights); /* [e][channel][row] */
    for (int64_t e = 0; e < e_count; ++e)
        for (int64_t r = 0; r < op->rows; ++r)
            for (int64_t t = 0; t < columns; ++t) {
                double sum = 0;
                for (int64_t c = 0; c < op->channels; ++c)
                    sum += (double)u[(e * op->channels + c) * op->rows + r] * v[(e * op->channels + c) * columns + t];
                m[(e * op->rows + r) * columns + t] = (float)sum;
            }
    run_output(&a, ma, ra, ca, m, out);
    free(v), free(m);
    return true;
}

/* The fused accgrad op: the tiles of in0 (BT) into V [e][c][column] and those of in1 (G) into
 * D [e][row][column], then per run of columns the products summed in double, M [e][row][c],
 * through AT into the run's planes (out, or its partial result in the workspace). */
static bool run_fused_accgrad(const cg_wino_op *op, const float *const in[2], float *out, char *ws)
{
    cg_wino_op b = *op, g = *op, a = *op;
    b.stage = CG_WINO_BT, b.flip = false; /* `flip` reverses dw's planes, not the tiles */
    g.stage = CG_WINO_G, g.flip = false, g.channels = op->rows, g.size[0] = op->out_size[0], g.size[1] = op->out_size[1];
    g.offset[0] = g.offset[1] = 0;
    a.stage = CG_WINO_AT, a.rows = op->rows, a.outer = op->channels, a.tiles[0] = a.tiles[1] = 1;
    a.size[0] = op->m[0], a.size[1] = op->m[1];
    wino_matrix mb[2], mg[2], ma[2];
    int rb[2], cb[2], rg[2], cg[2], ra[2], ca[2];
    for (int d = 0; d < 2; ++d)
        if (!matrix_of(&b, d, mb[d], &rb[d], &cb[d]) || !matrix_of(&g, d, mg[d], &rg[d], &cg[d]) ||
            !matrix_of(&a, d, ma[d], &ra[d], &ca[d]))
            return false;
    int64_t e_count = (int64_t)rb[0] * rb[1], columns = op->outer * op->tiles[0] * op->tiles[1];
    float *v = malloc(sizeof *v * (size_t)(e_count * op->channels * columns));
    float *dy = malloc(sizeof *dy * (size_t)(e_count * op->rows * columns));
    float *m = malloc(sizeof *m * (size_t)(e_count * op->rows * op->channels));
    bool ok = v && dy && m;
    if (ok) {
        run_tiles(&b, mb, rb, cb, in[0], v);
        run_tiles(&g, mg, rg, cg, in[1], dy);
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
        run_output(&a, ma, ra, ca, m, op->splits == 1 ? out : (float *)(ws + op->buffer) + s * op->partial);
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
        return run_fused(op, b->in[0], b->out, b->ws);
    if (op->stage == CG_WINO_FUSED_ACCGRAD)
        return run_fused_accgrad(op, b->in, b->out, b->ws);
    if (op->stage == CG_WINO_SUM) {
        run_sum(op, b->out, b->ws);
        return true;
    }
    wino_matrix a[2];
    int rows[2], cols[2];
    if (!matrix_of(op, 0, a[0], &rows[0], &cols[0]) || !matrix_of(op, 1, a[1], &rows[1], &cols[1]))
        return false;
    float *buf = (float *)(b->ws + op->buffer);
    if (op->stage == CG_WINO_AT)
        run_output(op, a, rows, cols, buf, b->out);
    else
        run_tiles(op, a, rows, cols, b->in[op->operand], buf);
    return true;
}

static convgen_status evaluate_winograd(const cg_kernel_op *op, const cg_op_buffers *b)
{
    return run_op(&op->wino, b) ? CONVGEN_SUCCESS
                                : cg_fail(CONVGEN_ERROR_INTERNAL, "its Winograd transform cannot be derived");
}

/* The transforms move their planes and transforms at the copy bandwidth; the fused kernels also
 * multiply-add each element of a tile's transform over the channels (or the images' tiles). */
static cg_work winograd_work(const cg_kernel_op *op, int sm_count)
{
    (void)sm_count;
    const cg_wino_op *w = &op->wino;
    double alpha = (double)(w->m[0] + w->r[0] - 1) * (w->m[1] + w->r[1] - 1);
    double tiles = (double)w->tiles[0] * w->tiles[1], planes = (double)w->outer * w->channels;
    double plane = (double)w->size[0] * w->size[1], outputs = (double)w->out_size[0] * w->out_size[1];
    cg_work k = {.efficiency = WINOGRAD_FUSED_EFFICIENCY, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
    switch (w->stage) {
    case CG_WINO_BT: case CG_WINO_G: /* planes in, transforms out */
        k.bytes = 4 * planes * (plane + alpha * tiles);
        break;
    case CG_WINO_AT: /* transforms in, outputs out */
        k.bytes = 4 * (double)w->rows * w->outer * tiles * (alpha + (double)w->m[0] * w->m[1]);
        break;
    case CG_WINO_FUSED: /* tiles in, products summed over the channels, outputs out */
        k.flops = 2 * alpha * tiles * planes * (double)w->rows;
        k.bytes = 4 * (planes * plane + (double)w->rows * w->outer * outputs + alpha * w->channels * w->rows);
        break;
    case CG_WINO_FUSED_ACCGRAD: /* both operands' tiles in, products summed over the images' tiles */
        k.efficiency = WINOGRAD_FUSED_ACCGRAD_EFFICIENCY;
        k.flops = 2 * alpha * tiles * planes * (double)w->rows;
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
