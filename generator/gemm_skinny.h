/* convgen's GEMM for a short sum and few columns (gemm_skinny.c, templates/gemm_skinny.cu), which
 * the generated GEMM (gemm.c) uses where it takes the step. */
#ifndef CG_GEMM_SKINNY_H
#define CG_GEMM_SKINNY_H

#include <stdbool.h>

#include "generate.h"
#include "template/tmpl.h"

/* Whether the skinny kernel does g: a real GEMM, op(A) = A, C = A op(B) (not accumulated), at
 * most 32 columns, a sum of at most 64, a batch entry a grid slice. */
bool cg_gemm_skinny_takes(const cg_gemm_step *g);

/* The kernel of g into k (its name set by the caller), the GEMM's lines appended to header
 * (taken); grid, block and source filled in. */
convgen_status cg_gemm_skinny_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k);

#endif
