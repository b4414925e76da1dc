/* fft-tiled's planning (issue 5, item 3): overlap-save tiles of a transform that follows the
 * kernel for fprop and bprop, and convolution in parts for accgrad, on the step program of
 * generator/fftconv/program.c. */
#include <stdio.h>
#include <string.h>

#include "fftconv.h"
#include "fft/fft_plan.h"
#include "util.h"
#include "values.h"

/* The caller's tile size (options->fourier_size, 0: chosen here) and the field that set it: one
 * square transform of convgen's, so the dimensions' sizes agree. */
static convgen_status fixed_tile_size(const cg_tuning *tune, int rank, int64_t *n, int *field)
{
    *n = 0, *field = 0;
    for (int d = 0; tune && d < CONVGEN_MAX_RANK; ++d) {
        int64_t f = tune->fourier_size[d];
        if (!f)
            continue;
        if (d >= rank)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld, but the layer has rank %d", d,
                           (long long)f, rank);
        if (f > FFT_MAX_N || !fft_size_supported((int)f))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld: fft-tiled's tiles are "
                           "2^a 3^b 5^c 7^d points, 2 to %d", d, (long long)f, FFT_MAX_N);
        if (*n && f != *n)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld: fft-tiled's tiles are square, "
                           "and options->fourier_size[%d] is %lld", d, (long long)f, *field, (long long)*n);
        *n = f, *field = d;
    }
    return CONVGEN_SUCCESS;
}

/* Overlap-save tiles of one square transform along each dimension: a tile of n points holds a
 * window (fprop, bprop: the kernel's extent; 3-D accgrad: dw's taps) and n - window + 1 points
 * of what the tiles cover (the outputs; accgrad: dy). */
static int64_t window_of(const lib_dim *ld, bool along_dy) { return along_dy ? ld->c.out : ld->c.extent; }
static int64_t covered_of(const lib_dim *ld, bool along_dy) { return along_dy ? ld->c.extent : ld->c.out; }

/* The tile size n: the caller's, else the smallest 2^a 3^b 5^c 7^d of at least 3 windows (and
 * 16), at most max_n where that is below convgen's largest FFT (fft-fused's registers), and no
 * larger than one tile over everything (the linear correlation's length); *window: the widest
 * dimension's window. */
static convgen_status tile_size(const cg_problem *p, const cg_tuning *tune, const lib_spec *s, bool along_dy,
                                int64_t max_n, int64_t *n, int64_t *window)
{
    int64_t untiled = 0, candidates[MAX_CANDIDATES];
    *window = 1;
    for (int d = 0; d < s->rank; ++d) {
        *window = window_of(&s->d[d], along_dy) > *window ? window_of(&s->d[d], along_dy) : *window;
        int64_t one_tile = 0; /* one overlap-save tile: the linear correlation's length */
        fft_basis_candidates(s->d[d].c.out + s->d[d].c.extent - 1, &one_tile, 1);
        untiled = one_tile > untiled ? one_tile : untiled;
    }
    int64_t want = 3 * *window > 16 ? 3 * *window : 16;
    if (max_n < FFT_MAX_N && want > max_n) /* fft-fused: at most its registers' transforms */
        want = max_n;
    int field;
    convgen_status st = fixed_tile_size(tune, p->rank, n, &field);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (*n && *n < *window)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld is below the kernel's extent %lld",
                       field, (long long)*n, (long long)*window);
    if (!*n && fft_basis_candidates(want, candidates, MAX_CANDIDATES) > 0)
        *n = candidates[0] < untiled ? candidates[0] : untiled;
    if (*n == 1) /* a correlation of one point: two hold it, and are the FFTs' smallest */
        *n = 2;
    return CONVGEN_SUCCESS;
}

/* Every dimension tiled at n points. */
static void set_tiles(lib_spec *s, int64_t n, bool along_dy)
{
    s->tiled = true;
    s->tiles = 1;
    s->points = 1;
    for (int d = 0; d < s->rank; ++d) {
        lib_dim *ld = &s->d[d];
        ld->size = n;
        ld->spectrum = d == s->rank - 1 ? n / 2 + 1 : n;
        ld->tile_step = n - window_of(ld, along_dy) + 1;
        ld->tiles = (covered_of(ld, along_dy) + ld->tile_step - 1) / ld->tile_step;
        s->tiles *= ld->tiles;
        s->points *= n;
    }
    s->bins = s->points / n * (n / 2 + 1);
}

/* fft-tiled: overlap-save tiles of one square transform that follows the kernel, not the image:
 * the smallest 2^a 3^b 5^c 7^d of at least 3 extents (and 16), where a tile then keeps most of
 * its outputs (extent 3: 14 of 16; 9: 19 of 27; 13: 28 of 40); the untiled size where that is
 * smaller; for fft-fused (max_n below convgen's largest FFT) at most max_n, its largest
 * register transform, as long as the tile holds the kernel. Each tile gives n_fft - extent + 1
 * valid outputs. */
convgen_status fc_tile_basis(const cg_problem *p, const cg_tuning *tune, int64_t max_n, lib_spec *s)
{
    int64_t n = 0, extent;
    convgen_status st = tile_size(p, tune, s, false, max_n, &n, &extent);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (n < extent || n > max_n)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "%s: tiles of %lld points for a kernel of %lld; its transforms "
                       "reach %lld", s->fused ? "fft-fused" : "fft-tiled", (long long)n, (long long)extent, (long long)max_n);
    set_tiles(s, n, false);
    s->role_tiles[0] = s->role_tiles[2] = s->tiles;
    return CONVGEN_SUCCESS;
}

/* fft-tiled's accgrad of a 3-D layer: overlap-save tiles along dy, whose 2 x 2 x 2 shifts of
 * convolution in parts would cost a GEMM each over blocks of half a transform. dw = sum over o
 * of x[o + f - pad] dy[o] is cut into dy's disjoint blocks of `step` = n - taps + 1 points; tile
 * t correlates dy's block t (the tile's rest zero) with the n points of x from t step - pad, so
 * every lag f < taps is whole in it and nothing wraps. The products are summed over the tiles
 * and images per bin by one GEMM, and one inverse gives dw. n is chosen as fprop's tile is, from
 * the taps' extent. */
static convgen_status accgrad_tile_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    int64_t n = 0, taps;
    convgen_status st = tile_size(p, tune, s, true, FFT_MAX_N, &n, &taps);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (n < taps)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: accgrad's tiles of %lld points for %lld taps",
                       (long long)n, (long long)taps);
    set_tiles(s, n, true);
    s->role_tiles[0] = s->role_tiles[1] = s->tiles;
    s->role_tiles[2] = 1;
    return CONVGEN_SUCCESS;
}

/* Programs have room for this many GEMM steps beside their 9 others. */
enum { MAX_SHIFTS = CG_MAX_STEPS - 9 };

/* fft-tiled's accgrad, convolution in parts (fft_parts): x and dy both cut into blocks of
 * `block` points, transformed once each at n >= 2 block - 1 points, so that the circular
 * correlation of two blocks holds all their lags. n is the smallest 2^a 3^b 5^c 7^d of at
 * least 16 and 2 e - 1 for the widest kernel's e taps: then block >= e - 1 and each dimension
 * has at most two shifts, the products of a shift summed over every block pair it joins. */
convgen_status fc_parts_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    if (p->rank > 2) /* 3-D accgrad takes tiles along dy instead (accgrad_tile_basis) */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: convolution in parts is for rank 1 and 2, not %d",
                       p->rank);
    int64_t taps = 1, candidates[MAX_CANDIDATES];
    for (int d = 0; d < s->rank; ++d) /* accgrad's outputs are the dilated kernel's taps */
        taps = s->d[d].c.out > taps ? s->d[d].c.out : taps;
    int64_t want = 2 * taps - 1 > 16 ? 2 * taps - 1 : 16, n = 0;
    int field;
    convgen_status st = fixed_tile_size(tune, p->rank, &n, &field);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (!n && fft_basis_candidates(want, candidates, MAX_CANDIDATES) > 0)
        n = candidates[0];
    if (n < 2 || n > FFT_MAX_N)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: accgrad's blocks for %lld taps need a transform of "
                       "%lld points; convgen's reach %d", (long long)taps, (long long)(n ? n : want), FFT_MAX_N);
    s->tiled = s->parts = true;
    s->points = 1;
    int64_t shifts = 1;
    for (int d = 0; d < s->rank; ++d) {
        lib_dim *ld = &s->d[d];
        char err[160];
        if (!fft_parts_for(&ld->c, (n + 1) / 2, n, &ld->parts, err, sizeof err))
            return cg_fail(CONVGEN_ERROR_INTERNAL, "fft-tiled: dimension %d: %s", d, err);
        ld->size = n;
        ld->spectrum = d == s->rank - 1 ? n / 2 + 1 : n;
        ld->tiles = 1; /* no overlap-save tiles: the output is the taps, summed from the shifts */
        s->points *= n;
        shifts *= ld->parts.shifts;
    }
    if (shifts > MAX_SHIFTS)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld: accgrad's blocks of %lld points "
                       "meet in %lld shifts, more than %d", field, (long long)n, (long long)((n + 1) / 2),
                       (long long)shifts, MAX_SHIFTS);
    s->bins = s->points / n * (n / 2 + 1);
    s->role_tiles[0] = s->role_tiles[1] = 1;
    for (int d = 0; d < s->rank; ++d) {
        s->role_tiles[0] *= fc_place_part(s, 0, d).tiles;
        s->role_tiles[1] *= fc_place_part(s, 1, d).tiles;
    }
    s->role_tiles[2] = shifts;
    return CONVGEN_SUCCESS;
}

/* Stride 1, rank 1 to 3; the tiling, the products and the clipped outputs are one program in
 * every rank. */
static convgen_status fft_tiled_applicable(const cg_problem *p, convgen_pass pass)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err)) /* the message names the field */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "%s", err);
    return CONVGEN_SUCCESS;
}

static convgen_status fft_tiled_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                         const cg_tuning *tune, cg_generated *out)
{
    /* fft-tiled's transform is its tile: no transform of the whole correlation to size */
    lib_spec s;
    fc_spec_init(&s, true);
    convgen_status st = fc_correlation_dims(p, pass, "fft-tiled", &s);
    if (st == CONVGEN_SUCCESS)
        st = pass != CONVGEN_ACCGRAD ? fc_tile_basis(p, tune, FFT_MAX_N, &s)
             : p->rank == 3         ? accgrad_tile_basis(p, tune, &s)
                                    : fc_parts_basis(p, tune, &s);
    /* convgen's 3-D transforms reach FFT_MAX_VOLUME_N points a side; tiles beyond are cuFFT's */
    if (st == CONVGEN_SUCCESS && p->rank == 3 && s.d[0].size > FFT_MAX_VOLUME_N)
        s.generated = false;
    return st == CONVGEN_SUCCESS ? fc_program(p, pass, t, tune, &s, out) : st;
}

/* AUTO's candidates of fft-tiled: its own tile and, for a 3-D layer, two larger ones (the
 * smallest 2^a 3^b 5^c 7^d of at least 1.3 and 1.7 times its own, short of the untiled
 * correlation) at every effort: with a batch of one the weights' spectra, which grow with the
 * tile, set the time as much as the tiles' overlap, so the best tile is the bench's (or the cost
 * model's) to say. 3-D tiles by both GEMMs too, unless the caller fixed the GEMM or TF32:
 * cuBLAS's with its transposes, or convgen's on the FFT kernels' own spectra (a tile past
 * convgen's 3-D transforms, whose spectra are cuFFT's, takes cuBLAS's either way). 1-D and 2-D
 * tiles keep the planner's GEMM, cuBLAS's. */
static int fft_tiled_variants(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed,
                              cg_tuning *out, int max)
{
    (void)effort; /* every effort: see above */
    (void)pass;   /* accgrad's 3-D tiles follow the taps as fprop's follow the kernel */
    bool tile_fixed = false, both_gemms = p->rank == 3 && !fixed->tf32 && !fixed->gemm;
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        tile_fixed |= fixed->fourier_size[d] != 0;
    if (p->rank != 3)
        return cg_variants_add(out, 0, max, fixed, false);
    int64_t extent = 1, untiled = 0, candidates[MAX_CANDIDATES];
    for (int d = 0; d < p->rank; ++d) {
        int64_t e = (p->kernel[d] - 1) * p->dilation[d] + 1, span = p->in[d] + p->pad_before[d] + p->pad_after[d];
        extent = e > extent ? e : extent;
        untiled = span > untiled ? span : untiled;
    }
    int64_t own = 3 * extent > 16 ? 3 * extent : 16, base = fixed->fourier_size[0];
    if (!base) /* the planner's own tile: no larger than the untiled correlation */
        base = fft_basis_candidates(own, candidates, MAX_CANDIDATES) > 0 && candidates[0] < untiled ? candidates[0]
                                                                                                : untiled;
    /* a tile past convgen's 3-D transforms is cuFFT's, whose spectra only cuBLAS's GEMM reads */
    int n = cg_variants_add(out, 0, max, fixed, both_gemms && base <= FFT_MAX_VOLUME_N);
    if (tile_fixed)
        return n;
    for (int i = 0; i < 2; ++i) {
        double factor = i == 0 ? 1.3 : 1.7;
        int64_t want = (int64_t)(factor * (double)own + 0.999);
        if (fft_basis_candidates(want, candidates, MAX_CANDIDATES) <= 0 || candidates[0] >= untiled)
            break;
        cg_tuning t = *fixed;
        for (int d = 0; d < p->rank; ++d)
            t.fourier_size[d] = candidates[0];
        n = cg_variants_add(out, n, max, &t, both_gemms && candidates[0] <= FFT_MAX_VOLUME_N);
    }
    return n;
}

static const cg_knob tiled_knobs[] = {
    {"fourier", cg_fourier_print, cg_fourier_parse}, {"gemm", cg_gemm_print, cg_gemm_parse}, {NULL, NULL, NULL}};

const cg_planner cg_fft_tiled_planner = {
    .algo = CONVGEN_ALGO_FFT_TILED,
    .name = "fft-tiled",
    .flags = CG_PLANNER_SUB_BATCHES,
    .applicable = fft_tiled_applicable,
    .generate = fft_tiled_generate,
    .knobs = tiled_knobs,
    .variants = fft_tiled_variants,
};
