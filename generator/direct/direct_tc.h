/* direct's implicit GEMM on the tensor cores (gemm=tensor, direct_tc.c): fprop and stride-1
 * bprop in one kernel (on sm_90, where A comes from a patch, a kernel making B's pieces and one
 * by wgmma), accgrad of up to 9 taps in one and the sum of its splits, the products by mma.sync
 * (or wgmma) in 3xTF32. */
#ifndef CG_DIRECT_TC_H
#define CG_DIRECT_TC_H

#include "generate.h"

typedef struct direct_tc_spec {
    int rank;
    bool bprop;
    bool flip_a;                /* A's taps in reverse of w's */
    int64_t rows, cols, src_c;  /* the GEMM: rows (n, pixel), cols, and the gathered tensor's channels */
    int64_t row_pixels, src_pixels;
    int64_t row_dims[CONVGEN_MAX_RANK], src_dims[CONVGEN_MAX_RANK];
    int64_t step[CONVGEN_MAX_RANK], origin[CONVGEN_MAX_RANK]; /* pos = q * step - origin */
    int64_t b_col_stride, b_chan_stride;                      /* w's floats from column to column, channel to channel */
    int taps, cc, chunk_red, chunks;                          /* the sum in chunks of cc channels x taps */
    int bm, bn, warps_m, warps_n;                             /* the block tile and its warps */
    int a_stride, b_stride;                                   /* floats between A's reduction rows, B's columns */
    int a_parts, b_parts;                                     /* threads sharing a row of A's loads, a column of B's */
    /* A from a patch of src (rank 1 and 2, where it copies fewer floats than the gather; always in
     * the wgmma form, which has no gather): src's
     * lines (image, padded row) that a tile's rows reach, each of line_len floats (padding
     * included, zeros), in `patch_floats` a channel (patch_lines whole lines and then some, for
     * the fragments' reads in 32 banks); the chunk's sum tap-major, so that a lane's A element is
     * its row's place in the patch plus a constant. */
    bool patch;
    int64_t line_len, image_lines, patch_lines, patch_floats;
    int patch_places;                                         /* a thread's places of each channel of the patch */
    /* sm_90: the products by wgmma (direct_wgmma.cu), A from the patch in registers, B's pieces
     * (b_piece_floats a chunk: hi and lo in wgmma's core matrices) made by a kernel before it into
     * the workspace; a warpgroup a 64-row slice of the tile, all bn columns. */
    bool wgmma;
    int64_t b_piece_floats;
    int threads;                                              /* a block's */
    int64_t shared_bytes;
    int min_blocks;                                           /* blocks an SM holds (the launch bounds) */
} direct_tc_spec;

/* accgrad's: dw[k][(c, tap)] = sum over (n, o) of dy[n][k][o] x[n][c][o * stride - pad + tap],
 * in blocks of bm outputs by cb channels x every tap, the sum in chunks of 32 pixels split over
 * `splits` blocks (each writing a slice of the workspace that a second kernel adds). */
typedef struct direct_tc_accgrad_spec {
    int rank;
    bool flip;                                     /* x's taps in reverse of dw's (convolution) */
    int64_t k, c, out_pixels, in_pixels, red;      /* red: n x out_pixels */
    int64_t out_dims[CONVGEN_MAX_RANK], in_dims[CONVGEN_MAX_RANK];
    int taps, bm, cb, bn, warps_m, warps_k, stride; /* bn = cb x taps; stride: floats between rows of A and B */
    int64_t chunks, chunks_per_split, splits, out_elems;
    int64_t shared_bytes;
} direct_tc_accgrad_spec;

/* The plan of accgrad on t (workspace_limit: the caller's, 0 none); NOT_SUPPORTED naming why
 * where this form does not take the layer (more than 9 taps, a target before sm_80). */
convgen_status cg_direct_tc_accgrad_spec(const cg_problem *p, const cg_target *t, int64_t workspace_limit,
                                         direct_tc_accgrad_spec *s);

/* The plan of (p, pass) on t (workspace_limit: the caller's, 0 none; the wgmma form's pieces must
 * fit it, else mma.sync's form, which needs none); CONVGEN_ERROR_NOT_SUPPORTED naming why where
 * this form does not apply (accgrad, a strided bprop, over 32 taps, a target before sm_80, a chunk
 * past the shared memory). */
convgen_status cg_direct_tc_spec(const cg_problem *p, convgen_pass pass, const cg_target *t, int64_t workspace_limit,
                                 direct_tc_spec *s);

/* The kernels of (p, pass) into out: fprop's and bprop's one; accgrad's, and the sum of its
 * splits where it has more than one (their workspace within tune's limit). */
convgen_status cg_direct_tc_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                                     cg_generated *out);

/* The launch of a split reduction's sum (templates/split_reduce.cu): a thread an output element,
 * blocks of `threads`; direct's FMA kernel and its tensor form both end so. */
static inline void cg_direct_sum_launch(cg_kernel *sum, int64_t out_elems, unsigned threads)
{
    sum->grid[0] = (unsigned)((out_elems + threads - 1) / threads);
    sum->grid[1] = sum->grid[2] = 1;
    sum->block[0] = threads;
    sum->block[1] = sum->block[2] = 1;
}

#endif
