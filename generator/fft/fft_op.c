/* The FFT op kind (op_kinds.h): one of convgen's batched FFTs (rank 1 or 2, R2C or C2R) as a
 * step of an FFT convolution's program, between the step's bound in0 and out. */
#include <math.h>
#include <stdlib.h>

#include "cpu_dft.h"
#include "op_kinds.h"

/* With its window, strides and scale; spectra dense and in natural order, whatever the
 * kernel's layout (a program only multiplies bin by bin between transforms of one layout). */
static convgen_status evaluate_fft(const cg_kernel_op *op, const cg_op_buffers *buffers)
{
    const cg_fft_problem *f = &op->fft;
    const char *in = (const char *)buffers->in[0];
    char *out = (char *)buffers->out;
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
                    cg_dft_axis(a, sizes, rank, d, -1);
                do
                    spectrum[cg_index_flat(idx, halves, rank)] = (float complex)a[cg_index_flat(idx, sizes, rank)];
                while (cg_index_next(idx, halves, rank));
                continue;
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
    free(a);
    return CONVGEN_SUCCESS;
}

/* 5 N log2 N FLOPs a transform of N points at the GEMMs' rate; the window read (or written)
 * and the half spectrum written (or read). */
static cg_work fft_work(const cg_kernel_op *op, int sm_count)
{
    (void)sm_count;
    const cg_fft_problem *f = &op->fft;
    double real = (double)f->h * f->w, bins = (double)(f->rank == 2 ? f->n : 1) * f->half;
    double points = (double)(f->rank == 2 ? f->n : 1) * f->n;
    return (cg_work){.flops = 5.0 * points * log2(points) * (double)f->count, .efficiency = CG_GEMM_EFFICIENCY,
                     .bytes = (real * 4 + bins * 8) * (double)f->count, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
}

static const char *describe_fft(const cg_kernel_op *op)
{
    return op->fft.sign > 0 ? "inverse FFT (C2R)" : "forward FFT (R2C)";
}

const cg_op_class cg_op_fft = {CG_OP_FFT, "fft", evaluate_fft, fft_work, describe_fft};
