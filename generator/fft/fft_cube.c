/* Rank 3 R2C and C2R of small volumes in one pass (templates/fft/fft_cube.cu): where a volume's
 * buffers fit a block's shared memory (n <= 28 on an H100: a 16^3 spectrum is 18 KiB), its rows, y columns and z columns
 * are transformed one after another on chip, so only the signal window and the spectrum cross
 * global memory, once each. fft_volume.c's two passes (the planes, then the depth) move the
 * spectrum twice more: at n = 16 they ran at 1.37-1.49x cuFFT, the one pass at 3.1-3.3x
 * (bench/NOTES.md, "The one-pass 3-D FFT").
 *
 * Pruned as the two passes are (ZNNi section III): the forward transforms only the window's
 * rows (two real rows as one complex transform), only the window planes' y columns, which load
 * only the window's rows, and z columns that load only the window's planes; the inverse keeps
 * only the window's planes from its z columns, the window's rows from its y columns, the
 * window's columns from its rows. The spectrum's planes are in either layout, the y axis in
 * natural or the lane-stage plans' digit-reversed order (fft_plan_output_position), as the two
 * passes leave them: the y columns place their bins in that order in shared memory, so the z
 * columns' threads run in the spectrum's own order and every warp's store is contiguous. */
#include <stdio.h>
#include <string.h>

#include "fft_kernel.h"
#include "fft_regs.h"
#include "fft_warp.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum {
    /* One pass where a whole volume's buffers (its planes' half spectra and its rows) take at
     * most this much shared memory, and no more than the target allows a block: n = 16 takes
     * 36 KiB, 21 75, 27 164, 28 183 (the last that fits); 30 would need 229, past the H100's 227
     * a block. Measured on the H100 against the two passes (fft-tiled's tiles,
     * bench/NOTES.md): Z7's n = 21 1.46 -> 0.89 ms, Z9's n = 27 1.64 -> 1.32. */
    CUBE_MAX_SHARED = 200 * 1024,
    /* Volumes per block up to about this many threads (a volume takes n (n / 2 + 1) in its z
     * phase, the largest): 160 at n = 16, several small volumes a block below. */
    CUBE_THREADS = 256,
    /* The launch bounds leave a thread at least this many registers: a 16-point column's 32
     * floats and the indexing; and for longer columns their 2n floats and CUBE_INDEX_REGISTERS.
     * Whole volumes of those run few blocks by their shared memory anyway (n = 21: 3 blocks of
     * 256 threads, 85 registers; 61-72 used), but a small window's may fit more: a 20x19x21
     * window of n = 28 took two blocks of 448 threads, 72 registers, and spilled 16 bytes (NVRTC
     * 13.0). test_fft_batched compiles every size with no local memory. */
    CUBE_REGISTERS = 64,
    CUBE_INDEX_REGISTERS = 24,
};

/* The registers the launch bounds leave a thread of columns of n points (see CUBE_REGISTERS). */
static int cube_registers(int n) { return 2 * n + CUBE_INDEX_REGISTERS > CUBE_REGISTERS ? 2 * n + CUBE_INDEX_REGISTERS : CUBE_REGISTERS; }

typedef struct cube_shape {
    int volumes, threads, min_blocks;
    int hs, pp, sp;      /* the row spectra's pitch (odd), the planes' pitch (float2s), sig's rows' (floats, odd) */
    int64_t rows_elems;  /* float2s of the planes of every volume */
    int64_t shared;      /* bytes */
} cube_shape;

/* The pitch of a plane of row spectra in shared memory, in float2s: n rows of hs, and as many
 * more as put the next plane's first column `half` banks on: a warp's y columns are a plane's
 * half bins, then the next plane's, so they then start on the banks after them (16 float2 banks). */
static int shared_plane_pitch(int n, int half, int hs) { return n * hs + ((half - n * hs) % 16 + 16) % 16; }

/* Bytes of shared memory for one volume's buffers at window d x h x w. */
static int64_t volume_shared(int n, int half, int d, int h, int w)
{
    return (int64_t)d * shared_plane_pitch(n, half, half | 1) * 8 + (int64_t)d * h * (w | 1) * 4;
}

static int64_t shared_limit(const cg_target *t)
{
    return cg_target_shared_per_block(t) < CUBE_MAX_SHARED ? cg_target_shared_per_block(t) : CUBE_MAX_SHARED;
}

bool cg_fft_cube_applies(const cg_fft_problem *p, const cg_target *t)
{
    return p->rank == 3 && p->type != CONVGEN_FFT_C2C && !p->plane_stage && !p->depth_stage &&
           volume_shared(p->n, p->n / 2 + 1, p->n, p->n, p->n) <= shared_limit(t);
}

static void cube_shape_of(const cg_fft_problem *p, const cg_target *t, cube_shape *c)
{
    const int n = p->n, half = p->half, plane_bins = n * half;
    int64_t volumes = CUBE_THREADS / plane_bins, one = volume_shared(n, half, p->d, p->h, p->w);
    volumes = volumes < 1 ? 1 : volumes > p->count ? p->count : volumes;
    while (volumes > 1 && volumes * one > shared_limit(t)) /* one volume fits (cg_fft_cube_applies) */
        --volumes;
    c->volumes = (int)volumes;
    c->threads = (c->volumes * plane_bins + 31) / 32 * 32;
    c->hs = half | 1;
    c->pp = shared_plane_pitch(n, half, c->hs);
    c->sp = p->w | 1;
    c->rows_elems = (int64_t)c->volumes * p->d * c->pp;
    c->shared = c->volumes * one;
    int64_t by_shared = cg_target_shared_per_sm(t) / (c->shared + CG_SHARED_RESERVED_PER_BLOCK);
    int64_t by_registers = 65536 / ((int64_t)c->threads * cube_registers(n));
    int64_t blocks = by_shared < by_registers ? by_shared : by_registers;
    c->min_blocks = (int)(blocks < 1 ? 1 : blocks > 8 ? 8 : blocks);
}

/* The registers outside [first, first + count): zeros a forward loads for what is outside the window. */
static tmpl_value *zeros_outside(int n, int first, int count)
{
    tmpl_value *list = tmpl_list();
    for (int j = 0; j < n; ++j)
        if (j < first || j >= first + count)
            tmpl_list_push(list, tmpl_int(j));
    return list;
}

/* The y columns' bins in the spectrum's order: bin ky at row position(ky) of its plane. Forward
 * stores, inverse loads. */
static tmpl_value *y_bins(const cg_fft_problem *p, const fft_plan *pl, const reg_fft *f, int hs)
{
    tmpl_value *list = tmpl_list();
    for (int k = 0; k < p->n; ++k) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "reg", p->sign < 0 ? f->out[k] : k);
        tmpl_set_int(v, "at", (int64_t)(p->natural ? k : fft_plan_output_position(pl, k)) * hs);
        tmpl_list_push(list, v);
    }
    return list;
}

/* Where each phase's transform reads and writes, pruned to the window. */
static void phase_lists(tmpl_value *ctx, const cg_fft_problem *p, const fft_plan *pl, const reg_fft *f,
                        const cube_shape *c)
{
    const int n = p->n, plane_bins = n * p->half;
    if (p->sign < 0) { /* the inverse loads whole columns: no zeros */
        tmpl_map_set(ctx, "y_zeros", zeros_outside(n, p->oy, p->h));
        tmpl_map_set(ctx, "z_zeros", zeros_outside(n, p->oz, p->d));
        tmpl_map_set(ctx, "row_zeros", zeros_outside(n, p->ox, p->w));
        /* the window's columns from sig, its rows at oy.. of the plane, its planes first in rows */
        tmpl_map_set(ctx, "row_loads", cg_reg_placements(NULL, p->ox, p->w, 0, 1));
        tmpl_map_set(ctx, "split", cg_reg_fft_split_value(f, p->half));
        tmpl_map_set(ctx, "y_loads", cg_reg_placements(NULL, p->oy, p->h, p->oy, c->hs));
        tmpl_map_set(ctx, "y_stores", y_bins(p, pl, f, c->hs));
        tmpl_map_set(ctx, "z_loads", cg_reg_placements(NULL, p->oz, p->d, 0, c->pp));
        tmpl_map_set(ctx, "z_stores", cg_reg_placements(f->out, 0, n, 0, plane_bins));
    } else {
        tmpl_map_set(ctx, "z_loads", cg_reg_placements(NULL, 0, n, 0, plane_bins));
        tmpl_map_set(ctx, "z_stores", cg_reg_placements(f->out, p->oz, p->d, 0, c->pp));
        tmpl_map_set(ctx, "y_loads", y_bins(p, pl, f, c->hs));
        tmpl_map_set(ctx, "y_stores", cg_reg_placements(f->out, p->oy, p->h, 0, c->hs));
        tmpl_map_set(ctx, "merge", cg_reg_fft_merge_value(n, p->half));
        tmpl_map_set(ctx, "row_stores", cg_reg_placements(f->out, p->ox, p->w, 0, 1));
    }
}

/* The index splits, each over the largest dividend it sees; false where one has no magic
 * constant (cg_value_magic said why). */
static bool cube_divisions(tmpl_value *ctx, const cg_fft_problem *p, const cube_shape *c)
{
    const int64_t v = c->volumes, window = (int64_t)p->d * p->h, plane_bins = (int64_t)p->n * p->half;
    const int64_t halves = v * p->d * p->half > plane_bins ? v * p->d * p->half : plane_bins;
    const struct { const char *name; int64_t d, max; } divs[] = {
        {"w_div", p->w, v * window * p->w - 1},
        {"dh_div", window, v * window}, /* rows; a pair's second row is at most the row count (odd counts) */
        {"h_div", p->h, window - 1},
        {"half_div", p->half, halves - 1},
        {"n_div", p->n, plane_bins - 1},
        {"plane_div", plane_bins, v * plane_bins - 1}};
    bool ok = true;
    for (size_t i = 0; i < sizeof divs / sizeof divs[0]; ++i) {
        tmpl_value *m = cg_value_magic((uint32_t)divs[i].d, divs[i].max);
        ok &= m != NULL;
        tmpl_map_set(ctx, divs[i].name, m);
    }
    return ok;
}

static tmpl_value *cube_header(const cg_fft_problem *p, const cube_shape *c, const cg_kernel *k)
{
    char radices[64];
    cg_reg_fft_radices(p->n, radices, sizeof radices);
    tmpl_value *h = cg_fft_header_open(p);
    cg_value_line(h, "one pass: %d volume%s a block, the rows (two real rows as one complex transform), the y columns and "
                     "the z columns in turn in shared memory, each 1-D transform of %d points (radices %s) in one "
                     "thread's registers", c->volumes, c->volumes > 1 ? "s" : "", p->n, radices);
    if (p->sign < 0)
        cg_value_line(h, "pruned, per volume: %d row transforms of %d (the window's rows, in pairs), %d y columns of %d "
                         "(the window's planes; each loads %d rows), z columns loading %d planes",
                      (p->d * p->h + 1) / 2, p->n * p->n / 2, p->d * p->half, p->n * p->half, p->h, p->d);
    else
        cg_value_line(h, "pruned, per volume: z columns keeping %d planes of %d, %d y columns (the window's planes) "
                         "keeping %d rows, %d row transforms (pairs of the window's rows) keeping %d columns",
                      p->d, p->n, p->d * p->half, p->h, (p->d * p->h + 1) / 2, p->w);
    cg_value_line(h, "spectrum: %s planes, the y axis in %s order, the depth natural; consecutive threads on "
                     "consecutive bins of a plane", p->transposed ? "transposed [n/2+1][n]" : "natural [n][n/2+1]",
                  p->natural ? "natural" : "digit-reversed");
    if (p->scale != 1.0f)
        cg_value_line(h, "scale: outputs multiplied by %.9g", (double)p->scale);
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1), %lld bytes of dynamic shared memory, at least %d "
                     "blocks a multiprocessor", k->grid[0], k->block[0], (long long)c->shared, c->min_blocks);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/fft/fft_cube.cu or generator/fft/fft_cube.c instead.");
    return h;
}

convgen_status cg_fft_cube_kernel(const cg_fft_problem *p, const cg_target *t, cg_generated *out)
{
    cube_shape c;
    cube_shape_of(p, t, &c);
    int64_t blocks = (p->count + c.volumes - 1) / c.volumes; /* count is at most 2^31 - 1 (fft_problem.c) */
    fft_plan pl;
    reg_fft f;
    char err[128];
    if (!fft_plan_make(p->n, true, &pl, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s", err);
    if (!cg_reg_fft(p->n, p->sign, &f))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "n = %d: no register FFT of that size", p->n);
    cg_kernel *k = &out->kernels[0];
    snprintf(k->name, sizeof k->name, "convgen_%s3d%d_one_pass", p->sign < 0 ? "r2c" : "c2r", p->n);
    k->grid[0] = (unsigned)blocks, k->grid[1] = k->grid[2] = 1;
    k->block[0] = (unsigned)c.threads, k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)c.shared;
    k->epilogue = p->type == CONVGEN_FFT_C2R && p->epilogue; /* its stores of the window apply it */

    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", cube_header(p, &c, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    cg_fft_side_context(ctx, p, p->count + c.volumes, 0);
    const int64_t ints[] = {c.threads, c.min_blocks, c.volumes, p->n, p->half, (int64_t)p->n * p->half, p->d, p->h,
                            p->w, p->oy, p->oz, c.hs, c.pp, c.sp, c.rows_elems, c.shared, p->pitch, p->plane_pitch,
                            (int64_t)c.volumes * p->d * p->h, ((int64_t)c.volumes * p->d * p->h + 1) / 2};
    const char *const names[] = {"threads", "min_blocks", "volumes", "n", "half", "plane_bins", "d", "h",
                                 "w", "oy", "oz", "hs", "pp", "sp", "rows_elems", "shared", "pitch", "plane_pitch",
                                 "nrows", "pairs"};
    _Static_assert(sizeof ints / sizeof ints[0] == sizeof names / sizeof names[0], "a name for every value");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        tmpl_set_int(ctx, names[i], ints[i]);
    tmpl_set_bool(ctx, "forward", p->sign < 0);
    tmpl_set_bool(ctx, "transposed", p->transposed);
    tmpl_set_bool(ctx, "natural", p->natural);
    /* The forward rows' spectra come out doubled (cg_reg_fft_split_value). */
    tmpl_set_float(ctx, "out_scale", p->sign < 0 ? 0.5 * (double)p->scale : (double)p->scale);
    tmpl_map_set(ctx, "fft", cg_reg_fft_value(&f));
    phase_lists(ctx, p, &pl, &f, &c);
    if (!cube_divisions(ctx, p, &c)) {
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL; /* cg_value_magic said why */
    }
    out->kernel_count = 1;
    out->chunks = 1;
    /* One step whose op is the whole problem, for the CPU evaluation of programs (fft_op.c). */
    cg_step *st = &out->steps[out->step_count++];
    memset(st, 0, sizeof *st);
    st->kind = CG_STEP_KERNEL;
    st->phase = 1;
    st->kernel = 0;
    st->op = (cg_kernel_op){.kind = CG_OP_FFT, .fft = *p};
    const cg_arg same = {CG_ARG_SAME, 0}, none = {CG_ARG_NULL, 0};
    memcpy(st->args, (cg_arg[4]){same, none, same, none}, sizeof st->args);
    return cg_render_kernel("fft/fft_cube.cu", ctx, &k->source);
}
