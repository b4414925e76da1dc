/* convgen's batched SGEMM on the tensor cores in 3xTF32 (gemm_tc.c, templates/gemm_tc.cu): a GEMM
 * step of a program done by wgmma, sm_90 only, with fp32's accuracy. */
#ifndef CG_GEMM_TC_H
#define CG_GEMM_TC_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "generate.h"
#include "template/tmpl.h"

enum {
    CG_GEMM_TC_ROWS = 128, /* rows of C (op(A)'s) a block: two warpgroups of wgmma's 64 */
    CG_GEMM_TC_STEP = 16,  /* the sum's step: two k8 wgmma steps */
};

/* Whether the kernel does g on target t: a real GEMM, its tiles fewer than 2^31, op(A) stored [k][m]
 * ('N') and op(B) stored [k][n] ('T') in 16-byte rows (m, n, lda, ldb, the offsets and strides
 * multiples of 4 floats) or in its pieces (a_pieces: CG_GEMM_TC_ROWS rows, paired; b_pieces:
 * cg_gemm_tc_columns(n), not), C added to where g->accumulate, on an sm_90 target. */
bool cg_gemm_tc_takes(const cg_gemm_step *g, const cg_target *t);

/* The columns of C (op(B)'s rows) a block makes for n of them: n in the fewest blocks of at most
 * 256 (wgmma's widest N), a multiple of 8 each. op(B)'s pieces have as many rows. */
int cg_gemm_tc_columns(int64_t n);

/* The blocks of g's kernel an SM holds at once, by their shared memory and threads (on an H100
 * or H200: three at 8 or 16 columns a tile, two up to 72, else one); 0 where not even two stages
 * of its pipeline fit a block's shared memory. */
int cg_gemm_tc_blocks_per_sm(const cg_gemm_step *g, const cg_target *t);

/* The steps of CG_GEMM_TC_STEP of each run of a sum of k cut into `splits` (the last run the rest). */
static inline int64_t cg_gemm_split_steps(int64_t k, int64_t splits)
{
    const int64_t steps = (k + CG_GEMM_TC_STEP - 1) / CG_GEMM_TC_STEP;
    return splits > 1 ? (steps + splits - 1) / splits : steps;
}

/* The positions of an operand of `rows` rows summed over `sums` in pieces p: its rows and its sum
 * rounded up to whole pieces. */
static inline int64_t cg_tc_positions(cg_tc_pieces p, int64_t rows, int64_t sums)
{
    return (rows + p.rows - 1) / p.rows * p.rows * ((sums + CG_GEMM_TC_STEP - 1) / CG_GEMM_TC_STEP * CG_GEMM_TC_STEP);
}

/* The floats it takes: its positions, twice where each piece carries its lo halves. */
static inline int64_t cg_tc_floats(cg_tc_pieces p, int64_t rows, int64_t sums)
{
    return cg_tc_positions(p, rows, sums) * (p.lo ? 2 : 1);
}

/* Where (row, sum) of an operand summed over `sums` lies in pieces p: piece (row / p.rows, sum / 16)
 * of the [row block][step] pieces, in it per 8 of the sum q [q][rho / 8][sum / 4 % 2][rho % 8][sum %
 * 4], rho the row in the block (paired: row 2 g + h of each 16 at rho 8 h + g); where p.lo, its lo
 * half CG_GEMM_TC_STEP p.rows floats on, after the piece's. */
static inline int64_t cg_tc_at(cg_tc_pieces p, int64_t sums, int64_t row, int64_t sum)
{
    const int64_t steps = (sums + CG_GEMM_TC_STEP - 1) / CG_GEMM_TC_STEP, r = row % p.rows;
    const int64_t rho = p.paired ? (r & ~(int64_t)15) + (r & 1) * 8 + (r & 15) / 2 : r;
    const int64_t piece = row / p.rows * steps + sum / CG_GEMM_TC_STEP, s = sum % CG_GEMM_TC_STEP;
    return piece * CG_GEMM_TC_STEP * p.rows * (p.lo ? 2 : 1) + s / 8 * 8 * p.rows + rho / 8 * 64 + s / 4 % 2 * 32 +
           rho % 8 * 4 + s % 4;
}

/* How far after its hi half (cg_tc_at) a value's lo half lies in pieces p that carry them: one
 * piece on. */
static inline int64_t cg_tc_lo_offset(cg_tc_pieces p) { return CG_GEMM_TC_STEP * p.rows; }

/* x as the tensor cores read a TF32 operand: its low 13 mantissa bits dropped. */
static inline float cg_tf32_truncated(float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    bits &= 0xffffe000u;
    memcpy(&x, &bits, sizeof x);
    return x;
}

/* x's lo half for 3xTF32, as the kernels make it (templates/gemm_tc.cu's tf32_lo): x less its TF32
 * truncation, with 2^12 added to the bits so that the tensor cores' truncation of it rounds. */
static inline float cg_tf32_lo(float x)
{
    float lo = x - cg_tf32_truncated(x);
    uint32_t bits;
    memcpy(&bits, &lo, sizeof bits);
    bits += 0x1000u;
    memcpy(&lo, &bits, sizeof lo);
    return lo;
}

/* The kernel of g into k (its name set by the caller), its header the given lines (taken) with
 * the GEMM's own appended; grid, block, shared memory and source filled in. */
convgen_status cg_gemm_tc_kernel(const cg_gemm_step *g, const cg_target *t, tmpl_value *header, cg_kernel *k);

#endif
