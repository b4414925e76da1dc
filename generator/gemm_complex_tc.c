/* convgen's complex GEMM on the tensor cores (templates/gemm_complex_tc.cu): the FFT algorithms'
 * products per frequency bin where the plan asks for gemm=tensor, the same interleaved spectra and
 * tiles as the FMA kernel's (gemm.c), loaded by cp.async a bin pair a copy where the operands allow
 * it (below), else an element a copy as there, the products by mma.sync m16n8k8 in
 * 3xTF32 (fp32's accuracy) on the real GEMM that the complex one is, transposed (C^T, so that a
 * complex value's two parts, one float2 read, are neighbouring fragment registers): the sum's real
 * and imaginary parts side by side, C's real and imaginary parts rows g and g + 8 of a fragment,
 * op(B)'s value (br, bi, -bi, br) there. A block takes 16 or 32 rows by 8 to 32 columns of each of
 * CG_GEMM_GROUP bins, a warp a bin's whole tile; shared memory is two stages of the tiles, or C's
 * staging where that is larger (C goes out a 32-byte sector of neighbouring bins at a time). Why
 * mma.sync and not wgmma: the spectra lie bin-innermost, so each bin's operands reach shared memory
 * as rows of the block's bins, not in wgmma's core matrices; mma.sync reads its fragments from any
 * layout (bench/NOTES.md, "Issue 30, session 79", has the wgmma form that needs the FFT kernels to
 * write bin-outer spectra). */
#include "gemm.h"
#include "gemm_layout.h"
#include "templates.h"
#include "values.h"

convgen_status cg_gemm_complex_tc_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k)
{
    enum { ROW_PAD = 4 }; /* a step's rows 4 float2 further round the banks than their length */
    /* a fragment spans 8 complex columns of C (its 16 rows) by 8 rows (its 8 columns) */
    int bm = g->m > 16 ? 32 : 16, side = cg_gemm_complex_side(g->n), bn = side > 8 ? side : 8;
    int step = g->k > 4 ? CG_GEMM_STEP : 4; /* a multiple of mma's 4 complex of the sum */
    /* C's staging: a column bm + 8 float2, so that a quarter warp's 16-byte stores (2 columns by 4
     * row pairs) meet each bank once; a bin 4 more than its columns, for the reads that store C */
    int64_t a_pitch = step * (bm + ROW_PAD) + 4, b_pitch = step * (bn + ROW_PAD) + 4, c_col = bm + 8;
    int64_t c_pitch = bn * c_col + 4;
    /* Two bins a copy where the operands allow it (pairs): 16-byte cp.async.cg past the L1 instead
     * of 8-byte cp.async.ca through it, half the copies. A step's tile is then [step][rows + 1][4
     * bins], each bin pair in one 16 bytes, so a warp reading its bin reads half of each: its
     * fragment reads meet half the banks twice each (rows + 1 float2 quads a step row, and the
     * pairs swapped in rows 2 and 3 of every 4; twice is the least, the bin's low bit being fixed)
     * where the interleaved [bin][step][row] met each bank once. On an H100 (bench/NOTES.md, "Issue
     * 30, session 90") the passes of L3 took 3-4% less, L4 4-6%, F2 0.5-0.8%: the products are bound
     * by the L2 (85% busy), and the copies' instructions were the rest of their issue. */
    int64_t row_copies_a = 2 * bm, row_copies_b = 2 * bn, threads = 32 * CG_GEMM_GROUP;
    bool pairs = g->inc > 1 && g->batch % 2 == 0 && g->a_offset % 16 == 0 && g->b_offset % 16 == 0 &&
                 g->inc % 2 == 0 && g->lda % 2 == 0 && g->ldb % 2 == 0 && threads % row_copies_a == 0 &&
                 threads % row_copies_b == 0 && threads / row_copies_a <= step && threads / row_copies_b <= step;
    if (pairs)
        a_pitch = step * (bm + 1) * 4, b_pitch = step * (bn + 1) * 4;
    /* DEPTH cp.async stages, one barrier a step. Deeper was no faster on an H100: three stages of
     * 8-byte copies took L3 +6% and F2 +7-9%; of pairs, three and four took L3 +0.8% and +1.6%
     * against two, F2 -0.3% and +0.1% (NOTES, sessions 85 and 90). */
    enum { DEPTH = 2 };
    int64_t stages = DEPTH * (pairs ? a_pitch + b_pitch : CG_GEMM_GROUP * (a_pitch + b_pitch));
    int64_t staging = CG_GEMM_GROUP * c_pitch;
    k->grid[0] = (unsigned)((g->m + bm - 1) / bm);
    k->grid[1] = (unsigned)((g->n + bn - 1) / bn);
    k->grid[2] = (unsigned)((g->batch + CG_GEMM_GROUP - 1) / CG_GEMM_GROUP);
    k->block[0] = (unsigned)(32 * CG_GEMM_GROUP);
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = (unsigned)((stages > staging ? stages : staging) * 8);
    cg_value_line(header, "complex GEMM: C[%lld x %lld] = op(A) op(B), column-major, op(A) = A%s, op(B) = B%s, sums of "
                  "%lld, %lld of them (the frequency bins), in 3xTF32 on the tensor cores (mma.sync m16n8k8)",
                  (long long)g->m, (long long)g->n, cg_gemm_op_text(g->transa), cg_gemm_op_text(g->transb), (long long)g->k,
                  (long long)g->batch);
    cg_value_line(header, "  A at float2 %lld (lda %lld), B at %lld (ldb %lld), C at %lld (ldc %lld)",
                  (long long)(g->a_offset / 8), (long long)g->lda, (long long)(g->b_offset / 8), (long long)g->ldb,
                  (long long)(g->c_offset / 8), (long long)g->ldc);
    cg_gemm_sum_lines(header, g);
    cg_value_line(header, "tiles: %d x %d of C a block for each of %d neighbouring GEMMs, a warp %d x %d of one, the "
                  "sum in steps of %d through %d cp.async stages%s; launch: grid (%u, %u, %u), block (%u, 1, 1)", bm, bn,
                  CG_GEMM_GROUP, bm, bn, step, (int)DEPTH, pairs ? " by 16-byte copies of bin pairs" : "", k->grid[0],
                  k->grid[1], k->grid[2], k->block[0]);
    tmpl_value *ctx = cg_gemm_context(header, k, "gemm_complex_tc");
    tmpl_set_bool(ctx, "conj_a", g->transa == 'C');
    tmpl_set_bool(ctx, "conj_b", g->transb == 'C');
    tmpl_set_int(ctx, "group", CG_GEMM_GROUP);
    tmpl_set_int(ctx, "inc", g->inc);
    tmpl_set_int(ctx, "batch", g->batch);
    tmpl_set_int(ctx, "threads", k->block[0]);
    /* three blocks an SM: what an A100's 164 KB of shared memory holds (and 170 registers a
     * thread); where the registers allow, an H100 runs four */
    tmpl_set_int(ctx, "min_blocks", 3);
    tmpl_set_int(ctx, "shared_bytes", k->shared_bytes);
    tmpl_set_int(ctx, "bm", bm);
    tmpl_set_int(ctx, "bn", bn);
    tmpl_set_int(ctx, "ct", bn / 8);
    tmpl_set_int(ctx, "rt", bm / 8);
    tmpl_set_int(ctx, "step", step);
    tmpl_set_int(ctx, "depth", DEPTH);
    tmpl_set_bool(ctx, "pairs", pairs);
    if (pairs) { /* a step row's quads of bins; the step rows between a thread's copies */
        tmpl_set_int(ctx, "a_rs", bm + 1);
        tmpl_set_int(ctx, "b_rs", bn + 1);
        tmpl_set_int(ctx, "a_pds", threads / row_copies_a);
        tmpl_set_int(ctx, "b_pds", threads / row_copies_b);
    }
    tmpl_set_int(ctx, "row_pad", ROW_PAD);
    /* a lane's fragment reads: float2 between its step rows and between neighbouring rows of C */
    tmpl_set_int(ctx, "a_srow", pairs ? 4 * (bm + 1) : bm + ROW_PAD);
    tmpl_set_int(ctx, "b_srow", pairs ? 4 * (bn + 1) : bn + ROW_PAD);
    tmpl_set_int(ctx, "row_unit", pairs ? 4 : 1);
    tmpl_set_int(ctx, "a_pitch", a_pitch);
    tmpl_set_int(ctx, "b_pitch", b_pitch);
    tmpl_set_int(ctx, "c_col", c_col);
    tmpl_set_int(ctx, "c_pitch", c_pitch);
    tmpl_set_int(ctx, "m", g->m);
    tmpl_set_int(ctx, "n", g->n);
    tmpl_set_int(ctx, "k", g->k);
    cg_gemm_operand(ctx, g, "a", g->transa == 'N', 2, g->a_offset, g->lda, g->a_stride, g->m);
    cg_gemm_operand(ctx, g, "b", g->transb != 'N', 2, g->b_offset, g->ldb, g->b_stride, g->n);
    cg_gemm_fast_copies(ctx, "a", CG_GEMM_GROUP, g->transa == 'N', 1, bm, step, (int)k->block[0]);
    cg_gemm_fast_copies(ctx, "b", CG_GEMM_GROUP, g->transb != 'N', 1, bn, step, (int)k->block[0]);
    tmpl_set_bool(ctx, "accumulate", g->accumulate && g->k > 0);
    tmpl_set_int(ctx, "c_offset", g->c_offset / 8);
    tmpl_set_int(ctx, "ldc", g->ldc);
    return cg_render_kernel("gemm_complex_tc.cu", ctx, &k->source);
}

