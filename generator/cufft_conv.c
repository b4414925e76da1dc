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
 * its head, a large pad its tail). */
#include <stdio.h>
#include <string.h>

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
    /* Byte offsets into the workspace: the padded real images (S, K and O in turn), the
     * natural-layout spectra (the same), and the three frequency-major spectra. */
    int64_t real_offset, natural_offset, spectrum_offset[3], workspace;
    int64_t estimate; /* the workspace with cuFFT's work area estimated */
} lib_spec;

static const char *const operand_names[3][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}, {"x", "dy", "dw"}};

static int64_t align_up(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* The placement of S (role 0), K (role 1) or the output O (role 2, which reads from it). */
static placement place(const lib_spec *s, convgen_pass pass, int role, int d)
{
    const fft_conv_dim *c = &s->d[d].c;
    placement pl = {.limit = s->d[d].size};
    if (role == 0) { /* the signal, shifted by the pad; positions past what the outputs read are
                      * cut, which only spares loads (nothing there reaches an output) */
        int64_t reach = c->out + c->extent - 1;
        pl.base = c->pad_before, pl.step = 1, pl.count = c->in;
        pl.limit = reach < pl.limit ? reach : pl.limit;
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
    } else { /* the valid outputs */
        pl.base = 0, pl.step = 1, pl.count = c->out;
    }
    return pl;
}

/* The kernel op of a pad (role 0 or 1) or the clip (role 2), for the CPU evaluation. */
static cg_kernel_op operand_op(const lib_spec *s, convgen_pass pass, int role)
{
    cg_kernel_op op = {.kind = role == 2 ? CG_OP_CLIP : CG_OP_PAD, .operand = role == 2 ? 2 : role, .rank = s->rank,
                       .images = s->images[role], .real_offset = s->real_offset, .scale = 1.0 / (double)s->points};
    for (int d = 0; d < s->rank; ++d) {
        op.size[d] = s->d[d].size;
        op.dims[d] = place(s, pass, role, d);
    }
    return op;
}

/* The smallest 2^a 3^b 5^c 7^d that holds the linear correlation, unless the caller fixed it. */
static convgen_status choose_sizes(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: %s", err);
    s->rank = p->rank;
    s->points = 1;
    for (int d = 0; d < p->rank; ++d) {
        lib_dim *ld = &s->d[d];
        ld->c = dims[d];
        /* A transform of one point is legal but untested in cuFFT; two hold the same correlation. */
        int64_t need = dims[d].out + dims[d].extent - 1, fixed = tune ? tune->fourier_size[d] : 0;
        need = need < 2 ? 2 : need;
        if (fixed && fixed < need)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                           "options->fourier_size[%d] = %lld is below %lld, the linear correlation's length", d,
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
    const int64_t groups[3][3][2] = {{{batch, p->c}, {p->k, p->c}, {batch, p->k}},
                                     {{batch, p->k}, {p->k, p->c}, {batch, p->c}},
                                     {{batch, p->c}, {batch, p->k}, {p->k, p->c}}};
    s->batch = batch;
    s->chunks = p->n / batch;
    int64_t most = 0, bytes = 0, at = 0;
    for (int r = 0; r < 3; ++r) {
        s->names[r] = operand_names[pass][r];
        s->images[r] = groups[pass][r][0] * groups[pass][r][1]; /* products of validated sizes */
        most = s->images[r] > most ? s->images[r] : most;
    }
    bool ok = cg_mul64(most, s->points, &bytes) && cg_mul64(bytes, 4, &bytes);
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
    cg_value_line(h, "convgen %s: cufft algorithm, %s: %s", CG_GENERATOR_VERSION, convgen_pass_name(pass), what);
    cg_value_line(h, "layer: %s", layer);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "plan: pad %s and %s into a %s Fourier basis, cuFFT R2C, transpose to [bin][image], one cuBLAS",
                  s->names[0], s->names[1], basis);
    cg_value_line(h, "  strided-batched CGEMM over %lld bins, transpose back, cuFFT C2R, clip into %s", (long long)s->bins,
                  s->names[2]);
    cg_value_line(h, "  (generator/cufft_conv.c)");
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

static convgen_status render_kernel(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, cg_kernel *k)
{
    bool clip = role == 2, failed = false;
    int64_t sizes[CONVGEN_MAX_RANK], points = 1;
    for (int d = 0; d < s->rank; ++d) {
        sizes[d] = clip ? place(s, pass, 2, d).count : s->d[d].size;
        points *= sizes[d];
    }
    snprintf(k->name, sizeof k->name, "convgen_cufft_%s_%s_%s", convgen_pass_name(pass), clip ? "clip" : "pad",
             s->names[role]);
    launch_geometry(points, s->images[role], k);
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
    tmpl_set_int(ctx, "images", s->images[role]);
    tmpl_set_int(ctx, "real_offset", s->real_offset / 4);
    char scale[32];
    snprintf(scale, sizeof scale, "%.9ef", 1.0 / (double)s->points); /* cuFFT's inverse is unscaled */
    tmpl_set_str(ctx, "scale", scale);
    tmpl_map_set(ctx, "dims", dims_value(pass, s, role));
    tmpl_map_set(ctx, "digits", point_digits(sizes, s->rank, &failed));
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
    snprintf(k->name, sizeof k->name, "convgen_cufft_%s_transpose_%s", convgen_pass_name(pass), what);
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
    const int64_t S = s->spectrum_offset[0], K = s->spectrum_offset[1], nb = s->batch;
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

/* The programs below have at most 10 steps and 6 kernels. */
_Static_assert(CG_MAX_STEPS >= 10 && CG_MAX_KERNELS >= 6, "cufft's step programs do not fit cg_generated");

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

/* Pad (unless the identity), R2C, transpose to frequency-major: operand `role` (0 or 1). */
static convgen_status forward_steps(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, int phase,
                                    cg_generated *out)
{
    convgen_status st = CONVGEN_SUCCESS;
    if (!s->identity[role])
        st = operand_step(p, pass, s, role, phase, out);
    *add_step(out, CG_STEP_FFT, phase) = fft_step(s, role, false, phase);
    if (st == CONVGEN_SUCCESS)
        st = transpose_step(p, pass, s, role, true, phase, out);
    return st;
}

/* Transpose back, C2R, clip. */
static convgen_status inverse_steps(const cg_problem *p, convgen_pass pass, const lib_spec *s, int phase,
                                    cg_generated *out)
{
    convgen_status st = transpose_step(p, pass, s, 2, false, phase, out);
    *add_step(out, CG_STEP_FFT, phase) = fft_step(s, 2, true, phase);
    if (st == CONVGEN_SUCCESS)
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

/* fprop and bprop transform the weights once (phase 0), then per chunk the signal, the product
 * and the inverse (phase 1). accgrad transforms both operands of each chunk and sums their
 * products (phase 1), then inverts once (phase 2). */
static convgen_status cufft_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                     const cg_tuning *tune, cg_generated *out)
{
    (void)t;
    lib_spec s;
    memset(&s, 0, sizeof s);
    convgen_status st = choose_sizes(p, pass, tune, &s);
    if (st == CONVGEN_SUCCESS)
        st = choose_batch(p, pass, tune, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    set_chunks(p, pass, &s, out);
    /* cuFFT reads an operand in place only if every chunk of it stays 8-byte aligned. */
    for (int r = 0; r < 2; ++r)
        s.identity[r] = is_identity(&s, pass, r) && (s.chunks == 1 || out->chunk_elems[r] % 2 == 0);
    bool weights_once = pass != CONVGEN_ACCGRAD;
    st = forward_steps(p, pass, &s, 1, weights_once ? 0 : 1, out);
    if (st == CONVGEN_SUCCESS)
        st = forward_steps(p, pass, &s, 0, 1, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    *add_step(out, CG_STEP_GEMM, 1) = gemm_step(p, pass, &s);
    st = inverse_steps(p, pass, &s, weights_once ? 1 : 2, out);
    out->workspace_bytes = s.workspace;
    out->tf32 = tune && tune->tf32;
    return st;
}

const cg_planner cg_cufft_planner = {
    .algo = CONVGEN_ALGO_CUFFT,
    .name = "cufft",
    .applicable = cufft_applicable,
    .generate = cufft_generate,
};
