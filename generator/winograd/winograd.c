/* The winograd algorithm, non-fused (issue 6, item 3): Lavin and Gray's minimal filtering the
 * way Nervana's non-fused kernels run it. A tile of m x m outputs of an r x r correlation is
 *
 *     Y = AT [ sum over the channels of (G g G^T) . (BT d B) ] A      (alpha = m + r - 1)
 *
 * so the channel sum becomes one GEMM per transform element e (alpha^2 of them) over all tiles
 * of the batch at once: the tiles are the GEMM's columns, which is Nervana's superblocking for
 * small batches without a separate case. Per pass, with T the tiles of a (sub-)batch:
 *
 *   fprop    U = G w G^T     [e][c][k]   V = BT x B  [e][c][T]   M[e] = U^T V  [k][T]   y = AT M A
 *   bprop    U = G w' G^T    [e][c][k]   V = BT dy B [e][k][T]   M[e] = U V    [c][T]   dx = AT M A
 *   accgrad  V = BT x B      [e][c][T]   D = G dy G^T [e][k][T]  M[e] = D V^T  [k][c]   dw = AT M A
 *
 * bprop is fprop of dy with the kernel flipped (w') and the channels swapped, at pad r - 1 - pad.
 * accgrad is Nervana's "update": F(r, m), dy's m x m tiles as the filters and x's alpha x alpha
 * tiles as the data, summed over the tiles by the GEMM (and over the sub-batches); on the tensor
 * GEMM, M[e] is [c][k] where x has fewer channels than dy and that pads C's tiles less
 * (accgrad_dy_rows). fprop and
 * bprop transform the weights once (phase 0), so they can be prepared once per update.
 *
 * The transforms are straight-line code derived exactly by the generator
 * (winograd_transform.c, winograd_program.c), one thread per tile; the GEMMs are cuBLAS SGEMMs
 * strided-batched over e (or convgen's own, gemm.c). A 3-D layer's transforms are the tensor
 * products of its dimensions' (F(m0 x m1 x m2, r0 x r1 x r2), each dimension its own tile); a 2-D
 * layer is a 3-D one of depth 1 and a 1-D layer one of height 1 too, with F(1, 1) along the
 * dimensions they lack. A 3-D layer's data tiles go through winograd_volume.c's kernel (bricks of
 * tiles in shared memory); its output kernel reads each element slice once and adds it into the
 * m0 output planes it feeds. fprop's output kernel, the last step of each sub-batch and the only
 * one that writes y, applies the layer's epilogue (bias, ReLU) as it stores. */
#include <stdio.h>
#include <string.h>

#include "gemm.h"
#include "gemm_tc.h"
#include "generate.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"
#include "winograd_plan.h"
#include "winograd_program.h"

enum { THREADS = 128, MAX_TILE_SUMS = 128 };

convgen_status wino_applicable(const cg_problem *p, convgen_pass pass)
{
    (void)pass;
    for (int d = 0; d < p->rank; ++d) {
        if (p->stride[d] != 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd: stride[%d] = %lld: stride 1 only", d,
                           (long long)p->stride[d]);
        if (p->dilation[d] != 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd: dilation[%d] = %lld: dilation 1 only", d,
                           (long long)p->dilation[d]);
        if (p->kernel[d] > WINO_MAX_KERNEL)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED,
                           "winograd: kernel[%d] = %lld: kernels up to %d (larger ones are the FFT algorithms')", d,
                           (long long)p->kernel[d], WINO_MAX_KERNEL);
    }
    if (p->c > INT32_MAX || p->k > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd: %s = %lld: cuBLAS takes 32-bit sizes",
                       p->c > INT32_MAX ? "c" : "k", (long long)(p->c > INT32_MAX ? p->c : p->k));
    return CONVGEN_SUCCESS;
}

/* The tile m along a dimension with kernel r whose tiles cover `extent` points: the one that
 * needs the fewest transform elements, alpha ceil(extent / m) (the GEMMs' work and the
 * transforms' traffic both scale with them), among alpha <= max_alpha, whose fp32 errors stay
 * near 1e-6 (README, "Winograd accuracy"); the smaller alpha on a tie. No transform for r = 1. */
static int default_tile(int64_t r, int64_t extent, int max_alpha)
{
    if (r == 1)
        return 1;
    int best = 1;
    int64_t best_cost = r * extent;
    for (int m = 2; m + r - 1 <= max_alpha && m <= extent; ++m) {
        int64_t cost = (m + r - 1) * wino_div_up(extent, m);
        if (cost < best_cost)
            best = m, best_cost = cost;
    }
    return best;
}

/* The problem in 3-D, the tiles and their transforms. A 3-D layer's default tiles keep alpha to
 * WINO_MAX_VOLUME_ALPHA: three dimensions' rounding errors compound. */
convgen_status wino_choose_tiles(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, int max_alpha,
                                 wino_spec *s)
{
    memset(s, 0, sizeof *s);
    s->pass = pass;
    s->epilogue = pass == CONVGEN_FPROP ? p->epilogue : 0;
    for (int d = p->rank; tune && d < CONVGEN_MAX_RANK; ++d)
        if (tune->winograd_m[d])
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->winograd_m[%d] = %d, but the layer has rank %d", d,
                           tune->winograd_m[d], p->rank);
    if (p->rank == 3 && max_alpha > WINO_MAX_VOLUME_ALPHA)
        max_alpha = WINO_MAX_VOLUME_ALPHA;
    int lead = CG_WINO_DIMS - p->rank;
    s->first = p->rank == 3 ? 0 : 1;
    for (int d = 0; d < CG_WINO_DIMS; ++d) {
        int src = d - lead; /* the problem's dimension, or < 0 for the height of a 1-D layer */
        s->in[d] = src < 0 ? 1 : p->in[src];
        s->kernel[d] = src < 0 ? 1 : p->kernel[src];
        s->out[d] = src < 0 ? 1 : p->out[src];
        s->pad[d] = src < 0 ? 0 : p->pad_before[src];
        /* fprop and accgrad tile the output (accgrad: dy), bprop dx */
        int64_t extent = pass == CONVGEN_BPROP ? s->in[d] : s->out[d];
        int fixed = src >= 0 && tune ? tune->winograd_m[src] : 0;
        s->m[d] = fixed ? fixed : default_tile(s->kernel[d], extent, max_alpha);
        s->tiles[d] = wino_div_up(extent, s->m[d]);
        char err[160];
        bool ok = pass == CONVGEN_ACCGRAD ? wino_derive((int)s->kernel[d], s->m[d], &s->tf[d], err, sizeof err)
                                          : wino_derive(s->m[d], (int)s->kernel[d], &s->tf[d], err, sizeof err);
        if (!ok && fixed)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->winograd_m[%d] = %d: %s", src, fixed, err);
        if (!ok)
            return cg_fail(CONVGEN_ERROR_INTERNAL, "winograd: tile %d along dimension %d: %s", s->m[d], src, err);
    }
    s->elements = (int64_t)s->tf[0].alpha * s->tf[1].alpha * s->tf[2].alpha;
    return CONVGEN_SUCCESS;
}

/* The runs the tensor GEMM's sum is cut into (cg_gemm_step.splits), each run's products into M
 * for the output transform to add: enough that each run sums at most WINO_TC_RUN, since the tensor
 * cores' fp32 sums lose accuracy along a long sum (F2's accgrad, 12544 tiles in one run: relative
 * error 1.33e-4 against its bound 1.07e-4; V3's 3200, 4.1e-5 of 7.55e-5; H200, bench/NOTES.md
 * "Issue 30, session 61"). fprop and bprop sum the channels, one run up to WINO_TC_RUN of them
 * (R4's 72 blocks in 3 runs and R3's 147 in 2 ran 0-2% faster than one, each run's M written and
 * read again: more runs do not pay there). accgrad sums the sub-batch's `columns` tiles in runs of
 * at least WINO_TC_MIN_RUN tiles (R4's 128 in 2 runs of 64 ran 0.099 ms against 0.076 in one, its
 * blocks' pipelines barely filled); of up to four times the least count, the one whose blocks (as
 * many a multiprocessor as it holds) fill their waves best: S32's 64 blocks in 2 runs (0.287 -> 0.205 ms). The
 * output transform adds each tile's runs in straight-line code, at most WINO_TC_MAX_SUMMED loads
 * a thread (the bench set's most: V1's 33 runs of 64 elements): 0 where more are needed, so that
 * accgrad's sub-batch is cut smaller or, where it cannot be, the SIMT GEMM sums (winograd_generate). */
static int64_t tensor_splits(const cg_problem *p, const wino_spec *s, int64_t columns)
{
    const int64_t most_runs = WINO_TC_MAX_SUMMED / s->elements;
    if (s->pass != CONVGEN_ACCGRAD) {
        const int64_t need = wino_div_up(s->pass == CONVGEN_FPROP ? p->c : p->k, WINO_TC_RUN);
        return need <= most_runs ? need : 0;
    }
    const int64_t rows = s->dy_rows ? p->k : p->c, cols = s->dy_rows ? p->c : p->k;
    const int64_t blocks = wino_div_up(rows, CG_GEMM_TC_ROWS) * wino_div_up(cols, cg_gemm_tc_columns(cols)) * s->elements;
    /* the blocks the GPU holds at once (sm_count set: cg_generate_tuned), two an SM where the tile
     * is narrow: H100, "Issue 30, session 71": F1 (32 columns) 2 -> 4 runs, 0.167 -> 0.159 ms; R1
     * (64) 2 -> 4, 0.167 -> 0.162; S16, S64, V1 within 0.5% */
    const cg_gemm_step g = {.m = rows, .n = cols, .batch = s->elements,
                            .a_pieces = s->pieces[s->dy_rows ? WINO_U : WINO_V],
                            .b_pieces = s->pieces[s->dy_rows ? WINO_V : WINO_U]};
    const int per_sm = cg_gemm_tc_blocks_per_sm(&g, s->target);
    const int64_t sms = (int64_t)s->target->sm_count * (per_sm > 1 ? per_sm : 1);
    const int64_t steps = wino_div_up(columns, CG_GEMM_TC_STEP);
    const int64_t most = columns / WINO_TC_MIN_RUN, need = wino_div_up(columns, WINO_TC_RUN);
    int64_t best = need > 1 ? 0 : 1;
    double best_waves = 1e300;
    for (int64_t splits = need < most ? need : most; splits <= 4 * need && splits <= most && splits <= most_runs;
         ++splits) {
        if (splits < 1 || (splits - 1) * cg_gemm_split_steps(columns, splits) >= steps)
            continue; /* runs of whole steps with none empty (cg_gemm_tc_takes) */
        double waves = (double)wino_div_up(blocks * splits, sms) / (double)splits; /* per run's length */
        if (waves < best_waves)
            best = splits, best_waves = waves;
    }
    return best;
}

/* The buffers for sub-batches of `batch` images; false where a size passes what the kernels
 * (32-bit thread and plane indices) or cuBLAS (32-bit sizes) take. */
bool wino_size_buffers(const cg_problem *p, int64_t batch, wino_spec *s)
{
    s->batch = batch;
    s->chunks = p->n / batch;
    bool ok = cg_mul64(batch, s->tiles[0] * s->tiles[1] * s->tiles[2], &s->columns) && s->columns <= INT32_MAX;
    /* each buffer's rows x columns per element, by pass (the table at the top), U, V and M */
    const int64_t T = s->columns;
    const int64_t shapes[3][3][2] = {[CONVGEN_FPROP] = {{p->c, p->k}, {p->c, T}, {p->k, T}},
                                     [CONVGEN_BPROP] = {{p->c, p->k}, {p->k, T}, {p->c, T}},
                                     [CONVGEN_ACCGRAD] = {{p->k, T}, {p->c, T}, {p->k, p->c}}};
    const int64_t (*shape)[2] = shapes[s->pass];
    s->splits = s->pieces[WINO_U].rows ? tensor_splits(p, s, T) : 1;
    ok = ok && s->splits > 0; /* a sum too long for WINO_TC_MAX_SUMMED: a smaller sub-batch, or none */
    int64_t at = 0, bytes;
    for (int b = 0; b < 3 && ok; ++b) {
        s->buffer[b] = at;
        /* a transform's threads: one per entry of an element's matrix (in pieces, the padding's
         * too) and, in 3-D, per element (M: output) along depth, 32-bit in the kernels */
        int64_t along_depth = b == WINO_M ? s->tf[0].m : s->tf[0].alpha, threads;
        ok = cg_mul64(shape[b][0], shape[b][1], &s->matrix[b]);
        if (b != WINO_M && s->pieces[b].rows) /* the rows and the sum of the tensor GEMM's operand */
            s->matrix[b] = s->pass == CONVGEN_ACCGRAD ? cg_tc_floats(s->pieces[b], shape[b][0], T)
                           : cg_tc_floats(s->pieces[b], b == WINO_V ? T : s->pass == CONVGEN_BPROP ? p->c : p->k,
                                          s->pass == CONVGEN_BPROP ? p->k : p->c);
        ok = ok && cg_mul64(s->matrix[b], along_depth, &threads) && threads <= INT32_MAX &&
             cg_mul64(s->matrix[b], s->elements * 4 * (b == WINO_M ? s->splits : 1), &bytes) && cg_add64(at, bytes, &at);
        at = wino_align_up(at);
    }
    s->workspace = at;
    /* a volume's points, and those of its tiles past its edge, are 32-bit in the kernels */
    int64_t in_plane = 1, out_plane = 1;
    for (int d = s->first; d < CG_WINO_DIMS && ok; ++d)
        ok = cg_mul64(in_plane, s->in[d] + WINO_MAX_ALPHA, &in_plane) &&
             cg_mul64(out_plane, s->out[d] + WINO_MAX_ALPHA, &out_plane);
    return ok && in_plane <= INT32_MAX / 2 && out_plane <= INT32_MAX / 2;
}

/* ZNNi's sub-batching: the largest divisor of n whose buffers fit the workspace limit (the
 * runtime reports a plan whose smallest sub-batch still does not). */
typedef struct batch_fit {
    const cg_problem *p;
    wino_spec *s;
    int64_t limit; /* 0: none */
} batch_fit;

static bool batch_fits(int64_t batch, void *user)
{
    batch_fit *f = user;
    return wino_size_buffers(f->p, batch, f->s) && (!f->limit || f->s->workspace <= f->limit);
}

static convgen_status choose_batch(const cg_problem *p, const cg_tuning *tune, wino_spec *s)
{
    batch_fit fit = {p, s, tune ? tune->workspace_limit : 0};
    if (batch_fits(p->n, &fit))
        return CONVGEN_SUCCESS;
    return wino_size_buffers(p, cg_largest_divisor(p->n, batch_fits, &fit), s)
               ? CONVGEN_SUCCESS
               : cg_fail(CONVGEN_ERROR_NOT_SUPPORTED,
                         "winograd: this layer's planes or transforms pass the kernels' 32-bit indices");
}


/* Whether a volume's output kernel makes one output plane a thread: where a whole tile's m0 m1 m2
 * sums would spill (more than MAX_TILE_SUMS: F(5, m)^3 has 125, 182 registers; F(7, 1)^3's 343
 * spilled 1.7 KB), rather than one tile a thread. */
static bool output_by_plane(const wino_spec *s)
{
    return s->first == 0 && s->tf[0].m * s->tf[1].m * s->tf[2].m > MAX_TILE_SUMS;
}

/* The keys of a volume's depth (3-D layers): its matrix (row by row for tiles and for an output
 * made plane by plane, column by column for one made tile by tile), extent, tiles, the magic
 * divisions that split the thread index, and for tiles their step and offset. A tile kernel has
 * `count` threads, the depth's element outermost; the output kernel one per (row, outer, tile),
 * or per (output plane, row, outer, tile). */
static bool depth_context(tmpl_value *ctx, const wino_spec *s, const cg_wino_op *op, int64_t count)
{
    int inputs, outputs;
    char describe[200];
    const wino_transform *t = &s->tf[0];
    int64_t plane_tiles = op->tiles[1] * op->tiles[2], tile_count = op->tiles[0] * plane_tiles;
    wino_matrix_rows(t, op->stage, &outputs, &inputs);
    wino_describe_matrix(t, op->stage, describe, sizeof describe);
    tmpl_set_bool(ctx, "volume", true);
    bool whole = op->stage == CG_WINO_AT && !output_by_plane(s);
    tmpl_set_bool(ctx, "whole", whole);
    tmpl_map_set(ctx, "depth_rows", wino_depth_terms(t, op->stage, whole));
    tmpl_set_str(ctx, "depth_describe", describe);
    tmpl_set_int(ctx, "depth", op->size[0]);
    tmpl_set_int(ctx, "depth_span", inputs);
    tmpl_set_int(ctx, "depth_outs", outputs);
    tmpl_set_int(ctx, "plane_tiles", plane_tiles);
    bool ok = wino_set_div(ctx, "plane_tiles_div", plane_tiles, tile_count - 1);
    if (op->stage == CG_WINO_AT)
        return ok && (whole || wino_set_div(ctx, "rows_div", op->rows, count / (op->outer * tile_count) - 1));
    tmpl_set_int(ctx, "depth_step", op->step[0]);
    tmpl_set_int(ctx, "depth_offset", op->offset[0]);
    return ok && wino_set_div(ctx, "channels_div", op->channels, count / (op->outer * tile_count) - 1);
}

/* The keys of the weights' transforms blocked for winograd-fused's cluster kernel (op->u_rows;
 * cg_wino_op): `blocked`, the padded channels and rows, the divisions that split a thread's index
 * into (element along the depth, block of rows, channel, row in the block), and `padded` where
 * some of its threads write the padding's zeros. */
static bool blocked_context(tmpl_value *ctx, const cg_wino_op *op, int64_t count)
{
    tmpl_set_bool(ctx, "blocked", op->u_rows > 0);
    tmpl_set_bool(ctx, "u_fragments", false);
    tmpl_set_bool(ctx, "padded", false);
    if (!op->u_rows)
        return true;
    int64_t channels = wino_u_channels(op, op->channels),
            blocks = wino_div_up(op->outer, op->u_rows);
    tmpl_set_int(ctx, "u_rows", op->u_rows);
    tmpl_set_bool(ctx, "u_fragments", op->u_fragments);
    tmpl_set_int(ctx, "u_blocks", blocks);
    tmpl_set_int(ctx, "padded_channels", channels);
    tmpl_set_bool(ctx, "padded", channels != op->channels || blocks * op->u_rows != op->outer);
    return wino_set_div(ctx, "run_div", channels * op->u_rows, count - 1) &&
           wino_set_div(ctx, "blocks_div", blocks, count / (channels * op->u_rows) - 1) &&
           wino_set_div(ctx, "u_rows_div", op->u_rows, channels * op->u_rows - 1);
}

/* The keys of the transforms laid out in the tensor-core GEMM's pieces (op->pieces; cg_tc_at):
 * `pieces`, their rows, pairing and steps, whether the channels are the rows (`channel_rows`) or
 * the sum, the (outer, tile) columns that exist, an element's positions (a thread each), the
 * divisions that split a thread's index into (element along the depth, piece, position in it),
 * and `padded` where some of its threads write the padding's zeros. */
static bool pieces_context(tmpl_value *ctx, const cg_wino_op *op, int64_t count)
{
    tmpl_set_bool(ctx, "pieces", op->pieces.rows > 0);
    if (!op->pieces.rows)
        return true;
    const int64_t columns = op->outer * op->tiles[0] * op->tiles[1] * op->tiles[2],
                  rows = op->channel_rows ? op->channels : columns, sums = op->channel_rows ? columns : op->channels,
                  floats = wino_pieces_positions(op), piece = CG_GEMM_TC_STEP * op->pieces.rows,
                  steps = wino_div_up(sums, CG_GEMM_TC_STEP);
    tmpl_set_int(ctx, "piece_rows", op->pieces.rows);
    tmpl_set_bool(ctx, "paired", op->pieces.paired);
    tmpl_set_bool(ctx, "channel_rows", op->channel_rows);
    tmpl_set_int(ctx, "piece_floats", piece);
    tmpl_set_int(ctx, "steps", steps);
    tmpl_set_int(ctx, "operand_columns", columns);
    tmpl_set_int(ctx, "e_floats", floats);
    tmpl_set_bool(ctx, "padded", sums % CG_GEMM_TC_STEP != 0 || rows % op->pieces.rows != 0);
    return wino_set_div(ctx, "e_div", floats, count - 1) && wino_set_div(ctx, "piece_div", piece, floats - 1) &&
           wino_set_div(ctx, "steps_div", steps, floats / piece - 1);
}

/* The context of a transform kernel doing op: the plane's dimensions (1 and 2) as the 2-D
 * kernel's 0 and 1, and a volume's depth (dimension 0) where the layer has one. */
static tmpl_value *kernel_context(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                                  int operand, const char *what, int64_t count, bool *failed)
{
    bool tiles = op->stage != CG_WINO_AT;
    int64_t tile_count = op->tiles[0] * op->tiles[1] * op->tiles[2];
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", wino_header_lines(s, k, op, what));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "stage", tiles ? "tiles" : "output");
    tmpl_set_bool(ctx, "volume", false); /* depth_context's, for a 3-D layer */
    tmpl_set_bool(ctx, "whole", false);
    tmpl_set_int(ctx, "threads", THREADS);
    tmpl_set_int(ctx, "count", count);
    tmpl_set_int(ctx, "tiles", tile_count);
    tmpl_set_int(ctx, "tiles1", op->tiles[2]);
    tmpl_set_int(ctx, "height", op->size[1]);
    tmpl_set_int(ctx, "width", op->size[2]);
    tmpl_set_int(ctx, "points", op->size[0] * op->size[1] * op->size[2]);
    tmpl_set_bool(ctx, "flip", op->flip);
    tmpl_set_bool(ctx, "planes_transposed", op->planes_transposed);
    tmpl_set_bool(ctx, "pieces_lo", op->pieces.lo); /* each piece followed by its lo halves (read up front) */
    tmpl_set_int(ctx, "buffer", op->buffer / 4);
    /* "epi": a key named epilogue would be hidden by common.cuh's macro of that name */
    tmpl_map_set(ctx, "epi", cg_value_epilogue(s->epilogue, k->epilogue));
    *failed |= !wino_set_div(ctx, "tiles1_div", op->tiles[2], op->tiles[1] * op->tiles[2] - 1);
    if (s->first == 0)
        *failed |= !depth_context(ctx, s, op, count);
    wino_plane_keys(ctx, s, op);
    if (tiles) {
        int64_t planes = op->outer * op->channels;
        tmpl_set_str(ctx, "source", operand ? "in1" : "in0");
        tmpl_set_int(ctx, "channels", op->channels);
        tmpl_set_int(ctx, "outer_count", op->outer);
        tmpl_set_int(ctx, "e_stride", op->pieces.rows ? wino_pieces_floats(op)
                                      : op->u_rows   ? wino_u_floats(op, op->channels, op->outer)
                                                     : planes * tile_count);
        bool checked = false;
        for (int d = 0; d < CG_WINO_DIMS; ++d) {
            char key[16];
            int64_t span = op->stage == CG_WINO_G ? s->tf[d].r : s->tf[d].alpha;
            int64_t last = (op->tiles[d] - 1) * op->step[d] - op->offset[d] + span; /* past the last tile */
            checked |= op->offset[d] > 0 || last > op->size[d];
            if (d == 0)
                continue; /* the depth's are depth_context's */
            snprintf(key, sizeof key, "step%d", d - 1);
            tmpl_set_int(ctx, key, op->step[d]);
            snprintf(key, sizeof key, "offset%d", d - 1);
            tmpl_set_int(ctx, key, op->offset[d]);
        }
        tmpl_set_bool(ctx, "checked", checked);
        int64_t slabs = count / tile_count; /* (element,) channel and outer */
        *failed |= !wino_set_div(ctx, "tiles_div", tile_count, count - 1) | !wino_set_div(ctx, "outer_div", op->outer, slabs - 1);
        *failed |= !blocked_context(ctx, op, count) | !pieces_context(ctx, op, count);
    } else {
        int64_t columns = op->outer * tile_count;
        tmpl_set_int(ctx, "columns", columns);
        tmpl_set_int(ctx, "rows", op->rows);
        tmpl_set_int(ctx, "e_stride", op->rows * columns);
        tmpl_set_int(ctx, "outer_stride", op->outer_stride);
        tmpl_set_int(ctx, "out_splits", op->splits > 1 ? op->splits : 1);
        tmpl_set_int(ctx, "out_partial", op->partial);
        tmpl_set_int(ctx, "row_stride", op->row_stride);
        *failed |= !wino_set_div(ctx, "columns_div", columns, count - 1) | !wino_set_div(ctx, "tiles_div", tile_count, columns - 1);
    }
    return ctx;
}


/* How a transform or the tensor GEMM of the non-fused algorithm's fprop or bprop meets the kernel
 * launched before it (cg_kernel's `dependent`): it waits for it at its start, while the next one
 * launches and takes the SMs as its blocks end; the data transform, which reads and writes nothing
 * the kernel before does (the weights' transform, or the last sub-batch's output transform), runs
 * beside it and waits only at its end, so that the weights' transform, a fraction of a wave on R2,
 * takes no time of its own. H200, "Issue 30, session 63": fprop and bprop 0.6-10% faster (R2 0.0707 ->
 * 0.0644 ms, R1 0.0988 -> 0.0926); with accgrad's launched so too, mixed (R4 4.7% faster, R1 14%
 * slower: not understood), so accgrad's launch plainly, as do winograd-fused's. */
static bool launched_dependently(const wino_spec *s)
{
    return s->pass != CONVGEN_ACCGRAD && strcmp(s->algo, "winograd") == 0;
}

static cg_dependent launch_dependent(const wino_spec *s, const cg_wino_op *op, int operand)
{
    if (!launched_dependently(s))
        return CG_DEPENDENT_NONE;
    return op->stage == CG_WINO_BT && operand == 0 ? CG_DEPENDENT_WAITS_LAST : CG_DEPENDENT_WAITS_FIRST;
}

/* Appends a transform kernel step doing op in `phase` on operand in0 or in1 (`operand`; the output
 * for op AT), named convgen_winograd_<pass>_<part>. */
convgen_status wino_add_transform(const wino_spec *s, const cg_wino_op *op, int operand,
                                  int phase, const char *part, const char *what, cg_generated *out)
{
    cg_kernel_op step = {.kind = CG_OP_WINOGRAD, .wino = *op};
    step.wino.operand = operand;
    cg_kernel *k = wino_add_kernel_step(&step, phase, out);
    snprintf(k->name, sizeof k->name, "convgen_winograd_%s_%s", convgen_pass_name(s->pass), part);
    /* the output transform is the last step of a sub-batch and stores all of its y */
    k->epilogue = op->stage == CG_WINO_AT && s->epilogue;
    if (wino_volume_tiles(s, &step.wino))
        return wino_volume_tiles_kernel(s, &step.wino, what, k);
    /* one thread per tile and element along the depth (1 for 2-D layers); AT: per tile, or per
     * tile and output plane */
    int64_t along_depth = op->stage != CG_WINO_AT ? s->tf[0].alpha : output_by_plane(s) ? s->tf[0].m : 1;
    const int64_t tiles = op->tiles[0] * op->tiles[1] * op->tiles[2];
    int64_t count = op->pieces.rows ? along_depth * wino_pieces_positions(op)
                    : op->u_rows    ? along_depth * wino_u_floats(op, op->channels, op->outer) /* the padding's too */
                                    : along_depth * (op->stage == CG_WINO_AT ? op->rows : op->channels) * op->outer * tiles;
    k->grid[0] = (unsigned)wino_div_up(count, THREADS);
    k->block[0] = THREADS;
    bool failed = false;
    tmpl_value *ctx = kernel_context(s, k, op, operand, what, count, &failed);
    if (failed) { /* cg_value_magic said why */
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    cg_kernel_set_dependent(k, ctx, s->target, launch_dependent(s, op, operand));
    return cg_render_kernel("winograd/winograd.cu", ctx, &k->source);
}

/* The tiles of a volume of `size` read through matrix BT (or G) of the spec's transforms: tile t
 * of each dimension from t * step - offset. */
cg_wino_op wino_tiles_op(const wino_spec *s, cg_wino_stage matrix, int64_t outer, int64_t channels,
                         const int64_t size[CG_WINO_DIMS], const int64_t tiles[CG_WINO_DIMS],
                         const int64_t step[CG_WINO_DIMS], const int64_t offset[CG_WINO_DIMS], int buffer)
{
    cg_wino_op op = {.stage = matrix, .outer = outer, .channels = channels, .buffer = s->buffer[buffer]};
    for (int d = 0; d < CG_WINO_DIMS; ++d) {
        op.m[d] = s->tf[d].m, op.r[d] = s->tf[d].r;
        op.size[d] = size[d], op.tiles[d] = tiles[d], op.step[d] = step[d], op.offset[d] = offset[d];
    }
    return op;
}

/* The products M ([e][rows][outer][tile], the tiles of the spec) through AT into volumes of
 * `size`, the volume of (row, outer) at outer * outer_stride + row * row_stride. */
static cg_wino_op output_op(const wino_spec *s, int64_t rows, int64_t outer, const int64_t size[CG_WINO_DIMS],
                            const int64_t tiles[CG_WINO_DIMS], int64_t outer_stride, int64_t row_stride)
{
    cg_wino_op op = {.stage = CG_WINO_AT, .rows = rows, .outer = outer, .buffer = s->buffer[WINO_M], .outer_stride = outer_stride,
                     .row_stride = row_stride};
    for (int d = 0; d < CG_WINO_DIMS; ++d) {
        op.m[d] = s->tf[d].m, op.r[d] = s->tf[d].r;
        op.size[d] = size[d], op.tiles[d] = tiles[d];
    }
    return op;
}

/* A strided-batched SGEMM over the elements, M = op(A) op(B) in cuBLAS's column-major terms,
 * where a stored row-major [a][b] matrix is the column-major b x a one: A and B are the buffers
 * `a` and `b` (WINO_U or WINO_V) read with `ta` and `tb`, m x n the product's column-major size
 * and k the sum's length. */
typedef struct gemm_shape {
    char ta, tb;
    int a, b;
    int64_t m, n, k, lda, ldb, ldc;
} gemm_shape;

static cg_gemm_step gemm_of(const wino_spec *s, gemm_shape g)
{
    return (cg_gemm_step){.real = true, .transa = g.ta, .transb = g.tb, .m = g.m, .n = g.n, .k = g.k,
                          .a_offset = s->buffer[g.a], .lda = g.lda, .b_offset = s->buffer[g.b], .ldb = g.ldb,
                          .c_offset = s->buffer[WINO_M], .ldc = g.ldc, .batch = s->elements,
                          .a_stride = s->matrix[g.a], .b_stride = s->matrix[g.b], .c_stride = s->matrix[WINO_M],
                          .a_pieces = s->pieces[g.a], .b_pieces = s->pieces[g.b], .splits = s->splits,
                          .split_stride = s->matrix[WINO_M] * s->elements,
                          .accumulate = s->pass == CONVGEN_ACCGRAD && s->chunks > 1};
}

/* The products' GEMM of the pass (the table at the top), in cuBLAS's column-major terms. With
 * convgen's GEMM, bprop's U is [e][k][c] (forward_program), read along the output channels. */
static gemm_shape products_shape(const cg_problem *p, const wino_spec *s)
{
    const int64_t T = s->columns;
    if (s->pass == CONVGEN_ACCGRAD && s->dy_rows) /* M[e] ([c][k]) = V D^T, from the tensor GEMM's pieces */
        return (gemm_shape){.ta = 'N', .tb = 'T', .a = WINO_U, .b = WINO_V, .m = p->k, .n = p->c, .k = T, .lda = p->k,
                            .ldb = p->c, .ldc = p->k};
    if (s->pass == CONVGEN_ACCGRAD && s->pieces[WINO_V].rows) /* M[e] ([k][c]) = D V^T, from the tensor GEMM's pieces */
        return (gemm_shape){.ta = 'N', .tb = 'T', .a = WINO_V, .b = WINO_U, .m = p->c, .n = p->k, .k = T, .lda = p->c,
                            .ldb = p->k, .ldc = p->c};
    if (s->pass == CONVGEN_ACCGRAD) /* M[e] ([k][c]) = D V^T, summed over the tiles */
        return (gemm_shape){.ta = 'T', .tb = 'N', .a = WINO_V, .b = WINO_U, .m = p->c, .n = p->k, .k = T, .lda = T,
                            .ldb = T, .ldc = p->c};
    /* M[e] ([out_ch][T]) = U^T V (fprop) or U V (bprop), U [c][k] (swapped: [k][c]), V [data_ch][T] */
    bool bprop = s->pass == CONVGEN_BPROP, swap = bprop && s->generated_gemm;
    return (gemm_shape){.ta = 'N', .tb = bprop && !swap ? 'N' : 'T', .a = WINO_V, .b = WINO_U, .m = T,
                        .n = bprop ? p->c : p->k, .k = bprop ? p->k : p->c, .lda = T, .ldb = swap ? p->c : p->k,
                        .ldc = T};
}

/* Appends a step in `phase` running convgen's GEMM kernel for g, convgen_winograd_<pass>_<part>. */
static convgen_status add_gemm_kernel(const wino_spec *s, const cg_gemm_step *g, int phase,
                                      const char *part, cg_generated *out)
{
    cg_kernel *k = wino_add_kernel_step(&(cg_kernel_op){.kind = CG_OP_GEMM, .gemm = *g}, phase, out);
    snprintf(k->name, sizeof k->name, "convgen_winograd_%s_%s", convgen_pass_name(s->pass), part);
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: winograd algorithm (non-fused), %s: the products, one GEMM per transform element",
                  CG_GENERATOR_VERSION, convgen_pass_name(s->pass));
    if (s->chunks > 1)
        cg_value_line(h, "sub-batches: %lld of %lld images (the workspace limit)", (long long)s->chunks,
                      (long long)s->batch);
    cg_value_line(h, "%s", "");
    return g->tensor ? cg_gemm_tc_kernel(g, s->target, h, k) : cg_gemm_kernel(g, h, k);
}

/* Appends the products' step: cuBLAS's SGEMM, or convgen's (gemm.c, or gemm_tc.c on the tensor
 * cores) where the spec chose it (winograd_generate, which checked that the kernel takes it). */
static convgen_status add_gemm(const cg_problem *p, const wino_spec *s, cg_generated *out)
{
    cg_gemm_step g = gemm_of(s, products_shape(p, s));
    g.tensor = s->tensor_gemm;
    g.dependent = launched_dependently(s) ? CG_DEPENDENT_WAITS_FIRST : CG_DEPENDENT_NONE;
    if (!s->generated_gemm) {
        out->steps[out->step_count++] = (cg_step){.kind = CG_STEP_GEMM, .phase = 1, .gemm = g};
        return CONVGEN_SUCCESS;
    }
    /* a sum over the sub-batches: C zeroed once before them (the generated kernel summing nothing) */
    cg_gemm_step zero = g;
    zero.k = 0, zero.accumulate = false, zero.tensor = false;
    zero.a_pieces = zero.b_pieces = (cg_tc_pieces){.rows = 0};
    zero.batch *= g.splits > 1 ? g.splits : 1, zero.splits = 1; /* every run's C, split_stride = c_stride batch */
    convgen_status st = g.accumulate ? add_gemm_kernel(s, &zero, 0, "zero_products", out) : CONVGEN_SUCCESS;
    return st == CONVGEN_SUCCESS ? add_gemm_kernel(s, &g, 1, "products", out) : st;
}

/* fprop, y = AT [U^T V] A, and bprop, dx = AT [U V] A with U from w flipped (fprop of dy at pad
 * r - 1 - pad, the channels swapped): the weights' transforms once (phase 0), then per sub-batch
 * the data's tiles, the products and the outputs. */
static convgen_status forward_program(const cg_problem *p, const wino_spec *s, cg_generated *out)
{
    bool bprop = s->pass == CONVGEN_BPROP;
    const int64_t one[] = {1, 1, 1}, none[] = {0, 0, 0}, m[] = {s->m[0], s->m[1], s->m[2]};
    const int64_t flipped[] = {s->kernel[0] - 1 - s->pad[0], s->kernel[1] - 1 - s->pad[1], s->kernel[2] - 1 - s->pad[2]};
    const int64_t data_ch = bprop ? p->k : p->c, out_ch = bprop ? p->c : p->k;
    const int64_t *data_size = bprop ? s->out : s->in, *out_size = bprop ? s->in : s->out;
    const char *const *names = wino_operand_names(s->pass);
    char part[32], what[64];

    /* U [e][c][k]; for bprop with convgen's GEMM [e][k][c] (w's planes read as [c][k]), so that
     * its loads run along the output channels as fprop's do, rather than along the sum */
    bool swap = bprop && s->generated_gemm;
    cg_wino_op w = swap ? wino_tiles_op(s, CG_WINO_G, p->c, p->k, s->kernel, one, none, none, WINO_U)
                        : wino_tiles_op(s, CG_WINO_G, p->k, p->c, s->kernel, one, none, none, WINO_U);
    w.flip = bprop != p->flip;
    w.planes_transposed = swap;
    w.pieces = s->pieces[WINO_U];
    convgen_status st = wino_add_transform(s, &w, 1, 0, "transform_w",
                                      bprop ? "the transforms of w, flipped" : "the transforms of w", out);
    cg_wino_op data = wino_tiles_op(s, CG_WINO_BT, s->batch, data_ch, data_size, s->tiles, m, bprop ? flipped : s->pad, WINO_V);
    data.pieces = s->pieces[WINO_V];
    snprintf(part, sizeof part, "transform_%s", names[0]);
    snprintf(what, sizeof what, "the transforms of %s's tiles", names[0]);
    if (st == CONVGEN_SUCCESS)
        st = wino_add_transform(s, &data, 0, 1, part, what, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    st = add_gemm(p, s, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    int64_t plane = out_size[0] * out_size[1] * out_size[2]; /* a volume's points */
    cg_wino_op result = output_op(s, out_ch, s->batch, out_size, s->tiles, out_ch * plane, plane);
    result.splits = s->splits, result.partial = s->matrix[WINO_M] * s->elements; /* the runs' products added */
    snprintf(part, sizeof part, "output_%s", names[2]);
    snprintf(what, sizeof what, "%s from the products' tiles", names[2]);
    return wino_add_transform(s, &result, 2, 1, part, what, out);
}

/* dw = AT [D V^T] A of F(r, m): per sub-batch the tiles of x and dy and their products, summed
 * by the GEMM over the tiles and over the sub-batches; the output transform once at the end. */
static convgen_status accgrad_program(const cg_problem *p, const wino_spec *s, cg_generated *out)
{
    const int64_t one[] = {1, 1, 1}, none[] = {0, 0, 0}, m[] = {s->m[0], s->m[1], s->m[2]};
    /* in the tensor GEMM's pieces, each the channels its rows and the tiles the sum */
    cg_wino_op x = wino_tiles_op(s, CG_WINO_BT, s->batch, p->c, s->in, s->tiles, m, s->pad, WINO_V);
    x.pieces = s->pieces[WINO_V], x.channel_rows = true;
    convgen_status st = wino_add_transform(s, &x, 0, 1, "transform_x", "the transforms of x's tiles", out);
    cg_wino_op dy = wino_tiles_op(s, CG_WINO_G, s->batch, p->k, s->out, s->tiles, m, none, WINO_U);
    dy.pieces = s->pieces[WINO_U], dy.channel_rows = true;
    if (st == CONVGEN_SUCCESS)
        st = wino_add_transform(s, &dy, 1, 1, "transform_dy", "the transforms of dy's tiles (the filters)", out);
    if (st != CONVGEN_SUCCESS)
        return st;
    st = add_gemm(p, s, out); /* M[e] ([k][c], or [c][k] where dy_rows) = D V^T, summed over the tiles */
    if (st != CONVGEN_SUCCESS)
        return st;
    int64_t taps = s->kernel[0] * s->kernel[1] * s->kernel[2];
    cg_wino_op dw = s->dy_rows ? output_op(s, p->c, p->k, s->kernel, one, p->c * taps, taps)
                               : output_op(s, p->k, p->c, s->kernel, one, taps, p->c * taps);
    dw.flip = p->flip;
    dw.splits = s->splits, dw.partial = s->matrix[WINO_M] * s->elements; /* the runs' products added */
    return wino_add_transform(s, &dw, 2, 2, "output_dw", "dw from the summed products", out);
}

/* Whether convgen's GEMM sums the products: where asked for, in strict fp32 only (TF32 is
 * cuBLAS's); chosen, for fprop and bprop over at least 1000 tiles with 33 to 64 output channels
 * (its 64-wide blocks filled), where it measured 3-11% faster than cuBLAS's SGEMM on the H100,
 * and for 3-D layers with 65 to 127 summed over more than 32 (one block the multiple of 16 above
 * wide), where its products measured 1.5-1.6x cuBLAS's on the H200 at 80 -> 80 (n337's layers 2
 * and 4; Z3's plan 1.09x). bench/NOTES.md, "winograd's generated GEMM" and "n337's 3-D layers";
 * cuBLAS is ahead for wider C, and in accgrad, whose long sums it splits. */
static bool use_generated_gemm(const cg_problem *p, const wino_spec *s, const cg_tuning *tune)
{
    int gemm = tune ? tune->gemm : CONVGEN_GEMM_CHOSEN;
    if ((tune && tune->tf32) || gemm == CONVGEN_GEMM_CUBLAS)
        return false;
    if (gemm == CONVGEN_GEMM_GENERATED)
        return true;
    /* the whole batch's tiles, not a sub-batch's: a workspace limit must not switch to cuBLAS,
     * whose work area (32 MiB) the plan would then need beside it */
    int64_t outputs = s->pass == CONVGEN_FPROP ? p->k : p->c, sums = s->pass == CONVGEN_FPROP ? p->c : p->k;
    int64_t tiles = p->n * s->tiles[0] * s->tiles[1] * s->tiles[2];
    bool wide_volume = p->rank == 3 && outputs < 128 && sums > 32;
    return s->pass != CONVGEN_ACCGRAD && outputs > 32 && (outputs <= 64 || wide_volume) && tiles >= 1000;
}

/* Whether the data's tiles go through winograd_volume.c's bricks (a 3-D layer's, several tiles a
 * volume): then V is stored as a matrix, not in the tensor GEMM's pieces. */
static bool volume_data(const wino_spec *s)
{
    return s->first == 0 && s->tiles[0] * s->tiles[1] * s->tiles[2] > 1;
}

/* Whether the products go to convgen's GEMM on the tensor cores (gemm_tc.c), in strict fp32, on an
 * sm_90 target: where asked (CONVGEN_GEMM_TENSOR), and chosen as measured on the H200
 * (bench/NOTES.md, "Issue 30, sessions 60 and 61"):
 * - fprop and bprop with 64 outputs and sums or more, the tiles in the kernel's pieces: 1.03-2.0x
 *   faster than cuBLAS's SGEMM and the generated GEMM (V3 0.78 -> 0.51 ms; V1 and R1, 64 -> 64,
 *   3%; F1's 32 sums slower); 128 or more where a 3-D layer's bricks store V as a matrix (the
 *   tiles and channels multiples of 4, in 16-byte rows), which the kernel transposes: Z3's 80
 *   ran slower.
 * - accgrad, whose sums run along the tiles (read only in pieces, so not over 3-D bricks), with 32
 *   channels or more on each side: 1.05-1.6x faster with its sum split into runs (F1 0.18 ->
 *   0.17 ms, V1 2.12 -> 1.65, V3 0.72 -> 0.48, S32 0.30 -> 0.21).
 * Where the kernel does not take the step (a sub-batch's tiles, or pieces past a workspace
 * limit), convgen's other GEMM does it: never cuBLAS's, whose work area (32 MiB) a workspace limit
 * would then have to make room for. */
static bool wants_tensor_gemm(const cg_problem *p, const wino_spec *s, const cg_tuning *tune, const cg_target *t)
{
    int gemm = tune ? tune->gemm : CONVGEN_GEMM_CHOSEN;
    if ((tune && tune->tf32) || !cg_target_wgmma(t) || (gemm != CONVGEN_GEMM_TENSOR && gemm != CONVGEN_GEMM_CHOSEN))
        return false;
    if (s->pass == CONVGEN_ACCGRAD) /* with both operands in pieces */
        return !volume_data(s) && (gemm == CONVGEN_GEMM_TENSOR || (p->c >= 32 && p->k >= 32));
    if (gemm == CONVGEN_GEMM_TENSOR)
        return true;
    int64_t outputs = s->pass == CONVGEN_FPROP ? p->k : p->c, sums = s->pass == CONVGEN_FPROP ? p->c : p->k;
    int64_t tiles = p->n * s->tiles[0] * s->tiles[1] * s->tiles[2];
    if (volume_data(s))
        return outputs >= 128 && sums >= 128 && outputs % 4 == 0 && sums % 4 == 0 && tiles % 4 == 0;
    return outputs >= 64 && sums >= 64;
}

/* Whether accgrad's tensor GEMM takes dy's tiles as op(A), its k output channels the rows of C,
 * and x's as op(B), rather than x's c channels the rows: where x has fewer channels and that pads
 * C's tiles less (where x has more, the turn would make fewer and wider tiles: not measured). The
 * kernel makes C in blocks of CG_GEMM_TC_ROWS rows (two warpgroups of wgmma's 64) and columns in
 * multiples of 8, so the side of fewer channels wastes less as the columns: F1 (32 -> 64) does
 * 128 x 32 a tile for its 64 x 32 rather than 128 x 64 for 32 x 64, half the products, and its
 * x's pieces are 32 rows rather than 128 (three quarters of them zeros, written by x's transform
 * and read by the products). Ties keep x's channels the rows. H100, bench/NOTES.md "Issue 30,
 * session 71": F1 accgrad 0.185 -> 0.168 ms, F2 0.699 -> 0.554 (its 64 -> 128 turned too). */
static bool accgrad_dy_rows(const cg_problem *p)
{
    const int64_t x_rows = wino_div_up(p->c, CG_GEMM_TC_ROWS) * CG_GEMM_TC_ROWS * cg_gemm_tc_columns(p->k);
    const int64_t dy_rows = wino_div_up(p->k, CG_GEMM_TC_ROWS) * CG_GEMM_TC_ROWS * cg_gemm_tc_columns(p->c);
    return p->c < p->k && dy_rows < x_rows;
}

/* The tensor GEMM's operands in its pieces (gemm_tc.h), written so by the transforms: U (op(B),
 * the outputs its rows; accgrad's D, dy's output channels) always, V (op(A): the tiles its rows;
 * accgrad's x's channels) where winograd.cu's kernel makes the data's tiles (accgrad where
 * accgrad_dy_rows: the other way round, U op(A) in paired 128-row pieces, V op(B)), not
 * winograd_volume.c's bricks (a 3-D layer's; wants_tensor_gemm takes no accgrad there). Read as
 * stored, the kernel's converter warps (three then) transpose every step, which made V3's products 0.40
 * ms against 0.28 in pieces (bench/NOTES.md, "Issue 30, session 60"). fprop's and bprop's U (the
 * weights') carries its lo halves, made once by the weights' transform rather than by the
 * converters of every block that reads a piece: their work bound the products (V3 0.318 -> 0.249
 * ms, R3 0.049 -> 0.037; even R4, whose U of 38 MB one block row reads once, 0.0718 -> 0.0711 ms
 * with the transform's writes doubled: "Issue 30, session 62"). accgrad's U is dy's tiles, as
 * large as the data: twice that through memory would cost more than the converters. */
static void set_pieces(const cg_problem *p, wino_spec *s)
{
    const bool lo = s->pass != CONVGEN_ACCGRAD;
    s->pieces[WINO_U] = (cg_tc_pieces){.rows = cg_gemm_tc_columns(s->pass == CONVGEN_BPROP ? p->c : p->k), .lo = lo};
    s->pieces[WINO_V] = volume_data(s) ? (cg_tc_pieces){.rows = 0} : (cg_tc_pieces){.rows = CG_GEMM_TC_ROWS, .paired = true};
    s->dy_rows = s->pass == CONVGEN_ACCGRAD && accgrad_dy_rows(p);
    if (s->dy_rows) {
        s->pieces[WINO_U] = (cg_tc_pieces){.rows = CG_GEMM_TC_ROWS, .paired = true};
        s->pieces[WINO_V] = (cg_tc_pieces){.rows = cg_gemm_tc_columns(p->c)};
    }
}

/* Whether the tensor GEMM takes the products as sized (st: choose_batch's status): the pieces
 * sized within the kernels' 32-bit indices, the workspace within the limit, the step taken. */
static bool tensor_gemm_fits(const cg_problem *p, const cg_tuning *tune, const cg_target *t, const wino_spec *s,
                             convgen_status st)
{
    cg_gemm_step g = gemm_of(s, products_shape(p, s));
    bool fits = st == CONVGEN_SUCCESS && (!tune || !tune->workspace_limit || s->workspace <= tune->workspace_limit);
    return fits && cg_gemm_tc_takes(&g, t);
}

static convgen_status winograd_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                        const cg_tuning *tune, cg_generated *out)
{
    wino_spec s;
    convgen_status st = wino_choose_tiles(p, pass, tune, WINO_MAX_DEFAULT_ALPHA, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    s.algo = "winograd";
    s.target = t;
    const bool tensor = wants_tensor_gemm(p, &s, tune, t);
    if (tensor) /* before the sub-batches are sized: the pieces' padding is workspace too */
        set_pieces(p, &s);
    st = choose_batch(p, tune, &s);
    if (st != CONVGEN_SUCCESS && !tensor)
        return st;
    /* convgen's GEMM kernels (generated_gemm: bprop's U in their layout) where asked or chosen:
     * the tensor cores' where the pieces could be sized (their padding within the kernels' 32-bit
     * indices), fit the limit and the kernel takes the step, else the SIMT one in its place; past
     * its 32-bit indices cuBLAS's, and every header says so */
    s.generated_gemm = tensor || use_generated_gemm(p, &s, tune);
    if (tensor) {
        s.tensor_gemm = tensor_gemm_fits(p, tune, t, &s, st);
        if (!s.tensor_gemm && s.pieces[WINO_U].lo) { /* U's lo halves are workspace too: without them */
            s.pieces[WINO_U].lo = false;
            st = choose_batch(p, tune, &s);
            s.tensor_gemm = tensor_gemm_fits(p, tune, t, &s, st);
        }
        if (!s.tensor_gemm) { /* the SIMT kernel reads U and V as matrices */
            s.pieces[WINO_U] = s.pieces[WINO_V] = (cg_tc_pieces){.rows = 0};
            s.dy_rows = false;
            st = choose_batch(p, tune, &s);
            if (st != CONVGEN_SUCCESS)
                return st;
        }
    }
    if (s.generated_gemm && !s.tensor_gemm) {
        cg_gemm_step g = gemm_of(&s, products_shape(p, &s));
        s.generated_gemm = cg_gemm_kernel_takes(&g);
    }
    snprintf(s.plan[0], sizeof s.plan[0], "one %s SGEMM per", s.tensor_gemm ? "generated tensor-core (3xTF32)"
                                                              : s.generated_gemm ? "generated" : "cuBLAS");
    snprintf(s.plan[1], sizeof s.plan[1], "transform element (%lld of them) over the %lld tiles of %lld images at once",
             (long long)s.elements, (long long)s.columns, (long long)s.batch);
    out->workspace_bytes = s.workspace;
    out->tf32 = tune && tune->tf32;
    /* the sub-batches: x, y, dy and dx advance by a sub-batch's images, w and dw stay */
    int64_t elems[3];
    cg_problem_operand_elems(p, pass, elems);
    int weights = pass == CONVGEN_ACCGRAD ? 2 : 1;
    out->chunks = s.chunks;
    for (int i = 0; i < 3; ++i)
        out->chunk_elems[i] = i == weights ? 0 : elems[i] / p->n * s.batch;
    switch (pass) {
    case CONVGEN_FPROP:
    case CONVGEN_BPROP: return forward_program(p, &s, out);
    case CONVGEN_ACCGRAD: return accgrad_program(p, &s, out);
    }
    return cg_fail(CONVGEN_ERROR_INTERNAL, "winograd: pass %d", (int)pass);
}

int wino_tile_variants(const cg_problem *p, int effort, const cg_tuning *fixed, bool by_gemm, int first,
                       int max_alpha, cg_tuning *out, int max)
{
    int64_t r = 1;
    bool tiles_fixed = false;
    for (int d = first; d < p->rank; ++d)
        r = p->kernel[d] > r ? p->kernel[d] : r;
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        tiles_fixed |= fixed->winograd_m[d] != 0;
    int m_lo = 0, m_hi = 0; /* 0: the caller's tile or the default one */
    if (effort == CONVGEN_EFFORT_EXHAUSTIVE && !tiles_fixed)
        m_lo = 2, m_hi = max_alpha - (int)r + 1;
    if (m_hi < m_lo) /* no tile of 2 or more within the bound (a 3-D 6 or 7 kernel): the default one */
        m_lo = m_hi = 0;
    bool both_gemms = by_gemm && !fixed->tf32 && !fixed->gemm;
    int n = 0;
    for (int m = m_lo; m <= m_hi; ++m) {
        cg_tuning t = *fixed;
        for (int d = first; m && d < p->rank; ++d)
            if (p->kernel[d] > 1)
                t.winograd_m[d] = m;
        n = cg_variants_add(out, n, max, &t, both_gemms);
    }
    return n;
}

int wino_variants(const cg_problem *p, int effort, const cg_tuning *fixed, bool by_gemm, cg_tuning *out, int max)
{
    /* a 3-D layer's within its default bound */
    int max_alpha = p->rank == 3 ? WINO_MAX_VOLUME_ALPHA : WINO_MAX_DEFAULT_ALPHA;
    return wino_tile_variants(p, effort, fixed, by_gemm, 0, max_alpha, out, max);
}

/* AUTO's candidates: each tile by both GEMMs, cuBLAS's first (cg_variants_add) unless the default
 * (use_generated_gemm) is convgen's, which then comes first so that it wins a tie of the
 * estimates: the cost model rates the two GEMMs alike, and the default rule is what was
 * measured (n337's 80-channel 3-D layers at effort estimate). Then the tensor cores' GEMM
 * (gemm_tc.c), which the cost model rates on its own, at every tile whatever the effort (the
 * estimate chooses among them, and at effort measure tune.c times only the tiles it rates near
 * the best: the measured best tile lay within 1.18x of the best estimate on every layer-pass of
 * the H100's bench set, where the default tile rule lost up to 1.42x, R4; bench/results/nvidia-
 * h100-80gb-hbm3-2026-12-05-tune.csv); on a GPU without wgmma (or for
 * a 3-D layer's accgrad over bricks) such a candidate plans as the chosen GEMM does, and the tie
 * keeps the first. */
static int winograd_variants(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed,
                             cg_tuning *out, int max)
{
    int n = wino_variants(p, effort, fixed, true, out, max);
    if (!fixed->tf32 && !fixed->gemm) {
        int first = n;
        n += wino_variants(p, CONVGEN_EFFORT_EXHAUSTIVE, fixed, false, out + n, max - n);
        for (int i = first; i < n; ++i)
            out[i].gemm = CONVGEN_GEMM_TENSOR;
    }
    wino_spec s;
    if (wino_choose_tiles(p, pass, fixed, WINO_MAX_DEFAULT_ALPHA, &s) != CONVGEN_SUCCESS ||
        !use_generated_gemm(p, &s, NULL))
        return n;
    for (int i = 0; i + 1 < n; ++i)
        if (out[i].gemm == CONVGEN_GEMM_CUBLAS && out[i + 1].gemm == CONVGEN_GEMM_GENERATED) {
            cg_tuning t = out[i];
            out[i] = out[i + 1], out[i + 1] = t;
            ++i;
        }
    return n;
}

static const cg_knob winograd_knobs[] = {
    {"m", cg_tile_print, cg_tile_parse},
    {"gemm", cg_gemm_print, cg_gemm_parse},
    {NULL, NULL, NULL},
};

const cg_planner cg_winograd_planner = {
    .algo = CONVGEN_ALGO_WINOGRAD,
    .name = "winograd",
    .flags = CG_PLANNER_SUB_BATCHES,
    .applicable = wino_applicable,
    .generate = winograd_generate,
    .knobs = winograd_knobs,
    .variants = winograd_variants,
};
