/* convgen's batched GEMM: what a GEMM step describes (cuBLAS's column-major C = op(A) op(B) per
 * batch entry, the operands at byte offsets of the workspace), done by a generated kernel
 * specialized to the step: every size, stride and offset a constant, each operand's tiles
 * loaded in whichever of its two layouts the step has (contiguous along the product's rows or
 * columns, or along the sum), so that the Winograd transforms and the FFT spectra need no copy
 * into another layout. Real steps are SGEMMs (Winograd's products per transform element),
 * complex ones CGEMMs of interleaved float2 (the FFT algorithms' products per frequency bin,
 * an operand conjugated where its op is 'C': signs in the multiply-adds, no extra work).
 *
 * Blocks of BM x BN of C, the sum in steps of 8 through two shared-memory stages filled by
 * cp.async (the next step's tiles load during this one's products). A thread keeps 8 x 8 real
 * or 4 x 4 complex sums in four quadrants half a block apart, each quadrant one float4 read of
 * a tile row, so that a quarter warp's reads fall in distinct banks; either way a thread reads
 * a quarter of a float from shared memory per multiply-add. cuBLAS is a library call per step
 * and reads the same layout through its transpose flags; this kernel is the generator's own
 * because it can be tiled to the shapes at hand and fused with its neighbours later. */
#include <stdio.h>

#include "gemm.h"
#include "gemm_layout.h"
#include "gemm_skinny.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum { STEP = CG_GEMM_STEP, GROUP = CG_GEMM_GROUP };

/* The batch entries interleaved: [row][column][entry], read GROUP entries a block. */
static bool interleaved(const cg_gemm_step *g)
{
    return g->inc > 1;
}

/* The highest element index of an operand stored `rows` x `cols` (column-major) in the batch,
 * plus one. */
static int64_t span(const cg_gemm_step *g, int64_t rows, int64_t cols, int64_t ld, int64_t stride)
{
    int64_t inc = g->inc > 1 ? g->inc : 1;
    return (rows - 1) * inc + (cols - 1) * ld + (g->batch - 1) * stride + 1;
}

/* The block's share of C along one side: real, 128 or 64 (the smaller where the matrix is);
 * complex (interleaved), the power of two from 4 to 32 that covers the side, for each of the
 * block's GROUP entries. */
static int block_side(const cg_gemm_step *g, int64_t extent)
{
    if (g->real)
        return extent >= 128 ? 128 : 64;
    return cg_gemm_complex_side(extent);
}

/* Both sides of a block. A real GEMM whose columns number 65 to 127 (80 channels of a 3-D layer:
 * 3-D Winograd's 216 products on n337) while its rows take 128 covers them by the multiple of 16
 * above in one block instead of 128 in two of 64: 80 columns for 80, not 128, so that no
 * multiply-add is spent on the 48 past the matrix and the rows' tile is read once, not twice. 16
 * keeps the block's threads, 128 / 8 x side / 8, whole warps. Only the columns: a block 80 rows
 * high would wrap a quarter warp's rows tx round the tile (tid % 10), two of its float4 reads on
 * the same banks.
 * A complex GEMM of 65 to 80 rows (the FFT layers' 80 output maps on n337's fragments) takes
 * them in one block 80 high (640 threads with 32 columns) instead of three of 32: 96 rows of
 * multiply-adds for 80, and op(B)'s tile read once, not three times. Measured on an H200 against
 * 32 x 32 (512 x 80 -> 80 on 31^3, 29^3, 27^3): 18.9 -> 15.8, 15.4 -> 12.9, 10.6 -> 9.4 ms; 80 x
 * 16 (two or three blocks an SM) ran 17.9-21.9, 40 x 32 17.0. Here the interleaved entries keep
 * a quarter warp's reads on distinct banks (entries 8 banks apart, rows tx * 2). */
static void block_sides(const cg_gemm_step *g, int *bm, int *bn)
{
    *bm = block_side(g, g->m);
    *bn = block_side(g, g->n);
    if (g->real && *bm == 128 && g->n > 64 && g->n < 128)
        *bn = (int)((g->n + 15) / 16 * 16);
    if (!g->real && g->m > 64 && g->m <= 80 && *bn == 32)
        *bm = 80;
}

bool cg_gemm_kernel_takes(const cg_gemm_step *g)
{
    if (cg_gemm_skinny_takes(g))
        return true;
    char plain = 'N', flipped = g->real ? 'T' : 'C';
    int bm, bn;
    block_sides(g, &bm, &bn);
    int64_t elem = g->real ? 4 : 8, group = interleaved(g) ? GROUP : 1;
    if ((g->transa != plain && g->transa != flipped) || (g->transb != plain && g->transb != flipped) ||
        g->m < 1 || g->n < 1 || g->k < 0 || g->batch < 1 || g->a_offset % elem || g->b_offset % elem ||
        g->c_offset % elem || (g->batch + group - 1) / group > 65535 || (g->n + bn - 1) / bn > 65535)
        return false;
    /* real: an entry a blockIdx.z; complex: interleaved, entries inc apart without overlapping */
    if (g->real ? interleaved(g) : !interleaved(g) || g->inc < g->batch || g->a_stride != 1 || g->b_stride != 1 ||
                                       g->c_stride != 1 || g->ldc < g->m * g->inc)
        return false;
    /* every element index in 32 bits: within a batch entry (the entries' offsets are 64-bit),
     * or in the whole batch where the entries interleave */
    int64_t most = INT32_MAX / 2;
    cg_gemm_step one = *g;
    one.batch = interleaved(g) ? g->batch : 1;
    int64_t a_rows = g->transa == plain ? g->m : g->k, a_cols = g->transa == plain ? g->k : g->m;
    int64_t b_rows = g->transb == plain ? g->k : g->n, b_cols = g->transb == plain ? g->n : g->k;
    return span(&one, a_rows, a_cols, g->lda, g->a_stride) < most &&
           span(&one, b_rows, b_cols, g->ldb, g->b_stride) < most && span(&one, g->m, g->n, g->ldc, g->c_stride) < most;
}

convgen_status cg_gemm_kernel(const cg_gemm_step *g, tmpl_value *header, cg_kernel *k)
{
    if (cg_gemm_skinny_takes(g))
        return cg_gemm_skinny_kernel(g, header, k);
    if (!cg_gemm_kernel_takes(g))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the generated GEMM does not take this step (%lld x %lld x %lld, "
                       "%lld of them, inc %lld): see cg_gemm_kernel_takes", (long long)g->m, (long long)g->n,
                       (long long)g->k, (long long)g->batch, (long long)g->inc);
    if (!g->real && g->tensor)
        return cg_gemm_complex_tc_kernel(g, header, k);
    int per = g->real ? 4 : 2; /* elements in a float4 */
    int group = interleaved(g) ? GROUP : 1;
    int bm, bn;
    block_sides(g, &bm, &bn);
    int step = STEP; /* a sum shorter than a step in a shallower one (FFT fprop of C = 3: k 3) */
    while (step > 1 && step / 2 >= g->k)
        step /= 2;
    /* An interleaved sum of exactly one full step: ptxas spilled some 410 bytes (sm_80 and sm_90,
     * 80 registers; 60 at 128) where the loop runs once with all 8 sums unrolled (FFT accgrad of 8
     * images, 80 x 80); two steps of 4 do not spill. */
    if (group > 1 && g->k == STEP)
        step = STEP / 2;
    k->grid[0] = (unsigned)((g->m + bm - 1) / bm);
    k->grid[1] = (unsigned)((g->n + bn - 1) / bn);
    k->grid[2] = (unsigned)((g->batch + group - 1) / group);
    k->block[0] = (unsigned)(group * (bm / (2 * per)) * (bn / (2 * per)));
    k->block[1] = k->block[2] = 1;
    /* interleaved: two stages of 4 GEMMs' tiles, in dynamic shared memory (static arrays stop at
     * 48 KiB, which deeper steps would pass) */
    k->shared_bytes = group > 1 ? (unsigned)(2 * group * (step * bm + 4 + step * bn + 4) * 8) : 0;
    const char *kind = g->real ? "the transform elements" : "the frequency bins";
    int elem = 16 / per;
    cg_value_line(header, "%s: C[%lld x %lld] = op(A) op(B), column-major, op(A) = A%s, op(B) = B%s, sums of %lld, "
                  "%lld of them (%s)", g->real ? "GEMM" : "complex GEMM", (long long)g->m, (long long)g->n,
                  cg_gemm_op_text(g->transa), cg_gemm_op_text(g->transb), (long long)g->k, (long long)g->batch, kind);
    cg_value_line(header, "  A at %s %lld (lda %lld, %lld apart), B at %lld (ldb %lld, %lld apart), C at %lld "
                  "(ldc %lld, %lld apart)", g->real ? "float" : "float2", (long long)(g->a_offset / elem),
                  (long long)g->lda, (long long)g->a_stride, (long long)(g->b_offset / elem), (long long)g->ldb,
                  (long long)g->b_stride, (long long)(g->c_offset / elem), (long long)g->ldc, (long long)g->c_stride);
    cg_gemm_sum_lines(header, g);
    cg_value_line(header, "tiles: %d x %d of C a block%s, %d x %d a thread, the sum in steps of %d through two cp.async "
                  "stages; launch: grid (%u, %u, %u), block (%u, 1, 1)", bm, bn,
                  group > 1 ? " for each of 4 neighbouring GEMMs" : "", 2 * per, 2 * per, step, k->grid[0],
                  k->grid[1], k->grid[2], k->block[0]);
    tmpl_value *ctx = cg_gemm_context(header, k, "gemm");
    tmpl_set_bool(ctx, "complex", !g->real);
    tmpl_set_bool(ctx, "conj_a", g->transa == 'C');
    tmpl_set_bool(ctx, "conj_b", g->transb == 'C');
    tmpl_set_int(ctx, "per", per);
    tmpl_set_int(ctx, "group", group);
    tmpl_set_int(ctx, "inc", interleaved(g) ? g->inc : 1);
    tmpl_set_int(ctx, "batch", g->batch);
    tmpl_set_int(ctx, "threads", k->block[0]);
    tmpl_set_int(ctx, "shared_bytes", k->shared_bytes);
    /* blocks a multiprocessor must hold: 256-thread interleaved ones fit three in 80 registers
     * (1-2.5% faster than two at 88 on the H100: L2-L4, F2); the SGEMM's 8 x 8 sums as many as
     * leave a thread 128 registers (four of 128 threads, three of 160, two of 256); one of 640
     * interleaved (80 x 32: 88 registers) */
    int min_blocks = interleaved(g) ? (k->block[0] < 256 ? 4 : k->block[0] == 256 ? 3 : 1)
                                    : (int)(65536 / (k->block[0] * 128));
    tmpl_set_int(ctx, "min_blocks", min_blocks > 4 ? 4 : min_blocks < 1 ? 1 : min_blocks);
    tmpl_set_int(ctx, "bm", bm);
    tmpl_set_int(ctx, "bn", bn);
    tmpl_set_int(ctx, "step", step);
    tmpl_set_int(ctx, "row_pad", 0);
    tmpl_set_int(ctx, "m", g->m);
    tmpl_set_int(ctx, "n", g->n);
    tmpl_set_int(ctx, "k", g->k);
    bool a_outer = g->transa == 'N', b_outer = g->transb != 'N';
    int a_copy = cg_gemm_operand(ctx, g, "a", a_outer, per, g->a_offset, g->lda, g->a_stride, g->m);
    int b_copy = cg_gemm_operand(ctx, g, "b", b_outer, per, g->b_offset, g->ldb, g->b_stride, g->n);
    cg_gemm_fast_copies(ctx, "a", group, a_outer, a_copy / elem, bm, step, (int)k->block[0]); /* elements a copy */
    cg_gemm_fast_copies(ctx, "b", group, b_outer, b_copy / elem, bn, step, (int)k->block[0]);
    /* the copy functions the loads use, smaller first: one element (transposed loads), 16 bytes (runs) */
    tmpl_value *sizes = tmpl_list();
    tmpl_list_push(sizes, tmpl_int(a_copy < b_copy ? a_copy : b_copy));
    if (a_copy != b_copy)
        tmpl_list_push(sizes, tmpl_int(a_copy < b_copy ? b_copy : a_copy));
    tmpl_map_set(ctx, "copy_sizes", sizes);
    tmpl_set_bool(ctx, "accumulate", g->accumulate && g->k > 0);
    tmpl_set_int(ctx, "c_offset", g->c_offset / elem);
    tmpl_set_int(ctx, "ldc", g->ldc);
    tmpl_set_int(ctx, "c_stride", g->c_stride);
    tmpl_set_bool(ctx, "c_vec", !interleaved(g) && g->c_offset % 16 == 0 && g->ldc % per == 0 &&
                                    g->c_stride % per == 0 && g->m % per == 0);
    return cg_render_kernel("gemm.cu", ctx, &k->source);
}
