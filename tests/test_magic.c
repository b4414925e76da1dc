/* Tests of magic.c: every quotient is checked against plain division and, where sampled,
 * against libdivide (Debian's libdivide-dev, an independent derivation). The sweeps are
 * exhaustive where that is affordable (all divisors to 2^16, all dividends below 2^31 for a
 * few divisors) and sampled at the edges where a wrong multiplier shows first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <libdivide.h>

#include "magic.h"

#define MAX_31 UINT32_C(0x7fffffff) /* the range magic.h promises for every divisor */

/* ---- helpers ---- */

/* splitmix64: a fixed seed keeps failures reproducible. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* floor(log2 d), written apart from magic.c so the tests do not share its mistakes. */
static unsigned log2_floor(uint32_t d)
{
    unsigned s = 0;
    while (d >>= 1)
        ++s;
    return s;
}

/* The largest max_dividend the derivation of magic.h allows for d, capped at 2^32 - 1:
 * floor((2^(32+s) - 1) / e), with e = (-2^(32+s)) mod d the error of the rounded-up multiplier. */
static uint32_t largest_allowed_max(uint32_t d)
{
    unsigned __int128 two_pow = (unsigned __int128)1 << (32 + log2_floor(d));
    uint64_t error = (uint64_t)((d - two_pow % d) % d);
    if (error == 0)
        return UINT32_MAX;
    unsigned __int128 limit = (two_pow - 1) / error;
    return limit >= UINT32_MAX ? UINT32_MAX : (uint32_t)limit;
}

static magic_u32 gen_or_fail(uint32_t d, uint32_t max)
{
    magic_u32 m;
    if (!magic_u32_gen(d, max, &m))
        fail_msg("magic_u32_gen(%u, %u) failed", d, max);
    return m;
}

/* Fails at a dividend where magic, plain division and libdivide disagree. */
static void check_dividend(const magic_u32 *m, const struct libdivide_u32_t *ld, uint32_t x)
{
    uint32_t expected = x / m->divisor;
    uint32_t got = magic_u32_do(x, m), by_libdivide = libdivide_u32_do(x, ld);
    if (got != expected || by_libdivide != expected)
        fail_msg("d = %u, x = %u: magic %u (mul %u, shift %u), libdivide %u, x / d = %u", m->divisor, x,
                 got, m->mul, m->shift, by_libdivide, expected);
}

/* Dividends where a wrong multiplier shows first: near 0, on both sides of multiples of d
 * (the quotient steps there) and at the top of the range, where the error term e*x is
 * largest; the worst is the last x = -1 (mod d), whose fraction (d-1)/d leaves least room. */
static void check_edge_dividends(const magic_u32 *m, const struct libdivide_u32_t *ld)
{
    const uint64_t d = m->divisor, max = m->max_dividend;
    const uint64_t multiples[] = {1, 2, 3, 1000, max / d / 2, max / d, max / d + 1};
    const uint64_t top_minus_one = max % d == d - 1 ? max : max / d * d - 1; /* may wrap: filtered */
    const uint64_t fixed[] = {0, 1, 2, d - 1, d + 1, max, max - 1, max - d, top_minus_one};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; ++i)
        if (fixed[i] <= max)
            check_dividend(m, ld, (uint32_t)fixed[i]);
    for (size_t i = 0; i < sizeof multiples / sizeof multiples[0]; ++i)
        for (uint64_t x = multiples[i] * d - 1; x <= multiples[i] * d + 1; ++x)
            if (x <= max)
                check_dividend(m, ld, (uint32_t)x);
}

static void check_random_dividends(const magic_u32 *m, const struct libdivide_u32_t *ld, int count,
                                   uint64_t *state)
{
    for (int i = 0; i < count; ++i)
        check_dividend(m, ld, (uint32_t)(next_random(state) % ((uint64_t)m->max_dividend + 1)));
}

static void check_sampled(const magic_u32 *m, uint64_t *state)
{
    struct libdivide_u32_t ld = libdivide_u32_gen(m->divisor);
    check_edge_dividends(m, &ld);
    check_random_dividends(m, &ld, 200, state);
}

/* q = floor(x/d) exactly when 0 <= x - q*d < d; in 64 bits (q*d < 2^64, and a too-large q
 * wraps far above d) this needs no division, which keeps a 2^31 sweep near 2 s. */
static bool quotient_is_exact(uint64_t x, uint64_t q, uint64_t d) { return x - q * d < d; }

/* ---- (a) every divisor to 2^16 ---- */

static void test_every_divisor_to_2_16_matches_division_and_libdivide(void **state)
{
    (void)state;
    uint64_t random = 1;
    for (uint32_t d = 1; d <= 65536; ++d) {
        magic_u32 m = gen_or_fail(d, MAX_31);
        check_sampled(&m, &random);
    }
}

static void test_gen_records_divisor_and_range(void **state)
{
    (void)state;
    magic_u32 m = gen_or_fail(641, 12345);
    assert_int_equal(m.divisor, 641);
    assert_int_equal(m.max_dividend, 12345);
    m = gen_or_fail(64, 99);
    assert_int_equal(m.divisor, 64);
    assert_int_equal(m.max_dividend, 99);
}

/* ---- (b) every dividend below 2^31 ---- */

static void check_every_dividend(uint32_t d, uint32_t max)
{
    const magic_u32 m = gen_or_fail(d, max);
    uint64_t wrong = 0;
    for (uint64_t x = 0; x <= max; ++x)
        wrong += !quotient_is_exact(x, magic_u32_do((uint32_t)x, &m), d);
    for (uint64_t x = 0; wrong && x <= max; ++x)
        if (!quotient_is_exact(x, magic_u32_do((uint32_t)x, &m), d))
            fail_msg("d = %u: %llu wrong quotients, first at x = %llu: %u", d, (unsigned long long)wrong,
                     (unsigned long long)x, magic_u32_do((uint32_t)x, &m));
}

/* Small primes (largest relative error), a square, Fermat's factors 641 and 6700417 of
 * 2^32 + 1 (multipliers near special values), and 2^31 - 1, the largest non-power of two. */
static void test_every_dividend_below_2_31_is_exact_for_sample_divisors(void **state)
{
    (void)state;
    const uint32_t divisors[] = {3, 7, 49, 641, 6700417, 2147483647};
    for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; ++i)
        check_every_dividend(divisors[i], MAX_31);
}

/* ---- (c) the edges of the range ---- */

static void test_zero_divisor_is_rejected(void **state)
{
    (void)state;
    magic_u32 m;
    assert_false(magic_u32_gen(0, 0, &m));
    assert_false(magic_u32_gen(0, MAX_31, &m));
    assert_false(magic_u32_gen(0, UINT32_MAX, &m));
}

static void test_powers_of_two_are_shifts_over_the_full_range(void **state)
{
    (void)state;
    uint64_t random = 2;
    for (unsigned k = 0; k < 32; ++k) {
        magic_u32 m = gen_or_fail(UINT32_C(1) << k, UINT32_MAX);
        assert_int_equal(m.mul, 0);
        assert_int_equal(m.shift, k);
        check_sampled(&m, &random);
    }
}

/* The largest allowed max is accepted and exact up to its last dividend; one more is refused. */
static void check_largest_allowed_max(uint32_t d, uint64_t *random)
{
    const uint32_t limit = largest_allowed_max(d);
    magic_u32 m = gen_or_fail(d, limit);
    struct libdivide_u32_t ld = libdivide_u32_gen(d);
    for (uint64_t x = limit >= 4096 ? limit - 4096 : 0; x <= limit; ++x)
        check_dividend(&m, &ld, (uint32_t)x);
    check_sampled(&m, random);
    if (limit < UINT32_MAX && magic_u32_gen(d, limit + 1, &m))
        fail_msg("d = %u: max = %u accepted, past the largest allowed %u", d, limit + 1, limit);
}

static void test_largest_allowed_max_is_exact_and_one_more_is_rejected(void **state)
{
    (void)state;
    uint64_t random = 3;
    const uint32_t divisors[] = {3, 5, 6, 7, 14, 49, 641, 65537, 100003, 6700417, 2147483647u,
                                 2147483649u, 3000000019u, 4294967294u, 4294967295u};
    for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; ++i)
        check_largest_allowed_max(divisors[i], &random);
}

/* For 7 the bound is tight: within d dividends past the largest allowed max, the same
 * multiplier gives a wrong quotient, so refusing the full 32-bit range is necessary. */
static void test_divisor_7_is_refused_for_the_full_32_bit_range(void **state)
{
    (void)state;
    magic_u32 m;
    assert_false(magic_u32_gen(7, UINT32_MAX, &m));
    const uint32_t limit = largest_allowed_max(7);
    assert_int_equal(limit, 3435973836u); /* (2^34 - 1) / 5: mul = 2454267027, e = 5 */
    m = gen_or_fail(7, limit);
    assert_int_equal(m.mul, 2454267027u);
    assert_int_equal(m.shift, 2);
    bool wrong_found = false;
    for (uint64_t x = (uint64_t)limit + 1; x <= (uint64_t)limit + 7; ++x)
        wrong_found |= magic_u32_do((uint32_t)x, &m) != (uint32_t)x / 7;
    assert_true(wrong_found);
}

/* Where the bounded derivation succeeds over all of [0, 2^32 - 1], it is exact up to the top. */
static void test_full_32_bit_range_is_exact_where_gen_succeeds(void **state)
{
    (void)state;
    uint64_t random = 4;
    int accepted = 0, refused = 0;
    for (uint32_t d = 1; d <= 65536; ++d) {
        magic_u32 m;
        bool ok = magic_u32_gen(d, UINT32_MAX, &m);
        if (ok != (largest_allowed_max(d) == UINT32_MAX))
            fail_msg("d = %u: gen says %d for the full range, the bound says otherwise", d, ok);
        if (!ok) {
            ++refused;
            continue;
        }
        ++accepted;
        struct libdivide_u32_t ld = libdivide_u32_gen(d);
        for (uint32_t back = 0; back < 64; ++back)
            check_dividend(&m, &ld, UINT32_MAX - back);
        check_sampled(&m, &random);
    }
    assert_true(accepted > 0 && refused > 0);
}

static void test_large_divisors_are_exact_below_2_31_and_near_2_32(void **state)
{
    (void)state;
    uint64_t random = 5;
    const uint32_t divisors[] = {65537, 65539, 100003, 1000003, 6700417, 1073741827, 2147483647u,
                                 2147483648u, 2147483649u, 3000000019u, 4294967291u, 4294967295u};
    for (size_t i = 0; i < sizeof divisors / sizeof divisors[0]; ++i) {
        magic_u32 m = gen_or_fail(divisors[i], MAX_31);
        check_sampled(&m, &random);
        if (magic_u32_gen(divisors[i], UINT32_MAX, &m))
            check_sampled(&m, &random);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_divisor_to_2_16_matches_division_and_libdivide),
        cmocka_unit_test(test_gen_records_divisor_and_range),
        cmocka_unit_test(test_every_dividend_below_2_31_is_exact_for_sample_divisors),
        cmocka_unit_test(test_zero_divisor_is_rejected),
        cmocka_unit_test(test_powers_of_two_are_shifts_over_the_full_range),
        cmocka_unit_test(test_largest_allowed_max_is_exact_and_one_more_is_rejected),
        cmocka_unit_test(test_divisor_7_is_refused_for_the_full_32_bit_range),
        cmocka_unit_test(test_full_32_bit_range_is_exact_where_gen_succeeds),
        cmocka_unit_test(test_large_divisors_are_exact_below_2_31_and_near_2_32),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
