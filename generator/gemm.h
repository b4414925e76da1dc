/* convgen's own batched SGEMM (gemm.c, templates/gemm.cu): a GEMM step of a program done by a
 * generated kernel instead of cuBLAS, reading the workspace buffers where the step says. */
#ifndef CG_GEMM_H
#define CG_GEMM_H

#include <stdbool.h>

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

#endif
