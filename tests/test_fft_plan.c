/* FFT plans evaluated on the CPU in double precision against a naive DFT in long double, for
 * every supported size, forward and inverse, digit-reversed and natural order; fft-fused's
 * register transforms the same way. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft/fft_plan.h"
#include "fft/fft_regs.h"

#define BOUND 1e-12

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* X[k] = sum_j x[j] exp(sign 2 pi i j k / n), with the angle reduced exactly. */
static void naive_dft(int n, int sign, const double complex *x, double complex *y)
{
    for (int k = 0; k < n; ++k) {
        long double re = 0, im = 0;
        for (int j = 0; j < n; ++j) {
            long double a = 2.0L * 3.141592653589793238462643383279502884L * (long double)((long)j * k % n) / n;
            long double c = cosl(a), s = sign * sinl(a);
            re += creal(x[j]) * c - cimag(x[j]) * s;
            im += creal(x[j]) * s + cimag(x[j]) * c;
        }
        y[k] = (double)re + I * (double)im;
    }
}

static double rel_error(int n, const double complex *got, const double complex *want)
{
    double d = 0, w = 0;
    for (int i = 0; i < n; ++i) {
        d += pow(cabs(got[i] - want[i]), 2);
        w += pow(cabs(want[i]), 2);
    }
    return sqrt(d / w);
}

static int supported_sizes(int *sizes)
{
    int count = 0;
    for (int n = 1; n <= FFT_MAX_N; ++n)
        if (fft_size_supported(n))
            sizes[count++] = n;
    return count;
}

static void test_supported_sizes_are_the_7_smooth_ones_from_2_to_256(void **state)
{
    (void)state;
    int sizes[FFT_MAX_N];
    int count = supported_sizes(sizes);
    assert_int_equal(sizes[0], 2);
    assert_int_equal(sizes[count - 1], 256);
    assert_int_equal(count, 76); /* the 7-smooth numbers 2..256 */
    assert_false(fft_size_supported(1));
    assert_false(fft_size_supported(11));
    assert_false(fft_size_supported(26));
    assert_false(fft_size_supported(257));
    assert_false(fft_size_supported(0));
}

static void test_unsupported_size_is_refused_with_the_reason(void **state)
{
    (void)state;
    fft_plan p;
    char err[128];
    assert_false(fft_plan_make(22, false, &p, err, sizeof err));
    assert_non_null(strstr(err, "n = 22 must be 2^a 3^b 5^c 7^d"));
    assert_false(fft_plan_make(512, false, &p, err, sizeof err));
    assert_non_null(strstr(err, "n = 512"));
}

static void test_plans_map_elements_onto_lanes_and_registers(void **state)
{
    (void)state;
    int sizes[FFT_MAX_N];
    int count = supported_sizes(sizes);
    for (int i = 0; i < count; ++i) {
        fft_plan p;
        char err[128];
        assert_true(fft_plan_make(sizes[i], false, &p, err, sizeof err));
        assert_int_equal(p.regs * p.lanes, p.n);
        assert_true(p.lanes <= FFT_WARP);
        assert_int_equal(p.per_warp, FFT_WARP / p.lanes);
        /* The most lanes that keep 2 registers per lane (4 from n = 32), up to a warp. */
        int target = p.n >= 32 ? 4 : 2, most = p.n / target < FFT_WARP ? p.n / target : FFT_WARP;
        assert_true(p.regs >= (p.n < target ? p.n : target));
        for (int d = p.lanes + 1; d <= most; ++d)
            assert_true(p.n % d != 0);
        if (p.n >= 4 * FFT_WARP && p.n % FFT_WARP == 0)
            assert_int_equal(p.regs, p.n / FFT_WARP); /* n/32 registers when 32 lanes fit */
        int product = 1, lanes = 1, span = 1;
        for (int s = p.stage_count - 1; s >= 0; --s) {
            assert_int_equal(p.stages[s].span, span);
            span *= p.stages[s].radix;
            product *= p.stages[s].radix;
            if (p.stages[s].place == FFT_ACROSS_LANES)
                lanes *= p.stages[s].radix;
            else
                assert_true(s == 0 || p.stages[s - 1].place == FFT_IN_REGISTERS); /* registers first */
            assert_int_equal(p.stages[s].twiddle == FFT_TWIDDLE_NONE, p.stages[s].span == 1);
        }
        assert_int_equal(product, p.n);
        assert_int_equal(lanes, p.lanes);
        assert_true(strlen(p.twiddle_reason) > 10);
    }
}

static void check_size(int n, bool natural)
{
    fft_plan p;
    char err[128];
    assert_true(fft_plan_make(n, natural, &p, err, sizeof err));
    double complex x[FFT_MAX_N], want[FFT_MAX_N], got[FFT_MAX_N], back[FFT_MAX_N], ordered[FFT_MAX_N];
    for (int i = 0; i < n; ++i)
        x[i] = uniform() + I * uniform();
    naive_dft(n, -1, x, want);
    fft_plan_eval(&p, -1, x, got);
    for (int k = 0; k < n; ++k) /* the plan's order back to natural */
        ordered[k] = got[natural ? k : fft_plan_output_position(&p, k)];
    double e = rel_error(n, ordered, want);
    if (!(e <= BOUND))
        fail_msg("n = %d %s forward: relative error %.3e", n, natural ? "natural" : "reversed", e);

    naive_dft(n, +1, x, want); /* inverse of a spectrum given in the plan's order */
    for (int k = 0; k < n; ++k)
        ordered[natural ? k : fft_plan_output_position(&p, k)] = x[k];
    fft_plan_eval(&p, +1, ordered, back);
    e = rel_error(n, back, want);
    if (!(e <= BOUND))
        fail_msg("n = %d %s inverse: relative error %.3e", n, natural ? "natural" : "reversed", e);

    fft_plan_eval(&p, +1, got, back); /* the round trip scales by n */
    for (int i = 0; i < n; ++i)
        back[i] /= n;
    e = rel_error(n, back, x);
    if (!(e <= BOUND))
        fail_msg("n = %d round trip: relative error %.3e", n, e);
}

static void test_every_size_matches_the_naive_dft_forward_and_inverse(void **state)
{
    (void)state;
    int sizes[FFT_MAX_N];
    int count = supported_sizes(sizes);
    for (int i = 0; i < count; ++i) {
        check_size(sizes[i], false);
        check_size(sizes[i], true);
    }
}

static void test_forward_output_is_digit_reversed(void **state)
{
    (void)state;
    fft_plan p;
    char err[128];
    assert_true(fft_plan_make(8, false, &p, err, sizeof err)); /* one register stage? no: 8 lanes */
    /* radix-2 stages only: plain bit reversal */
    static const int bitrev8[8] = {0, 4, 2, 6, 1, 5, 3, 7};
    for (int k = 0; k < 8; ++k)
        assert_int_equal(fft_plan_output_position(&p, k), bitrev8[k]);
    /* and a permutation for every size */
    int sizes[FFT_MAX_N], count = supported_sizes(sizes);
    for (int i = 0; i < count; ++i) {
        assert_true(fft_plan_make(sizes[i], false, &p, err, sizeof err));
        char seen[FFT_MAX_N] = {0};
        for (int k = 0; k < p.n; ++k)
            seen[fft_plan_output_position(&p, k)]++;
        for (int k = 0; k < p.n; ++k)
            assert_int_equal(seen[k], 1);
    }
}

static void test_twiddle_choice_follows_the_count(void **state)
{
    (void)state;
    fft_plan p;
    char err[128], text[160];
    assert_true(fft_plan_make(2, false, &p, err, sizeof err));
    assert_int_equal(p.lane_twiddles, 0);
    assert_int_equal(p.stages[0].twiddle, FFT_TWIDDLE_NONE);
    /* n = 32: 4 registers x 8 lanes; the radix-4 register stage twiddles 3 of its 4 values, the
     * lane stages of spans 4 and 2 all 4, the last none: 3 + 4 + 4. */
    assert_true(fft_plan_make(32, false, &p, err, sizeof err));
    assert_int_equal(p.regs, 4);
    assert_int_equal(p.lane_twiddles, 11);
    assert_int_equal(p.stages[0].twiddle, FFT_TWIDDLE_TABLE);
    assert_int_equal(p.stages[3].twiddle, FFT_TWIDDLE_NONE);
    assert_non_null(strstr(p.twiddle_reason, "table: 11 lane-dependent"));
    assert_true(fft_plan_make(256, false, &p, err, sizeof err)); /* 8 registers x 32 lanes */
    assert_int_equal(p.regs, 8);
    assert_int_equal(p.stages[0].twiddle, FFT_TWIDDLE_TABLE);
    assert_non_null(strstr(p.twiddle_reason, "table"));
    fft_plan_describe(&p, text, sizeof text);
    assert_string_equal(text, "8x2x2x2x2x2 (8 registers x 32 lanes, 1 transform per warp)");
    assert_true(fft_plan_make(49, false, &p, err, sizeof err)); /* 7 lanes, 4 transforms per warp */
    fft_plan_describe(&p, text, sizeof text);
    assert_string_equal(text, "7x7 (7 registers x 7 lanes, 4 transforms per warp)");
}

/* Exchanged plans: the first phase keeps the loads' mapping r * lanes + l, every phase maps its
 * lanes and registers onto all n positions, a phase's stages are register digits within the
 * lane's registers, and the registers of one butterfly (r + d * stride, the stride the generator
 * uses) differ exactly in that stage's digit. The stage math itself is fft_plan_eval's (checked
 * above against the DFT), since a plan's positions are what its stages read and write. */
static void test_exchanged_plans_map_every_phase_onto_all_positions(void **state)
{
    (void)state;
    static const int cases[][2] = {{16, 4}, {32, 8}, {32, 4}, {64, 8}, {128, 8}, {128, 16}, {256, 8}};
    char err[200];
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
        fft_plan p;
        int n = cases[c][0], regs = cases[c][1];
        if (!fft_plan_make_exchanged(n, regs, &p, err, sizeof err))
            fail_msg("n = %d, %d registers: %s", n, regs, err);
        assert_int_equal(p.lanes * p.regs, n);
        assert_true(p.phase_count >= 2);
        int next = 0;
        for (int f = 0; f < p.phase_count; ++f) {
            const fft_phase *ph = &p.phases[f];
            assert_int_equal(ph->first, next);
            next += ph->count;
            bool seen[FFT_MAX_N] = {false};
            for (int l = 0; l < p.lanes; ++l)
                for (int r = 0; r < p.regs; ++r) {
                    int q = fft_plan_position(&p, f, l, r);
                    assert_true(q >= 0 && q < n && !seen[q]);
                    seen[q] = true;
                    if (f == 0)
                        assert_int_equal(q, r * p.lanes + l);
                }
            for (int s = ph->first; s < ph->first + ph->count; ++s) {
                assert_false(ph->lane_digits >> s & 1u);
                int stride = 1, radix = p.stages[s].radix, span = p.stages[s].span;
                for (int u = p.stage_count - 1; u > s; --u)
                    if (!(ph->lane_digits >> u & 1u))
                        stride *= p.stages[u].radix;
                for (int l = 0; l < p.lanes; ++l)
                    for (int r = 0; r < p.regs; ++r) {
                        int q = fft_plan_position(&p, f, l, r);
                        if (q / span % radix != 0)
                            continue;
                        for (int d = 1; d < radix; ++d)
                            assert_int_equal(fft_plan_position(&p, f, l, r + d * stride), q + d * span);
                    }
            }
        }
        assert_int_equal(next, p.stage_count);
        double complex in[FFT_MAX_N], out[FFT_MAX_N], want[FFT_MAX_N];
        for (int i = 0; i < n; ++i)
            in[i] = uniform() + I * uniform();
        fft_plan_eval(&p, -1, in, out);
        naive_dft(n, -1, in, want);
        assert_true(rel_error(n, out, want) < 1e-12);
    }
    fft_plan p;
    assert_false(fft_plan_make_exchanged(24, 4, &p, err, sizeof err)); /* powers of two only */
    assert_non_null(strstr(err, "n = 24"));
}

/* fft-fused's register transforms (fft_regs.c): every size 1..64 whose prime factors are at
 * most 7, both signs, run as scheduled (out[] the output order) against the naive DFT. */
static void test_register_ffts_match_the_naive_dft(void **state)
{
    (void)state;
    int checked = 0;
    for (int n = 1; n <= REG_FFT_MAX_N; ++n) {
        for (int sign = -1; sign <= 1; sign += 2) {
            reg_fft f;
            bool ok = cg_reg_fft(n, sign, &f);
            int p = n; /* n's largest prime factor */
            for (int d = 2; d * d <= p; ++d)
                while (p % d == 0 && p > d)
                    p /= d;
            assert_int_equal(ok, n == 1 || p <= REG_FFT_MAX_RADIX);
            if (!ok)
                continue;
            double complex x[REG_FFT_MAX_N], want[REG_FFT_MAX_N], got[REG_FFT_MAX_N];
            double re[REG_FFT_MAX_N], im[REG_FFT_MAX_N];
            for (int j = 0; j < n; ++j)
                re[j] = uniform(), im[j] = uniform(), x[j] = re[j] + I * im[j];
            naive_dft(n, sign, x, want);
            cg_reg_fft_eval(&f, re, im);
            for (int k = 0; k < n; ++k)
                got[k] = re[f.out[k]] + I * im[f.out[k]];
            double e = rel_error(n, got, want);
            if (e > BOUND)
                fail_msg("register FFT n = %d, sign %d: relative error %.3g", n, sign, e);
            ++checked;
        }
    }
    assert_int_equal(checked, 2 * 36); /* the 36 sizes up to 64 with no prime factor above 7 */
}

/* Each register holds exactly one output bin, and the butterflies touch only x[0..n-1]. */
static void test_register_fft_outputs_are_a_permutation(void **state)
{
    (void)state;
    const int sizes[] = {16, 21, 27, 32, 35, 40, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        reg_fft f;
        assert_true(cg_reg_fft(sizes[i], -1, &f));
        bool seen[REG_FFT_MAX_N] = {false};
        for (int k = 0; k < f.n; ++k) {
            assert_in_range(f.out[k], 0, f.n - 1);
            assert_false(seen[f.out[k]]);
            seen[f.out[k]] = true;
        }
        for (int b = 0; b < f.count; ++b)
            for (int s = 0; s < f.b[b].radix; ++s)
                assert_in_range(f.b[b].regs[s], 0, f.n - 1);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported_sizes_are_the_7_smooth_ones_from_2_to_256),
        cmocka_unit_test(test_unsupported_size_is_refused_with_the_reason),
        cmocka_unit_test(test_plans_map_elements_onto_lanes_and_registers),
        cmocka_unit_test(test_every_size_matches_the_naive_dft_forward_and_inverse),
        cmocka_unit_test(test_forward_output_is_digit_reversed),
        cmocka_unit_test(test_twiddle_choice_follows_the_count),
        cmocka_unit_test(test_exchanged_plans_map_every_phase_onto_all_positions),
        cmocka_unit_test(test_register_ffts_match_the_naive_dft),
        cmocka_unit_test(test_register_fft_outputs_are_a_permutation),
    };
    return cmocka_run_group_tests_name("fft_plan", tests, NULL, NULL);
}
