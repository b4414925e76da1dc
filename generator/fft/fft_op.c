/* The FFT op kind (op_kinds.h): one of convgen's batched FFTs (rank 1 or 2, R2C or C2R; rank 3
 * whole, fft_cube.c's one pass, or as fft_volume.c's two stages) as a step of an FFT
 * convolution's program, between the step's bound in0 and out. */
#include <math.h>
#include <stdlib.h>

#include "cpu_dft.h"
#include "fft_plan.h"
#include "op_kinds.h"
#include "util.h"

/* One transform of a rank 1 or 2 problem (or one plane of a rank 3 one): the signal at element
 * `real`, the spectrum at complex value `at`, dense and in natural order whatever the kernel's
 * layout (a program only multiplies bin by bin between transforms of one layout). */
static void transform_one(const cg_fft_problem *f, const char *in, char *out, int64_t real, int64_t at,
                          double complex *a)
{
    int64_t n[2] = {f->n, f->n}, points = f->rank == 2 ? (int64_t)f->n * f->n : f->n;
    int64_t half[2] = {f->rank == 2 ? f->n : f->half, f->half};
    int rank = f->rank;
    const int64_t *sizes = rank == 2 ? n : n + 1, *halves = rank == 2 ? half : half + 1;
    float complex *spectrum = (float complex *)(f->sign < 0 ? out : (char *)in) + at;
    int64_t idx[2] = {0, 0};
    if (f->sign < 0) { /* R2C: the window at (oy, ox), the rest zero */
        const float *x = (const float *)in + real;
        for (int64_t i = 0; i < points; ++i)
            a[i] = 0;
        for (int r = 0; r < f->h; ++r)
            for (int col = 0; col < f->w; ++col)
                a[(rank == 2 ? (int64_t)(f->oy + r) * f->n : 0) + f->ox + col] = x[r * f->pitch + col];
        for (int d = 0; d < rank; ++d)
            cg_dft_axis(a, sizes, rank, d, -1);
        do
            spectrum[cg_index_flat(idx, halves, rank)] = (float complex)(f->scale * a[cg_index_flat(idx, sizes, rank)]);
        while (cg_index_next(idx, halves, rank));
        return;
    }
    do { /* C2R: the full spectrum from the half, then the window, scaled */
        int64_t mirror[2];
        bool stored;
        cg_dft_hermitian_source(idx, sizes, halves, rank, mirror, &stored);
        double complex v = spectrum[cg_index_flat(mirror, halves, rank)];
        a[cg_index_flat(idx, sizes, rank)] = stored ? v : conj(v);
    } while (cg_index_next(idx, sizes, rank));
    for (int d = 0; d < rank; ++d)
        cg_dft_axis(a, sizes, rank, d, +1);
    float *y = (float *)out + real;
    for (int r = 0; r < f->h; ++r)
        for (int col = 0; col < f->w; ++col)
            y[r * f->pitch + col] =
                (float)(f->scale * creal(a[(rank == 2 ? (int64_t)(f->oy + r) * f->n : 0) + f->ox + col]));
}

/* One volume of a rank 3 problem done in one pass (fft_cube.c): the window of the signal at
 * element `real` (plane and row pitches), the spectrum at complex value `at`, dense and in
 * natural order as transform_one's. a holds n^3 values. */
static void transform_volume(const cg_fft_problem *f, const char *in, char *out, int64_t real, int64_t at,
                             double complex *a)
{
    const int64_t n[3] = {f->n, f->n, f->n}, half[3] = {f->n, f->n, f->half};
    const int64_t points = (int64_t)f->n * f->n * f->n;
    float complex *spectrum = (float complex *)(f->sign < 0 ? out : (char *)in) + at;
    int64_t idx[3] = {0, 0, 0};
    if (f->sign < 0) {
        const float *x = (const float *)in + real;
        for (int64_t i = 0; i < points; ++i)
            a[i] = 0;
        for (int z = 0; z < f->d; ++z)
            for (int r = 0; r < f->h; ++r)
                for (int col = 0; col < f->w; ++col)
                    a[((int64_t)(f->oz + z) * f->n + f->oy + r) * f->n + f->ox + col] =
                        x[z * f->plane_pitch + r * f->pitch + col];
        for (int d = 0; d < 3; ++d)
            cg_dft_axis(a, n, 3, d, -1);
        do
            spectrum[cg_index_flat(idx, half, 3)] = (float complex)(f->scale * a[cg_index_flat(idx, n, 3)]);
        while (cg_index_next(idx, half, 3));
        return;
    }
    do {
        int64_t mirror[3];
        bool stored;
        cg_dft_hermitian_source(idx, n, half, 3, mirror, &stored);
        double complex v = spectrum[cg_index_flat(mirror, half, 3)];
        a[cg_index_flat(idx, n, 3)] = stored ? v : conj(v);
    } while (cg_index_next(idx, n, 3));
    for (int d = 0; d < 3; ++d)
        cg_dft_axis(a, n, 3, d, +1);
    float *y = (float *)out + real;
    for (int z = 0; z < f->d; ++z)
        for (int r = 0; r < f->h; ++r)
            for (int col = 0; col < f->w; ++col)
                y[z * f->plane_pitch + r * f->pitch + col] =
                    (float)(f->scale * creal(a[((int64_t)(f->oz + z) * f->n + f->oy + r) * f->n + f->ox + col]));
}

/* A rank 3 problem's depth pass (fft_volume.c): along depth at every bin of a plane, forward
 * from the window's d planes at the front of each spectrum to all n (in place: in may be out),
 * inverse from all n to the window's d planes, dense per entry. Unscaled but the forward's. */
static void depth_pass(const cg_fft_problem *f, const char *in, char *out, double complex *column)
{
    int64_t bins = cg_fft_plane_bins(f);
    int reads = f->sign < 0 ? f->d : f->n;
    for (int64_t b = 0; b < f->batch; ++b)
        for (int64_t c = 0; c < f->channels; ++c) {
            int64_t spectrum = b * f->spectrum_stride[0] + c * f->spectrum_stride[1];
            int64_t planes = (b * f->channels + c) * f->d * bins;
            const float complex *src = (const float complex *)in + spectrum;
            float complex *dst = (float complex *)out + (f->sign < 0 ? spectrum : planes);
            for (int64_t e = 0; e < bins; ++e) {
                for (int j = 0; j < reads; ++j)
                    column[j] = src[j * bins + e];
                int writes = f->sign < 0 ? f->n : f->d;
                for (int k = 0; k < writes; ++k) {
                    double complex sum = 0;
                    for (int j = 0; j < reads; ++j) { /* forward: plane j is depth oz + j; inverse: bin j */
                        long e_kj = f->sign < 0 ? (long)k * (f->oz + j) : (long)j * (f->oz + k);
                        double angle = 2.0 * M_PI * (double)(e_kj % f->n) / f->n;
                        sum += column[j] * (cos(angle) + f->sign * sin(angle) * I);
                    }
                    dst[k * bins + e] = (float complex)(f->sign < 0 ? f->scale * sum : sum);
                }
            }
        }
}

/* With its window, strides and scale; R2C and C2R (the kinds programs use), rank 1 and 2, and
 * rank 3 whole (fft_cube.c's one pass) or as the two stages of fft_volume.c: the planes, then or
 * before that the depth pass. */
static convgen_status evaluate_fft(const cg_kernel_op *op, const cg_op_buffers *buffers)
{
    const cg_fft_problem *f = &op->fft;
    const char *in = (const char *)buffers->in[0];
    char *out = (char *)buffers->out;
    if (f->type == CONVGEN_FFT_C2C)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the CPU evaluation of FFT steps takes R2C and C2R, not C2C");
    int64_t points = f->rank == 1 ? f->n : f->rank == 2 ? (int64_t)f->n * f->n : (int64_t)f->n * f->n * f->n;
    double complex *a = malloc(sizeof *a * (size_t)(points > FFT_MAX_N ? points : FFT_MAX_N));
    if (!a)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory evaluating an FFT step");
    if (f->depth_stage) {
        depth_pass(f, in, out, a);
        free(a);
        return CONVGEN_SUCCESS;
    }
    for (int64_t b = 0; b < f->batch; ++b)
        for (int64_t c = 0; c < f->channels; ++c)
            for (int j = 0; j < f->planes; ++j)
                (f->rank == 3 ? transform_volume : transform_one)(f, in, out,
                              b * f->real_stride[0] + c * f->real_stride[1] + j * f->plane_stride[0],
                              b * f->spectrum_stride[0] + c * f->spectrum_stride[1] + j * f->plane_stride[1], a);
    free(a);
    return CONVGEN_SUCCESS;
}

/* 5 N log2 N FLOPs a transform of N points at the GEMMs' rate; the window read (or written)
 * and the half spectrum written (or read). */
static cg_work fft_work(const cg_kernel_op *op, int sm_count)
{
    (void)sm_count;
    const cg_fft_problem *f = &op->fft;
    if (f->depth_stage) { /* count x plane bins columns of n points; d planes on one side, n on the other */
        double columns = (double)f->count * (double)cg_fft_plane_bins(f);
        return (cg_work){.flops = 5.0 * f->n * log2(f->n) * columns, .efficiency = CG_GEMM_EFFICIENCY,
                         .bytes = (double)(f->d + f->n) * 8 * columns, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
    }
    double outer = f->rank == 3 ? (double)f->n * f->n : f->rank == 2 ? f->n : 1; /* the spectrum's outer axes */
    double real = (double)f->d * f->h * f->w, bins = outer * f->half, points = outer * f->n;
    return (cg_work){.flops = 5.0 * points * log2(points) * (double)f->count, .efficiency = CG_GEMM_EFFICIENCY,
                     .bytes = (real * 4 + bins * 8) * (double)f->count, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
}

static const char *describe_fft(const cg_kernel_op *op)
{
    if (op->fft.depth_stage)
        return op->fft.sign > 0 ? "inverse FFT's depth pass" : "forward FFT's depth pass";
    return op->fft.sign > 0 ? "inverse FFT (C2R)" : "forward FFT (R2C)";
}

const cg_op_class cg_op_fft = {CG_OP_FFT, "fft", evaluate_fft, fft_work, describe_fft};
