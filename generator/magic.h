/* Magic numbers: unsigned division by a shape constant as a multiply-high and a shift.
 *
 * A kernel only ever divides indices it can bound (an index below a tensor's element count),
 * so the constants are derived for a dividend range [0, max]: with s = floor(log2 d) and
 * mul = ceil(2^(32+s) / d) < 2^32, the error e = mul*d - 2^(32+s) < d satisfies e*max < 2^(32+s)
 * whenever max < 2^31, and then floor(x*mul / 2^(32+s)) = floor(x/d) for every x <= max
 * (Granlund & Montgomery 1994, Hacker's Delight 10-9). This avoids libdivide's 33-bit "add"
 * path that a full 32-bit range needs. The derivation is written here rather than taken from
 * libdivide because libdivide has no bounded-range variant; the tests cross-check every
 * quotient against libdivide (Debian's libdivide-dev) and against plain division.
 */
#ifndef CG_MAGIC_H
#define CG_MAGIC_H

#include <stdbool.h>
#include <stdint.h>

typedef struct magic_u32 {
    uint32_t divisor;
    uint32_t mul;    /* 0 for a power of two: the quotient is x >> shift */
    uint32_t shift;
    uint32_t max_dividend;
} magic_u32;

/* Derives the constants for d >= 1 over dividends [0, max_dividend]. Returns false (and
 * leaves *m unspecified) for d = 0 or when e*max < 2^(32+s) fails. The bound is sufficient,
 * not necessary, but tight to within d dividends: past it, the first x = -1 (mod d), if any
 * below 2^32, gets a wrong quotient (for d = 7 the full 32-bit range fails this way). */
bool magic_u32_gen(uint32_t d, uint32_t max_dividend, magic_u32 *m);

/* The quotient as an emitted kernel computes it (for tests and CPU evaluation). */
static inline uint32_t magic_u32_do(uint32_t x, const magic_u32 *m)
{
    if (m->mul == 0)
        return x >> m->shift;
    return (uint32_t)(((uint64_t)x * m->mul) >> 32) >> m->shift;
}

#endif
