/* The "fft-fused" algorithm (issue 5, item 4; rank 3: issue 28, item 2): fft-tiled's fprop and
 * bprop in one kernel per tile (templates/fftconv/fft_fused.cu), after the weights' R2C. */
#include <stdio.h>
#include <string.h>

#include "fftconv.h"
#include "fft/fft_regs.h"
#include "templates.h"
#include "util.h"
#include "values.h"

/* ---- fft-fused: one kernel per tile (issue 5, item 4) ---- */

/* fft-fused runs fft-tiled's fprop and bprop with one kernel in place of its steps per tile:
 * each block loads a tile of the signal (clipped), transforms it, multiplies it bin by bin with
 * the weights' spectra and sums over the input channels, transforms back and stores the tile's
 * valid outputs, with nothing written to global memory in between. The weights' spectra are
 * made first in every execution by fft-tiled's own steps (convgen's R2C through its window, or
 * after a pad kernel where the taps are mirrored, flipped or dilated), in natural order:
 * [k][c][n][n / 2 + 1] (3-D: [k][c][n][n][n / 2 + 1]).
 *
 * The transforms are FFTs in registers, a whole transform per thread (fft_regs.c): the tile's
 * real rows two at a time as one complex transform, then its columns (3-D: its y columns, then
 * its z columns); the inverse the other way round, pruned to the valid outputs. Shared memory
 * holds the tile between the phases. */

enum {
    FUSED_MAX_ACC = 16, FUSED_MAX_OUT = 16, FUSED_MAX_IN = 16,
    /* 3-D tiles up to 16 points a side: a 16^3 tile's spectrum (2304 bins) is 15 accumulators
     * a thread over its 160 threads; 18 points would need 17 (see fused_threads). */
    FUSED_3D_MAX_N = 16,
};

typedef struct fused_shape {
    int64_t outs, ins;   /* output and input channels of the pass */
    int64_t kb, cb;      /* output channels per block, input channels per pass over the tile */
    int64_t threads;     /* a block's: THREADS in 2-D; in 3-D a channel's columns, in warps */
    int64_t acc;         /* accumulators per thread: kb x bins over the threads */
    int64_t sp, hs, vls; /* row strides, odd so that a thread per row meets no bank conflict:
                          * the tile's rows, their spectra, the valid outputs' rows */
    int64_t pp;          /* 3-D: the planes' pitch in float2s, n rows of hs and a few more so that
                          * the y columns of consecutive planes start on other banks */
    int64_t rows, spec;  /* float2 elements of the two shared buffers */
    int64_t shared;      /* bytes of dynamic shared memory */
    int64_t per_sm;      /* blocks a multiprocessor (the launch bounds' minimum) */
    int64_t kgroups;     /* blocks per tile and image: ceil(outs / kb) */
} fused_shape;

static int64_t max3(int64_t a, int64_t b, int64_t c)
{
    return a > b ? (a > c ? a : c) : (b > c ? b : c);
}

/* The two shared buffers, each phase reading one and writing the other (a thread per row or
 * column; the y columns of 3-D in place, as a thread reads its whole column first).
 * 2-D: the tile (cb n rows of sp floats, in spec) -> its rows' spectra (cb n rows of hs, rows)
 * -> the columns' spectra (cb x bins, spec); the products (kb x bins, rows) -> the inverse
 * columns' valid rows (kb v0 rows of hs, spec) -> the valid outputs (kb v0 rows of vls floats,
 * rows).
 * 3-D: the tile (cb n^2 rows, spec) -> the rows' spectra (cb n planes of pp, rows), then their
 * y columns in place -> the z columns' spectra (cb x bins, spec); the products (rows) -> the
 * inverse z columns' valid planes (kb v0 planes of pp, spec) -> the y columns' valid rows
 * (kb v0 v1 rows of hs, rows) -> the valid outputs (kb v0 v1 rows of vls floats, spec). */
static void fused_buffers(const lib_spec *s, int64_t cb, int64_t kb, fused_shape *f)
{
    const int last = s->rank - 1;
    const int64_t n = s->d[0].size, v0 = s->d[0].tile_step, v1 = s->d[1].tile_step;
    f->sp = n | 1, f->hs = s->d[last].spectrum | 1, f->vls = s->d[last].tile_step | 1;
    /* A warp's y columns are the h of a plane, then the next plane's: a pitch of h modulo the 16
     * float2 banks puts the next plane's columns on the banks after them. */
    f->pp = n * f->hs + ((s->d[last].spectrum - n * f->hs) % 16 + 16) % 16;
    if (s->rank == 2) {
        f->rows = max3(cb * n * f->hs, kb * s->bins, (kb * v0 * f->vls + 1) / 2);
        f->spec = max3(cb * s->bins, (cb * n * f->sp + 1) / 2, kb * v0 * f->hs);
    } else {
        f->rows = max3(cb * n * f->pp, kb * s->bins, kb * v0 * v1 * f->hs);
        f->spec = max3(cb * s->bins, (cb * n * n * f->sp + 1) / 2, kb * v0 * f->pp);
        f->spec = max3(f->spec, (kb * v0 * v1 * f->vls + 1) / 2, 0);
    }
    f->shared = 8 * (f->rows + f->spec);
}

/* Threads a block and blocks a multiprocessor. 2-D: 256 threads; per_sm is 2 up to 40 points,
 * as a transform's x[n] and the accumulators live together, and at two blocks of 256 threads a
 * thread has 128 registers, which hold them to n = 40 with no spill (n = 48 spilled 64 bytes);
 * larger tiles run one block a multiprocessor. 3-D: the columns of one channel's spectrum
 * (n x (n / 2 + 1), the most a phase has per channel) rounded to warps, at most 256; 4 blocks
 * a multiprocessor to 16 points (102 registers a thread: a 16-point transform, 16 complex
 * accumulators and the indexing), 2 to 32. */
static void fused_threads(const lib_spec *s, fused_shape *f)
{
    const int64_t n = s->d[0].size;
    if (s->rank == 2) {
        f->threads = THREADS, f->per_sm = n <= 40 ? 2 : 1;
        return;
    }
    int64_t columns = n * s->d[s->rank - 1].spectrum;
    f->threads = (columns + 31) / 32 * 32;
    f->threads = f->threads < 64 ? 64 : f->threads > THREADS ? THREADS : f->threads;
    f->per_sm = n <= 16 ? 4 : n <= 32 ? 2 : 1;
}

/* The most output channels per block (fewer blocks transform the same tile again) that still
 * give the grid two blocks per multiprocessor, then the most input channels per pass over the
 * tile, within what a block may have (the H100's 227 KiB unless the target says) and per_sm
 * blocks' share of a multiprocessor's shared memory (less the hardware's KiB a block), and 16
 * accumulators a thread. */
static bool fused_shape_of(const cg_problem *p, convgen_pass pass, const cg_target *t, const lib_spec *s,
                           fused_shape *f)
{
    f->outs = pass == CONVGEN_FPROP ? p->k : p->c, f->ins = pass == CONVGEN_FPROP ? p->c : p->k;
    int64_t sms = t && t->sm_count ? t->sm_count : 132, per_tile = p->n * s->tiles;
    fused_threads(s, f);
    int64_t limit = cg_target_shared_per_sm(t) / f->per_sm - CG_SHARED_RESERVED_PER_BLOCK;
    limit = limit < cg_target_shared_per_block(t) ? limit : cg_target_shared_per_block(t);
    for (int64_t kb = f->outs < FUSED_MAX_OUT ? f->outs : FUSED_MAX_OUT; kb >= 1; --kb) {
        int64_t kgroups = (f->outs + kb - 1) / kb;
        if (kb > 4 && per_tile * kgroups < 2 * sms)
            continue;
        for (int64_t cb = f->ins < FUSED_MAX_IN ? f->ins : FUSED_MAX_IN; cb >= 1; --cb) {
            fused_buffers(s, cb, kb, f);
            int64_t acc = (kb * s->bins + f->threads - 1) / f->threads;
            if (acc <= FUSED_MAX_ACC && f->shared <= limit) {
                f->kb = kb, f->cb = cb, f->acc = acc, f->kgroups = kgroups;
                return true;
            }
        }
    }
    return false;
}

/* The signal's and the output's placements per dimension, outermost first. */
static tmpl_value *fused_dims(convgen_pass pass, const lib_spec *s)
{
    tmpl_value *list = tmpl_list();
    for (int d = 0; d < s->rank; ++d) {
        placement in = fc_place(s, pass, 0, d), o = fc_place(s, pass, 2, d);
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "i", d);
        tmpl_set_int(v, "base", in.base);
        tmpl_set_int(v, "count", in.count);
        tmpl_set_int(v, "step", in.tile_step);
        tmpl_set_int(v, "v", s->d[d].tile_step);
        tmpl_set_int(v, "out", o.count);
        tmpl_set_int(v, "out_base", o.base);
        tmpl_list_push(list, v);
    }
    return list;
}

/* The offset of point (<p>0, <p>1, ...) in an image of the role's extents, as C:
 * "((size_t)t0 * 20u + (size_t)t1) * 21u + (size_t)t2". */
static void flat_offset(char *buf, size_t size, const lib_spec *s, convgen_pass pass, int role, char p)
{
    int at = 0;
    for (int d = 2; d < s->rank; ++d)
        at += snprintf(buf + at, size - (size_t)at, "(");
    at += snprintf(buf + at, size - (size_t)at, "(size_t)%c0", p);
    for (int d = 1; d < s->rank; ++d)
        at += snprintf(buf + at, size - (size_t)at, "%s * %lldu + (size_t)%c%d", d > 1 ? ")" : "",
                       (long long)fc_place(s, pass, role, d).count, p, d);
}

/* The fused kernel's op for the CPU evaluation. */
static cg_kernel_op fused_op(const cg_problem *p, convgen_pass pass, const lib_spec *s, const fused_shape *f)
{
    cg_fused_op op = {.input = {.operand = 0, .rank = s->rank, .images = p->n, .tiles = s->tiles,
                                .scale = 1.0 / (double)s->points},
                      .channels = f->ins, .outputs = f->outs, .per_block = f->kb, .spectra = s->natural_offset,
                      .conjugate = pass == CONVGEN_FPROP, .w_out = pass == CONVGEN_FPROP ? p->c : 1,
                      .w_in = pass == CONVGEN_FPROP ? 1 : p->c};
    for (int d = 0; d < s->rank; ++d) {
        op.input.size[d] = s->d[d].size;
        op.input.dims[d] = fc_place(s, pass, 0, d);
        op.out_dims[d] = fc_place(s, pass, 2, d);
    }
    return (cg_kernel_op){.kind = CG_OP_FUSED, .fused = op};
}

/* The register transforms and the index lists that place their values: the forward columns'
 * bins (3-D: the y columns' in place, then the z columns' bins), the inverse columns' valid
 * rows (3-D: the z columns', then the y columns') and the inverse rows' valid outputs. */
static convgen_status transform_values(tmpl_value *ctx, const lib_spec *s, convgen_pass pass, const fused_shape *f)
{
    const int last = s->rank - 1;
    const int64_t n = s->d[0].size, h = s->d[last].spectrum;
    int64_t ob[CONVGEN_MAX_RANK];
    for (int d = 0; d < s->rank; ++d) {
        ob[d] = fc_place(s, pass, 2, d).base;
        if (ob[d] < 0 || ob[d] + s->d[d].tile_step > n)
            return cg_fail(CONVGEN_ERROR_INTERNAL, "fft-fused: valid outputs at %lld along dimension %d of a %lld-point tile",
                           (long long)ob[d], d, (long long)n);
    }
    reg_fft fwd, inv;
    if (!cg_reg_fft((int)n, -1, &fwd) || !cg_reg_fft((int)n, 1, &inv))
        return cg_fail(CONVGEN_ERROR_INTERNAL, "fft-fused: no register FFT of %lld points", (long long)n);
    tmpl_map_set(ctx, "fwd", cg_reg_fft_value(&fwd));
    tmpl_map_set(ctx, "inv", cg_reg_fft_value(&inv));
    tmpl_map_set(ctx, "split", cg_reg_fft_split_value(&fwd, h));
    tmpl_map_set(ctx, "merge", cg_reg_fft_merge_value(n, h));
    const int64_t v0 = s->d[0].tile_step, plane = s->rank == 3 ? n : 1; /* rows of a z column's step */
    tmpl_map_set(ctx, "col_out", cg_reg_placements(fwd.out, 0, (int)n, 0, (int)(plane * h)));
    const int icol_step = (int)(s->rank == 3 ? f->pp : f->hs);
    tmpl_map_set(ctx, "icol_out", cg_reg_placements(inv.out, (int)ob[0], (int)v0, 0, icol_step));
    if (s->rank == 3) {
        tmpl_map_set(ctx, "ycol_out", cg_reg_placements(fwd.out, 0, (int)n, 0, (int)f->hs));
        tmpl_map_set(ctx, "iycol_out",
                     cg_reg_placements(inv.out, (int)ob[1], (int)s->d[1].tile_step, 0, (int)f->hs));
    }
    tmpl_map_set(ctx, "irow_out", cg_reg_placements(inv.out, (int)ob[last], (int)s->d[last].tile_step, 0, 1));
    return CONVGEN_SUCCESS;
}

/* The index splits, each over the largest dividend it sees: NULL values (cg_value_magic said
 * why) fail the context. v<d>_div splits the stores' index by dimension d's valid outputs. */
static bool fused_divisions(tmpl_value *ctx, const lib_spec *s, const fused_shape *f)
{
    const int last = s->rank - 1;
    const int64_t n = s->d[0].size, h = s->d[last].spectrum, points = s->points;
    const int64_t slots = f->acc * f->threads, most = f->cb > f->kb ? f->cb : f->kb;
    int64_t outs = f->kb;
    bool ok = true;
    const struct { const char *name; int64_t d, max; } divs[] = {
        /* the tile's loads; in 3-D also the inverse z columns' kb n */
        {"n_div", n, (s->rank == 3 ? most : f->cb) * points - 1},
        {"h_div", h, most * (points / n / n) * h - 1}, /* 2-D: cb or kb columns; 3-D: n of them per channel */
        {"bins_div", s->bins, (slots > f->kb * s->bins ? slots : f->kb * s->bins) - 1},
        {"tiles_div", s->tiles, s->tiles * f->kgroups - 1},
        {"inner_div", s->d[last].tiles, s->tiles - 1},
        {"mid_div", s->rank == 3 ? s->d[1].tiles : 1, s->tiles / s->d[last].tiles - 1}}; /* 3-D only */
    for (size_t i = 0; i < sizeof divs / sizeof divs[0]; ++i) {
        tmpl_value *m = cg_value_magic((uint32_t)divs[i].d, divs[i].max);
        ok &= m != NULL;
        tmpl_map_set(ctx, divs[i].name, m);
    }
    for (int d = 0; d < s->rank; ++d) {
        char name[16];
        snprintf(name, sizeof name, "v%d_div", d);
        outs *= s->d[d].tile_step;
        tmpl_value *m = cg_value_magic((uint32_t)s->d[d].tile_step, outs - 1);
        ok &= m != NULL;
        tmpl_map_set(ctx, name, m);
    }
    return ok;
}

/* The kernel's sizes as template values: rows go in pairs, row t with row t + pairs (the odd
 * one out, if any, with zeros); nrows of the tile, irows of the inverse rows' valid outputs. */
static void shape_values(tmpl_value *ctx, const cg_problem *p, convgen_pass pass, const lib_spec *s,
                         const fused_shape *f)
{
    const int last = s->rank - 1;
    const int64_t n = s->d[0].size, rows = f->cb * (s->points / n), vl = s->d[last].tile_step;
    int64_t plane = 1, out_plane = 1, irows = f->kb;
    for (int d = 0; d < s->rank; ++d) {
        plane *= fc_place(s, pass, 0, d).count, out_plane *= fc_place(s, pass, 2, d).count;
        if (d < last)
            irows *= s->d[d].tile_step;
    }
    const int64_t ints[] = {s->rank, f->threads, n, s->d[last].spectrum, s->bins, s->points, f->cb, f->kb, f->acc,
                            f->ins, f->outs, s->tiles, s->d[last].tiles, s->d[1].tiles, s->d[0].tile_step,
                            s->d[1].tile_step, vl, p->n, s->natural_offset / 4, f->sp, f->hs, f->pp, f->vls, f->rows,
                            f->shared, rows, (rows + 1) / 2, irows, (irows + 1) / 2, plane, out_plane, f->per_sm};
    const char *const names[] = {"rank", "threads", "n", "h", "bins", "points", "cb", "kb", "acc",
                                 "ins", "outs", "tiles", "inner", "mid", "v0",
                                 "v1", "vl", "images", "spectra_offset", "sp", "hs", "pp", "vls", "rows_elems",
                                 "shared", "nrows", "pairs", "irows", "ipairs", "plane", "out_plane", "per_sm"};
    _Static_assert(sizeof ints / sizeof ints[0] == sizeof names / sizeof names[0], "a name for every value");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        tmpl_set_int(ctx, names[i], ints[i]);
}

static convgen_status render_fused(const cg_problem *p, convgen_pass pass, const lib_spec *s, const fused_shape *f,
                                   cg_kernel *k)
{
    k->grid[0] = (unsigned)(s->tiles * f->kgroups);
    k->grid[1] = (unsigned)(p->n < MAX_GRID_Y ? p->n : MAX_GRID_Y);
    k->grid[2] = 1;
    k->block[0] = (unsigned)f->threads, k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)f->shared;
    k->epilogue = pass == CONVGEN_FPROP && p->epilogue; /* it stores y, the program's last kernel */
    snprintf(k->name, sizeof k->name, "convgen_fft_fused_%s", convgen_pass_name(pass));
    char what[96];
    snprintf(what, sizeof what, "one kernel per tile, image and %lld of the %s channels",
             (long long)f->kb, s->names[2]);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", fc_header_lines(p, pass, s, k, what, "fftconv/fft_fused.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "signal", s->names[0]);
    tmpl_set_str(ctx, "output", s->names[2]);
    shape_values(ctx, p, pass, s, f);
    /* The weights' spectra are [k][c] of w: fprop's output channel is k, bprop's is c. */
    tmpl_set_int(ctx, "w_out", pass == CONVGEN_FPROP ? p->c : 1);
    tmpl_set_int(ctx, "w_in", pass == CONVGEN_FPROP ? 1 : p->c);
    tmpl_set_bool(ctx, "conjugate", pass == CONVGEN_FPROP); /* bprop's mirrored taps are conjugated already */
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, k->epilogue)); /* of output channel o */
    char scale[32]; /* the forward rows' spectra come out doubled (cg_reg_fft_split_value) */
    snprintf(scale, sizeof scale, "%.9ef", 0.5 / (double)s->points);
    tmpl_set_str(ctx, "scale", scale);
    tmpl_map_set(ctx, "dims", fused_dims(pass, s));
    char offset[160];
    flat_offset(offset, sizeof offset, s, pass, 0, 't');
    tmpl_set_str(ctx, "in_offset", offset);
    flat_offset(offset, sizeof offset, s, pass, 2, 'o');
    tmpl_set_str(ctx, "out_offset", offset);
    convgen_status st = transform_values(ctx, s, pass, f);
    if (st == CONVGEN_SUCCESS && !fused_divisions(ctx, s, f))
        st = CONVGEN_ERROR_INTERNAL; /* cg_value_magic said why */
    if (st != CONVGEN_SUCCESS) {
        tmpl_unref(ctx);
        return st;
    }
    return cg_render_kernel("fftconv/fft_fused.cu", ctx, &k->source);
}

static convgen_status fft_fused_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                         const cg_tuning *tune, cg_generated *out)
{
    lib_spec s;
    fc_spec_init(&s, true);
    s.fused = true;
    convgen_status st = fc_correlation_dims(p, pass, "fft-fused", &s);
    if (st == CONVGEN_SUCCESS)
        st = fc_tile_basis(p, tune, p->rank == 3 ? FUSED_3D_MAX_N : REG_FFT_MAX_N, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (s.rank < 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: rank %d; its kernel takes 2-D and 3-D tiles", s.rank);
    fused_shape f;
    if (!fused_shape_of(p, pass, t, &s, &f))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: the spectra of %d-D tiles of %lld points a side do not "
                       "fit one block's registers and shared memory", s.rank, (long long)s.d[0].size);
    /* Buffers: w's padded images (bprop's mirrored taps), then their spectra. */
    s.batch = p->n, s.chunks = 1;
    s.names[0] = fc_operand_names[pass][0], s.names[1] = fc_operand_names[pass][1], s.names[2] = fc_operand_names[pass][2];
    s.groups[1][0] = p->k, s.groups[1][1] = p->c;
    s.images[1] = p->k * p->c;
    int64_t real = 0, spectra = 0, blocks = 0;
    bool padded = !fc_windowed(&s, pass, 1); /* else the R2C reads w through its window */
    if (!cg_mul64(s.images[1], padded ? s.points * 4 : 0, &real) || !cg_mul64(s.images[1], s.bins * 8, &spectra) ||
        s.images[1] > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: the weights' spectra of this layer do not fit 32-bit sizes");
    if (!cg_mul64(s.tiles, f.kgroups, &blocks) || blocks > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: %lld tiles x %lld channel groups are more blocks than a "
                       "grid has", (long long)s.tiles, (long long)f.kgroups);
    s.real_offset = 0;
    s.natural_offset = fc_align_up(real);
    s.workspace = s.natural_offset + spectra;
    s.fft_work_offset = fc_align_up(s.workspace);
    out->workspace_bytes = s.workspace;
    fc_set_chunks(p, pass, &s, out);
    st = fc_forward_steps(p, pass, t, &s, 1, 0, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    cg_step *step = fc_add_step(out, CG_STEP_KERNEL, 1);
    step->op = fused_op(p, pass, &s, &f);
    return render_fused(p, pass, &s, &f, &out->kernels[step->kernel]);
}

static convgen_status fft_fused_applicable(const cg_problem *p, convgen_pass pass)
{
    convgen_status st = fc_fft_applicable(p, pass);
    if (st == CONVGEN_SUCCESS && pass == CONVGEN_ACCGRAD)
        st = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: fprop and bprop; accgrad's fused kernel is not built");
    if (st == CONVGEN_SUCCESS && p->rank < 2)
        st = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: rank %d; its kernel takes 2-D and 3-D tiles", p->rank);
    return st;
}

static const cg_knob fused_knobs[] = {{"fourier", cg_fourier_print, cg_fourier_parse}, {NULL, NULL, NULL}};

const cg_planner cg_fft_fused_planner = {
    .algo = CONVGEN_ALGO_FFT_FUSED,
    .name = "fft-fused",
    .applicable = fft_fused_applicable,
    .generate = fft_fused_generate,
    .knobs = fused_knobs,
};
