/* The template context of an exchanged plan (fft_plan.h): all stages in registers, in phases,
 * the values passing through the warp's shared-memory scratch between phases. Every address
 * and twiddle exponent is a lane part, computed once per kernel, plus a constant: the digits of
 * a power of two are bit fields, so a position is the sum (the OR) of its lane digits and its
 * register digits, and the scratch's padding q + (q >> shift) splits the same way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fft_warp.h"
#include "util.h"

static int log2_int(int v)
{
    int l = 0;
    while ((1 << l) < v)
        ++l;
    return l;
}

/* sum over the stages s in `which` (lane digits of `phase`) of lane l's digit s times weight[s],
 * as an unsigned C expression in l. */
static char *lane_sum(const fft_plan *p, int phase, unsigned which, const int *weight)
{
    unsigned lane_digits = p->phases[phase].lane_digits;
    cg_buf b = {0};
    int shift = 0;
    for (int s = p->stage_count - 1; s >= 0; --s) { /* the lowest span at the low end of l */
        if (!(lane_digits >> s & 1u))
            continue;
        int bits = log2_int(p->stages[s].radix);
        if (which >> s & 1u)
            cg_buf_printf(&b, "%s((l >> %du) & %du) * %du", b.data ? " + " : "", shift, p->stages[s].radix - 1,
                          weight[s]);
        shift += bits;
    }
    if (!b.data)
        cg_buf_puts(&b, "0u");
    return cg_buf_take(&b);
}

/* The register part of phase f's position of register r (lane digits zero). */
static int register_position(const fft_plan *p, int f, int r) { return fft_plan_position(p, f, 0, r); }

static int phase_of(const fft_plan *p, int s)
{
    for (int f = 0; f < p->phase_count; ++f)
        if (s >= p->phases[f].first && s < p->phases[f].first + p->phases[f].count)
            return f;
    return -1;
}

static void add_lane_var(tmpl_value *list, const char *name, char *expr, const char *why)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_str(v, "name", name);
    tmpl_set_str(v, "expr", expr);
    tmpl_set_str(v, "why", why);
    tmpl_list_push(list, v);
    free(expr);
}

/* Lane parts: xq<f> (the lane's position digits in phase f) and xb<f> (its padded scratch
 * address, with the lane group's transform), tj<s> (twiddle exponent of stage s), kl (the last
 * phase's natural index). */
static tmpl_value *lane_vars(const fft_plan *p)
{
    tmpl_value *list = tmpl_list();
    int span[FFT_MAX_STAGES], natural_weight[FFT_MAX_STAGES];
    for (int s = 0, w = 1; s < p->stage_count; w *= p->stages[s++].radix)
        span[s] = p->stages[s].span, natural_weight[s] = w;
    char name[16], expr[160];
    for (int f = 0; f < p->phase_count; ++f) {
        snprintf(name, sizeof name, "xq%d", f);
        add_lane_var(list, name, lane_sum(p, f, p->phases[f].lane_digits, span), "phase's lane digits, as a position");
        snprintf(name, sizeof name, "xb%d", f);
        if (p->pad_shift)
            snprintf(expr, sizeof expr, "t * %du + xq%d + (xq%d >> %du)", p->xstride, f, f, p->pad_shift);
        else
            snprintf(expr, sizeof expr, "t * %du + xq%d", p->xstride, f);
        add_lane_var(list, name, cg_strdup(expr), "its scratch address");
    }
    for (int s = 0; s < p->stage_count; ++s) {
        if (p->stages[s].twiddle == FFT_TWIDDLE_NONE)
            continue;
        int f = phase_of(p, s);
        unsigned below = ((1u << p->stage_count) - 1) & ~((1u << (s + 1)) - 1); /* stages after s: lower spans */
        snprintf(name, sizeof name, "tj%d", s);
        add_lane_var(list, name, lane_sum(p, f, p->phases[f].lane_digits & below, span),
                     "the lane's part of the twiddle exponents of this stage");
    }
    int last = p->phase_count - 1;
    add_lane_var(list, "kl", lane_sum(p, last, p->phases[last].lane_digits, natural_weight),
                 "the lane's part of the spectrum's natural index");
    return list;
}

/* The hoisted factors' names so far, each once: at most one per register group and stage. */
typedef struct factor_names {
    int count;
    char names[FFT_MAX_STAGES * FFT_MAX_N / 2][24];
} factor_names;

static bool first_time(factor_names *seen, const char *name)
{
    for (int i = 0; i < seen->count; ++i)
        if (strcmp(seen->names[i], name) == 0)
            return false;
    if (seen->count == (int)(sizeof seen->names / sizeof seen->names[0]))
        abort(); /* cannot happen: a plan has at most FFT_MAX_STAGES stages of at most n / 2 groups */
    snprintf(seen->names[seen->count++], sizeof seen->names[0], "%s", name);
    return true;
}

/* One stage's register groups: the registers that differ in digit s only, and their twiddle's
 * exponent (the position's digits below s: the lane's tj<s> and the registers' constant). */
static tmpl_value *stage_step(const fft_plan *p, int s, int sign, tmpl_value *hoisted, factor_names *seen)
{
    const fft_stage *st = &p->stages[s];
    tmpl_value *stage = cg_fft_stage_value(p, s, sign);
    int f = phase_of(p, s), stride = fft_plan_register_stride(p, f, s);
    tmpl_value *groups = tmpl_list();
    for (int r = 0; r < p->regs; ++r) {
        if (register_position(p, f, r) / st->span % st->radix != 0)
            continue;
        tmpl_value *g = tmpl_map(), *regs = tmpl_list();
        for (int d = 0; d < st->radix; ++d)
            tmpl_list_push(regs, tmpl_int(r + d * stride));
        tmpl_map_set(g, "regs", regs);
        tmpl_set_str(g, "tw", "");
        tmpl_set_str(g, "arg", "");
        if (st->twiddle != FFT_TWIDDLE_NONE) {
            int c = register_position(p, f, r) % st->span;
            char name[24], arg[48];
            snprintf(name, sizeof name, "tw%d_%d", s, c);
            snprintf(arg, sizeof arg, "tj%d + %du", s, c);
            tmpl_set_str(g, "tw", name);
            tmpl_set_str(g, "arg", arg);
            if (first_time(seen, name)) {
                char tw_arg[32];
                cg_fft_twiddle_argument(p, st, sign, tw_arg, sizeof tw_arg);
                tmpl_value *h = tmpl_map();
                tmpl_set_str(h, "name", name);
                tmpl_set_str(h, "arg", arg);
                tmpl_set_int(h, "stage", s);
                tmpl_set_str(h, "tw_arg", tw_arg);
                tmpl_list_push(hoisted, h);
            }
        }
        tmpl_list_push(groups, g);
    }
    tmpl_set_str(stage, "kind", "stage");
    tmpl_map_set(stage, "groups", groups);
    return stage;
}

static tmpl_value *exchange_step(const fft_plan *p, int from, int to)
{
    tmpl_value *v = tmpl_map(), *writes = tmpl_list(), *reads = tmpl_list();
    tmpl_set_str(v, "kind", "exchange");
    tmpl_set_int(v, "from", from);
    tmpl_set_int(v, "to", to);
    for (int r = 0; r < p->regs; ++r) {
        tmpl_list_push(writes, tmpl_int(fft_plan_scratch_at(p, register_position(p, from, r))));
        tmpl_list_push(reads, tmpl_int(fft_plan_scratch_at(p, register_position(p, to, r))));
    }
    tmpl_map_set(v, "writes", writes);
    tmpl_map_set(v, "reads", reads);
    return v;
}

/* Forward (decimation in frequency): the phases first to last; inverse (in time): last to first,
 * each phase's stages in reverse. */
void cg_fft_exchange_context(tmpl_value *ctx, const fft_plan *p, int sign)
{
    tmpl_value *steps = tmpl_list(), *hoisted = tmpl_list();
    factor_names seen = {0};
    int count = p->phase_count;
    for (int i = 0; i < count; ++i) {
        int f = sign < 0 ? i : count - 1 - i;
        const fft_phase *ph = &p->phases[f];
        for (int j = 0; j < ph->count; ++j) {
            int s = sign < 0 ? ph->first + j : ph->first + ph->count - 1 - j;
            tmpl_list_push(steps, stage_step(p, s, sign, hoisted, &seen));
        }
        if (i + 1 < count)
            tmpl_list_push(steps, exchange_step(p, f, sign < 0 ? f + 1 : f - 1));
    }
    tmpl_set_bool(ctx, "exchanged", true);
    tmpl_map_set(ctx, "steps", steps);
    tmpl_map_set(ctx, "hoisted", hoisted);
    tmpl_map_set(ctx, "lane_vars", lane_vars(p));
    tmpl_set_int(ctx, "xstride", p->xstride);
    tmpl_set_int(ctx, "pad_shift", p->pad_shift);
}

tmpl_value *cg_fft_exchange_positions(const fft_plan *p, const char *lane_part)
{
    tmpl_value *list = tmpl_list();
    int last = p->phase_count - 1;
    for (int r = 0; r < p->regs; ++r) {
        int q = register_position(p, last, r), k = 0;
        for (int s = 0, w = 1; s < p->stage_count; w *= p->stages[s++].radix)
            k += q / p->stages[s].span % p->stages[s].radix * w;
        char at[48];
        snprintf(at, sizeof at, "%s + %du", lane_part, k);
        tmpl_list_push(list, tmpl_str(at));
    }
    return list;
}
