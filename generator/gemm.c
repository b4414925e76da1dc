/* convgen's batched SGEMM: what a GEMM step describes (cuBLAS's column-major C = op(A) op(B) per
 * batch entry, the operands at byte offsets of the workspace), done by a generated kernel
 * specialized to the step: every size, stride and offset a constant, each operand's tiles
 * loaded in whichever of its two layouts the step has (contiguous along the product's rows or
 * columns, or along the sum), so that the Winograd transforms need no copy into another layout.
 *
 * Blocks of BM x BN of C (128 or 64 each, the smaller where the matrix is), 8 x 8 sums a thread
 * in two 4 x 4 quadrants BM / 2 apart so that a quarter warp's float4 reads of a tile row fall
 * in distinct banks, the sum in steps of 8 through two shared-memory stages filled by cp.async
 * (the next step's tiles load during this one's products). cuBLAS is a library call per step
 * and reads the same layout through its transpose flags; this kernel is the generator's own
 * because it can be tiled to the shapes at hand and fused with its neighbours later. */
#include <stdio.h>

#include "gemm.h"
#include "templates.h"
#include "tmpl.h"
#include "util.h"
#include "values.h"

enum { STEP = 8 /* the sum's step, the tiles' depth */ };

bool cg_gemm_kernel_takes(const cg_gemm_step *g)
{
    if (!g->real || g->batch > 65535)
        return false;
    /* every index within a batch entry in 32 bits (the entries' offsets are 64-bit) */
    int64_t a_span = g->transa == 'T' ? g->m * g->lda : g->k * g->lda;
    int64_t b_span = g->transb == 'T' ? g->k * g->ldb : g->n * g->ldb;
    int64_t most = INT32_MAX / 2;
    return a_span < most && b_span < most && g->n * g->ldc < most && (g->m + 127) / 128 <= 65535 &&
           (g->n + 127) / 128 <= 65535;
}

/* An operand's tile loads: `outer` where its stored rows run along the product's rows (op(A),
 * 'N') or columns (op(B), 'T'), so a step's tile is STEP contiguous runs; else along the sum.
 * 16-byte copies where the runs keep 16-byte alignment. */
static void operand(tmpl_value *ctx, const char *name, bool outer, int64_t offset, int64_t ld, int64_t stride,
                    int64_t extent)
{
    char key[32];
    bool vec = outer && offset % 16 == 0 && ld % 4 == 0 && stride % 4 == 0 && extent % 4 == 0;
    snprintf(key, sizeof key, "%s_outer", name);
    tmpl_set_bool(ctx, key, outer);
    snprintf(key, sizeof key, "%s_vec", name);
    tmpl_set_int(ctx, key, vec ? 4 : 1);
    snprintf(key, sizeof key, "%s_offset", name);
    tmpl_set_int(ctx, key, offset / 4);
    snprintf(key, sizeof key, "%s_ld", name);
    tmpl_set_int(ctx, key, ld);
    snprintf(key, sizeof key, "%s_stride", name);
    tmpl_set_int(ctx, key, stride);
}

convgen_status cg_gemm_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k)
{
    if (!cg_gemm_kernel_takes(g))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the generated GEMM takes real GEMMs within 32-bit indices");
    int bm = g->m >= 128 ? 128 : 64, bn = g->n >= 128 ? 128 : 64;
    k->grid[0] = (unsigned)((g->m + bm - 1) / bm);
    k->grid[1] = (unsigned)((g->n + bn - 1) / bn);
    k->grid[2] = (unsigned)g->batch;
    k->block[0] = (unsigned)(bm / 8 * bn / 8);
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = 0;
    cg_value_line(header, "GEMM: C[%lld x %lld] = op(A) op(B), column-major, op(A) = A%s, op(B) = B%s, sums of %lld, %lld "
                  "of them (the transform elements)", (long long)g->m, (long long)g->n, g->transa == 'T' ? "^T" : "",
                  g->transb == 'T' ? "^T" : "", (long long)g->k, (long long)g->batch);
    cg_value_line(header, "  A at float %lld (lda %lld, %lld apart), B at %lld (ldb %lld, %lld apart), C at %lld "
                  "(ldc %lld, %lld apart)", (long long)(g->a_offset / 4), (long long)g->lda, (long long)g->a_stride,
                  (long long)(g->b_offset / 4), (long long)g->ldb, (long long)g->b_stride, (long long)(g->c_offset / 4),
                  (long long)g->ldc, (long long)g->c_stride);
    if (g->k == 0)
        cg_value_line(header, "%s", "  a sum of nothing: C zeroed, before sub-batches that add to it");
    else if (g->accumulate)
        cg_value_line(header, "%s", "  added to C, which a kernel before the first sub-batch zeroed");
    cg_value_line(header, "tiles: %d x %d of C a block, 8 x 8 a thread, the sum in steps of %d through two cp.async "
                  "stages; launch: grid (%u, %u, %u), block (%u, 1, 1)", bm, bn, STEP, k->grid[0], k->grid[1],
                  k->grid[2], k->block[0]);
    cg_value_line(header, "%s", "");
    cg_value_line(header, "%s", "Generated: do not edit. Change templates/gemm.cu or generator/gemm.c instead.");

    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header);
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", k->block[0]);
    tmpl_set_int(ctx, "bm", bm);
    tmpl_set_int(ctx, "bn", bn);
    tmpl_set_int(ctx, "step", STEP);
    tmpl_set_int(ctx, "m", g->m);
    tmpl_set_int(ctx, "n", g->n);
    tmpl_set_int(ctx, "k", g->k);
    operand(ctx, "a", g->transa != 'T', g->a_offset, g->lda, g->a_stride, g->m);
    operand(ctx, "b", g->transb == 'T', g->b_offset, g->ldb, g->b_stride, g->n);
    tmpl_set_bool(ctx, "accumulate", g->accumulate && g->k > 0);
    tmpl_set_int(ctx, "c_offset", g->c_offset / 4);
    tmpl_set_int(ctx, "ldc", g->ldc);
    tmpl_set_int(ctx, "c_stride", g->c_stride);
    tmpl_set_bool(ctx, "c_vec", g->c_offset % 16 == 0 && g->ldc % 4 == 0 && g->c_stride % 4 == 0 && g->m % 4 == 0);
    convgen_status st = tmpl_ok(ctx) ? cg_render_template("gemm.cu", ctx, &k->source)
                                     : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building a GEMM context");
    tmpl_unref(ctx);
    return st;
}
