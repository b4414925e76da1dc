/* Winograd's minimal filtering F(m, r), derived exactly (Cook-Toom, Lavin & Gray section 4):
 * m outputs of an r-tap correlation from an input tile of alpha = m + r - 1 values,
 *
 *     y = AT [ (G g) . (BT d) ]        y[i] = sum_k d[i + k] g[k],  i < m
 *
 * with "." the elementwise product, and in 2-D by nesting, Y = AT [ (G g G^T) . (BT d B) ] A.
 * The matrices come from alpha - 1 finite interpolation points and the point at infinity:
 * correlation is the transpose of the polynomial product g(x) h(x), evaluated at the points and
 * interpolated back (Lagrange; the infinite point carries the leading coefficient). The 1/f_j
 * Lagrange denominators go into G, so BT holds the coefficients of integer-root polynomials and
 * the data transform stays cheap. Everything is an exact rational; fp32 literals come later.
 * F(1, r) and F(m, 1) need no points: their trivial algorithms (identity and ones) are already
 * minimal, and exact (wino_derive). */
#ifndef CG_WINOGRAD_TRANSFORM_H
#define CG_WINOGRAD_TRANSFORM_H

#include <stdbool.h>
#include <stddef.h>

#include "rational.h"

/* Up to 11 finite points: 0, +-1, +-1/2, +-2, +-1/4, +-4 (and infinity). */
#define WINO_MAX_ALPHA 12

typedef struct wino_transform {
    int m, r, alpha;                          /* alpha = m + r - 1 */
    bool direct;                              /* m or r is 1: no points, the trivial algorithm */
    cg_q points[WINO_MAX_ALPHA - 1];          /* the alpha - 1 finite points, in the order used (none if direct) */
    cg_q at[WINO_MAX_ALPHA][WINO_MAX_ALPHA];  /* AT: m x alpha (output transform) */
    cg_q g[WINO_MAX_ALPHA][WINO_MAX_ALPHA];   /* G: alpha x r (filter transform) */
    cg_q bt[WINO_MAX_ALPHA][WINO_MAX_ALPHA];  /* BT: alpha x alpha (data transform) */
} wino_transform;

/* The finite interpolation points, in the order a transform takes them: small magnitudes and
 * their reciprocals first, which keeps the entries of AT, G and BT (and fp32 rounding) small. */
cg_q wino_point(int i);

/* Derives F(m, r) for m, r >= 1 and m + r - 1 <= WINO_MAX_ALPHA (F(1, r) and F(m, 1) direct);
 * false with a message in err. */
bool wino_derive(int m, int r, wino_transform *t, char *err, size_t errlen);

/* y (m values) from d (alpha) and g (r) through the transform, in exact arithmetic; false if a
 * value overflowed 64 bits. */
bool wino_eval_1d(const wino_transform *t, const cg_q *d, const cg_q *g, cg_q *y);

/* Y[m][m] from d[alpha][alpha] and g[r][r] (row-major) by nesting the 1-D transform. */
bool wino_eval_2d(const wino_transform *t, const cg_q *d, const cg_q *g, cg_q *y);

/* "F(4,3): alpha 6, points 0, 1, -1, 1/2, -1/2, inf" for headers and messages. */
void wino_describe(const wino_transform *t, char *buf, size_t size);

#endif
