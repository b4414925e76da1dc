/* What the real GEMM kernels' templates take of a GEMM step alike (gemm_layout.h). */
#include "gemm_layout.h"

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
