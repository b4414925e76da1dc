#include "winograd_transform.h"

#include <stdio.h>
#include <string.h>

#define MAX WINO_MAX_ALPHA

typedef cg_q matrix[MAX][MAX];

cg_q wino_point(int i)
{
    /* 0, then +-p for p = 1, 1/2, 2, 1/4, 4, ...: i = 1, 2 give +-1, i = 3, 4 give +-1/2, ... */
    if (i <= 0)
        return cg_q_int(0);
    int pair = (i - 1) / 2, sign = (i - 1) % 2 ? -1 : 1;
    int64_t power = (int64_t)1 << ((pair + 1) / 2); /* 1, 2, 2, 4, 4, ... */
    bool reciprocal = pair % 2 == 1;                 /* 1/2, 1/4, ... before 2, 4, ... */
    return reciprocal ? cg_q_make(sign, power) : cg_q_int(sign * power);
}

static cg_q power(cg_q x, int e)
{
    cg_q p = cg_q_int(1);
    while (e-- > 0)
        p = cg_q_mul(p, x);
    return p;
}

/* Coefficients (lowest degree first) of prod over the points except `skip` of (x - point). */
static void product_polynomial(const wino_transform *t, int skip, cg_q *coef)
{
    int degree = 0;
    coef[0] = cg_q_int(1);
    for (int c = 1; c < t->alpha; ++c)
        coef[c] = cg_q_int(0);
    for (int l = 0; l < t->alpha - 1; ++l) {
        if (l == skip)
            continue;
        /* multiply by (x - a): new[c] = old[c - 1] - a old[c] */
        for (int c = ++degree; c >= 0; --c)
            coef[c] = cg_q_sub(c ? coef[c - 1] : cg_q_int(0), cg_q_mul(t->points[l], coef[c]));
    }
}

static bool all_valid(const matrix a, int rows, int cols)
{
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j)
            if (!cg_q_valid(a[i][j]))
                return false;
    return true;
}

/* F(1, r) and F(m, 1) with no interpolation: they take alpha = m + r - 1 products as they are
 * (y = sum of g[k] d[k]; y[i] = g[0] d[i]), so the trivial algorithm is already minimal, and
 * exact in fp32 where Cook-Toom's points would round. BT the identity; F(1, r): G the identity
 * and AT a row of ones; F(m, 1): G a column of ones and AT the identity. A 3-D layer's fused
 * kernels sum their depth taps this way (winograd_fused.c). */
static bool derive_direct(wino_transform *t)
{
    t->direct = true;
    for (int i = 0; i < t->alpha; ++i) {
        for (int j = 0; j < t->alpha; ++j)
            t->bt[i][j] = cg_q_int(i == j);
        for (int k = 0; k < t->r; ++k)
            t->g[i][k] = cg_q_int(t->r == 1 || i == k);
    }
    for (int i = 0; i < t->m; ++i)
        for (int j = 0; j < t->alpha; ++j)
            t->at[i][j] = cg_q_int(t->m == 1 || i == j);
    return true;
}

bool wino_derive(int m, int r, wino_transform *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (m < 1 || r < 1 || m + r - 1 > MAX) {
        snprintf(err, errlen, "F(%d, %d): m and r must be >= 1 with m + r - 1 <= %d", m, r, MAX);
        return false;
    }
    t->m = m, t->r = r, t->alpha = m + r - 1;
    if (m == 1 || r == 1)
        return derive_direct(t);
    int finite = t->alpha - 1, inf = t->alpha - 1;
    for (int j = 0; j < finite; ++j)
        t->points[j] = wino_point(j);
    /* AT: output i at point j is a_j^i; the infinite point adds the leading term to the last. */
    for (int i = 0; i < m; ++i) {
        for (int j = 0; j < finite; ++j)
            t->at[i][j] = power(t->points[j], i);
        t->at[i][inf] = cg_q_int(i == m - 1);
    }
    /* G: the filter's polynomial at point j over the Lagrange denominator f_j; at infinity, its
     * leading coefficient. */
    for (int j = 0; j < finite; ++j) {
        cg_q f = cg_q_int(1);
        for (int l = 0; l < finite; ++l)
            if (l != j)
                f = cg_q_mul(f, cg_q_sub(t->points[j], t->points[l]));
        for (int k = 0; k < r; ++k)
            t->g[j][k] = cg_q_div(power(t->points[j], k), f);
    }
    for (int k = 0; k < r; ++k)
        t->g[inf][k] = cg_q_int(k == r - 1);
    /* BT: row j holds prod_{l != j} (x - a_l), row inf the product over all points. */
    for (int j = 0; j < finite; ++j)
        product_polynomial(t, j, t->bt[j]);
    product_polynomial(t, -1, t->bt[inf]);
    if (!all_valid(t->at, m, t->alpha) || !all_valid(t->g, t->alpha, r) || !all_valid(t->bt, t->alpha, t->alpha)) {
        snprintf(err, errlen, "F(%d, %d): an entry overflows 64-bit rationals", m, r);
        return false;
    }
    return true;
}

/* out = op(A) op(B), op transposing where asked; A(i, k) is a[k][i] when ta. */
static void multiply(matrix out, const matrix a, bool ta, const matrix b, bool tb, int rows, int inner, int cols)
{
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < cols; ++j) {
            cg_q s = cg_q_int(0);
            for (int k = 0; k < inner; ++k)
                s = cg_q_add(s, cg_q_mul(ta ? a[k][i] : a[i][k], tb ? b[j][k] : b[k][j]));
            out[i][j] = s;
        }
}

bool wino_eval_1d(const wino_transform *t, const cg_q *d, const cg_q *g, cg_q *y)
{
    matrix dv = {{{0}}}, gv = {{{0}}}, u, v, prod = {{{0}}}, out;
    for (int i = 0; i < t->alpha; ++i)
        dv[i][0] = d[i];
    for (int k = 0; k < t->r; ++k)
        gv[k][0] = g[k];
    multiply(u, t->g, false, gv, false, t->alpha, t->r, 1);
    multiply(v, t->bt, false, dv, false, t->alpha, t->alpha, 1);
    for (int i = 0; i < t->alpha; ++i)
        prod[i][0] = cg_q_mul(u[i][0], v[i][0]);
    multiply(out, t->at, false, prod, false, t->m, t->alpha, 1);
    for (int i = 0; i < t->m; ++i)
        y[i] = out[i][0];
    return all_valid(out, t->m, 1);
}

bool wino_eval_2d(const wino_transform *t, const cg_q *d, const cg_q *g, cg_q *y)
{
    int a = t->alpha, r = t->r, m = t->m;
    matrix dm = {{{0}}}, gm = {{{0}}}, tmp, u, v, prod = {{{0}}}, out;
    for (int i = 0; i < a; ++i)
        for (int j = 0; j < a; ++j)
            dm[i][j] = d[i * a + j];
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < r; ++j)
            gm[i][j] = g[i * r + j];
    multiply(tmp, t->g, false, gm, false, a, r, r); /* G g */
    multiply(u, tmp, false, t->g, true, a, r, a);   /* (G g) G^T */
    multiply(tmp, t->bt, false, dm, false, a, a, a); /* BT d */
    multiply(v, tmp, false, t->bt, true, a, a, a);   /* (BT d) B */
    for (int i = 0; i < a; ++i)
        for (int j = 0; j < a; ++j)
            prod[i][j] = cg_q_mul(u[i][j], v[i][j]);
    multiply(tmp, t->at, false, prod, false, m, a, a); /* AT M */
    multiply(out, tmp, false, t->at, true, m, a, m);   /* (AT M) A */
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j)
            y[i * m + j] = out[i][j];
    return all_valid(out, m, m);
}

void wino_describe(const wino_transform *t, char *buf, size_t size)
{
    if (t->direct) {
        snprintf(buf, size, "F(%d,%d): alpha %d, direct (no interpolation)", t->m, t->r, t->alpha);
        return;
    }
    int used = snprintf(buf, size, "F(%d,%d): alpha %d, points", t->m, t->r, t->alpha);
    for (int j = 0; j < t->alpha - 1 && used > 0 && (size_t)used < size; ++j) {
        cg_q p = t->points[j];
        if (p.den == 1)
            used += snprintf(buf + used, size - (size_t)used, "%s %lld", j ? "," : "", (long long)p.num);
        else
            used += snprintf(buf + used, size - (size_t)used, "%s %lld/%lld", j ? "," : "", (long long)p.num,
                             (long long)p.den);
    }
    if (used > 0 && (size_t)used < size)
        snprintf(buf + used, size - (size_t)used, "%sinf", t->alpha > 1 ? ", " : " ");
}
