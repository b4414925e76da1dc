/* What the GEMM kernels' templates take of a GEMM step alike (gemm_layout.h). */
#include "gemm_layout.h"

#include <stdio.h>

#include "values.h"

void cg_gemm_set_real_layout(tmpl_value *ctx, const cg_gemm_step *g)
{
    tmpl_set_int(ctx, "m", g->m);
    tmpl_set_int(ctx, "n", g->n);
    tmpl_set_int(ctx, "k", g->k);
    tmpl_set_int(ctx, "a_offset", g->a_offset / 4);
    tmpl_set_int(ctx, "b_offset", g->b_offset / 4);
    tmpl_set_int(ctx, "c_offset", g->c_offset / 4);
    tmpl_set_int(ctx, "lda", g->lda);
    tmpl_set_int(ctx, "ldb", g->ldb);
    tmpl_set_int(ctx, "ldc", g->ldc);
    tmpl_set_int(ctx, "a_stride", g->a_stride);
    tmpl_set_int(ctx, "b_stride", g->b_stride);
    tmpl_set_int(ctx, "c_stride", g->c_stride);
}

tmpl_value *cg_gemm_context(tmpl_value *header, const cg_kernel *k, const char *name)
{
    cg_value_line(header, "%s", "");
    cg_value_line(header, "Generated: do not edit. Change templates/%s.cu or generator/%s.c instead.", name, name);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header);
    tmpl_set_str(ctx, "kernel_name", k->name);
    return ctx;
}

/* ---- what the complex GEMM's two kernels share (gemm.c, gemm_complex_tc.c) ---- */

int cg_gemm_complex_side(int64_t extent)
{
    int side = 4;
    while (side < 32 && side < extent)
        side *= 2;
    return side;
}

/* An operand's tile loads: `outer` where its stored rows run along the product's rows (op(A),
 * 'N') or columns (op(B), 'T' or 'C'), so a step's tile is STEP contiguous runs; else along the
 * sum. 16-byte copies (`per` elements) where the runs keep 16-byte alignment; one element a copy
 * where the batch entries interleave (then GROUP neighbouring entries are the contiguous run).
 * Returns the bytes of one copy. */
int cg_gemm_operand(tmpl_value *ctx, const cg_gemm_step *g, const char *name, bool outer, int per, int64_t offset,
                    int64_t ld, int64_t stride, int64_t extent)
{
    char key[32];
    int elem_bytes = 16 / per;
    bool vec = !(g->inc > 1) && outer && offset % 16 == 0 && ld % per == 0 && stride % per == 0 && extent % per == 0;
    snprintf(key, sizeof key, "%s_outer", name);
    tmpl_set_bool(ctx, key, outer);
    snprintf(key, sizeof key, "%s_vec", name);
    tmpl_set_int(ctx, key, vec ? per : 1);
    snprintf(key, sizeof key, "%s_offset", name);
    tmpl_set_int(ctx, key, offset / elem_bytes);
    snprintf(key, sizeof key, "%s_ld", name);
    tmpl_set_int(ctx, key, ld);
    snprintf(key, sizeof key, "%s_stride", name);
    tmpl_set_int(ctx, key, stride);
    return vec ? 16 : elem_bytes;
}

/* A step's tile of operand `name`, `rows` x step, by copies where the block's threads are a
 * multiple of one step row's copies (interleaved: GROUP x rows, a float2 each; else, stored
 * [sum][row], rows / vec of `vec` elements): then each thread's copies are whole step rows apart,
 * ds of them, at constant offsets from its first, so that their addresses and bounds are worked
 * out once instead of per copy. Interleaved (ncu, L3 fprop's products): the per-copy index
 * arithmetic was a third of the instructions. Real (n337's layer 4, the SASS): a loop over
 * copies whose count depends on the thread, its remainder and branches, was 29% of the issued
 * instructions beside the FMAs. Where ds does not divide the step, the last copy is skipped by
 * the threads whose row would pass it. */
void cg_gemm_fast_copies(tmpl_value *ctx, const char *name, int group, bool outer, int vec, int rows, int step,
                         int threads)
{
    char key[32];
    int row_copies = group > 1 ? group * rows : rows / vec, ds = threads / row_copies;
    bool fast = (group > 1 || outer) && threads % row_copies == 0 && ds <= step;
    snprintf(key, sizeof key, "%s_fast", name);
    tmpl_set_bool(ctx, key, fast);
    snprintf(key, sizeof key, "%s_ds", name);
    tmpl_set_int(ctx, key, fast ? ds : 0);
    snprintf(key, sizeof key, "%s_copies", name);
    tmpl_set_int(ctx, key, fast ? (step + ds - 1) / ds : 0);
}

void cg_gemm_sum_lines(tmpl_value *header, const cg_gemm_step *g)
{
    if ((g->inc > 1))
        cg_value_line(header, "  the %lld GEMMs interleaved, element by element: neighbours along a leading dimension "
                      "%lld apart", (long long)g->batch, (long long)g->inc);
    if (g->k == 0)
        cg_value_line(header, "%s", "  a sum of nothing: C zeroed, before sub-batches that add to it");
    else if (g->accumulate)
        cg_value_line(header, "%s", "  added to C, which a kernel before the first sub-batch zeroed");
}

const char *cg_gemm_op_text(char op)
{
    return op == 'T' ? "^T" : op == 'C' ? "^H" : "";
}
