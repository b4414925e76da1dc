/* The tile transforms of a 3-D layer's data volumes (templates/winograd/winograd_volume.cu): BT of
 * x's (dy's for bprop) tiles, and accgrad's G of dy's.
 *
 * A volume tile of F(4,3)^3 spans 6^3 points and has 216 elements: too many for one thread's
 * registers, and a thread per element slice e0 (winograd.cu's way, kept for the weights' single
 * tiles) reads each point of the volume about 20 times (6 slices x 3.4 for the overlap of the
 * tiles), which held the transform of U1's x to 37% of the copy rate. Here a block takes a brick:
 * rows of tiles of one tile along the depth, of one (channel, outer) volume. Phase A combines the
 * brick's slices along the depth (each point read once, coalesced) into alpha0 element planes in
 * shared memory, phase B runs the plane's transform for each (e0, tile): 36 reads of shared memory
 * for 36 outputs, stored where the GEMMs read them, consecutive threads on consecutive tiles. */
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "winograd_plan.h"

enum {
    VOLUME_THREADS = 128,
    BRICK_TILES = 64,              /* the longest row of tiles a brick takes whole */
    BRICK_SHARED = 48 * 1024,      /* the element planes, in static shared memory */
    BANK_RUN = 32,                 /* a row of the planes gets one float of padding per 32 */
};

/* A brick's shape and its element planes in shared memory. */
typedef struct brick {
    int64_t tiles0, tiles1;     /* tile rows and tiles per row */
    int64_t rows, columns;      /* the region of a slice it reads */
    int64_t pitch;              /* floats per row of a plane: the columns, padded */
    int64_t alpha0, span0;      /* the element planes (rows of the depth matrix) and the slices read */
} brick;

static int64_t brick_floats(const brick *b) { return b->alpha0 * b->rows * b->pitch; }

static void brick_region(const cg_wino_op *op, int span1, int span2, brick *b)
{
    b->rows = (b->tiles0 - 1) * op->step[1] + span1;
    b->columns = (b->tiles1 - 1) * op->step[2] + span2;
    b->pitch = b->columns + (b->columns - 1) / BANK_RUN + 1;
}

/* Phase B's share of useful work for bricks of `tiles0` rows: a plane's (e0, tile) tasks over the
 * rounds of the block's threads its bricks take (a brick's last round part empty, a plane's last
 * brick part empty). */
static double brick_fill(const cg_wino_op *op, int alpha0, int64_t tiles0, int64_t tiles1)
{
    int64_t bricks = wino_div_up(op->tiles[1], tiles0), rounds = wino_div_up(alpha0 * tiles0 * tiles1, VOLUME_THREADS);
    return (double)(alpha0 * op->tiles[1] * tiles1) / (double)(bricks * rounds * VOLUME_THREADS);
}

/* Runs of one row, `tiles1` tiles long, halved until the planes fit (false where one tile does
 * not). */
static bool choose_run(const cg_wino_op *op, int span1, int span2, int64_t tiles1, brick *b)
{
    for (b->tiles0 = 1, b->tiles1 = tiles1;; b->tiles1 = (b->tiles1 + 1) / 2) {
        brick_region(op, span1, span2, b);
        if (brick_floats(b) * 4 <= BRICK_SHARED)
            return true;
        if (b->tiles1 == 1)
            return false;
    }
}

/* Whole rows of tiles where a row has at most BRICK_TILES (then the brick's tiles are contiguous in
 * the GEMMs' order): of the row counts whose planes fit BRICK_SHARED (spread evenly over a plane's
 * bricks), the one whose rounds of phase B are fullest, the larger within half a percent.
 * Measured on an H200 (n337's layers, U1, U2, C1): the transform runs at the rounds' fill, not at
 * the brick's size; 33 tiles a row in bricks of 1, 2 and 3 rows (77%, 75% and 93% full) took 20.4,
 * 15.1 and 12.4-12.6 ms, and 32 or 16 tiles a row lost 10% in bricks of 96 tiles (90%) against 64
 * (100%). Rows of more than BRICK_TILES, and rows of which one does not fit (large tiles), go in
 * runs of one row. */
static bool choose_brick(const cg_wino_op *op, int alpha0, int span0, int span1, int span2, brick *b)
{
    b->alpha0 = alpha0, b->span0 = span0;
    if (op->tiles[2] > BRICK_TILES)
        return choose_run(op, span1, span2, 32, b);
    int64_t best = 0;
    double best_fill = 0;
    b->tiles1 = op->tiles[2];
    for (int64_t rows = 1; rows <= op->tiles[1]; ++rows) {
        b->tiles0 = wino_div_up(op->tiles[1], wino_div_up(op->tiles[1], rows)); /* spread evenly */
        brick_region(op, span1, span2, b);
        if (brick_floats(b) * 4 > BRICK_SHARED)
            break;
        double fill = brick_fill(op, alpha0, b->tiles0, b->tiles1);
        if (fill >= best_fill - 0.005)
            best = b->tiles0;
        best_fill = fill > best_fill ? fill : best_fill;
    }
    if (!best)
        return choose_run(op, span1, span2, op->tiles[2], b);
    b->tiles0 = best;
    brick_region(op, span1, span2, b);
    return true;
}

/* The plane's transforms (wino_plane_keys), and its tiles' steps and offsets as the template's
 * step0, step1, offset0 and offset1. */
static void plane_keys(tmpl_value *ctx, const wino_spec *s, const cg_wino_op *op)
{
    wino_plane_keys(ctx, s, op);
    for (int d = 1; d < CG_WINO_DIMS; ++d) {
        char key[16];
        snprintf(key, sizeof key, "step%d", d - 1);
        tmpl_set_int(ctx, key, op->step[d]);
        snprintf(key, sizeof key, "offset%d", d - 1);
        tmpl_set_int(ctx, key, op->offset[d]);
    }
}

/* The blocks: one per brick of every tile along the depth of every (channel, outer) volume. */
static int64_t brick_blocks(const cg_wino_op *op, const brick *b)
{
    return op->channels * op->outer * wino_div_up(op->tiles[1], b->tiles0) * wino_div_up(op->tiles[2], b->tiles1) *
           op->tiles[0];
}

/* The brick's keys and the magic divisions that split the block and task indices. */
static bool brick_keys(tmpl_value *ctx, const cg_wino_op *op, const brick *b)
{
    int64_t bricks0 = wino_div_up(op->tiles[1], b->tiles0), bricks1 = wino_div_up(op->tiles[2], b->tiles1);
    int64_t pairs = op->channels * op->outer, tasks = b->alpha0 * b->tiles0 * b->tiles1, blocks = brick_blocks(op, b);
    tmpl_set_int(ctx, "brick0", b->tiles0);
    tmpl_set_int(ctx, "brick1", b->tiles1);
    tmpl_set_int(ctx, "bricks0", bricks0);
    tmpl_set_int(ctx, "bricks1", bricks1);
    tmpl_set_int(ctx, "region_rows", b->rows);
    tmpl_set_int(ctx, "region_columns", b->columns);
    tmpl_set_int(ctx, "pitch", b->pitch);
    tmpl_set_int(ctx, "bank_run", BANK_RUN);
    tmpl_set_int(ctx, "shared_floats", brick_floats(b));
    tmpl_set_int(ctx, "column_tasks", b->rows * b->columns);
    tmpl_set_int(ctx, "tile_tasks", tasks);
    /* block = ((pair, b0), b1), tz: tz fastest, so that the blocks running together share slices */
    return wino_set_div(ctx, "tz_div", op->tiles[0], blocks - 1) &&
           wino_set_div(ctx, "bricks1_div", bricks1, blocks / op->tiles[0] - 1) &&
           wino_set_div(ctx, "bricks0_div", bricks0, pairs * bricks0 - 1) &&
           wino_set_div(ctx, "outer_div", op->outer, pairs - 1) &&
           wino_set_div(ctx, "columns_div", b->columns, b->rows * b->columns - 1) &&
           wino_set_div(ctx, "plane_tasks_div", b->tiles0 * b->tiles1, tasks - 1) &&
           wino_set_div(ctx, "brick1_div", b->tiles1, b->tiles0 * b->tiles1 - 1);
}

/* The keys of the volumes, the depth's matrix and the layout of the transforms. */
static tmpl_value *volume_context(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op, const char *what,
                                  const int span[3], const int outs[3])
{
    char describe[200];
    int64_t tile_count = op->tiles[0] * op->tiles[1] * op->tiles[2];
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", wino_header_lines(s, k, op, what));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", VOLUME_THREADS);
    tmpl_set_str(ctx, "source", op->operand ? "in1" : "in0");
    tmpl_set_bool(ctx, "flip", op->flip);
    tmpl_set_bool(ctx, "planes_transposed", op->planes_transposed);
    tmpl_set_int(ctx, "buffer", op->buffer / 4);
    tmpl_set_int(ctx, "channels", op->channels);
    tmpl_set_int(ctx, "outer_count", op->outer);
    tmpl_set_int(ctx, "depth", op->size[0]);
    tmpl_set_int(ctx, "height", op->size[1]);
    tmpl_set_int(ctx, "width", op->size[2]);
    tmpl_set_int(ctx, "points", op->size[0] * op->size[1] * op->size[2]);
    tmpl_set_int(ctx, "tiles", tile_count);
    tmpl_set_int(ctx, "tiles_z", op->tiles[0]);
    tmpl_set_int(ctx, "tiles0", op->tiles[1]);
    tmpl_set_int(ctx, "tiles1", op->tiles[2]);
    tmpl_set_int(ctx, "e_stride", op->outer * op->channels * tile_count);
    tmpl_set_int(ctx, "plane_elements", outs[1] * outs[2]);
    tmpl_map_set(ctx, "depth_rows", wino_depth_terms(&s->tf[0], op->stage, false));
    wino_describe_matrix(&s->tf[0], op->stage, describe, sizeof describe);
    tmpl_set_str(ctx, "depth_describe", describe);
    tmpl_set_int(ctx, "depth_span", span[0]);
    tmpl_set_int(ctx, "depth_alpha", outs[0]);
    tmpl_set_int(ctx, "depth_step", op->step[0]);
    tmpl_set_int(ctx, "depth_offset", op->offset[0]);
    return ctx;
}

convgen_status wino_volume_tiles_kernel(const wino_spec *s, const cg_wino_op *op, const char *what, cg_kernel *k)
{
    int span[3], outs[3];
    for (int d = 0; d < CG_WINO_DIMS; ++d)
        wino_matrix_rows(&s->tf[d], op->stage, &outs[d], &span[d]);
    brick b;
    if (!choose_brick(op, outs[0], span[0], span[1], span[2], &b))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd: a tile's element planes (%d x %d x %d floats) pass %d "
                       "bytes of shared memory", outs[0], span[1], span[2], BRICK_SHARED);
    int64_t blocks = brick_blocks(op, &b);
    if (blocks > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd: %lld bricks of tiles pass the grid's 32-bit index",
                       (long long)blocks);
    k->grid[0] = (unsigned)blocks;
    k->block[0] = VOLUME_THREADS;
    tmpl_value *ctx = volume_context(s, k, op, what, span, outs);
    plane_keys(ctx, s, op);
    if (!brick_keys(ctx, op, &b)) { /* cg_value_magic said why */
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    return cg_render_kernel("winograd/winograd_volume.cu", ctx, &k->source);
}
