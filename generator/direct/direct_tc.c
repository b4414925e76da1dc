/* direct's implicit GEMM on the tensor cores (gemm=tensor): fprop and stride-1 bprop as
 * out[rows][cols] = A[rows][red] * B[red][cols], the products by mma.sync m16n8k8 in 3xTF32 (each
 * operand split into a TF32 hi and lo, three products summed in fp32: fp32's accuracy, as
 * winograd's tensor GEMM; bench/NOTES.md "Issue 30, session 57"). On sm_90, where A comes from a
 * patch (below), by wgmma instead (direct_wgmma.cu): a warpgroup's A from registers as mma.sync's,
 * B from shared memory in wgmma's core matrices, hi and lo, which a first kernel lays out from w
 * into the workspace (direct_wgmma_pieces.cu), so that a block copies them 16 bytes at a time and
 * rearranges nothing (bench/NOTES.md, "Issue 30, session 77": R4 fprop 161 -> 107 us, H100).
 *
 * Both passes read the source tensor src (x for fprop, dy for bprop) alike: out pixel q of image
 * n reads src at pos(q) + tap offset, per dimension, over src's channels:
 *   fprop  rows = (n, o)  src = x   cols = k  pos = o*stride - pad          B = w[k][c][tap]
 *   bprop  rows = (n, i)  src = dy  cols = c  pos = i + pad - (r-1)*dil     B = w[k][c][tap]
 * B is read as stored; the flip of bprop (and of fprop in convolution mode) is in A's tap offsets,
 * which are constants. The reduction runs in chunks of CC channels x every tap (a multiple of 8:
 * whole mma K steps), two stages of A and B in shared memory: the next chunk's copies fly while
 * this one's products run. A comes one of two ways, per tile:
 * - the gather: a float a row and tap, the chunk's sum over (src channel, tap) in w's order. Per
 *   thread, its row's coordinates and which taps fall inside src (a bit mask) are worked out once;
 *   each load is then a constant offset from the row's base and a bit of the mask, by cp.async
 *   with zero fill;
 * - the patch (rank 1 and 2, up to 9 taps, where it copies fewer floats): the lines of src the
 *   tile's rows reach, copied once a chunk with the padding's zeros, the chunk's sum tap-major, so
 *   that a lane's A element is its row's place in the patch plus a constant. */
#include "direct_tc.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "templates.h"
#include "util.h"
#include "values.h"

enum { THREADS = 128, WARPS = THREADS / 32, STAGES = 2, MAX_TAPS = 32 };

/* The pass as a gather over src (above) into tc->... */
static void gather_view(const cg_problem *p, convgen_pass pass, direct_tc_spec *s)
{
    bool bprop = pass == CONVGEN_BPROP;
    s->rank = p->rank;
    s->bprop = bprop;
    s->src_c = bprop ? p->k : p->c;
    s->cols = bprop ? p->c : p->k;
    s->taps = (int)cg_problem_kernel_pixels(p);
    s->row_pixels = bprop ? cg_problem_in_pixels(p) : cg_problem_out_pixels(p);
    s->src_pixels = bprop ? cg_problem_out_pixels(p) : cg_problem_in_pixels(p);
    s->rows = p->n * s->row_pixels;
    for (int d = 0; d < p->rank; ++d) {
        s->row_dims[d] = bprop ? p->in[d] : p->out[d];
        s->src_dims[d] = bprop ? p->out[d] : p->in[d];
        s->step[d] = bprop ? 1 : p->stride[d];
        s->origin[d] = bprop ? (p->kernel[d] - 1) * p->dilation[d] - p->pad_before[d] : p->pad_before[d];
    }
    /* A's taps run backwards where w's tap g meets src at (r - 1 - g) * dil: bprop of a
     * cross-correlation, fprop of a convolution. */
    s->flip_a = bprop != p->flip;
    /* B = w[k][c][tap]: consecutive taps adjacent; the next column (k for fprop, c for bprop) and
     * the next src channel (c for fprop, k for bprop) these far apart. */
    s->b_col_stride = bprop ? s->taps : p->c * s->taps;
    s->b_chan_stride = bprop ? p->c * s->taps : s->taps;
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* Floats of a stage's A: the gather's [chunk_red][a_stride], or the patch's [cc][patch_floats]
 * (wgmma's to a multiple of 4: B's pieces after it are 16-byte copies and core matrices). */
static int64_t a_floats(const direct_tc_spec *s)
{
    int64_t a = s->patch ? (int64_t)s->cc * s->patch_floats : (int64_t)s->chunk_red * s->a_stride;
    return s->wgmma ? round_up(a, 4) : a;
}

/* Floats of a stage: A, then B [bn][b_stride] (wgmma: B's pieces). */
static int64_t stage_floats(const direct_tc_spec *s)
{
    return a_floats(s) + (s->wgmma ? s->b_piece_floats : (int64_t)s->bn * s->b_stride);
}

/* A block's shared memory: its stages. */
static int64_t block_shared_bytes(const direct_tc_spec *s) { return STAGES * stage_floats(s) * 4; }

/* ---- A from a patch of src ---- */

/* MAX_PATCH_PLACES: a thread's places in a channel of the patch (each copied for every channel of
 * the chunk), each an offset register and a bit of a mask; MAX_PATCH_PERIOD: the tile starts tried
 * for the lines a tile reaches (a row tile's start repeats, image to image, after row_pixels /
 * gcd(row_pixels, bm) tiles). */
enum { MAX_PATCH_PLACES = 8, MAX_PATCH_PERIOD = 1 << 16 };

/* Kernels of up to 9 taps: with 25 (5 x 5) a chunk's 25 K steps took NVRTC 13.0 to 255 registers
 * and spills beside the patch's offsets (F2 fprop, on every tile), where the gather's have none. */
enum { MAX_PATCH_TAPS = 9 };

static int64_t gcd(int64_t a, int64_t b) { return b ? gcd(b, a % b) : a; }

/* The most of a warp's 32 lanes (4 of stride t_step, times 8 of stride g_step) whose floats lie in
 * one shared-memory bank: the fragments' reads take that many passes. */
static int bank_ways(int64_t t_step, int64_t g_step)
{
    int count[32] = {0}, most = 0;
    for (int64_t t = 0; t < 4; ++t)
        for (int64_t g = 0; g < 8; ++g) {
            int bank = (int)((t * t_step + g * g_step) % 32);
            most = ++count[bank] > most ? count[bank] : most;
        }
    return most;
}

/* The smallest stride from `least`, a multiple of `align`, whose reads meet the fewest in a bank:
 * the stride of the lanes t (t_varies) or g, the other lanes `other` apart. */
static int64_t fewest_ways(int64_t least, int64_t align, bool t_varies, int64_t other)
{
    int64_t first = round_up(least, align), best = first;
    int best_ways = 33;
    for (int64_t v = first; v < first + 32 * align; v += align) { /* every residue mod 32 */
        int ways = t_varies ? bank_ways(v, other) : bank_ways(other, v);
        if (ways < best_ways)
            best = v, best_ways = ways;
    }
    return best;
}

/* src's extent along d that the rows' taps reach, padding included: its padded extent. */
static int64_t reach(const cg_problem *p, const direct_tc_spec *s, int d)
{
    return (s->row_dims[d] - 1) * s->step[d] + (p->kernel[d] - 1) * p->dilation[d] + 1;
}

/* Row r's first line in the flat (image, padded row) space of src: rank 2's lines are its rows,
 * rank 1's its images. */
static int64_t line_of(const direct_tc_spec *s, int64_t r)
{
    int64_t n = r / s->row_pixels, rest = r % s->row_pixels;
    return s->rank == 2 ? n * s->image_lines + rest / s->row_dims[1] * s->step[0] : n;
}

/* The most lines a tile of bm rows reaches, over every tile start (they repeat image to image);
 * 0 where there are too many to try. */
static int64_t patch_span(const cg_problem *p, const direct_tc_spec *s, int bm)
{
    int64_t period = s->row_pixels / gcd(s->row_pixels, bm), blocks = (s->rows + bm - 1) / bm;
    if (period > MAX_PATCH_PERIOD)
        return 0;
    int64_t tap_lines = s->rank == 2 ? (p->kernel[0] - 1) * p->dilation[0] + 1 : 1, most = 0;
    for (int64_t b = 0; b < blocks && b < period; ++b) {
        int64_t r0 = b * bm, last = r0 + bm - 1 < s->rows ? r0 + bm - 1 : s->rows - 1;
        int64_t lines = line_of(s, last) - line_of(s, r0) + tap_lines;
        most = lines > most ? lines : most;
    }
    return most;
}

/* The patch of a tile of bm rows reaching `lines` lines (patch_geometry's): its floats a channel
 * (the mma's reads of A, lane t a channel on and lane g a row on, in the fewest passes), a
 * thread's places; false where it does not apply (no lines, too many places, or offsets past 32
 * bits). A thread
 * copies the same places of every channel: an offset a place, not a copy (the first form, an offset
 * a copy, spilled S16's registers). */
static bool plan_patch(const cg_problem *p, direct_tc_spec *s, int bm, int64_t lines)
{
    if (!lines)
        return false;
    s->patch_lines = lines;
    s->patch_floats = fewest_ways(lines * s->line_len, 1, true, s->step[s->rank - 1]);
    int64_t places = (lines * s->line_len + s->threads - 1) / s->threads;
    s->patch_places = (int)places;
    /* A tile's copies are 32-bit offsets from its first image's chunk, over the images it
       reaches; lines are counted in 32 bits. */
    int64_t images = (bm - 1) / s->row_pixels + 2;
    return places <= MAX_PATCH_PLACES && images * s->src_c * s->src_pixels < INT32_MAX &&
           (p->n + 2) * s->image_lines + places * s->threads < INT32_MAX;
}

/* The tiles' heights a patch is planned for: 64 to 256 rows (wgmma's four warpgroups). */
enum { PATCH_HEIGHTS = 4 };

/* src's padded line length and lines an image, and the most lines a tile of 64, 128, 192 and 256
 * rows reaches (lines[bm / 64 - 1]; 0 where no patch applies: rank 3, over 9 taps, too many tile
 * starts), once for choose_tiles' tiles. */
static void patch_geometry(const cg_problem *p, direct_tc_spec *s, int64_t lines[PATCH_HEIGHTS])
{
    for (int i = 0; i < PATCH_HEIGHTS; ++i)
        lines[i] = 0;
    if (s->rank > 2 || s->taps > MAX_PATCH_TAPS)
        return;
    s->line_len = reach(p, s, s->rank - 1);
    s->image_lines = s->rank == 2 ? reach(p, s, 0) : 1;
    for (int i = 0; i < PATCH_HEIGHTS; ++i)
        lines[i] = patch_span(p, s, 64 * (i + 1));
}

/* Blocks of the tile (bm, bn). */
static int64_t tile_count(const direct_tc_spec *s, int bm, int bn)
{
    return (s->rows + bm - 1) / bm * ((s->cols + bn - 1) / bn);
}

/* fprop's B by 16-byte copies of each column's line (where w is 16-byte aligned, which the kernel
 * checks): a column's chunk is chunk_red floats together in w[k][c][tap], starting 16-byte aligned
 * where c x taps is a multiple of 4. bprop's column (c) has its chunk's taps in runs of `taps` floats
 * a channel apart, so it keeps 4-byte copies. */
static bool b_lines(const direct_tc_spec *s) { return !s->bprop && s->src_c * s->taps % 4 == 0; }

/* B's lines by whole columns a pass, so that a pass's copy is the first's plus a constant: a line's
 * 16-byte pieces (chunk_red / 4, 10 to 64: a chunk is 40 to 256 floats), the columns a pass takes
 * (as many whole lines as the threads cover) and the passes over the tile's columns. */
static int line_pieces(const direct_tc_spec *s) { return s->chunk_red / 4; }
static int line_cols(const direct_tc_spec *s) { return THREADS / line_pieces(s); }
static int line_passes(const direct_tc_spec *s) { return (s->bn + line_cols(s) - 1) / line_cols(s); }

/* A warp's 16 x 8 products: its tile's m of 16 rows by n of 8 columns. */
static int m_frags(const direct_tc_spec *s) { return s->bm / s->warps_m / 16; }
static int n_frags(const direct_tc_spec *s) { return s->bn / s->warps_n / 8; }

/* The warps of a tile: 2 x 2 where it has 32 columns or more, else 4 x 1. */
static void set_warps(direct_tc_spec *s)
{
    s->warps_n = s->bn >= 32 ? 2 : 1;
    s->warps_m = WARPS / s->warps_n;
}

/* A thread's registers, roughly: a warp's sums twice (the chunk's and the whole), a K step's A and
 * B fragments (hi and lo), the patch's offsets and row places (the gather's mask and base), a few
 * for a chunk's taps, and 40 for addresses, indices and the copies in flight. Calibrated on the
 * bench set's 2-D layers by NVRTC 13.0's reports (bench/NOTES.md, "Issue 30, session 76"): within
 * 10 of them on every direct tensor pass but B1 bprop's (98 for 82, at one block an SM). It sets
 * the launch bounds' blocks an SM (with 16 to spare), and where a tile may take A from a patch: up
 * to 240, a guard that no tile of today's template reaches (the most is 234: 128 x 64, 8 places
 * and 9 taps; the 128 x 64 tiles' reports 223-241, none spilled at 255; test_compile's check). */
static int64_t registers_likely(const direct_tc_spec *s)
{
    if (s->wgmma) /* the chunk's sums and the whole (bn / 2 each), A's halves twice, the rows' places, its taps */
        return s->bn + 16 + s->patch_places + 4 + s->chunk_red / 12 + 34;
    int64_t m = m_frags(s), n = n_frags(s);
    return 2 * 4 * m * n + 8 * m + 4 * n + (s->patch ? s->patch_places + 2 * m : 4) + s->taps / 4 + 40;
}

enum { PATCH_MAX_REGISTERS = 240 };

/* The tile (bm, bn): A from the patch where that copies fewer floats than the gather (a float a
 * row and tap), and B's stride: its columns 4 mod 8 floats apart for the gather's reads (lane t a
 * float on, g a column), for the patch's tap-major reads (t a channel on: `taps` floats) whichever
 * meets the fewest in a bank (16-byte aligned for B's lines). */
static void set_tile(const cg_problem *p, direct_tc_spec *s, int bm, int bn, const int64_t lines[PATCH_HEIGHTS])
{
    s->bm = bm, s->bn = bn, s->a_stride = bm + 8;
    set_warps(s);
    s->patch = plan_patch(p, s, bm, lines[bm / 64 - 1]) && s->patch_lines * s->line_len < (int64_t)s->taps * bm;
    s->patch = s->patch && registers_likely(s) <= PATCH_MAX_REGISTERS;
    s->b_stride = (int)(s->patch ? fewest_ways(s->chunk_red, b_lines(s) ? 4 : 1, false, s->taps)
                                 : round_up(s->chunk_red - 4, 8) + 4);
}

/* A thread's copies a chunk: A's, a float of its patch's lines or of its gather, and B's, a copy a
 * float or (b_lines) a 16-byte copy a pass. */
static double copies_per_thread(const direct_tc_spec *s)
{
    double b = b_lines(s) ? (double)line_passes(s) * THREADS : (double)s->chunk_red * s->bn;
    double a = s->patch ? (double)s->cc * s->patch_lines * s->line_len : (double)s->chunk_red * s->bm;
    return (a + b) / THREADS;
}

/* A warp's issue a K step of 8, in instructions: A's 4 m fragment loads and TF32 splits (1 + 3
 * instructions each), B's 2 n, the 3 m n mma.sync of its m x n products in 3xTF32 with what the
 * tensor pipe holds each beyond its issue (13.2 a product in all, fitted to R4 fprop's six tiles
 * at 8,192 outputs an SM each, H100: bench/NOTES.md, "Issue 30, session 76"), and the thread's
 * copies, about 4 instructions each with their addresses and predicates. */
static double warp_step_cost(const direct_tc_spec *s)
{
    int m = m_frags(s), n = n_frags(s);
    return 16.0 * m + 8.0 * n + 13.2 * m * n + 4.0 * copies_per_thread(s) / (s->chunk_red / 8);
}

/* Blocks an SM holds, by the shared memory and by the registers a thread likely needs (16 to
 * spare over the estimate; none for wgmma's, whose estimate NVRTC 13.0's reports meet or undercut
 * by up to 25 on every layer of the set), at most 4: the launch bounds say it, without which ptxas
 * held the kernel to 80 registers and spilled (S13 fprop), and with 4 blocks a patch's tile (whose
 * shared memory allows 6) spilled at 128. */
static int blocks_per_sm(const direct_tc_spec *s, const cg_target *t)
{
    int64_t per_sm = cg_target_shared_per_sm(t) / (block_shared_bytes(s) + CG_SHARED_RESERVED_PER_BLOCK);
    int64_t by_regs = 65536 / (s->threads * round_up(registers_likely(s) + (s->wgmma ? 0 : 16), 8));
    per_sm = per_sm < by_regs ? per_sm : by_regs;
    return (int)(per_sm < 1 ? 1 : per_sm > 4 ? 4 : per_sm);
}

/* The time of the busiest SM, in warp K steps' issue: its blocks (the tiles over the SMs, rounded
 * up: a small layer's last blocks leave most SMs idle) x a warp's K step; a tenth more where its
 * blocks run alone (no more tiles than SMs, or room for one block an SM), a warp a scheduler with
 * nothing to hide its loads' and mma's latency (S16 fprop's 98 tiles of 128 x 64: 26.4 us, where
 * 392 of 64 x 32, three a busiest SM, took 24.6). */
static double tile_time(const direct_tc_spec *s, const cg_target *t, int64_t sms)
{
    int64_t tiles = tile_count(s, s->bm, s->bn);
    bool alone = tiles <= sms || blocks_per_sm(s, t) == 1;
    return (double)((tiles + sms - 1) / sms) * warp_step_cost(s) * (alone ? 1.1 : 1.0);
}

/* ---- sm_90: the products by wgmma ---- */

/* What an H100's SM does a cycle in these kernels, fitted to R4 and R1 (bench/NOTES.md, "Issue 30,
 * session 77"): 710 TF32 products (of its tensor cores' 1,024: wgmma m64nNk8 issues in N / 2
 * cycles) or 16.7 bytes of copies from the L2 cache, whichever is slower a chunk; and ~770 cycles a
 * chunk where the tensor cores wait (its last group drained, the barriers, the next chunk's first
 * A loads: fitted with two barriers a chunk, which one now does, 0-2.5% faster), which a second
 * block on the SM hides, as it hides a block's first chunk of copies. */
#define WGMMA_PRODUCTS_PER_CYCLE 710.0
#define WGMMA_L2_BYTES_PER_CYCLE 16.7
#define WGMMA_CHUNK_WAIT 770.0

/* A chunk's copies (B's pieces and A's patch) and its work, the slower of them and its products. */
static double wgmma_copy_cycles(const direct_tc_spec *s)
{
    return 4.0 * ((double)s->b_piece_floats + (double)s->cc * s->patch_lines * s->line_len) / WGMMA_L2_BYTES_PER_CYCLE;
}
static double wgmma_work_cycles(const direct_tc_spec *s)
{
    double products = 3.0 * s->bm * s->bn * s->chunk_red / WGMMA_PRODUCTS_PER_CYCLE;
    return fmax(products, wgmma_copy_cycles(s));
}

/* The busiest SM's time, in cycles: its blocks (the tiles over the SMs, rounded up) each chunk's
 * work, the chunks' waits once per `resident` blocks (blocks_per_sm, no more than it holds), and
 * each block's first copies where a block runs alone (S64 fprop, 16 blocks an SM: chunks of 16
 * channels, one block an SM, 245 us by this and 237.5 measured; of 8, two, 201 and 201.8). */
static double wgmma_sm_cycles(const direct_tc_spec *s, const cg_target *t, int64_t sms)
{
    int64_t blocks = (tile_count(s, s->bm, s->bn) + sms - 1) / sms, resident = blocks_per_sm(s, t);
    resident = resident < blocks ? resident : blocks;
    return (double)blocks * s->chunks * wgmma_work_cycles(s) +
           (double)((blocks + resident - 1) / resident) * s->chunks * WGMMA_CHUNK_WAIT +
           (double)(resident == 1 ? blocks : 1) * wgmma_copy_cycles(s);
}

/* The chunk of cc channels x every tap. */
static void set_chunk(direct_tc_spec *s, int cc)
{
    s->cc = cc;
    s->chunk_red = cc * s->taps;
    s->chunks = (int)((s->src_c + cc - 1) / cc);
}

/* The wgmma tile (bm, bn) and chunk of cc channels: a warpgroup a 64-row slice, A from the patch
 * (its only form here); false where the patch does not apply or the block overruns the shared
 * memory or registers. */
static bool set_wgmma_tile(const cg_problem *p, direct_tc_spec *s, const cg_target *t, int bm, int bn, int cc,
                           const int64_t lines[PATCH_HEIGHTS])
{
    set_chunk(s, cc);
    s->wgmma = true, s->bm = bm, s->bn = bn, s->threads = 2 * bm;
    s->warps_m = bm / 16, s->warps_n = 1;
    s->b_piece_floats = 2ll * s->chunk_red * bn;
    s->patch = plan_patch(p, s, bm, lines[bm / 64 - 1]);
    const int64_t registers = 65536 / s->threads < PATCH_MAX_REGISTERS ? 65536 / s->threads : PATCH_MAX_REGISTERS;
    return s->patch && block_shared_bytes(s) <= cg_target_shared_per_block(t) && registers_likely(s) <= registers;
}

/* The workspace of B's pieces: every column tile's chunks. */
static int64_t wgmma_workspace_bytes(const direct_tc_spec *s)
{
    return (s->cols + s->bn - 1) / s->bn * s->chunks * s->b_piece_floats * 4;
}

/* On sm_90, where A can come from a patch: the tile of 256, 128 or 64 rows (four warpgroups, two or
 * one) by 128, 64 or 32 columns (no wider than the layer's columns need; 16 only where they are that
 * few: wgmma m64n16k8 issues too little a K step for the A loads and splits it waits on, S27 fprop
 * 16.8 us at 128 x 16 against 15.0 at 128 x 32, H100; 256 rows only by 64 columns, below), and the
 * chunk of `cc` or twice as many channels (half the chunks' waits, twice the shared memory), of the
 * least time on the busiest SM (wgmma_sm_cycles; of equal times, the first tried), its pieces'
 * workspace within the caller's limit (0: none). False where none applies (then mma.sync's form,
 * which needs no workspace, cc as it was). B's pieces are indexed in 32 bits. */
static bool choose_wgmma_tiles(const cg_problem *p, direct_tc_spec *s, const cg_target *t,
                               const int64_t lines[PATCH_HEIGHTS], int64_t workspace_limit)
{
    const int cc = s->cc;
    if (!cg_target_wgmma(t) || !lines[0])
        return false;
    int64_t sms = t && t->sm_count > 0 ? t->sm_count : 132;
    int widest = s->cols <= 16 ? 16 : s->cols <= 32 ? 32 : s->cols <= 64 ? 64 : 128, best_bm = 0, best_bn = 0, best_cc = 0;
    double best_time = 0;
    for (int bm = 256; bm >= 64; bm /= 2)
        for (int bn = widest; bn >= (widest == 16 ? 16 : 32); bn /= 2)
            for (int c = 2 * cc; c >= cc; c -= cc) {
                /* 256 x 32 lost to 128-row tiles on every layer timed, 12-35% slower than the model
                   says (R4 126.5 us against 105.2 at 128 x 64, S16 20.9 against 18.7; H100, session
                   78), where 256 x 64 ran as it says (V1 1,224 us, model 1,211; R1 78.1, 74.8) */
                if (bm == 256 && bn != 64)
                    continue;
                if (!set_wgmma_tile(p, s, t, bm, bn, c, lines) ||
                    (workspace_limit > 0 && wgmma_workspace_bytes(s) > workspace_limit))
                    continue;
                double time = wgmma_sm_cycles(s, t, sms);
                if (!best_bm || time < best_time)
                    best_bm = bm, best_bn = bn, best_cc = c, best_time = time;
            }
    if (!best_bm || !set_wgmma_tile(p, s, t, best_bm, best_bn, best_cc, lines) ||
        (s->cols + best_bn - 1) / best_bn * s->chunks * s->b_piece_floats / 2 >= INT32_MAX) {
        s->wgmma = false, s->b_piece_floats = 0;
        set_chunk(s, cc);
        return false;
    }
    s->a_parts = s->b_parts = 1;
    s->shared_bytes = block_shared_bytes(s);
    s->min_blocks = blocks_per_sm(s, t);
    return true;
}

/* The block tile, of 128 or 64 rows by 64, 32 or 16 columns (the mma's n of 8 in whole warps; no
 * wider than the layer's columns need): of those that fit the shared memory, the one of the least
 * time on the busiest SM (tile_time; of equal times, the first tried: more rows, then columns). Larger
 * warp tiles issue fewer loads and splits a product (64 x 32: 3.0 instructions a mma, 16 x 16:
 * 6.3), but a small layer's few large tiles leave SMs idle: S16 fprop's 196 tiles of 64 x 64 put
 * two on 64 SMs, its 392 of 64 x 32 three on 128, a quarter less on the busiest (H100: 28.2 ->
 * 24.6 us). None where not even 64 x 16 fits (a chunk of many taps on a GPU of little shared
 * memory: the spec refuses it). */
static void choose_tiles(const cg_problem *p, direct_tc_spec *s, const cg_target *t, int64_t workspace_limit)
{
    int64_t sms = t && t->sm_count > 0 ? t->sm_count : 132;
    int widest = s->cols <= 16 ? 16 : s->cols <= 32 ? 32 : 64;
    set_chunk(s, 8 * (s->taps >= 8 ? 1 : 8 / s->taps)); /* whole K steps of 8, at least 8 of them a chunk */
    int64_t lines[PATCH_HEIGHTS];
    patch_geometry(p, s, lines);
    if (choose_wgmma_tiles(p, s, t, lines, workspace_limit))
        return;
    s->threads = THREADS;
    int best_bm = 0, best_bn = 0;
    double best_time = 0;
    for (int bm = 128; bm >= 64; bm -= 64)
        for (int bn = widest; bn >= 16; bn /= 2) {
            set_tile(p, s, bm, bn, lines);
            if (block_shared_bytes(s) > cg_target_shared_per_block(t))
                continue;
            if (!best_bm || tile_time(s, t, sms) < best_time)
                best_bm = bm, best_bn = bn, best_time = tile_time(s, t, sms);
        }
    set_tile(p, s, best_bm ? best_bm : 64, best_bn ? best_bn : 16, lines);
    s->a_parts = THREADS / s->bm;
    s->b_parts = THREADS / s->bn;
    s->shared_bytes = block_shared_bytes(s);
    s->min_blocks = blocks_per_sm(s, t);
}

convgen_status cg_direct_tc_spec(const cg_problem *p, convgen_pass pass, const cg_target *t, int64_t workspace_limit,
                                 direct_tc_spec *s)
{
    memset(s, 0, sizeof *s);
    if (pass == CONVGEN_ACCGRAD) {
        direct_tc_accgrad_spec a;
        return cg_direct_tc_accgrad_spec(p, t, 0, &a);
    }
    if (!cg_target_mma_tf32(t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: the target %s has no TF32 mma.sync (sm_80 on)",
                       t->arch);
    for (int d = 0; pass == CONVGEN_BPROP && d < p->rank; ++d)
        if (p->stride[d] > 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: bprop of stride %lld (stride 1 only)",
                           (long long)p->stride[d]);
    if (cg_problem_kernel_pixels(p) > MAX_TAPS)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: %lld taps (a row's mask holds %d)",
                       (long long)cg_problem_kernel_pixels(p), MAX_TAPS);
    gather_view(p, pass, s);
    if (s->rows >= INT32_MAX - 128)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: %lld GEMM rows (below 2^31)", (long long)s->rows);
    if ((s->cols + 63) / 64 > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: %lld columns need more than 65535 column tiles",
                       (long long)s->cols);
    choose_tiles(p, s, t, workspace_limit);
    if (s->shared_bytes > cg_target_shared_per_block(t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED,
                       "direct gemm=tensor: a chunk of %d taps x %d channels needs %lld bytes of shared memory a block",
                       s->taps, s->cc, (long long)s->shared_bytes);
    if ((s->cols + s->bn - 1) / s->bn > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: %lld columns need more than 65535 column "
                       "tiles of %d", (long long)s->cols, s->bn);
    return CONVGEN_SUCCESS;
}

/* ---- the template context ---- */


/* Each tap: its bit, its offset in src's flat pixels, and per dimension its offset in positions. */
static tmpl_value *tap_list(const cg_problem *p, const direct_tc_spec *s)
{
    tmpl_value *list = tmpl_list();
    for (int f = 0; f < s->taps; ++f) {
        tmpl_value *v = tmpl_map(), *dims = tmpl_list();
        int64_t rest = f, flat = 0, src_stride = 1;
        int64_t off[CONVGEN_MAX_RANK];
        for (int d = p->rank - 1; d >= 0; --d) { /* w's taps row-major: the last dimension fastest */
            int64_t g = rest % p->kernel[d];
            rest /= p->kernel[d];
            off[d] = (s->flip_a ? p->kernel[d] - 1 - g : g) * p->dilation[d];
            flat += off[d] * src_stride;
            src_stride *= s->src_dims[d];
        }
        for (int d = 0; d < p->rank; ++d) {
            tmpl_value *o = tmpl_map();
            tmpl_set_int(o, "i", d);
            tmpl_set_int(o, "off", off[d]);
            tmpl_set_int(o, "size", s->src_dims[d]);
            tmpl_list_push(dims, o);
        }
        tmpl_set_int(v, "i", f);
        tmpl_set_int(v, "bit", 1ll << f);
        tmpl_set_int(v, "flat", flat);
        tmpl_map_set(v, "dims", dims);
        tmpl_list_push(list, v);
    }
    return list;
}

/* Per spatial dimension of the rows: its index name, the step and origin of pos, src's stride. */
static tmpl_value *dim_list(const cg_problem *p, const direct_tc_spec *s)
{
    tmpl_value *list = tmpl_list();
    int64_t src_stride = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "i", d);
        tmpl_set_int(v, "step", s->step[d]);
        tmpl_set_int(v, "origin", s->origin[d]);
        tmpl_set_int(v, "src_stride", src_stride);
        src_stride *= s->src_dims[d];
        tmpl_list_push(list, v);
    }
    return list;
}

static tmpl_value *header_lines(const cg_problem *p, convgen_pass pass, const direct_tc_spec *s, const cg_kernel *k)
{
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution (implicit GEMM) on the tensor cores, %s", CG_GENERATOR_VERSION,
                  convgen_pass_name(pass));
    cg_value_line(h, "%s", "");
    cg_value_line(h, "GEMM: out[%lld rows][%lld cols] = A[rows][%lld] * B[%lld][cols], A from %s at each row's taps, "
                  "B = w as stored",
                  (long long)s->rows, (long long)s->cols, (long long)(s->src_c * s->taps),
                  (long long)(s->src_c * s->taps), s->bprop ? "dy" : "x");
    if (s->wgmma)
        cg_value_line(h, "products: wgmma m64n%dk8 in 3xTF32 (a hi and lo TF32 half of each operand, lo*hi + hi*lo + "
                      "hi*hi in fp32), A from registers, B's pieces (hi and lo in wgmma's core matrices) made by the "
                      "kernel before into the workspace", s->bn);
    else
        cg_value_line(h, "products: mma.sync m16n8k8 in 3xTF32 (a hi and lo TF32 half of each operand, lo*hi + hi*lo + "
                      "hi*hi in fp32)");
    cg_value_line(h, "FLOPs: %.6g (2*n*c*k*prod(kernel)*prod(out))", cg_problem_flops(p));
    if (s->wgmma)
        cg_value_line(h, "tiles: block %d x %d, %d warpgroups of 64 x %d; the sum in %d chunks of %d channels x %d "
                      "taps, %d stages", s->bm, s->bn, s->bm / 64, s->bn, s->chunks, s->cc, s->taps, STAGES);
    else
        cg_value_line(h, "tiles: block %d x %d, warps %d x %d of %d x %d; the sum in %d chunks of %d channels x %d "
                      "taps, %d stages", s->bm, s->bn, s->warps_m, s->warps_n, s->bm / s->warps_m, s->bn / s->warps_n,
                      s->chunks, s->cc, s->taps, STAGES);
    if (s->patch)
        cg_value_line(h, "A: from a patch of %s in shared memory, the %lld lines of %lld floats (padding included) "
                      "that a tile's rows reach, copied once a chunk (%d copies a thread, where the gather took %d); "
                      "the chunk's sum tap-major", s->bprop ? "dy" : "x", (long long)s->patch_lines,
                      (long long)s->line_len, s->cc * s->patch_places, s->chunk_red * s->bm / s->threads);
    cg_value_line(h, "copies: A %s 4 bytes a copy (zeros past the edges); B %s", s->patch ? "copied" : "gathered",
                  s->wgmma ? "its pieces, 16 bytes a copy"
                  : b_lines(s)
                  ? "by 16-byte copies of each column's line of w where w is 16-byte aligned, else 4 bytes a copy"
                  : "4 bytes a copy (a column's taps lie in runs of the kernel's size)");
    cg_value_line(h, "launch: grid (%u, %u, 1), block (%u, 1, 1), %u bytes of dynamic shared memory", k->grid[0],
                  k->grid[1], k->block[0], k->shared_bytes);
    cg_value_line(h, "launch bounds: %d blocks an SM, by the shared memory and ~%lld registers a thread (estimated)",
                  s->min_blocks, (long long)registers_likely(s));
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/%s or generator/direct/direct_tc.c instead.",
                  s->wgmma ? "direct_wgmma.cu" : "direct_tc.cu");
    return h;
}

static void set_ints(tmpl_value *ctx, const direct_tc_spec *s)
{
    const struct { const char *key; int64_t v; } ints[] = {
        {"threads", s->threads}, {"min_blocks", s->min_blocks}, {"rows", s->rows}, {"cols", s->cols}, {"src_c", s->src_c},
        {"src_pixels", s->src_pixels}, {"row_pixels", s->row_pixels}, {"taps", s->taps}, {"cc", s->cc},
        {"chunk_red", s->chunk_red}, {"chunks", s->chunks}, {"bm", s->bm}, {"bn", s->bn},
        {"bm_log2", cg_log2_up(s->bm)}, {"a_stride", s->a_stride}, {"b_stride", s->b_stride},
        {"a_floats", a_floats(s)}, {"stage_floats", stage_floats(s)},
        {"a_parts", s->a_parts}, {"a_channels", s->cc / s->a_parts}, {"b_parts", s->b_parts},
        {"b_channels", s->cc / s->b_parts}, {"b_col_stride", s->b_col_stride}, {"b_chan_stride", s->b_chan_stride},
        {"warps_m", s->warps_m}, {"wm", s->bm / s->warps_m}, {"wn", s->bn / s->warps_n},
        {"m_frags", m_frags(s)}, {"n_frags", n_frags(s)}, {"ksteps", s->chunk_red / 8},
        {"channel_guard", s->src_c % s->cc != 0}, {"b_lines", b_lines(s)}, {"patch", s->patch},
        {"line_pieces", line_pieces(s)}, {"line_cols", line_cols(s)}, {"line_passes", line_passes(s)},
        {"b_piece_floats", s->b_piece_floats}, {"b_copies", (s->b_piece_floats / 4 + s->threads - 1) / s->threads},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        tmpl_set_int(ctx, ints[i].key, ints[i].v);
}

static const char *const q_names[] = {"q0", "q1", "q2"};

/* The patch's constants: its geometry, src's sizes and origin, the taps' steps in the patch (a
 * kernel row: dilation x line_len floats), the divisions of the copies' and rows' places. Rank 1
 * is rank 2 of one row (its images the lines). */
static bool set_patch(tmpl_value *ctx, const cg_problem *p, const direct_tc_spec *s)
{
    int y = 0, x = s->rank - 1; /* the dimensions of lines and columns; rank 1 has no y */
    bool two = s->rank == 2;
    int64_t kh = two ? p->kernel[y] : 1, src_h = two ? s->src_dims[y] : 1;
    const struct { const char *key; int64_t v; } ints[] = {
        {"patch_floats", s->patch_floats}, {"line_len", s->line_len}, {"image_lines", s->image_lines},
        {"patch_lines", s->patch_lines}, {"patch_places", s->patch_places}, {"images", p->n},
        {"patch_used", s->patch_lines * s->line_len},
        {"src_h", src_h}, {"src_w", s->src_dims[x]}, {"origin_y", two ? s->origin[y] : 0},
        {"origin_x", s->origin[x]}, {"step_y", two ? s->step[y] : 0}, {"step_x", s->step[x]},
        {"kh", kh}, {"kw", p->kernel[x]}, {"tap_line", (two ? p->dilation[y] : 0) * s->line_len},
        {"tap_col", p->dilation[x]}, {"flip_a", s->flip_a}, {"kq", s->cc / 8},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        tmpl_set_int(ctx, ints[i].key, ints[i].v);
    /* every place a thread computes, those past the patch's lines (never copied) too */
    int64_t places_max = (int64_t)s->patch_places * s->threads, line_max = (p->n + 2) * s->image_lines + places_max;
    const int64_t *sizes = s->row_dims; /* rank 2: (y, x); rank 1: x */
    tmpl_value *by_line = cg_value_magic((uint32_t)s->line_len, places_max),
               *by_image = cg_value_magic((uint32_t)s->image_lines, line_max),
               *digits = cg_value_digits("r", round_up(s->rows, s->bm) - 1, s->rank, sizes,
                                         two ? (const char *const[]){"ry", "rx"} : (const char *const[]){"rx"}, "rn");
    tmpl_map_set(ctx, "by_line", by_line);
    tmpl_map_set(ctx, "by_image", by_image);
    tmpl_map_set(ctx, "patch_row_digits", digits);
    return by_line && by_image && digits;
}

static convgen_status acc_generate(const cg_problem *p, const cg_target *t, const cg_tuning *tune, cg_generated *out);

/* wgmma's first kernel: B's pieces from w into the workspace (direct_wgmma_pieces.cu), a thread a
 * float of their hi halves. */
static convgen_status pieces_generate(convgen_pass pass, const direct_tc_spec *s, const cg_target *t,
                                      const char *const *ops, cg_generated *out)
{
    enum { PIECE_THREADS = 256 };
    const int64_t col_tiles = (s->cols + s->bn - 1) / s->bn, hi_floats = col_tiles * s->chunks * s->b_piece_floats / 2;
    cg_kernel *k = &out->kernels[out->kernel_count++];
    snprintf(k->name, sizeof k->name, "convgen_direct_tc_%s_pieces", convgen_pass_name(pass));
    k->what = "B's pieces: w in wgmma's core matrices, hi and lo, a column tile's chunk together";
    k->weights_only = true;
    k->grid[0] = (unsigned)((hi_floats + PIECE_THREADS - 1) / PIECE_THREADS);
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = PIECE_THREADS;
    k->block[1] = k->block[2] = 1;
    out->workspace_bytes = wgmma_workspace_bytes(s);
    tmpl_value *ctx = tmpl_map(), *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution on the tensor cores, %s: B's pieces for the wgmma kernel",
                  CG_GENERATOR_VERSION, convgen_pass_name(pass));
    cg_value_line(h, "%s", "");
    cg_value_line(h, "workspace: [%lld column tiles][%d chunks][%d K steps][hi, lo][%d x 2 core matrices of 8 columns "
                  "x 4 of the sum], %lld bytes", (long long)col_tiles, s->chunks, s->chunk_red / 8, s->bn / 8,
                  (long long)out->workspace_bytes);
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1)", k->grid[0], k->block[0]);
    cg_value_line(h, "convgen_execute runs it before the GEMM every time; convgen_prepare_weights runs it alone, "
                  "once");
    cg_value_line(h, "per update of w, and convgen_execute_prepared only the GEMM, which never reads w.");
    /* Where the GEMM holds an SM alone, this kernel waits first (a no-op: it is always a call's first
       kernel, launched plainly) so that it may let the GEMM launch at once, whose blocks then find
       their patch's places while it ends: H100, S16 fprop 19.1 -> 18.2 us, S13 bprop 18.9 -> 18.1,
       R1 fprop 78.5 -> 77.4. Where two or three GEMM blocks share an SM, those launched early took
       places beside the pieces' blocks unevenly: S13 fprop (122 blocks, 2 an SM) 16.2 -> 20.4 us,
       S57 (379, 3) 12.4 -> 12.8, though S27 (157, 2) 15.1 -> 13.9 (bench/NOTES.md, session 79). */
    const bool gemm_early = s->min_blocks == 1;
    if (gemm_early)
        cg_value_line(h, "%s", "On sm_90 the GEMM (one block an SM) may launch as soon as this kernel starts: its "
                      "blocks wait for this one's end before they copy.");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/direct_wgmma_pieces.cu or "
                  "generator/direct/direct_tc.c instead.");
    tmpl_map_set(ctx, "header", h);
    cg_kernel_set_dependent(k, ctx, t, gemm_early ? CG_DEPENDENT_WAITS_FIRST : CG_DEPENDENT_NONE);
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "in0", ops[0]);
    tmpl_set_str(ctx, "in1", ops[1]);
    tmpl_set_str(ctx, "out", ops[2]);
    const struct { const char *key; int64_t v; } ints[] = {
        {"threads", PIECE_THREADS}, {"hi_floats", hi_floats}, {"bn", s->bn}, {"cc", s->cc}, {"kq", s->cc / 8},
        {"ksteps", s->chunk_red / 8}, {"chunks", s->chunks}, {"cols", s->cols}, {"src_c", s->src_c},
        {"b_col_stride", s->b_col_stride}, {"b_chan_stride", s->b_chan_stride},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        tmpl_set_int(ctx, ints[i].key, ints[i].v);
    return cg_render_kernel("direct/direct_wgmma_pieces.cu", ctx, &k->source);
}

convgen_status cg_direct_tc_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                                     cg_generated *out)
{
    if (pass == CONVGEN_ACCGRAD)
        return acc_generate(p, t, tune, out);
    direct_tc_spec s;
    convgen_status st = cg_direct_tc_spec(p, pass, t, tune ? tune->workspace_limit : 0, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    static const char *const operands[2][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}};
    const char *const *ops = operands[s.bprop];
    out->kernel_count = 0;
    if (s.wgmma) {
        st = pieces_generate(pass, &s, t, ops, out);
        if (st != CONVGEN_SUCCESS)
            return st;
    }
    cg_kernel *k = &out->kernels[out->kernel_count++];
    snprintf(k->name, sizeof k->name, "convgen_direct_tc_%s", convgen_pass_name(pass));
    k->grid[0] = (unsigned)((s.rows + s.bm - 1) / s.bm);
    k->grid[1] = (unsigned)((s.cols + s.bn - 1) / s.bn);
    k->grid[2] = 1;
    k->block[0] = (unsigned)s.threads;
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)s.shared_bytes;
    k->epilogue = p->epilogue != 0;

    tmpl_value *ctx = tmpl_map();
    if (s.wgmma)
        tmpl_set_str(ctx, "sm90a_marker", CG_SM90A_MARKER);
    /* wgmma's waits for the pieces first: where the pieces kernel lets it launch at once (one GEMM
       block an SM), its blocks set up their patch while the pieces end, and it waits before its
       first copy. Launched plainly (after a pieces kernel that lets nothing launch early, or alone
       in convgen_execute_prepared) the wait is a no-op. */
    cg_kernel_set_dependent(k, ctx, t, s.wgmma ? CG_DEPENDENT_WAITS_FIRST : CG_DEPENDENT_NONE);
    tmpl_map_set(ctx, "header", header_lines(p, pass, &s, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "in0", ops[0]);
    tmpl_set_str(ctx, "in1", ops[1]);
    tmpl_set_str(ctx, "out", ops[2]);
    set_ints(ctx, &s);
    tmpl_map_set(ctx, "dims", dim_list(p, &s));
    tmpl_map_set(ctx, "taps_list", tap_list(p, &s));
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, true));
    int64_t rows_max = round_up(s.rows, s.bm) - 1;
    tmpl_value *digits = cg_value_digits("row", rows_max, p->rank, s.row_dims, q_names, "n");
    tmpl_value *out_digits = cg_value_digits("r", rows_max, 1, &s.row_pixels, (const char *const[]){"pix"}, "n");
    tmpl_map_set(ctx, "row_digits", digits);
    tmpl_map_set(ctx, "out_digits", out_digits);
    if (!digits || !out_digits || (s.patch && !set_patch(ctx, p, &s))) {
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    return cg_render_kernel(s.wgmma ? "direct/direct_wgmma.cu" : "direct/direct_tc.cu", ctx, &k->source);
}

/* ---- accgrad ---- */

/* ACC_FLUSH: chunks a warp's mma sums run before an fp32 add takes them, in splits of more (the
 * tensor cores' truncating accumulation, over R1's 3,000 pixels a split, left 1.1e-5 against the
 * FMA kernel's 7.7e-7). */
enum { ACC_CHUNK = 32, ACC_MAX_TAPS = 9, ACC_FLUSH = 8 };
#define ACC_MAX_WORKSPACE (256ll << 20) /* the splits' slices, as direct's split reductions */

/* The splits of accgrad's sum: enough blocks for two a multiprocessor, each at least 4 chunks, the
 * slices within the workspace limit (none: one split, dw written directly). */
static void choose_splits(direct_tc_accgrad_spec *s, int64_t tiles, int64_t sms, int64_t workspace_limit)
{
    int64_t splits = tiles >= 2 * sms ? 1 : (2 * sms + tiles - 1) / tiles;
    if (splits > s->chunks / 4)
        splits = s->chunks / 4;
    int64_t limit = workspace_limit > 0 && workspace_limit < ACC_MAX_WORKSPACE ? workspace_limit : ACC_MAX_WORKSPACE;
    while (splits > 1 && splits * s->out_elems * 4 > limit)
        --splits;
    if (splits < 1)
        splits = 1;
    /* Splits of at most ACC_FLUSH chunks where that takes at most four rounds: their sums need no
     * second accumulator (its registers cost S13's and S27's kernels a block an SM). */
    int64_t short_splits = (s->chunks + ACC_FLUSH - 1) / ACC_FLUSH;
    if (short_splits > splits && short_splits * tiles <= 8 * sms && short_splits * s->out_elems * 4 <= limit)
        splits = short_splits;
    s->chunks_per_split = (s->chunks + splits - 1) / splits;
    s->splits = (s->chunks + s->chunks_per_split - 1) / s->chunks_per_split; /* no empty split */
}

convgen_status cg_direct_tc_accgrad_spec(const cg_problem *p, const cg_target *t, int64_t workspace_limit,
                                         direct_tc_accgrad_spec *s)
{
    memset(s, 0, sizeof *s);
    if (!cg_target_mma_tf32(t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: the target %s has no TF32 mma.sync (sm_80 on)",
                       t->arch);
    s->taps = (int)cg_problem_kernel_pixels(p);
    if (s->taps > ACC_MAX_TAPS)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: accgrad of %d taps (up to %d: a block's "
                       "columns are its channels' every tap)", s->taps, ACC_MAX_TAPS);
    s->rank = p->rank;
    s->flip = p->flip;
    s->k = p->k, s->c = p->c;
    s->out_pixels = cg_problem_out_pixels(p), s->in_pixels = cg_problem_in_pixels(p);
    s->red = p->n * s->out_pixels;
    if (s->red >= INT32_MAX - ACC_CHUNK || p->k * p->c * s->taps >= INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: accgrad's sum or dw past 2^31");
    if ((p->k + 63) / 64 > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: accgrad of %lld outputs needs more than 65535 "
                       "blocks of 64 on grid.y", (long long)p->k);
    for (int d = 0; d < p->rank; ++d)
        s->out_dims[d] = p->out[d], s->in_dims[d] = p->in[d];
    s->bm = p->k <= 32 ? 32 : 64;
    s->cb = 8 * (s->taps >= 8 ? 1 : 8 / s->taps); /* columns a multiple of 8: whole n of the mma */
    s->bn = s->cb * s->taps;
    s->warps_m = s->bm / 32;
    s->warps_k = WARPS / s->warps_m;
    s->stride = ACC_CHUNK + 4; /* 4 mod 8: the fragments' reads in 32 banks */
    s->out_elems = p->k * p->c * s->taps;
    s->chunks = (s->red + ACC_CHUNK - 1) / ACC_CHUNK;
    int64_t tiles = ((p->k + s->bm - 1) / s->bm) * ((p->c + s->cb - 1) / s->cb);
    choose_splits(s, tiles, t && t->sm_count > 0 ? t->sm_count : 132, workspace_limit);
    int64_t stages = (int64_t)STAGES * (s->bm + s->bn) * s->stride, sums = (int64_t)s->warps_k * s->bm * s->bn;
    s->shared_bytes = 4 * (stages > sums ? stages : sums);
    if (s->shared_bytes > cg_target_shared_per_block(t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct gemm=tensor: accgrad needs %lld bytes of shared memory a block",
                       (long long)s->shared_bytes);
    return CONVGEN_SUCCESS;
}

static tmpl_value *acc_header(const cg_problem *p, const direct_tc_accgrad_spec *s, const cg_kernel *k)
{
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution (implicit GEMM) on the tensor cores, accgrad", CG_GENERATOR_VERSION);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "GEMM: dw[%lld k][%lld (c, tap)] = dy[k][%lld (n, pixel)] * x gathered[(n, pixel)][(c, tap)]",
                  (long long)s->k, (long long)(s->c * s->taps), (long long)s->red);
    cg_value_line(h, "products: mma.sync m16n8k8 in 3xTF32 (a hi and lo TF32 half of each operand, lo*hi + hi*lo + hi*hi "
                  "in fp32)");
    cg_value_line(h, "FLOPs: %.6g (2*n*c*k*prod(kernel)*prod(out))", cg_problem_flops(p));
    cg_value_line(h, "tiles: block %d outputs x %d channels x %d taps; warps %d x %d (rows x the chunk's K steps); the sum "
                  "in %lld chunks of %d pixels, %lld splits of %lld", s->bm, s->cb, s->taps, s->warps_m, s->warps_k,
                  (long long)s->chunks, ACC_CHUNK, (long long)s->splits, (long long)s->chunks_per_split);
    cg_value_line(h, "launch: grid (%u, %u, %u), block (%u, 1, 1), %u bytes of dynamic shared memory", k->grid[0],
                  k->grid[1], k->grid[2], k->block[0], k->shared_bytes);
    cg_value_line(h, "workspace: %lld bytes", (long long)(s->splits > 1 ? s->splits * s->out_elems * 4 : 0));
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/direct_tc_accgrad.cu or generator/direct/direct_tc.c "
                  "instead.");
    return h;
}

static convgen_status acc_generate(const cg_problem *p, const cg_target *t, const cg_tuning *tune, cg_generated *out)
{
    direct_tc_accgrad_spec s;
    convgen_status st = cg_direct_tc_accgrad_spec(p, t, tune ? tune->workspace_limit : 0, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    cg_kernel *k = &out->kernels[0];
    snprintf(k->name, sizeof k->name, "convgen_direct_tc_accgrad");
    k->grid[0] = (unsigned)((s.c + s.cb - 1) / s.cb);
    k->grid[1] = (unsigned)((s.k + s.bm - 1) / s.bm);
    k->grid[2] = (unsigned)s.splits;
    k->block[0] = THREADS;
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)s.shared_bytes;
    out->kernel_count = 1;
    tmpl_value *ctx = tmpl_map();
    /* Where a second kernel adds the splits, it launches while this one runs (sm_90's programmatic
       dependent launch) and waits for it at its start: its launch, ~3 us of S27's 18, is hidden. */
    cg_kernel_set_dependent(k, ctx, t, s.splits > 1 ? CG_DEPENDENT_WAITS_FIRST : CG_DEPENDENT_NONE);
    tmpl_map_set(ctx, "header", acc_header(p, &s, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    const struct { const char *key; int64_t v; } ints[] = {
        {"threads", THREADS}, {"k", s.k}, {"c", s.c}, {"taps", s.taps}, {"red", s.red},
        {"out_pixels", s.out_pixels}, {"in_pixels", s.in_pixels}, {"bm", s.bm}, {"cb", s.cb}, {"bn", s.bn},
        {"warps_k", s.warps_k}, {"stride", s.stride}, {"chunk", ACC_CHUNK}, {"chunks", s.chunks},
        {"chunks_per_split", s.chunks_per_split}, {"splits", s.splits}, {"out_elems", s.out_elems},
        {"stage_floats", (int64_t)(s.bm + s.bn) * s.stride}, {"n_frags", s.bn / 8},
        {"ksteps_per_warp", ACC_CHUNK / 8 / s.warps_k}, {"flush", s.chunks_per_split > ACC_FLUSH ? ACC_FLUSH : 0},
    };
    for (size_t i = 0; i < sizeof ints / sizeof ints[0]; ++i)
        tmpl_set_int(ctx, ints[i].key, ints[i].v);
    direct_tc_spec view = {.rank = 0}; /* accgrad gathers x as fprop does */
    gather_view(p, CONVGEN_FPROP, &view);
    tmpl_map_set(ctx, "taps_list", tap_list(p, &view));
    tmpl_map_set(ctx, "dims", dim_list(p, &view));
    tmpl_value *red_digits = cg_value_digits("red", s.chunks * ACC_CHUNK - 1, 1, &s.out_pixels, (const char *const[]){"o"}, "n");
    tmpl_value *o_digits = cg_value_digits("o", s.out_pixels - 1, p->rank, s.out_dims, q_names, "o_rest");
    tmpl_value *col_div = cg_value_magic((uint32_t)s.bn, (int64_t)s.bm * s.bn - 1);
    tmpl_map_set(ctx, "red_digits", red_digits);
    tmpl_map_set(ctx, "o_digits", o_digits);
    tmpl_map_set(ctx, "col_div", col_div);
    if (!red_digits || !o_digits || !col_div) {
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    st = cg_render_kernel("direct/direct_tc_accgrad.cu", ctx, &k->source);
    if (st != CONVGEN_SUCCESS || s.splits == 1)
        return st;

    cg_kernel *sum = &out->kernels[1];
    snprintf(sum->name, sizeof sum->name, "convgen_direct_tc_accgrad_sum_splits");
    cg_direct_sum_launch(sum, s.out_elems, THREADS);
    out->kernel_count = 2;
    out->workspace_bytes = s.splits * s.out_elems * 4;
    tmpl_value *c2 = tmpl_map(), *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution on the tensor cores, accgrad: the sum of its %lld splits' slices",
                  CG_GENERATOR_VERSION, (long long)s.splits);
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1)", sum->grid[0], sum->block[0]);
    cg_value_line(h, "Generated: do not edit. Change templates/split_reduce.cu or generator/direct/direct_tc.c instead.");
    tmpl_map_set(c2, "header", h);
    cg_kernel_set_dependent(sum, c2, t, CG_DEPENDENT_WAITS_FIRST);
    tmpl_set_str(c2, "kernel_name", sum->name);
    tmpl_set_str(c2, "out", "dw");
    tmpl_set_str(c2, "index_type", "unsigned");
    tmpl_set_int(c2, "threads", THREADS);
    tmpl_set_int(c2, "splits", s.splits);
    tmpl_set_int(c2, "out_elems", s.out_elems);
    tmpl_map_set(c2, "epi", cg_value_epilogue(0, true));
    return cg_render_kernel("split_reduce.cu", c2, &sum->source);
}
