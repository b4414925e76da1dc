/* R2C and C2R kernels, and 2-D C2C (templates/fft/fft_real.cu) from a cg_fft_problem: two real rows
 * per complex warp transform (the classic "two for the price of one" packing, which works for
 * odd n too, unlike the half-length trick), the window's clipped loads and stores decided per
 * register, and for rank 2 the layout of the spectrum between the row and the column
 * transforms. A 2-D C2C is the same kernel with one complex row per transform and no packing. */
#include <stdio.h>
#include <string.h>

#include "fft_kernel.h"
#include "fft_warp.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum {
    RANK1_WARPS = 4,
    RANK2_WARPS = 8,
    /* A block whose shared memory leaves no room for a second one on a multiprocessor (n = 128
     * R2C: 130 KiB of the H100's 228) gets more warps: with 8, ncu measured 12.5% occupancy and
     * 21% of DRAM bandwidth, the load phase having too few requests in flight. */
    LONE_BLOCK_WARPS = 16,
    /* Forward n = 128 exchanged plans, whose scratch leaves two blocks per multiprocessor, run 12
     * warps a block, see choose_exchange. */
    PAIRED_BLOCK_WARPS = 12,
    /* Clustered layouts: the largest portable cluster, and the blocks per multiprocessor each
     * block's shared memory must leave room for (one block's loads overlap the others' work). */
    MAX_CLUSTER = 8,
    CLUSTER_BLOCKS_PER_SM = 3,
    /* The part of the L2 the resident blocks' slots may take; the rest serves the streaming
     * input and output. */
    SLOT_L2_SHARE_PERCENT = 75,
    /* Rank 2 keeps the spectrum of an image between the phases (the half spectrum; C2C: all n
     * columns) in shared memory when it takes at most this much (R2C n = 128: 66 KiB; C2C up to
     * n = 112), and the tile of the staged stores too when both fit twice this; beyond (R2C
     * n = 256: 258 KiB), in a slot of the workspace per resident block (see "resident"). */
    FUSED_MAX_SHARED = 100 * 1024,
    /* Blocks of several small images aim at this much shared memory, so 8 blocks of 8 warps
     * (the H100's 64 warps) fit a multiprocessor. */
    BLOCK_SHARED_TARGET = 24 * 1024,
    SM_DEFAULT = 132,
    /* Natural-layout spectra of up to this many bytes per image skip the staging through shared
     * memory in both directions (forward stores, inverse loads). */
    STAGED_MIN_SPECTRUM = 2048,
    /* Loads per thread in flight in the staged copy into shared memory: in a plain loop each
     * load waits for the one before (1-D C2R at n = 8 ran at 0.70x cuFFT that way, 0.99x after). */
    COPY_UNROLL = 8,
    /* The registers a plan of at most 2 registers per lane needs (n = 8 and 16: 39 and 40; R2C
     * n = 16 in natural layout runs an exchanged plan of 4 instead, see choose_exchange). */
    LIGHT_PLAN_REGISTERS = 40,
};

/* The target's figures, or the H100's where it has none (the offline generator). */
static int sm_count(const cg_target *t) { return t && t->sm_count > 0 ? t->sm_count : SM_DEFAULT; }

/* Rows of shared memory get an odd pitch in float2s: lanes that read a column then hit
 * distinct banks (a float2 spans two banks; an odd pitch walks all 16 pairs). */
static int odd_pitch(int m) { return m | 1; }

/* Wavefronts of the natural-order scatter over all registers: bin k of lane group t goes to
 * t * group_stride + k * bin_stride, plus k / 16 when padded (one spare float2 every 16 bins,
 * which spreads the digit-reversed bins of a power of two over all banks). */
static int scatter_wavefronts(const fft_plan *pl, int64_t group_stride, int64_t bin_stride, bool padded)
{
    int bin_at[FFT_MAX_N], total = 0;
    for (int k = 0; k < pl->n; ++k)
        bin_at[fft_plan_output_position(pl, k)] = k;
    int last = pl->phase_count ? pl->phase_count - 1 : 0; /* exchanged plans: the last phase's positions */
    for (int r = 0; r < pl->regs; ++r) {
        int64_t addr[FFT_WARP];
        for (int lane = 0; lane < FFT_WARP; ++lane) {
            int t = lane / pl->lanes, k = bin_at[fft_plan_position(pl, last, lane % pl->lanes, r)];
            addr[lane] = t >= pl->per_warp ? -1 : t * group_stride + k * bin_stride + (padded ? k / 16 : 0);
        }
        total += fft_float2_wavefronts(addr);
    }
    return total;
}

/* Where bin k of buf row r sits with the swizzle `mask` (column_aware_pitch): k ^ (r & mask). */
static int64_t swizzled(int64_t row, int64_t pitch, int k, int mask) { return row * pitch + (k ^ (int)(row & mask)); }

/* The wavefronts of a forward packed row transform's stores into buf (rows of `pitch` float2s,
 * swizzled by `mask`): lane group t of a warp's second task stores its bins to row per_warp + t. */
static int row_store_wavefronts(const fft_plan *pl, int64_t pitch, int mask)
{
    int bin_at[FFT_MAX_N], total = 0, last = pl->phase_count - 1;
    for (int k = 0; k < pl->n; ++k)
        bin_at[fft_plan_output_position(pl, k)] = k;
    for (int r = 0; r < pl->regs; ++r) {
        int64_t addr[FFT_WARP];
        for (int lane = 0; lane < FFT_WARP; ++lane) {
            int t = lane / pl->lanes, k = bin_at[fft_plan_position(pl, last, lane % pl->lanes, r)];
            addr[lane] = t >= pl->per_warp ? -1 : swizzled(pl->per_warp + t, pitch, k, mask);
        }
        total += fft_float2_wavefronts(addr);
    }
    return total;
}

/* The wavefronts of a forward packed column's loads from buf (rows of `pitch` float2s, swizzled
 * by `mask`): a warp's per_warp columns kx, kx + stride, .. read bins kx and n - kx of row y / 2
 * for each of their transforms' inputs y (the two halves of the packed rows), register by
 * register. */
static int column_load_wavefronts(const fft_plan *pl, int64_t pitch, int mask, int stride)
{
    int total = 0;
    for (int mirrored = 0; mirrored < 2; ++mirrored)
        for (int r = 0; r < pl->regs; ++r) {
            int64_t addr[FFT_WARP];
            for (int lane = 0; lane < FFT_WARP; ++lane) {
                int t = lane / pl->lanes, kx = stride > 1 ? 1 + stride * t : pl->per_warp + t; /* a warp's second task: no bin 0 */
                int64_t row = fft_plan_position(pl, 0, lane % pl->lanes, r) / 2;
                addr[lane] = t >= pl->per_warp ? -1 : swizzled(row, pitch, mirrored ? pl->n - kx : kx, mask);
            }
            total += fft_float2_wavefronts(addr);
        }
    return total;
}

/* A swizzle the kernel applies once per task, not per bin. The row stores XOR row q's part of
 * `mask` into the lane's part of the bins (kl ^ (q & mask); register 0 holds bin kl): exact where
 * the registers' parts of the bins leave those bits alone and no bin leaves the row. The column
 * loads XOR (l >> 1) & mask into their bins kx and n - kx: exact where every window row y = l +
 * r * lanes - oy that a lane l loads has (y >> 1) & mask equal to that. */
static bool swizzle_per_lane(const cg_fft_problem *p, const fft_plan *pl, int mask)
{
    for (int l = 0; l < pl->lanes; ++l)
        for (int r = 0; r < pl->regs; ++r) {
            int y = r * pl->lanes + l - p->oy;
            if (y >= 0 && y < p->h && ((y >> 1) & mask) != ((l >> 1) & mask))
                return false;
        }
    int bin_at[FFT_MAX_N], last = pl->phase_count - 1;
    for (int k = 0; k < pl->n; ++k)
        bin_at[fft_plan_output_position(pl, k)] = k;
    for (int s = 1; s <= mask; ++s) /* every row's part of the mask */
        for (int l = 0; s == (s & mask) && l < pl->lanes; ++l) {
            int k0 = bin_at[fft_plan_position(pl, last, l, 0)];
            for (int r = 0; r < pl->regs; ++r) {
                int k = bin_at[fft_plan_position(pl, last, l, r)];
                if ((k ^ s) - k != (k0 ^ s) - k0 || (k ^ s) >= pl->n)
                    return false;
            }
        }
    return true;
}

/* How a rank 2 problem is cut: images per block, and whether the spectrum between the
 * phases stays in shared memory. */
typedef struct real_layout {
    int warps, images, pairs, buf_rows, buf_pitch;
    bool fused;       /* the spectrum between the phases is in shared memory */
    /* Otherwise a fixed grid of blocks works image after image, each keeping the rows that fit
     * in shared memory there and the rest in its own slot of the workspace, so that all slots
     * stay in the L2 cache (see resident_layout). Two kernels through a workspace of every image
     * ran n = 256 at 11% of copy bandwidth on the H100: the column kernel's scattered reads came
     * from DRAM. */
    bool resident;
    bool slots_in_l2;
    int split_rows;    /* resident: spectrum rows in shared memory; the rest in the slot */
    int blocks_per_sm; /* resident: 1 or 2 */
    /* Or a cluster of blocks per image (sm_90's distributed shared memory): block r of the
     * cluster keeps columns r * width .. of the spectrum in its shared memory (see
     * clustered_layout). 0: no cluster. */
    int cluster, width;
    int64_t slot_elements; /* float2s per slot: the spectrum, rounded up to 128-byte lines */
    bool pad_rows;    /* buf rows hold bin k at k + k / 16 (fewer bank conflicts, see below) */
    bool pad_tile;    /* the tile holds row R at R * pitch + R / 16 */
    int row_wavefronts[2], tile_wavefronts[2]; /* the bank model's cost: plain, padded */
    int column_wavefronts; /* column_aware_pitch's: a column task's loads from buf; 0 where not chosen so */
    int buf_swizzle;       /* column_aware_pitch's: bin k of buf row r at k ^ (r & buf_swizzle) */
    int column_stride;     /* column_aware_pitch's: a warp task's lane groups take columns this far apart (0, 1: neighbours) */
    bool staged;      /* forward, natural layout: results go out through a shared tile */
    bool aliased;     /* R2C: the tile is buf itself, each column's outputs written over its inputs */
    bool staged_loads; /* inverse, natural layout: spectra come in through buf (n rows) */
    bool flat_copy;   /* the tile is dense and so are the block's spectra: one flat copy out */
    bool flat_loads;  /* staged loads into a dense buf from dense spectra: one flat copy in */
    bool bulk_load;   /* the flat copy in by the copy engine (bulk_loads_fit) */
    int64_t tile_bytes; /* per image */
    int64_t tile_offset; /* float2s from the start of shared memory */
    int64_t per_image_bytes, blocks, shared_bytes;
    int min_blocks; /* __launch_bounds__'s blocks per multiprocessor: ptxas's register budget */
    bool paired;    /* two blocks of PAIRED_BLOCK_WARPS per multiprocessor (see choose_exchange) */
    const char *min_blocks_why; /* the reason, for the kernel's comment */
    bool hoist_twiddles;    /* rank 2: the lane's twiddle factors loaded once (see choose_loads) */
    bool unguarded_columns; /* forward columns load rows inside the window without a guard */
    int64_t xch_offset; /* exchanged plans: float2s from the start of shared memory to the warps' scratch */
    int xch_warp;       /* float2s of scratch per warp */
} real_layout;

/* A spectrum too large for shared memory: a fixed grid of blocks working image after image,
 * each with its rows split between shared memory (as many as fit) and a workspace slot. Two
 * blocks per multiprocessor overlap one's row phase with the other's column phase; they are
 * used where the two blocks' slots still fit in SLOT_L2_SHARE of the L2 (R2C n = 256: 2 x 113
 * KiB shared + 2 x 144 KiB slots per multiprocessor, 38 MB of slots on an H100). */
static void resident_layout(const cg_fft_problem *p, const fft_plan *pl, const cg_target *t, real_layout *L)
{
    int sms = sm_count(t);
    int64_t l2 = cg_target_l2_bytes(t);
    int64_t per_block = cg_target_shared_per_block(t);
    int64_t per_sm = cg_target_shared_per_sm(t);
    int64_t row_bytes = (int64_t)L->buf_pitch * 8;
    L->resident = true;
    L->images = 1;
    /* More than 8 registers per lane take up to 255 registers per thread: one block only. */
    for (int b = pl->regs > 8 ? 1 : 2; b >= 1; --b) {
        int64_t shared = per_sm / b - CG_SHARED_RESERVED_PER_BLOCK;
        int64_t rows = (shared < per_block ? shared : per_block) / row_bytes;
        L->split_rows = rows < L->buf_rows ? (int)rows : L->buf_rows;
        L->blocks_per_sm = b;
        L->blocks = p->count < (int64_t)b * sms ? p->count : (int64_t)b * sms;
        L->slot_elements = ((int64_t)(L->buf_rows - L->split_rows) * L->buf_pitch + 15) / 16 * 16;
        L->slots_in_l2 = L->blocks * L->slot_elements * 8 <= l2 * SLOT_L2_SHARE_PERCENT / 100;
        if (L->slots_in_l2)
            break;
    }
    L->shared_bytes = (int64_t)L->split_rows * row_bytes;
    /* ... which 16 warps cannot have either; two blocks per multiprocessor take 8 warps each. */
    L->warps = pl->regs > 8 || L->blocks_per_sm > 1 ? RANK2_WARPS : LONE_BLOCK_WARPS;
}

/* A real spectrum too large for one block's shared memory, spread over a cluster of C blocks
 * (2, 4 or 8) that together hold it (sm_90: a block reads and writes its cluster peers' shared
 * memory). Block r owns spectrum columns kx = r * width .. r * width + width - 1 and in them
 * works one image: a share of its row transforms, whose bins go to the blocks owning their
 * columns, then its own columns. Nothing passes through global memory between the phases, and
 * each block is small enough for three per multiprocessor, so one block's loads overlap
 * another's transforms. The resident layout it replaces (slots in L2) ran R2C n = 256 at 14% of
 * copy bandwidth on the H100, latency-bound at 25% occupancy with scattered slot traffic.
 *
 * Forward (packed rows): a row pair's bins k and n - k both feed column min(k, n - k), so a
 * block row holds 2 * width slots, bin k of column j in slot j and its mirror n - k in slot
 * width + j. Natural layouts stage each column's n outputs over the 2 * ceil(n/2) slots it
 * read (as the aliased layout does), so the results leave in rows of width bins.
 * Inverse: the window's rows of the block's columns, [row][j]; natural layouts first load all
 * n rows of the block's columns coalesced and transform them in place. */
static bool clustered_layout(const cg_fft_problem *p, const cg_target *t, real_layout *L)
{
    int max_cluster = t && t->max_cluster > 0 ? t->max_cluster : MAX_CLUSTER;
    int64_t per_sm = cg_target_shared_per_sm(t);
    if (p->type == CONVGEN_FFT_C2C || max_cluster < 2)
        return false;
    for (int c = 2; c <= max_cluster && c <= MAX_CLUSTER; c *= 2) {
        int width = (p->half + c - 1) / c;
        int rows = p->sign < 0 ? (p->transposed ? L->pairs : (p->n + 1) / 2) : (p->transposed ? p->h : p->n);
        int pitch = odd_pitch(p->sign < 0 ? 2 * width : width);
        int64_t bytes = (int64_t)rows * pitch * 8;
        if (CLUSTER_BLOCKS_PER_SM * (bytes + CG_SHARED_RESERVED_PER_BLOCK) > per_sm)
            continue;
        if (p->count > INT32_MAX / c) /* a grid of count * c blocks: keep the resident layout */
            return false;
        L->cluster = c, L->width = width;
        L->buf_rows = rows, L->buf_pitch = pitch;
        L->per_image_bytes = L->shared_bytes = bytes;
        L->staged = p->sign < 0 && !p->transposed;
        L->aliased = L->staged;
        L->staged_loads = p->sign > 0 && !p->transposed;
        L->images = 1;
        L->blocks = p->count * c;
        L->warps = RANK2_WARPS;
        return true;
    }
    return false;
}

/* Whether transform tr's spectrum starts at tr * n * half: the staged copies then move a block's
 * spectra as one flat range. */
static bool spectra_are_dense(const cg_fft_problem *p)
{
    int64_t dense = (int64_t)p->n * p->half, entry = dense * p->planes;
    return (p->planes == 1 || p->plane_stride[1] == dense) && p->spectrum_stride[1] == entry &&
           p->spectrum_stride[0] == entry * p->channels;
}

/* Whether a C2R block's spectra can come into buf by one bulk copy of sm_90's copy engine
 * (cp.async.bulk, the TMA unit) rather than by the threads' loads and stores: buf's rows are the
 * spectrum's, dense, in 16-byte multiples. The kernel checks the input's alignment and copies
 * thread by thread where it is off. Measured on an H200 against the tree without it, same call:
 * 3-D C2R n = 64, whose exchanged plan read its columns straight from global memory, 0.1727 ->
 * 0.1654 ms at 124 volumes (1.43x -> 1.50x cuFFT); 2-D n = 32 (lane stages, a flat copy by the
 * threads before) 0.1047 -> 0.0928 ms; windows of 56 in n = 64 lost 1-2% (bench/NOTES.md "Bulk
 * copies"). */
static bool bulk_loads_fit(const cg_fft_problem *p, const cg_target *t, const real_layout *L)
{
    return cg_target_bulk_copies(t) && p->type == CONVGEN_FFT_C2R && !L->pad_rows && L->buf_pitch == p->half &&
           spectra_are_dense(p) && (int64_t)p->n * p->half % 2 == 0;
}

/* R2C's exchanged plans (n = 64) read buf by columns as well as writing it by rows. With the odd
 * pitch (n + 1: 1 (mod 16) float2s) a column load's 16 distinct bins, 4 rows x 4 columns, fall on
 * 7 bank slots, 4 wavefronts where 2 would do: ncu on the H200 counted 31% of the 3-D n = 64 plane
 * stage's shared-memory wavefronts excess, most of them these loads. No pitch alone makes both
 * these and the row stores conflict-free (a half-warp's row stores want its two rows 8 slots
 * apart, its column loads 4 rows on distinct slot pairs), so each row's bins may also be XORed by
 * bits of its row number (bin k of row r at k ^ (r & mask)). And a natural layout's tile (rows of
 * half, odd for the flat copy out) takes a half-warp's two columns on 8 consecutive rows 2-way
 * where the columns are neighbours, conflict-free where they are 8 (mod 16) apart: a warp's lane
 * groups may take columns `stride` apart (kx = c % per_warp * stride + c / per_warp for the c-th
 * column task of an image, below per_warp * stride). Of pitches n + 1 .. n + 16, the masks the
 * kernel applies per lane (swizzle_per_lane) and the strides 1 and half / per_warp, the one whose
 * row stores, column loads and tile stores, weighted by their warp tasks, take the fewest
 * wavefronts by the bank model; on a tie the smaller stride, no swizzle, then the smallest pitch
 * (n = 64: pitch 72, mask 3, stride 8, all three conflict-free; before, pitch 66 alone left the row
 * and tile stores 2-way). */
static void column_aware_pitch(const cg_fft_problem *p, const fft_plan *pl, real_layout *L)
{
    if (p->type != CONVGEN_FFT_R2C || !pl->phase_count || p->n != 64)
        return;
    int64_t row_tasks = (L->pairs + pl->per_warp - 1) / pl->per_warp, col_tasks = (p->half + pl->per_warp - 1) / pl->per_warp;
    int64_t best_cost = -1;
    const int strides[2] = {1, p->half / pl->per_warp};
    for (int i = 0; i < 2 && (i == 0 || strides[i] > 1); ++i) {
        int stride = strides[i];
        int tile = p->transposed ? 0 : scatter_wavefronts(pl, stride, odd_pitch(p->half), false);
        for (int mask = 0; mask < 16; ++mask) {
            if (mask && !swizzle_per_lane(p, pl, mask))
                continue;
            for (int pitch = p->n + 1; pitch <= p->n + 16; ++pitch) {
                int rows = row_store_wavefronts(pl, pitch, mask), columns = column_load_wavefronts(pl, pitch, mask, stride);
                int64_t cost = row_tasks * rows + col_tasks * (columns + tile);
                if (best_cost < 0 || cost < best_cost) {
                    best_cost = cost;
                    L->buf_pitch = pitch, L->buf_swizzle = mask, L->column_stride = stride;
                    L->row_wavefronts[0] = rows, L->column_wavefronts = columns;
                }
            }
        }
    }
    L->pad_rows = false;
    L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
}

static void choose_layout(const cg_fft_problem *p, const fft_plan *pl, const cg_target *t, real_layout *L)
{
    memset(L, 0, sizeof *L);
    int sms = sm_count(t);
    int64_t per_block = cg_target_shared_per_block(t);
    int64_t per_sm = cg_target_shared_per_sm(t);
    int64_t fused_max = FUSED_MAX_SHARED < per_block ? FUSED_MAX_SHARED : per_block;
    int64_t staged_max = 2 * FUSED_MAX_SHARED < per_block ? 2 * FUSED_MAX_SHARED : per_block;
    if (p->rank == 1) {
        /* The natural-order scatter of a row transform's bins into a shared row (forward), or the
         * gather of its packed bins from two rows (inverse): padded where the bank model says so. */
        int cols = p->sign < 0 ? p->n : p->half, groups = p->sign < 0 ? 1 : 2;
        L->buf_pitch = odd_pitch(cols);
        int padded_pitch = odd_pitch(cols + (cols - 1) / 16);
        L->row_wavefronts[0] = scatter_wavefronts(pl, (int64_t)groups * L->buf_pitch, 1, false);
        L->row_wavefronts[1] = scatter_wavefronts(pl, (int64_t)groups * padded_pitch, 1, true);
        L->pad_rows = L->row_wavefronts[1] < L->row_wavefronts[0];
        if (L->pad_rows)
            L->buf_pitch = padded_pitch;
        int64_t transforms = (int64_t)RANK1_WARPS * 2 * pl->per_warp;
        L->warps = RANK1_WARPS;
        L->images = (int)transforms;
        L->blocks = (p->count + transforms - 1) / transforms;
        return;
    }
    L->warps = RANK2_WARPS;
    L->pairs = p->type == CONVGEN_FFT_C2C ? p->h : (p->h + 1) / 2;
    /* Forward: the row transforms of the window (packed pairs for real rows), n bins each.
     * Inverse: the window's rows of the column transforms, half bins each (C2C: n). */
    L->buf_rows = p->sign < 0 ? L->pairs : p->h;
    int cols = p->sign < 0 ? p->n : p->half;
    L->buf_pitch = odd_pitch(cols);
    L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
    L->fused = L->per_image_bytes <= fused_max;
    if (!L->fused) {
        if (!clustered_layout(p, t, L))
            resident_layout(p, pl, t, L);
        return;
    }
    /* Inverse, natural layout: a column read straight from global memory takes each lane's bins
     * from rows half * 8 bytes apart. The block's spectra come into buf coalesced instead (all n
     * rows), and the columns transform in place. Not for spectra of up to STAGED_MIN_SPECTRUM
     * bytes, as for the forward stores. Measured on the H100 at 128 MiB (C2R), lane-stage plans:
     * n = 128 0.88x -> 1.03x cuFFT; n = 32 and 64 unchanged within noise (1.81x -> 1.79x, 1.38x ->
     * 1.36x). Not for exchanged plans (pl->phase_count), whose columns read straight measured
     * ahead (staged -> straight, same run: n = 64 1.71x -> 1.88x, n = 128 1.47x -> 1.51x; n = 32's
     * lane stages lost, 1.96x -> 1.90x), unless the copy engine stages them (bulk_loads_fit): then
     * the staging costs the load/store pipe nothing. */
    int64_t spectrum_bytes = (int64_t)p->n * p->half * 8;
    if (L->fused && p->sign > 0 && !p->transposed && spectrum_bytes > STAGED_MIN_SPECTRUM &&
        (pl->phase_count == 0 || bulk_loads_fit(p, t, L)) && (int64_t)p->n * L->buf_pitch * 8 <= fused_max) {
        L->staged_loads = true;
        L->buf_rows = p->n;
        L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
    }
    /* The row transforms scatter (forward) or gather (inverse) their bins in natural order along
     * a buf row; for powers of two the digit-reversed bins of a half-warp fall on a few banks
     * (n = 128: 8-way conflicts). The padding is kept where the bank model says it helps. */
    int padded_pitch = odd_pitch(cols + (cols - 1) / 16);
    L->row_wavefronts[0] = scatter_wavefronts(pl, L->buf_pitch, 1, false);
    L->row_wavefronts[1] = scatter_wavefronts(pl, padded_pitch, 1, true);
    L->pad_rows = L->row_wavefronts[1] < L->row_wavefronts[0] &&
                  (int64_t)L->buf_rows * padded_pitch * 8 <= per_block;
    if (L->pad_rows) {
        L->buf_pitch = padded_pitch;
        L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
    }
    if (L->staged_loads && pl->phase_count && !bulk_loads_fit(p, t, L)) { /* padded rows: no bulk copy, read straight */
        L->staged_loads = false;
        L->buf_rows = p->h;
        L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
    }
    column_aware_pitch(p, pl, L);
    /* Column results of a natural forward layout are stored through shared memory: measured on
     * the H100 at 128 MiB, n = 32 wrote at 28% of copy bandwidth straight from the columns.
     * Not for spectra of up to STAGED_MIN_SPECTRUM bytes, whose column stores already land in a
     * few cache lines (R2C at 128 MiB, staged / straight: n = 8 1.96x / 2.25x cuFFT, n = 16
     * 1.63x / 1.80x; n = 32 1.87x / 1.85x, n = 64 1.51x / 1.14x, n = 128 0.95x / 0.48x). */
    int stride = L->column_stride > 1 ? L->column_stride : 1;
    L->tile_wavefronts[0] = scatter_wavefronts(pl, stride, odd_pitch(p->half), false);
    L->tile_wavefronts[1] = scatter_wavefronts(pl, stride, odd_pitch(p->half), true);
    L->pad_tile = L->tile_wavefronts[1] < L->tile_wavefronts[0];
    L->tile_bytes = ((int64_t)p->n * odd_pitch(p->half) + (L->pad_tile ? p->n / 16 + 1 : 0)) * 8;
    L->staged = p->sign < 0 && !p->transposed && L->per_image_bytes + L->tile_bytes <= staged_max &&
                spectrum_bytes > STAGED_MIN_SPECTRUM;
    /* R2C: column kx's n outputs replace the n bins it read (kx and n - kx of every row pair), so
     * the staged results need no tile of their own: buf gets all ceil(n/2) row pairs and two spare
     * bins per row (columns 0 and n/2 read one bin per row). Only where the tile would leave room
     * for one block per multiprocessor: n = 128 takes 70 KiB per image instead of 132, and ran
     * 0.96x -> 1.20x cuFFT on the H100 at 128 MiB; n = 64, which fits two blocks either way, ran
     * 1.52x -> 1.35x aliased (the copy-out's per-bin select and the extra __syncwarp; the copy-out
     * has since gone a warp per row without them, NOTES item 21, and n = 64 was not measured again). */
    L->aliased = L->staged && p->type == CONVGEN_FFT_R2C &&
                 2 * (L->per_image_bytes + L->tile_bytes + CG_SHARED_RESERVED_PER_BLOCK) > per_sm;
    if (L->aliased) {
        int last = p->n + 1; /* the second spare bin */
        L->buf_rows = (p->n + 1) / 2;
        L->buf_pitch = odd_pitch((L->pad_rows ? last + last / 16 : last) + 1);
        L->per_image_bytes = (int64_t)L->buf_rows * L->buf_pitch * 8;
        L->column_wavefronts = L->buf_swizzle = L->column_stride = 0; /* column_aware_pitch's pitch is not this one */
    }
    int64_t per_image = L->per_image_bytes + (L->staged && !L->aliased ? L->tile_bytes : 0);
    int64_t images = BLOCK_SHARED_TARGET / per_image;
    int64_t enough_blocks = p->count / (2 * sms); /* keep two blocks per multiprocessor */
    if (images > enough_blocks)
        images = enough_blocks;
    L->images = images < 1 ? 1 : (int)images;
    L->blocks = (p->count + L->images - 1) / L->images;
    int64_t buf = (int64_t)L->images * L->buf_rows * L->buf_pitch;
    L->tile_offset = buf;
    L->shared_bytes = L->staged && !L->aliased ? (L->tile_offset * 8 + L->tile_bytes * L->images) : buf * 8;
    if (2 * (L->shared_bytes + CG_SHARED_RESERVED_PER_BLOCK) > per_sm)
        L->warps = LONE_BLOCK_WARPS;
    bool dense_spectra = spectra_are_dense(p);
    L->flat_copy = L->staged && !L->aliased && odd_pitch(p->half) == p->half && dense_spectra;
    /* The staged loads of a C2R are a plain copy where buf's rows are the spectrum's (pitch half,
     * no padding): the copy then spends no division per bin on its image, row and column (NOTES
     * item 23). 2-D C2C keeps the division loop: not measured. */
    L->flat_loads = L->staged_loads && p->type == CONVGEN_FFT_C2R && L->buf_pitch == p->half && !L->pad_rows &&
                    dense_spectra;
}

/* An inverse plane stage follows the depth pass, which wrote the last volumes last: its blocks
 * take the images from the last back (the depth pass's forward twin does the same). */
static bool blocks_reversed(const cg_fft_problem *p, const real_layout *L)
{
    return p->plane_stage && p->sign > 0 && !L->cluster && !L->resident;
}

static tmpl_value *header_lines(const cg_fft_problem *p, const fft_plan *pl, const real_layout *L, const cg_kernel *k)
{
    char plan[160];
    fft_plan_describe(pl, plan, sizeof plan);
    tmpl_value *h = cg_fft_header_open(p);
    if (p->plane_stage)
        cg_value_line(h, "the plane stage of a 3-D transform: %d window plane%s of each of %lld volumes, %lld (signal) and "
                         "%lld (spectrum) elements apart; fft_volume.c's depth pass %s",
                      p->planes, p->planes > 1 ? "s" : "", (long long)(p->count / p->planes),
                      (long long)p->plane_stride[0], (long long)p->plane_stride[1],
                      p->sign < 0 ? "follows" : "comes first");
    cg_value_line(
        h, "signal: %s %s, pitch %lld, strides {%lld, %lld} (batch, channel)", p->sign < 0 ? "input" : "output",
        p->sign < 0 ? "read with clipped loads (the rest of the signal is zero)" : "written with clipped stores",
        (long long)p->pitch, (long long)p->real_stride[0], (long long)p->real_stride[1]);
    if (p->rank == 2)
        cg_value_line(h, "spectrum: %s [%d][%d], %s order along the %d-bin column axis, strides {%lld, %lld}",
                      p->transposed ? "transposed" : "natural", p->transposed ? p->half : p->n,
                      p->transposed ? p->n : p->half, p->natural ? "natural" : "digit-reversed", p->n,
                      (long long)p->spectrum_stride[0], (long long)p->spectrum_stride[1]);
    else
        cg_value_line(h, "spectrum: %d bins per transform, natural order, strides {%lld, %lld}", p->half,
                      (long long)p->spectrum_stride[0], (long long)p->spectrum_stride[1]);
    cg_value_line(h, "plan: radices %s, %s", plan, p->sign < 0 ? "decimation in frequency" : "decimation in time");
    cg_value_line(h, "twiddles: %s", pl->twiddle_reason);
    bool packed = p->type != CONVGEN_FFT_C2C;
    if (packed)
        cg_value_line(h, "packing: two real rows as one complex transform z = a + ib; the Hermitian halves are %s %s",
                      p->sign < 0 ? "separated" : "combined",
                      p->rank == 2 ? "as the columns load them" : "through shared memory");
    if (p->rank == 2) {
        cg_value_line(h, "pruning: %d row transforms (%s %d window rows) of %d; %d column transforms", L->pairs,
                      packed ? "pairs of the" : "one for each of the", p->h, packed ? (p->n + 1) / 2 : p->n, p->half);
        char swizzle_text[48] = "", stride_text[64] = "";
        if (L->buf_swizzle)
            snprintf(swizzle_text, sizeof swizzle_text, ", bin k of row r at k ^ (r & %d)", L->buf_swizzle);
        if (L->column_stride > 1)
            snprintf(stride_text, sizeof stride_text, ", a warp's columns %d apart", L->column_stride);
        if (L->fused && L->column_wavefronts)
            cg_value_line(h,
                          "bank model (wavefronts of a warp's row stores and column loads): buf rows of %d float2s%s%s, "
                          "the fewest of pitches %d..%d, swizzles and column strides: rows %d, columns %d",
                          L->buf_pitch, swizzle_text, stride_text, p->n + 1, p->n + 16, L->row_wavefronts[0],
                          L->column_wavefronts);
        else if (L->fused)
            cg_value_line(
                h,
                "bank model (wavefronts of one row transform's natural-order bins, plain / padded by one float2 "
                "every 16): buf rows %d / %d, %s",
                L->row_wavefronts[0], L->row_wavefronts[1], L->pad_rows ? "padded" : "plain");
        if (L->aliased)
            cg_value_line(h,
                          "stores: staged in the spectrum's own shared memory, each column's outputs over the bins it "
                          "read, so rows of the natural layout go out coalesced");
        else if (L->staged)
            cg_value_line(
                h,
                "stores: through a shared-memory tile of %lld bytes per image, so rows of the natural layout go out "
                "coalesced; tile rows %d / %d, %s",
                (long long)L->tile_bytes, L->tile_wavefronts[0], L->tile_wavefronts[1],
                L->pad_tile ? "padded" : "plain");
        if (L->staged_loads)
            cg_value_line(h, "loads: the block's spectra come into shared memory coalesced (%d rows%s), and the columns "
                             "transform there in place",
                          p->n, L->bulk_load    ? ", one flat copy by the copy engine, cp.async.bulk"
                                : L->flat_loads ? ", one flat copy"
                                                : "");
        if (L->fused)
            cg_value_line(h,
                          "phases: rows and columns in one kernel, the spectrum between them in %lld bytes of shared "
                          "memory per image",
                          (long long)L->per_image_bytes);
        else if (L->cluster)
            cg_value_line(h,
                          "phases: rows and columns in one kernel, the spectrum between them (too large for one "
                          "block's shared memory) spread over a cluster of %d blocks, %lld bytes of shared memory "
                          "each: block r owns spectrum columns %d r .. %d r + %d%s",
                          L->cluster, (long long)L->shared_bytes, L->width, L->width, L->width - 1,
                          p->sign < 0 ? " and gets their bins from every row transform of the cluster through "
                                        "distributed shared memory"
                                      : "; the row transforms read their bins from the blocks owning them, "
                                        "through distributed shared memory");
        else
            cg_value_line(h,
                          "phases: rows and columns in one kernel, the spectrum between them (too large for shared "
                          "memory) in %d rows of shared memory and a workspace slot of %lld bytes per block, %d "
                          "block%s per multiprocessor; the %lld bytes of all slots %s",
                          L->split_rows, (long long)L->slot_elements * 8, L->blocks_per_sm,
                          L->blocks_per_sm > 1 ? "s" : "", (long long)(L->slot_elements * 8 * L->blocks),
                          L->slots_in_l2 ? "stay in L2" : "exceed L2, so part of their traffic goes to DRAM");
    } else {
        cg_value_line(h,
                      "bank model (wavefronts of one transform's natural-order bins, plain / padded by one float2 "
                      "every 16): shared rows %d / %d, %s",
                      L->row_wavefronts[0], L->row_wavefronts[1], L->pad_rows ? "padded" : "plain");
    }
    if (p->scale != 1.0f)
        cg_value_line(h, "scale: outputs multiplied by %.9g", (double)p->scale);
    if (L->cluster)
        cg_value_line(h, "launch: grid (%u, 1, 1) in clusters of %d, block (%u, 1, 1), %u bytes of dynamic shared "
                         "memory; cluster i works image i, block r of it columns %d r ..",
                      k->grid[0], L->cluster, k->block[0], k->shared_bytes, L->width);
    else if (L->resident)
        cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1), %u bytes of dynamic shared memory; block b works "
                         "images b, b + %u, b + %u, ...",
                      k->grid[0], k->block[0], k->shared_bytes, k->grid[0], 2 * k->grid[0]);
    else
        cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1), %u bytes of dynamic shared memory; %d %s%s per block%s",
                      k->grid[0], k->block[0], k->shared_bytes, L->images, p->rank == 2 ? "image" : "transform",
                      L->images > 1 ? "s" : "",
                      blocks_reversed(p, L) ? ", from the last image back: the depth pass wrote it last, and the first "
                                              "blocks read it from the L2 cache"
                                            : "");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/fft/fft_real.cu%s or generator/fft/fft_real.c instead.",
                  L->cluster ? ", templates/fft/fft_real_cluster.cuh" : "");
    return h;
}

static tmpl_value *context(const cg_fft_problem *p, const fft_plan *pl, const real_layout *L, const cg_kernel *k,
                           int64_t workspace_elements)
{
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, pl, L, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    cg_fft_warp_context(ctx, pl, p->sign);
    tmpl_set_int(ctx, "rank", p->rank);
    tmpl_set_int(ctx, "half", p->half);
    tmpl_set_int(ctx, "warps", L->warps);
    tmpl_set_int(ctx, "threads", L->warps * FFT_WARP);
    tmpl_set_int(ctx, "min_blocks", L->min_blocks);
    int budget = 65536 / (L->min_blocks * L->warps * FFT_WARP);
    char reason[256];
    snprintf(reason, sizeof reason, "a register budget of %d per thread; %s", budget < 255 ? budget : 255,
             L->min_blocks_why);
    tmpl_set_str(ctx, "launch_reason", reason);
    tmpl_set_bool(ctx, "hoist_twiddles", L->hoist_twiddles);
    tmpl_set_bool(ctx, "unguarded_columns", L->unguarded_columns);
    tmpl_set_int(ctx, "xch_offset", L->xch_offset);
    tmpl_set_int(ctx, "xch_warp", L->xch_warp);
    cg_fft_side_context(ctx, p, p->count + (int64_t)L->warps * FFT_WARP * 2 + L->images, workspace_elements);
    tmpl_set_bool(ctx, "packed", p->type != CONVGEN_FFT_C2C);
    tmpl_set_int(ctx, "pitch", p->pitch);
    tmpl_set_int(ctx, "h", p->h);
    tmpl_set_int(ctx, "wy0", p->oy);
    tmpl_map_set(ctx, "xregs", cg_fft_window_registers(pl, p->ox, p->w));
    tmpl_map_set(ctx, "nat", cg_fft_positions(pl, true));
    /* The forward rows' bins in buf: column_aware_pitch's swizzle on the lane part (skl, see swizzle_per_lane) */
    tmpl_map_set(ctx, "row_bins", L->buf_swizzle ? cg_fft_exchange_positions(pl, "skl") : cg_fft_positions(pl, true));
    tmpl_set_bool(ctx, "pad_rows", L->pad_rows);
    tmpl_set_bool(ctx, "aliased", L->aliased); /* rank 2 only */
    tmpl_set_bool(ctx, "bulk_load", L->bulk_load); /* rank 2 only */
    tmpl_set_int(ctx, "cluster", L->cluster); /* rank 2 only */
    tmpl_set_int(ctx, "width", L->width);
    if (L->cluster) /* bins and copy-out positions to (row, column) and column to block */
        tmpl_map_set(ctx, "width_div", cg_value_magic((uint32_t)L->width, (int64_t)p->n * L->width +
                                                                              COPY_UNROLL * L->warps * FFT_WARP));

    if (p->rank == 1) { /* the shared rows of the Hermitian (un)packing */
        tmpl_set_int(ctx, "spitch", L->buf_pitch);
        int bins = 2 * pl->per_warp * p->half; /* the half spectra of a warp's transforms */
        tmpl_set_int(ctx, "bin_loads", (bins + FFT_WARP - 1) / FFT_WARP);
        tmpl_map_set(ctx, "e_div", cg_value_magic((uint32_t)p->half, bins + FFT_WARP));
        return ctx;
    }
    tmpl_map_set(ctx, "yregs", cg_fft_window_registers(pl, p->oy, p->h));
    tmpl_map_set(ctx, "colpos", cg_fft_positions(pl, p->natural));
    tmpl_set_bool(ctx, "transposed", p->transposed);
    tmpl_set_bool(ctx, "resident", L->resident);
    tmpl_set_bool(ctx, "blocks_reversed", blocks_reversed(p, L));

    tmpl_set_int(ctx, "slot_elements", L->slot_elements);
    tmpl_set_bool(ctx, "slots_in_l2", L->slots_in_l2);
    tmpl_set_int(ctx, "split_rows", L->split_rows);
    tmpl_set_int(ctx, "blocks_per_sm", L->blocks_per_sm);
    tmpl_set_int(ctx, "blocks", L->blocks);
    tmpl_set_int(ctx, "buf_rows", L->buf_rows);
    tmpl_set_int(ctx, "buf_pitch", L->buf_pitch);
    tmpl_set_int(ctx, "buf_swizzle", L->buf_swizzle);
    tmpl_set_int(ctx, "column_stride", L->column_stride > 1 ? L->column_stride : 0);
    tmpl_set_int(ctx, "shared_bytes", k->shared_bytes);
    tmpl_set_int(ctx, "images", L->images);
    tmpl_set_int(ctx, "pairs", L->pairs);
    tmpl_set_bool(ctx, "staged", L->staged);
    tmpl_set_bool(ctx, "staged_loads", L->staged_loads);
    tmpl_set_bool(ctx, "flat_copy", L->flat_copy);
    tmpl_set_bool(ctx, "flat_loads", L->flat_loads);
    tmpl_set_bool(ctx, "partial_block", p->count % L->images != 0); /* the last block has fewer images */

    tmpl_set_bool(ctx, "pad_tile", L->pad_tile);
    tmpl_map_set(ctx, "pad_div", cg_value_magic((uint32_t)(16 * p->half), (int64_t)L->images * p->n * p->half + 1024));
    tmpl_set_int(ctx, "tile_offset", L->tile_offset);
    tmpl_set_int(ctx, "tile_pitch", odd_pitch(p->half));
    tmpl_set_int(ctx, "copy_unroll", COPY_UNROLL);
    tmpl_map_set(ctx, "image_div", cg_value_magic((uint32_t)(p->n * p->half), (int64_t)L->images * p->n * p->half +
                                                                                 COPY_UNROLL * L->warps * FFT_WARP));
    /* A cluster's block takes every cluster-th row pair and its own width columns. */
    int row_items = L->cluster ? (L->pairs + L->cluster - 1) / L->cluster : L->images * L->pairs;
    int row_tasks = (row_items + pl->per_warp - 1) / pl->per_warp;
    int col_tasks = ((L->cluster ? L->width : L->images * p->half) + pl->per_warp - 1) / pl->per_warp;
    tmpl_set_int(ctx, "row_tasks", row_tasks);
    tmpl_set_int(ctx, "col_tasks", col_tasks);
    tmpl_map_set(ctx, "pair_div", cg_value_magic((uint32_t)L->pairs, (int64_t)(row_tasks + 1) * pl->per_warp));
    int64_t half_range = (int64_t)(col_tasks + 1) * pl->per_warp;
    if (half_range < (int64_t)p->n * p->half) /* the staged copy divides by half too */
        half_range = (int64_t)p->n * p->half;
    tmpl_map_set(ctx, "half_div", cg_value_magic((uint32_t)p->half, half_range));
    return ctx;
}

static convgen_status render(const cg_fft_problem *p, const fft_plan *pl, const real_layout *L,
                             int64_t workspace_elements, cg_kernel *k)
{
    static const char *const types[] = {"c2c", "r2c", "c2r"};
    snprintf(k->name, sizeof k->name, p->plane_stage ? "convgen_%s3d%d_planes" : "convgen_%s%dd%d", types[p->type],
             p->plane_stage ? p->n : p->rank, p->n);
    k->grid[0] = (unsigned)L->blocks;
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = (unsigned)L->warps * FFT_WARP;
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = p->rank == 2 ? (unsigned)L->shared_bytes : 0;
    k->epilogue = p->type == CONVGEN_FFT_C2R && p->epilogue; /* its rows' stores apply it (fft_problem.h) */
    tmpl_value *ctx = context(p, pl, L, k, workspace_elements);
    return cg_render_kernel("fft/fft_real.cu", ctx, &k->source);
}

/* The blocks per multiprocessor __launch_bounds__ asks for, which sets ptxas's register budget:
 * 128 per thread, or all 255 for the sizes with more than 8 registers per lane (n = 245: 35 of
 * them, each a complex value; n = 225 with 9 spilled under 128). Clustered blocks aim at three
 * per multiprocessor (85 registers) where that does not spill: ptxas fit n = 256 in 66, and
 * spilled at n = 175 (which keeps 128), 225 and 243 (C2R). Light power-of-two plans (2
 * registers per lane: n = 8, 16) whose spectrum stays in shared memory ask for the blocks that
 * 40 registers each allow (6 of 8 warps; fewer if their shared memory fits fewer): under 128,
 * ptxas gave n = 16 R2C 47 registers, 5 blocks where 6 fit, and it ran 9% slower on the H100.
 * Other light plans (n = 12: radix-3 lane stages) were not measured under the lower budget. */
static void launch_min_blocks(const cg_fft_problem *p, const fft_plan *pl, const cg_target *t, real_layout *L)
{
    int threads = L->warps * FFT_WARP, plain = 65536 / 128 / threads;
    bool pow2 = fft_power_of_two(p->n);
    L->min_blocks = plain;
    L->min_blocks_why = "without a minimum, ptxas picked 40 registers for some windowed shapes and spilled";
    if (L->paired) {
        L->min_blocks = 2;
        L->min_blocks_why = "two blocks of 12 warps share a multiprocessor (the paired layout)";
    } else if (pl->regs > 8) {
        L->min_blocks = 1;
        L->min_blocks_why = "more than 8 complex values per lane need more than 128 registers";
    } else if (L->cluster && pow2) {
        L->min_blocks = CLUSTER_BLOCKS_PER_SM;
        L->min_blocks_why = "three clustered blocks share a multiprocessor, one's loads overlapping the others' work";
    } else if (p->rank == 2 && L->fused && pow2 && pl->regs <= 2) {
        int64_t per_sm = cg_target_shared_per_sm(t);
        int64_t by_shared = per_sm / (L->shared_bytes + CG_SHARED_RESERVED_PER_BLOCK);
        int64_t by_registers = 65536 / ((int64_t)threads * LIGHT_PLAN_REGISTERS);
        int64_t blocks = by_shared < by_registers ? by_shared : by_registers;
        if (blocks > plain) {
            L->min_blocks = (int)blocks;
            L->min_blocks_why = "a light plan fits in 40 registers, and more blocks share a multiprocessor (under 128, "
                                "ptxas took 47 at n = 16: one block fewer)";
        }
    }
}

/* How the rank 2 kernels load. Their warps run many transforms of one plan, so the twiddle
 * factors are loaded once per lane (fft_twiddles) rather than per transform. Measured on the
 * H100 at 128 MiB, with the unguarded column loads: R2C n = 32 1.90x -> 2.08x cuFFT, 64 1.51x ->
 * 1.64x, 128 1.28x -> 1.39x. Powers of two only: the radix-3, 5 and 7 lane stages need their
 * registers (n = 200 spilled under 128 with its factors held).
 * Forward columns load the rows inside the window without a guard (a branch around each load),
 * lane groups without a column reading image 0. Aliased layouts write each column's results
 * over the bins it read, so there only where every lane has a column (one image per block,
 * whole tasks, no idle lanes: n = 128), else an idle lane's reads would race with those writes.
 * Not in the inverse: its staged loads measured 3-5% slower unguarded at n = 32 and 64 (C2R). */
static void choose_loads(const cg_fft_problem *p, const fft_plan *pl, real_layout *L)
{
    L->hoist_twiddles = p->rank == 2 && fft_power_of_two(p->n);
    bool every_lane_busy = L->images == 1 && p->half % pl->per_warp == 0 && pl->lanes * pl->per_warp == FFT_WARP;
    L->unguarded_columns = p->rank == 2 && p->sign < 0 && !L->cluster && (!L->aliased || every_lane_busy) &&
                           cg_fft_full_registers(pl, p->oy, p->h) > 0;
}

/* Rank 2 powers of two in natural order whose spectrum stays in shared memory run exchanged
 * plans (fft_plan.h): every stage in registers, 4 registers per lane at n = 16 and 8 above, and
 * each warp a scratch of its transforms' values in shared memory between the phases. The lane
 * stages they replace cost some 8 instructions per value and radix-2 digit, and instruction issue
 * bound these kernels (ncu, R2C n = 64 at 128 MiB: 0.80 warps issued per scheduler and cycle).
 * Measured on the H100 at 128 MiB against lane stages in the same run (speedup over cuFFT,
 * natural / transposed): R2C n = 64 1.67x -> 1.89x / 1.71x -> 1.99x, n = 128 1.37x -> 1.42x /
 * 1.48x -> 1.75x; C2R n = 64 1.50x -> 1.66x / 1.71x -> 1.97x, n = 128 1.22x -> 1.29x / 1.42x ->
 * 1.72x; R2C n = 16 1.77x -> 1.84x. Not where they lost: n = 32 (8 registers x 4 lanes: C2R 1.95x
 * -> 1.26x, R2C 2.05x -> 1.81x), C2R n = 16 (1.91x -> 1.85x) and transposed R2C n = 16 (1.94x ->
 * 1.89x); 2-D C2C was not measured and keeps lane stages. Digit-reversed spectra keep the
 * lane-stage plans, whose radices define that order. */
static void choose_exchange(const cg_fft_problem *p, const cg_target *t, fft_plan *pl, real_layout *L)
{
    int64_t per_block = cg_target_shared_per_block(t);
    fft_plan x;
    char err[160];
    real_layout XL;
    int64_t per_sm = cg_target_shared_per_sm(t);
    bool measured = p->n == 64 || p->n == 128 || (p->n == 16 && p->sign < 0 && !p->transposed);
    if (p->rank != 2 || p->type == CONVGEN_FFT_C2C || !L->fused || !p->natural || !measured ||
        !fft_plan_make_exchanged(p->n, p->n == 16 ? 4 : 8, &x, err, sizeof err))
        return;
    choose_layout(p, &x, t, &XL);
    XL.xch_warp = x.per_warp * x.xstride;
    XL.xch_offset = XL.shared_bytes / 8;
    XL.shared_bytes += (int64_t)XL.warps * XL.xch_warp * 8;
    /* The scratch comes after the layout's choices (images per block, aliasing, warps): keep the
     * lane stages where it would leave one block per multiprocessor where two fit (the A100's
     * 164 KiB at n = 128). */
    bool two_before = 2 * (L->shared_bytes + CG_SHARED_RESERVED_PER_BLOCK) <= per_sm;
    bool two_after = 2 * (XL.shared_bytes + CG_SHARED_RESERVED_PER_BLOCK) <= per_sm;
    if (!XL.fused || XL.shared_bytes > per_block || (two_before && !two_after))
        return;
    /* Forward n = 128, whose scratch leaves two blocks per multiprocessor (84 KiB each with 8
     * warps' scratch, 68 without it), runs 12 warps a block instead of 8 (93-95 KiB), as many warps
     * in flight as three blocks of 8 would have. Only where measured: smaller sizes on targets of
     * less shared memory could take the same rule, untimed. Measured on the H100 at 128 MiB,
     * speedup over cuFFT with 8 -> 12 warps in the same run: R2C natural 1.56x -> 1.65x (1024
     * images 1.59x -> 1.64x), transposed 1.76x -> 1.78x; 16 warps (64 registers) were slower than
     * 12. The inverse lost: C2R natural 1.55x -> 1.50x, transposed 1.72x -> 1.65x. Whole signals
     * only, as measured: in 12 warps' 80 registers NVRTC 13.0 spilled 16 bytes for a 95x94
     * window at 17,17 (other windows took 69-72 registers). */
    int64_t paired = XL.xch_offset * 8 + (int64_t)PAIRED_BLOCK_WARPS * XL.xch_warp * 8;
    bool two_only = 3 * (XL.shared_bytes + CG_SHARED_RESERVED_PER_BLOCK) > per_sm && two_after;
    bool whole = p->w == p->n && p->h == p->n;
    if (two_only && whole && p->n == 128 && p->sign < 0 && 2 * (paired + CG_SHARED_RESERVED_PER_BLOCK) <= per_sm &&
        paired <= per_block) {
        XL.warps = PAIRED_BLOCK_WARPS;
        XL.shared_bytes = paired;
        XL.paired = true;
    }
    *pl = x;
    *L = XL;
}

convgen_status cg_fft_real_kernels(const cg_fft_problem *p, const cg_target *t, cg_generated *out)
{
    fft_plan pl;
    char err[128];
    if (!fft_plan_make(p->n, true, &pl, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s", err);
    real_layout L;
    choose_layout(p, &pl, t, &L);
    choose_exchange(p, t, &pl, &L);
    launch_min_blocks(p, &pl, t, &L);
    choose_loads(p, &pl, &L);
    /* C2R's flat copy in by the copy engine (bulk_loads_fit), not from one of several images a
     * block of the resident or clustered layouts */
    L.bulk_load = L.flat_loads && !L.resident && !L.cluster && bulk_loads_fit(p, t, &L);
    /* 1-D R2C on fewer blocks than multiprocessors is a chain of latencies, and a table load of the
     * twiddle factors is one link of it: sincospif measured ahead at 1024 transforms on the H100 for
     * every n = 8..256 (n = 64 0.92x -> 0.94x cuFFT, 256 0.97x -> 1.00x); C2R, whose chain starts
     * with its loads of the spectra, gained nothing (n = 256 0.97x -> 0.93x). */
    if (p->rank == 1 && p->type == CONVGEN_FFT_R2C && L.blocks < sm_count(t))
        fft_plan_use_sincos(&pl, "a few transforms");
    int64_t elements = L.blocks * L.slot_elements; /* float2s of workspace: the resident blocks' slots */
    if (!cg_mul64(elements, 8, &out->workspace_bytes))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the workspace overflows 64 bits");
    out->kernel_count = 1;
    return render(p, &pl, &L, elements, &out->kernels[0]);
}
