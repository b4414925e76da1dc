#include "winograd_program.h"

#include <stdio.h>
#include <string.h>

static bool is_zero(cg_q c) { return c.num == 0; }
static bool is_unit(cg_q c) { return c.den == 1 && (c.num == 1 || c.num == -1); }

/* Operations of one dot product: an addition per term past the first, a multiplication per
 * coefficient other than +-1. */
static int cost(const cg_q *row, int cols)
{
    int terms = 0, multiplies = 0;
    for (int c = 0; c < cols; ++c)
        if (!is_zero(row[c]))
            ++terms, multiplies += !is_unit(row[c]);
    return (terms > 1 ? terms - 1 : 0) + multiplies;
}

static int nonzeros(const cg_q *row, int cols)
{
    int n = 0;
    for (int c = 0; c < cols; ++c)
        n += !is_zero(row[c]);
    return n;
}

static int new_stmt(wino_program *p)
{
    wino_stmt *s = &p->stmts[p->stmt_count++];
    memset(s, 0, sizeof *s);
    s->target = p->temps++;
    return p->stmt_count - 1;
}

static void add_term(wino_program *p, wino_stmt *s, int operand, cg_q coef)
{
    s->terms[s->term_count++] = (wino_term){operand, coef};
    p->adds += s->term_count > 1;
    p->multiplies += !is_unit(coef);
}

/* t = row . x; returns t's index. */
static int emit_dot(wino_program *p, const cg_q *row, int cols)
{
    wino_stmt *s = &p->stmts[new_stmt(p)];
    for (int c = 0; c < cols; ++c)
        if (!is_zero(row[c]))
            add_term(p, s, c, row[c]);
    return s->target;
}

/* t = a + sign b (temporaries); returns t's index. */
static int emit_combination(wino_program *p, int a, int b, int sign)
{
    wino_stmt *s = &p->stmts[new_stmt(p)];
    add_term(p, s, p->inputs + a, cg_q_int(1));
    add_term(p, s, p->inputs + b, cg_q_int(sign));
    return s->target;
}

/* s = (u + v) / 2, d = (u - v) / 2 and what sharing them saves (<= 0: nothing). */
static int pair_saving(const cg_q *u, const cg_q *v, int cols, cg_q *s, cg_q *d)
{
    cg_q half = cg_q_make(1, 2);
    for (int c = 0; c < cols; ++c) {
        s[c] = cg_q_mul(cg_q_add(u[c], v[c]), half);
        d[c] = cg_q_mul(cg_q_sub(u[c], v[c]), half);
    }
    if (!nonzeros(s, cols) || !nonzeros(d, cols)) /* v = +-u: nothing to split */
        return 0;
    return cost(u, cols) + cost(v, cols) - (cost(s, cols) + cost(d, cols) + 2);
}

void wino_program_build(const cg_q m[][WINO_MAX_ALPHA], int rows, int cols, wino_program *p)
{
    memset(p, 0, sizeof *p);
    p->inputs = cols, p->outputs = rows;
    bool done[WINO_MAX_ALPHA] = {false};
    for (;;) { /* greedily, the pair of rows that saves most */
        int best = 0, bu = -1, bv = -1;
        cg_q s[WINO_MAX_ALPHA], d[WINO_MAX_ALPHA];
        for (int u = 0; u < rows; ++u)
            for (int v = u + 1; v < rows && !done[u]; ++v) {
                int saving = done[v] ? 0 : pair_saving(m[u], m[v], cols, s, d);
                if (saving > best)
                    best = saving, bu = u, bv = v;
            }
        if (bu < 0)
            break;
        pair_saving(m[bu], m[bv], cols, s, d);
        int ts = emit_dot(p, s, cols), td = emit_dot(p, d, cols);
        p->output_temp[bu] = emit_combination(p, ts, td, 1);
        p->output_temp[bv] = emit_combination(p, ts, td, -1);
        done[bu] = done[bv] = true;
    }
    for (int u = 0; u < rows; ++u)
        if (!done[u])
            p->output_temp[u] = emit_dot(p, m[u], cols);
}

bool wino_program_run(const wino_program *p, const cg_q *x, cg_q *y)
{
    cg_q t[WINO_MAX_STMTS];
    for (int i = 0; i < p->stmt_count; ++i) {
        const wino_stmt *s = &p->stmts[i];
        cg_q sum = cg_q_int(0);
        for (int k = 0; k < s->term_count; ++k) {
            int o = s->terms[k].operand;
            sum = cg_q_add(sum, cg_q_mul(s->terms[k].coef, o < p->inputs ? x[o] : t[o - p->inputs]));
        }
        t[s->target] = sum;
    }
    bool ok = true;
    for (int i = 0; i < p->outputs; ++i)
        ok &= cg_q_valid(y[i] = t[p->output_temp[i]]);
    return ok;
}

static void operand_name(const wino_program *p, int operand, const char *input, const char *temp_prefix, char *buf,
                         size_t size)
{
    if (operand < p->inputs)
        snprintf(buf, size, "%s[%d]", input, operand);
    else
        snprintf(buf, size, "%s%d", temp_prefix, operand - p->inputs);
}

tmpl_value *wino_coef_value(cg_q c)
{
    tmpl_value *t = tmpl_map();
    tmpl_set_bool(t, "negative", c.num < 0);
    tmpl_set_bool(t, "unit", is_unit(c));
    tmpl_set_float(t, "magnitude", cg_q_double((cg_q){c.num < 0 ? -c.num : c.num, c.den}));
    return t;
}

tmpl_value *wino_program_value(const wino_program *p, const char *input, const char *temp_prefix)
{
    tmpl_value *v = tmpl_map(), *stmts = tmpl_list(), *outputs = tmpl_list();
    char name[64];
    for (int i = 0; i < p->stmt_count; ++i) {
        const wino_stmt *s = &p->stmts[i];
        tmpl_value *st = tmpl_map(), *terms = tmpl_list();
        operand_name(p, p->inputs + s->target, input, temp_prefix, name, sizeof name);
        tmpl_set_str(st, "name", name);
        for (int k = 0; k < s->term_count; ++k) {
            tmpl_value *t = wino_coef_value(s->terms[k].coef);
            operand_name(p, s->terms[k].operand, input, temp_prefix, name, sizeof name);
            tmpl_set_str(t, "operand", name);
            tmpl_list_push(terms, t);
        }
        tmpl_map_set(st, "terms", terms);
        tmpl_list_push(stmts, st);
    }
    for (int i = 0; i < p->outputs; ++i) {
        operand_name(p, p->inputs + p->output_temp[i], input, temp_prefix, name, sizeof name);
        tmpl_list_push(outputs, tmpl_str(name));
    }
    tmpl_map_set(v, "stmts", stmts);
    tmpl_map_set(v, "outputs", outputs);
    return v;
}
