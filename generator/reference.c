/* The CPU reference (see reference.h for the definitions it follows).
 *
 * Every rank is handled by one loop nest over three spatial dimensions: a problem of rank r
 * is seen as rank 3 with 3 - r leading dimensions of size 1 (kernel 1, stride 1, dilation 1,
 * no padding), which leaves every packed layout and every sum unchanged. Each pass is written
 * as its own sum over one output element, so bprop and accgrad are definitions of their own,
 * not rearrangements of fprop; the tests tie the three together through the adjoint
 * identities. ref_conv and ref_conv_at both go through ref_element, so they cannot disagree
 * on the value of an element, only on which element an index names. */
#include "reference.h"

#include <math.h>
#include <stdbool.h>

#define REF_DIMS 3

/* A problem with its spatial dimensions padded to three (innermost last). */
typedef struct ref_geom {
    int64_t n, c, k;
    int64_t in[REF_DIMS], kernel[REF_DIMS], out[REF_DIMS];
    int64_t pad[REF_DIMS], stride[REF_DIMS], dilation[REF_DIMS];
    bool flip;
} ref_geom;

static ref_geom ref_geom_of(const cg_problem *p)
{
    ref_geom g = {.n = p->n, .c = p->c, .k = p->k, .flip = p->flip};
    int lead = REF_DIMS - p->rank;
    for (int d = 0; d < REF_DIMS; d++) {
        int s = d - lead; /* the problem's dimension, or < 0 for a size-1 filler */
        g.in[d] = s < 0 ? 1 : p->in[s];
        g.kernel[d] = s < 0 ? 1 : p->kernel[s];
        g.out[d] = s < 0 ? 1 : p->out[s];
        g.pad[d] = s < 0 ? 0 : p->pad_before[s];
        g.stride[d] = s < 0 ? 1 : p->stride[s];
        g.dilation[d] = s < 0 ? 1 : p->dilation[s];
    }
    return g;
}

static int64_t pixels(const int64_t size[REF_DIMS])
{
    return size[0] * size[1] * size[2];
}

/* Offset of (a, b, pos) in a packed [A][B][size...] tensor, B = nb. */
static int64_t offset(int64_t a, int64_t b, int64_t nb, const int64_t size[REF_DIMS],
                      const int64_t pos[REF_DIMS])
{
    int64_t spatial = (pos[0] * size[1] + pos[1]) * size[2] + pos[2];
    return (a * nb + b) * pixels(size) + spatial;
}

/* The output tensor of a pass as [A][B][spatial]: y [n][k][out], dx [n][c][in],
 * dw [k][c][kernel]. */
static void out_shape(const ref_geom *g, convgen_pass pass, int64_t *na, int64_t *nb,
                      const int64_t **size)
{
    switch (pass) {
    case CONVGEN_BPROP: *na = g->n; *nb = g->c; *size = g->in; return;
    case CONVGEN_ACCGRAD: *na = g->k; *nb = g->c; *size = g->kernel; return;
    case CONVGEN_FPROP: break;
    }
    *na = g->n; *nb = g->k; *size = g->out;
}

static int64_t tap_of(const ref_geom *g, int d, int64_t f)
{
    return g->flip ? g->kernel[d] - 1 - f : f;
}

/* The input position that output o reads through tap f in dimension d; false if it lies in
 * the padding. */
static bool input_at(const ref_geom *g, int d, int64_t o, int64_t f, int64_t *i)
{
    *i = o * g->stride[d] - g->pad[d] + tap_of(g, d, f) * g->dilation[d];
    return *i >= 0 && *i < g->in[d];
}

/* The output o with o*stride - pad + F(f)*dilation = i in dimension d; false if there is
 * none (not divisible, or out of range). */
static bool output_at(const ref_geom *g, int d, int64_t i, int64_t f, int64_t *o)
{
    int64_t t = i + g->pad[d] - tap_of(g, d, f) * g->dilation[d];
    if (t < 0 || t % g->stride[d] != 0)
        return false;
    *o = t / g->stride[d];
    return *o < g->out[d];
}

/* y[n][k][o] = sum_{f, c} x[n][c][i(o, f)] * w[k][c][f] */
static double fprop_at(const ref_geom *g, const float *x, const float *w, int64_t n,
                       int64_t k, const int64_t o[REF_DIMS])
{
    double sum = 0;
    int64_t f[REF_DIMS], i[REF_DIMS];
    for (f[0] = 0; f[0] < g->kernel[0]; f[0]++) {
        if (!input_at(g, 0, o[0], f[0], &i[0]))
            continue;
        for (f[1] = 0; f[1] < g->kernel[1]; f[1]++) {
            if (!input_at(g, 1, o[1], f[1], &i[1]))
                continue;
            for (f[2] = 0; f[2] < g->kernel[2]; f[2]++) {
                if (!input_at(g, 2, o[2], f[2], &i[2]))
                    continue;
                for (int64_t c = 0; c < g->c; c++)
                    sum += (double)x[offset(n, c, g->c, g->in, i)] *
                           (double)w[offset(k, c, g->c, g->kernel, f)];
            }
        }
    }
    return sum;
}

/* dx[n][c][i] = sum_{f, o : i(o, f) = i, k} dy[n][k][o] * w[k][c][f] */
static double bprop_at(const ref_geom *g, const float *dy, const float *w, int64_t n,
                       int64_t c, const int64_t i[REF_DIMS])
{
    double sum = 0;
    int64_t f[REF_DIMS], o[REF_DIMS];
    for (f[0] = 0; f[0] < g->kernel[0]; f[0]++) {
        if (!output_at(g, 0, i[0], f[0], &o[0]))
            continue;
        for (f[1] = 0; f[1] < g->kernel[1]; f[1]++) {
            if (!output_at(g, 1, i[1], f[1], &o[1]))
                continue;
            for (f[2] = 0; f[2] < g->kernel[2]; f[2]++) {
                if (!output_at(g, 2, i[2], f[2], &o[2]))
                    continue;
                for (int64_t k = 0; k < g->k; k++)
                    sum += (double)dy[offset(n, k, g->k, g->out, o)] *
                           (double)w[offset(k, c, g->c, g->kernel, f)];
            }
        }
    }
    return sum;
}

/* dw[k][c][f] = sum_{o, n} dy[n][k][o] * x[n][c][i(o, f)] */
static double accgrad_at(const ref_geom *g, const float *x, const float *dy, int64_t k,
                         int64_t c, const int64_t f[REF_DIMS])
{
    double sum = 0;
    int64_t o[REF_DIMS], i[REF_DIMS];
    for (o[0] = 0; o[0] < g->out[0]; o[0]++) {
        if (!input_at(g, 0, o[0], f[0], &i[0]))
            continue;
        for (o[1] = 0; o[1] < g->out[1]; o[1]++) {
            if (!input_at(g, 1, o[1], f[1], &i[1]))
                continue;
            for (o[2] = 0; o[2] < g->out[2]; o[2]++) {
                if (!input_at(g, 2, o[2], f[2], &i[2]))
                    continue;
                for (int64_t n = 0; n < g->n; n++)
                    sum += (double)dy[offset(n, k, g->k, g->out, o)] *
                           (double)x[offset(n, c, g->c, g->in, i)];
            }
        }
    }
    return sum;
}

/* Output element (a, b, pos) of a pass, in the [A][B][spatial] view of out_shape. */
static double ref_element(const ref_geom *g, convgen_pass pass, const float *in0,
                          const float *in1, int64_t a, int64_t b, const int64_t pos[REF_DIMS])
{
    switch (pass) {
    case CONVGEN_BPROP: return bprop_at(g, in0, in1, a, b, pos);
    case CONVGEN_ACCGRAD: return accgrad_at(g, in0, in1, a, b, pos);
    case CONVGEN_FPROP: break;
    }
    return fprop_at(g, in0, in1, a, b, pos);
}

void ref_conv(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1,
              double *out)
{
    ref_geom g = ref_geom_of(p);
    int64_t na, nb, pos[REF_DIMS];
    const int64_t *size;
    out_shape(&g, pass, &na, &nb, &size);
    for (int64_t a = 0; a < na; a++)
        for (int64_t b = 0; b < nb; b++)
            for (pos[0] = 0; pos[0] < size[0]; pos[0]++)
                for (pos[1] = 0; pos[1] < size[1]; pos[1]++)
                    for (pos[2] = 0; pos[2] < size[2]; pos[2]++)
                        *out++ = ref_element(&g, pass, in0, in1, a, b, pos);
}

double ref_conv_at(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1,
                   int64_t index)
{
    ref_geom g = ref_geom_of(p);
    int64_t na, nb, pos[REF_DIMS];
    const int64_t *size;
    out_shape(&g, pass, &na, &nb, &size);
    (void)na;
    for (int d = REF_DIMS - 1; d >= 0; d--) {
        pos[d] = index % size[d];
        index /= size[d];
    }
    int64_t b = index % nb;
    int64_t a = index / nb;
    return ref_element(&g, pass, in0, in1, a, b, pos);
}

double ref_relative_error(const float *got, const double *ref, int64_t n)
{
    double diff2 = 0, ref2 = 0, got2 = 0;
    for (int64_t j = 0; j < n; j++) {
        if (!isfinite(got[j]))
            return INFINITY;
        double e = (double)got[j] - ref[j];
        diff2 += e * e;
        ref2 += ref[j] * ref[j];
        got2 += (double)got[j] * got[j];
    }
    /* Against an all-zero reference a ratio means nothing; the size of what came back is
     * still 0 exactly when the result is right. */
    if (ref2 == 0)
        return sqrt(got2);
    return sqrt(diff2 / ref2);
}

double ref_epilogue(const cg_problem *p, const float *bias, int64_t index, double v)
{
    if (p->epilogue & CG_EPILOGUE_BIAS)
        v += bias[index / cg_problem_out_pixels(p) % p->k];
    return p->epilogue & CG_EPILOGUE_RELU ? (v > 0 ? v : 0) : v;
}

void ref_apply_epilogue(const cg_problem *p, const float *bias, double *y)
{
    for (int64_t i = 0; p->epilogue && i < cg_problem_y_elems(p); ++i)
        y[i] = ref_epilogue(p, bias, i, y[i]);
}

double ref_compare(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *bias,
                   const float *got, int64_t elems, int64_t checked, uint64_t *state, double *max_abs)
{
    double diff2 = 0, ref2 = 0;
    bool sampled = checked < elems;
    for (int64_t s = 0; s < checked; ++s) {
        int64_t i = sampled ? (int64_t)(cg_next_random(state) % (uint64_t)elems) : s;
        double ref = ref_conv_at(p, pass, in0, in1, i);
        if (pass == CONVGEN_FPROP)
            ref = ref_epilogue(p, bias, i, ref);
        double d = (double)got[i] - ref;
        if (isnan(d) || fabs(d) > *max_abs)
            *max_abs = isnan(d) ? INFINITY : fabs(d);
        diff2 += d * d;
        ref2 += ref * ref;
    }
    return isnan(diff2) ? INFINITY : ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
}

uint64_t cg_next_random(uint64_t *s)
{
    /* xorshift64*: reproducible data from a seed, no library state. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

void cg_fill_random(float *v, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; ++i)
        v[i] = (float)((double)(cg_next_random(state) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

double cg_sampled_error(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *bias,
                        const float *got, int64_t samples, uint64_t seed)
{
    int64_t elems[3];
    cg_problem_operand_elems(p, pass, elems);
    uint64_t state = 0x9E3779B97F4A7C15ull ^ (seed << 1 | 1);
    double max_abs = 0;
    int64_t checked = samples == 0 || samples >= elems[2] ? elems[2] : samples;
    return ref_compare(p, pass, in0, in1, bias, got, elems[2], checked, &state, &max_abs);
}
