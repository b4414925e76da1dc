/* direct's implicit GEMM on the tensor cores (gemm=tensor, direct_tc.c): fprop and stride-1
 * bprop, the products by mma.sync in 3xTF32, one kernel. */
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
    int64_t shared_bytes;
    int min_blocks;                                           /* blocks an SM holds (the launch bounds) */
} direct_tc_spec;

/* The plan of (p, pass) on t; CONVGEN_ERROR_NOT_SUPPORTED naming why where this form does not
 * apply (accgrad, a strided bprop, over 32 taps, a target before sm_80, a chunk past the shared
 * memory). */
convgen_status cg_direct_tc_spec(const cg_problem *p, convgen_pass pass, const cg_target *t, direct_tc_spec *s);

/* The one kernel of (p, pass) into out (kernel_count 1, no workspace). */
convgen_status cg_direct_tc_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, cg_generated *out);

#endif
