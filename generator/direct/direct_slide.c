/* direct-window's fprop: a layer with few input channels (ZNNi's first layer, 1 -> 80 maps of a
 * 128^3 volume; an RGB stem) as a sum over taps rather than a GEMM.
 *
 * As an implicit GEMM such an fprop has a reduction of C x taps with C <= 4 and each gathered
 * element of x feeds few FMAs (direct's Z1 fprop ran at 19 TFLOP/s, 29% of the FMA rate). Here
 * each thread keeps G output channels x YT rows x P depth positions of y in registers and slides
 * them over x: per input channel, tap row and tap column it reads the (P - 1) * stride +
 * (taps - 1) * dilation + 1 values of x its column of depths touches, then per depth tap G
 * weights (float4 reads, the same for the whole warp) for G x P FMAs. A 2-D layer's rows play
 * the depth's part (its column runs down the rows), so its loads serve every tap row too.
 *
 * A block is 32 lanes along x, WK warps over groups of G output channels and WY warps along y.
 * Its window of x (every input channel; in stages of CI channels double-buffered by cp.async
 * where they do not fit one) and the stage's weights are in shared memory; lanes read
 * consecutive floats of a row, so no read conflicts at stride 1. The copies of a stage are rows
 * of the window: warp w copies the rows y = w (mod warps) of every channel and depth, so each
 * copy's address is the thread's base plus a constant and its in-bounds test two bits of masks
 * worked out once (a zero where x has none). A block whose reduction is one stage loops over YL
 * groups of rows with its window and weights loaded once.
 *
 * The bprop of such layers is direct_window.c's (measured: this kernel's transpose, one output
 * channel from 80, ran Z1's bprop in 1.73 ms against the window kernel's 1.29). */
#include <stdio.h>
#include <string.h>

#include "direct_slide.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum {
    MAX_ACC = 64,             /* accumulators a thread holds: G * YT * P */
    MAX_TAPS = 16,            /* taps per dimension (unrolled) */
    MAX_COLUMN = 16,          /* values of x a thread loads per tap row and column: with 64
                                 accumulators, 21 (a 7-tap stem at stride 2) took 128 registers
                                 and 18 (L1's 11 taps) spilled at 170 */
    MAX_WARPS = 8,            /* 256 threads of 128 registers: two blocks a multiprocessor */
    STAGE_BYTES = 56 * 1024,  /* a stage at most: two of them and a second block fit 228 KiB */
    MAX_UNROLLED = 16384,     /* FMAs of one stage's products a thread runs (code size) */
};

/* x's index o * step + t * dil + off along one dimension of the 3-D view (a unit one below rank). */
typedef struct slide_dim {
    int64_t src, dst, taps, step, dil, off;
} slide_dim;

typedef struct slide_spec {
    slide_dim dim[3];     /* z, y, x */
    int64_t c, k;
    bool reverse;         /* the kernel's taps read backwards: a convolution */
    int g, yt, p;         /* a thread's channels, rows and depth positions of y */
    int wk, wy, threads;  /* warps over channel groups and along y */
    int yl;               /* row groups a block loops over (one stage only) */
    int ci, stages;       /* input channels a stage, stages */
    int64_t ze, ye, xe;   /* a channel's window of x */
    int cbp;              /* the weights of one tap in shared memory: G * WK */
    int64_t tiles_x, tiles_y, tiles_z, k_chunks;
    bool trickle;         /* a row group's outputs stashed in shared memory, stored during the next's products */
    bool streams;         /* y is larger than L2: its stores evict first */
    int64_t stage_bytes;  /* a stage's shared memory at most: two of them fit a block */
} slide_spec;

static int64_t extent(const slide_dim *d, int64_t outputs)
{
    return (outputs - 1) * d->step + (d->taps - 1) * d->dil + 1;
}

/* The 3-D view (depth, rows, columns): a 2-D layer's rows are its depth, so that a thread's
 * column of positions runs along them (its loads serve every tap row), and its rows are a unit
 * dimension; a rank-1 layer has only columns. `of` maps a view dimension to the layer's (-1: unit). */
static void set_dims(const cg_problem *p, slide_dim dim[3], int of[3])
{
    static const int view[3][3] = {{-1, -1, 0}, {0, -1, 1}, {0, 1, 2}};
    for (int v = 0; v < 3; ++v) {
        int d = of[v] = view[p->rank - 1][v];
        dim[v] = (slide_dim){.src = 1, .dst = 1, .taps = 1, .step = 1, .dil = 1, .off = 0};
        if (d >= 0)
            dim[v] = (slide_dim){.src = p->in[d], .dst = p->out[d], .taps = p->kernel[d], .step = p->stride[d],
                                 .dil = p->dilation[d], .off = -p->pad_before[d]};
    }
}

static int64_t view_taps(const slide_spec *s) { return s->dim[0].taps * s->dim[1].taps * s->dim[2].taps; }

/* The windows of ci input channels, padded to a float4, then their weights. */
static int64_t window_floats(const slide_spec *s, int64_t ci) { return (ci * s->ze * s->ye * s->xe + 3) / 4 * 4; }

static int64_t stage_floats(const slide_spec *s, int64_t ci)
{
    return window_floats(s, ci) + ci * view_taps(s) * s->cbp;
}

static bool stage_fits(int64_t ci, void *spec)
{
    const slide_spec *s = spec;
    return stage_floats(s, ci) * 4 <= s->stage_bytes && s->ye <= 32 * (s->threads / 32) &&
           ci * view_taps(s) * s->g * s->yt * s->p <= MAX_UNROLLED;
}

static convgen_status refuse(const char *why) { return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: %s", why); }

/* The block's rows of y: YL groups of WY warps' YT rows, and the window of x they read. */
static void set_rows(slide_spec *s, int yl)
{
    s->yl = yl;
    s->ye = extent(&s->dim[1], (int64_t)yl * s->wy * s->yt);
    s->tiles_y = (s->dim[1].dst + (int64_t)yl * s->wy * s->yt - 1) / ((int64_t)yl * s->wy * s->yt);
}

/* The thread's block of y (G channels x YT rows x P depths, P the most whose column of x fits
 * its registers) and the block's warps. */
static void choose_blocking(slide_spec *s)
{
    const slide_dim *z = &s->dim[0], *y = &s->dim[1];
    s->g = (int)(s->k <= 8 ? s->k : 8);
    s->p = (int)(z->dst < 8 ? z->dst : 8);
    while (s->p > 1 && extent(z, s->p) > MAX_COLUMN)
        s->p /= 2;
    int64_t yt = MAX_ACC / (s->g * s->p);
    yt = yt < 8 ? yt : 8;
    s->yt = (int)(yt < y->dst ? yt : y->dst);
    int64_t groups = (s->k + s->g - 1) / s->g;
    s->k_chunks = (groups + MAX_WARPS - 1) / MAX_WARPS;
    s->wk = (int)((groups + s->k_chunks - 1) / s->k_chunks);
    int64_t rows = (y->dst + s->yt - 1) / s->yt;
    s->wy = 1;
    while (s->wk * s->wy < 4 && s->wy < rows)
        s->wy *= 2;
    s->threads = 32 * s->wk * s->wy;
    s->cbp = s->g * s->wk; /* a multiple of 4 where G is: the weights are read as float4 then */
    s->ze = extent(z, s->p);
    s->xe = extent(&s->dim[2], 32);
    set_rows(s, 1);
    while (s->yt > 1 && !stage_fits(1, s)) { /* rows strided or dilated past the window */
        s->yt /= 2;
        set_rows(s, 1);
    }
}

/* A block that holds the whole reduction in one stage loops over YL row groups, its window and
 * weights loaded once: the most (up to 8) that fit and leave 1024 blocks or more. */
static void choose_row_loop(const cg_problem *p, slide_spec *s)
{
    for (int yl = 8; yl > 1; yl /= 2) {
        set_rows(s, yl);
        if (stage_fits(s->c, s) && s->tiles_x * s->tiles_y * s->tiles_z * s->k_chunks * p->n >= 1024)
            return;
    }
    set_rows(s, 1);
}

/* The outputs a thread sets aside in the trickle's stash, all threads of the block. */
static int64_t stash_bytes(const slide_spec *s) { return 4ll * s->g * s->yt * s->p * s->threads; }

/* The block's shared memory: its stage(s) and, trickling, the stash. */
static int64_t shared_bytes(const slide_spec *s)
{
    return 4 * stage_floats(s, s->ci) * (s->stages > 1 ? 2 : 1) + (s->trickle ? stash_bytes(s) : 0);
}

/* Blocks a multiprocessor can run: 128 registers a thread (64 accumulators, a column of x, G
 * weights, addresses; capped at 96, ptxas spilled Z1's), and no more than the shared memory
 * lets in (0 where a block's is past the target's). */
static int64_t resident_blocks(const slide_spec *s, const cg_target *t, int64_t bytes)
{
    if (bytes > cg_target_shared_per_block(t))
        return 0;
    int64_t by_shared = cg_target_shared_per_sm(t) / (bytes + CG_SHARED_RESERVED_PER_BLOCK);
    int64_t by_registers = 65536 / 128 / s->threads;
    return by_shared < by_registers ? by_shared : by_registers;
}

/* The launch bounds' blocks a multiprocessor: at least one. */
static int blocks_per_sm(const slide_spec *s, const cg_target *t, int64_t bytes)
{
    int64_t blocks = resident_blocks(s, t, bytes);
    return blocks > 1 ? (int)blocks : 1;
}

/* A block of several row groups stores each group's outputs (64 a thread) at once, and the
 * blocks of a multiprocessor, which start together, store together: a store queue full while
 * no FMA issues (Z1 on an H100: 0.74 ms against 0.59 on an H200, whose memory alone is faster).
 * So a group's outputs wait in shared memory, [value][thread], and go out a few at a time
 * during the next group's products; the last group's straight from registers. Taken where the
 * stash fits a block's shared memory and keeps the blocks a multiprocessor runs (a target of
 * 99 KiB a block, sm_86 or sm_89, refuses it for large windows). */
static void choose_trickle(slide_spec *s, const cg_target *t)
{
    int64_t stage = 4 * stage_floats(s, s->ci), with = resident_blocks(s, t, stage + stash_bytes(s));
    s->trickle = s->stages == 1 && s->yl > 1 && with > 0 && with == resident_blocks(s, t, stage);
}

/* y larger than the L2 streams through it: stored with evict-first (st.global.cs) it leaves the
 * L2 to x's windows and the weights, which every block rereads. Z1's 625 MB on an H100: fprop
 * 0.702 -> 0.666 ms (results/nvidia-h100-80gb-hbm3-2026-11-27-z1-window-ab.md). A y that fits stays
 * for the next layer to read. */
static bool streams(const cg_problem *p, const slide_spec *s, const cg_target *t)
{
    return 4 * p->n * s->k * s->dim[0].dst * s->dim[1].dst * s->dim[2].dst > cg_target_l2_bytes(t);
}

/* The spec of a layer and pass, or NOT_SUPPORTED saying why the sliding kernel does not take it. */
static convgen_status choose(const cg_problem *p, convgen_pass pass, const cg_target *t, slide_spec *s)
{
    memset(s, 0, sizeof *s);
    /* two stages in a block's shared memory: 56 KiB each, less on targets of 99 KiB a block
     * (sm_86, sm_89, sm_120), which asked for up to 113 KiB before */
    int64_t half = cg_target_shared_per_block(t) / 2 - CG_SHARED_RESERVED_PER_BLOCK;
    s->stage_bytes = half < STAGE_BYTES ? half : STAGE_BYTES;
    if (pass != CONVGEN_FPROP)
        return refuse("its sliding kernel is fprop only");
    if (p->c > 4)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: c = %lld input channels; it takes at most 4 "
                       "(wider layers are direct's GEMM)", (long long)p->c);
    int of[3];
    set_dims(p, s->dim, of);
    for (int v = 0; v < 3; ++v)
        if (s->dim[v].taps > MAX_TAPS)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: kernel[%d] = %lld taps; it slides at most %d",
                           of[v], (long long)s->dim[v].taps, MAX_TAPS);
    s->c = p->c;
    s->k = p->k;
    s->reverse = p->flip;
    choose_blocking(s);
    s->tiles_x = (s->dim[2].dst + 31) / 32;
    s->tiles_z = (s->dim[0].dst + s->p - 1) / s->p;
    if (s->ze > MAX_COLUMN || s->xe > 32 * 32)
        return refuse("a thread's column of x (16 registers) or its copies of a row (32) are too few for the "
                      "kernel's taps at its stride and dilation");
    if (!stage_fits(1, s))
        return refuse("one input channel's window and weights do not fit a stage of shared memory");
    s->ci = (int)cg_largest_divisor(s->c, stage_fits, s);
    s->stages = (int)(s->c / s->ci);
    if (s->stages == 1)
        choose_row_loop(p, s);
    if (s->tiles_y > 65535 || p->n * s->k_chunks * s->tiles_z > 65535)
        return refuse("the layer's tiles exceed grid.y's or grid.z's 65535");
    /* indices within one image are 32-bit, and so are the windows' offsets past its edges */
    int64_t x_image = s->c * s->dim[0].src * s->dim[1].src * s->dim[2].src;
    int64_t y_image = s->k * s->dim[0].dst * s->dim[1].dst * s->dim[2].dst;
    if (x_image >= INT32_MAX / 2 || y_image >= INT32_MAX / 2 || p->k * p->c * cg_problem_kernel_pixels(p) >= INT32_MAX)
        return refuse("an image of the layer exceeds its 32-bit indices");
    choose_trickle(s, t);
    s->streams = streams(p, s, t);
    return CONVGEN_SUCCESS;
}

convgen_status cg_slide_applicable(const cg_problem *p, convgen_pass pass)
{
    slide_spec s;
    return choose(p, pass, NULL, &s); /* the generator's default target (an H100) */
}

/* ---- the template context ---- */

static tmpl_value *dim_value(const slide_dim *d)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_int(v, "src", d->src);
    tmpl_set_int(v, "dst", d->dst);
    tmpl_set_int(v, "taps", d->taps);
    tmpl_set_int(v, "step", d->step);
    tmpl_set_int(v, "dil", d->dil);
    tmpl_set_int(v, "off", d->off);
    return v;
}

/* blockIdx.z = (image, channel chunk, depth tile), the depth tile fastest: blocks that run
 * together share their weights and neighbouring windows. */
static tmpl_value *block_digits(const cg_problem *p, const slide_spec *s)
{
    const int64_t sizes[] = {s->k_chunks, s->tiles_z};
    const char *const names[] = {"kc", "zt"};
    return cg_value_digits("bz", p->n * s->k_chunks * s->tiles_z - 1, 2, sizes, names, "n");
}

static tmpl_value *header_lines(const cg_problem *p, const slide_spec *s, const cg_kernel *k)
{
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution, fprop by sliding each thread's outputs over the taps (few input channels)",
                  CG_GENERATOR_VERSION);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "y[n][k][o] = sum over c < %lld and taps t of x[n][c][o * stride + t * dilation - pad] * w[k][c][t%s], "
                  "view (depth, rows, columns) = %s", (long long)s->c, s->reverse ? " reversed" : "",
                  p->rank == 3 ? "the layer's" : p->rank == 2 ? "(rows, 1, columns)" : "(1, 1, columns)");
    cg_value_line(h, "thread: %d channel(s) x %d row(s) x %d depth position(s) of y; block: 32 lanes along x, %d warp(s) "
                  "over channels, %d along y, %d row group(s) in turn", s->g, s->yt, s->p, s->wk, s->wy, s->yl);
    cg_value_line(h, "window of x per input channel: %lld x %lld x %lld floats (depth, rows, columns); %d channel(s) a stage, "
                  "%d stage(s)%s", (long long)s->ze, (long long)s->ye, (long long)s->xe, s->ci, s->stages,
                  s->stages > 1 ? ", two in flight" : "");
    cg_value_line(h, "launch: grid (%u, %u, %u), block (%u, 1, 1), %u bytes of dynamic shared memory", k->grid[0], k->grid[1],
                  k->grid[2], k->block[0], k->shared_bytes);
    cg_value_line(h, "workspace: 0 bytes");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/direct_slide.cu or generator/direct/direct_slide.c instead.");
    return h;
}

static tmpl_value *context(const cg_problem *p, const slide_spec *s, const cg_target *t, const cg_kernel *k)
{
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, s, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", s->threads);
    tmpl_set_int(ctx, "min_blocks", blocks_per_sm(s, t, k->shared_bytes));
    tmpl_set_bool(ctx, "trickle", s->trickle);
    tmpl_set_bool(ctx, "streams", s->streams);
    tmpl_set_int(ctx, "values", (int64_t)s->g * s->yt * s->p);
    /* the row group's stores spread over the products' iterations (input channel, tap row) */
    int64_t iterations = s->c * extent(&s->dim[1], s->yt);
    tmpl_set_int(ctx, "iterations", iterations);
    tmpl_set_int(ctx, "drain_channels", (s->g + iterations - 1) / iterations);
    tmpl_set_int(ctx, "warps", s->threads / 32);
    tmpl_set_int(ctx, "g", s->g);
    tmpl_set_bool(ctx, "g4", s->g % 4 == 0);
    tmpl_set_int(ctx, "yt", s->yt);
    tmpl_set_int(ctx, "p", s->p);
    tmpl_set_int(ctx, "wk", s->wk);
    tmpl_set_int(ctx, "wy", s->wy);
    tmpl_set_int(ctx, "yl", s->yl);
    tmpl_set_int(ctx, "ci", s->ci);
    tmpl_set_int(ctx, "stages", s->stages);
    tmpl_set_int(ctx, "c_size", s->c);
    tmpl_set_int(ctx, "k_size", s->k);
    tmpl_set_int(ctx, "kb", (int64_t)s->g * s->wk);
    tmpl_set_int(ctx, "cbp", s->cbp);
    tmpl_set_int(ctx, "ze", s->ze);
    tmpl_set_int(ctx, "ye", s->ye);
    tmpl_set_int(ctx, "xe", s->xe);
    tmpl_set_int(ctx, "x_copies", (s->xe + 31) / 32);
    tmpl_set_int(ctx, "y_copies", (s->ye + s->threads / 32 - 1) / (s->threads / 32));
    int64_t taps = view_taps(s);
    tmpl_set_int(ctx, "taps", taps);
    tmpl_set_int(ctx, "window_floats", window_floats(s, s->ci));
    tmpl_set_int(ctx, "stage_floats", stage_floats(s, s->ci));
    int64_t weight_floats = s->ci * taps * s->cbp, weight_copies = (weight_floats + s->threads - 1) / s->threads;
    tmpl_set_int(ctx, "weight_floats", weight_floats);
    tmpl_set_int(ctx, "weight_copies", weight_copies);
    tmpl_set_int(ctx, "x_plane", s->dim[1].src * s->dim[2].src);
    tmpl_set_int(ctx, "x_volume", s->dim[0].src * s->dim[1].src * s->dim[2].src);
    tmpl_set_int(ctx, "y_plane", s->dim[1].dst * s->dim[2].dst);
    tmpl_set_int(ctx, "y_volume", s->dim[0].dst * s->dim[1].dst * s->dim[2].dst);
    tmpl_set_bool(ctx, "reverse", s->reverse);
    tmpl_set_int(ctx, "rows", extent(&s->dim[1], s->yt)); /* tap rows a thread's YT rows read */
    /* a loop over the tap columns too where unrolling them loads over ~100 values at once */
    tmpl_set_bool(ctx, "unroll_columns", s->dim[2].taps * s->ze <= 100);
    tmpl_map_set(ctx, "z", dim_value(&s->dim[0]));
    tmpl_map_set(ctx, "y", dim_value(&s->dim[1]));
    tmpl_map_set(ctx, "x", dim_value(&s->dim[2]));
    tmpl_map_set(ctx, "block_digits", block_digits(p, s));
    /* a weight copy's index e in a stage = (channel c, tap t, output channel kl), kl fastest */
    const int64_t wsizes[] = {taps, s->cbp};
    const char *const wnames[] = {"t", "kl"};
    tmpl_map_set(ctx, "weight_digits", cg_value_digits("e", s->threads * weight_copies - 1, 2, wsizes, wnames, "c"));
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, true));
    return ctx;
}

convgen_status cg_slide_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, cg_generated *out)
{
    slide_spec s;
    convgen_status fits = choose(p, pass, t, &s);
    if (fits != CONVGEN_SUCCESS)
        return fits;
    cg_kernel *k = &out->kernels[0];
    snprintf(k->name, sizeof k->name, "convgen_direct_fprop_slide");
    k->what = "the convolution by sliding outputs over windows of x (few input channels)";
    k->grid[0] = (unsigned)s.tiles_x;
    k->grid[1] = (unsigned)s.tiles_y;
    k->grid[2] = (unsigned)(p->n * s.k_chunks * s.tiles_z);
    k->block[0] = (unsigned)s.threads;
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)shared_bytes(&s);
    k->epilogue = p->epilogue != 0;
    out->kernel_count = 1;
    tmpl_value *ctx = context(p, &s, t, k);
    return cg_render_kernel("direct/direct_slide.cu", ctx, &k->source);
}
