/* Magic numbers for unsigned 32-bit division by a constant over a bounded dividend range.
 * The derivation and its proof are in magic.h; this file only computes it. */
#include "magic.h"

/* floor(log2 d) for d >= 1. */
static uint32_t floor_log2(uint32_t d) { return 31u - (uint32_t)__builtin_clz(d); }

static bool is_power_of_two(uint32_t d) { return (d & (d - 1)) == 0; }

bool magic_u32_gen(uint32_t d, uint32_t max_dividend, magic_u32 *m)
{
    if (d == 0)
        return false;
    uint32_t s = floor_log2(d);
    *m = (magic_u32){.divisor = d, .mul = 0, .shift = s, .max_dividend = max_dividend};
    /* A power of two, 1 included, is a plain shift: exact over the whole 32-bit range. */
    if (is_power_of_two(d))
        return true;
    /* 2^(32+s) <= 2^63, and e < d < 2^32 with max < 2^32 keeps e * max below 2^64. */
    uint64_t two_pow = (uint64_t)1 << (32 + s);
    uint64_t mul = two_pow / d + 1; /* ceil: d is not a power of two, so it never divides 2^(32+s) */
    uint64_t error = mul * d - two_pow;
    if (error * max_dividend >= two_pow)
        return false;
    m->mul = (uint32_t)mul; /* < 2^32 because d > 2^s (magic.h) */
    return true;
}
