/* What the real GEMM kernels' templates (gemm_skinny.cu, gemm_tc.cu) take of a GEMM step alike. */
#ifndef CG_GEMM_LAYOUT_H
#define CG_GEMM_LAYOUT_H

#include "generate.h"
#include "template/tmpl.h"

/* A real GEMM kernel's template values of g: m, n, k, and each operand's offset (floats),
 * leading dimension and stride between batch entries (a_offset, lda, a_stride, ...). */
void cg_gemm_set_real_layout(tmpl_value *ctx, const cg_gemm_step *g);

#endif
