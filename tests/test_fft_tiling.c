/* The index arithmetic of FFT convolution (generator/fft_tiling.c), evaluated on the CPU: every
 * tiling and every cut into parts is run through float64 DFTs on random data and compared with
 * direct correlation, and every output must come from exactly one tile (every tap from the
 * shifts that can reach it). */
#include <complex.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fft_tiling.h"

enum { MAX_N = 128, MAX_LEN = 512 };

static uint64_t rng_state;

static double uniform(void) /* in [-1, 1): never zeros, never a pattern */
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

static int64_t pick(int64_t lo, int64_t hi) { return lo + (int64_t)((uniform() + 1.0) / 2.0 * (double)(hi - lo + 1)); }

/* Naive DFT (sign -1 forward, +1 inverse, unscaled): the reference needs no speed. */
static void dft(const double complex *a, double complex *out, int64_t n, int sign)
{
    for (int64_t k = 0; k < n; ++k) {
        double complex s = 0;
        for (int64_t m = 0; m < n; ++m)
            s += a[m] * cexp(sign * 2.0 * M_PI * I * (double)((k * m) % n) / (double)n);
        out[k] = s;
    }
}

/* y[o] = sum_i x[o + i - pad] w[i], x zero outside [0, in). */
static void correlate(const double *x, int64_t in, const double *w, int64_t extent, int64_t pad, double *y,
                      int64_t out)
{
    for (int64_t o = 0; o < out; ++o) {
        double s = 0;
        for (int64_t i = 0; i < extent; ++i) {
            int64_t j = o + i - pad;
            s += j >= 0 && j < in ? x[j] * w[i] : 0.0;
        }
        y[o] = s;
    }
}

static void test_basis_candidates_are_the_smooth_sizes_up_to_the_next_power_of_two(void **state)
{
    (void)state;
    int64_t s[64];
    const int64_t want100[] = {100, 105, 108, 112, 120, 125, 126, 128};
    int count = fft_basis_candidates(100, s, 64);
    assert_int_equal(count, 8);
    assert_memory_equal(s, want100, sizeof want100);
    assert_int_equal(fft_basis_candidates(128, s, 64), 1);
    assert_int_equal(s[0], 128);
    assert_int_equal(fft_basis_candidates(13, s, 64), 3); /* 14 15 16 */
    assert_int_equal(s[0], 14);
    assert_int_equal(fft_basis_candidates(0, s, 64), 0);
    assert_int_equal(fft_basis_candidates(100, s, 3), 3); /* never past max */
}

/* Runs one overlap-save tiling through DFTs; returns the worst absolute error. */
static double overlap_save_error(const fft_tiling *t, const double *x, const double *w)
{
    double y[MAX_LEN], err = 0;
    int covered[MAX_LEN] = {0};
    correlate(x, t->in, w, t->extent, t->pad_before, y, t->out);
    double complex s[MAX_N], wk[MAX_N], S[MAX_N], W[MAX_N], r[MAX_N];
    memset(wk, 0, sizeof wk);
    for (int64_t i = 0; i < t->extent; ++i)
        wk[i] = w[i];
    dft(wk, W, t->n_fft, -1);
    for (int64_t k = 0; k < t->tiles; ++k) {
        fft_tile tile;
        fft_tiling_tile(t, k, &tile);
        assert_true(tile.offset + tile.len <= t->n_fft);
        memset(s, 0, sizeof s);
        for (int64_t m = 0; m < tile.len; ++m)
            s[tile.offset + m] = x[tile.src + m];
        dft(s, S, t->n_fft, -1);
        for (int64_t f = 0; f < t->n_fft; ++f)
            S[f] *= conj(W[f]); /* circular correlation */
        dft(S, r, t->n_fft, 1);
        for (int64_t o = 0; o < tile.count; ++o) {
            err = fmax(err, cabs(r[o] / (double)t->n_fft - y[tile.first + o]));
            covered[tile.first + o]++;
        }
    }
    for (int64_t o = 0; o < t->out; ++o)
        assert_int_equal(covered[o], 1);
    return err;
}

static void test_overlap_save_tiles_reproduce_direct_correlation(void **state)
{
    (void)state;
    rng_state = 1;
    double worst = 0;
    int checked = 0;
    while (checked < 300) {
        int64_t in = pick(1, 90), extent = pick(1, 13), pad = pick(0, extent), pad_after = pick(0, extent);
        int64_t out = in + pad + pad_after - extent + 1;
        if (out < 1)
            continue;
        int64_t sizes[] = {extent, extent + pick(0, 9), 2 * extent + 3, 0};
        double x[MAX_LEN], w[16];
        for (int64_t i = 0; i < in; ++i)
            x[i] = uniform();
        for (int64_t i = 0; i < extent; ++i)
            w[i] = uniform();
        for (int s = 0; s < 4; ++s) {
            fft_tiling t;
            char err[128];
            assert_true(fft_tiling_make(in, out, extent, pad, sizes[s], &t, err, sizeof err));
            if (sizes[s] == 0)
                assert_int_equal(t.tiles, 1); /* the default size takes the whole signal */
            worst = fmax(worst, overlap_save_error(&t, x, w));
            ++checked;
        }
    }
    print_message("%d tilings, worst absolute error %.2e\n", checked, worst);
    assert_true(worst < 1e-12);
}

/* 2-D is the product of two 1-D tilings: tile (ty, tx) reads the product window. */
static void test_two_dimensional_tiling_is_the_product_of_one_dimensional_ones(void **state)
{
    (void)state;
    rng_state = 7;
    enum { H = 23, W = 19, KH = 5, KW = 3, PH = 2, PW = 1, N = 8 };
    const int64_t oh = H + 2 * PH - KH + 1, ow = W + 2 * PW - KW + 1;
    double x[H][W], w[KH][KW], worst = 0;
    for (int i = 0; i < H; ++i)
        for (int j = 0; j < W; ++j)
            x[i][j] = uniform();
    for (int i = 0; i < KH; ++i)
        for (int j = 0; j < KW; ++j)
            w[i][j] = uniform();
    fft_tiling ty, tx;
    char err[128];
    assert_true(fft_tiling_make(H, oh, KH, PH, N, &ty, err, sizeof err));
    assert_true(fft_tiling_make(W, ow, KW, PW, N, &tx, err, sizeof err));
    assert_true(ty.tiles > 1 && tx.tiles > 1);
    for (int64_t a = 0; a < ty.tiles; ++a)
        for (int64_t b = 0; b < tx.tiles; ++b) {
            fft_tile r, c;
            fft_tiling_tile(&ty, a, &r);
            fft_tiling_tile(&tx, b, &c);
            double complex s[N][N] = {{0}}, k[N][N] = {{0}};
            for (int64_t i = 0; i < r.len; ++i)
                for (int64_t j = 0; j < c.len; ++j)
                    s[r.offset + i][c.offset + j] = x[r.src + i][c.src + j];
            for (int i = 0; i < KH; ++i)
                for (int j = 0; j < KW; ++j)
                    k[i][j] = w[i][j];
            /* The 2-D circular correlation, directly: enough to check the windows. */
            for (int64_t u = 0; u < r.count; ++u)
                for (int64_t v = 0; v < c.count; ++v) {
                    double complex acc = 0, want = 0;
                    for (int i = 0; i < N; ++i)
                        for (int j = 0; j < N; ++j)
                            acc += s[(u + i) % N][(v + j) % N] * k[i][j];
                    for (int i = 0; i < KH; ++i)
                        for (int j = 0; j < KW; ++j) {
                            int64_t yy = r.first + u + i - PH, xx = c.first + v + j - PW;
                            want += yy >= 0 && yy < H && xx >= 0 && xx < W ? x[yy][xx] * w[i][j] : 0.0;
                        }
                    worst = fmax(worst, cabs(acc - want));
                }
        }
    assert_true(worst < 1e-12);
}

/* Runs one cut into parts: each block transformed once, products summed per shift in the
 * frequency domain, one inverse transform per shift. */
static double parts_error(const fft_parts *p, const double *x, const double *dy)
{
    static double complex X[MAX_LEN][MAX_N], DY[MAX_LEN][MAX_N];
    double complex a[MAX_N], C[MAX_N], c[MAX_N];
    double dw[64] = {0}, want[64], err = 0;
    int hits[64] = {0};
    for (int64_t j = 0; j < p->x_blocks; ++j) {
        int64_t src, len, offset;
        fft_parts_x_block(p, j, &src, &len, &offset);
        memset(a, 0, sizeof a);
        for (int64_t m = 0; m < len; ++m)
            a[offset + m] = x[src + m];
        dft(a, X[j], p->n_fft, -1);
    }
    for (int64_t b = 0; b < p->dy_blocks; ++b) {
        int64_t first, count;
        fft_parts_dy_block(p, b, &first, &count);
        memset(a, 0, sizeof a);
        for (int64_t m = 0; m < count; ++m)
            a[m] = dy[first + m];
        dft(a, DY[b], p->n_fft, -1);
    }
    for (int64_t d = 0; d < p->shifts; ++d) {
        memset(C, 0, sizeof C);
        for (int64_t b = 0; b < p->dy_blocks; ++b)
            for (int64_t f = 0; f < p->n_fft; ++f)
                C[f] += X[b + d][f] * conj(DY[b][f]);
        dft(C, c, p->n_fft, 1);
        int64_t lo, hi;
        fft_parts_shift_lags(p, d, &lo, &hi);
        for (int64_t l = lo; l <= hi; ++l) {
            int64_t tap = d * p->block + l;
            dw[tap] += creal(c[(l + p->n_fft) % p->n_fft]) / (double)p->n_fft;
            hits[tap]++;
        }
    }
    /* dw[i] = sum_o xp[o + i] dy[o]: the correlation of x (padded) with dy as the kernel. */
    for (int64_t i = 0; i < p->extent; ++i) {
        double s = 0;
        for (int64_t o = 0; o < p->out; ++o) {
            int64_t j = o + i - p->pad_before;
            s += j >= 0 && j < p->in ? x[j] * dy[o] : 0.0;
        }
        want[i] = s;
        /* Pairs (o, o + i) with o in dy block b fall in xp block b + d, d = i / block rounded down
         * (lag >= 0) or up (lag < 0): two shifts per tap unless block divides i. */
        assert_int_equal(hits[i], i % p->block ? 2 : 1);
        err = fmax(err, fabs(dw[i] - want[i]));
    }
    return err;
}

static void test_parts_reproduce_the_weight_gradient(void **state)
{
    (void)state;
    rng_state = 3;
    double worst = 0;
    int checked = 0;
    while (checked < 300) {
        int64_t in = pick(1, 120), extent = pick(1, 13), pad = pick(0, extent - 1), pad_after = pick(0, extent - 1);
        int64_t out = in + pad + pad_after - extent + 1, block = pick(1, 20);
        if (out < 1)
            continue;
        int64_t n_fft = 2 * block - 1 + pick(0, 4);
        double x[MAX_LEN], dy[MAX_LEN];
        for (int64_t i = 0; i < in; ++i)
            x[i] = uniform();
        for (int64_t i = 0; i < out; ++i)
            dy[i] = uniform();
        fft_parts p;
        char err[128];
        assert_true(fft_parts_make(in, out, extent, pad, block, n_fft, &p, err, sizeof err));
        assert_true(p.x_blocks <= MAX_LEN && p.n_fft <= MAX_N);
        worst = fmax(worst, parts_error(&p, x, dy));
        ++checked;
    }
    print_message("%d cuts into parts, worst absolute error %.2e\n", checked, worst);
    assert_true(worst < 1e-11);
}

static void expect_tiling_error(int64_t in, int64_t out, int64_t extent, int64_t pad, int64_t n_fft, const char *words)
{
    fft_tiling t;
    char err[128] = "";
    assert_false(fft_tiling_make(in, out, extent, pad, n_fft, &t, err, sizeof err));
    if (!strstr(err, words))
        fail_msg("message \"%s\" (want \"%s\")", err, words);
}

static void test_bad_sizes_are_named(void **state)
{
    (void)state;
    expect_tiling_error(0, 5, 3, 1, 8, "in = 0");
    expect_tiling_error(7, 0, 3, 1, 8, "out = 0");
    expect_tiling_error(7, 5, 0, 1, 8, "extent = 0");
    expect_tiling_error(7, 5, 3, -1, 8, "pad_before = -1");
    expect_tiling_error(7, 5, 3, 1, 2, "n_fft = 2");
    expect_tiling_error(INT64_MAX, 5, 3, 1, 8, "in = ");
    fft_parts p;
    char err[128] = "";
    assert_false(fft_parts_make(7, 5, 3, 1, 4, 6, &p, err, sizeof err));
    assert_non_null(strstr(err, "n_fft = 6"));
    assert_false(fft_parts_make(7, 5, 3, 1, 0, 6, &p, err, sizeof err));
    assert_non_null(strstr(err, "block = 0"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_basis_candidates_are_the_smooth_sizes_up_to_the_next_power_of_two),
        cmocka_unit_test(test_overlap_save_tiles_reproduce_direct_correlation),
        cmocka_unit_test(test_two_dimensional_tiling_is_the_product_of_one_dimensional_ones),
        cmocka_unit_test(test_parts_reproduce_the_weight_gradient),
        cmocka_unit_test(test_bad_sizes_are_named),
    };
    return cmocka_run_group_tests_name("fft_tiling", tests, NULL, NULL);
}
