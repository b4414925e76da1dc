/* Where a pass's operands sit in the Fourier basis of FFT convolution, for every FFT algorithm
 * (generator/fftconv/fftconv.h): the correlation along each dimension, the placement of the
 * signal, the kernel and the output in the padded images (whole images, overlap-save tiles or
 * convolution in parts' blocks), and the transform that holds the whole correlation. Pure
 * arithmetic over a lib_spec: no kernel is rendered here. */
#include <stdio.h>
#include <string.h>

#include "fftconv.h"
#include "fft/fft_plan.h"
#include "util.h"

const char *const fc_operand_names[3][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}, {"x", "dy", "dw"}};

/* Whether fft's bprop runs as the convolution it is, dx = dy * w, rather than as a correlation
 * with the taps reversed and mirrored (which wrap round the padded image, so a pad kernel
 * writes them): dy and w from position 0, w through the R2C's window as in fprop, no conjugate
 * (cuBLAS's GEMM serves as well), and dx from position p, the layer's padding (the correlation's
 * pad_before is extent - 1 - p), through the C2R's window. The correlation's basis holds it:
 * outputs that wrap below 0 find zeros where B >= dy + pad_before, and the last output, p + dx
 * - 1 = out + extent - 2 - pad_before, stays below B. Taken for any padding p <= extent - 1
 * (pad_before >= 0); a larger padding (pad_before < 0) stays a correlation, whose placement
 * cuts dy's head. fft-fused and fft-tiled take it too (no pad kernel for w); a tile's valid
 * outputs then start at the placement's base, which the tiled clip reads (bench/NOTES.md). */
static bool bprop_as_convolution(const lib_spec *s, convgen_pass pass)
{
    if (pass != CONVGEN_BPROP || !s->generated || s->parts)
        return false;
    for (int d = 0; d < s->rank; ++d)
        if (!s->d[d].c.reverse || s->d[d].c.pad_before < 0)
            return false;
    return true;
}

/* The placement of S (role 0), K (role 1) or the output O (role 2, which reads from it). */
placement fc_place(const lib_spec *s, convgen_pass pass, int role, int d)
{
    const fft_conv_dim *c = &s->d[d].c;
    if (s->parts && role < 2)
        return fc_place_part(s, role, d);
    placement pl = {.limit = s->d[d].size, .tiles = 1};
    /* tiles of the signal and of the valid outputs; in accgrad of x and of dy's blocks */
    bool tiled = s->tiled && (pass == CONVGEN_ACCGRAD ? role < 2 : role != 1);
    if (tiled)
        pl.tiles = s->d[d].tiles, pl.tile_step = s->d[d].tile_step;
    /* bprop as a convolution: the correlation's positions less its pad_before (dy from 0); in
     * tiles the signal keeps the correlation's places and each tile's valid outputs are the
     * circular convolution's unwrapped ones, from extent - 1 */
    const bool convolution = bprop_as_convolution(s, pass);
    const int64_t shift = convolution && !s->tiled ? c->pad_before : 0;
    if (role == 0) { /* the signal, shifted by the pad; positions past what the outputs read are
                      * cut, which only spares loads (nothing there reaches an output) */
        int64_t reach = c->out + c->extent - 1 - shift;
        pl.base = c->pad_before - shift, pl.step = 1, pl.count = c->in;
        pl.limit = reach < pl.limit && !s->tiled ? reach : pl.limit;
    } else if (role == 1 && pass == CONVGEN_ACCGRAD) { /* dy is the kernel: its `extent` positions */
        pl.base = 0, pl.step = 1, pl.count = c->extent;
        if (tiled) /* a tile's block of dy: tile_step positions, the tile's rest zero */
            pl.limit = s->d[d].tile_step;
    } else if (role == 1) { /* weight tap f at fft_conv_dim_tap(f): affine in f; as a convolution,
                             * at its place in the kernel (the reversal undone), not mirrored */
        const int64_t last = c->kernel_extent - 1;
        pl.base = convolution ? last - fft_conv_dim_tap(c, 0) : fft_conv_dim_tap(c, 0);
        int64_t next = convolution ? last - fft_conv_dim_tap(c, 1) : fft_conv_dim_tap(c, 1);
        pl.step = c->taps > 1 ? next - pl.base : 1;
        pl.count = c->taps;
        pl.mirror = pass == CONVGEN_BPROP && !convolution;
    } else if (pass == CONVGEN_ACCGRAD) { /* the weight gradient's taps among the outputs */
        pl.base = fft_conv_dim_tap(c, 0);
        pl.step = c->taps > 1 ? fft_conv_dim_tap(c, 1) - pl.base : 1;
        pl.count = c->taps;
        if (s->parts) /* each tap summed from the shifts that reach it */
            pl.shifts = s->d[d].parts.shifts, pl.block = s->d[d].parts.block;
    } else { /* the valid outputs (bprop as a convolution: from p = extent - 1 - pad_before) */
        pl.base = convolution ? c->kernel_extent - 1 - shift : 0, pl.step = 1, pl.count = c->out;
    }
    return pl;
}

/* Convolution in parts (accgrad): x (role 0) and dy (role 1) cut into blocks of `block`
 * positions, each block at the start of its own padded image (the rest zero), images
 * [block][image] over a grid of blocks. Along every dimension but the first, dy's grid is as
 * wide as x's, so that block b of dy and block b + d of x are one fixed number of blocks apart
 * for each shift d: the dy blocks past dy's end are zero, so the pairs that wrap into the next
 * row contribute nothing. x's grid has one row more where those pairs reach past its end. */
placement fc_place_part(const lib_spec *s, int role, int d)
{
    const lib_dim *ld = &s->d[d];
    const fft_parts *pt = &ld->parts;
    placement pl = {.base = role == 0 ? ld->c.pad_before : 0, .step = 1, .count = role == 0 ? ld->c.in : ld->c.extent,
                    .limit = pt->block, .tile_step = pt->block};
    bool extra_row = d == 0 && s->rank == 2 && s->d[1].parts.shifts > 1; /* 3-D accgrad is tiled */
    pl.tiles = role == 0 ? pt->x_blocks + (extra_row ? 1 : 0) : d == 0 ? pt->dy_blocks : pt->x_blocks;
    return pl;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

/* The fewest points whose circular correlation holds the outputs: the linear correlation's
 * length out + extent - 1, or less where the signal has zeros ahead of it. With the signal at
 * pad_before..pad_before + in - 1 and the kernel and outputs from 0, outputs that reach past B
 * wrap around to positions 0.. and must find only the head's zeros there: B needs to hold the
 * padded signal (in + pad_before) and the reach less the head (out + extent - 1 - pad_before),
 * besides the kernel and the outputs themselves. bprop with pad 0 has a head of extent - 1
 * zeros: L2's 56 x 56 dy and 9 x 9 kernel take 64 points instead of 72. */
static int64_t circular_length(const fft_conv_dim *c)
{
    int64_t full = c->out + c->extent - 1;
    if (c->pad_before <= 0)
        return full;
    int64_t need = max64(max64(c->in + c->pad_before, full - c->pad_before), max64(c->extent, c->out));
    return need < full ? need : full;
}

/* The pass's correlation along each dimension (fft_conv_dims), for every FFT algorithm. */
convgen_status fc_correlation_dims(const cg_problem *p, convgen_pass pass, const char *algo, lib_spec *s)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "%s: %s", algo, err);
    s->rank = p->rank;
    for (int d = 0; d < p->rank; ++d)
        s->d[d].c = dims[d];
    return CONVGEN_SUCCESS;
}

/* cufft and fft: the correlation and one transform over all of it, the smallest 2^a 3^b 5^c 7^d
 * that holds the circular correlation, unless the caller fixed it. */
convgen_status fc_whole_basis(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s)
{
    convgen_status st = fc_correlation_dims(p, pass, s->generated ? "fft" : "cufft", s);
    if (st != CONVGEN_SUCCESS)
        return st;
    s->points = 1;
    for (int d = 0; d < p->rank; ++d) {
        lib_dim *ld = &s->d[d];
        /* A transform of one point is legal but untested in cuFFT; two hold the same correlation. */
        int64_t need = circular_length(&ld->c), fixed = tune ? tune->fourier_size[d] : 0;
        need = need < 2 ? 2 : need;
        if (fixed && fixed < need)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                           "options->fourier_size[%d] = %lld is below %lld, the circular correlation's length", d,
                           (long long)fixed, (long long)need);
        if (fixed) {
            ld->size = fixed;
        } else {
            int64_t candidates[MAX_CANDIDATES];
            if (fft_basis_candidates(need, candidates, MAX_CANDIDATES) < 1)
                return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: dimension %d needs a transform of %lld points", d,
                               (long long)need);
            ld->size = candidates[0];
        }
        ld->spectrum = d == p->rank - 1 ? ld->size / 2 + 1 : ld->size;
        if (!cg_mul64(s->points, ld->size, &s->points) || s->points > INT32_MAX)
            return cg_fail(fixed ? CONVGEN_ERROR_INVALID_VALUE : CONVGEN_ERROR_NOT_SUPPORTED,
                           "%s%d] = %lld: the transform would have more than 2^31 points",
                           fixed ? "options->fourier_size[" : "cufft: the Fourier size of dimension [", d,
                           (long long)ld->size);
    }
    for (int d = p->rank; tune && d < CONVGEN_MAX_RANK; ++d)
        if (tune->fourier_size[d])
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld, but the layer has rank %d", d,
                           (long long)tune->fourier_size[d], p->rank);
    s->bins = s->points / s->d[p->rank - 1].size * s->d[p->rank - 1].spectrum;
    return CONVGEN_SUCCESS;
}

/* An operand placed by a plain shift as a window of the padded image along one dimension:
 * positions [at, at + len) hold source indices [src, src + len). False for anything else
 * (dilated, flipped or mirrored taps; a window with nothing in it). */
bool fc_window_of(const placement *pl, int64_t *at, int64_t *len, int64_t *src)
{
    if (pl->step != 1 || pl->mirror || pl->tiles > 1 || pl->shifts > 0)
        return false;
    int64_t lo = pl->base > 0 ? pl->base : 0, end = pl->base + pl->count;
    int64_t hi = end < pl->limit ? end : pl->limit;
    *at = lo, *len = hi - lo, *src = lo - pl->base;
    return hi > lo;
}

bool fc_windowed(const lib_spec *s, convgen_pass pass, int role)
{
    int64_t at = 0, len = 0, src = 0;
    for (int d = 0; d < s->rank; ++d) {
        placement pl = fc_place(s, pass, role, d);
        if (!fc_window_of(&pl, &at, &len, &src))
            return false;
    }
    return true;
}

convgen_status fc_fft_applicable(const cg_problem *p, convgen_pass pass)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err)) /* the message names the field */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "%s", err);
    return CONVGEN_SUCCESS;
}

/* The next shift after d, the last dimension fastest; false after the last one. The shifts'
 * order is the order of their spectra: shift i of this walk is padded image [i]. */
bool fc_next_shift(const lib_spec *s, int64_t *d)
{
    for (int i = s->rank - 1; i >= 0; --i) {
        if (++d[i] < s->d[i].parts.shifts)
            return true;
        d[i] = 0;
    }
    return false;
}

/* Convolution in parts: every shift of the dimensions' shifts (the last fastest), with the
 * offset d block of its lags and the padded images' stride along each dimension. */
tmpl_value *fc_shifts_value(const lib_spec *s)
{
    tmpl_value *list = tmpl_list();
    int64_t d[CONVGEN_MAX_RANK] = {0}, index = 0;
    do {
        tmpl_value *shift = tmpl_map(), *lags = tmpl_list();
        int64_t stride = 1;
        for (int i = s->rank - 1; i >= 0; --i) {
            tmpl_value *l = tmpl_map();
            tmpl_set_int(l, "i", i);
            tmpl_set_int(l, "d", d[i]);
            tmpl_set_int(l, "offset", d[i] * s->d[i].parts.block);
            tmpl_set_int(l, "padded_stride", stride);
            tmpl_set_int(l, "block", s->d[i].parts.block);
            tmpl_set_int(l, "size", s->d[i].size);
            stride *= s->d[i].size;
            tmpl_list_push(lags, l);
        }
        char name[64];
        cg_dims_text(d, s->rank, name, sizeof name);
        tmpl_set_str(shift, "name", name);
        tmpl_set_int(shift, "index", index++);
        tmpl_map_set(shift, "lags", lags);
        tmpl_list_push(list, shift);
    } while (fc_next_shift(s, d));
    return list;
}

void fc_spec_init(lib_spec *s, bool generated)
{
    memset(s, 0, sizeof *s);
    s->generated = generated;
    s->role_tiles[0] = s->role_tiles[1] = s->role_tiles[2] = 1;
}
