/* Expressions: each evaluates to a new reference or NULL after reporting an error at the
 * node's token. Arithmetic follows Python/Jinja: int op int stays int (checked for overflow)
 * except true division, // and % floor, and there are no implicit conversions from strings
 * or bools, so a template mistake is an error rather than odd CUDA. */
#include "tmpl_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

tmpl_value *tmpl_fail_value(tmpl_state *st, const tmpl_node *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tmpl_fail(&st->diag, st->tname, n->line, n->col, "%s", msg);
    return NULL;
}

/* A new value, or an out-of-memory report when `v` is NULL. */
static tmpl_value *tmpl_made(tmpl_state *st, const tmpl_node *n, tmpl_value *v)
{
    return v ? v : tmpl_fail_value(st, n, "out of memory");
}

/* An unknown name or key: reported so that |default can take its place. */
static tmpl_value *tmpl_undefined(tmpl_state *st, const tmpl_node *n, const char *what, const char *name)
{
    bool first = !st->diag.failed;
    tmpl_fail_value(st, n, "unknown %s '%s'", what, name);
    st->diag.undefined = first;
    return NULL;
}

/* Decimal digits without printf: ints are most of what a kernel template prints. */
static void tmpl_print_int(cg_buf *b, int64_t v)
{
    char digits[24], *p = digits + sizeof digits;
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    cg_buf_append(b, p, (size_t)(digits + sizeof digits - p));
}

bool tmpl_print(tmpl_state *st, const tmpl_node *n, const tmpl_value *v, cg_buf *b)
{
    char text[32];
    switch (v->kind) {
    case TMPL_INT: tmpl_print_int(b, v->u.i); return true;
    case TMPL_FLOAT: cg_buf_append(b, text, (size_t)snprintf(text, sizeof text, "%.17g", v->u.f)); return true;
    case TMPL_STR: cg_buf_append(b, v->u.str.s, v->u.str.len); return true;
    case TMPL_BOOL: cg_buf_puts(b, v->u.b ? "true" : "false"); return true;
    case TMPL_NONE: tmpl_fail_value(st, n, "cannot print none"); return false;
    default: tmpl_fail_value(st, n, "cannot print a %s", tmpl_kind_name(v->kind)); return false;
    }
}

static tmpl_value *tmpl_eval_name(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *v = tmpl_lookup(st, n->str);
    if (!v)
        return tmpl_undefined(st, n, "variable", n->str);
    return tmpl_ref(v);
}

static tmpl_value *tmpl_eval_list(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *list = tmpl_made(st, n, tmpl_list());
    for (int i = 0; list && i < n->nkids; ++i) {
        tmpl_value *v = tmpl_eval(st, n->kids[i]);
        tmpl_list_push(list, v);
        if (!v || list->failed) {
            tmpl_unref(list);
            return v ? tmpl_made(st, n, NULL) : NULL;
        }
    }
    return list;
}

static tmpl_value *tmpl_eval_map(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *map = tmpl_made(st, n, tmpl_map());
    for (int i = 0; map && i + 1 < n->nkids; i += 2) {
        tmpl_value *k = tmpl_eval(st, n->kids[i]);
        tmpl_value *v = k ? tmpl_eval(st, n->kids[i + 1]) : NULL;
        if (k && k->kind != TMPL_STR)
            tmpl_fail_value(st, n->kids[i], "map keys must be strings, not %s", tmpl_kind_name(k->kind));
        else if (v)
            tmpl_map_set(map, k->u.str.s, tmpl_ref(v));
        bool ok = v && k->kind == TMPL_STR && !map->failed;
        tmpl_unref(k);
        tmpl_unref(v);
        if (!ok) {
            if (map->failed)
                tmpl_made(st, n, NULL);
            tmpl_unref(map);
            return NULL;
        }
    }
    return map;
}

static tmpl_value *tmpl_loop_attr(tmpl_state *st, const tmpl_node *n, const tmpl_value *loop)
{
    int64_t i = loop->u.loop.index0, len = loop->u.loop.length;
    const char *a = n->str;
    if (tmpl_streq(a, "index")) return tmpl_made(st, n, tmpl_int(i + 1));
    if (tmpl_streq(a, "index0")) return tmpl_made(st, n, tmpl_int(i));
    if (tmpl_streq(a, "first")) return tmpl_made(st, n, tmpl_bool(i == 0));
    if (tmpl_streq(a, "last")) return tmpl_made(st, n, tmpl_bool(i == len - 1));
    if (tmpl_streq(a, "length")) return tmpl_made(st, n, tmpl_int(len));
    if (tmpl_streq(a, "revindex")) return tmpl_made(st, n, tmpl_int(len - i));
    if (tmpl_streq(a, "revindex0")) return tmpl_made(st, n, tmpl_int(len - i - 1));
    return tmpl_undefined(st, n, "loop attribute", a);
}

/* x.name: a map's key, or a field of `loop`. */
static tmpl_value *tmpl_eval_attr(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *x = tmpl_eval(st, n->kids[0]), *r = NULL;
    if (!x)
        return NULL;
    if (x->kind == TMPL_MAP) {
        r = tmpl_map_get(x, n->str);
        r = r ? tmpl_ref(r) : tmpl_undefined(st, n, "key", n->str);
    } else if (x->kind == TMPL_LOOP) {
        r = tmpl_loop_attr(st, n, x);
    } else {
        tmpl_fail_value(st, n, "%s has no attribute '%s'", tmpl_kind_name(x->kind), n->str);
    }
    tmpl_unref(x);
    return r;
}

static tmpl_value *tmpl_index(tmpl_state *st, const tmpl_node *n, const tmpl_value *x, const tmpl_value *i)
{
    if (x->kind == TMPL_MAP && i->kind == TMPL_STR) {
        tmpl_value *r = tmpl_map_get(x, i->u.str.s);
        return r ? tmpl_ref(r) : tmpl_undefined(st, n, "key", i->u.str.s);
    }
    if ((x->kind != TMPL_LIST && x->kind != TMPL_STR) || i->kind != TMPL_INT)
        return tmpl_fail_value(st, n, "cannot index %s with %s", tmpl_kind_name(x->kind), tmpl_kind_name(i->kind));
    int64_t len = (int64_t)(x->kind == TMPL_LIST ? x->u.list.len : x->u.str.len);
    int64_t k = i->u.i < 0 ? i->u.i + len : i->u.i;
    if (k < 0 || k >= len)
        return tmpl_fail_value(st, n, "index %" PRId64 " out of range for %s of length %" PRId64, i->u.i,
                               tmpl_kind_name(x->kind), len);
    if (x->kind == TMPL_STR)
        return tmpl_made(st, n, tmpl_str_n(x->u.str.s + k, 1));
    return tmpl_ref(x->u.list.items[k]);
}

static tmpl_value *tmpl_eval_index(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *x = tmpl_eval(st, n->kids[0]);
    tmpl_value *i = x ? tmpl_eval(st, n->kids[1]) : NULL;
    tmpl_value *r = i ? tmpl_index(st, n, x, i) : NULL;
    tmpl_unref(x);
    tmpl_unref(i);
    return r;
}

/* f(args): a macro bound to a name, else one of the globals. */
static tmpl_value *tmpl_eval_call(tmpl_state *st, const tmpl_node *n)
{
    const tmpl_node *f = n->kids[0];
    tmpl_value *callee = NULL;
    if (f->kind != E_NAME || tmpl_lookup(st, f->str)) {
        if (!(callee = tmpl_eval(st, f)))
            return NULL;
        if (callee->kind != TMPL_MACRO) {
            const char *kind = tmpl_kind_name(callee->kind); /* a static name: callee may go now */
            tmpl_unref(callee);
            return tmpl_fail_value(st, n, "%s is not callable", kind);
        }
    } else if (!tmpl_is_global(f->str)) {
        return tmpl_undefined(st, n, "function", f->str);
    }
    int nargs = n->nkids - 1;
    tmpl_value *stack[8], **args = nargs <= 8 ? stack : malloc((size_t)nargs * sizeof *args);
    tmpl_value *r = NULL;
    int done = 0;
    if (!args)
        tmpl_made(st, n, NULL);
    while (args && done < nargs && (args[done] = tmpl_eval(st, n->kids[1 + done])))
        done++;
    if (args && done == nargs)
        r = callee ? tmpl_call_macro(st, n, callee, args, nargs) : tmpl_call_global(st, n, args, nargs);
    for (int i = 0; i < done; ++i)
        tmpl_unref(args[i]);
    if (args != stack)
        free(args);
    tmpl_unref(callee);
    return r;
}

/* ---- operators ---- */

static bool tmpl_is_num(const tmpl_value *v) { return v->kind == TMPL_INT || v->kind == TMPL_FLOAT; }
static double tmpl_num(const tmpl_value *v) { return v->kind == TMPL_INT ? (double)v->u.i : v->u.f; }

static tmpl_value *tmpl_type_error(tmpl_state *st, const tmpl_node *n, tmpl_op op, const tmpl_value *a, const tmpl_value *b)
{
    static const char *const verbs[] = {
        [OP_ADD] = "add", [OP_SUB] = "subtract", [OP_MUL] = "multiply", [OP_DIV] = "divide",
        [OP_FLOORDIV] = "floor-divide", [OP_MOD] = "take the modulo of", [OP_POW] = "raise to a power",
        [OP_LT] = "compare", [OP_LE] = "compare", [OP_GT] = "compare", [OP_GE] = "compare",
    };
    return tmpl_fail_value(st, n, "cannot %s %s and %s", verbs[op], tmpl_kind_name(a->kind), tmpl_kind_name(b->kind));
}

static tmpl_value *tmpl_overflow(tmpl_state *st, const tmpl_node *n) { return tmpl_fail_value(st, n, "integer overflow"); }
static tmpl_value *tmpl_div_zero(tmpl_state *st, const tmpl_node *n) { return tmpl_fail_value(st, n, "division by zero"); }

static tmpl_value *tmpl_int_pow(tmpl_state *st, const tmpl_node *n, int64_t a, int64_t b)
{
    if (b < 0) {
        if (a == 0)
            return tmpl_div_zero(st, n);
        return tmpl_made(st, n, tmpl_float(pow((double)a, (double)b)));
    }
    int64_t r = 1;
    for (; b; b >>= 1) {
        if ((b & 1) && __builtin_mul_overflow(r, a, &r))
            return tmpl_overflow(st, n);
        if (b > 1 && __builtin_mul_overflow(a, a, &a))
            return tmpl_overflow(st, n);
    }
    return tmpl_made(st, n, tmpl_int(r));
}

/* Python's floor division and modulo: the remainder takes the divisor's sign. */
static tmpl_value *tmpl_int_op(tmpl_state *st, const tmpl_node *n, tmpl_op op, int64_t a, int64_t b)
{
    int64_t r = 0;
    bool overflow = false;
    switch (op) {
    case OP_ADD: overflow = __builtin_add_overflow(a, b, &r); break;
    case OP_SUB: overflow = __builtin_sub_overflow(a, b, &r); break;
    case OP_MUL: overflow = __builtin_mul_overflow(a, b, &r); break;
    case OP_DIV: return b ? tmpl_made(st, n, tmpl_float((double)a / (double)b)) : tmpl_div_zero(st, n);
    case OP_FLOORDIV:
        if (b == 0)
            return tmpl_div_zero(st, n);
        overflow = a == INT64_MIN && b == -1;
        r = overflow ? 0 : a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
        break;
    case OP_MOD:
        if (b == 0)
            return tmpl_div_zero(st, n);
        r = b == -1 ? 0 : a % b;
        r += (r != 0 && ((r < 0) != (b < 0))) ? b : 0;
        break;
    default: return tmpl_int_pow(st, n, a, b);
    }
    return overflow ? tmpl_overflow(st, n) : tmpl_made(st, n, tmpl_int(r));
}

static tmpl_value *tmpl_float_op(tmpl_state *st, const tmpl_node *n, tmpl_op op, double a, double b)
{
    double r;
    if ((op == OP_DIV || op == OP_FLOORDIV || op == OP_MOD) && b == 0.0)
        return tmpl_div_zero(st, n);
    switch (op) {
    case OP_ADD: r = a + b; break;
    case OP_SUB: r = a - b; break;
    case OP_MUL: r = a * b; break;
    case OP_DIV: r = a / b; break;
    case OP_FLOORDIV: r = floor(a / b); break;
    case OP_MOD:
        r = fmod(a, b);
        r = (r != 0 && ((r < 0) != (b < 0))) ? r + b : r == 0 ? copysign(0.0, b) : r;
        break;
    default:
        if (a == 0.0 && b < 0)
            return tmpl_div_zero(st, n);
        r = pow(a, b);
        if (isnan(r) && !isnan(a) && !isnan(b))
            return tmpl_fail_value(st, n, "negative number raised to a fractional power");
        break;
    }
    return tmpl_made(st, n, tmpl_float(r));
}

static tmpl_value *tmpl_repeat(tmpl_state *st, const tmpl_node *n, const tmpl_value *s, int64_t times)
{
    size_t len = s->u.str.len, total;
    if (times < 0 || len == 0) /* '' * big is '' at once, not 2^63 copies of nothing (fuzz_tmpl) */
        times = 0;
    if (__builtin_mul_overflow(len, (uint64_t)times, &total))
        return tmpl_fail_value(st, n, "string too long");
    if (!tmpl_text_fits(st, n, total))
        return NULL;
    char *d = malloc(total + 1);
    for (size_t i = 0; d && i < (size_t)times; ++i)
        memcpy(d + i * len, s->u.str.s, len);
    if (d)
        d[total] = '\0';
    return tmpl_made(st, n, tmpl_str_take(d, total));
}

/* list + list, or the printed texts of a and b (string + string, and ~ of anything: a list on
 * either side of ~ is printed, which is an error, never joined to whatever the other side is). */
static tmpl_value *tmpl_concat(tmpl_state *st, const tmpl_node *n, const tmpl_value *a, const tmpl_value *b)
{
    if (a->kind == TMPL_LIST && b->kind == TMPL_LIST) {
        tmpl_value *l = tmpl_made(st, n, tmpl_list());
        for (size_t i = 0; l && i < a->u.list.len + b->u.list.len; ++i) {
            size_t j = i < a->u.list.len ? i : i - a->u.list.len;
            tmpl_list_push(l, tmpl_ref(i < a->u.list.len ? a->u.list.items[j] : b->u.list.items[j]));
        }
        if (l && l->failed) {
            tmpl_unref(l);
            return tmpl_made(st, n, NULL);
        }
        return l;
    }
    cg_buf buf = {0};
    bool ok = tmpl_print(st, n, a, &buf) && tmpl_print(st, n, b, &buf) && tmpl_text_fits(st, n, buf.len);
    size_t len = buf.len;
    char *s = cg_buf_take(&buf);
    if (!ok) {
        free(s);
        return NULL;
    }
    return tmpl_made(st, n, tmpl_str_take(s, len));
}

static tmpl_value *tmpl_arith(tmpl_state *st, const tmpl_node *n, tmpl_op op, const tmpl_value *a, const tmpl_value *b)
{
    if (op == OP_TILDE)
        return tmpl_concat(st, n, a, b);
    if (a->kind == TMPL_INT && b->kind == TMPL_INT)
        return tmpl_int_op(st, n, op, a->u.i, b->u.i);
    if (tmpl_is_num(a) && tmpl_is_num(b))
        return tmpl_float_op(st, n, op, tmpl_num(a), tmpl_num(b));
    if (op == OP_ADD && a->kind == b->kind && (a->kind == TMPL_STR || a->kind == TMPL_LIST))
        return tmpl_concat(st, n, a, b);
    if (op == OP_MUL && a->kind == TMPL_STR && b->kind == TMPL_INT)
        return tmpl_repeat(st, n, a, b->u.i);
    if (op == OP_MUL && a->kind == TMPL_INT && b->kind == TMPL_STR)
        return tmpl_repeat(st, n, b, a->u.i);
    return tmpl_type_error(st, n, op, a, b);
}

/* a < b and friends on numbers or strings; false after reporting other kinds. */
bool tmpl_less(tmpl_state *st, const tmpl_node *n, tmpl_op op, const tmpl_value *a, const tmpl_value *b, bool *res)
{
    int c;
    if (a->kind == TMPL_INT && b->kind == TMPL_INT)
        c = (a->u.i > b->u.i) - (a->u.i < b->u.i);
    else if (tmpl_is_num(a) && tmpl_is_num(b))
        c = (tmpl_num(a) > tmpl_num(b)) - (tmpl_num(a) < tmpl_num(b));
    else if (a->kind == TMPL_STR && b->kind == TMPL_STR)
        c = strcmp(a->u.str.s, b->u.str.s);
    else
        return tmpl_type_error(st, n, op, a, b), false;
    if (isnan(tmpl_is_num(a) ? tmpl_num(a) : 0) || isnan(tmpl_is_num(b) ? tmpl_num(b) : 0))
        return *res = false, true;
    *res = op == OP_LT ? c < 0 : op == OP_LE ? c <= 0 : op == OP_GT ? c > 0 : c >= 0;
    return true;
}

static bool tmpl_contains(tmpl_state *st, const tmpl_node *n, const tmpl_value *a, const tmpl_value *b, bool *res)
{
    *res = false;
    if (b->kind == TMPL_STR && a->kind == TMPL_STR)
        *res = strstr(b->u.str.s, a->u.str.s) != NULL;
    else if (b->kind == TMPL_LIST)
        for (size_t i = 0; i < b->u.list.len && !*res; ++i)
            *res = tmpl_equal(a, b->u.list.items[i]);
    else if (b->kind == TMPL_MAP)
        *res = a->kind == TMPL_STR && tmpl_map_get(b, a->u.str.s);
    else
        return tmpl_fail_value(st, n, "cannot look for %s in %s", tmpl_kind_name(a->kind), tmpl_kind_name(b->kind)), false;
    return true;
}

static bool tmpl_compare(tmpl_state *st, const tmpl_node *n, tmpl_op op, const tmpl_value *a, const tmpl_value *b, bool *res)
{
    switch (op) {
    case OP_EQ: *res = tmpl_equal(a, b); return true;
    case OP_NE: *res = !tmpl_equal(a, b); return true;
    case OP_IN: return tmpl_contains(st, n, a, b, res);
    case OP_NOTIN: return tmpl_contains(st, n, a, b, res) && (*res = !*res, true);
    default: return tmpl_less(st, n, op, a, b, res);
    }
}

/* a < b < c means a < b and b < c, each operand evaluated once. */
static tmpl_value *tmpl_eval_compare(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *a = tmpl_eval(st, n->kids[0]);
    bool res = true, ok = a != NULL;
    for (int i = 1; ok && res && i < n->nkids; ++i) {
        tmpl_value *b = tmpl_eval(st, n->kids[i]);
        ok = b && tmpl_compare(st, n, n->ops[i - 1], a, b, &res);
        tmpl_unref(a);
        a = b;
    }
    tmpl_unref(a);
    return ok ? tmpl_made(st, n, tmpl_bool(res)) : NULL;
}

static tmpl_value *tmpl_eval_unary(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *x = tmpl_eval(st, n->kids[0]), *r = NULL;
    if (!x)
        return NULL;
    if (n->op == OP_NOT)
        r = tmpl_made(st, n, tmpl_bool(!tmpl_truthy(x)));
    else if (x->kind == TMPL_INT && n->op == OP_NEG)
        r = x->u.i == INT64_MIN ? tmpl_overflow(st, n) : tmpl_made(st, n, tmpl_int(-x->u.i));
    else if (x->kind == TMPL_FLOAT && n->op == OP_NEG)
        r = tmpl_made(st, n, tmpl_float(-x->u.f));
    else if (tmpl_is_num(x))
        r = tmpl_ref(x);
    else
        tmpl_fail_value(st, n, "cannot apply unary '%s' to %s", tmpl_op_text[n->op], tmpl_kind_name(x->kind));
    tmpl_unref(x);
    return r;
}

static tmpl_value *tmpl_eval_binary(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *a = tmpl_eval(st, n->kids[0]);
    if (!a)
        return NULL;
    if (n->op == OP_AND || n->op == OP_OR) { /* the deciding operand, as Python */
        if (tmpl_truthy(a) == (n->op == OP_OR))
            return a;
        tmpl_unref(a);
        return tmpl_eval(st, n->kids[1]);
    }
    tmpl_value *b = tmpl_eval(st, n->kids[1]);
    tmpl_value *r = b ? tmpl_arith(st, n, n->op, a, b) : NULL;
    tmpl_unref(a);
    tmpl_unref(b);
    return r;
}

/* `x if c else y`; without else, the empty string (Jinja's undefined prints as nothing). */
static tmpl_value *tmpl_eval_cond(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *c = tmpl_eval(st, n->kids[0]);
    if (!c)
        return NULL;
    bool t = tmpl_truthy(c);
    tmpl_unref(c);
    if (t)
        return tmpl_eval(st, n->kids[1]);
    return n->nkids == 3 ? tmpl_eval(st, n->kids[2]) : tmpl_made(st, n, tmpl_str(""));
}

tmpl_value *tmpl_eval(tmpl_state *st, const tmpl_node *n)
{
    switch (n->kind) {
    case E_LIT: return tmpl_ref(n->value);
    case E_NAME: return tmpl_eval_name(st, n);
    case E_LIST: return tmpl_eval_list(st, n);
    case E_MAP: return tmpl_eval_map(st, n);
    case E_ATTR: return tmpl_eval_attr(st, n);
    case E_INDEX: return tmpl_eval_index(st, n);
    case E_CALL: return tmpl_eval_call(st, n);
    case E_FILTER: return tmpl_apply_filter(st, n);
    case E_UNARY: return tmpl_eval_unary(st, n);
    case E_BINARY: return tmpl_eval_binary(st, n);
    case E_COMPARE: return tmpl_eval_compare(st, n);
    case E_COND: return tmpl_eval_cond(st, n);
    default: return tmpl_fail_value(st, n, "internal error: not an expression");
    }
}
