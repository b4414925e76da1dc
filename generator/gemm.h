/* convgen's own batched SGEMM (gemm.c, templates/gemm.cu): a GEMM step of a program done by a
 * generated kernel instead of cuBLAS, reading the workspace buffers where the step says. */
#ifndef CG_GEMM_H
#define CG_GEMM_H

#include <stdbool.h>

#include "cost_model.h"
#include "generate.h"
#include "template/tmpl.h"

/* Whether the kernel does g: a real GEMM (SGEMM), a batch entry a grid slice, or a complex one
 * (CGEMM) with the entries interleaved (inc >= batch, strides 1: the FFT kernels' spectra);
 * ops, alignments and grid within bounds, every element index in 32 bits. An accumulating
 * g (beta 1 after the first sub-batch) is done as C += op(A) op(B) in every sub-batch, after a
 * step of the same kernel with k = 0 (C = 0) before them. */
bool cg_gemm_kernel_takes(const cg_gemm_step *g);

/* The kernel of g into k (its name set by the caller), its header the given lines (taken) with
 * the GEMM's own appended; grid, block and source filled in. */
convgen_status cg_gemm_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k);

/* What g computes, on the CPU (gemm_op.c): C = op(A) op(B) over the workspace ws in double
 * precision, stored in fp32; where `add`, C += that (beta 1). */
void cg_gemm_evaluate(const cg_gemm_step *g, char *ws, bool add);
/* g's work for the cost model (cost_model.h): the wave of 128 x 128 blocks it fills, and where
 * `split_k` (cuBLAS), a sum long enough split to fill more. */
cg_work cg_gemm_work(const cg_gemm_step *g, int sm_count, bool split_k);

/* ---- what the complex GEMM's two kernels share (gemm.c, gemm_complex_tc.c) ---- */
enum {
    CG_GEMM_STEP = 8, /* the sum's step, the tiles' depth */
    CG_GEMM_GROUP = 4 /* interleaved batch entries a block: 4 complex values are a 32-byte sector */
};
/* A complex block's side for a matrix side of `extent`: the power of two from 4 to 32 that covers it. */
int cg_gemm_complex_side(int64_t extent);
/* An operand's load values (`name`_outer, _vec, _offset, _ld, _stride): outer where its stored runs
 * go along the block's rows; `per` elements a 16-byte copy. Returns the bytes of one copy. */
int cg_gemm_operand(tmpl_value *ctx, const cg_gemm_step *g, const char *name, bool outer, int per, int64_t offset,
                    int64_t ld, int64_t stride, int64_t extent);
/* Whether (and how) a thread's copies of an operand's step sit at constant offsets from its
 * first (`name`_fast, _ds, _copies). */
void cg_gemm_fast_copies(tmpl_value *ctx, const char *name, int group, bool outer, int vec, int rows, int step,
                         int threads);
/* The header lines of how g's batch and sum run: interleaved entries, C zeroed (k = 0) or added to. */
void cg_gemm_sum_lines(tmpl_value *header, const cg_gemm_step *g);
/* "^T", "^H" or "" for op 'T', 'C' or 'N', as the headers write op(A) and op(B). */
const char *cg_gemm_op_text(char op);

/* The complex GEMM g (interleaved, g->tensor) on the tensor cores (gemm_complex_tc.c) into k. */
convgen_status cg_gemm_complex_tc_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k);

#endif
