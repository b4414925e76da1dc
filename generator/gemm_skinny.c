/* convgen's GEMM for a short sum and few columns (gemm_skinny.h): C[m x n] = A op(B) with n <= 32
 * and a sum of k <= 64, m large: Winograd's products for layers of few channels (U1: 216 GEMMs
 * of 65536 tiles x 32 output channels, a sum over 32 input channels).
 *
 * Such a GEMM moves 4 (k + n) bytes per row of C for 2 n k FLOPs (8 FLOP a byte at n = k = 32),
 * so it is bound by reading A and writing C, which the tiled kernel (gemm.c), 64 or 128 rows by
 * 64 or 128 columns, half empties at n = 32, and cuBLAS ran at half the copy rate (U1 fprop on an
 * H200: 1.79 ms against 0.86 ms for its bytes). Here op(B) (at most 64 x 32 floats) sits in
 * shared memory, read by every thread as the same float4s (broadcasts); a block's rows of A
 * arrive in stages of several steps of the sum by cp.async (16-byte copies where aligned), the
 * next stage in flight during this one's products, so that loads never wait behind
 * multiply-adds; and each thread makes ROWS whole rows of C (ROWS x n sums), consecutive threads
 * on consecutive rows, so that its reads of a stage miss each other's banks and every store of
 * a warp is 128 contiguous bytes. */
#include "gemm_skinny.h"

#include <stdio.h>

#include "gemm_layout.h"
#include "templates.h"
#include "util.h"
#include "values.h"

enum {
    SKINNY_THREADS = 128,
    SKINNY_MAX_N = 32,     /* columns of C: a thread's sums are ROWS x n <= 64 */
    SKINNY_MAX_K = 64,     /* the sum: op(B) in static shared memory, the loop unrolled */
    SKINNY_SUMS = 64,      /* a thread's sums */
    STAGE_FLOATS = 4096,   /* a stage of A: two in 32 KiB of static shared memory, beside op(B) */
};

bool cg_gemm_skinny_takes(const cg_gemm_step *g)
{
    return g->real && g->inc <= 1 && g->transa == 'N' && (g->transb == 'N' || g->transb == 'T') && !g->accumulate &&
           g->n >= 1 && g->n <= SKINNY_MAX_N && g->k >= 1 && g->k <= SKINNY_MAX_K && g->m >= 1 &&
           g->batch >= 1 && g->batch <= 65535 && g->a_offset % 4 == 0 && g->b_offset % 4 == 0 &&
           g->c_offset % 4 == 0 && g->lda >= g->m && g->ldc >= g->m &&
           g->ldb >= (g->transb == 'T' ? g->n : g->k) &&
           /* every element index of an entry in 32 bits (the entries' offsets are 64-bit) */
           g->m + (g->k - 1) * g->lda < INT32_MAX / 2 && g->m + (g->n - 1) * g->ldc < INT32_MAX / 2 &&
           (g->transb == 'T' ? g->n + (g->k - 1) * g->ldb : g->k + (g->n - 1) * g->ldb) < INT32_MAX / 2;
}

/* Rows of C a thread makes: a power of two, ROWS x n (n rounded up to 4) within SKINNY_SUMS. */
static int rows_per_thread(int64_t n4)
{
    int rows = 1;
    while (2 * rows * n4 <= SKINNY_SUMS)
        rows *= 2;
    return rows;
}

/* The steps of the sum a stage of A holds: two stages of block_rows x stage floats in 32 KiB. */
static int stage_steps(int64_t block_rows)
{
    int64_t steps = STAGE_FLOATS / block_rows;
    return steps > 16 ? 16 : steps < 1 ? 1 : (int)steps;
}

convgen_status cg_gemm_skinny_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k)
{
    int64_t n4 = (g->n + 3) / 4 * 4;
    int rows = rows_per_thread(n4), stage = stage_steps((int64_t)rows * SKINNY_THREADS);
    int64_t block_rows = (int64_t)rows * SKINNY_THREADS, stages = (g->k + stage - 1) / stage, sums = stages * stage;
    /* 16-byte copies of A where its runs of 4 rows stay 16-byte aligned */
    int vec = g->a_offset % 16 == 0 && g->lda % 4 == 0 && g->a_stride % 4 == 0 ? 4 : 1;
    int64_t runs = block_rows / vec, copies = stage * runs / SKINNY_THREADS;
    k->grid[0] = (unsigned)((g->m + block_rows - 1) / block_rows), k->grid[1] = 1, k->grid[2] = (unsigned)g->batch;
    k->block[0] = SKINNY_THREADS, k->block[1] = k->block[2] = 1;
    cg_value_line(header, "GEMM: C[%lld x %lld] = A op(B), column-major, op(B) = B%s, sums of %lld, %lld of them (the "
                  "transform elements)", (long long)g->m, (long long)g->n, g->transb == 'T' ? "^T" : "",
                  (long long)g->k, (long long)g->batch);
    cg_value_line(header, "  A at float %lld (lda %lld, %lld apart), B at %lld (ldb %lld, %lld apart), C at %lld "
                  "(ldc %lld, %lld apart)", (long long)(g->a_offset / 4), (long long)g->lda, (long long)g->a_stride,
                  (long long)(g->b_offset / 4), (long long)g->ldb, (long long)g->b_stride, (long long)(g->c_offset / 4),
                  (long long)g->ldc, (long long)g->c_stride);
    cg_value_line(header, "skinny: op(B) in shared memory; %lld rows of C a block, %d a thread; A in %lld stage(s) of %d "
                  "steps by %d-byte cp.async; launch: grid (%u, 1, %u), block (%u, 1, 1)", (long long)block_rows, rows,
                  (long long)stages, stage, 4 * vec, k->grid[0], k->grid[2], k->block[0]);
    tmpl_value *ctx = cg_gemm_context(header, k, "gemm_skinny");
    tmpl_set_int(ctx, "threads", SKINNY_THREADS);
    tmpl_set_int(ctx, "rows", rows);
    tmpl_set_int(ctx, "block_rows", block_rows);
    tmpl_set_int(ctx, "stage", stage);
    tmpl_set_int(ctx, "stages", stages);
    tmpl_set_int(ctx, "sums", sums);
    tmpl_set_int(ctx, "vec", vec);
    tmpl_set_int(ctx, "runs", runs);
    tmpl_set_int(ctx, "copies", copies);
    tmpl_set_int(ctx, "n4", n4);
    tmpl_set_bool(ctx, "b_transposed", g->transb == 'T');
    cg_gemm_set_real_layout(ctx, g);
    tmpl_value *n4_div = cg_value_magic((uint32_t)n4, sums * n4 - 1), *runs_div = cg_value_magic((uint32_t)runs, stage * runs - 1);
    bool ok = n4_div && runs_div;
    tmpl_map_set(ctx, "n4_div", n4_div);
    tmpl_map_set(ctx, "runs_div", runs_div);
    if (!ok) {
        tmpl_unref(ctx);
        return cg_fail(CONVGEN_ERROR_INTERNAL, "the skinny GEMM: no magic division by %lld or %lld", (long long)n4,
                       (long long)runs);
    }
    return cg_render_kernel("gemm_skinny.cu", ctx, &k->source);
}
