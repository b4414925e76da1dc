/* The "cufft" algorithm: FFT convolution as the fbfft paper's library design (section 3), for
 * stride-1 layers of rank 1 to 3 and all three passes.
 *
 * Each pass is a sum over channels of correlations (fft_conv_dims): a signal tensor S correlated
 * with a kernel tensor K into an output tensor O. Both inputs are zero-padded into a common
 * Fourier basis B (a generated pad kernel, skipped where the operand already is its padded
 * image), transformed by cuFFT R2C, transposed to frequency-major [bin][image] (a generated
 * kernel), multiplied per frequency bin by one cuBLAS strided-batched complex GEMM that also
 * sums over the channels, transposed back, transformed by cuFFT C2R, and clipped (a generated
 * kernel: the valid outputs, or accgrad's taps, scaled by 1 / prod(B)).
 *
 * The "fft" algorithm runs the same program with convgen's own FFT kernels (issue 4) in place of
 * cuFFT, on one square basis of at most 256 points per side: where an operand sits in the padded
 * image by a plain shift (the signal; fprop's weights; accgrad's dy) the R2C reads it through its
 * window (clipped loads) and no pad kernel runs, and where the output does (all but accgrad with
 * dilated or flipped taps) the C2R writes it through its window, scaled, and no clip kernel runs.
 * Both transforms use the transposed, digit-reversed spectrum layout: the product per bin
 * needs no particular order, only the same one on both sides.
 *
 * cuFFT can write and read the frequency-major layout itself through its strides, which was
 * the first version here: on the H100 its strided transforms of L2 (8192 64x64 images) took
 * 0.83 ms forward and 1.13 ms inverse, against about 0.21 ms each for the natural layout.
 *
 *   pass     S        K        O        per bin, row-major
 *   fprop    x[n][c]  w[k][c]  y[n][k]  O[n][k] = sum_c S[n][c] conj(K[k][c])
 *   bprop    dy[n][k] w[k][c]  dx[n][c] O[n][c] = sum_k S[n][k] K[k][c]  (K mirrored, see below)
 *   accgrad  x[n][c]  dy[n][k] dw[k][c] O[k][c] = sum_n S[n][c] conj(K[n][k])
 *
 * cuBLAS sees each stored row-major [a][b] matrix as the column-major b x a matrix M, so the
 * products are, in its terms: fprop O = op_C(K) S (m = k), bprop O = K S (m = c), accgrad
 * O = S op_C(K) (m = c), op_C being cuBLAS's conjugate transpose (gemm_step).
 *
 * A correlation's spectrum is S times the conjugate of K's. cuBLAS can conjugate only with a
 * transpose, which bprop's product does not have, so bprop places the kernel's taps mirrored
 * modulo B (position -t instead of t): the transform of the mirror is the conjugate.
 *
 * Circular correlation over B equals the linear one for outputs 0 .. out - 1 when B >= out +
 * extent - 1, the rest of the padded signal being zero or cut (a negative bprop pad_before cuts
 * its head, a large pad its tail), and for less where the signal's head of zeros takes the
 * wrapped reads (circular_length).
 *
 * The "fft-tiled" algorithm runs the fft program on tiles: fprop and bprop cut the signal into
 * overlap-save tiles of a transform that follows the kernel (tile_basis), accgrad cuts x and dy
 * into disjoint blocks, convolution in parts (parts_basis, place_part, parts_gemm_steps). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft_kernel.h"
#include "fft_problem.h"
#include "fft_tiling.h"
#include "generate.h"
#include "templates.h"
#include "util.h"
#include "values.h"

enum {
    THREADS = 256,
    MAX_GRID_Y = 65535,
    /* Workspace buffers start on this boundary (cuFFT and cuBLAS want 256-byte alignment). */
    ALIGN = 256,
    MAX_CANDIDATES = 64,
    TILE = 32,     /* transposes: 32 x 32 complex tiles ... */
    TILE_ROWS = 8, /* ... moved by 32 x 8 threads */
};

/* Per spatial dimension: the correlation, the Fourier size, and how each operand sits in it. */
typedef struct lib_dim {
    fft_conv_dim c;
    int64_t tiles, tile_step;  /* tiled: overlap-save tiles along this dimension; else 1, 0 */
    fft_parts parts;           /* fft-tiled's accgrad: the blocks along this dimension */
    int64_t size;        /* B */
    int64_t spectrum;    /* bins along this dimension: B, or B / 2 + 1 for the last */
} lib_dim;

typedef cg_placement placement;

typedef struct lib_spec {
    int rank;
    lib_dim d[CONVGEN_MAX_RANK];
    int64_t points, bins;           /* prod(B), and bins per spectrum */
    int64_t images[3];              /* S, K, O: per chunk where sliced */
    int64_t batch;                  /* images of the batch per chunk (ZNNi's sub-batching) */
    int64_t chunks;                 /* n / batch */
    const char *names[3];           /* the operands: "x", "w", "y", ... */
    bool identity[2];               /* S, K: the operand is its own padded image (no pad kernel) */
    bool generated;                 /* the fft algorithm: convgen's FFT kernels instead of cuFFT */
    bool tiled;                     /* fft-tiled: overlap-save tiles of the signal and the output */
    bool parts;                     /* fft-tiled's accgrad: convolution in parts */
    bool fused;                     /* fft-fused: one kernel per tile after the weights' R2C */
    int64_t tiles;                  /* tiled: tiles per image, the product of the dimensions' */
    /* Padded images per image of S, K and O: overlap-save tiles (S, O); parts' blocks (S, K)
     * and shifts (O); 1 where untiled. */
    int64_t role_tiles[3];
    int64_t groups[3][2];           /* each operand's images as [batch-like][channel-like] */
    int64_t fft_work_offset;        /* generated: the FFT kernels' own workspace, at the end */
    /* Byte offsets into the workspace: the padded real images (S, K and O in turn), the
     * natural-layout spectra (the same), and the three frequency-major spectra. */
    int64_t real_offset, natural_offset, spectrum_offset[3], workspace;
    int64_t estimate; /* the workspace with cuFFT's work area estimated */
} lib_spec;

static const char *const operand_names[3][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}, {"x", "dy", "dw"}};

static int64_t align_up(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* Convolution in parts (accgrad): x (role 0) and dy (role 1) cut into blocks of `block`
 * positions, each block at the start of its own padded image (the rest zero), images
 * [block][image] over a grid of blocks. Along every dimension but the first, dy's grid is as
 * wide as x's, so that block b of dy and block b + d of x are one fixed number of blocks apart
 * for each shift d: the dy blocks past dy's end are zero, so the pairs that wrap into the next
 * row contribute nothing. x's grid has one row more where those pairs reach past its end. */
static placement place_part(const lib_spec *s, int role, int d)
{
    const lib_dim *ld = &s->d[d];
    const fft_parts *pt = &ld->parts;
    placement pl = {.base = role == 0 ? ld->c.pad_before : 0, .step = 1, .count = role == 0 ? ld->c.in : ld->c.extent,
                    .limit = pt->block, .tile_step = pt->block};
    bool extra_row = d == 0 && s->rank == 2 && s->d[1].parts.shifts > 1;
    pl.tiles = role == 0 ? pt->x_blocks + (extra_row ? 1 : 0) : d == 0 ? pt->dy_blocks : pt->x_blocks;
    return pl;
}

/* The placement of S (role 0), K (role 1) or the output O (role 2, which reads from it). */
static placement place(const lib_spec *s, convgen_pass pass, int role, int d)
{
    const fft_conv_dim *c = &s->d[d].c;
    if (s->parts && role < 2)
        return place_part(s, role, d);
    placement pl = {.limit = s->d[d].size, .tiles = 1};
    if (role != 1 && s->tiled) /* tiles of the signal and of the valid outputs */
        pl.tiles = s->d[d].tiles, pl.tile_step = s->d[d].tile_step;
    if (role == 0) { /* the signal, shifted by the pad; positions past what the outputs read are
                      * cut, which only spares loads (nothing there reaches an output) */
        int64_t reach = c->out + c->extent - 1;
        pl.base = c->pad_before, pl.step = 1, pl.count = c->in;
        pl.limit = reach < pl.limit && !s->tiled ? reach : pl.limit;
    } else if (role == 1 && pass == CONVGEN_ACCGRAD) { /* dy is the kernel: its `extent` positions */
        pl.base = 0, pl.step = 1, pl.count = c->extent;
    } else if (role == 1) { /* weight tap f at fft_conv_dim_tap(f): affine in f */
        pl.base = fft_conv_dim_tap(c, 0);
        pl.step = c->taps > 1 ? fft_conv_dim_tap(c, 1) - pl.base : 1;
        pl.count = c->taps;
        pl.mirror = pass == CONVGEN_BPROP;
    } else if (pass == CONVGEN_ACCGRAD) { /* the weight gradient's taps among the outputs */
        pl.base = fft_conv_dim_tap(c, 0);
        pl.step = c->taps > 1 ? fft_conv_dim_tap(c, 1) - pl.base : 1;
        pl.count = c->taps;
        if (s->parts) /* each tap summed from the shifts that reach it */
            pl.shifts = s->d[d].parts.shifts, pl.block = s->d[d].parts.block;
    } else { /* the valid outputs */
        pl.base = 0, pl.step = 1, pl.count = c->out;
    }
    return pl;
}

/* The kernel op of a pad (role 0 or 1) or the clip (role 2), for the CPU evaluation. */
static cg_kernel_op operand_op(const lib_spec *s, convgen_pass pass, int role)
{
    cg_kernel_op op = {.kind = role == 2 ? CG_OP_CLIP : CG_OP_PAD, .operand = role == 2 ? 2 : role, .rank = s->rank,
                       .images = s->images[role], .real_offset = s->real_offset, .scale = 1.0 / (double)s->points,
                       .tiles = s->role_tiles[role]};
    op.images /= op.tiles; /* the operand's own images; the padded ones are [tile][image] */
    for (int d = 0; d < s->rank; ++d) {
        op.size[d] = s->d[d].size;
        op.dims[d] = place(s, pass, role, d);
    }
    return op;
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

/* The smallest 2^a 3^b 5^c 7^d that holds the circular correlation, unless the caller fixed it. */
/* The pass's correlation along each dimension (fft_conv_dims), for every FFT algorithm. */
static convgen_status correlation_dims(const cg_problem *p, convgen_pass pass, const char *algo, lib_spec *s)
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

/* cufft and fft: the correlation and one transform over all of it. */
static convgen_status choose_sizes(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s)
{
    convgen_status st = correlation_dims(p, pass, s->generated ? "fft" : "cufft", s);
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

/* True where the padding of operand `role` changes nothing: cuFFT can read the operand. */
static bool is_identity(const lib_spec *s, convgen_pass pass, int role)
{
    for (int d = 0; d < s->rank; ++d) {
        placement pl = place(s, pass, role, d);
        if (pl.base != 0 || pl.step != 1 || pl.mirror || pl.count != s->d[d].size || pl.limit < s->d[d].size)
            return false;
    }
    return true;
}

/* Images per operand for `batch` images of the batch per chunk, and the workspace: one real
 * buffer of padded images and one of natural spectra (each reused by S, K and O in turn), and
 * the three frequency-major spectra. */
static convgen_status size_buffers(const cg_problem *p, convgen_pass pass, int64_t batch, lib_spec *s)
{
    /* fft-tiled: every tile (block, shift) of every image; the products can pass 64 bits. */
    const int64_t *t = s->role_tiles, big = INT64_MAX;
    int64_t bt[3];
    bool ok = true;
    for (int r = 0; r < 3; ++r)
        ok &= cg_mul64(r == 2 && pass == CONVGEN_ACCGRAD ? p->k : batch, t[r], &bt[r]);
    const int64_t groups[3][3][2] = {{{bt[0], p->c}, {p->k, p->c}, {bt[2], p->k}},
                                     {{bt[0], p->k}, {p->k, p->c}, {bt[2], p->c}},
                                     {{bt[0], p->c}, {bt[1], p->k}, {bt[2], p->c}}};
    s->batch = batch;
    s->chunks = p->n / batch;
    int64_t most = 0, bytes = 0, at = 0;
    for (int r = 0; r < 3; ++r) {
        s->names[r] = operand_names[pass][r];
        ok &= cg_mul64(groups[pass][r][0], groups[pass][r][1], &s->images[r]);
        s->images[r] = ok ? s->images[r] : big;
        s->groups[r][0] = groups[pass][r][0], s->groups[r][1] = groups[pass][r][1];
        most = s->images[r] > most ? s->images[r] : most;
    }
    ok = ok && cg_mul64(most, s->points, &bytes) && cg_mul64(bytes, 4, &bytes);
    s->real_offset = 0;
    at = align_up(bytes);
    s->natural_offset = at;
    ok = ok && cg_mul64(most, s->bins, &bytes) && cg_mul64(bytes, 8, &bytes) && cg_add64(at, bytes, &at);
    at = align_up(at);
    for (int r = 0; r < 3 && ok; ++r) {
        s->spectrum_offset[r] = at;
        ok = cg_mul64(s->images[r], s->bins, &bytes) && cg_mul64(bytes, 8, &bytes) && cg_add64(at, bytes, &at);
        at = align_up(at);
    }
    /* cuBLAS takes int sizes and batch counts; the kernels index an image with 32 bits. */
    for (int r = 0; r < 3 && ok; ++r) {
        int64_t tensor_points = 1;
        for (int d = 0; d < s->rank; ++d)
            tensor_points *= place(s, pass, r, d).count;
        ok = groups[pass][r][0] <= INT32_MAX && groups[pass][r][1] <= INT32_MAX && s->images[r] <= INT32_MAX &&
             tensor_points <= INT32_MAX;
    }
    if (!ok || s->bins > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: the spectra of this layer do not fit 64-bit sizes");
    s->workspace = at;
    /* cuFFT's work area, which only a device can size; its plans here have needed at most
     * the size of the spectra they write. */
    return cg_mul64(most, s->bins * 8, &bytes) && cg_add64(at, bytes, &s->estimate)
               ? CONVGEN_SUCCESS
               : cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: the spectra of this layer do not fit 64-bit sizes");
}

/* ZNNi's sub-batching: the largest divisor of n whose chunks fit the workspace limit (with
 * cuFFT's work area estimated; the runtime checks the real one). The weights' spectra (fprop,
 * bprop) are made once; accgrad sums its chunks' products in the frequency domain. Without a
 * divisor that fits, the smallest chunks, which the runtime then reports as over the limit. */
static convgen_status choose_batch(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s)
{
    int64_t limit = tune ? tune->workspace_limit : 0, best = 1;
    convgen_status st = size_buffers(p, pass, p->n, s);
    if (st != CONVGEN_SUCCESS || !limit || s->estimate <= limit)
        return st;
    for (int64_t d = 1; d * d <= p->n; ++d) { /* divisors in pairs: d and n / d */
        if (p->n % d != 0)
            continue;
        const int64_t pair[2] = {d, p->n / d};
        for (int i = 0; i < 2; ++i)
            if (pair[i] > best && size_buffers(p, pass, pair[i], s) == CONVGEN_SUCCESS && s->estimate <= limit)
                best = pair[i];
    }
    return size_buffers(p, pass, best, s);
}

static convgen_status cufft_applicable(const cg_problem *p, convgen_pass pass)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: %s", err);
    return CONVGEN_SUCCESS;
}

static tmpl_value *header_lines(const cg_problem *p, convgen_pass pass, const lib_spec *s, const cg_kernel *k,
                                const char *what, const char *template_name)
{
    char layer[256], basis[64];
    cg_problem_describe(p, layer, sizeof layer);
    int64_t sizes[CONVGEN_MAX_RANK];
    for (int d = 0; d < s->rank; ++d)
        sizes[d] = s->d[d].size;
    cg_dims_text(sizes, s->rank, basis, sizeof basis);
    tmpl_value *h = tmpl_list();
    const char *algo = s->fused ? "fft-fused" : s->tiled ? "fft-tiled" : s->generated ? "fft" : "cufft", *lib = s->generated ? "convgen's" : "cuFFT";
    cg_value_line(h, "convgen %s: %s algorithm, %s: %s", CG_GENERATOR_VERSION, algo, convgen_pass_name(pass), what);
    cg_value_line(h, "layer: %s", layer);
    cg_value_line(h, "%s", "");
    if (s->fused) {
        cg_value_line(h, "plan: %s's R2C into a %s Fourier basis (after a pad unless a plain shift), then per",
                      s->names[1], basis);
        cg_value_line(h, "  tile one kernel: %s's tile transformed, multiplied by %s's spectra and summed over the",
                      s->names[0], s->names[1]);
        cg_value_line(h, "  channels, transformed back, its valid outputs stored into %s (generator/cufft_conv.c)",
                      s->names[2]);
    } else if (s->parts) {
        cg_value_line(h, "plan: %s and %s in blocks of %lld points, each padded into a %s Fourier basis, %s R2C,",
                      s->names[0], s->names[1], (long long)s->d[0].parts.block, basis, lib);
        cg_value_line(h, "  transpose to [bin][image], one cuBLAS CGEMM per shift between blocks (%lld) over %lld bins,",
                      (long long)s->role_tiles[2], (long long)s->bins);
        cg_value_line(h, "  transpose back, %s C2R, clip summing each tap from the shifts that reach it", lib);
        cg_value_line(h, "  (generator/cufft_conv.c); block grids of %lld (%s) and %lld (%s, as wide as %s's) an image",
                      (long long)s->role_tiles[0], s->names[0], (long long)s->role_tiles[1], s->names[1], s->names[0]);
    } else {
        cg_value_line(h, "plan: pad %s and %s into a %s Fourier basis%s, %s R2C, transpose to [bin][image], one",
                      s->names[0], s->names[1], basis, s->generated ? " (the R2C's window pads a plain shift)" : "", lib);
        cg_value_line(h, "  cuBLAS strided-batched CGEMM over %lld bins, transpose back, %s C2R, clip into %s%s",
                      (long long)s->bins, lib, s->names[2], s->generated ? " (or the C2R's window)" : "");
        cg_value_line(h, "  (generator/cufft_conv.c)");
    }
    int64_t steps[CONVGEN_MAX_RANK];
    char valid[64];
    for (int d = 0; d < s->rank; ++d)
        steps[d] = s->d[d].tile_step;
    cg_dims_text(steps, s->rank, valid, sizeof valid);
    if (s->tiled && !s->parts)
        cg_value_line(h, "overlap-save: %lld tiles an image, each giving %s valid outputs", (long long)s->tiles, valid);
    if (s->chunks > 1)
        cg_value_line(h, "sub-batches: %lld chunks of %lld of the batch's images each, to stay under the workspace limit",
                      (long long)s->chunks, (long long)s->batch);
    cg_value_line(h, "launch: grid (%u, %u, 1), block (%u, %u, 1)", k->grid[0], k->grid[1], k->block[0], k->block[1]);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/%s or generator/cufft_conv.c instead.", template_name);
    return h;
}

/* The kernel's dimensions: the padded image's sizes and strides and the operand's placement. */
static tmpl_value *dims_value(convgen_pass pass, const lib_spec *s, int role)
{
    tmpl_value *list = tmpl_list();
    int64_t padded_stride = 1, tensor_stride = 1;
    for (int d = s->rank - 1; d >= 0; --d) {
        placement pl = place(s, pass, role, d);
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "i", d);
        tmpl_set_int(v, "size", s->d[d].size);
        tmpl_set_int(v, "base", pl.base);
        char t[48]; /* the source index times the step, from the position v */
        if (pl.step < 0)
            snprintf(t, sizeof t, "%lldll - v", (long long)pl.base);
        else if (pl.base)
            snprintf(t, sizeof t, "v %c %lldll", pl.base < 0 ? '+' : '-', (long long)(pl.base < 0 ? -pl.base : pl.base));
        else
            snprintf(t, sizeof t, "v");
        tmpl_set_str(v, "from_v", t);
        tmpl_set_int(v, "step", pl.step < 0 ? -pl.step : pl.step);
        tmpl_set_bool(v, "down", pl.step < 0);
        tmpl_set_int(v, "count", pl.count);
        tmpl_set_int(v, "limit", pl.limit);
        tmpl_set_bool(v, "mirror", pl.mirror);
        tmpl_set_int(v, "padded_stride", padded_stride);
        tmpl_set_int(v, "tensor_stride", tensor_stride);
        tmpl_set_int(v, "tiles", pl.tiles);
        tmpl_set_int(v, "tile_step", pl.tile_step);
        if (pl.tile_step > 0) /* the clip's output index over the tile step */
            tmpl_map_set(v, "tile_div", cg_value_magic((uint32_t)pl.tile_step, pl.count - 1));
        padded_stride *= s->d[d].size;
        tensor_stride *= pl.count;
        tmpl_list_push(list, v);
    }
    return list;
}

/* The digits of the per-image point index over `sizes` (outermost first), innermost first. */
static tmpl_value *point_digits(const int64_t *sizes, int rank, bool *failed)
{
    tmpl_value *list = tmpl_list();
    int64_t max = 1;
    for (int d = 0; d < rank; ++d)
        max *= sizes[d];
    max -= 1;
    for (int d = rank - 1; d > 0; --d) {
        tmpl_value *g = tmpl_map(), *m = cg_value_magic((uint32_t)sizes[d], max);
        *failed |= !m;
        tmpl_set_int(g, "i", d);
        tmpl_set_int(g, "size", sizes[d]);
        tmpl_map_set(g, "div", m);
        tmpl_list_push(list, g);
        max /= sizes[d];
    }
    return list;
}

/* A kernel over every point of `images` images of `points` points each: x over the points,
 * y (looping) over the images. */
static void launch_geometry(int64_t points, int64_t images, cg_kernel *k)
{
    k->grid[0] = (unsigned)((points + THREADS - 1) / THREADS);
    k->grid[1] = (unsigned)(images < MAX_GRID_Y ? images : MAX_GRID_Y);
    k->grid[2] = 1;
    k->block[0] = THREADS, k->block[1] = k->block[2] = 1;
}

/* Convolution in parts: every shift of the dimensions' shifts (the last fastest), with the
 * offset d block of its lags and the padded images' stride along each dimension. */
static tmpl_value *shifts_value(const lib_spec *s)
{
    tmpl_value *list = tmpl_list();
    int64_t d[CONVGEN_MAX_RANK] = {0}, index = 0;
    bool more = true;
    while (more) {
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
        int64_t at[CONVGEN_MAX_RANK];
        char name[64];
        memcpy(at, d, sizeof at);
        cg_dims_text(at, s->rank, name, sizeof name);
        tmpl_set_str(shift, "name", name);
        tmpl_set_int(shift, "index", index++);
        tmpl_map_set(shift, "lags", lags);
        tmpl_list_push(list, shift);
        more = false;
        for (int i = s->rank - 1; i >= 0 && !more; --i) /* the next multi-index */
            if (++d[i] < s->d[i].parts.shifts)
                more = true;
            else
                d[i] = 0;
    }
    return list;
}

static convgen_status render_kernel(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, cg_kernel *k)
{
    bool clip = role == 2, failed = false;
    int64_t sizes[CONVGEN_MAX_RANK], points = 1;
    for (int d = 0; d < s->rank; ++d) {
        sizes[d] = clip ? place(s, pass, 2, d).count : s->d[d].size;
        points *= sizes[d];
    }
    snprintf(k->name, sizeof k->name, "convgen_%s_%s_%s_%s", s->generated ? "fft" : "cufft", convgen_pass_name(pass),
             clip ? "clip" : "pad",
             s->names[role]);
    /* The clip loops over the output's images; a tiled one reads each from all its tiles (or
     * shifts). */
    int64_t loop_images = clip ? s->images[2] / s->role_tiles[2] : s->images[role];
    launch_geometry(points, loop_images, k);
    char what[96];
    snprintf(what, sizeof what, clip ? "the clip of %s from its padded images" : "the zero padding of %s",
             s->names[role]);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, pass, s, k, what, "cufft_conv.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_bool(ctx, "clip", clip);
    tmpl_set_str(ctx, "operand", s->names[role]);
    tmpl_set_str(ctx, "source", role == 1 ? "in1" : "in0");
    tmpl_set_int(ctx, "threads", THREADS);
    tmpl_set_int(ctx, "points", points);
    tmpl_set_int(ctx, "padded_points", s->points);
    tmpl_set_int(ctx, "images", loop_images);
    tmpl_set_int(ctx, "real_offset", s->real_offset / 4);
    char scale[32];
    snprintf(scale, sizeof scale, "%.9ef", 1.0 / (double)s->points); /* cuFFT's inverse is unscaled */
    tmpl_set_str(ctx, "scale", scale);
    tmpl_map_set(ctx, "dims", dims_value(pass, s, role));
    tmpl_map_set(ctx, "digits", point_digits(sizes, s->rank, &failed));
    /* Tiled: padded images [tile][image]; the tile index splits over the dimensions' tiles. */
    int64_t tiles = s->role_tiles[role];
    tmpl_set_bool(ctx, "tiled", tiles > 1 && !(clip && s->parts));
    tmpl_set_bool(ctx, "parts", clip && s->parts);
    if (clip && s->parts)
        tmpl_map_set(ctx, "shifts", shifts_value(s));
    else if (tiles > 1) {
        int64_t own = s->images[role] / tiles, inner_tiles = s->rank == 2 ? place(s, pass, role, 1).tiles : 1;
        tmpl_set_int(ctx, "tile_images", own);
        tmpl_set_int(ctx, "inner_tiles", inner_tiles);
        tmpl_value *by_images = cg_value_magic((uint32_t)own, s->images[role] - 1);
        tmpl_value *by_inner = cg_value_magic((uint32_t)inner_tiles, tiles - 1);
        failed |= !by_images || !by_inner;
        tmpl_map_set(ctx, "image_div", by_images);
        tmpl_map_set(ctx, "inner_div", by_inner);
    }
    int64_t tensor_points = 1; /* the operand's points per image (the clip's are `points`) */
    for (int d = 0; d < s->rank; ++d)
        tensor_points *= place(s, pass, role, d).count;
    tmpl_set_int(ctx, "tensor_points", tensor_points);
    convgen_status st = failed        ? CONVGEN_ERROR_INTERNAL /* cg_value_magic said why */
                        : tmpl_ok(ctx) ? cg_render_template("cufft_conv.cu", ctx, &k->source)
                                       : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building a cufft context");
    tmpl_unref(ctx);
    return st;
}

/* cuFFT between the real images (the operand itself where its padding is the identity) and
 * the natural spectra. */
static cg_step fft_step(const lib_spec *s, int role, bool inverse, int phase)
{
    cg_step st = {.kind = CG_STEP_FFT, .phase = phase};
    st.fft.rank = s->rank;
    for (int d = 0; d < s->rank; ++d)
        st.fft.n[d] = s->d[d].size;
    st.fft.batch = s->images[role];
    st.fft.inverse = inverse;
    st.fft.real_operand = role < 2 && s->identity[role] ? role : -1;
    st.fft.real_offset = s->real_offset;
    st.fft.spectrum_offset = s->natural_offset;
    return st;
}

/* [rows][cols] complex values at byte src into [cols][rows] at byte dst. */
static convgen_status render_transpose(const cg_problem *p, convgen_pass pass, const lib_spec *s, const char *what,
                                       int64_t rows, int64_t cols, int64_t src, int64_t dst, cg_kernel *k)
{
    int64_t row_tiles = (rows + TILE - 1) / TILE;
    k->grid[0] = (unsigned)((cols + TILE - 1) / TILE);
    k->grid[1] = (unsigned)(row_tiles < MAX_GRID_Y ? row_tiles : MAX_GRID_Y);
    k->grid[2] = 1;
    k->block[0] = TILE, k->block[1] = TILE_ROWS, k->block[2] = 1;
    snprintf(k->name, sizeof k->name, "convgen_%s_%s_transpose_%s", s->generated ? "fft" : "cufft",
             convgen_pass_name(pass), what);
    char text[96];
    snprintf(text, sizeof text, "the transposition of %s's spectra", what);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, pass, s, k, text, "transpose.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "tile", TILE);
    tmpl_set_int(ctx, "tile_rows", TILE_ROWS);
    tmpl_set_int(ctx, "rows", rows);
    tmpl_set_int(ctx, "cols", cols);
    tmpl_set_int(ctx, "src_offset", src / 4);
    tmpl_set_int(ctx, "dst_offset", dst / 4);
    convgen_status st = tmpl_ok(ctx) ? cg_render_template("transpose.cu", ctx, &k->source)
                                     : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building a transpose context");
    tmpl_unref(ctx);
    return st;
}

/* The per-bin products (see the table at the top), one strided batch over the bins. A stored
 * row-major [a][b] matrix is cuBLAS's column-major b x a, leading dimension b. */
static cg_step gemm_step(const cg_problem *p, convgen_pass pass, const lib_spec *s)
{
    cg_step st = {.kind = CG_STEP_GEMM, .phase = 1};
    /* fprop and bprop: the rows are the signal's images (all their tiles, for fft-tiled). */
    const int64_t S = s->spectrum_offset[0], K = s->spectrum_offset[1];
    const int64_t nb = pass == CONVGEN_ACCGRAD ? s->groups[1][0] : s->groups[0][0]; /* parts: dy's blocks too */
    const int64_t S_images = s->images[0], K_images = s->images[1];
    switch (pass) {
    case CONVGEN_FPROP: /* y (k x n) = op_C(w: c x k) x (c x n) */
        st.gemm = (cg_gemm_step){.transa = 'C', .transb = 'N', .m = p->k, .n = nb, .k = p->c,
                                 .a_offset = K, .lda = p->c, .a_stride = K_images,
                                 .b_offset = S, .ldb = p->c, .b_stride = S_images, .ldc = p->k};
        break;
    case CONVGEN_BPROP: /* dx (c x n) = w mirrored (c x k) dy (k x n) */
        st.gemm = (cg_gemm_step){.transa = 'N', .transb = 'N', .m = p->c, .n = nb, .k = p->k,
                                 .a_offset = K, .lda = p->c, .a_stride = K_images,
                                 .b_offset = S, .ldb = p->k, .b_stride = S_images, .ldc = p->c};
        break;
    default: /* dw (c x k) = x (c x n) op_C(dy: k x n), summed over the chunks */
        st.gemm = (cg_gemm_step){.transa = 'N', .transb = 'C', .m = p->c, .n = p->k, .k = nb,
                                 .a_offset = S, .lda = p->c, .a_stride = S_images,
                                 .b_offset = K, .ldb = p->k, .b_stride = K_images, .ldc = p->c,
                                 .accumulate = true};
        break;
    }
    st.gemm.c_offset = s->spectrum_offset[2];
    st.gemm.c_stride = s->images[2];
    st.gemm.batch = s->bins;
    return st;
}

/* The programs below have at most 9 + MAX_SHIFTS steps and 9 kernels. */
_Static_assert(CG_MAX_STEPS >= 9 + 4 && CG_MAX_KERNELS >= 9,
               "cufft's step programs (parts: 9 steps and the 2 x 2 shifts' GEMMs) do not fit cg_generated");

/* Appends a step of `phase`; kernels get the next kernel slot, rendered by the caller. Library
 * steps are then overwritten whole by fft_step or gemm_step, which set the same phase. */
static cg_step *add_step(cg_generated *out, cg_step_kind kind, int phase)
{
    cg_step *st = &out->steps[out->step_count++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->phase = phase;
    if (kind == CG_STEP_KERNEL)
        st->kernel = out->kernel_count++;
    return st;
}

/* Convolution in parts: one GEMM per shift d, the shift's dw spectra (c x k) = x's blocks (c x
 * blocks of the chunk) op_C(dy's blocks), x's taken from the shift's number of blocks on (see
 * place_part), each summed over every block and image of the chunk (and over the chunks). */
static void parts_gemm_steps(const cg_problem *p, const lib_spec *s, cg_generated *out)
{
    int64_t d[CONVGEN_MAX_RANK] = {0};
    for (int64_t shift = 0; shift < s->role_tiles[2]; ++shift) {
        int64_t ahead = 0, pitch = 1; /* blocks of x between block b and block b + d */
        for (int i = s->rank - 1; i >= 0; --i) {
            ahead += d[i] * pitch;
            pitch *= place_part(s, 0, i).tiles;
        }
        cg_step *st = add_step(out, CG_STEP_GEMM, 1);
        *st = gemm_step(p, CONVGEN_ACCGRAD, s);
        st->gemm.a_offset += ahead * s->batch * p->c * 8;
        st->gemm.c_offset += shift * p->k * p->c * 8;
        for (int i = s->rank - 1; i >= 0; --i) { /* the next shift, the last dimension fastest */
            if (++d[i] < s->d[i].parts.shifts)
                break;
            d[i] = 0;
        }
    }
}

/* A pad (role 0 or 1) or clip (role 2) kernel step. */
static convgen_status operand_step(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, int phase,
                                   cg_generated *out)
{
    cg_step *st = add_step(out, CG_STEP_KERNEL, phase);
    st->op = operand_op(s, pass, role);
    return render_kernel(p, pass, s, role, &out->kernels[st->kernel]);
}

/* A transpose kernel step: complex [rows][cols] at byte src into [cols][rows] at byte dst. */
static convgen_status transpose_step(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, bool forward,
                                     int phase, cg_generated *out)
{
    int64_t images = s->images[role], natural = s->natural_offset, spectra = s->spectrum_offset[role];
    cg_step *st = add_step(out, CG_STEP_KERNEL, phase);
    st->op = (cg_kernel_op){.kind = CG_OP_TRANSPOSE, .rows = forward ? images : s->bins, .cols = forward ? s->bins : images,
                            .src = forward ? natural : spectra, .dst = forward ? spectra : natural};
    return render_transpose(p, pass, s, s->names[role], st->op.rows, st->op.cols, st->op.src, st->op.dst,
                            &out->kernels[st->kernel]);
}


/* ---- the fft algorithm: convgen's FFT kernels (issue 4) in place of cuFFT ---- */

/* One square basis B x B (convgen's 2-D FFTs are square), the largest dimension's, at most
 * FFT_MAX_N; rank 1 or 2. */
static convgen_status square_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    if (p->rank > 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft: rank %d; convgen's FFTs are 1-D and 2-D", p->rank);
    int64_t b = 0;
    for (int d = 0; d < s->rank; ++d) {
        if (tune && tune->fourier_size[d] && b && tune->fourier_size[d] != b)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld: the fft algorithm's basis is "
                           "square", d, (long long)tune->fourier_size[d]);
        b = s->d[d].size > b ? s->d[d].size : b;
    }
    if (b > FFT_MAX_N)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft: the correlation needs a %lld-point transform, beyond %d", (long long)b,
                       FFT_MAX_N);
    s->points = 1;
    for (int d = 0; d < s->rank; ++d) {
        s->d[d].size = b;
        s->d[d].spectrum = d == s->rank - 1 ? b / 2 + 1 : b;
        s->points *= b;
    }
    s->bins = s->points / b * (b / 2 + 1);
    return CONVGEN_SUCCESS;
}

/* An operand placed by a plain shift as a window of the padded image along one dimension:
 * positions [at, at + len) hold source indices [src, src + len). False for anything else
 * (dilated, flipped or mirrored taps; a window with nothing in it). */
static bool window_of(const placement *pl, int64_t *at, int64_t *len, int64_t *src)
{
    if (pl->step != 1 || pl->mirror || pl->tiles > 1 || pl->shifts > 0)
        return false;
    int64_t lo = pl->base > 0 ? pl->base : 0, end = pl->base + pl->count;
    int64_t hi = end < pl->limit ? end : pl->limit;
    *at = lo, *len = hi - lo, *src = lo - pl->base;
    return hi > lo;
}

static bool windowed(const lib_spec *s, convgen_pass pass, int role)
{
    int64_t at = 0, len = 0, src = 0;
    for (int d = 0; d < s->rank; ++d) {
        placement pl = place(s, pass, role, d);
        if (!window_of(&pl, &at, &len, &src))
            return false;
    }
    return true;
}

/* Rank 2: the transposed, digit-reversed layout, which the column transforms produce without
 * reordering (R2C measured 1.60x cuFFT transposed against 1.52x natural at n = 64); the product
 * per bin needs only the same order on both sides. Rank 1 spectra have only the natural order. */
static void spectrum_layout(const lib_spec *s, convgen_fft_desc *d)
{
    if (s->rank == 2)
        d->layout = CONVGEN_FFT_LAYOUT_TRANSPOSED, d->order = CONVGEN_FFT_ORDER_DIGIT_REVERSED;
}

/* Moves the one kernel of a generated FFT into out as a kernel step with its pointers bound. */
static convgen_status take_fft_kernel(const cg_fft_problem *fp, const cg_target *t, lib_spec *s, int phase,
                                      const cg_arg args[3], cg_generated *out)
{
    cg_generated fft;
    convgen_status st = cg_generate_fft(fp, t, &fft);
    if (st != CONVGEN_SUCCESS)
        return st;
    cg_step *step = add_step(out, CG_STEP_KERNEL, phase);
    step->op = (cg_kernel_op){.kind = CG_OP_FFT, .fft = *fp};
    out->kernels[step->kernel] = fft.kernels[0];
    fft.kernels[0].source = NULL; /* out owns it now */
    step->args[0] = args[0], step->args[1] = args[1], step->args[2] = args[2];
    step->args[3] = (cg_arg){CG_ARG_WORKSPACE, s->fft_work_offset};
    int64_t end = s->fft_work_offset + fft.workspace_bytes;
    out->workspace_bytes = end > out->workspace_bytes ? end : out->workspace_bytes;
    cg_generated_free(&fft);
    return CONVGEN_SUCCESS;
}

/* The R2C of operand `role` into the natural spectra: straight from the operand through the
 * transform's window (clipped loads) where it is a plain shift, else from the padded images. */
static convgen_status generated_forward(convgen_pass pass, const cg_target *t, lib_spec *s, int role,
                                        bool from_operand, int phase, cg_generated *out)
{
    convgen_fft_desc d = {.rank = s->rank, .n = (int)s->d[0].size, .type = CONVGEN_FFT_R2C,
                          .batch = s->groups[role][0], .channels = s->groups[role][1]};
    if (!s->fused) /* the fused kernel's own transforms are in natural order */
        spectrum_layout(s, &d);
    cg_arg in = {CG_ARG_WORKSPACE, s->real_offset};
    if (from_operand) {
        int64_t tensor_points = 1, crop = 0, stride = 1;
        for (int dd = s->rank - 1; dd >= 0; --dd) {
            placement pl = place(s, pass, role, dd);
            int64_t at = 0, len = 0, src = 0;
            window_of(&pl, &at, &len, &src);
            d.window[dd] = (int)len, d.offset[dd] = (int)at;
            crop += src * stride;
            stride *= pl.count;
        }
        tensor_points = stride;
        d.pitch = s->rank == 2 ? place(s, pass, role, 1).count : 0;
        d.real_stride[0] = s->groups[role][1] * tensor_points, d.real_stride[1] = tensor_points;
        in = (cg_arg){role == 1 ? CG_ARG_IN1 : CG_ARG_IN0, crop * 4};
    }
    cg_fft_problem fp;
    convgen_status st = cg_fft_problem_init(&fp, &d);
    const cg_arg args[3] = {in, {CG_ARG_NULL, 0}, {CG_ARG_WORKSPACE, s->natural_offset}};
    return st == CONVGEN_SUCCESS ? take_fft_kernel(&fp, t, s, phase, args, out) : st;
}

/* The C2R of the output's spectra: straight into the output through the window (clipped
 * stores, the scale folded in), or into the padded images for the clip kernel. */
static convgen_status generated_inverse(convgen_pass pass, const cg_target *t, lib_spec *s, bool to_operand,
                                        int phase, cg_generated *out)
{
    convgen_fft_desc d = {.rank = s->rank, .n = (int)s->d[0].size, .type = CONVGEN_FFT_C2R,
                          .batch = s->groups[2][0], .channels = s->groups[2][1],
                          .scale = to_operand ? (float)(1.0 / (double)s->points) : 1.0f};
    spectrum_layout(s, &d);
    cg_arg dst = {CG_ARG_WORKSPACE, s->real_offset};
    if (to_operand) {
        int64_t tensor_points = 1;
        for (int dd = 0; dd < s->rank; ++dd) {
            placement pl = place(s, pass, 2, dd);
            d.window[dd] = (int)pl.count; /* at position 0: window_of said base 0, step 1 */
            tensor_points *= pl.count;
        }
        d.pitch = s->rank == 2 ? place(s, pass, 2, 1).count : 0;
        d.real_stride[0] = s->groups[2][1] * tensor_points, d.real_stride[1] = tensor_points;
        dst = (cg_arg){CG_ARG_OUT, 0};
    }
    cg_fft_problem fp;
    convgen_status st = cg_fft_problem_init(&fp, &d);
    const cg_arg args[3] = {{CG_ARG_WORKSPACE, s->natural_offset}, {CG_ARG_NULL, 0}, dst};
    return st == CONVGEN_SUCCESS ? take_fft_kernel(&fp, t, s, phase, args, out) : st;
}

/* ---- the step programs ---- */

/* Pad (unless the identity, or the generated R2C's window does it), R2C, transpose to
 * frequency-major: operand `role` (0 or 1). */
static convgen_status forward_steps(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s, int role,
                                    int phase, cg_generated *out)
{
    convgen_status st = CONVGEN_SUCCESS;
    bool window = s->generated && windowed(s, pass, role);
    if (!s->identity[role] && !window)
        st = operand_step(p, pass, s, role, phase, out);
    if (st == CONVGEN_SUCCESS && s->generated)
        st = generated_forward(pass, t, s, role, window, phase, out);
    else if (st == CONVGEN_SUCCESS)
        *add_step(out, CG_STEP_FFT, phase) = fft_step(s, role, false, phase);
    if (st == CONVGEN_SUCCESS && !s->fused) /* fft-fused reads the natural spectra */
        st = transpose_step(p, pass, s, role, true, phase, out);
    return st;
}

/* Transpose back, C2R, clip (unless the generated C2R's window does it). */
static convgen_status inverse_steps(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s,
                                    int phase, cg_generated *out)
{
    convgen_status st = transpose_step(p, pass, s, 2, false, phase, out);
    bool window = false;
    if (s->generated) {
        int64_t at = 0, len = 0, src = 0;
        window = true;
        for (int d = 0; d < s->rank; ++d) {
            placement pl = place(s, pass, 2, d);
            window &= window_of(&pl, &at, &len, &src) && at == 0 && src == 0 && len == pl.count;
        }
        if (st == CONVGEN_SUCCESS)
            st = generated_inverse(pass, t, s, window, phase, out);
    } else {
        *add_step(out, CG_STEP_FFT, phase) = fft_step(s, 2, true, phase);
    }
    if (st == CONVGEN_SUCCESS && !window)
        st = operand_step(p, pass, s, 2, phase, out);
    return st;
}

/* The chunks slice the batch: x, y, dy and dx advance by a chunk's images, w and dw do not. */
static void set_chunks(const cg_problem *p, convgen_pass pass, const lib_spec *s, cg_generated *out)
{
    int64_t x = s->batch * p->c * cg_problem_in_pixels(p), y = s->batch * p->k * cg_problem_out_pixels(p);
    const int64_t elems[3][3] = {{x, 0, y}, {y, 0, x}, {x, y, 0}};
    out->chunks = s->chunks;
    memcpy(out->chunk_elems, elems[pass], sizeof out->chunk_elems);
}

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

/* fft-tiled: overlap-save tiles of one square transform that follows the kernel, not the image:
 * the smallest 2^a 3^b 5^c 7^d of at least 3 extents (and 16), where a tile then keeps most of
 * its outputs (extent 3: 14 of 16; 9: 18 of 27; 13: 28 of 40); the untiled size where that is
 * smaller. Each tile gives n_fft - extent + 1 valid outputs. */
static convgen_status tile_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    if (p->rank > 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: rank %d; convgen's FFTs are 1-D and 2-D", p->rank);
    int64_t extent = 1, untiled = 0, candidates[MAX_CANDIDATES];
    for (int d = 0; d < s->rank; ++d) {
        extent = s->d[d].c.extent > extent ? s->d[d].c.extent : extent;
        int64_t one_tile = 0; /* one overlap-save tile: the linear correlation's length */
        fft_basis_candidates(s->d[d].c.out + s->d[d].c.extent - 1, &one_tile, 1);
        untiled = one_tile > untiled ? one_tile : untiled;
    }
    int64_t want = 3 * extent > 16 ? 3 * extent : 16, n = 0;
    int field;
    convgen_status st = fixed_tile_size(tune, p->rank, &n, &field);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (n && n < extent)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld is below the kernel's extent %lld",
                       field, (long long)n, (long long)extent);
    if (!n && fft_basis_candidates(want, candidates, MAX_CANDIDATES) > 0)
        n = candidates[0] < untiled ? candidates[0] : untiled;
    if (n < extent || n > FFT_MAX_N)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: tiles of %lld points for a kernel of %lld; convgen's "
                       "transforms reach %d", (long long)n, (long long)extent, FFT_MAX_N);
    s->tiled = true;
    s->tiles = 1;
    s->points = 1;
    for (int d = 0; d < s->rank; ++d) {
        lib_dim *ld = &s->d[d];
        ld->size = n;
        ld->spectrum = d == s->rank - 1 ? n / 2 + 1 : n;
        ld->tile_step = n - ld->c.extent + 1;
        ld->tiles = (ld->c.out + ld->tile_step - 1) / ld->tile_step;
        s->tiles *= ld->tiles;
        s->points *= n;
    }
    s->bins = s->points / n * (n / 2 + 1);
    s->role_tiles[0] = s->role_tiles[2] = s->tiles;
    return CONVGEN_SUCCESS;
}

/* Programs have room for this many GEMM steps beside their 9 others. */
enum { MAX_SHIFTS = CG_MAX_STEPS - 9 };

/* fft-tiled's accgrad, convolution in parts (fft_parts): x and dy both cut into blocks of
 * `block` points, transformed once each at n >= 2 block - 1 points, so that the circular
 * correlation of two blocks holds all their lags. n is the smallest 2^a 3^b 5^c 7^d of at
 * least 16 and 2 e - 1 for the widest kernel's e taps: then block >= e - 1 and each dimension
 * has at most two shifts, the products of a shift summed over every block pair it joins. */
static convgen_status parts_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    if (p->rank > 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-tiled: rank %d; convgen's FFTs are 1-D and 2-D", p->rank);
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
        s->role_tiles[0] *= place_part(s, 0, d).tiles;
        s->role_tiles[1] *= place_part(s, 1, d).tiles;
    }
    s->role_tiles[2] = shifts;
    return CONVGEN_SUCCESS;
}

/* fprop and bprop transform the weights once (phase 0), then per chunk the signal, the product
 * and the inverse (phase 1). accgrad transforms both operands of each chunk and sums their
 * products (phase 1), then inverts once (phase 2). */
static convgen_status generate_program(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                       const cg_tuning *tune, bool generated, bool tiled, cg_generated *out)
{
    lib_spec s;
    memset(&s, 0, sizeof s);
    s.generated = generated;
    /* fft-tiled's transform is its tile: no transform of the whole correlation to size */
    convgen_status st = tiled ? correlation_dims(p, pass, "fft-tiled", &s) : choose_sizes(p, pass, tune, &s);
    s.role_tiles[0] = s.role_tiles[1] = s.role_tiles[2] = 1;
    if (st == CONVGEN_SUCCESS && tiled && pass == CONVGEN_ACCGRAD)
        st = parts_basis(p, tune, &s);
    else if (st == CONVGEN_SUCCESS && tiled)
        st = tile_basis(p, tune, &s);
    else if (st == CONVGEN_SUCCESS && generated)
        st = square_basis(p, tune, &s);
    if (st == CONVGEN_SUCCESS)
        st = choose_batch(p, pass, tune, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    set_chunks(p, pass, &s, out);
    /* cuFFT reads an operand in place only if every chunk of it stays 8-byte aligned. */
    for (int r = 0; r < 2; ++r)
        s.identity[r] = !generated && is_identity(&s, pass, r) && (s.chunks == 1 || out->chunk_elems[r] % 2 == 0);
    s.fft_work_offset = align_up(s.workspace);
    out->workspace_bytes = s.workspace;
    bool weights_once = pass != CONVGEN_ACCGRAD;
    st = forward_steps(p, pass, t, &s, 1, weights_once ? 0 : 1, out);
    if (st == CONVGEN_SUCCESS)
        st = forward_steps(p, pass, t, &s, 0, 1, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (s.parts)
        parts_gemm_steps(p, &s, out);
    else
        *add_step(out, CG_STEP_GEMM, 1) = gemm_step(p, pass, &s);
    st = inverse_steps(p, pass, t, &s, weights_once ? 1 : 2, out);
    out->tf32 = tune && tune->tf32;
    return st;
}

static convgen_status cufft_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                     const cg_tuning *tune, cg_generated *out)
{
    return generate_program(p, pass, t, tune, false, false, out);
}

static convgen_status fft_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                                   cg_generated *out)
{
    return generate_program(p, pass, t, tune, true, false, out);
}

static convgen_status fft_applicable(const cg_problem *p, convgen_pass pass)
{
    convgen_status st = cufft_applicable(p, pass);
    if (st == CONVGEN_SUCCESS && p->rank > 2)
        st = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft: rank %d; convgen's FFTs are 1-D and 2-D", p->rank);
    return st;
}

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
                f->kb = kb, f->cb = cb, f->acc = acc, f->shared = shared, f->kgroups = kgroups;
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
        placement in = place(s, pass, 0, d), o = place(s, pass, 2, d);
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
        op.dims[d] = place(s, pass, 0, d);
        op.out_dims[d] = place(s, pass, 2, d);
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
    tmpl_map_set(ctx, "header", header_lines(p, pass, s, k, what, "fft_fused.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "signal", s->names[0]);
    tmpl_set_str(ctx, "output", s->names[2]);
    const int64_t ints[] = {THREADS, n, h, bins, n * n, f->cb, f->kb, f->acc, f->cb > f->kb ? f->cb : f->kb,
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
        plane *= place(s, pass, 0, d).count, out_plane *= place(s, pass, 2, d).count;
    tmpl_set_int(ctx, "plane", plane);
    tmpl_set_int(ctx, "out_plane", out_plane);
    /* The index splits, each over the largest dividend it sees. */
    /* buffer elements (the larger of the tile's and the output's spectra) and accumulator slots */
    const int64_t elems = (f->cb > f->kb ? f->cb : f->kb) * bins, slots = f->acc * THREADS;
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
    convgen_status st = correlation_dims(p, pass, "fft-fused", &s);
    if (st == CONVGEN_SUCCESS)
        st = tile_basis(p, tune, &s);
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
    s.names[0] = operand_names[pass][0], s.names[1] = operand_names[pass][1], s.names[2] = operand_names[pass][2];
    s.groups[1][0] = p->k, s.groups[1][1] = p->c;
    s.images[1] = p->k * p->c;
    int64_t real = 0, spectra = 0, blocks = 0;
    bool padded = !windowed(&s, pass, 1); /* else the R2C reads w through its window */
    if (!cg_mul64(s.images[1], padded ? s.points * 4 : 0, &real) || !cg_mul64(s.images[1], s.bins * 8, &spectra) ||
        s.images[1] > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: the weights' spectra of this layer do not fit 32-bit sizes");
    if (!cg_mul64(s.tiles, f.kgroups, &blocks) || blocks > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft-fused: %lld tiles x %lld channel groups are more blocks than a "
                       "grid has", (long long)s.tiles, (long long)f.kgroups);
    s.real_offset = 0;
    s.natural_offset = align_up(real);
    s.workspace = s.natural_offset + spectra;
    s.fft_work_offset = align_up(s.workspace);
    out->workspace_bytes = s.workspace;
    set_chunks(p, pass, &s, out);
    st = forward_steps(p, pass, t, &s, 1, 0, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    cg_step *step = add_step(out, CG_STEP_KERNEL, 1);
    step->op = fused_op(p, pass, &s, &f);
    return render_fused(p, pass, &s, &f, &out->kernels[step->kernel]);
}

static convgen_status fft_fused_applicable(const cg_problem *p, convgen_pass pass)
{
    convgen_status st = fft_applicable(p, pass);
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

static convgen_status fft_tiled_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                         const cg_tuning *tune, cg_generated *out)
{
    return generate_program(p, pass, t, tune, true, true, out);
}

const cg_planner cg_fft_tiled_planner = {
    .algo = CONVGEN_ALGO_FFT_TILED,
    .name = "fft-tiled",
    .applicable = fft_applicable,
    .generate = fft_tiled_generate,
};

const cg_planner cg_fft_planner = {
    .algo = CONVGEN_ALGO_FFT,
    .name = "fft",
    .applicable = fft_applicable,
    .generate = fft_generate,
};

const cg_planner cg_cufft_planner = {
    .algo = CONVGEN_ALGO_CUFFT,
    .name = "cufft",
    .applicable = cufft_applicable,
    .generate = cufft_generate,
};
