/* The context of templates/fft1d.cu from an fft_plan: the stages in execution order with
 * their register groups, butterfly coefficients and twiddle arguments, the lane digits and
 * their magic divisions, and the load and store indices of the spectrum's order. */
#include "fft_kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "header.h"
#include "values.h"
#include "templates.h"
#include "tmpl.h"
#include "util.h"

enum { WARPS = 4 };

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

/* coef[d][k] = exp(sign 2 pi i d k / r): the butterfly of a register stage. */
static tmpl_value *butterfly(int sign, int r)
{
    tmpl_value *rows = tmpl_list();
    for (int d = 0; d < r; ++d) {
        tmpl_value *row = tmpl_list();
        for (int k = 0; k < r; ++k)
            tmpl_list_push(row, cg_fft_coefficient(sign, d * k, r));
        tmpl_list_push(rows, row);
    }
    return rows;
}

/* lane_coef[m][d]: the coefficient of the value m digits further on, for a lane of digit d,
 * in the output d of a lane butterfly: exp(sign 2 pi i ((d + m) mod r) d / r). */
static tmpl_value *lane_butterfly(int sign, int r)
{
    tmpl_value *rows = tmpl_list();
    for (int m = 0; m < r; ++m) {
        tmpl_value *row = tmpl_list();
        for (int d = 0; d < r; ++d)
            tmpl_list_push(row, cg_fft_coefficient(sign, (d + m) % r * d, r));
        tmpl_list_push(rows, row);
    }
    return rows;
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
        tmpl_map_set(v, "coef", butterfly(sign, st->radix));
    } else {
        tmpl_set_str(v, "place", "lanes");
        tmpl_map_set(v, "lane_coef", lane_butterfly(sign, st->radix));
    }
    return v;
}

/* Decimation in frequency runs the stages first to last, decimation in time last to first. */
static tmpl_value *stages_value(const fft_plan *p, int sign)
{
    tmpl_value *list = tmpl_list();
    for (int i = 0; i < p->stage_count; ++i)
        tmpl_list_push(list, cg_fft_stage_value(p, sign < 0 ? i : p->stage_count - 1 - i, sign));
    return list;
}

static tmpl_value *lane_stages_value(const fft_plan *p)
{
    tmpl_value *list = tmpl_list();
    for (int s = 0; s < p->stage_count; ++s) {
        const fft_stage *st = &p->stages[s];
        if (st->place != FFT_ACROSS_LANES)
            continue;
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "index", s);
        tmpl_set_int(v, "span", st->span);
        tmpl_set_int(v, "radix", st->radix);
        tmpl_map_set(v, "span_div", cg_value_magic((uint32_t)st->span, (uint32_t)p->lanes - 1));
        tmpl_map_set(v, "radix_div", cg_value_magic((uint32_t)st->radix, (uint32_t)(p->lanes - 1) / st->span));
        tmpl_list_push(list, v);
    }
    return list;
}

/* Where register r of lane l is in the spectrum's natural order: position p = r*lanes + l has
 * digits e_s (weights span_s), and holds X[k] for k = sum e_s * (r_0 ... r_{s-1}). */
static void natural_index(const fft_plan *p, int r, char *buf, size_t size)
{
    int position = r * p->lanes, k = 0, weight = 1;
    cg_buf b = {0};
    for (int s = 0; s < p->stage_count; weight *= p->stages[s++].radix) {
        const fft_stage *st = &p->stages[s];
        if (st->place == FFT_IN_REGISTERS) /* spans of register stages are multiples of lanes */
            k += position / st->span % st->radix * weight;
        else if (weight == 1)
            cg_buf_printf(&b, " + d%d", s);
        else
            cg_buf_printf(&b, " + d%d * %du", s, weight);
    }
    snprintf(buf, size, "%du%s", k, b.data ? b.data : "");
    cg_buf_free(&b);
}

static tmpl_value *indices(const fft_plan *p, bool natural)
{
    tmpl_value *list = tmpl_list();
    char at[256];
    for (int r = 0; r < p->regs; ++r) {
        if (natural)
            natural_index(p, r, at, sizeof at);
        else
            snprintf(at, sizeof at, "%du + l", r * p->lanes);
        tmpl_list_push(list, tmpl_str(at));
    }
    return list;
}

static tmpl_value *twiddle_table(const fft_plan *p)
{
    tmpl_value *list = tmpl_list();
    for (int e = 0; e < p->n; ++e) {
        tmpl_value *t = tmpl_map();
        double a = 2.0 * M_PI * e / p->n;
        tmpl_set_float(t, "re", cos(a));
        tmpl_set_float(t, "im", -sin(a));
        tmpl_list_push(list, t);
    }
    return list;
}

static tmpl_value *header_lines(const cg_fft_problem *pr, const fft_plan *p, const cg_kernel *k, bool exchange)
{
    char what[256], plan[160];
    cg_fft_problem_describe(pr, what, sizeof what);
    fft_plan_describe(p, plan, sizeof plan);
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: batched FFT, %s", CG_GENERATOR_VERSION, what);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "plan: radices %s, %s", plan, pr->sign < 0 ? "decimation in frequency" : "decimation in time");
    cg_value_line(h, "signal: %s, strides {%lld, %lld} (batch, channel)",
                  pr->sign < 0 ? "input, read with clipped loads (the rest of the signal is zero)"
                               : "output, written with clipped stores",
                  (long long)pr->real_stride[0], (long long)pr->real_stride[1]);
    cg_value_line(h, "spectrum: %s order%s, strides {%lld, %lld}", pr->natural ? "natural" : "digit-reversed",
                  exchange ? ", through shared memory so global accesses stay coalesced" : "",
                  (long long)pr->spectrum_stride[0], (long long)pr->spectrum_stride[1]);
    cg_value_line(h, "twiddles: %s", p->twiddle_reason);
    cg_value_line(h, "mapping: the most lanes dividing n that fit a warp and keep at least %d registers per lane "
                  "(fewer lane stages: fewer shuffles)",
                  fft_min_registers(p->n));
    if (pr->scale != 1.0f)
        cg_value_line(h, "scale: outputs multiplied by %.9g", (double)pr->scale);
    cg_value_line(h, "FLOPs: %.6g (5 n log2 n per transform)", 5.0 * pr->n * log2(pr->n) * (double)pr->count);
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1): %d warps, %d transform%s per warp", k->grid[0],
                  k->block[0], WARPS, p->per_warp, p->per_warp > 1 ? "s" : "");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/fft1d.cu or generator/fft_kernel.c instead.");
    return h;
}

void cg_fft_warp_context(tmpl_value *ctx, const fft_plan *p, int sign)
{
    tmpl_set_int(ctx, "n", p->n);
    tmpl_set_int(ctx, "sign", sign);
    tmpl_set_int(ctx, "lanes", p->lanes);
    tmpl_set_int(ctx, "regs", p->regs);
    tmpl_set_int(ctx, "per_warp", p->per_warp);
    tmpl_set_bool(ctx, "idle_lanes", p->per_warp * p->lanes < FFT_WARP);
    tmpl_map_set(ctx, "lane_div", cg_value_magic((uint32_t)p->lanes, FFT_WARP - 1));
    tmpl_set_str(ctx, "twiddle", p->lane_twiddles && p->stages[0].twiddle == FFT_TWIDDLE_TABLE ? "table" : "sincos");
    tmpl_set_str(ctx, "twiddle_reason", p->twiddle_reason);
    if (p->stages[0].twiddle == FFT_TWIDDLE_TABLE)
        tmpl_map_set(ctx, "table", twiddle_table(p));
    tmpl_map_set(ctx, "stages", stages_value(p, sign));
    tmpl_map_set(ctx, "lane_stages", lane_stages_value(p));
    if (p->phase_count)
        cg_fft_exchange_context(ctx, p, sign);
    else
        tmpl_set_bool(ctx, "exchanged", false);
}

tmpl_value *cg_fft_positions(const fft_plan *p, bool natural)
{
    return p->phase_count ? cg_fft_exchange_positions(p) : indices(p, natural); /* exchanged: always natural */
}

/* Register r's elements r * lanes + l against a window at `at` of `size`: outside it for every
 * lane, inside it for every lane, or partly. */
enum register_kind { REGISTER_ZERO, REGISTER_FULL, REGISTER_PARTIAL };
static const char *const register_kind_names[] = {"zero", "full", "partial"};

static enum register_kind register_kind(const fft_plan *pl, int r, int at, int size)
{
    int c = r * pl->lanes - at, last = c + pl->lanes - 1;
    return last < 0 || c >= size ? REGISTER_ZERO : c >= 0 && last < size ? REGISTER_FULL : REGISTER_PARTIAL;
}

int cg_fft_full_registers(const fft_plan *pl, int at, int size)
{
    int full = 0;
    for (int r = 0; r < pl->regs; ++r)
        full += register_kind(pl, r, at, size) == REGISTER_FULL;
    return full;
}

tmpl_value *cg_fft_window_registers(const fft_plan *pl, int at, int size)
{
    tmpl_value *list = tmpl_list();
    for (int r = 0; r < pl->regs; ++r) {
        int c = r * pl->lanes - at;
        const char *kind = register_kind_names[register_kind(pl, r, at, size)];
        char e[48];
        if (c == 0)
            snprintf(e, sizeof e, "l");
        else
            snprintf(e, sizeof e, "l %c %du", c > 0 ? '+' : '-', c > 0 ? c : -c);
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "r", r);
        tmpl_set_str(v, "kind", kind);
        tmpl_set_str(v, "e", e);
        tmpl_list_push(list, v);
    }
    return list;
}

void cg_fft_side_context(tmpl_value *ctx, const cg_fft_problem *p, int64_t max_transform, int64_t workspace_elements)
{
    tmpl_set_int(ctx, "count", p->count);
    tmpl_set_int(ctx, "channels", p->channels);
    tmpl_map_set(ctx, "chan_div", cg_value_magic((uint32_t)p->channels, max_transform));
    int64_t largest = p->real_elements > p->spectrum_elements ? p->real_elements : p->spectrum_elements;
    if (workspace_elements > largest)
        largest = workspace_elements;
    tmpl_set_str(ctx, "idx", largest < (int64_t)UINT32_MAX - 4096 ? "unsigned" : "unsigned long long");
    const int64_t *sides[2] = {p->real_stride, p->spectrum_stride};
    for (int i = 0; i < 2; ++i) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "batch", sides[i][0]);
        tmpl_set_int(v, "channel", sides[i][1]);
        tmpl_map_set(ctx, i ? "ss" : "rs", v);
    }
    tmpl_set_int(ctx, "w", p->w);
    tmpl_set_int(ctx, "wx0", p->ox);
    tmpl_set_bool(ctx, "scaled_output", p->scale != 1.0f);
    tmpl_set_float(ctx, "scale", p->scale);
}

static tmpl_value *context(const cg_fft_problem *pr, const fft_plan *p, const cg_kernel *k)
{
    tmpl_value *ctx = tmpl_map();
    /* Natural order scatters each lane's spectrum values: X[k] of neighbouring lanes lands
     * 8 * regs bytes apart. From 8 registers (64 B) each store touches a cache line per two
     * lanes; measured on the H100 at 128 MiB, n = 256 ran at 64% of copy bandwidth with direct
     * stores and 93% through shared memory (n = 243: 61% -> 80%), while the exchange cost
     * 5-11 points at n = 12, 49 and 100 and nothing elsewhere. */
    bool exchange = pr->natural && p->regs >= 8;
    tmpl_map_set(ctx, "header", header_lines(pr, p, k, exchange));
    tmpl_set_str(ctx, "kernel_name", k->name);
    cg_fft_warp_context(ctx, p, pr->sign);
    tmpl_set_int(ctx, "warps", WARPS);
    tmpl_set_int(ctx, "threads", WARPS * FFT_WARP);
    cg_fft_side_context(ctx, pr, pr->count + (int64_t)WARPS * p->per_warp + FFT_WARP, 0);
    tmpl_map_set(ctx, "xregs", cg_fft_window_registers(p, pr->ox, pr->w));
    /* The spectrum side is the forward transform's output and the inverse's input. */
    tmpl_map_set(ctx, "loads", indices(p, pr->natural));
    tmpl_map_set(ctx, "stores", indices(p, pr->natural));
    tmpl_set_bool(ctx, "exchange", exchange);
    int size = p->per_warp * p->n;
    tmpl_set_int(ctx, "exchange_size", size + size / 16 + 1);
    tmpl_set_bool(ctx, "packed_spectrum",
                  pr->spectrum_stride[1] == pr->n && pr->spectrum_stride[0] == pr->n * pr->channels);
    tmpl_map_set(ctx, "n_div", cg_value_magic((uint32_t)p->n, size + FFT_WARP));
    return ctx;
}

convgen_status cg_fft_c2c_kernel(const cg_fft_problem *pr, cg_kernel *out)
{
    fft_plan p;
    char err[128];
    memset(out, 0, sizeof *out);
    if (pr->type != CONVGEN_FFT_C2C || pr->rank != 1)
        return cg_fail(CONVGEN_ERROR_INTERNAL, "the 1-D C2C kernel got a rank %d, type %d problem", pr->rank,
                       (int)pr->type);
    if (!fft_plan_make(pr->n, pr->natural, &p, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s", err);
    int64_t per_block = (int64_t)WARPS * p.per_warp, blocks = (pr->count + per_block - 1) / per_block;
    snprintf(out->name, sizeof out->name, "convgen_fft%d_%s", pr->n, pr->sign < 0 ? "forward" : "inverse");
    out->grid[0] = (unsigned)blocks;
    out->grid[1] = out->grid[2] = 1;
    out->block[0] = WARPS * FFT_WARP;
    out->block[1] = out->block[2] = 1;
    tmpl_value *ctx = context(pr, &p, out);
    convgen_status s = tmpl_ok(ctx) ? cg_render_template("fft1d.cu", ctx, &out->source)
                                    : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building the FFT context");
    tmpl_unref(ctx);
    return s;
}

convgen_status cg_generate_fft(const cg_fft_problem *p, const cg_target *target, cg_generated *out)
{
    memset(out, 0, sizeof *out);
    convgen_status s;
    if (p->type == CONVGEN_FFT_C2C && p->rank == 1) {
        s = cg_fft_c2c_kernel(p, &out->kernels[0]);
        out->kernel_count = s == CONVGEN_SUCCESS;
    } else {
        s = cg_fft_real_kernels(p, target, out);
    }
    if (s != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

convgen_status cg_generate_fft_plan(const cg_fft_problem *p, const cg_target *target, cg_generated *out)
{
    convgen_status s = cg_generate_fft(p, target, out);
    if (s == CONVGEN_SUCCESS && (s = cg_stamp_fft_headers(out, p)) != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

/* The batched-FFT kind's one planner, in the registry of kinds (generate.c). */
static convgen_status generate_fft_spec(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    return cg_generate_fft_plan(spec->problem.problem, target, out);
}

const cg_kind_planner cg_fft_kind_planner = {&cg_fft_kind, generate_fft_spec};
