/* What the GEMM probes (gemm_tf32x3.cu, gemm_wgmma.cu) share: a batched GEMM's shape as the
 * generated GEMM's steps describe it (C column-major, [n][m] per entry; op(A) stored [k][m] where
 * a_outer, else [m][k]; op(B) stored [k][n] where b_outer, else [n][k]), its sampled error against
 * float64, and the store of wgmma's m64nNk8 sums. */
#pragma once
#include <math.h>

#include <vector>

struct Shape {
    int m, n, k, batch;
    bool a_outer, b_outer;
    long long lda, ldb, ldc, sa, sb, sc;
};

/* op(A)[i][s] and op(B)[s][j] of entry e, as stored. */
static float at_a(const std::vector<float> &a, const Shape &s, int e, int i, int kk)
{
    return a[e * s.sa + (s.a_outer ? kk * s.lda + i : i * s.lda + kk)];
}
static float at_b(const std::vector<float> &b, const Shape &s, int e, int kk, int j)
{
    return b[e * s.sb + (s.b_outer ? kk * s.ldb + j : j * s.ldb + kk)];
}

/* The largest error of 4096 sampled sums against float64, relative to the sum of |a b| (the
 * error bound's own scale), and the largest relative to |C| itself. */
static void sample_error(const std::vector<float> &a, const std::vector<float> &b, const std::vector<float> &c,
                         const Shape &s, double *rel_abs, double *rel)
{
    unsigned seed = 12345;
    *rel_abs = *rel = 0;
    for (int q = 0; q < 4096; ++q) {
        seed = seed * 1664525u + 1013904223u;
        int e = seed % s.batch;
        seed = seed * 1664525u + 1013904223u;
        int i = seed % s.m;
        seed = seed * 1664525u + 1013904223u;
        int j = seed % s.n;
        double sum = 0, mag = 0;
        for (int kk = 0; kk < s.k; ++kk) {
            double p = (double)at_a(a, s, e, i, kk) * at_b(b, s, e, kk, j);
            sum += p, mag += fabs(p);
        }
        double got = c[e * s.sc + (long long)j * s.ldc + i], err = fabs(got - sum);
        if (err / mag > *rel_abs)
            *rel_abs = err / mag;
        if (fabs(sum) > 1e-3 * mag && err / fabs(sum) > *rel)
            *rel = err / fabs(sum);
    }
}

/* A warp's wgmma sums d[4 j + r] (rows g and g + 8 of its 16, columns 8 j + 2 t and + 1) into C
 * column-major, row g at m and row g + 8 at m + 1 (the probes pair them so), columns from n0. */
template <int BN>
static __device__ __forceinline__ void store_pairs(float *c, const float (&acc)[BN / 2], unsigned m, unsigned n0,
                                                   unsigned t, const Shape &sh)
{
    if (m >= (unsigned)sh.m)
        return;
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
        for (int cc = 0; cc < 2; ++cc) {
            const unsigned n = n0 + 8 * j + 2 * t + cc;
            if (n < (unsigned)sh.n)
                *(float2 *)(c + (long long)n * sh.ldc + m) = make_float2(acc[4 * j + cc], acc[4 * j + cc + 2]);
        }
}
