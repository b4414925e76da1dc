/* convgen's batched SGEMM on the tensor cores: C = op(A) op(B) per batch entry, column-major, in
 * 3xTF32 by wgmma (sm_90a): each operand split into hi (the value itself, of which the tensor
 * cores read the TF32 bits) and lo (the rest, rounded to TF32), and lo hi + hi lo + hi hi summed in
 * fp32 (lo lo, below 2^-20 of a product, left out): fp32's accuracy at ~1.5x the FFMA peak where
 * cuBLAS's SGEMM reaches 0.67x (bench/NOTES.md, "Issue 30, session 60").
 *
 * A block makes 128 rows x bn columns of C (bn <= 256, wgmma's N). Its warpgroups 0 and 1 (64
 * rows each) run each step's 3 bk / 8 wgmma, B from shared memory and A from registers (each
 * thread reads its fragments' hi halves and makes their lo halves: the tensor cores' reads of
 * both operands from shared memory were its bound, bench/NOTES.md "Issue 30, session 85"), and
 * hand the stage back once they are done with it. Warp 8 brings each step of bk of the sum: an
 * operand in the kernel's pieces (cg_tc_pieces, laid out so by its producer, the Winograd
 * transforms) as one bulk copy of its piece (with its lo halves where the producer made them),
 * one as stored as bk bulk copies of a row (one lane a row) into a raw stage. The warps after it
 * (converter_warps) make B's piece's lo halves beside it, or turn the raw rows into wgmma's
 * K-major core matrices (8 rows x 4 of the sum, 16 bytes a row), hi and lo (a transpose; A's hi
 * only). Stages pass by mbarriers (loaded, ready, empty).
 * Where the tiles outnumber the blocks the GPU holds at once, the grid is that many blocks, each
 * taking every grid-th tile, its stages running on from one tile into the next (persistent_grid).
 * This is the probe's gemm_ws and gemm_wsr
 * (bench/probes/gemm_wgmma.cu): V3's products took 0.28 ms in pieces, 0.40 as stored. Written
 * here because cuBLAS has no 3xTF32 GEMM (its FP32 emulation on the BF16 tensor cores ran its
 * plain SGEMM on Hopper) and CUTLASS is C++ outside the toolkit. */
#include "gemm_tc.h"

#include <stdio.h>

#include "gemm_layout.h"

#include "templates.h"
#include "util.h"
#include "values.h"

enum {
    TC_ROWS = CG_GEMM_TC_ROWS,
    TC_STEP = CG_GEMM_TC_STEP,
    TC_MAX_N = 256, /* wgmma's widest N */
    TC_MAX_STAGES = 6,
    TC_CONSUMER_WARPS = 8, /* two warpgroups of wgmma */
};

int cg_gemm_tc_columns(int64_t n)
{
    int64_t blocks = (n + TC_MAX_N - 1) / TC_MAX_N, per = (n + blocks - 1) / blocks;
    return (int)((per + 7) / 8 * 8);
}

/* An operand stored [k][rows] in 16-byte rows (ld, offset and stride multiples of 4 floats), or in
 * the pieces `want`, with or without their lo halves (their offset and stride multiples of 4
 * floats too). */
static bool operand_takes(cg_tc_pieces p, cg_tc_pieces want, int64_t rows, int64_t ld, int64_t offset,
                          int64_t stride)
{
    if (p.rows)
        return p.rows == want.rows && p.paired == want.paired && offset % 16 == 0 && stride % 4 == 0;
    return !p.lo && rows % 4 == 0 && ld % 4 == 0 && ld >= rows && offset % 16 == 0 && stride % 4 == 0;
}

/* The tiles of C, bn columns wide, over the row blocks, column blocks, entries and runs of g;
 * false past INT32_MAX. */
static bool tile_count(const cg_gemm_step *g, int bn, int64_t *tiles)
{
    const int64_t factors[] = {(g->n + bn - 1) / bn, g->batch, g->splits > 1 ? g->splits : 1};
    *tiles = (g->m + TC_ROWS - 1) / TC_ROWS;
    for (int i = 0; i < 3; ++i) {
        if (factors[i] > INT32_MAX / *tiles)
            return false;
        *tiles *= factors[i];
    }
    return true;
}

bool cg_gemm_tc_takes(const cg_gemm_step *g, const cg_target *t)
{
    if (!cg_target_wgmma(t) || !g->real || g->inc > 1 || g->transa != 'N' || g->transb != 'T' ||
        g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1)
        return false;
    const int64_t splits = g->splits > 1 ? g->splits : 1; /* each run of the sum non-empty */
    if ((splits - 1) * cg_gemm_split_steps(g->k, splits) * TC_STEP >= g->k ||
        (splits > 1 && g->split_stride != g->c_stride * g->batch))
        return false;
    int64_t tiles; /* numbered in 32 bits: the kernel's unsigned arithmetic, a grid's x */
    if (!tile_count(g, cg_gemm_tc_columns(g->n), &tiles))
        return false;
    const cg_tc_pieces a = {.rows = TC_ROWS, .paired = true}, b = {.rows = cg_gemm_tc_columns(g->n)};
    return operand_takes(g->a_pieces, a, g->m, g->lda, g->a_offset, g->a_stride) &&
           operand_takes(g->b_pieces, b, g->n, g->ldb, g->b_offset, g->b_stride) && g->ldc >= g->m &&
           g->c_offset % 4 == 0;
}

/* The floats of a stage: the converted hi of op(A) and room for its lo, the converted hi and lo of
 * op(B), then the raw rows of each that comes as stored (pitches 4 past their widths, so that the
 * converters' column reads and the copies' 16-byte rows keep their banks apart and their
 * alignment). A's lo room is unused since its lo halves are made in registers; it stays so that the
 * stages and the blocks an SM are those timed (without it, tiles of 72 columns or fewer would take
 * three blocks an SM at 56 registers a thread, and spill). */
static int64_t stage_floats(const cg_gemm_step *g, int bn)
{
    return 2 * TC_STEP * (TC_ROWS + bn) + (g->a_pieces.rows ? 0 : TC_STEP * (TC_ROWS + 4)) +
           (g->b_pieces.rows ? 0 : TC_STEP * (bn + 4));
}

/* The stages a block of bn columns pipelines at most: 4 where two blocks share an SM (bn <= 72:
 * 58-62 registers, 64 allocated, and at most 26 KB a stage), 6 from 80 to 128 (32 KB a stage at
 * 128), where one block has the SM to itself anyway (66-90 registers); wider, 227 KB hold 4 at most
 * (bn 256: 48 KB). H200, "Issue 30, session 62": 6 stages of 128 took S32's products 97.7 -> 94.1
 * us and V2's 333 -> 323; at 64 they cost the second block (R1 37 -> 53). */
static int stages_wanted(int bn) { return bn > 72 && bn <= 128 ? TC_MAX_STAGES : 4; }

/* The converter warps (B's lo halves, transposes of an operand as stored): none where there is
 * nothing to convert (A in pieces, B in pieces with their lo halves), else as many as the registers
 * allow. Their pass bounded the pipeline: they took accgrad's products, both of whose operands they
 * converted then, 17-21% down (H200, "Issue 30", sessions 62-63: V2 336 -> 268 us, S32 96 -> 77, L5
 * 117 -> 97, L5c 41 -> 33); A's lo halves made in registers instead took the accgrad passes of V3,
 * V4, V5 and R3 12-17% further down (H100, session 85). From 80 to 128 columns (one block an SM,
 * the consumers' sums and A's two sets of 8 registers within 128) seven fit beside the consumers
 * (512 threads); wider (96-128 sums a thread), or where two blocks share an SM (bn <= 72,
 * stages_wanted), 384 threads a block are what the registers hold. */
static int converter_warps(const cg_gemm_step *g, int bn)
{
    if (g->a_pieces.rows && g->b_pieces.lo)
        return 0;
    return bn > 72 && bn <= 128 ? 7 : 3;
}

/* The columns of a tile: cg_gemm_tc_columns's (n in the fewest blocks of at most 256), or half
 * that where the GPU then takes its tiles in fewer rounds by more than narrow tiles cost: a tile
 * half as wide takes 7-8% more than half the time (H200: V4, R4 fprop, whose rounds stay the
 * same, 1.07-1.08x slower), so halving pays where half-width rounds x 0.5 x NARROW_COST < full-
 * width rounds, which is where the full width's last round is at most about half full and the
 * rounds are few. H200, bench/NOTES.md "Issue 30, session 64": R3 fprop/bprop (147 tiles on 132
 * SMs) 7% faster, V5 (294) 2.5%, R4 accgrad (288) 5%; V4 (896), R4 fprop (72), R3 accgrad (98),
 * V5 accgrad (392) 3-8% slower, and kept whole by the rule. As this rule chose, in one call (session
 * 67): R3 fprop/bprop 8% / 7% faster, B2 14%, R4 accgrad 4%, V5 fprop/bprop 2%; the rows it keeps
 * whole within 1%. Only where both widths hold one block an SM (80 columns or more) and the half is
 * whole core matrices (a multiple of 8). */
#define NARROW_COST 1.15
static int tile_columns(const cg_gemm_step *g, const cg_target *t)
{
    const int full = cg_gemm_tc_columns(g->n), half = full / 2;
    if (full % 16 != 0 || half < 80 || (g->n + half - 1) / half != 2 * ((g->n + full - 1) / full))
        return full; /* (each piece of B, full wide, two tiles' columns) */
    const int64_t places = t->sm_count > 0 ? t->sm_count : 132, splits = g->splits > 1 ? g->splits : 1;
    const int64_t tiles = (g->m + TC_ROWS - 1) / TC_ROWS * ((g->n + full - 1) / full) * g->batch * splits;
    const int64_t rounds_full = (tiles + places - 1) / places, rounds_half = (2 * tiles + places - 1) / places;
    return 0.5 * NARROW_COST * (double)rounds_half < (double)rounds_full ? half : full;
}

/* The registers a thread of warpgroup 2 (the copier's, and the converters') keeps where it gives
 * the rest to the consumers by setmaxnreg (bn > 192): at 56 accgrad's converters spilled. */
#define WIDEN_COPIER_REGS 88

/* The blocks an SM holds: as many as its shared memory (1 KB of it reserved a block) and threads
 * allow; the kernel's launch bounds hold its registers to that. */
static int blocks_per_sm(const cg_target *t, unsigned shared_bytes, int threads)
{
    int64_t by_shared = cg_target_shared_per_sm(t) / (shared_bytes + 1024), by_threads = 2048 / threads;
    int64_t n = by_shared < by_threads ? by_shared : by_threads;
    return n < 1 ? 1 : (int)n;
}

/* The blocks to launch for `tiles` tiles: one a tile where they fit in one wave, else one for each
 * place on the GPU, each taking every grid-th tile, so that a block's stages run on from one tile
 * into the next (the copies of the next under this one's last steps and stores) instead of each
 * block filling its pipeline from empty. */
static int64_t persistent_grid(int64_t tiles, int per_sm, const cg_target *t)
{
    const int64_t places = (int64_t)t->sm_count * per_sm; /* set: cg_generate_tuned */
    return tiles > places ? places : tiles;
}

/* The kernel's launch for g: its tile's columns, the stages of the pipeline (0: not even two fit
 * the shared memory), its threads and shared bytes. */
typedef struct tc_launch {
    int bn, stages, converters, threads;
    unsigned shared_bytes;
} tc_launch;

static tc_launch launch_of(const cg_gemm_step *g, const cg_target *t)
{
    tc_launch l = {.bn = tile_columns(g, t)};
    const int64_t stage = stage_floats(g, l.bn), barriers = 3 * 8 * TC_MAX_STAGES;
    int stages = (int)((cg_target_shared_per_block(t) - barriers) / (4 * stage));
    const int most = stages_wanted(l.bn);
    l.stages = stages > most ? most : stages < 2 ? 0 : stages;
    l.converters = converter_warps(g, l.bn);
    l.threads = 32 * (TC_CONSUMER_WARPS + 1 + l.converters);
    if (l.bn > 192 && l.threads < 384)
        l.threads = 384; /* setmaxnreg moves registers a warpgroup at a time: the copier's made whole */
    l.shared_bytes = (unsigned)(4 * l.stages * stage + 3 * 8 * l.stages);
    return l;
}

int cg_gemm_tc_blocks_per_sm(const cg_gemm_step *g, const cg_target *t)
{
    const tc_launch l = launch_of(g, t);
    return l.stages ? blocks_per_sm(t, l.shared_bytes, l.threads) : 0;
}

convgen_status cg_gemm_tc_kernel(const cg_gemm_step *g, const cg_target *t, tmpl_value *header, cg_kernel *k)
{
    if (!cg_gemm_tc_takes(g, t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the tensor-core GEMM does not take this step (%lld x %lld x %lld, "
                       "ops %c%c, %lld of them): see cg_gemm_tc_takes", (long long)g->m, (long long)g->n,
                       (long long)g->k, g->transa, g->transb, (long long)g->batch);
    const tc_launch l = launch_of(g, t);
    const int bn = l.bn, b_rows = g->b_pieces.rows ? g->b_pieces.rows : bn, stages = l.stages, converters = l.converters;
    if (!stages)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the tensor-core GEMM: %lld bytes of shared memory a block hold "
                       "fewer than two stages of %lld", (long long)cg_target_shared_per_block(t),
                       (long long)(4 * stage_floats(g, bn)));
    const int64_t splits = g->splits > 1 ? g->splits : 1, mblocks = (g->m + TC_ROWS - 1) / TC_ROWS,
                  nblocks = (g->n + bn - 1) / bn;
    int64_t tiles;
    tile_count(g, bn, &tiles); /* within 32 bits: cg_gemm_tc_takes */
    const int threads = l.threads;
    k->block[0] = (unsigned)threads, k->block[1] = k->block[2] = 1;
    k->shared_bytes = l.shared_bytes;
    const int per_sm = blocks_per_sm(t, k->shared_bytes, threads);
    const int64_t grid = persistent_grid(tiles, per_sm, t);
    k->grid[0] = (unsigned)grid, k->grid[1] = k->grid[2] = 1;
    cg_value_line(header, "GEMM: C[%lld x %lld] = A B^T, column-major, sums of %lld, %lld of them (the transform "
                  "elements), in 3xTF32 on the tensor cores (wgmma, sm_90a)", (long long)g->m, (long long)g->n,
                  (long long)g->k, (long long)g->batch);
    cg_value_line(header, "  A at float %lld (lda %lld, %lld apart), B at %lld (ldb %lld, %lld apart), C at %lld "
                  "(ldc %lld, %lld apart)", (long long)(g->a_offset / 4), (long long)g->lda, (long long)g->a_stride,
                  (long long)(g->b_offset / 4), (long long)g->ldb, (long long)g->b_stride, (long long)(g->c_offset / 4),
                  (long long)g->ldc, (long long)g->c_stride);
    if (g->accumulate)
        cg_value_line(header, "%s", "  C += the products: the sum over the sub-batches (C zeroed before the first)");
    if (splits > 1)
        cg_value_line(header, "  the sum cut into %lld runs of %lld steps, run s's products at C + %lld s (for the next "
                      "step to add): more blocks, and shorter sums in the tensor cores' accumulators", (long long)splits,
                      (long long)cg_gemm_split_steps(g->k, splits), (long long)g->split_stride);
    cg_value_line(header, "  A %s, B %s", !g->a_pieces.rows ? "as stored (transposed on chip)"
                  : g->a_pieces.lo ? "in the kernel's pieces with their lo halves (its producer made them)"
                                   : "in the kernel's pieces (its producer laid it out)",
                  !g->b_pieces.rows ? "as stored" : g->b_pieces.lo ? "in the kernel's pieces with their lo halves"
                                                                  : "in the kernel's pieces");
    cg_value_line(header, "tiles: %lld of %d x %d of C (%lld row blocks, %lld column blocks%s), the sum in steps of %d "
                  "through %d stages (%u bytes); launch: %lld blocks of %u threads, %d an SM%s", (long long)tiles, TC_ROWS,
                  bn, (long long)mblocks, (long long)nblocks, b_rows != bn ? ", half a piece of B's each: fewer rounds" : "",
                  TC_STEP, stages, k->shared_bytes, (long long)grid, k->block[0], per_sm,
                  grid < tiles ? ", each taking every grid-th tile (persistent)" : "");
    tmpl_value *ctx = cg_gemm_context(header, k, "gemm_tc");
    tmpl_set_str(ctx, "sm90a_marker", CG_SM90A_MARKER);
    cg_kernel_set_dependent(k, ctx, t, g->dependent);
    tmpl_set_int(ctx, "threads", threads);
    tmpl_set_int(ctx, "blocks_per_sm", per_sm);
    tmpl_set_int(ctx, "mblocks", mblocks);
    tmpl_set_int(ctx, "nblocks", nblocks);
    tmpl_set_int(ctx, "tiles", tiles);
    tmpl_set_int(ctx, "grid", grid);
    tmpl_set_int(ctx, "converters", converters);
    /* Two groups of A's registers in flight. Above 192 columns (128 sums a thread) the 168
     * registers that 384 threads leave do not hold them, and ptxas would wait after every wgmma
     * (3-4% slower on V3, V4, V5 and R4 fprop and bprop, H100, session 85): there warpgroup 2 gives
     * registers to the consumers by setmaxnreg (the kernel's "widen"), 0.2-2.5% faster than one
     * group at a time on V3, V4 and V5 (H100, session 86). */
    tmpl_set_bool(ctx, "widen", bn > 192);
    if (bn > 192) { /* the launch's registers (a multiple of 8 a thread): warpgroup 2 keeps
                       * WIDEN_COPIER_REGS a thread, the two summing ones share the rest */
        const int launch = 65536 / threads / 8 * 8, rest = (launch * threads - 128 * WIDEN_COPIER_REGS) / 256;
        tmpl_set_int(ctx, "copier_regs", WIDEN_COPIER_REGS);
        tmpl_set_int(ctx, "consumer_regs", rest / 8 * 8); /* setmaxnreg's counts are multiples of 8 */
    }
    tmpl_set_int(ctx, "bm", TC_ROWS);
    tmpl_set_int(ctx, "bn", bn);
    tmpl_set_int(ctx, "b_rows", b_rows);
    tmpl_set_int(ctx, "bk", TC_STEP);
    tmpl_set_int(ctx, "stages", stages);
    tmpl_set_bool(ctx, "accumulate", g->accumulate);
    tmpl_set_int(ctx, "batch", g->batch);
    tmpl_set_int(ctx, "splits", splits);
    tmpl_set_int(ctx, "split_steps", cg_gemm_split_steps(g->k, splits));
    tmpl_set_int(ctx, "split_stride", g->split_stride);
    /* C's rows m and m + 1 as one float2: both inside C and every run's columns 8-byte aligned */
    tmpl_set_bool(ctx, "pairs", g->m % 2 == 0 && g->ldc % 2 == 0 && g->c_offset % 8 == 0 && g->c_stride % 2 == 0 &&
                                    (splits == 1 || g->split_stride % 2 == 0));
    tmpl_set_bool(ctx, "a_pieces", g->a_pieces.rows > 0);
    tmpl_set_bool(ctx, "b_pieces", g->b_pieces.rows > 0);
    tmpl_set_bool(ctx, "a_lo", g->a_pieces.lo);
    tmpl_set_bool(ctx, "b_lo", g->b_pieces.lo);
    cg_gemm_set_real_layout(ctx, g);
    return cg_render_kernel("gemm_tc.cu", ctx, &k->source);
}
