/* The stages of a warp FFT plan as template values: register groups, the cos and sin tables of
 * odd radices' butterflies (register and lane stages) and twiddle arguments; coefficients exact
 * where they are 1, -1, i or -i (cg_fft_coefficient, for fft_regs.c's twiddles). The base of the FFT family: the
 * warp contexts (fft_warp.c), exchanged plans (fft_exchange.c) and the register FFTs of
 * fft-fused (fft_regs.c) build on it. */
#include "fft_warp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

tmpl_value *cg_fft_coefficient(int sign, int e, int r)
{
    e %= r;
    tmpl_value *c = tmpl_map();
    const char *kind = e == 0 ? "one" : 2 * e == r ? "neg" : 4 * e == r ? (sign < 0 ? "negi" : "i")
                                    : 4 * e == 3 * r ? (sign < 0 ? "i" : "negi") : "general";
    double a = 2.0 * M_PI * e / r, re = cos(a), im = sign * sin(a);
    if (strcmp(kind, "general") != 0) /* exact: cos and sin of multiples of pi/2 are not */
        re = round(re), im = round(im);
    tmpl_set_str(c, "kind", kind);
    tmpl_set_float(c, "re", re + 0.0);
    tmpl_set_float(c, "im", im + 0.0);
    return c;
}

tmpl_value *cg_fft_odd_table(int sign, int r, bool sine)
{
    tmpl_value *rows = tmpl_list();
    for (int k = 1; 2 * k < r; ++k) {
        tmpl_value *row = tmpl_list();
        for (int d = 1; 2 * d < r; ++d) {
            double a = 2.0 * M_PI * d * k / r;
            tmpl_list_push(row, tmpl_float(sine ? sign * sin(a) : cos(a)));
        }
        tmpl_list_push(rows, row);
    }
    return rows;
}

/* An odd lane stage's constants by the lane's digit d: cos[m - 1][d] and sin[m - 1][d] = cos and
 * sign sin of 2 pi m d / r for m = 1 .. (r - 1) / 2, and twist_re[d], twist_im[d] = exp(sign 2 pi
 * i d^2 / r). */
static void lane_constants(tmpl_value *v, int sign, int r)
{
    tmpl_value *cs = tmpl_list(), *sn = tmpl_list(), *twist_re = tmpl_list(), *twist_im = tmpl_list();
    for (int m = 1; 2 * m < r; ++m) {
        tmpl_value *c_row = tmpl_list(), *s_row = tmpl_list();
        for (int d = 0; d < r; ++d) {
            double a = 2.0 * M_PI * (m * d % r) / r;
            tmpl_list_push(c_row, tmpl_float(cos(a)));
            tmpl_list_push(s_row, tmpl_float(sign * sin(a)));
        }
        tmpl_list_push(cs, c_row);
        tmpl_list_push(sn, s_row);
    }
    for (int d = 0; d < r; ++d) {
        double a = 2.0 * M_PI * (d * d % r) / r;
        tmpl_list_push(twist_re, tmpl_float(cos(a)));
        tmpl_list_push(twist_im, tmpl_float(sign * sin(a)));
    }
    tmpl_map_set(v, "cos", cs);
    tmpl_map_set(v, "sin", sn);
    tmpl_map_set(v, "twist_re", twist_re);
    tmpl_map_set(v, "twist_im", twist_im);
}

/* An exact float literal in C syntax. */
static void float_literal(double v, char *buf, size_t size)
{
    snprintf(buf, size, "%.9g", (float)v);
    if (!strpbrk(buf, ".en"))
        strncat(buf, ".0", size - strlen(buf) - 1);
    strncat(buf, "f", size - strlen(buf) - 1);
}

void cg_fft_twiddle_argument(const fft_plan *p, const fft_stage *st, int sign, char *buf, size_t size)
{
    int block = st->radix * st->span; /* N of this stage's sub-transform */
    if (st->twiddle == FFT_TWIDDLE_TABLE)
        snprintf(buf, size, "%du", p->n / block);
    else
        float_literal(sign * 2.0 / block, buf, size);
}

/* Register groups of a register stage: the registers of one butterfly and its j * lanes. */
static tmpl_value *register_groups(const fft_plan *p, const fft_stage *st)
{
    tmpl_value *groups = tmpl_list();
    int span_regs = st->span / p->lanes, block = st->radix * span_regs;
    for (int base = 0; base < p->regs; base += block)
        for (int j = 0; j < span_regs; ++j) {
            tmpl_value *g = tmpl_map(), *regs = tmpl_list();
            for (int d = 0; d < st->radix; ++d)
                tmpl_list_push(regs, tmpl_int(base + d * span_regs + j));
            tmpl_map_set(g, "regs", regs);
            tmpl_set_int(g, "jl", (int64_t)j * p->lanes);
            tmpl_list_push(groups, g);
        }
    return groups;
}

tmpl_value *cg_fft_stage_value(const fft_plan *p, int s, int sign)
{
    const fft_stage *st = &p->stages[s];
    tmpl_value *v = tmpl_map();
    char arg[32];
    tmpl_set_int(v, "index", s);
    tmpl_set_int(v, "radix", st->radix);
    tmpl_set_int(v, "span", st->span);
    tmpl_set_bool(v, "twiddled", st->twiddle != FFT_TWIDDLE_NONE);
    cg_fft_twiddle_argument(p, st, sign, arg, sizeof arg);
    tmpl_set_str(v, "tw_arg", arg);
    if (st->place == FFT_IN_REGISTERS) {
        tmpl_set_str(v, "place", "registers");
        if (!p->phase_count) /* exchanged plans' groups come from fft_exchange.c */
            tmpl_map_set(v, "groups", register_groups(p, st));
        if (st->radix % 2) { /* small_dft's symmetric form */
            tmpl_map_set(v, "cos", cg_fft_odd_table(sign, st->radix, false));
            tmpl_map_set(v, "sin", cg_fft_odd_table(sign, st->radix, true));
        }
    } else {
        tmpl_set_str(v, "place", "lanes");
        if (st->radix % 2)
            lane_constants(v, sign, st->radix);
    }
    return v;
}
