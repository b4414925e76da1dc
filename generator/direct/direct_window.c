/* direct-window: bprop for layers with few input channels (C <= 4: an RGB stem), by sliding
 * windows. A planner of its own, beside direct's implicit GEMM, so that AUTO weighs the two.
 *
 * As a GEMM, such a bprop has C columns: most of every tile's FMAs fall past the edge, and each
 * gathered element of dy feeds at most four of them, so the gathers' index arithmetic sets the
 * pace (G1, the ResNet stem's bprop: 2.4 ms against cuDNN's 0.53). Here a block instead stages
 * a window of dy (every output channel in chunks) in shared memory once, and each thread keeps
 * PX neighbouring input pixels of one row for all C channels in registers, sliding along the
 * window: per output channel and tap row it reads PX + J - 1 values of dy and J weights (one
 * float4 of C channels each, the same for the whole block) for PX * J * C FMAs.
 *
 * A strided layer runs per stride phase, as the phased GEMM does (direct.c): the input pixels
 * i = r + stride*u with (r + pad) % stride = q are reached only by the taps f = q + stride*j,
 * from o = u + off - j, off = (r + pad - q) / stride. Phases are on blockIdx.z with the images;
 * a phase's tap count is a template argument of the products, so no FMA is spent on a tap
 * that misses the stride grid (a dimension's phases have J or J - 1 taps: two classes each).
 *
 * A 3-D layer (stride 1 along depth) runs a block per PZ input slices iz0..: dx's slice iz is the
 * sum, over the depth taps fz, of the 2-D bprop of dy's slice iz + pad - fz with the kernel's slice
 * fz, so dy's slices are more stages of the same loop (only those inside dy), each meeting up to
 * PZ of the block's slices (choose_depth_block).
 *
 * Staging: the window's shared-memory image is the same for every chunk of output channels
 * but for the channel offset, so each thread works out once where its 4-byte cp.async copies
 * read (offsets and an in-bounds mask in registers), and two stages overlap the next chunk's
 * copies with this chunk's products. Lanes of a quarter warp take 8 neighbouring rows (the row
 * pitch is 4 floats past a multiple of 8): their float4 reads of dy fall in distinct banks. */
#include <stdio.h>
#include <string.h>

#include "direct_slide.h"
#include "generate.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum {
    MAX_THREADS = 256,
    MAX_TAPS = 16,           /* taps a phase has per dimension (unrolled: PX + J - 1 registers) */
    STATIC_SHARED = 48 * 1024,
    STAGE_FLOATS = STATIC_SHARED / 8, /* a stage of dy's window and weights: two in static memory */
    DEPTH_STAGE_FLOATS = 2 * STAGE_FLOATS, /* 3-D depth blocks: two in dynamic memory, two blocks an SM */
    MAX_STAGE_CHANNELS = 8,  /* output channels a stage holds */
    MAX_COPIES = 16,         /* a thread's copies of one channel's window (offsets in registers) */
    MAX_WEIGHT_COPIES = 4,   /* and of its weights */
    MAX_DEPTH_ACC = 32,      /* 3-D: accumulators C x PZ x PX a thread holds over PZ slices of dx */
    MAX_DEPTH_COPY_FMAS = 4096, /* 3-D: FMAs of all the products' copies per dz (code size) */
};

/* One spatial dimension as the kernel sees it; a rank-1 layer's height is a unit dimension. */
typedef struct window_dim {
    int64_t in, out, kernel, stride, pad;
    int64_t pixels; /* a phase's input pixels, at most: ceil(in / stride) */
    int taps;       /* a phase's taps, at most: ceil(kernel / stride) */
    int full;       /* phases q < full have `taps` taps, the others one fewer */
} window_dim;

typedef struct window_spec {
    window_dim dim[2]; /* y, x */
    window_dim depth;  /* a 3-D layer's (stride 1); a unit dimension otherwise */
    bool volume;
    int phases;
    int px;            /* neighbouring pixels per thread along x */
    int lx, ly, lanes; /* threads along x and y; `lanes` rows share a quarter warp's 8 lanes */
    int threads;
    int rows, cols;    /* the staged window of one output channel: rows x cols (pitch) */
    int kc, chunks;    /* output channels per stage, stages over k */
    int pz, wz;        /* 3-D: dx's slices a thread holds, the kernel's depth slices a stage holds */
    bool packed;       /* one input channel: a tap row's weights packed along x (see tap_row) */
    int64_t tiles_z;   /* 3-D: blocks along depth, pz slices each */
    int64_t tiles_x, tiles_y;
} window_spec;

static int pow2_at_least(int64_t x, int cap)
{
    int p = 1;
    while (p < x && p < cap)
        p *= 2;
    return p;
}

static void set_dim(window_dim *d, const cg_problem *p, int src)
{
    *d = (window_dim){.in = 1, .out = 1, .kernel = 1, .stride = 1, .pad = 0};
    if (src >= 0)
        *d = (window_dim){.in = p->in[src], .out = p->out[src], .kernel = p->kernel[src], .stride = p->stride[src],
                          .pad = p->pad_before[src]};
    d->pixels = (d->in + d->stride - 1) / d->stride;
    d->taps = (int)((d->kernel + d->stride - 1) / d->stride);
    d->full = (int)(d->kernel - d->stride * (d->taps - 1)); /* in [1, stride] */
}

static int copies_of(int64_t floats, int threads) { return (int)((floats + threads - 1) / threads); }

/* One output channel's window in shared memory: rows x cols rounded up to whole rounds of the
 * block's copies, so that every thread makes all its copies unconditionally (those past the
 * window write zeros into the padding). Behind a branch each copy had its 64-bit address
 * worked out again: ~15 instructions a 4-byte copy, as many as a stage's FMAs took (Z1). */
static int64_t window_pitch(const window_spec *s)
{
    return (int64_t)copies_of((int64_t)s->rows * s->cols, s->threads) * s->threads;
}

/* The weights of one tap row in shared memory: a float4 of the input channels per tap; with one
 * input channel the row's taps themselves, padded to whole float4s, so that a float4 read
 * carries 4 used weights rather than 1 (C = 1: Z1's bprop). */
static int64_t tap_row(const window_spec *s)
{
    return s->packed ? (s->dim[1].taps + 3) / 4 * 4 : 4ll * s->dim[1].taps;
}

/* One output channel's weights for one depth slice of the kernel. */
static int64_t slice_weights(const window_spec *s) { return s->dim[0].taps * tap_row(s); }

static int64_t stage_floats(const window_spec *s)
{
    return window_pitch(s) + s->wz * slice_weights(s);
}

/* Whether a stage of kc output channels fits STAGE_FLOATS and each thread's copies fit its
 * registers. */
static bool stage_fits(const window_spec *s, int kc)
{
    return kc * stage_floats(s) <= (s->pz > 1 ? DEPTH_STAGE_FLOATS : STAGE_FLOATS) &&
           copies_of((int64_t)s->rows * s->cols, s->threads) <= MAX_COPIES &&
           copies_of(slice_weights(s), s->threads) <= MAX_WEIGHT_COPIES;
}

static bool channels_fit(int64_t kc, void *spec)
{
    const window_spec *s = spec;
    /* holding several dx slices, half as many: a stage's products are unrolled over its channels,
     * and 6 of them beside 24 accumulators spilled (C = 3, 9^3) */
    return kc <= (s->pz > 1 ? MAX_STAGE_CHANNELS / 2 : MAX_STAGE_CHANNELS) && stage_fits(s, (int)kc);
}

/* A 3-D layer without stride phases has each thread hold PZ slices of dx (up to 32 accumulators
 * with its C x PX), so that each staged slice of dy serves PZ + taps - 1 of them instead of one
 * (Z1's bprop: 4 stages a dx slice before, 7 / 4 with PZ = 4) and its loaded rows feed PZ times
 * the FMAs; a stage then holds every depth slice of the kernel, and twice the floats (dynamic
 * shared memory) for more output channels between barriers. Strided layers keep PZ = 1 (their
 * phase classes beside the stage loop already take 228 registers). */
static void choose_depth_block(const cg_problem *p, window_spec *s)
{
    s->pz = s->wz = 1;
    s->tiles_z = s->depth.in;
    if (!s->volume || s->phases > 1)
        return;
    for (int pz = 8; pz > 1; pz /= 2) {
        window_spec t = *s;
        t.pz = pz;
        t.wz = (int)s->depth.kernel;
        t.kc = (int)cg_largest_divisor(p->k, channels_fit, &t);
        if (p->c * pz * s->px <= MAX_DEPTH_ACC && pz <= s->depth.in && stage_fits(&t, t.kc)) {
            *s = t;
            s->tiles_z = (s->depth.in + pz - 1) / pz;
            return;
        }
    }
}

/* A thread holding PZ > 1 slices of dx gets one copy of the products per stage dz (PZ + taps - 1
 * of them), where which slices a depth tap reaches is a constant: behind a runtime test of each
 * slice, ptxas sank every weight load into its branch, right before its FMAs, and Z1's bprop
 * waited on shared memory. Taken where the copies' FMAs (PZ x depth taps x y taps x x taps x PX
 * x C, the output channels a loop) stay under MAX_DEPTH_COPY_FMAS; 0 otherwise. */
static int depth_variants(const cg_problem *p, const window_spec *s)
{
    if (s->pz == 1)
        return 0;
    int64_t fmas = s->pz * s->depth.kernel * s->dim[0].taps * s->dim[1].taps * s->px * p->c;
    return fmas <= MAX_DEPTH_COPY_FMAS ? (int)(s->pz + s->depth.kernel - 1) : 0;
}

/* The spec of a layer and pass, or CONVGEN_ERROR_NOT_SUPPORTED with a message saying why the
 * window kernel does not take it. */
static convgen_status choose(const cg_problem *p, convgen_pass pass, window_spec *s)
{
    memset(s, 0, sizeof *s);
    if (pass != CONVGEN_BPROP)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: fprop and bprop only (accgrad is direct's)");
    s->pz = s->wz = 1;
    s->packed = p->c == 1;
    s->volume = p->rank == 3;
    set_dim(&s->depth, p, s->volume ? 0 : -1);
    if (s->depth.stride != 1)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: stride[0] = %lld along depth; its 3-D windows take "
                       "stride 1 there", (long long)s->depth.stride);
    if (p->c > 4)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: c = %lld input channels; it takes at most 4 "
                       "(wider layers are direct's GEMM)", (long long)p->c);
    for (int d = 0; d < p->rank; ++d)
        if (p->dilation[d] != 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: dilation[%d] = %lld; it takes none", d,
                           (long long)p->dilation[d]);
    int lead = 2 - p->rank; /* rank 3: y and x are dimensions 1 and 2, lead -1 */
    int64_t phases = 1;
    for (int d = 0; d < 2; ++d) {
        set_dim(&s->dim[d], p, d - lead);
        if (s->dim[d].stride > 65535)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: stride[%d] = %lld beyond 65535", d - lead,
                           (long long)s->dim[d].stride);
        if (s->dim[d].taps > MAX_TAPS)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: kernel[%d] = %lld at stride %lld is %d taps a "
                           "stride phase; it takes at most %d", d - lead, (long long)s->dim[d].kernel,
                           (long long)s->dim[d].stride, s->dim[d].taps, MAX_TAPS);
        phases *= s->dim[d].stride; /* below 2^32: each stride is */
    }
    if (phases > 65535 || p->n * s->depth.in > 65535 / phases) /* grid.z holds them all */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: n = %lld images times %lld stride phases%s exceed "
                       "grid.z's 65535", (long long)p->n, (long long)phases, s->volume ? " times the input slices" : "");
    s->phases = (int)phases;
    const window_dim *y = &s->dim[0], *x = &s->dim[1];
    s->px = x->pixels >= 64 ? 8 : 4;
    s->lx = pow2_at_least((x->pixels + s->px - 1) / s->px, 32);
    s->ly = pow2_at_least(y->pixels, 64);
    if (s->ly > MAX_THREADS / s->lx)
        s->ly = MAX_THREADS / s->lx;
    s->lanes = s->ly < 8 ? s->ly : 8;
    s->threads = s->lx * s->ly;
    s->rows = s->ly + y->taps - 1;
    int cols = s->lx * s->px + x->taps - 1;
    s->cols = (cols + 7) / 8 * 8 + 4; /* 4 past a multiple of 8: see the top */
    s->kc = (int)cg_largest_divisor(p->k, channels_fit, s); /* the output channels a stage holds */
    if (!stage_fits(s, s->kc))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: one output channel's window of dy (%d x %d floats) "
                       "and taps do not fit a stage's shared memory and registers", s->rows, s->cols);
    choose_depth_block(p, s);
    s->chunks = (int)(p->k / s->kc);
    s->tiles_x = (x->pixels + s->lx * s->px - 1) / (s->lx * s->px);
    s->tiles_y = (y->pixels + s->ly - 1) / s->ly;
    /* grid.y holds the row tiles and grid.z the images and phases; the copies' offsets within
     * an image's stage are 32-bit, and so is every index the kernel splits */
    int64_t out_volume = s->depth.out * y->out * x->out, in_volume = s->depth.in * y->in * x->in;
    if (s->tiles_y <= 65535 && s->kc * out_volume < INT32_MAX && p->c * in_volume < INT32_MAX &&
        s->tiles_x * s->lx * s->px < INT32_MAX)
        return CONVGEN_SUCCESS;
    return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct-window: the layer's planes%s exceed its 32-bit indices or its "
                   "65535 row tiles", s->volume ? " and volumes" : "");
}

/* The fprops are the sliding kernel's (direct_slide.c); the bprops the window kernel's. */
static bool slides(convgen_pass pass) { return pass == CONVGEN_FPROP; }

static convgen_status window_applicable(const cg_problem *p, convgen_pass pass)
{
    if (slides(pass))
        return cg_slide_applicable(p, pass);
    window_spec s;
    return choose(p, pass, &s);
}

/* ---- the template context ---- */

static tmpl_value *dim_value(const window_dim *d, bool flip, int i)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_int(v, "i", i);
    tmpl_set_int(v, "in", d->in);
    tmpl_set_int(v, "out", d->out);
    tmpl_set_int(v, "kernel", d->kernel);
    tmpl_set_int(v, "stride", d->stride);
    tmpl_set_int(v, "taps", d->taps);
    tmpl_set_int(v, "full", d->full);
    tmpl_set_bool(v, "flip", flip);
    /* phase q starts at the input pixel r = (q - pad) mod stride = (q + shift) % stride and
     * reads o = u + off - j, off = ceil(pad / stride) where q + shift stays below the stride,
     * one less where it wraps (direct_bprop_phased.cuh derives the same) */
    tmpl_set_int(v, "shift", (d->stride - d->pad % d->stride) % d->stride);
    tmpl_set_int(v, "off_base", (d->pad + d->stride - 1) / d->stride);
    return v;
}

/* blockIdx.z = (q0, q1, n): the phase along y and x, then the image fastest, so that the blocks
 * that run together share a phase: the same products' code (each phase class is a copy of
 * it) and the same weights. */
static tmpl_value *phase_digits(const cg_problem *p, const window_spec *s)
{
    const int64_t sizes[] = {s->dim[1].stride, p->n, s->tiles_z};
    const char *const names[] = {"q1", "n", "iz"};
    /* a 3-D layer's input slice iz fastest: the blocks that run together share a phase */
    return cg_value_digits("z", p->n * s->phases * s->tiles_z - 1, s->volume ? 3 : 2, sizes, names, "q0");
}

/* A copy's index e within one output channel's window = (row, col), col fastest. */
static tmpl_value *stage_digits(const window_spec *s, int64_t max)
{
    const int64_t sizes[] = {s->cols};
    const char *const names[] = {"col"};
    return cg_value_digits("e", max, 1, sizes, names, "row");
}

/* A weight copy's index e within one output channel's = (jy, jx, c4), c4 fastest (4 input
 * channels, the last 4 - C of them zeros); packed, (jy, jx) over tap_row taps (zeros past the
 * last). */
static tmpl_value *weight_digits(const window_spec *s, int64_t max)
{
    const int64_t sizes[] = {s->packed ? tap_row(s) : s->dim[1].taps, 4};
    const char *const names[] = {"jx", "c4"};
    return cg_value_digits("e", max, s->packed ? 1 : 2, sizes, names, "jy");
}

/* The phase classes: (taps along y, taps along x) pairs some phase has. */
static tmpl_value *classes(const window_spec *s)
{
    tmpl_value *list = tmpl_list();
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 2; ++b) {
            const window_dim *y = &s->dim[0], *x = &s->dim[1];
            if ((a && y->full == y->stride) || (b && x->full == x->stride))
                continue; /* every phase of that dimension has all the taps */
            tmpl_value *c = tmpl_map();
            tmpl_set_int(c, "jy", y->taps - a);
            tmpl_set_int(c, "jx", x->taps - b);
            tmpl_set_bool(c, "y_full", !a);
            tmpl_set_bool(c, "x_full", !b);
            tmpl_list_push(list, c);
        }
    return list;
}

static tmpl_value *header_lines(const cg_problem *p, const window_spec *s, const cg_kernel *k)
{
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution, bprop by sliding windows (few input channels)",
                  CG_GENERATOR_VERSION);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "stride phases: %d (y %lld x %lld), at most %d x %d taps each; blockIdx.z = (phase, image%s), %s fastest",
                  s->phases, (long long)s->dim[0].stride, (long long)s->dim[1].stride, s->dim[0].taps,
                  s->dim[1].taps, s->volume ? ", input slice" : "", s->volume ? "slices" : "images");
    cg_value_line(h, "tiles: block %d x %d input pixels of a phase (%d x %d threads, %d pixels each along x), %lld input channel(s)",
                  s->ly, s->lx * s->px, s->ly, s->lx, s->px, (long long)p->c);
    if (s->volume)
        cg_value_line(h, "depth: blocks of %d input slice(s) (%lld blocks for %lld), the %lld slices of dy they meet as more "
                      "stages with %d depth slice(s) of the kernel (stride 1, pad %lld)", s->pz, (long long)s->tiles_z,
                      (long long)s->depth.in, (long long)(s->pz + s->depth.kernel - 1), s->wz, (long long)s->depth.pad);
    cg_value_line(h, "stages: dy's window %d x %d floats (pitch) and the weights, %d output channel(s) a stage, %s%lld stage(s)%s, two in flight",
                  s->rows, s->cols, s->kc, s->volume ? "at most " : "", (long long)(s->chunks * (s->pz + s->depth.kernel - 1)),
                  s->volume ? " (a block skips dy's slices past its edges)" : "");
    cg_value_line(h, "launch: grid (%u, %u, %u), block (%u, 1, 1), %lld bytes of %s shared memory", k->grid[0],
                  k->grid[1], k->grid[2], k->block[0], (long long)(2 * 4 * s->kc * stage_floats(s)),
                  s->pz > 1 ? "dynamic" : "static");
    cg_value_line(h, "workspace: 0 bytes");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/direct_window.cu or generator/direct/direct_window.c instead.");
    return h;
}

static tmpl_value *context(const cg_problem *p, const window_spec *s, const cg_kernel *k)
{
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, s, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", s->threads);
    /* 128 registers a thread at most, for two blocks of 256 threads per multiprocessor: allowed
     * more, ptxas takes ~200 (G1) and leaves one block of eight warps to hide the latencies.
     * Blocks under a warp count as a warp: 32 blocks of 16 threads would cap them at 64, and
     * they spill there (test_compile). A strided 3-D layer's loop over depth taps and stages
     * beside its phase classes needs more than 128 (220 bytes spilled at 128): one block then. */
    tmpl_set_int(ctx, "min_blocks", s->volume && s->phases > 1 ? 1 : 512 / (s->threads > 32 ? s->threads : 32));
    tmpl_set_int(ctx, "px", s->px);
    tmpl_set_int(ctx, "lx", s->lx);
    tmpl_set_int(ctx, "lanes", s->lanes);
    tmpl_set_int(ctx, "lanes_log2", cg_log2_up(s->lanes));
    tmpl_set_int(ctx, "lanes_lx_log2", cg_log2_up(s->lanes * s->lx));
    tmpl_set_int(ctx, "ly", s->ly);
    tmpl_set_int(ctx, "rows", s->rows);
    tmpl_set_int(ctx, "cols", s->cols);
    tmpl_set_int(ctx, "kc", s->kc);
    tmpl_set_int(ctx, "chunks", s->chunks);
    tmpl_set_int(ctx, "n_size", p->n);
    tmpl_set_int(ctx, "c_size", p->c);
    tmpl_set_int(ctx, "k_size", p->k);
    int64_t in_plane = s->dim[0].in * s->dim[1].in, out_plane = s->dim[0].out * s->dim[1].out,
            kernel_plane = s->dim[0].kernel * s->dim[1].kernel;
    tmpl_set_int(ctx, "in_plane", in_plane);
    tmpl_set_int(ctx, "out_plane", out_plane);
    tmpl_set_int(ctx, "kernel_plane", kernel_plane);
    /* an output channel's dy, an input channel's dx and kernel (volumes for a 3-D layer), and an
     * output channel's weights */
    tmpl_set_int(ctx, "dy_k_stride", s->depth.out * out_plane);
    tmpl_set_int(ctx, "dx_c_stride", s->depth.in * in_plane);
    tmpl_set_int(ctx, "w_c_stride", s->depth.kernel * kernel_plane);
    tmpl_set_int(ctx, "w_k_stride", p->c * s->depth.kernel * kernel_plane);
    tmpl_set_bool(ctx, "volume", s->volume);
    tmpl_set_int(ctx, "depth_out", s->depth.out);
    tmpl_set_int(ctx, "depth_pad", s->depth.pad);
    tmpl_set_int(ctx, "depth_kernel", s->depth.kernel);
    tmpl_set_bool(ctx, "depth_flip", p->flip);
    tmpl_set_int(ctx, "depth_in", s->depth.in);
    tmpl_set_int(ctx, "pz", s->pz);
    tmpl_set_bool(ctx, "dynamic", s->pz > 1);
    tmpl_set_int(ctx, "wz", s->wz);
    /* from one depth slice of the kernel to the next a stage holds: backwards for a convolution */
    tmpl_set_int(ctx, "slice_stride", (p->flip ? -1 : 1) * kernel_plane);
    /* one output channel's window and weights (floats); a stage holds kc of each */
    int64_t window = (int64_t)s->rows * s->cols, weights = slice_weights(s);
    tmpl_set_int(ctx, "window", window);
    tmpl_set_int(ctx, "window_pitch", window_pitch(s));
    tmpl_set_bool(ctx, "packed", s->packed);
    tmpl_set_int(ctx, "depth_variants", depth_variants(p, s));
    tmpl_set_int(ctx, "tap_row", tap_row(s));
    tmpl_set_int(ctx, "weights", weights);
    int copies = copies_of(window, s->threads), wcopies = copies_of(weights, s->threads);
    tmpl_set_int(ctx, "copies", copies);
    tmpl_set_int(ctx, "wcopies", wcopies);
    /* d[]: the PX + J - 1 values of dy a thread slides over, read as float4 */
    tmpl_set_int(ctx, "d4", (s->px + s->dim[1].taps - 1 + 3) / 4);
    tmpl_value *dims = tmpl_list();
    for (int d = 0; d < 2; ++d)
        tmpl_list_push(dims, dim_value(&s->dim[d], p->flip, d));
    tmpl_map_set(ctx, "dims", dims);
    tmpl_map_set(ctx, "y", dim_value(&s->dim[0], p->flip, 0));
    tmpl_map_set(ctx, "x", dim_value(&s->dim[1], p->flip, 1));
    tmpl_map_set(ctx, "phase_digits", phase_digits(p, s));
    tmpl_map_set(ctx, "stage_digits", stage_digits(s, (int64_t)copies * s->threads - 1));
    tmpl_map_set(ctx, "weight_digits", weight_digits(s, (int64_t)wcopies * s->threads - 1));
    tmpl_map_set(ctx, "classes", classes(s));
    return ctx;
}

static convgen_status window_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                      const cg_tuning *tune, cg_generated *out)
{
    (void)tune; /* nothing to fix */
    if (slides(pass))
        return cg_slide_generate(p, pass, t, out);
    window_spec s;
    convgen_status fits = choose(p, pass, &s);
    if (fits != CONVGEN_SUCCESS)
        return fits;
    cg_kernel *k = &out->kernels[0];
    snprintf(k->name, sizeof k->name, "convgen_direct_bprop_window");
    k->what = "dx by sliding windows of dy over the taps (few input channels)";
    k->grid[0] = (unsigned)s.tiles_x;
    k->grid[1] = (unsigned)s.tiles_y;
    k->grid[2] = (unsigned)(p->n * s.phases * s.tiles_z);
    k->block[0] = (unsigned)s.threads;
    k->block[1] = k->block[2] = 1;
    /* depth blocks' stages hold more channels, past static memory's 48 KiB (choose_depth_block) */
    k->shared_bytes = s.pz > 1 ? (unsigned)(2 * 4 * s.kc * stage_floats(&s)) : 0;
    out->kernel_count = 1;
    tmpl_value *ctx = context(p, &s, k);
    return cg_render_kernel("direct/direct_window.cu", ctx, &k->source);
}

/* Measured: the window bprop at about 30% of the FMA rate (G1 bprop 0.37 ms, L1 bprop 3.5 ms on
 * the H100), the sliding fprop at 41-52% (Z1 33.6, L1 27.8, G1 26.2 TFLOP/s on the H200). */
static double window_fma_efficiency(const cg_generated *g)
{
    return g->pass == CONVGEN_FPROP ? 0.45 : 0.3;
}

const cg_planner cg_direct_window_planner = {
    .algo = CONVGEN_ALGO_DIRECT_WINDOW,
    .name = "direct-window",
    .applicable = window_applicable,
    .generate = window_generate,
    .fma_efficiency = window_fma_efficiency,
    .formerly = "direct", /* direct chose its bprop silently before it was registered */
    .formerly_passes = 1u << CONVGEN_BPROP,
};
