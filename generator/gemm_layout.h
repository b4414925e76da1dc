/* What the GEMM kernels' templates (gemm.cu, gemm_skinny.cu, gemm_tc.cu, gemm_complex_tc.cu) take alike. */
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

#endif
