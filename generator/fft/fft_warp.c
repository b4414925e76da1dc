/* The part of a template context every warp FFT kernel shares (templates/fft/fft_warp.cuh): a
 * plan's stages in execution order, its lane digits and their magic divisions, the twiddle
 * table, the load and store indices of the spectrum's order, the registers a window covers,
 * and the problem's batch, channel and stride values. */
#include "fft_warp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "util.h"
#include "values.h"

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

tmpl_value *cg_fft_register_indices(const fft_plan *p, bool natural)
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
    return p->phase_count ? cg_fft_exchange_positions(p, "kl") : cg_fft_register_indices(p, natural); /* exchanged: always natural */
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
    tmpl_set_int(ctx, "planes", p->planes); /* a rank 3 problem's plane stage: transform tr is plane tr % planes */
    tmpl_map_set(ctx, "plane_div", cg_value_magic((uint32_t)p->planes, max_transform));
    int64_t largest = p->real_elements > p->spectrum_elements ? p->real_elements : p->spectrum_elements;
    if (workspace_elements > largest)
        largest = workspace_elements;
    tmpl_set_str(ctx, "idx", largest < (int64_t)UINT32_MAX - 4096 ? "unsigned" : "unsigned long long");
    const int64_t *sides[2] = {p->real_stride, p->spectrum_stride};
    for (int i = 0; i < 2; ++i) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "batch", sides[i][0]);
        tmpl_set_int(v, "channel", sides[i][1]);
        tmpl_set_int(v, "plane", p->plane_stride[i]);
        tmpl_map_set(ctx, i ? "ss" : "rs", v);
    }
    tmpl_set_int(ctx, "w", p->w);
    tmpl_set_int(ctx, "wx0", p->ox);
    tmpl_set_bool(ctx, "scaled_output", p->scale != 1.0f);
    tmpl_set_float(ctx, "scale", p->scale);
    /* fprop's bias and ReLU, which only a C2R into y applies (fft_problem.h) */
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, p->type == CONVGEN_FFT_C2R));
}

tmpl_value *cg_fft_header_open(const cg_fft_problem *p)
{
    char what[256];
    cg_fft_problem_describe(p, what, sizeof what);
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: batched FFT, %s", CG_GENERATOR_VERSION, what);
    cg_value_line(h, "%s", "");
    return h;
}
