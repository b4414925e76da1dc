/* The "fft-fused" algorithm (issue 5, item 4): fft-tiled's fprop and bprop in one kernel per
 * tile (templates/fft_fused.cu), after the weights' R2C. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft_conv.h"
#include "fft_plan.h"
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
 * [k][c][n][n / 2 + 1].
 *
 * The kernel's transforms are DFTs by a twiddle table in shared memory, rows then columns: n
 * multiply-adds per bin and pass, where butterflies take about log2 n. At the tiles this
 * algorithm takes (16 to 40 points) that is 3 to 5 times the arithmetic of fbfft's warp
 * transforms; it is the first version, simple to check, and the butterflies of fft_warp.cuh
 * are its next step (bench/NOTES.md). */

enum { FUSED_SHARED = 227 << 10, FUSED_MAX_ACC = 16, FUSED_MAX_OUT = 16, FUSED_MAX_IN = 8 };

typedef struct fused_shape {
    int64_t outs, ins;   /* output and input channels of the pass */
    int64_t kb, cb;      /* output channels per block, input channels per pass over the tile */
    int64_t most;        /* channels per shared buffer of spectra: the larger of cb and kb */
    int64_t acc;         /* accumulators per thread: kb x bins over the threads */
    int64_t shared;      /* bytes of dynamic shared memory */
    int64_t kgroups;     /* blocks per tile and image: ceil(outs / kb) */
} fused_shape;

/* The most output channels per block (fewer blocks transform the same tile again) that still
 * give the grid two blocks per multiprocessor, then the most input channels per pass over the
 * tile, within the block's dynamic shared memory (the H100's 227 KiB unless the target says)
 * and 16 accumulators a thread. */
static bool fused_shape_of(const cg_problem *p, convgen_pass pass, const cg_target *t, const lib_spec *s,
                           fused_shape *f)
{
    f->outs = pass == CONVGEN_FPROP ? p->k : p->c, f->ins = pass == CONVGEN_FPROP ? p->c : p->k;
    int64_t sms = t && t->sm_count ? t->sm_count : 132, per_tile = p->n * s->tiles;
    int64_t limit = t && t->shared_per_block ? t->shared_per_block : FUSED_SHARED;
    for (int64_t kb = f->outs < FUSED_MAX_OUT ? f->outs : FUSED_MAX_OUT; kb >= 1; --kb) {
        int64_t kgroups = (f->outs + kb - 1) / kb;
        if (kb > 4 && per_tile * kgroups < 2 * sms)
            continue;
        for (int64_t cb = f->ins < FUSED_MAX_IN ? f->ins : FUSED_MAX_IN; cb >= 1; --cb) {
            int64_t acc = (kb * s->bins + THREADS - 1) / THREADS, most = cb > kb ? cb : kb;
            int64_t shared = cb * s->points * 4 + 2 * most * s->bins * 8 + s->d[0].size * 8;
            if (acc <= FUSED_MAX_ACC && shared <= limit) {
                f->kb = kb, f->cb = cb, f->most = most, f->acc = acc, f->shared = shared, f->kgroups = kgroups;
                return true;
            }
        }
    }
    return false;
}

/* exp(-2 pi i m / n), m = 0 .. n - 1. */
static tmpl_value *twiddle_values(int64_t n)
{
    tmpl_value *list = tmpl_list();
    for (int64_t m = 0; m < n; ++m) {
        tmpl_value *t = tmpl_map();
        double a = 2.0 * M_PI * (double)m / (double)n;
        tmpl_set_float(t, "re", cos(a));
        tmpl_set_float(t, "im", -sin(a));
        tmpl_list_push(list, t);
    }
    return list;
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
        tmpl_set_int(v, "out", o.count);
        tmpl_set_int(v, "out_base", o.base);
        tmpl_list_push(list, v);
    }
    return list;
}

/* The fused kernel's op for the CPU evaluation. */
static cg_kernel_op fused_op(const cg_problem *p, convgen_pass pass, const lib_spec *s, const fused_shape *f)
{
    cg_kernel_op op = {.kind = CG_OP_FUSED, .operand = 0, .rank = s->rank, .images = p->n, .tiles = s->tiles,
                       .scale = 1.0 / (double)s->points, .channels = f->ins, .outputs = f->outs,
                       .spectra = s->natural_offset, .conjugate = pass == CONVGEN_FPROP,
                       .w_out = pass == CONVGEN_FPROP ? p->c : 1, .w_in = pass == CONVGEN_FPROP ? 1 : p->c};
    for (int d = 0; d < s->rank; ++d) {
        op.size[d] = s->d[d].size;
        op.dims[d] = fc_place(s, pass, 0, d);
        op.out_dims[d] = fc_place(s, pass, 2, d);
    }
    return op;
}

static convgen_status render_fused(const cg_problem *p, convgen_pass pass, const lib_spec *s, const fused_shape *f,
                                   cg_kernel *k)
{
    const int64_t n = s->d[0].size, h = s->d[1].spectrum, bins = s->bins, v0 = s->d[0].tile_step,
                  v1 = s->d[1].tile_step, tiles = s->tiles, inner = s->d[1].tiles;
    k->grid[0] = (unsigned)(tiles * f->kgroups);
    k->grid[1] = (unsigned)(p->n < MAX_GRID_Y ? p->n : MAX_GRID_Y);
    k->grid[2] = 1;
    k->block[0] = THREADS, k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)f->shared;
    snprintf(k->name, sizeof k->name, "convgen_fft_fused_%s", convgen_pass_name(pass));
    char what[96];
    snprintf(what, sizeof what, "one kernel per tile, image and %lld of the %s channels",
             (long long)f->kb, s->names[2]);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", fc_header_lines(p, pass, s, k, what, "fft_fused.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "signal", s->names[0]);
    tmpl_set_str(ctx, "output", s->names[2]);
    const int64_t ints[] = {THREADS, n, h, bins, n * n, f->cb, f->kb, f->acc, f->most,
                            f->ins, f->outs, tiles, inner, v0, v1, p->n, s->natural_offset / 4};
    const char *const names[] = {"threads", "n", "h", "bins", "points", "cb", "kb", "acc", "most", "ins", "outs",
                                 "tiles", "inner", "v0", "v1", "images", "spectra_offset"};
    _Static_assert(sizeof ints / sizeof ints[0] == sizeof names / sizeof names[0], "a name for every value");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
        tmpl_set_int(ctx, names[i], ints[i]);
    /* The weights' spectra are [k][c] of w: fprop's output channel is k, bprop's is c. */
    tmpl_set_int(ctx, "w_out", pass == CONVGEN_FPROP ? p->c : 1);
    tmpl_set_int(ctx, "w_in", pass == CONVGEN_FPROP ? 1 : p->c);
    tmpl_set_bool(ctx, "conjugate", pass == CONVGEN_FPROP); /* bprop's mirrored taps are conjugated already */
    char scale[32];
    snprintf(scale, sizeof scale, "%.9ef", 1.0 / (double)s->points);
    tmpl_set_str(ctx, "scale", scale);
    tmpl_map_set(ctx, "dims", fused_dims(pass, s));
    tmpl_map_set(ctx, "twiddles", twiddle_values(n));
    int64_t plane = 1, out_plane = 1;
    for (int d = 0; d < s->rank; ++d)
        plane *= fc_place(s, pass, 0, d).count, out_plane *= fc_place(s, pass, 2, d).count;
    tmpl_set_int(ctx, "plane", plane);
    tmpl_set_int(ctx, "out_plane", out_plane);
    /* The index splits, each over the largest dividend it sees. */
    /* buffer elements (the larger of the tile's and the output's spectra) and accumulator slots */
    const int64_t elems = f->most * bins, slots = f->acc * THREADS;
    const struct { const char *name; int64_t d, max; } divs[] = {
        {"points_div", n * n, f->cb * n * n - 1},        {"n_div", n, n * n - 1},
        {"h_div", h, elems - 1},                         {"bins_div", bins, (elems > slots ? elems : slots) - 1},
        {"tiles_div", tiles, tiles * f->kgroups - 1},    {"inner_div", inner, tiles - 1},
        {"valid_div", v0 * v1, f->kb * v0 * v1 - 1},     {"v1_div", v1, v0 * v1 - 1}};
    bool failed = false;
    for (size_t i = 0; i < sizeof divs / sizeof divs[0]; ++i) {
        tmpl_value *m = cg_value_magic((uint32_t)divs[i].d, divs[i].max);
        failed |= !m;
        tmpl_map_set(ctx, divs[i].name, m);
    }
    convgen_status st = failed        ? CONVGEN_ERROR_INTERNAL /* cg_value_magic said why */
                        : tmpl_ok(ctx) ? cg_render_template("fft_fused.cu", ctx, &k->source)
                                       : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building a fused context");
    tmpl_unref(ctx);
    return st;
}

static convgen_status fft_fused_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                         const cg_tuning *tune, cg_generated *out)
{
    lib_spec s;
    memset(&s, 0, sizeof s);
    s.generated = s.fused = true;
    s.role_tiles[0] = s.role_tiles[1] = s.role_tiles[2] = 1;
    convgen_status st = fc_correlation_dims(p, pass, "fft-fused", &s);
    if (st == CONVGEN_SUCCESS)
        st = fc_tile_basis(p, tune, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (s.rank != 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: rank %d; its kernel takes 2-D tiles", s.rank);
    fused_shape f;
    if (!fused_shape_of(p, pass, t, &s, &f))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: the spectra of %lldx%lld tiles do not fit one block's "
                       "registers and shared memory", (long long)s.d[0].size, (long long)s.d[0].size);
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
    if (st == CONVGEN_SUCCESS && p->rank != 2)
        st = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: rank %d; its kernel takes 2-D tiles", p->rank);
    return st;
}

const cg_planner cg_fft_fused_planner = {
    .algo = CONVGEN_ALGO_FFT_FUSED,
    .name = "fft-fused",
    .applicable = fft_fused_applicable,
    .generate = fft_fused_generate,
};
