/* convgen's batched SGEMM on the tensor cores: C = op(A) op(B) per batch entry, column-major, in
 * 3xTF32 by wgmma (sm_90a): each operand split into hi (the value itself, of which the tensor
 * cores read the TF32 bits) and lo (the rest, rounded to TF32), and lo hi + hi lo + hi hi summed in
 * fp32 (lo lo, below 2^-20 of a product, left out): fp32's accuracy at ~1.5x the FFMA peak where
 * cuBLAS's SGEMM reaches 0.67x (bench/NOTES.md, "Issue 30, session 60").
 *
 * A block of three warpgroups makes 128 rows x bn columns of C (bn <= 256, wgmma's N). Warp 0
 * brings each step of bk of the sum as bk bulk copies of a row of op(A) and of op(B) (the copy
 * engine; one lane a row) into a raw stage; warps 1-3 turn the raw stage into wgmma's K-major
 * core matrices (8 rows x 4 of the sum, 16 bytes a row), hi and lo side by side; warpgroups 1
 * and 2 (64 rows each) run the step's 3 bk / 8 wgmma with both operands from shared memory and
 * hand the stage back once they are done with it. Stages pass by mbarriers (loaded, ready,
 * empty). This is the probe's gemm_wsr (bench/probes/gemm_wgmma.cu); with the operands laid out
 * in core-matrix order by their producers (gemm_ws) the converters' transposes would go, which
 * measured 1.4x faster again. Written here because cuBLAS has no 3xTF32 GEMM (its FP32 emulation
 * on the BF16 tensor cores ran its plain SGEMM on Hopper) and CUTLASS is C++ outside the
 * toolkit. */
#include "gemm_tc.h"

#include <stdio.h>

#include "gemm_layout.h"

#include "templates.h"
#include "util.h"
#include "values.h"

enum {
    TC_ROWS = 128,    /* rows of C a block: two warpgroups of wgmma's 64 */
    TC_STEP = 16,     /* the sum's step: two k8 wgmma steps */
    TC_MAX_N = 256,   /* wgmma's widest N */
    TC_MAX_STAGES = 4,
    TC_THREADS = 384, /* the copier and converters' warpgroup and two consumers */
};

bool cg_gemm_tc_takes(const cg_gemm_step *g, const cg_target *t)
{
    return cg_target_wgmma(t) && g->real && g->inc <= 1 && g->transa == 'N' && g->transb == 'T' && !g->accumulate &&
           g->m >= 1 && g->n >= 1 && g->k >= 1 && g->batch >= 1 && g->batch <= 65535 && g->m % 4 == 0 &&
           g->n % 4 == 0 && g->lda % 4 == 0 && g->ldb % 4 == 0 && g->ldc % 2 == 0 && g->lda >= g->m &&
           g->ldb >= g->n && g->ldc >= g->m && g->a_offset % 16 == 0 && g->b_offset % 16 == 0 &&
           g->c_offset % 8 == 0 && g->a_stride % 4 == 0 && g->b_stride % 4 == 0 && g->c_stride % 2 == 0 &&
           (g->m + TC_ROWS - 1) / TC_ROWS <= 65535;
}

/* A block's columns: n in the fewest blocks of at most TC_MAX_N, each a multiple of 8 (wgmma's N). */
static int block_columns(int64_t n)
{
    int64_t blocks = (n + TC_MAX_N - 1) / TC_MAX_N, per = (n + blocks - 1) / blocks;
    return (int)((per + 7) / 8 * 8);
}

/* The floats of a stage: the raw rows of op(A) and op(B) (pitches 4 past their widths, so that
 * the converters' column reads and the copies' 16-byte rows keep their banks apart and their
 * alignment) and the converted hi and lo of each. */
static int64_t stage_floats(int bn)
{
    return TC_STEP * (TC_ROWS + 4) + TC_STEP * (bn + 4) + 2 * TC_STEP * (TC_ROWS + bn);
}

convgen_status cg_gemm_tc_kernel(const cg_gemm_step *g, const cg_target *t, tmpl_value *header, cg_kernel *k)
{
    if (!cg_gemm_tc_takes(g, t))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the tensor-core GEMM does not take this step (%lld x %lld x %lld, "
                       "ops %c%c, %lld of them): see cg_gemm_tc_takes", (long long)g->m, (long long)g->n,
                       (long long)g->k, g->transa, g->transb, (long long)g->batch);
    const int bn = block_columns(g->n);
    const int64_t stage = stage_floats(bn), barriers = 3 * 8 * TC_MAX_STAGES;
    int stages = (int)((cg_target_shared_per_block(t) - barriers) / (4 * stage));
    stages = stages > TC_MAX_STAGES ? TC_MAX_STAGES : stages;
    if (stages < 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the tensor-core GEMM: %lld bytes of shared memory a block hold "
                       "fewer than two stages of %lld", (long long)cg_target_shared_per_block(t), (long long)(4 * stage));
    k->grid[0] = (unsigned)((g->m + TC_ROWS - 1) / TC_ROWS);
    k->grid[1] = (unsigned)((g->n + bn - 1) / bn);
    k->grid[2] = (unsigned)g->batch;
    k->block[0] = TC_THREADS, k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)(4 * stages * stage + 3 * 8 * stages);
    cg_value_line(header, "GEMM: C[%lld x %lld] = A B^T, column-major, sums of %lld, %lld of them (the transform "
                  "elements), in 3xTF32 on the tensor cores (wgmma, sm_90a)", (long long)g->m, (long long)g->n,
                  (long long)g->k, (long long)g->batch);
    cg_value_line(header, "  A at float %lld (lda %lld, %lld apart), B at %lld (ldb %lld, %lld apart), C at %lld "
                  "(ldc %lld, %lld apart)", (long long)(g->a_offset / 4), (long long)g->lda, (long long)g->a_stride,
                  (long long)(g->b_offset / 4), (long long)g->ldb, (long long)g->b_stride, (long long)(g->c_offset / 4),
                  (long long)g->ldc, (long long)g->c_stride);
    cg_value_line(header, "tiles: %d x %d of C a block, the sum in steps of %d through %d stages (%u bytes); launch: "
                  "grid (%u, %u, %u), block (%u, 1, 1)", TC_ROWS, bn, TC_STEP, stages, k->shared_bytes, k->grid[0],
                  k->grid[1], k->grid[2], k->block[0]);
    cg_value_line(header, "%s", "");
    cg_value_line(header, "%s", "Generated: do not edit. Change templates/gemm_tc.cu or generator/gemm_tc.c instead.");
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header);
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "sm90a_marker", CG_SM90A_MARKER);
    tmpl_set_int(ctx, "threads", TC_THREADS);
    tmpl_set_int(ctx, "bm", TC_ROWS);
    tmpl_set_int(ctx, "bn", bn);
    tmpl_set_int(ctx, "bk", TC_STEP);
    tmpl_set_int(ctx, "stages", stages);
    cg_gemm_set_real_layout(ctx, g);
    return cg_render_kernel("gemm_tc.cu", ctx, &k->source);
}
