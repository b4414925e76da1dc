/* What the CPU evaluation of step programs shares (program_eval.c and the op kinds' evaluate):
 * walks over multi-indices and naive DFTs in double precision, at the sizes of the tests (tens of
 * points), where a library FFT would buy nothing. */
#ifndef CG_CPU_DFT_H
#define CG_CPU_DFT_H

#include <complex.h>
#include <stdbool.h>
#include <stdint.h>

/* Row-major index of a multi-index over sizes. */
static inline int64_t cg_index_flat(const int64_t *index, const int64_t *sizes, int rank)
{
    int64_t f = 0;
    for (int d = 0; d < rank; ++d)
        f = f * sizes[d] + index[d];
    return f;
}

/* Visits every multi-index over sizes (rank <= CONVGEN_MAX_RANK), last dimension fastest. */
static inline bool cg_index_next(int64_t *index, const int64_t *sizes, int rank)
{
    for (int d = rank - 1; d >= 0; --d) {
        if (++index[d] < sizes[d])
            return true;
        index[d] = 0;
    }
    return false;
}

/* Where a full spectrum's bin idx is stored in its Hermitian half (the last dimension's first
 * half[rank - 1] bins): *stored is false where the bin is the conjugate of the mirror's. */
static inline void cg_dft_hermitian_source(const int64_t *idx, const int64_t *n, const int64_t *half, int rank,
                                           int64_t *at, bool *stored)
{
    *stored = idx[rank - 1] < half[rank - 1];
    for (int e = 0; e < rank; ++e)
        at[e] = *stored ? idx[e] : (n[e] - idx[e]) % n[e];
}

/* In place along dimension d of a [n0][n1]... complex array: a DFT with exp(sign 2 pi i jk / n);
 * false when out of memory. */
bool cg_dft_axis(double complex *a, const int64_t *n, int rank, int d, int sign);

#endif
