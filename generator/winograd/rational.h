/* Exact rational numbers for deriving Winograd transforms: 64-bit numerator and denominator in
 * lowest terms, the denominator positive. Every operation computes in 128 bits and reduces;
 * a result that does not fit 64 bits is "invalid" (den = 0) and stays invalid through every
 * later operation, so a derivation checks its results once at the end instead of after every
 * step. Written by hand: the transforms need a few hundred operations on small numbers, which
 * GMP would do too, at the price of a dependency for the library. */
#ifndef CG_RATIONAL_H
#define CG_RATIONAL_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cg_q {
    int64_t num, den; /* den > 0 and gcd(num, den) = 1; den = 0: invalid */
} cg_q;

static inline bool cg_q_valid(cg_q a) { return a.den > 0; }

/* num / den reduced; invalid for den = 0 or a result beyond 64 bits. */
cg_q cg_q_make(__int128 num, __int128 den);

static inline cg_q cg_q_int(int64_t v) { return (cg_q){v, 1}; }

cg_q cg_q_add(cg_q a, cg_q b);
cg_q cg_q_sub(cg_q a, cg_q b);
cg_q cg_q_mul(cg_q a, cg_q b);
cg_q cg_q_div(cg_q a, cg_q b); /* invalid if b is 0 */

/* Exact equality of two valid rationals (lowest terms make it field-wise). */
static inline bool cg_q_eq(cg_q a, cg_q b) { return cg_q_valid(a) && a.num == b.num && a.den == b.den; }

static inline double cg_q_double(cg_q a) { return (double)a.num / (double)a.den; }

#endif
