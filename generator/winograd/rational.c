#include "rational.h"

static const cg_q invalid = {0, 0};

static __int128 gcd128(__int128 a, __int128 b)
{
    if (a < 0)
        a = -a;
    if (b < 0)
        b = -b;
    while (b) {
        __int128 t = a % b;
        a = b, b = t;
    }
    return a;
}

cg_q cg_q_make(__int128 num, __int128 den)
{
    if (den == 0)
        return invalid;
    if (den < 0)
        num = -num, den = -den;
    __int128 g = gcd128(num, den);
    if (g > 1)
        num /= g, den /= g;
    if (num > INT64_MAX || num < -INT64_MAX || den > INT64_MAX)
        return invalid;
    return (cg_q){(int64_t)num, (int64_t)den};
}

cg_q cg_q_add(cg_q a, cg_q b)
{
    if (!cg_q_valid(a) || !cg_q_valid(b))
        return invalid;
    return cg_q_make((__int128)a.num * b.den + (__int128)b.num * a.den, (__int128)a.den * b.den);
}

cg_q cg_q_sub(cg_q a, cg_q b) { return cg_q_add(a, (cg_q){-b.num, b.den}); }

cg_q cg_q_mul(cg_q a, cg_q b)
{
    if (!cg_q_valid(a) || !cg_q_valid(b))
        return invalid;
    return cg_q_make((__int128)a.num * b.num, (__int128)a.den * b.den);
}

cg_q cg_q_div(cg_q a, cg_q b)
{
    if (!cg_q_valid(a) || !cg_q_valid(b) || b.num == 0)
        return invalid;
    return cg_q_make((__int128)a.num * b.den, (__int128)a.den * b.num);
}
