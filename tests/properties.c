/* Linearity and shift equivariance of a generic operator (properties.h).
 *
 * The tolerance: an output element is a sum of `terms` products of values of magnitude about 1.
 * Summed in fp32 (unit roundoff u = 6e-8) its rounding error grows like u sqrt(terms) relative
 * to its own size, times a small factor for each transform between (an FFT of P points adds
 * about u log2 P, relative to the norm of the transformed data, spread over all its outputs).
 * The two sides of each check are separate runs on different data, each with its own rounding,
 * so they agree to about that error, relative to the outputs' size; an element's error is
 * bounded by its neighbours' size rather than its own (an FFT spreads error evenly), so the
 * scale is the root mean square of the compared outputs. PROP_TOLERANCE sqrt(terms) is 170 u
 * sqrt(terms): test_conv_program's programs stay below a fifth of it (Winograd's, the least
 * exact, about 0.2; the FFT algorithms' about 0.01; the worst ratio is printed), while a wrong
 * element is off by about the outputs' size, 1e3 to 1e4 times the tolerance. */
#include "properties.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

static int64_t spatial(const prop_tensor *t)
{
    int64_t n = 1;
    for (int d = 0; d < t->rank; ++d)
        n *= t->size[d];
    return n;
}

static int64_t elems(const prop_tensor *t) { return t->outer * spatial(t); }

/* Positions between neighbours along `dim`. */
static int64_t stride_of(const prop_tensor *t, int dim)
{
    int64_t s = 1;
    for (int d = dim + 1; d < t->rank; ++d)
        s *= t->size[d];
    return s;
}

/* Element e's position along `dim`. */
static int64_t position(const prop_tensor *t, int dim, int64_t e) { return e / stride_of(t, dim) % t->size[dim]; }

bool prop_window_reads(const prop_window *w, int64_t o, int64_t lo, int64_t hi)
{
    for (int64_t f = 0; f < w->kernel; ++f) {
        int64_t r = o * w->stride - w->pad + f * w->dilation;
        if (r >= lo && r < hi)
            return true;
    }
    return false;
}

static float *buffer(int64_t n)
{
    float *v = malloc(4 * (size_t)(n > 0 ? n : 1));
    assert_non_null(v);
    return v;
}

/* Values in [-1, 1], never zero (a zero hides what it multiplies). */
static float *random_values(int64_t n, uint64_t *state)
{
    float *v = buffer(n);
    for (int64_t i = 0; i < n; ++i) {
        *state = *state * 6364136223846793005u + 1442695040888963407u;
        v[i] = (float)((int64_t)(*state >> 33) % 2001 - 1000) / 1000.0f + 0.0005f;
    }
    return v;
}

/* out = op(in0, in1) into a fresh buffer, poisoned with NaN first so that an element the
 * program never writes fails every comparison. */
static float *run(const prop_op *op, const float *in0, const float *in1)
{
    int64_t n = elems(&op->out);
    float *out = buffer(n);
    memset(out, 0xFF, 4 * (size_t)n);
    convgen_status s = op->run(op->user, in0, op->in[1].outer ? in1 : NULL, out);
    if (s != CONVGEN_SUCCESS)
        fail_msg("%s: %s: %s", op->name, convgen_status_string(s), convgen_last_error());
    return out;
}

static double rms(const float *v, int64_t n)
{
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
        s += (double)v[i] * v[i];
    return n ? sqrt(s / (double)n) : 0;
}

/* |got - want| <= PROP_TOLERANCE sqrt(terms) scale for every element, or the test fails naming
 * the first element off; returns the worst |got - want| / (tolerance scale). */
static double compare(const prop_op *op, const char *what, int64_t i, double got, double want, double scale,
                      double worst)
{
    double tolerance = PROP_TOLERANCE * sqrt(op->terms > 1 ? op->terms : 1) * (scale > 0 ? scale : 1);
    double off = fabs(got - want) / tolerance;
    if (!(off <= 1))
        fail_msg("%s: %s: element %lld is %.9g, not %.9g (off by %.3g, %.3g times the tolerance %.3g)", op->name,
                 what, (long long)i, got, want, fabs(got - want), off, tolerance);
    return off > worst ? off : worst;
}

double prop_check_linear(const prop_op *op, int operand, uint64_t seed)
{
    /* a + b != 1: out = L(x) + c gives out(a x1 + b x2) - a out(x1) - b out(x2) = (1 - a - b) c */
    const float a = 0.75f, b = -1.5f;
    int64_t n = elems(&op->in[operand]), m = elems(&op->out);
    float *in[2] = {random_values(elems(&op->in[0]), &seed), random_values(elems(&op->in[1]), &seed)};
    float *x2 = random_values(n, &seed), *mix = buffer(n), *x1 = in[operand];
    for (int64_t i = 0; i < n; ++i)
        mix[i] = a * x1[i] + b * x2[i];
    float *out1 = run(op, in[0], in[1]);
    in[operand] = x2;
    float *out2 = run(op, in[0], in[1]);
    in[operand] = mix;
    float *out12 = run(op, in[0], in[1]);
    in[operand] = x1;
    char what[64];
    snprintf(what, sizeof what, "linearity in operand %d", operand);
    double scale = fabs(a) * rms(out1, m) + fabs(b) * rms(out2, m), worst = 0;
    for (int64_t i = 0; i < m; ++i)
        worst = compare(op, what, i, out12[i], (double)a * out1[i] + (double)b * out2[i], scale, worst);
    free(in[0]), free(in[1]), free(x2), free(mix), free(out1), free(out2), free(out12);
    return worst;
}

/* to = from moved up by `by` positions along `dim` (zeros come in, the last ones drop). */
static void shift(const prop_tensor *t, int dim, int64_t by, const float *from, float *to)
{
    int64_t step = stride_of(t, dim);
    for (int64_t e = 0; e < elems(t); ++e) {
        int64_t i = position(t, dim, e);
        to[e] = i >= by ? from[e - by * step] : 0.0f;
    }
}

double prop_check_shift(const prop_op *op, int dim, const int64_t shift_by[2], int64_t out_shift,
                        prop_compared_fn compared, const prop_window *window, bool zero_dropped,
                        uint64_t seed, int64_t *compared_count, int64_t *excluded)
{
    float *in[2], *moved[2];
    for (int j = 0; j < 2; ++j) {
        const prop_tensor *t = &op->in[j];
        in[j] = random_values(elems(t), &seed);
        moved[j] = buffer(elems(t));
        for (int64_t e = 0; zero_dropped && shift_by[j] && e < elems(t); ++e)
            if (position(t, dim, e) >= t->size[dim] - shift_by[j])
                in[j][e] = 0.0f;
        if (shift_by[j])
            shift(t, dim, shift_by[j], in[j], moved[j]);
        else
            memcpy(moved[j], in[j], 4 * (size_t)elems(t));
    }
    float *before = run(op, in[0], in[1]), *after = run(op, moved[0], moved[1]);
    const prop_tensor *t = &op->out;
    int64_t step = stride_of(t, dim), m = elems(t);
    char what[96];
    snprintf(what, sizeof what, "a shift of (%lld, %lld) along dimension %d", (long long)shift_by[0],
             (long long)shift_by[1], dim);
    double scale = rms(before, m), worst = 0;
    *compared_count = *excluded = 0;
    for (int64_t e = 0; e < m; ++e) {
        int64_t i = position(t, dim, e);
        if (i < out_shift || (compared && !compared(window, i))) {
            ++*excluded;
            continue;
        }
        ++*compared_count;
        worst = compare(op, what, e, after[e], before[e - out_shift * step], scale, worst);
    }
    if (*compared_count == 0)
        fail_msg("%s: %s: no output element is free of the border", op->name, what);
    free(in[0]), free(in[1]), free(moved[0]), free(moved[1]), free(before), free(after);
    return worst;
}
