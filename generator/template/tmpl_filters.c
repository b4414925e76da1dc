/* Filters (x|name(args)) and the globals range, len, min, max. Filters that format numbers
 * for CUDA are exact: f32 and f64 print the shortest decimal that reads back as the same
 * bits, so a constant computed by the generator reaches the kernel unchanged. */
#include "tmpl_internal.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef tmpl_value *(*tmpl_fn)(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs);

typedef struct tmpl_builtin {
    const char *name;
    tmpl_fn fn;
    int min, max; /* arguments besides x */
} tmpl_builtin;

static bool tmpl_is_num(const tmpl_value *v) { return v->kind == TMPL_INT || v->kind == TMPL_FLOAT; }
static double tmpl_num(const tmpl_value *v) { return v->kind == TMPL_INT ? (double)v->u.i : v->u.f; }

static tmpl_value *tmpl_made(tmpl_state *st, const tmpl_node *n, tmpl_value *v)
{
    return v ? v : tmpl_fail_value(st, n, "out of memory");
}

static tmpl_value *tmpl_wrong_type(tmpl_state *st, const tmpl_node *n, const char *want, const tmpl_value *x)
{
    const char *name = n->kind == E_CALL ? n->kids[0]->str : n->str;
    return tmpl_fail_value(st, n, "'%s' expects %s, got %s", name, want, tmpl_kind_name(x->kind));
}

/* ---- number formatting ---- */

/* Makes %g's shortest digits read as a floating literal: "1e+02" becomes "100.0" (%g picks
 * the exponent form whenever the exponent reaches the digit count; below 1e7 positional reads
 * better and is the same decimal), and bare integers get ".0". */
static void tmpl_make_float_literal(char *buf, size_t size)
{
    char *e = strchr(buf, 'e');
    if (e && e[1] == '+' && atoi(e + 2) < 7 && size >= 24) {
        int exp = atoi(e + 2), digits = 0;
        char out[24], *o = out;
        for (const char *p = buf; p < e; ++p) {
            if (*p >= '0' && *p <= '9')
                digits++;
            if (*p != '.')
                *o++ = *p;
        }
        for (; digits <= exp; ++digits)
            *o++ = '0';
        *o = '\0';
        if (digits == exp + 1) /* no digits after the point: the value is an integer */
            strcpy(buf, out);
    }
    if (!strpbrk(buf, ".e") && strlen(buf) + 3 <= size)
        strcat(buf, ".0");
}

bool tmpl_format_f32(float f, char *buf, size_t size)
{
    if (!isfinite(f))
        return false;
    for (int prec = 1; prec <= 9; ++prec) { /* 9 digits always round-trip a float */
        snprintf(buf, size, "%.*g", prec, (double)f);
        float back = strtof(buf, NULL);
        if (memcmp(&back, &f, sizeof f) == 0)
            break;
    }
    tmpl_make_float_literal(buf, size);
    return true;
}

bool tmpl_format_f64(double f, char *buf, size_t size)
{
    if (!isfinite(f))
        return false;
    for (int prec = 1; prec <= 17; ++prec) { /* 17 digits always round-trip a double */
        snprintf(buf, size, "%.*g", prec, f);
        double back = strtod(buf, NULL);
        if (memcmp(&back, &f, sizeof f) == 0)
            break;
    }
    tmpl_make_float_literal(buf, size);
    return true;
}

static tmpl_value *tmpl_f_f32(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (!tmpl_is_num(x))
        return tmpl_wrong_type(st, n, "a number", x);
    double d = tmpl_num(x);
    char buf[48];
    /* Beyond FLT_MAX plus half an ulp the conversion overflows (and is undefined in C). */
    if (!isfinite(d) || fabs(d) >= 0x1.ffffffp+127 || !tmpl_format_f32((float)d, buf, sizeof buf - 1))
        return tmpl_fail_value(st, n, "%g is not a finite float", d);
    strcat(buf, "f");
    return tmpl_made(st, n, tmpl_str(buf));
}

static tmpl_value *tmpl_f_f64(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (!tmpl_is_num(x))
        return tmpl_wrong_type(st, n, "a number", x);
    char buf[48];
    if (!tmpl_format_f64(tmpl_num(x), buf, sizeof buf))
        return tmpl_fail_value(st, n, "%g is not a finite double", tmpl_num(x));
    return tmpl_made(st, n, tmpl_str(buf));
}

static tmpl_value *tmpl_f_hex(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (x->kind != TMPL_INT)
        return tmpl_wrong_type(st, n, "an int", x);
    if (x->u.i < 0)
        return tmpl_fail_value(st, n, "'hex' of negative number %" PRId64, x->u.i);
    char buf[24];
    snprintf(buf, sizeof buf, "0x%" PRIx64, x->u.i);
    return tmpl_made(st, n, tmpl_str(buf));
}

/* ---- strings ---- */

static tmpl_value *tmpl_f_case(tmpl_state *st, const tmpl_node *n, tmpl_value *x, bool upper)
{
    if (x->kind != TMPL_STR)
        return tmpl_wrong_type(st, n, "a string", x);
    tmpl_value *r = tmpl_made(st, n, tmpl_str_n(x->u.str.s, x->u.str.len));
    for (size_t i = 0; r && i < r->u.str.len; ++i) {
        char *c = &r->u.str.s[i];
        if (upper && *c >= 'a' && *c <= 'z')
            *c = (char)(*c - 'a' + 'A');
        if (!upper && *c >= 'A' && *c <= 'Z')
            *c = (char)(*c - 'A' + 'a');
    }
    return r;
}

static tmpl_value *tmpl_f_upper(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    return tmpl_f_case(st, n, x, true);
}

static tmpl_value *tmpl_f_lower(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    return tmpl_f_case(st, n, x, false);
}

/* Hands a built string over as a value (reporting out-of-memory). */
static tmpl_value *tmpl_take_buf(tmpl_state *st, const tmpl_node *n, cg_buf *b)
{
    size_t len = b->len;
    bool oom = b->oom;
    if (!oom && !tmpl_text_fits(st, n, len)) {
        cg_buf_free(b);
        return NULL;
    }
    char *s = cg_buf_take(b);
    if (oom || !s)
        return tmpl_made(st, n, NULL);
    return tmpl_made(st, n, tmpl_str_take(s, len));
}

static tmpl_value *tmpl_f_join(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    if (x->kind != TMPL_LIST)
        return tmpl_wrong_type(st, n, "a list", x);
    if (nargs && args[0]->kind != TMPL_STR)
        return tmpl_wrong_type(st, n, "a string separator", args[0]);
    cg_buf b = {0};
    for (size_t i = 0; i < x->u.list.len; ++i) {
        if (i && nargs)
            cg_buf_append(&b, args[0]->u.str.s, args[0]->u.str.len);
        if (!tmpl_print(st, n, x->u.list.items[i], &b) || !tmpl_text_fits(st, n, b.len)) {
            cg_buf_free(&b);
            return NULL;
        }
    }
    return tmpl_take_buf(st, n, &b);
}

/* Indents every line but the first; empty lines stay empty, as Jinja's indent. */
static tmpl_value *tmpl_f_indent(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    int64_t width = 4;
    if (nargs && args[0]->kind != TMPL_INT)
        return tmpl_wrong_type(st, n, "an int width", args[0]);
    if (nargs)
        width = args[0]->u.i;
    if (width < 0 || width > 1024)
        return tmpl_fail_value(st, n, "indent width %" PRId64 " out of range", width);
    cg_buf text = {0}, b = {0};
    if (!tmpl_print(st, n, x, &text)) {
        cg_buf_free(&text);
        return NULL;
    }
    for (size_t i = 0; i < text.len; ++i) {
        if (text.data[i] == '\n' && !tmpl_text_fits(st, n, b.len)) {
            cg_buf_free(&text);
            cg_buf_free(&b);
            return NULL;
        }
        cg_buf_append(&b, &text.data[i], 1);
        if (text.data[i] == '\n' && i + 1 < text.len && text.data[i + 1] != '\n')
            cg_buf_printf(&b, "%*s", (int)width, "");
    }
    cg_buf_free(&text);
    return tmpl_take_buf(st, n, &b);
}

/* ---- conversions ---- */

static tmpl_value *tmpl_length(tmpl_state *st, const tmpl_node *n, const tmpl_value *x)
{
    switch (x->kind) {
    case TMPL_STR: return tmpl_made(st, n, tmpl_int((int64_t)x->u.str.len));
    case TMPL_LIST: return tmpl_made(st, n, tmpl_int((int64_t)x->u.list.len));
    case TMPL_MAP: return tmpl_made(st, n, tmpl_int((int64_t)x->u.map.len));
    default: return tmpl_wrong_type(st, n, "a string, list or map", x);
    }
}

static tmpl_value *tmpl_f_length(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    return tmpl_length(st, n, x);
}

static tmpl_value *tmpl_f_int(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (x->kind == TMPL_INT || x->kind == TMPL_BOOL)
        return tmpl_made(st, n, tmpl_int(x->kind == TMPL_INT ? x->u.i : x->u.b));
    if (x->kind == TMPL_FLOAT) {
        if (!(x->u.f > -0x1p63 - 1025 && x->u.f < 0x1p63)) /* NaN fails too */
            return tmpl_fail_value(st, n, "%g does not fit an int", x->u.f);
        return tmpl_made(st, n, tmpl_int((int64_t)x->u.f));
    }
    if (x->kind != TMPL_STR)
        return tmpl_wrong_type(st, n, "a number or string", x);
    char *end;
    errno = 0;
    long long v = strtoll(x->u.str.s, &end, 10);
    if (!x->u.str.len || *end || errno)
        return tmpl_fail_value(st, n, "cannot convert '%s' to int", x->u.str.s);
    return tmpl_made(st, n, tmpl_int(v));
}

static tmpl_value *tmpl_f_float(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (tmpl_is_num(x) || x->kind == TMPL_BOOL)
        return tmpl_made(st, n, tmpl_float(x->kind == TMPL_BOOL ? x->u.b : tmpl_num(x)));
    if (x->kind != TMPL_STR)
        return tmpl_wrong_type(st, n, "a number or string", x);
    char *end;
    double v = strtod(x->u.str.s, &end);
    if (!x->u.str.len || *end)
        return tmpl_fail_value(st, n, "cannot convert '%s' to float", x->u.str.s);
    return tmpl_made(st, n, tmpl_float(v));
}

static tmpl_value *tmpl_f_abs(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (x->kind == TMPL_FLOAT)
        return tmpl_made(st, n, tmpl_float(fabs(x->u.f)));
    if (x->kind != TMPL_INT)
        return tmpl_wrong_type(st, n, "a number", x);
    if (x->u.i == INT64_MIN)
        return tmpl_fail_value(st, n, "integer overflow");
    return tmpl_made(st, n, tmpl_int(x->u.i < 0 ? -x->u.i : x->u.i));
}

/* A map as a list of [key, value] pairs in insertion order, for `for k, v in m|items`. */
static tmpl_value *tmpl_f_items(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    if (x->kind != TMPL_MAP)
        return tmpl_wrong_type(st, n, "a map", x);
    tmpl_value *list = tmpl_list();
    for (size_t i = 0; list && i < x->u.map.len; ++i) {
        tmpl_value *pair = tmpl_list();
        tmpl_list_push(pair, tmpl_str(x->u.map.entries[i].key));
        tmpl_list_push(pair, tmpl_ref(x->u.map.entries[i].v));
        tmpl_list_push(list, pair);
    }
    if (!tmpl_ok(list)) {
        tmpl_unref(list);
        return tmpl_made(st, n, NULL);
    }
    return list;
}

static const tmpl_builtin tmpl_filters[] = {
    {"f32", tmpl_f_f32, 0, 0},       {"f64", tmpl_f_f64, 0, 0},       {"hex", tmpl_f_hex, 0, 0},
    {"upper", tmpl_f_upper, 0, 0},   {"lower", tmpl_f_lower, 0, 0},   {"join", tmpl_f_join, 0, 1},
    {"length", tmpl_f_length, 0, 0}, {"int", tmpl_f_int, 0, 0},       {"float", tmpl_f_float, 0, 0},
    {"abs", tmpl_f_abs, 0, 0},       {"indent", tmpl_f_indent, 0, 1}, {"items", tmpl_f_items, 0, 0},
    {"default", NULL, 0, 2},         {NULL, NULL, 0, 0},
};

static const tmpl_builtin *tmpl_find(const tmpl_builtin *table, const char *name)
{
    for (; table->name; ++table)
        if (strcmp(table->name, name) == 0)
            return table;
    return NULL;
}

int tmpl_filter_index(const char *name)
{
    const tmpl_builtin *f = tmpl_find(tmpl_filters, name);
    return f ? (int)(f - tmpl_filters) : -1;
}

/* Checks the argument count and that there are no keyword arguments. */
static bool tmpl_check_args(tmpl_state *st, const tmpl_node *n, const tmpl_builtin *b, const char *kind, int nargs)
{
    for (int i = 1; n->names && i < n->nkids; ++i)
        if (n->names[i])
            return tmpl_fail_value(st, n, "%s '%s' takes no keyword arguments", kind, b->name), false;
    if (nargs >= b->min && nargs <= b->max)
        return true;
    if (b->min == b->max)
        tmpl_fail_value(st, n, "%s '%s' takes %d argument%s, got %d", kind, b->name, b->min, b->min == 1 ? "" : "s", nargs);
    else
        tmpl_fail_value(st, n, "%s '%s' takes %d to %d arguments, got %d", kind, b->name, b->min, b->max, nargs);
    return false;
}

/* x|default(v[, boolean]): v when x is an unknown variable, key or attribute (or, with
 * boolean true, when x is false-ish). */
static tmpl_value *tmpl_f_default(tmpl_state *st, const tmpl_node *n)
{
    const tmpl_node *arg = n->kids[0];
    tmpl_value *x = tmpl_eval(st, arg);
    if (!x) {
        bool lookup = arg->kind == E_NAME || arg->kind == E_ATTR || arg->kind == E_INDEX;
        if (!st->diag.undefined || !lookup)
            return NULL;
        st->diag.failed = st->diag.undefined = false;
        if (st->diag.err && st->diag.errlen)
            st->diag.err[0] = '\0';
    } else if (n->nkids < 3) {
        return x;
    } else {
        tmpl_value *b = tmpl_eval(st, n->kids[2]);
        bool keep = b && (!tmpl_truthy(b) || tmpl_truthy(x));
        tmpl_unref(b);
        if (keep || !b)
            return b ? x : (tmpl_unref(x), NULL);
        tmpl_unref(x);
    }
    return n->nkids > 1 ? tmpl_eval(st, n->kids[1]) : tmpl_made(st, n, tmpl_str(""));
}

tmpl_value *tmpl_apply_filter(tmpl_state *st, const tmpl_node *n)
{
    const tmpl_builtin *f = &tmpl_filters[n->filter];
    int nargs = n->nkids - 1;
    if (!tmpl_check_args(st, n, f, "filter", nargs))
        return NULL;
    if (!f->fn)
        return tmpl_f_default(st, n);
    tmpl_value *vals[3] = {NULL, NULL, NULL}, *r = NULL;
    int done = 0;
    while (done <= nargs && (vals[done] = tmpl_eval(st, n->kids[done])))
        done++;
    if (done > nargs)
        r = f->fn(st, n, vals[0], vals + 1, nargs);
    for (int i = 0; i < done; ++i)
        tmpl_unref(vals[i]);
    return r;
}

/* ---- globals ---- */

enum { TMPL_MAX_RANGE = 1 << 24 }; /* a template never needs more; a typo might */

static tmpl_value *tmpl_g_range(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    int64_t v[3] = {0, 0, 1};
    tmpl_value *all[3] = {x, nargs > 0 ? args[0] : NULL, nargs > 1 ? args[1] : NULL};
    for (int i = 0; i <= nargs; ++i) {
        if (all[i]->kind != TMPL_INT)
            return tmpl_wrong_type(st, n, "int arguments", all[i]);
        v[nargs == 0 ? 1 : i] = all[i]->u.i;
    }
    int64_t a = v[0], b = v[1], step = v[2];
    if (step == 0)
        return tmpl_fail_value(st, n, "range() step must not be zero");
    uint64_t count = 0; /* differences in unsigned arithmetic cannot overflow */
    if (step > 0 && a < b)
        count = ((uint64_t)b - (uint64_t)a - 1) / (uint64_t)step + 1;
    if (step < 0 && a > b)
        count = ((uint64_t)a - (uint64_t)b - 1) / (0 - (uint64_t)step) + 1;
    if (count > TMPL_MAX_RANGE)
        return tmpl_fail_value(st, n, "range() of %" PRIu64 " elements is too long", count);
    tmpl_value *list = tmpl_list();
    for (uint64_t i = 0; list && i < count; ++i)
        tmpl_list_push(list, tmpl_int((int64_t)((uint64_t)a + i * (uint64_t)step)));
    if (!tmpl_ok(list)) {
        tmpl_unref(list);
        return tmpl_made(st, n, NULL);
    }
    return list;
}

static tmpl_value *tmpl_g_len(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    (void)args, (void)nargs;
    return tmpl_length(st, n, x);
}

/* min/max of a list, or of two or more arguments. */
static tmpl_value *tmpl_extreme(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs, tmpl_op op)
{
    tmpl_value *const *items = args - 1; /* x, args[0], ... are consecutive */
    size_t count = (size_t)nargs + 1;
    if (nargs == 0) {
        if (x->kind != TMPL_LIST)
            return tmpl_wrong_type(st, n, "a list or several arguments", x);
        items = x->u.list.items;
        count = x->u.list.len;
        if (!count)
            return tmpl_fail_value(st, n, "%s() of an empty list", n->kids[0]->str);
    }
    tmpl_value *best = items[0];
    for (size_t i = 1; i < count; ++i) {
        bool better;
        if (!tmpl_less(st, n, op, items[i], best, &better))
            return NULL;
        best = better ? items[i] : best;
    }
    return tmpl_ref(best);
}

static tmpl_value *tmpl_g_min(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    return tmpl_extreme(st, n, x, args, nargs, OP_LT);
}

static tmpl_value *tmpl_g_max(tmpl_state *st, const tmpl_node *n, tmpl_value *x, tmpl_value **args, int nargs)
{
    return tmpl_extreme(st, n, x, args, nargs, OP_GT);
}

static const tmpl_builtin tmpl_globals[] = {
    {"range", tmpl_g_range, 0, 2}, {"len", tmpl_g_len, 0, 0}, {"min", tmpl_g_min, 0, 63},
    {"max", tmpl_g_max, 0, 63},    {NULL, NULL, 0, 0},
};

bool tmpl_is_global(const char *name) { return tmpl_find(tmpl_globals, name) != NULL; }

/* `args` are all the call's arguments; the table counts those after the first. */
tmpl_value *tmpl_call_global(tmpl_state *st, const tmpl_node *n, tmpl_value **args, int nargs)
{
    const tmpl_builtin *g = tmpl_find(tmpl_globals, n->kids[0]->str);
    tmpl_builtin shown = *g;
    shown.min++, shown.max++;
    if (!tmpl_check_args(st, n, &shown, "function", nargs))
        return NULL;
    return g->fn(st, n, args[0], args + 1, nargs - 1);
}
