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

/* The complex GEMM g (interleaved, g->tensor) on the tensor cores (gemm_complex_tc.c) into k. */
convgen_status cg_gemm_complex_tc_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k);

#endif
