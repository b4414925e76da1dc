/* The step program of FFT convolution, which the four FFT planners share: cufft.c (the fbfft
 * paper's library design, section 3, for stride-1 layers of rank 1 to 3 and all three passes),
 * fft.c, fft_tiled.c and fft_fused.c choose the basis; this file sizes the buffers and emits the
 * steps. layout.c says where each operand sits in the basis.
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
 * needs no particular order, only the same one on both sides. Its products are convgen's own
 * complex GEMM (generator/gemm.c) by default, which reads and writes the spectra as the FFT
 * kernels leave them, [image][bin], so the program has no transposes: R2C, products, C2R.
 *
 * cuFFT can write and read the frequency-major layout itself through its strides, which was
 * the first version here: on the H100 its strided transforms of L2 (8192 64x64 images) took
 * 0.83 ms forward and 1.13 ms inverse, against about 0.21 ms each for the natural layout.
 *
 *   pass     S        K        O        per bin, row-major
 *   fprop    x[n][c]  w[k][c]  y[n][k]  O[n][k] = sum_c S[n][c] conj(K[k][c])
 *   bprop    dy[n][k] w[k][c]  dx[n][c] O[n][c] = sum_k S[n][k] K[k][c]  (no conjugate, see below)
 *   accgrad  x[n][c]  dy[n][k] dw[k][c] O[k][c] = sum_n S[n][c] conj(K[n][k])
 *
 * cuBLAS sees each stored row-major [a][b] matrix as the column-major b x a matrix M, so the
 * products are, in its terms: fprop O = op_C(K) S (m = k), bprop O = K S (m = c), accgrad
 * O = S op_C(K) (m = c), op_C being cuBLAS's conjugate transpose (gemm_step).
 *
 * A correlation's spectrum is S times the conjugate of K's. cuBLAS can conjugate only with a
 * transpose, which bprop's product does not have. bprop of convgen's FFTs (fft, fft-tiled,
 * fft-fused) is therefore the convolution it is, dx = dy * w, with no conjugate and w read
 * through a window like fprop's (bprop_as_convolution); cufft's, and any padding past the
 * kernel's extent less one, place the kernel's taps mirrored modulo B instead (position -t for
 * t): the transform of the mirror is the conjugate.
 *
 * Circular correlation over B equals the linear one for outputs 0 .. out - 1 when B >= out +
 * extent - 1, the rest of the padded signal being zero or cut (a negative bprop pad_before cuts
 * its head, a large pad its tail), and for less where the signal's head of zeros takes the
 * wrapped reads (circular_length).
 *
 * The "fft-tiled" algorithm runs the fft program on tiles: fprop and bprop cut the signal into
 * overlap-save tiles of a transform that follows the kernel, accgrad cuts x and dy into
 * disjoint blocks, convolution in parts (fft_tiled.c). "fft-fused" does fft-tiled's work per
 * tile in one kernel (fft_fused.c). What the files share is in fftconv.h. */
#include <stdio.h>
#include <string.h>

#include "fftconv.h"
#include "fft/fft_kernel.h"
#include "fft/fft_problem.h"
#include "fft/fft_regs.h"
#include "gemm.h"
#include "generate.h"
#include "templates.h"
#include "util.h"
#include "values.h"

/* The kernel op of a pad (role 0 or 1) or the clip (role 2), for the CPU evaluation. */
static cg_kernel_op operand_op(const lib_spec *s, convgen_pass pass, int role)
{
    cg_pad_op op = {.operand = role == 2 ? 2 : role, .rank = s->rank, .images = s->images[role],
                    .real_offset = s->real_offset, .scale = 1.0 / (double)s->points, .tiles = s->role_tiles[role]};
    op.images /= op.tiles; /* the operand's own images; the padded ones are [tile][image] */
    for (int d = 0; d < s->rank; ++d) {
        op.size[d] = s->d[d].size;
        op.dims[d] = fc_place(s, pass, role, d);
    }
    return (cg_kernel_op){.kind = role == 2 ? CG_OP_CLIP : CG_OP_PAD, .pad = op};
}

/* True where the padding of operand `role` changes nothing: cuFFT can read the operand. */
static bool is_identity(const lib_spec *s, convgen_pass pass, int role)
{
    for (int d = 0; d < s->rank; ++d) {
        placement pl = fc_place(s, pass, role, d);
        if (pl.base != 0 || pl.step != 1 || pl.mirror || pl.count != s->d[d].size || pl.limit < s->d[d].size)
            return false;
    }
    return true;
}

/* Images per operand for `batch` images of the batch per chunk, and the workspace: one real
 * buffer of padded images and (but for the generated GEMM) one of natural spectra, each reused
 * by S, K and O in turn, and the three spectra of the products. */
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
        s->names[r] = fc_operand_names[pass][r];
        ok &= cg_mul64(groups[pass][r][0], groups[pass][r][1], &s->images[r]);
        s->images[r] = ok ? s->images[r] : big;
        s->groups[r][0] = groups[pass][r][0], s->groups[r][1] = groups[pass][r][1];
        most = s->images[r] > most ? s->images[r] : most;
    }
    ok = ok && cg_mul64(most, s->points, &bytes) && cg_mul64(bytes, 4, &bytes);
    s->real_offset = 0;
    at = fc_align_up(bytes);
    s->natural_offset = at; /* none where convgen's GEMM reads the natural spectra themselves */
    ok = ok && cg_mul64(s->generated_gemm ? 0 : most, s->bins, &bytes) && cg_mul64(bytes, 8, &bytes) &&
         cg_add64(at, bytes, &at);
    at = fc_align_up(at);
    for (int r = 0; r < 3 && ok; ++r) {
        s->spectrum_offset[r] = at;
        ok = cg_mul64(s->images[r], s->bins, &bytes) && cg_mul64(bytes, 8, &bytes) && cg_add64(at, bytes, &at);
        at = fc_align_up(at);
    }
    /* cuBLAS takes int sizes and batch counts; the kernels index an image with 32 bits. */
    for (int r = 0; r < 3 && ok; ++r) {
        int64_t tensor_points = 1;
        for (int d = 0; d < s->rank; ++d)
            tensor_points *= fc_place(s, pass, r, d).count;
        ok = groups[pass][r][0] <= INT32_MAX && groups[pass][r][1] <= INT32_MAX && s->images[r] <= INT32_MAX &&
             tensor_points <= INT32_MAX;
    }
    if (!ok || s->bins > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: the spectra of this layer do not fit 64-bit sizes");
    s->workspace = at;
    /* cufft's plans add cuFFT's work area, which only a device can size; they have needed at
     * most the size of the spectra they write. convgen's FFTs need none in 1-D and 2-D; in 3-D the
     * inverse keeps the output window's planes between its two stages (fft_volume.c), at most
     * the output's spectra. */
    int64_t work_images = !s->generated ? most : s->rank == 3 ? s->images[2] : 0;
    return cg_mul64(work_images, s->bins * 8, &bytes) && cg_add64(at, bytes, &s->estimate)
               ? CONVGEN_SUCCESS
               : cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: the spectra of this layer do not fit 64-bit sizes");
}

/* ZNNi's sub-batching: the largest divisor of n whose chunks fit the workspace limit (with
 * cufft's cuFFT work area estimated; the runtime checks the real one). The weights' spectra
 * (fprop, bprop) are made once; accgrad sums its chunks' products in the frequency domain.
 * Without a divisor that fits, the smallest chunks, which the runtime then reports as over the
 * limit. */
typedef struct batch_fit {
    const cg_problem *p;
    convgen_pass pass;
    lib_spec *s;
    int64_t limit;
} batch_fit;

static bool batch_fits(int64_t batch, void *user)
{
    batch_fit *f = user;
    return size_buffers(f->p, f->pass, batch, f->s) == CONVGEN_SUCCESS && f->s->estimate <= f->limit;
}

static convgen_status choose_batch(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s)
{
    int64_t limit = tune ? tune->workspace_limit : 0;
    convgen_status st = size_buffers(p, pass, p->n, s);
    if (st != CONVGEN_SUCCESS || !limit || s->estimate <= limit)
        return st;
    batch_fit fit = {p, pass, s, limit};
    return size_buffers(p, pass, cg_largest_divisor(p->n, batch_fits, &fit), s);
}

tmpl_value *fc_header_lines(const cg_problem *p, convgen_pass pass, const lib_spec *s, const cg_kernel *k,
                                const char *what, const char *template_name)
{
    char layer[256], basis[64];
    cg_conv_kind.describe(p, layer, sizeof layer);
    int64_t sizes[CONVGEN_MAX_RANK];
    for (int d = 0; d < s->rank; ++d)
        sizes[d] = s->d[d].size;
    cg_dims_text(sizes, s->rank, basis, sizeof basis);
    tmpl_value *h = tmpl_list();
    const char *algo = s->fused ? "fft-fused" : s->tiled ? "fft-tiled" : s->generated ? "fft" : "cufft";
    const char *lib = s->generated ? "convgen's" : "cuFFT";
    /* the generator files that decide the kernel */
    const char *source = strcmp(template_name, "fftconv/fft_fused.cu") == 0 ? "generator/fftconv/fft_fused.c"
                         : s->tiled ? "generator/fftconv/program.c and fft_tiled.c"
                                    : "generator/fftconv/program.c";
    cg_value_line(h, "convgen %s: %s algorithm, %s: %s", CG_GENERATOR_VERSION, algo, convgen_pass_name(pass), what);
    cg_value_line(h, "layer: %s", layer);
    cg_value_line(h, "%s", "");
    if (s->fused) {
        cg_value_line(h, "plan: %s's R2C into a %s Fourier basis (after a pad unless a plain shift), then per",
                      s->names[1], basis);
        cg_value_line(h, "  tile one kernel: %s's tile transformed, multiplied by %s's spectra and summed over the",
                      s->names[0], s->names[1]);
        cg_value_line(h, "  channels, transformed back, its valid outputs stored into %s (%s)", s->names[2], source);
        char radices[32];
        cg_reg_fft_radices((int)s->d[0].size, radices, sizeof radices);
        cg_value_line(h, "transforms: FFTs of %lld points in registers, a thread each, radices %s (generator/fft/fft_regs.c):",
                      (long long)s->d[0].size, radices);
        cg_value_line(h, "  rows two real ones at a time, then columns; the inverse pruned to the valid outputs");
    } else if (s->parts) {
        cg_value_line(h, "plan: %s and %s in blocks of %lld points, each padded into a %s Fourier basis, %s R2C,",
                      s->names[0], s->names[1], (long long)s->d[0].parts.block, basis, lib);
        cg_value_line(h, "  transpose to [bin][image], one cuBLAS CGEMM per shift between blocks (%lld) over %lld bins,",
                      (long long)s->role_tiles[2], (long long)s->bins);
        cg_value_line(h, "  transpose back, %s C2R, clip summing each tap from the shifts that reach it", lib);
        cg_value_line(h, "  (%s); block grids of %lld (%s) and %lld (%s, as wide as %s's) an image", source,
                      (long long)s->role_tiles[0], s->names[0], (long long)s->role_tiles[1], s->names[1], s->names[0]);
    } else {
        if (s->generated_gemm) {
            cg_value_line(h, "plan: pad %s and %s into a %s Fourier basis (the R2C's window pads a plain shift), %s",
                          s->names[0], s->names[1], basis, lib);
            cg_value_line(h, "  R2C, one generated CGEMM per bin (%lld) reading and writing the spectra as the FFTs "
                          "leave them, %s C2R,", (long long)s->bins, lib);
            cg_value_line(h, "  clip into %s (or the C2R's window)", s->names[2]);
        } else {
            cg_value_line(h, "plan: pad %s and %s into a %s Fourier basis%s, %s R2C, transpose to [bin][image], one",
                          s->names[0], s->names[1], basis, s->generated ? " (the R2C's window pads a plain shift)" : "",
                          lib);
            cg_value_line(h, "  cuBLAS strided-batched CGEMM over %lld bins, transpose back, %s C2R, clip into %s%s",
                          (long long)s->bins, lib, s->names[2], s->generated ? " (or the C2R's window)" : "");
        }
        cg_value_line(h, "  (%s)", source);
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
    cg_value_line(h, "Generated: do not edit. Change templates/%s or %s instead.", template_name, source);
    return h;
}

/* The kernel's dimensions: the padded image's sizes and strides and the operand's placement. */
static tmpl_value *dims_value(convgen_pass pass, const lib_spec *s, int role)
{
    tmpl_value *list = tmpl_list();
    int64_t padded_stride = 1, tensor_stride = 1;
    for (int d = s->rank - 1; d >= 0; --d) {
        placement pl = fc_place(s, pass, role, d);
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

/* Whether operand `role`'s kernel stores y and applies the layer's epilogue as it does: fprop's
 * output (the clip, or the generated C2R through its window), the last kernel to write y. */
static bool stores_epilogue(const cg_problem *p, convgen_pass pass, int role)
{
    return role == 2 && pass == CONVGEN_FPROP && p->epilogue;
}

static convgen_status render_kernel(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, cg_kernel *k)
{
    bool clip = role == 2, failed = false;
    int64_t sizes[CONVGEN_MAX_RANK], points = 1;
    for (int d = 0; d < s->rank; ++d) {
        sizes[d] = clip ? fc_place(s, pass, 2, d).count : s->d[d].size;
        points *= sizes[d];
    }
    snprintf(k->name, sizeof k->name, "convgen_%s_%s_%s_%s", s->generated ? "fft" : "cufft", convgen_pass_name(pass),
             clip ? "clip" : "pad",
             s->names[role]);
    /* The clip loops over the output's images; a tiled one reads each from all its tiles (or
     * shifts). */
    int64_t loop_images = clip ? s->images[2] / s->role_tiles[2] : s->images[role];
    launch_geometry(points, loop_images, k);
    k->epilogue = stores_epilogue(p, pass, role);
    char what[96];
    snprintf(what, sizeof what, clip ? "the clip of %s from its padded images" : "the zero padding of %s",
             s->names[role]);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", fc_header_lines(p, pass, s, k, what, "fftconv/pad_clip.cu"));
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
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, k->epilogue));
    if (k->epilogue && (p->epilogue & CG_EPILOGUE_BIAS)) { /* y[n][k]: image g's channel is g % k */
        tmpl_value *by_k = cg_value_magic((uint32_t)p->k, loop_images - 1);
        failed |= !by_k;
        tmpl_map_set(ctx, "k_div", by_k);
        tmpl_set_int(ctx, "k_size", p->k);
    }
    /* Tiled: padded images [tile][image]; the tile index splits over the dimensions' tiles. */
    int64_t tiles = s->role_tiles[role];
    tmpl_set_bool(ctx, "tiled", tiles > 1 && !(clip && s->parts));
    tmpl_set_bool(ctx, "parts", clip && s->parts);
    if (clip && s->parts)
        tmpl_map_set(ctx, "shifts", fc_shifts_value(s));
    else if (tiles > 1) {
        /* the tiles past dimension 0 (inner), and past dimension 1 for rank 3 (last) */
        int64_t own = s->images[role] / tiles, inner_tiles = 1, last_tiles = fc_place(s, pass, role, s->rank - 1).tiles;
        for (int d = 1; d < s->rank; ++d)
            inner_tiles *= fc_place(s, pass, role, d).tiles;
        tmpl_set_int(ctx, "tile_images", own);
        tmpl_set_int(ctx, "inner_tiles", inner_tiles);
        tmpl_value *by_images = cg_value_magic((uint32_t)own, s->images[role] - 1);
        tmpl_value *by_inner = cg_value_magic((uint32_t)inner_tiles, tiles - 1);
        failed |= !by_images || !by_inner;
        tmpl_map_set(ctx, "image_div", by_images);
        tmpl_map_set(ctx, "inner_div", by_inner);
        if (s->rank == 3) {
            tmpl_value *by_last = cg_value_magic((uint32_t)last_tiles, inner_tiles - 1);
            failed |= !by_last;
            tmpl_set_int(ctx, "last_tiles", last_tiles);
            tmpl_map_set(ctx, "last_div", by_last);
        }
    }
    int64_t tensor_points = 1; /* the operand's points per image (the clip's are `points`) */
    for (int d = 0; d < s->rank; ++d)
        tensor_points *= fc_place(s, pass, role, d).count;
    tmpl_set_int(ctx, "tensor_points", tensor_points);
    if (failed) { /* cg_value_magic said why */
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    return cg_render_kernel("fftconv/pad_clip.cu", ctx, &k->source);
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
    tmpl_map_set(ctx, "header", fc_header_lines(p, pass, s, k, text, "fftconv/transpose.cu"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "tile", TILE);
    tmpl_set_int(ctx, "tile_rows", TILE_ROWS);
    tmpl_set_int(ctx, "rows", rows);
    tmpl_set_int(ctx, "cols", cols);
    tmpl_set_int(ctx, "src_offset", src / 4);
    tmpl_set_int(ctx, "dst_offset", dst / 4);
    return cg_render_kernel("fftconv/transpose.cu", ctx, &k->source);
}

/* The per-bin products (see the table at the top), one strided batch over the bins. A stored
 * row-major [a][b] matrix is cuBLAS's column-major b x a, leading dimension b; with the
 * generated GEMM the bins' matrices interleave instead (every index times the bins). */
cg_step fc_gemm_step(const cg_problem *p, convgen_pass pass, const lib_spec *s)
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
    case CONVGEN_BPROP: /* dx (c x n) = w (c x k) dy (k x n), w's spectra as a convolution's or mirrored */
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
    if (s->generated_gemm) { /* [image][bin]: the bins' GEMMs interleaved element by element */
        cg_gemm_step *g = &st.gemm;
        g->lda *= s->bins, g->ldb *= s->bins, g->ldc *= s->bins;
        g->a_stride = g->b_stride = g->c_stride = 1;
        g->inc = s->bins;
    }
    return st;
}

/* The programs below have at most 9 + MAX_SHIFTS steps and 9 kernels. */
_Static_assert(CG_MAX_STEPS >= 9 + 4 && CG_MAX_KERNELS >= 9,
               "cufft's step programs (parts: 9 steps and the 2 x 2 shifts' GEMMs) do not fit cg_generated");

/* Appends a step of `phase`; kernels get the next kernel slot, rendered by the caller. Library
 * steps are then overwritten whole by fft_step or gemm_step, which set the same phase. */
cg_step *fc_add_step(cg_generated *out, cg_step_kind kind, int phase)
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
    cg_step *st = fc_add_step(out, CG_STEP_KERNEL, phase);
    st->op = operand_op(s, pass, role);
    return render_kernel(p, pass, s, role, &out->kernels[st->kernel]);
}

/* A transpose kernel step: complex [rows][cols] at byte src into [cols][rows] at byte dst. */
static convgen_status transpose_step(const cg_problem *p, convgen_pass pass, const lib_spec *s, int role, bool forward,
                                     int phase, cg_generated *out)
{
    int64_t images = s->images[role], natural = s->natural_offset, spectra = s->spectrum_offset[role];
    cg_step *st = fc_add_step(out, CG_STEP_KERNEL, phase);
    cg_transpose_op op = {.rows = forward ? images : s->bins, .cols = forward ? s->bins : images,
                          .src = forward ? natural : spectra, .dst = forward ? spectra : natural};
    st->op = (cg_kernel_op){.kind = CG_OP_TRANSPOSE, .transpose = op};
    return render_transpose(p, pass, s, s->names[role], op.rows, op.cols, op.src, op.dst, &out->kernels[st->kernel]);
}

/* Rank 2 (and rank 3's planes): the transposed, digit-reversed layout, which the column
 * transforms produce without reordering (R2C measured 1.60x cuFFT transposed against 1.52x
 * natural at n = 64); the product per bin needs only the same order on both sides. Rank 1
 * spectra have only the natural order. */
static void spectrum_layout(const lib_spec *s, convgen_fft_desc *d)
{
    if (s->rank >= 2)
        d->layout = CONVGEN_FFT_LAYOUT_TRANSPOSED, d->order = CONVGEN_FFT_ORDER_DIGIT_REVERSED;
}

/* A pointer of a generated FFT's own step (fft_volume.c's stages) on the program's: the FFT's
 * in0, in1, out and workspace are `outer`'s, a moved one keeps its byte offset. */
static cg_arg outer_arg(cg_arg inner, int position, const cg_arg outer[4])
{
    if (inner.base == CG_ARG_NULL)
        return inner;
    int at = inner.base == CG_ARG_SAME ? position : (int)(inner.base - CG_ARG_IN0);
    cg_arg o = outer[at];
    if (o.base == CG_ARG_SAME) /* the program's own pointer at that position */
        o.base = (cg_arg_base)(CG_ARG_IN0 + at);
    o.offset += inner.base == CG_ARG_SAME ? 0 : inner.offset;
    return o;
}

/* Moves the kernels of a generated FFT into out as kernel steps with their pointers bound: the
 * one kernel of ranks 1 and 2, or a rank 3 transform's two stages with their own pointers
 * mapped onto the program's, the FFT's workspace at s->fft_work_offset. */
static convgen_status take_fft_kernels(const cg_fft_problem *fp, const cg_target *t, lib_spec *s, int phase,
                                       const cg_arg args[3], cg_generated *out)
{
    cg_generated fft;
    convgen_status st = cg_generate_fft(fp, t, &fft);
    if (st != CONVGEN_SUCCESS)
        return st;
    int steps = fft.step_count ? fft.step_count : 1;
    if (out->kernel_count + steps > CG_MAX_KERNELS || out->step_count + steps > CG_MAX_STEPS) {
        cg_generated_free(&fft);
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the program's kernels and steps exceed %d and %d",
                       CG_MAX_KERNELS, CG_MAX_STEPS);
    }
    const cg_arg outer[4] = {args[0], args[1], args[2], {CG_ARG_WORKSPACE, s->fft_work_offset}};
    for (int i = 0; i < steps; ++i) {
        cg_step *step = fc_add_step(out, CG_STEP_KERNEL, phase);
        const cg_step *own = fft.step_count ? &fft.steps[i] : NULL;
        int k = own ? own->kernel : 0;
        step->op = own ? own->op : (cg_kernel_op){.kind = CG_OP_FFT, .fft = *fp};
        out->kernels[step->kernel] = fft.kernels[k];
        fft.kernels[k].source = NULL; /* out owns it now */
        for (int a = 0; a < 4; ++a)
            step->args[a] = own ? outer_arg(own->args[a], a, outer) : outer[a];
        if (!own)
            step->args[1] = (cg_arg){CG_ARG_NULL, 0};
    }
    int64_t end = s->fft_work_offset + fft.workspace_bytes;
    out->workspace_bytes = end > out->workspace_bytes ? end : out->workspace_bytes;
    cg_generated_free(&fft);
    return CONVGEN_SUCCESS;
}

/* The signal's rows and planes as the generated FFT reads or writes them: the window's pitch
 * (the last dimension's count) and, in 3-D, its plane pitch. */
static void signal_pitches(const lib_spec *s, convgen_pass pass, int role, convgen_fft_desc *d)
{
    if (s->rank < 2)
        return;
    d->pitch = fc_place(s, pass, role, s->rank - 1).count;
    if (s->rank == 3)
        d->plane_pitch = d->pitch * fc_place(s, pass, role, 1).count;
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
            placement pl = fc_place(s, pass, role, dd);
            int64_t at = 0, len = 0, src = 0;
            fc_window_of(&pl, &at, &len, &src);
            d.window[dd] = (int)len, d.offset[dd] = (int)at;
            crop += src * stride;
            stride *= pl.count;
        }
        tensor_points = stride;
        signal_pitches(s, pass, role, &d);
        d.real_stride[0] = s->groups[role][1] * tensor_points, d.real_stride[1] = tensor_points;
        in = (cg_arg){role == 1 ? CG_ARG_IN1 : CG_ARG_IN0, crop * 4};
    }
    cg_fft_problem fp;
    convgen_status st = cg_fft_problem_init(&fp, &d);
    int64_t spectra = s->generated_gemm ? s->spectrum_offset[role] : s->natural_offset;
    const cg_arg args[3] = {in, {CG_ARG_NULL, 0}, {CG_ARG_WORKSPACE, spectra}};
    return st == CONVGEN_SUCCESS ? take_fft_kernels(&fp, t, s, phase, args, out) : st;
}

/* The C2R of the output's spectra: straight into the output through the window (clipped
 * stores, the scale and fprop's epilogue folded in: its channels are y's k), or into the padded
 * images for the clip kernel. */
static convgen_status generated_inverse(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s,
                                        bool to_operand, int phase, cg_generated *out)
{
    convgen_fft_desc d = {.rank = s->rank, .n = (int)s->d[0].size, .type = CONVGEN_FFT_C2R,
                          .batch = s->groups[2][0], .channels = s->groups[2][1],
                          .scale = to_operand ? (float)(1.0 / (double)s->points) : 1.0f};
    spectrum_layout(s, &d);
    cg_arg dst = {CG_ARG_WORKSPACE, s->real_offset};
    if (to_operand) {
        int64_t tensor_points = 1;
        for (int dd = 0; dd < s->rank; ++dd) {
            placement pl = fc_place(s, pass, 2, dd);
            d.window[dd] = (int)pl.count, d.offset[dd] = (int)pl.base; /* window_of: step 1, all inside */
            tensor_points *= pl.count;
        }
        signal_pitches(s, pass, 2, &d);
        d.real_stride[0] = s->groups[2][1] * tensor_points, d.real_stride[1] = tensor_points;
        dst = (cg_arg){CG_ARG_OUT, 0};
    }
    cg_fft_problem fp;
    convgen_status st = cg_fft_problem_init(&fp, &d);
    fp.epilogue = to_operand && stores_epilogue(p, pass, 2) ? p->epilogue : 0;
    int64_t spectra = s->generated_gemm ? s->spectrum_offset[2] : s->natural_offset;
    const cg_arg args[3] = {{CG_ARG_WORKSPACE, spectra}, {CG_ARG_NULL, 0}, dst};
    return st == CONVGEN_SUCCESS ? take_fft_kernels(&fp, t, s, phase, args, out) : st;
}

/* ---- the step programs ---- */

/* Pad (unless the identity, or the generated R2C's window does it), R2C, transpose to
 * frequency-major (but for fft-fused and the generated GEMM): operand `role` (0 or 1). */
convgen_status fc_forward_steps(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s, int role,
                                    int phase, cg_generated *out)
{
    convgen_status st = CONVGEN_SUCCESS;
    bool window = s->generated && fc_windowed(s, pass, role);
    if (!s->identity[role] && !window)
        st = operand_step(p, pass, s, role, phase, out);
    if (st == CONVGEN_SUCCESS && s->generated)
        st = generated_forward(pass, t, s, role, window, phase, out);
    else if (st == CONVGEN_SUCCESS)
        *fc_add_step(out, CG_STEP_FFT, phase) = fft_step(s, role, false, phase);
    /* fft-fused and convgen's GEMM read the natural spectra */
    if (st == CONVGEN_SUCCESS && !s->fused && !s->generated_gemm)
        st = transpose_step(p, pass, s, role, true, phase, out);
    return st;
}

/* Transpose back (but with the generated GEMM), C2R, clip (unless the generated C2R's window does it). */
static convgen_status inverse_steps(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s,
                                    int phase, cg_generated *out)
{
    convgen_status st = s->generated_gemm ? CONVGEN_SUCCESS : transpose_step(p, pass, s, 2, false, phase, out);
    bool window = false;
    if (s->generated) {
        int64_t at = 0, len = 0, src = 0;
        window = true;
        for (int d = 0; d < s->rank; ++d) {
            placement pl = fc_place(s, pass, 2, d);
            window &= fc_window_of(&pl, &at, &len, &src) && src == 0 && len == pl.count;
        }
        if (st == CONVGEN_SUCCESS)
            st = generated_inverse(p, pass, t, s, window, phase, out);
    } else {
        *fc_add_step(out, CG_STEP_FFT, phase) = fft_step(s, 2, true, phase);
    }
    if (st == CONVGEN_SUCCESS && !window)
        st = operand_step(p, pass, s, 2, phase, out);
    return st;
}

/* ---- the products: cuBLAS's CGEMM, or convgen's own (generator/gemm.c) ---- */

/* Whether convgen's complex GEMM kernel does the products, reading and writing the FFT
 * kernels' [image][bin] spectra with no transposes: for the generated FFT algorithms' single
 * GEMM (not parts' shifts), strict fp32 (cuBLAS has the TF32 tensor-core CGEMM), where
 * options->gemm asks for it (the caller then checks the kernel's 32-bit indices). CHOSEN: the
 * generated one for fft, which measured faster than cuBLAS and its transposes on 22 of 27
 * layer-passes on the H100 (L1 fprop 1.77 -> 1.10 ms) and at most 7% slower on the rest (L4,
 * whose 144 bins leave small transposes; bench/NOTES.md); cuBLAS's for fft-tiled (unmeasured).
 * TENSOR: fft's, that kernel's tensor-core form (3xTF32 by mma.sync) where the target has
 * mma.sync's TF32 (sm_80 on), else its FMA form; fft-tiled's, cuBLAS's as before (its tiles'
 * products on the tensor cores are not tested on a GPU yet). */
static bool wants_generated_gemm(const cg_tuning *tune, const lib_spec *s)
{
    int gemm = tune ? tune->gemm : CONVGEN_GEMM_CHOSEN;
    if (!s->generated || s->parts || (tune && tune->tf32) || gemm == CONVGEN_GEMM_CUBLAS)
        return false;
    return gemm == CONVGEN_GEMM_GENERATED || !s->tiled;
}

/* A step of `phase` running convgen's GEMM kernel for g, convgen_<algo>_<pass>_<part>. */
static convgen_status add_gemm_kernel(convgen_pass pass, const lib_spec *s,
                                      const cg_gemm_step *g, int phase, const char *part, cg_generated *out)
{
    cg_step *st = fc_add_step(out, CG_STEP_KERNEL, phase);
    st->op = (cg_kernel_op){.kind = CG_OP_GEMM, .gemm = *g};
    cg_kernel *k = &out->kernels[st->kernel];
    const char *algo = s->tiled ? "fft-tiled" : "fft";
    snprintf(k->name, sizeof k->name, "convgen_%s_%s_%s", s->tiled ? "fft_tiled" : "fft", convgen_pass_name(pass), part);
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: %s algorithm, %s: the products of the spectra, one complex GEMM per frequency bin",
                  CG_GENERATOR_VERSION, algo, convgen_pass_name(pass));
    if (s->chunks > 1)
        cg_value_line(h, "sub-batches: %lld chunks of %lld images (the workspace limit)", (long long)s->chunks,
                      (long long)s->batch);
    cg_value_line(h, "%s", "");
    return cg_gemm_kernel(g, h, k);
}

/* The products per bin (phase 1): cuBLAS's strided-batched CGEMM, or convgen's kernel. A sum
 * over sub-batches (accgrad) adds into C in every chunk after a kernel that zeroes it (the same
 * GEMM summing nothing) in phase 0; cuBLAS's instead overwrites in the first chunk. */
static convgen_status products_steps(const cg_problem *p, convgen_pass pass, const lib_spec *s, cg_generated *out)
{
    cg_step step = fc_gemm_step(p, pass, s);
    if (!s->generated_gemm) {
        *fc_add_step(out, CG_STEP_GEMM, 1) = step;
        return CONVGEN_SUCCESS;
    }
    cg_gemm_step g = step.gemm, zero = g;
    g.accumulate = g.accumulate && s->chunks > 1;
    g.tensor = s->tensor_gemm;
    zero.k = 0, zero.accumulate = false, zero.tensor = false;
    convgen_status st = g.accumulate ? add_gemm_kernel(pass, s, &zero, 0, "zero_products", out) : CONVGEN_SUCCESS;
    return st == CONVGEN_SUCCESS ? add_gemm_kernel(pass, s, &g, 1, "products", out) : st;
}

/* The chunks slice the batch: x, y, dy and dx advance by a chunk's images, w and dw do not. */
void fc_set_chunks(const cg_problem *p, convgen_pass pass, const lib_spec *s, cg_generated *out)
{
    int64_t x = s->batch * p->c * cg_problem_in_pixels(p), y = s->batch * p->k * cg_problem_out_pixels(p);
    const int64_t elems[3][3] = {{x, 0, y}, {y, 0, x}, {x, y, 0}};
    out->chunks = s->chunks;
    memcpy(out->chunk_elems, elems[pass], sizeof out->chunk_elems);
}

/* Convolution in parts: one GEMM per shift d, the shift's dw spectra (c x k) = x's blocks (c x
 * blocks of the chunk) op_C(dy's blocks), x's taken from the shift's number of blocks on (see
 * place_part), each summed over every block and image of the chunk (and over the chunks). */
void fc_parts_gemm_steps(const cg_problem *p, const lib_spec *s, cg_generated *out)
{
    int64_t d[CONVGEN_MAX_RANK] = {0};
    for (int64_t shift = 0; shift < s->role_tiles[2]; ++shift) {
        int64_t ahead = 0, pitch = 1; /* blocks of x between block b and block b + d */
        for (int i = s->rank - 1; i >= 0; --i) {
            ahead += d[i] * pitch;
            pitch *= fc_place_part(s, 0, i).tiles;
        }
        cg_step *st = fc_add_step(out, CG_STEP_GEMM, 1);
        *st = fc_gemm_step(p, CONVGEN_ACCGRAD, s);
        st->gemm.a_offset += ahead * s->batch * p->c * 8;
        st->gemm.c_offset += shift * p->k * p->c * 8;
        fc_next_shift(s, d);
    }
}

/* fprop and bprop transform the weights once (phase 0), then per chunk the signal, the product
 * and the inverse (phase 1). accgrad transforms both operands of each chunk and sums their
 * products (phase 1), then inverts once (phase 2). */
convgen_status fc_program(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                          lib_spec *s, cg_generated *out)
{
    s->generated_gemm = wants_generated_gemm(tune, s);
    s->tensor_gemm = s->generated_gemm && !s->tiled && tune && tune->gemm == CONVGEN_GEMM_TENSOR && cg_target_mma_tf32(t);
    convgen_status st = choose_batch(p, pass, tune, s);
    cg_step products = st == CONVGEN_SUCCESS && s->generated_gemm ? fc_gemm_step(p, pass, s) : (cg_step){0};
    if (st == CONVGEN_SUCCESS && s->generated_gemm && !cg_gemm_kernel_takes(&products.gemm)) {
        s->generated_gemm = s->tensor_gemm = false; /* past the kernel's 32-bit indices: cuBLAS's, and the headers say so */
        st = choose_batch(p, pass, tune, s);
    }
    if (st != CONVGEN_SUCCESS)
        return st;
    fc_set_chunks(p, pass, s, out);
    /* cuFFT reads an operand in place only if every chunk of it stays 8-byte aligned. */
    for (int r = 0; r < 2; ++r)
        s->identity[r] = !s->generated && is_identity(s, pass, r) && (s->chunks == 1 || out->chunk_elems[r] % 2 == 0);
    s->fft_work_offset = fc_align_up(s->workspace);
    out->workspace_bytes = s->workspace;
    bool weights_once = pass != CONVGEN_ACCGRAD;
    st = fc_forward_steps(p, pass, t, s, 1, weights_once ? 0 : 1, out);
    if (st == CONVGEN_SUCCESS)
        st = fc_forward_steps(p, pass, t, s, 0, 1, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (s->parts)
        fc_parts_gemm_steps(p, s, out);
    else
        st = products_steps(p, pass, s, out);
    if (st != CONVGEN_SUCCESS)
        return st;
    st = inverse_steps(p, pass, t, s, weights_once ? 1 : 2, out);
    out->tf32 = tune && tune->tf32;
    return st;
}
