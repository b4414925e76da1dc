/* A plan's step program on the CPU: cg_program_describe lists it for readers, and
 * cg_program_evaluate runs it, for CI (no GPU there). The evaluation checks
 * what the planner decided (placements, buffer offsets, GEMM parameters, phases and chunks)
 * against the CPU reference; the kernels' CUDA itself is checked on the GPU. The transforms are
 * separable naive DFTs in double precision, written in fp32 like cuFFT's, at the sizes of the
 * tests (tens of points), where a library FFT would buy nothing. */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "util.h"

typedef struct machine {
    const float *in[2];
    float *out;
    char *ws;
} machine;

/* The source index of padded position q along one dimension, or -1 (the pad kernel's rule). */
static int64_t pad_source(const cg_placement *pl, int64_t size, int64_t q)
{
    int64_t v = pl->mirror && q ? size - q : q;
    if (v >= pl->limit)
        return -1;
    int64_t step = pl->step < 0 ? -pl->step : pl->step, t = pl->step < 0 ? pl->base - v : v - pl->base;
    if (t < 0 || t % step)
        return -1;
    return t / step < pl->count ? t / step : -1;
}

/* Row-major index of a multi-index over sizes. */
static int64_t flat(const int64_t *index, const int64_t *sizes, int rank)
{
    int64_t f = 0;
    for (int d = 0; d < rank; ++d)
        f = f * sizes[d] + index[d];
    return f;
}

/* Visits every multi-index over sizes (rank <= CONVGEN_MAX_RANK), last dimension fastest. */
static bool next_index(int64_t *index, const int64_t *sizes, int rank)
{
    for (int d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d])
            return true;
        index[d] = 0;
    }
    return false;
}

/* Tile t's index along each dimension (the last fastest). */
static void tile_index(const cg_kernel_op *op, int64_t t, int64_t *tile)
{
    for (int d = op->rank - 1; d >= 0; --d) {
        int64_t n = op->dims[d].tiles > 0 ? op->dims[d].tiles : 1;
        tile[d] = t % n;
        t /= n;
    }
}

/* Padded position q of tile `tile` of an image of operand `src` (its op->dims placements, tile
 * t shifted by t * tile_step): the operand's element there, or 0. */
static float padded_value(const cg_kernel_op *op, const float *image, const int64_t *tile, const int64_t *q)
{
    int64_t counts[CONVGEN_MAX_RANK], src[CONVGEN_MAX_RANK];
    for (int d = 0; d < op->rank; ++d) {
        cg_placement shifted = op->dims[d];
        shifted.base -= tile[d] * shifted.tile_step;
        counts[d] = shifted.count;
        if ((src[d] = pad_source(&shifted, op->size[d], q[d])) < 0)
            return 0.0f;
    }
    return image[flat(src, counts, op->rank)];
}

/* The operand's points per image: the product of its placements' counts. */
static int64_t operand_points(const cg_kernel_op *op)
{
    int64_t points = 1;
    for (int d = 0; d < op->rank; ++d)
        points *= op->dims[d].count;
    return points;
}

static void run_pad(const cg_kernel_op *op, machine *m)
{
    int64_t points = 1, tensor_points = operand_points(op), tiles = op->tiles > 0 ? op->tiles : 1;
    for (int d = 0; d < op->rank; ++d)
        points *= op->size[d];
    float *padded = (float *)(m->ws + op->real_offset);
    for (int64_t g = 0; g < tiles * op->images; ++g) { /* [tile][image] */
        int64_t image = g % op->images, tile[CONVGEN_MAX_RANK], q[CONVGEN_MAX_RANK] = {0};
        tile_index(op, g / op->images, tile);
        do
            padded[g * points + flat(q, op->size, op->rank)] =
                padded_value(op, m->in[op->operand] + image * tensor_points, tile, q);
        while (next_index(q, op->size, op->rank));
    }
}

/* Where a full spectrum's bin idx is stored in its Hermitian half (the last dimension's first
 * half[rank - 1] bins): *stored is false where the bin is the conjugate of the mirror's. */
static void hermitian_source(const int64_t *idx, const int64_t *n, const int64_t *half, int rank, int64_t *at,
                             bool *stored)
{
    *stored = idx[rank - 1] < half[rank - 1];
    for (int e = 0; e < rank; ++e)
        at[e] = *stored ? idx[e] : (n[e] - idx[e]) % n[e];
}

/* Convolution in parts: tap o of each image, the sum over the shifts that reach it. */
static void run_parts_clip(const cg_kernel_op *op, machine *m)
{
    int64_t counts[CONVGEN_MAX_RANK], shifts[CONVGEN_MAX_RANK], points = 1, out_points = 1;
    for (int d = 0; d < op->rank; ++d) {
        counts[d] = op->dims[d].count, shifts[d] = op->dims[d].shifts;
        points *= op->size[d], out_points *= counts[d];
    }
    const float *padded = (const float *)(m->ws + op->real_offset);
    for (int64_t g = 0; g < op->images; ++g) {
        int64_t o[CONVGEN_MAX_RANK] = {0};
        do {
            double sum = 0;
            int64_t sh[CONVGEN_MAX_RANK] = {0};
            do {
                int64_t pos[CONVGEN_MAX_RANK];
                bool reached = true;
                for (int d = 0; d < op->rank; ++d) {
                    const cg_placement *pl = &op->dims[d];
                    int64_t lag = pl->base + pl->step * o[d] - sh[d] * pl->block;
                    reached &= lag > -pl->block && lag < pl->block;
                    pos[d] = lag < 0 ? lag + op->size[d] : lag;
                }
                if (reached)
                    sum += padded[(flat(sh, shifts, op->rank) * op->images + g) * points + flat(pos, op->size, op->rank)];
            } while (next_index(sh, shifts, op->rank));
            m->out[g * out_points + flat(o, counts, op->rank)] = (float)(sum * op->scale);
        } while (next_index(o, counts, op->rank));
    }
}

static void run_clip(const cg_kernel_op *op, machine *m)
{
    if (op->dims[0].shifts > 0) {
        run_parts_clip(op, m);
        return;
    }
    int64_t counts[CONVGEN_MAX_RANK], points = 1, out_points = 1;
    for (int d = 0; d < op->rank; ++d)
        counts[d] = op->dims[d].count, points *= op->size[d], out_points *= counts[d];
    const float *padded = (const float *)(m->ws + op->real_offset);
    for (int64_t g = 0; g < op->images; ++g) {
        int64_t o[CONVGEN_MAX_RANK] = {0}, pos[CONVGEN_MAX_RANK];
        do {
            int64_t tile = 0;
            for (int d = 0; d < op->rank; ++d) { /* tiled: tile o / step, at o % step */
                const cg_placement *pl = &op->dims[d];
                int64_t t = pl->tile_step ? o[d] / pl->tile_step : 0, r = o[d] - t * pl->tile_step;
                tile = tile * (pl->tiles > 0 ? pl->tiles : 1) + t;
                pos[d] = pl->base + pl->step * r;
            }
            m->out[g * out_points + flat(o, counts, op->rank)] =
                (float)(padded[(tile * op->images + g) * points + flat(pos, op->size, op->rank)] * op->scale);
        } while (next_index(o, counts, op->rank));
    }
}

static void run_transpose(const cg_kernel_op *op, machine *m)
{
    const float complex *src = (const float complex *)(m->ws + op->src);
    float complex *dst = (float complex *)(m->ws + op->dst);
    for (int64_t r = 0; r < op->rows; ++r)
        for (int64_t c = 0; c < op->cols; ++c)
            dst[c * op->rows + r] = src[r * op->cols + c];
}

/* In place along dimension d of a [n0][n1]... complex array: a DFT with exp(sign 2 pi i jk / n). */
static bool dft_axis(double complex *a, const int64_t *n, int rank, int d, int sign)
{
    int64_t len = n[d], stride = 1, outer = 1;
    for (int e = d + 1; e < rank; ++e)
        stride *= n[e];
    for (int e = 0; e < d; ++e)
        outer *= n[e];
    double complex *line = malloc(sizeof *line * (size_t)len), *w = malloc(sizeof *w * (size_t)len);
    for (int64_t k = 0; w && k < len; ++k)
        w[k] = cexp(sign * 2.0 * M_PI * I * (double)k / (double)len);
    for (int64_t o = 0; line && w && o < outer; ++o)
        for (int64_t i = 0; i < stride; ++i) {
            double complex *base = a + o * len * stride + i;
            for (int64_t k = 0; k < len; ++k) {
                double complex sum = 0;
                for (int64_t j = 0; j < len; ++j)
                    sum += base[j * stride] * w[(j * k) % len];
                line[k] = sum;
            }
            for (int64_t k = 0; k < len; ++k)
                base[k * stride] = line[k];
        }
    bool ok = line && w;
    free(line);
    free(w);
    return ok;
}

/* cuFFT's R2C (dense images in, half spectra out) or C2R (the reverse, unnormalized). */
static bool run_fft(const cg_fft_step *f, machine *m)
{
    int64_t points = 1, half[CONVGEN_MAX_RANK], bins = 1;
    for (int d = 0; d < f->rank; ++d) {
        points *= f->n[d];
        half[d] = d == f->rank - 1 ? f->n[d] / 2 + 1 : f->n[d];
        bins *= half[d];
    }
    const float *real_in = f->real_operand >= 0 ? m->in[f->real_operand] : (const float *)(m->ws + f->real_offset);
    float *real_out = (float *)(m->ws + f->real_offset);
    float complex *spectra = (float complex *)(m->ws + f->spectrum_offset);
    double complex *a = malloc(sizeof *a * (size_t)points);
    bool ok = a != NULL;
    for (int64_t g = 0; ok && g < f->batch; ++g) {
        int64_t idx[CONVGEN_MAX_RANK] = {0};
        if (!f->inverse) {
            for (int64_t i = 0; i < points; ++i)
                a[i] = real_in[g * points + i];
            for (int d = 0; d < f->rank; ++d)
                ok &= dft_axis(a, f->n, f->rank, d, -1);
            do
                spectra[g * bins + flat(idx, half, f->rank)] = (float complex)a[flat(idx, f->n, f->rank)];
            while (next_index(idx, half, f->rank));
            continue;
        }
        /* The full spectrum from the half: X[k] = conj(X[-k]) for the missing bins. */
        do {
            int64_t mirror[CONVGEN_MAX_RANK];
            bool stored;
            hermitian_source(idx, f->n, half, f->rank, mirror, &stored);
            double complex v = spectra[g * bins + flat(mirror, half, f->rank)];
            a[flat(idx, f->n, f->rank)] = stored ? v : conj(v);
        } while (next_index(idx, f->n, f->rank));
        for (int d = 0; d < f->rank; ++d)
            ok &= dft_axis(a, f->n, f->rank, d, +1);
        for (int64_t i = 0; i < points; ++i)
            real_out[g * points + i] = (float)creal(a[i]);
    }
    free(a);
    return ok;
}

/* The real GEMM: column-major op(A) op(B) per batch entry, 'T' the transpose. */
static void run_real_gemm(const cg_gemm_step *g, machine *m, bool add)
{
    const float *A = (const float *)(m->ws + g->a_offset), *B = (const float *)(m->ws + g->b_offset);
    float *C = (float *)(m->ws + g->c_offset);
    for (int64_t b = 0; b < g->batch; ++b)
        for (int64_t i = 0; i < g->m; ++i)
            for (int64_t j = 0; j < g->n; ++j) {
                double sum = 0;
                for (int64_t l = 0; l < g->k; ++l)
                    sum += (double)A[b * g->a_stride + (g->transa == 'T' ? l + i * g->lda : i + l * g->lda)] *
                           B[b * g->b_stride + (g->transb == 'T' ? j + l * g->ldb : l + j * g->ldb)];
                float *c = &C[b * g->c_stride + i + j * g->ldc];
                *c = (float)(sum + (add ? *c : 0));
            }
}

/* Column-major op(A) op(B) per batch entry, 'C' the conjugate transpose; beta 1 when adding. */
static void run_gemm(const cg_gemm_step *g, machine *m, bool add)
{
    if (g->real) {
        run_real_gemm(g, m, add);
        return;
    }
    const float complex *A = (const float complex *)(m->ws + g->a_offset);
    const float complex *B = (const float complex *)(m->ws + g->b_offset);
    float complex *C = (float complex *)(m->ws + g->c_offset);
    const int64_t inc = g->inc > 1 ? g->inc : 1; /* along the leading dimension */
    for (int64_t b = 0; b < g->batch; ++b)
        for (int64_t i = 0; i < g->m; ++i)
            for (int64_t j = 0; j < g->n; ++j) {
                double complex sum = 0;
                for (int64_t l = 0; l < g->k; ++l) {
                    double complex x = g->transa == 'C' ? conj(A[b * g->a_stride + l * inc + i * g->lda])
                                                        : A[b * g->a_stride + i * inc + l * g->lda];
                    double complex y = g->transb == 'C' ? conj(B[b * g->b_stride + j * inc + l * g->ldb])
                                                        : B[b * g->b_stride + l * inc + j * g->ldb];
                    sum += x * y;
                }
                float complex *c = &C[b * g->c_stride + i * inc + j * g->ldc];
                *c = (float complex)(sum + (add ? (double complex)*c : 0));
            }
}

/* A step's four pointers (in0, in1, out, workspace) after its bindings. */
static void bind(const cg_step *st, const machine *m, char *ptr[4])
{
    char *own[4] = {(char *)m->in[0], (char *)m->in[1], (char *)m->out, m->ws};
    for (int a = 0; a < 4; ++a) {
        const cg_arg *arg = &st->args[a];
        ptr[a] = arg->base == CG_ARG_SAME ? own[a] : arg->base == CG_ARG_NULL ? NULL : own[arg->base - CG_ARG_IN0] + arg->offset;
    }
}

/* One of convgen's batched FFTs (rank 1 or 2, R2C or C2R) with its window, strides and scale;
 * spectra dense and in natural order. */
static void run_generated_fft(const cg_fft_problem *f, const char *in, char *out)
{
    int64_t n[2] = {f->n, f->n}, points = f->rank == 2 ? (int64_t)f->n * f->n : f->n;
    int64_t half[2] = {f->rank == 2 ? f->n : f->half, f->half};
    int rank = f->rank;
    const int64_t *sizes = rank == 2 ? n : n + 1, *halves = rank == 2 ? half : half + 1;
    double complex *a = malloc(sizeof *a * (size_t)points);
    for (int64_t b = 0; a && b < f->batch; ++b)
        for (int64_t c = 0; c < f->channels; ++c) {
            int64_t real = b * f->real_stride[0] + c * f->real_stride[1];
            float complex *spectrum = (float complex *)(f->sign < 0 ? out : in) + b * f->spectrum_stride[0] +
                                      c * f->spectrum_stride[1];
            int64_t idx[2] = {0, 0};
            if (f->sign < 0) { /* R2C: the window at (oy, ox), the rest zero */
                const float *x = (const float *)in + real;
                for (int64_t i = 0; i < points; ++i)
                    a[i] = 0;
                for (int r = 0; r < f->h; ++r)
                    for (int col = 0; col < f->w; ++col)
                        a[(rank == 2 ? (int64_t)(f->oy + r) * f->n : 0) + f->ox + col] = x[r * f->pitch + col];
                for (int d = 0; d < rank; ++d)
                    dft_axis(a, sizes, rank, d, -1);
                do
                    spectrum[flat(idx, halves, rank)] = (float complex)a[flat(idx, sizes, rank)];
                while (next_index(idx, halves, rank));
                continue;
            }
            do { /* C2R: the full spectrum from the half, then the window, scaled */
                int64_t mirror[2];
                bool stored;
                hermitian_source(idx, sizes, halves, rank, mirror, &stored);
                double complex v = spectrum[flat(mirror, halves, rank)];
                a[flat(idx, sizes, rank)] = stored ? v : conj(v);
            } while (next_index(idx, sizes, rank));
            for (int d = 0; d < rank; ++d)
                dft_axis(a, sizes, rank, d, +1);
            float *y = (float *)out + real;
            for (int r = 0; r < f->h; ++r)
                for (int col = 0; col < f->w; ++col)
                    y[r * f->pitch + col] =
                        (float)(f->scale * creal(a[(rank == 2 ? (int64_t)(f->oy + r) * f->n : 0) + f->ox + col]));
        }
    free(a);
}

/* fft-fused's kernel by its definition: per image and tile, each channel's tile transformed in
 * double, the products with the weights' spectra (extended from the Hermitian half) summed,
 * transformed back and the tile's valid outputs clipped. */
static bool run_fused(const cg_kernel_op *op, machine *m)
{
    int64_t n[CONVGEN_MAX_RANK], half[CONVGEN_MAX_RANK], outs[CONVGEN_MAX_RANK];
    int64_t points = 1, bins = 1, plane = operand_points(op), out_plane = 1, rank = op->rank;
    for (int d = 0; d < rank; ++d) {
        n[d] = op->size[d], half[d] = d == rank - 1 ? n[d] / 2 + 1 : n[d];
        outs[d] = op->out_dims[d].count;
        points *= n[d], bins *= half[d], out_plane *= outs[d];
    }
    const float complex *w = (const float complex *)(m->ws + op->spectra);
    double complex *x = malloc(sizeof *x * (size_t)(points * op->channels)), *y = malloc(sizeof *y * (size_t)points);
    bool ok = x && y;
    for (int64_t g = 0; ok && g < op->images; ++g)
        for (int64_t t = 0; ok && t < op->tiles; ++t) {
            int64_t tile[CONVGEN_MAX_RANK];
            tile_index(op, t, tile);
            for (int64_t c = 0; ok && c < op->channels; ++c) { /* the tile, transformed */
                double complex *xc = x + c * points;
                int64_t q[CONVGEN_MAX_RANK] = {0};
                do
                    xc[flat(q, n, (int)rank)] = padded_value(op, m->in[0] + (g * op->channels + c) * plane, tile, q);
                while (next_index(q, n, (int)rank));
                for (int d = 0; d < rank; ++d)
                    ok &= dft_axis(xc, n, (int)rank, d, -1);
            }
            for (int64_t o = 0; ok && o < op->outputs; ++o) {
                int64_t k[CONVGEN_MAX_RANK] = {0};
                do { /* Y = sum_c X_c W, the weights' full spectrum from their half */
                    int64_t mirror[CONVGEN_MAX_RANK];
                    bool stored;
                    hermitian_source(k, n, half, (int)rank, mirror, &stored);
                    double complex sum = 0;
                    for (int64_t c = 0; c < op->channels; ++c) {
                        double complex wv = w[(o * op->w_out + c * op->w_in) * bins + flat(mirror, half, (int)rank)];
                        wv = stored ? wv : conj(wv);
                        sum += x[c * points + flat(k, n, (int)rank)] * (op->conjugate ? conj(wv) : wv);
                    }
                    y[flat(k, n, (int)rank)] = sum;
                } while (next_index(k, n, (int)rank));
                for (int d = 0; d < rank; ++d)
                    ok &= dft_axis(y, n, (int)rank, d, +1);
                int64_t r[CONVGEN_MAX_RANK] = {0}, steps[CONVGEN_MAX_RANK], at[CONVGEN_MAX_RANK], pos[CONVGEN_MAX_RANK];
                for (int d = 0; d < rank; ++d)
                    steps[d] = op->out_dims[d].tile_step;
                do { /* the tile's valid outputs */
                    bool inside = true;
                    for (int d = 0; d < rank; ++d) {
                        at[d] = tile[d] * steps[d] + r[d];
                        pos[d] = op->out_dims[d].base + op->out_dims[d].step * r[d];
                        inside &= at[d] < outs[d];
                    }
                    if (inside)
                        m->out[(g * op->outputs + o) * out_plane + flat(at, outs, (int)rank)] =
                            (float)(creal(y[flat(pos, n, (int)rank)]) * op->scale);
                } while (next_index(r, steps, (int)rank));
            }
        }
    free(x);
    free(y);
    return ok;
}

static convgen_status run_phase(const cg_generated *g, int phase, bool later_chunk, machine *m)
{
    for (int i = 0; i < g->step_count; ++i) {
        const cg_step *st = &g->steps[i];
        if (st->phase != phase)
            continue;
        if (st->kind == CG_STEP_FFT && !run_fft(&st->fft, m))
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a DFT on the CPU");
        else if (st->kind == CG_STEP_FFT)
            continue;
        else if (st->kind == CG_STEP_GEMM)
            run_gemm(&st->gemm, m, st->gemm.accumulate && later_chunk);
        else if (st->op.kind == CG_OP_PAD)
            run_pad(&st->op, m);
        else if (st->op.kind == CG_OP_CLIP)
            run_clip(&st->op, m);
        else if (st->op.kind == CG_OP_FUSED) {
            if (!run_fused(&st->op, m))
                return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the fused kernel's DFTs on the CPU");
        }
        else if (st->op.kind == CG_OP_GEMM) /* convgen's kernel adds in every sub-batch, after a zeroing step */
            run_gemm(&st->op.gemm, m, st->op.gemm.accumulate && st->op.gemm.k > 0);
        else if (st->op.kind == CG_OP_WINOGRAD) {
            if (!cg_wino_op_evaluate(&st->op, m->in, m->out, m->ws))
                return cg_fail(CONVGEN_ERROR_INTERNAL, "step %d: its Winograd transform cannot be derived", i);
        }
        else if (st->op.kind == CG_OP_TRANSPOSE)
            run_transpose(&st->op, m);
        else if (st->op.kind == CG_OP_FFT) {
            char *ptr[4];
            bind(st, m, ptr);
            run_generated_fft(&st->op.fft, ptr[0], ptr[2]);
        }
        else
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "step %d: kernel %s has no op to evaluate on the CPU", i,
                           g->kernels[st->kernel].name);
    }
    return CONVGEN_SUCCESS;
}

/* Phases 1 (per chunk) and 2 on a workspace that phase 0 has filled. in1 may be NULL where no
 * step of those phases reads it. */
static convgen_status run_chunks(const cg_generated *g, const float *in0, const float *in1, float *out, char *ws)
{
    convgen_status s = CONVGEN_SUCCESS;
    for (int64_t c = 0; c < g->chunks && s == CONVGEN_SUCCESS; ++c) {
        machine chunk = {.in = {in0 + c * g->chunk_elems[0], in1 ? in1 + c * g->chunk_elems[1] : NULL},
                         .out = out + c * g->chunk_elems[2], .ws = ws};
        s = run_phase(g, 1, c > 0, &chunk);
    }
    machine m = {.in = {in0, in1}, .out = out, .ws = ws};
    return s == CONVGEN_SUCCESS ? run_phase(g, 2, false, &m) : s;
}

/* A workspace poisoned with NaN, so that a buffer read before it is written shows. */
static char *poisoned_workspace(const cg_generated *g)
{
    char *ws = malloc((size_t)g->workspace_bytes + 16);
    if (ws)
        memset(ws, 0xFF, (size_t)g->workspace_bytes);
    else
        cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a %lld-byte workspace", (long long)g->workspace_bytes);
    return ws;
}

convgen_status cg_program_evaluate(const cg_generated *g, const float *in0, const float *in1, float *out)
{
    if (g->step_count == 0)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the plan has no step program");
    machine m = {.in = {in0, in1}, .out = out, .ws = poisoned_workspace(g)};
    if (!m.ws)
        return CONVGEN_ERROR_OUT_OF_MEMORY;
    convgen_status s = run_phase(g, 0, false, &m);
    if (s == CONVGEN_SUCCESS)
        s = run_chunks(g, in0, in1, out, m.ws);
    free(m.ws);
    return s;
}

convgen_status cg_program_evaluate_prepared(const cg_generated *g, const float *w, int count, const float *const *in0s,
                                            float *const *outs)
{
    if (!cg_program_prepares_weights(g))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the %s %s program has no weights to prepare",
                       convgen_algo_name(g->algo), convgen_pass_name(g->pass));
    machine m = {.in = {NULL, w}, .out = NULL, .ws = poisoned_workspace(g)};
    if (!m.ws)
        return CONVGEN_ERROR_OUT_OF_MEMORY;
    convgen_status s = run_phase(g, 0, false, &m);
    for (int i = 0; i < count && s == CONVGEN_SUCCESS; ++i)
        s = run_chunks(g, in0s[i], NULL, outs[i], m.ws);
    free(m.ws);
    return s;
}


static void describe_step(const cg_generated *g, const cg_step *st, cg_buf *b)
{
    if (st->kind == CG_STEP_KERNEL) {
        const cg_kernel *k = &g->kernels[st->kernel];
        cg_buf_printf(b, " *     kernel %d: %s, grid (%u, %u, %u), block (%u, %u, %u)\n", st->kernel, k->name, k->grid[0],
                      k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]);
        return;
    }
    if (st->kind == CG_STEP_FFT) {
        const cg_fft_step *f = &st->fft;
        char real[48];
        if (f->real_operand >= 0)
            snprintf(real, sizeof real, "in%d in place", f->real_operand);
        else
            snprintf(real, sizeof real, "at byte %lld", (long long)f->real_offset);
        cg_buf_printf(b, " *     cuFFT %s, %lld images of ", f->inverse ? "C2R" : "R2C", (long long)f->batch);
        for (int d = 0; d < f->rank; ++d)
            cg_buf_printf(b, "%s%lld", d ? "x" : "", (long long)f->n[d]);
        cg_buf_printf(b, ": real %s, spectra at byte %lld\n", real, (long long)f->spectrum_offset);
        return;
    }
    const cg_gemm_step *m = &st->gemm;
    cg_buf_printf(b,
                  " *     cuBLAS %s x %lld %s: C = op%c(A) op%c(B), m %lld n %lld k %lld;\n"
                  " *       A at byte %lld (lda %lld, stride %lld), B at %lld (ldb %lld, stride %lld),\n"
                  " *       C at %lld (ldc %lld, stride %lld)%s\n",
                  m->real ? "SGEMM" : "CGEMM", (long long)m->batch, m->real ? "transform elements" : "bins", m->transa,
                  m->transb, (long long)m->m, (long long)m->n, (long long)m->k,
                  (long long)m->a_offset, (long long)m->lda, (long long)m->a_stride, (long long)m->b_offset,
                  (long long)m->ldb, (long long)m->b_stride, (long long)m->c_offset, (long long)m->ldc,
                  (long long)m->c_stride, m->accumulate ? ", summed over the sub-batches" : "");
}

char *cg_program_describe(const cg_generated *g)
{
    cg_buf b = {0};
    bool library_fft = false;
    for (int i = 0; i < g->step_count; ++i)
        library_fft |= g->steps[i].kind == CG_STEP_FFT;
    cg_buf_printf(&b, "/*\n * The %s plan's program, %s: the steps the runtime runs, in order (N: as is, T: transpose, C: conjugate\n"
                      " * transpose). Workspace: %lld bytes%s.\n",
                  convgen_algo_name(g->algo), convgen_pass_name(g->pass), (long long)g->workspace_bytes,
                  library_fft ? " of buffers; on a device, cuFFT's work area follows" : "");
    if (g->chunks > 1)
        cg_buf_printf(&b, " * %lld sub-batches: in0, in1 and out advance by %lld, %lld and %lld floats each.\n",
                      (long long)g->chunks, (long long)g->chunk_elems[0], (long long)g->chunk_elems[1],
                      (long long)g->chunk_elems[2]);
    for (int phase = 0; phase < 3; ++phase) {
        bool any = false;
        for (int i = 0; i < g->step_count; ++i)
            any |= g->steps[i].phase == phase;
        if (!any)
            continue;
        const char *names[3] = {cg_program_prepares_weights(g) ? "first, once: the weights' transforms (alone in "
                                                                 "convgen_prepare_weights)"
                                                               : "first, once",
                                g->chunks > 1 ? "per sub-batch" : "then", "last, once"};
        cg_buf_printf(&b, " *   %s:\n", names[phase]);
        for (int i = 0; i < g->step_count; ++i)
            if (g->steps[i].phase == phase)
                describe_step(g, &g->steps[i], &b);
    }
    cg_buf_puts(&b, " */\n");
    return cg_buf_take(&b);
}
