/* The TRANSPOSE op kind (op_kinds.h): spectra between the natural layout cuFFT writes and the
 * frequency-major one the products read (program.c's transpose kernel). */
#include <complex.h>

#include "op_kinds.h"

static convgen_status evaluate_transpose(const cg_kernel_op *kop, const cg_op_buffers *b)
{
    const cg_transpose_op *op = &kop->transpose;
    const float complex *src = (const float complex *)(b->ws + op->src);
    float complex *dst = (float complex *)(b->ws + op->dst);
    for (int64_t r = 0; r < op->rows; ++r)
        for (int64_t c = 0; c < op->cols; ++c)
            dst[c * op->rows + r] = src[r * op->cols + c];
    return CONVGEN_SUCCESS;
}

/* Every complex element read and written once. */
static cg_work transpose_work(const cg_kernel_op *op, int sm_count)
{
    (void)sm_count;
    cg_work w = {.efficiency = 1, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
    w.bytes = 16.0 * (double)op->transpose.rows * op->transpose.cols;
    return w;
}

static const char *describe_transpose(const cg_kernel_op *op)
{
    (void)op;
    return "transpose the spectra";
}

const cg_op_class cg_op_transpose = {CG_OP_TRANSPOSE, "transpose", evaluate_transpose, transpose_work,
                                     describe_transpose};
