/* What a GEMM step describes, done on the CPU and costed: the GEMM op kind (op_kinds.h), convgen's
 * kernel of gemm.c, and the cuBLAS library steps, which compute the same (program_eval.c,
 * cost_model.c). */
#include <complex.h>
#include <math.h>

#include "gemm.h"
#include "gemm_tc.h"
#include "op_kinds.h"

#define SPLIT_K_DEPTH 512 /* the sum length per split cuBLAS needs before splitting pays */

/* Where element (row, l) of op(X) lies for a real GEMM: in the tensor-core GEMM's pieces, or op(X)
 * 'T' (the operand stored [row][l]) or 'N' ([l][row]) with leading dimension ld. */
static int64_t real_at(cg_tc_pieces p, char trans, int64_t ld, int64_t k, int64_t row, int64_t l)
{
    return p.rows ? cg_tc_at(p, k, row, l) : trans == 'T' ? l + row * ld : row + l * ld;
}

/* Element (row, l) of op(X): in pieces with their lo halves, what the tensor cores read of it, the
 * TF32 hi and lo summed, so that lo halves written wrongly show in the products. */
static double real_value(const float *X, cg_tc_pieces p, char trans, int64_t ld, int64_t k, int64_t row, int64_t l)
{
    const int64_t at = real_at(p, trans, ld, k, row, l);
    if (!p.lo)
        return X[at];
    return (double)cg_tf32_truncated(X[at]) + cg_tf32_truncated(X[at + cg_tc_lo_offset(p)]);
}

/* The real GEMM: column-major op(A) op(B) per batch entry. op(B)'s rows are C's columns: B 'T' is
 * stored [l][j], 'N' [j][l]. */
static void real_gemm(const cg_gemm_step *g, char *ws, bool add)
{
    const float *A = (const float *)(ws + g->a_offset), *B = (const float *)(ws + g->b_offset);
    float *C = (float *)(ws + g->c_offset);
    const char tb = g->transb == 'T' ? 'N' : 'T'; /* op(B)^T's: the j x l operand's */
    const int64_t splits = g->splits > 1 ? g->splits : 1, run = cg_gemm_split_steps(g->k, splits) * CG_GEMM_TC_STEP;
    for (int64_t s = 0; s < splits; ++s) /* a split sum: run s of the sum into C + s split_stride */
        for (int64_t b = 0; b < g->batch; ++b)
            for (int64_t i = 0; i < g->m; ++i)
                for (int64_t j = 0; j < g->n; ++j) {
                    double sum = 0;
                    const int64_t l0 = splits > 1 ? s * run : 0, l1 = splits > 1 && l0 + run < g->k ? l0 + run : g->k;
                    for (int64_t l = l0; l < l1; ++l)
                        sum += real_value(A + b * g->a_stride, g->a_pieces, g->transa, g->lda, g->k, i, l) *
                               real_value(B + b * g->b_stride, g->b_pieces, tb, g->ldb, g->k, j, l);
                    float *c = &C[s * g->split_stride + b * g->c_stride + i + j * g->ldc];
                    *c = (float)(sum + (add ? *c : 0));
                }
}

void cg_gemm_evaluate(const cg_gemm_step *g, char *ws, bool add)
{
    if (g->real) {
        real_gemm(g, ws, add);
        return;
    }
    const float complex *A = (const float complex *)(ws + g->a_offset);
    const float complex *B = (const float complex *)(ws + g->b_offset);
    float complex *C = (float complex *)(ws + g->c_offset);
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

/* Blocks of 128 x 128 (two per multiprocessor) over the GPU: the share of the last wave's
 * slots filled, as an efficiency. */
static double wave_efficiency(double blocks, int sm_count)
{
    double slots = 2.0 * (sm_count > 0 ? sm_count : 132);
    double waves = ceil(blocks / slots);
    return waves > 0 ? blocks / (waves * slots) : 1;
}

cg_work cg_gemm_work(const cg_gemm_step *g, int sm_count, bool split_k)
{
    double mul = g->real ? 2.0 : 8.0, elem = g->real ? 4.0 : 8.0;
    double batch = (double)g->batch, m = (double)g->m, n = (double)g->n, k = (double)g->k;
    double blocks = ceil(m / 128) * ceil(n / 128) * batch * (g->splits > 1 ? (double)g->splits : 1.0),
           slots = 2.0 * (sm_count > 0 ? sm_count : 132);
    if (split_k && blocks < slots)
        blocks *= fmax(1.0, fmin(ceil(slots / blocks), floor(k / SPLIT_K_DEPTH)));
    return (cg_work){.flops = mul * m * n * k * batch,
                     .efficiency = (!g->tensor ? CG_GEMM_EFFICIENCY : g->real ? CG_GEMM_TC_EFFICIENCY : CG_GEMM_COMPLEX_TC_EFFICIENCY) *
                                   wave_efficiency(blocks, sm_count),
                     .bytes = (m * k * (g->a_pieces.lo ? 2 : 1) + k * n * (g->b_pieces.lo ? 2 : 1) +
                               m * n * (g->accumulate ? 2 : 1)) * batch * elem,
                     .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
}

/* convgen's kernel adds in every sub-batch, after a zeroing step (k = 0). */
static convgen_status evaluate_gemm(const cg_kernel_op *op, const cg_op_buffers *b)
{
    cg_gemm_evaluate(&op->gemm, b->ws, op->gemm.accumulate && op->gemm.k > 0);
    return CONVGEN_SUCCESS;
}

/* The generated kernel does not split the sum (cuBLAS's split-K). */
static cg_work gemm_op_work(const cg_kernel_op *op, int sm_count)
{
    return cg_gemm_work(&op->gemm, sm_count, false);
}

static const char *describe_gemm(const cg_kernel_op *op)
{
    (void)op;
    return "the products: batched GEMM";
}

const cg_op_class cg_op_gemm = {CG_OP_GEMM, "gemm", evaluate_gemm, gemm_op_work, describe_gemm};
