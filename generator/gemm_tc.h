/* convgen's batched SGEMM on the tensor cores in 3xTF32 (gemm_tc.c, templates/gemm_tc.cu): a GEMM
 * step of a program done by wgmma, sm_90 only, with fp32's accuracy. */
#ifndef CG_GEMM_TC_H
#define CG_GEMM_TC_H

#include <stdbool.h>

#include "generate.h"
#include "template/tmpl.h"

/* Whether the kernel does g on target t: a real GEMM, an entry a grid slice, op(A) stored [k][m]
 * ('N') and op(B) stored [k][n] ('T') in 16-byte rows (m, n, lda, ldb, the offsets and strides
 * multiples of 4 floats), C in 8-byte pairs, no sum over sub-batches, on an sm_90 target. */
bool cg_gemm_tc_takes(const cg_gemm_step *g, const cg_target *t);

/* The kernel of g into k (its name set by the caller), its header the given lines (taken) with
 * the GEMM's own appended; grid, block, shared memory and source filled in. */
convgen_status cg_gemm_tc_kernel(const cg_gemm_step *g, const cg_target *t, tmpl_value *header, cg_kernel *k);

#endif
