/* What the GEMM kernels' templates (gemm.cu, gemm_skinny.cu, gemm_tc.cu) take alike. */
#ifndef CG_GEMM_LAYOUT_H
#define CG_GEMM_LAYOUT_H

#include "generate.h"
#include "template/tmpl.h"

/* A real GEMM kernel's template values of g: m, n, k, and each operand's offset (floats),
 * leading dimension and stride between batch entries (a_offset, lda, a_stride, ...). */
void cg_gemm_set_real_layout(tmpl_value *ctx, const cg_gemm_step *g);

/* A GEMM kernel's template context: `header`'s lines (taken), closed by a blank line and the note
 * that the source is generated from templates/<name>.cu and generator/<name>.c, and k's name. */
tmpl_value *cg_gemm_context(tmpl_value *header, const cg_kernel *k, const char *name);

#endif
