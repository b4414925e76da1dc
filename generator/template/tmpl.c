/* The renderer: statements, scopes, macros and includes, and tmpl_render itself.
 *
 * Scopes, kept simple: the root scope holds the top-level {% set %}s and macros and sits
 * above the context; each for-loop iteration gets a fresh scope (so a set inside a loop is
 * gone after the iteration, as in Jinja); a macro call gets a scope of its arguments above the
 * root, so a macro sees its arguments, the root and the context but not its caller's locals.
 * An include renders in the scope of the {% include %} itself, like C's #include: its sets and
 * macros stay visible afterwards (the templates rely on it for the macros of common.cuh). */
#include "tmpl_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    TMPL_MAX_INCLUDE_DEPTH = 64, /* deeper is a template including itself (C compilers allow 200) */
    TMPL_MAX_CALL_DEPTH = 64,    /* bounds the C stack for recursive macros */
};

/* Loop iterations, macro calls and includes one render may take. The depth limits bound the C
 * stack, not the work: eleven nested loops of 25, or a macro calling itself twice, run for ever
 * (fuzz_tmpl found the first). The largest render of the bench's kernel set takes 2,205; this is
 * about a second of work. The fuzz build sets a smaller budget, so that a slow input is an error
 * there, not a timeout. */
#ifndef TMPL_MAX_STEPS
#define TMPL_MAX_STEPS ((int64_t)1 << 24)
#endif

/* The longest string or output a render may make: kernel sources are tens of KiB, so this is a
 * runaway template (a doubling concatenation, a join of a doubled list), stopped before it takes
 * the machine's memory. Smaller in the fuzz build, as TMPL_MAX_STEPS. */
#ifndef TMPL_MAX_TEXT
#define TMPL_MAX_TEXT ((size_t)1 << 28)
#endif

bool tmpl_text_fits(tmpl_state *st, const tmpl_node *n, size_t len)
{
    if (len <= TMPL_MAX_TEXT)
        return true;
    tmpl_fail_value(st, n, "text over %zu MiB (a runaway template?)", (size_t)TMPL_MAX_TEXT >> 20);
    return false;
}

/* Counts one step of the render; false (with the error) once the budget is spent. */
static bool tmpl_step(tmpl_state *st, const tmpl_node *n)
{
    if (++st->steps <= TMPL_MAX_STEPS)
        return true;
    tmpl_fail_value(st, n, "the render takes over %" PRId64 " loop iterations, macro calls and includes (a runaway "
                    "loop nest or recursion?)", (int64_t)TMPL_MAX_STEPS);
    return false;
}

void tmpl_fail(tmpl_diag *d, const char *tname, int line, int col, const char *fmt, ...)
{
    if (d->failed)
        return;
    d->failed = true;
    d->undefined = false;
    if (!d->err || !d->errlen)
        return;
    int n = snprintf(d->err, d->errlen, "%s:%d:%d: ", tname, line, col);
    if (n < 0 || (size_t)n >= d->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err + n, d->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

/* ---- scopes ---- */

void tmpl_scope_init(tmpl_scope *s, tmpl_scope *parent)
{
    s->parent = parent;
    s->vars = s->inline_vars;
    s->n = 0;
    s->cap = (int)(sizeof s->inline_vars / sizeof s->inline_vars[0]);
}

static void tmpl_scope_clear(tmpl_scope *s)
{
    for (int i = 0; i < s->n; ++i)
        tmpl_unref(s->vars[i].v);
    s->n = 0;
}

void tmpl_scope_free(tmpl_scope *s)
{
    tmpl_scope_clear(s);
    if (s->vars != s->inline_vars)
        free(s->vars);
    tmpl_scope_init(s, s->parent);
}

bool tmpl_scope_set(tmpl_scope *s, const char *name, tmpl_value *v)
{
    for (int i = 0; i < s->n; ++i)
        if (tmpl_streq(s->vars[i].name, name)) {
            tmpl_unref(s->vars[i].v);
            s->vars[i].v = v;
            return true;
        }
    if (s->n == s->cap) {
        tmpl_var *vars = malloc((size_t)s->cap * 2 * sizeof *vars);
        if (!vars) {
            tmpl_unref(v);
            return false;
        }
        memcpy(vars, s->vars, (size_t)s->n * sizeof *vars);
        if (s->vars != s->inline_vars)
            free(s->vars);
        s->vars = vars;
        s->cap *= 2;
    }
    s->vars[s->n++] = (tmpl_var){name, v};
    return true;
}

tmpl_value *tmpl_lookup(tmpl_state *st, const char *name)
{
    for (const tmpl_scope *s = st->scope; s; s = s->parent)
        for (int i = s->n - 1; i >= 0; --i)
            if (tmpl_streq(s->vars[i].name, name))
                return s->vars[i].v;
    return tmpl_map_get(st->ctx, name);
}

/* ---- parsed templates, kept for the whole render (macros point into them) ---- */

struct tmpl_parsed {
    tmpl_parsed *next;
    char *name;
    const char *text;
    tmpl_arena arena;
    tmpl_value *lits;
    tmpl_node *root;
};

static void tmpl_free_parsed(tmpl_parsed *p)
{
    while (p) {
        tmpl_parsed *next = p->next;
        tmpl_arena_free(&p->arena);
        tmpl_unref(p->lits);
        free(p->name);
        free(p);
        p = next;
    }
}

/* The tree of `text`, parsed once per render even when included many times. */
static tmpl_parsed *tmpl_get_parsed(tmpl_state *st, const tmpl_node *at, const char *name, const char *text)
{
    for (tmpl_parsed *p = st->parsed; p; p = p->next)
        if (p->text == text && strcmp(p->name, name) == 0)
            return p->root ? p : NULL;
    tmpl_parsed *p = calloc(1, sizeof *p);
    if (!p) {
        tmpl_fail(&st->diag, at ? st->tname : name, at ? at->line : 1, at ? at->col : 1, "out of memory");
        return NULL;
    }
    p->next = st->parsed;
    st->parsed = p;
    p->text = text;
    p->name = cg_strdup(name);
    p->lits = tmpl_list();
    size_t count;
    tmpl_token *toks = p->name && p->lits ? tmpl_lex(&p->arena, text, &count) : NULL;
    if (!toks)
        tmpl_fail(&st->diag, at ? st->tname : name, at ? at->line : 1, at ? at->col : 1, "out of memory");
    else
        p->root = tmpl_parse(&p->arena, toks, p->lits, &st->diag, p->name);
    free(toks);
    return p->root ? p : NULL;
}

/* ---- statements ---- */

static bool tmpl_exec(tmpl_state *st, const tmpl_node *n);

static bool tmpl_bind(tmpl_state *st, const tmpl_node *n, tmpl_scope *s, const char *name, tmpl_value *v)
{
    if (!v)
        return tmpl_fail_value(st, n, "out of memory"), false;
    return tmpl_scope_set(s, name, v) || (tmpl_fail_value(st, n, "out of memory"), false);
}

/* Binds the loop targets to one element: `for x in` or `for a, b in` (unpacking a list). */
static bool tmpl_bind_targets(tmpl_state *st, const tmpl_node *n, tmpl_scope *s, tmpl_value *item)
{
    if (n->nnames == 1)
        return tmpl_bind(st, n, s, n->names[0], item);
    bool fits = item->kind == TMPL_LIST && item->u.list.len == (size_t)n->nnames;
    if (!fits) {
        if (item->kind == TMPL_LIST)
            tmpl_fail_value(st, n, "cannot unpack a list of %zu into %d names", item->u.list.len, n->nnames);
        else
            tmpl_fail_value(st, n, "cannot unpack %s into %d names", tmpl_kind_name(item->kind), n->nnames);
    }
    for (int i = 0; fits && i < n->nnames; ++i)
        fits = tmpl_bind(st, n, s, n->names[i], tmpl_ref(item->u.list.items[i]));
    tmpl_unref(item);
    return fits;
}

/* The loop variable for iteration i; reused unless the template kept a reference to it. */
static tmpl_value *tmpl_next_loop(tmpl_value **loop, int64_t i, int64_t len)
{
    if (*loop && (*loop)->rc > 1) {
        tmpl_unref(*loop);
        *loop = NULL;
    }
    if (!*loop)
        *loop = tmpl_loop_value(i, len);
    if (*loop)
        (*loop)->u.loop.index0 = i;
    return tmpl_ref(*loop);
}

static bool tmpl_exec_for(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *seq = tmpl_eval(st, n->kids[0]);
    if (!seq)
        return false;
    if (seq->kind != TMPL_LIST && seq->kind != TMPL_MAP) {
        tmpl_fail_value(st, n->kids[0], "cannot iterate over %s", tmpl_kind_name(seq->kind));
        tmpl_unref(seq);
        return false;
    }
    bool is_list = seq->kind == TMPL_LIST, ok = true;
    int64_t len = (int64_t)(is_list ? seq->u.list.len : seq->u.map.len);
    tmpl_scope scope;
    tmpl_scope_init(&scope, st->scope);
    tmpl_value *loop = NULL;
    for (int64_t i = 0; ok && i < len && (ok = tmpl_step(st, n)); ++i) {
        tmpl_scope_clear(&scope);
        tmpl_value *item = is_list ? tmpl_ref(seq->u.list.items[i]) : tmpl_str(seq->u.map.entries[i].key);
        ok = (item || (tmpl_fail_value(st, n, "out of memory"), false)) && tmpl_bind_targets(st, n, &scope, item) &&
             tmpl_bind(st, n, &scope, "loop", tmpl_next_loop(&loop, i, len));
        st->scope = &scope;
        ok = ok && tmpl_exec(st, n->kids[1]);
        st->scope = scope.parent;
    }
    tmpl_scope_free(&scope);
    tmpl_unref(loop);
    tmpl_unref(seq);
    return ok;
}

static bool tmpl_exec_if(tmpl_state *st, const tmpl_node *n)
{
    while (n && n->kind == S_IF) {
        tmpl_value *c = tmpl_eval(st, n->kids[0]);
        if (!c)
            return false;
        bool taken = tmpl_truthy(c);
        tmpl_unref(c);
        if (taken)
            return tmpl_exec(st, n->kids[1]);
        n = n->nkids == 3 ? n->kids[2] : NULL; /* elif: another S_IF */
    }
    return n ? tmpl_exec(st, n) : true;
}

static bool tmpl_exec_include(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *name = tmpl_eval(st, n->kids[0]);
    if (!name)
        return false;
    bool ok = false;
    tmpl_source src = {0};
    tmpl_parsed *p = NULL;
    if (name->kind != TMPL_STR)
        tmpl_fail_value(st, n, "include expects a template name, got %s", tmpl_kind_name(name->kind));
    else if (st->include_depth >= TMPL_MAX_INCLUDE_DEPTH)
        tmpl_fail_value(st, n, "includes nested too deep (does '%s' include itself?)", name->u.str.s);
    else if (!tmpl_step(st, n))
        ;
    else if (st->load && (src = st->load(st->load_user, name->u.str.s)).problem && !src.text)
        tmpl_fail_value(st, n, "template '%s' cannot be used: %s", name->u.str.s, src.problem);
    else if (!src.text)
        tmpl_fail_value(st, n, "template '%s' not found", name->u.str.s);
    else if ((p = tmpl_get_parsed(st, n, src.origin ? src.origin : name->u.str.s, src.text))) {
        const char *saved = st->tname;
        st->tname = p->name;
        st->include_depth++;
        ok = tmpl_exec(st, p->root);
        st->include_depth--;
        st->tname = saved;
    }
    tmpl_unref(name);
    return ok;
}

static bool tmpl_exec_output(tmpl_state *st, const tmpl_node *n)
{
    tmpl_value *v = tmpl_eval(st, n->kids[0]);
    bool ok = v && tmpl_print(st, n, v, st->out);
    tmpl_unref(v);
    return ok;
}

static bool tmpl_exec(tmpl_state *st, const tmpl_node *n)
{
    switch (n->kind) {
    case S_BLOCK:
        for (int i = 0; i < n->nkids; ++i) {
            if (!tmpl_exec(st, n->kids[i]) || !tmpl_text_fits(st, n->kids[i], st->out->len))
                return false;
            if (st->out->oom)
                return tmpl_fail_value(st, n->kids[i], "out of memory"), false;
        }
        return true;
    case S_TEXT: cg_buf_append(st->out, n->str, n->len); return true;
    case S_OUTPUT: return tmpl_exec_output(st, n);
    case S_FOR: return tmpl_exec_for(st, n);
    case S_IF: return tmpl_exec_if(st, n);
    case S_SET: return tmpl_bind(st, n, st->scope, n->str, tmpl_eval(st, n->kids[0]));
    case S_MACRO: return tmpl_bind(st, n, st->scope, n->str, tmpl_macro_value(n, st->tname));
    case S_INCLUDE: return tmpl_exec_include(st, n);
    default: return tmpl_fail_value(st, n, "internal error: not a statement"), false;
    }
}

/* ---- macros ---- */

static bool tmpl_arity_error(tmpl_state *st, const tmpl_node *call, const tmpl_node *m, int nargs)
{
    int required = 0;
    while (required < m->nnames && !m->kids[1 + required])
        required++;
    if (required == m->nnames)
        tmpl_fail_value(st, call, "macro '%s' takes %d argument%s, got %d", m->str, required, required == 1 ? "" : "s", nargs);
    else
        tmpl_fail_value(st, call, "macro '%s' takes %d to %d arguments, got %d", m->str, required, m->nnames, nargs);
    return false;
}

/* Puts each argument in the parameter it names (position or keyword) into `bound`. */
static bool tmpl_match_args(tmpl_state *st, const tmpl_node *call, const tmpl_node *m, tmpl_value **args,
                            int nargs, tmpl_value **bound)
{
    for (int i = 0; i < nargs; ++i) {
        const char *kw = call->names ? call->names[1 + i] : NULL;
        int p = kw ? 0 : i;
        while (kw && p < m->nnames && strcmp(m->names[p], kw) != 0)
            p++;
        if (p >= m->nnames)
            return kw ? (tmpl_fail_value(st, call, "macro '%s' has no parameter '%s'", m->str, kw), false)
                      : tmpl_arity_error(st, call, m, nargs);
        if (bound[p])
            return tmpl_fail_value(st, call, "macro '%s' got argument '%s' twice", m->str, m->names[p]), false;
        bound[p] = args[i];
    }
    for (int p = 0; p < m->nnames; ++p)
        if (!bound[p] && !m->kids[1 + p])
            return tmpl_arity_error(st, call, m, nargs);
    return true;
}

/* Binds parameters in the macro's scope; defaults are evaluated there, seeing earlier ones. */
static bool tmpl_bind_params(tmpl_state *st, const tmpl_node *m, tmpl_value **bound, tmpl_scope *scope)
{
    for (int p = 0; p < m->nnames; ++p) {
        tmpl_value *v = bound[p] ? tmpl_ref(bound[p]) : tmpl_eval(st, m->kids[1 + p]);
        if (!v || !tmpl_bind(st, m, scope, m->names[p], v))
            return false;
    }
    return true;
}

tmpl_value *tmpl_call_macro(tmpl_state *st, const tmpl_node *call, const tmpl_value *macro, tmpl_value **args, int nargs)
{
    const tmpl_node *m = macro->u.macro.node;
    tmpl_value *stack[8] = {0}, **bound = m->nnames <= 8 ? stack : calloc((size_t)m->nnames, sizeof *bound);
    if (!bound)
        return tmpl_fail_value(st, call, "out of memory");
    if (st->call_depth >= TMPL_MAX_CALL_DEPTH || !tmpl_step(st, call) || !tmpl_match_args(st, call, m, args, nargs, bound)) {
        if (st->call_depth >= TMPL_MAX_CALL_DEPTH)
            tmpl_fail_value(st, call, "macro calls nested too deep (is '%s' recursive?)", m->str);
        if (bound != stack)
            free(bound);
        return NULL;
    }
    cg_buf out = {0}, *saved_out = st->out;
    tmpl_scope scope, *saved_scope = st->scope;
    const char *saved_tname = st->tname;
    tmpl_scope_init(&scope, st->root);
    st->scope = &scope;
    st->tname = macro->u.macro.tname; /* errors inside name the defining template */
    st->out = &out;
    st->call_depth++;
    bool ok = tmpl_bind_params(st, m, bound, &scope) && tmpl_exec(st, m->kids[0]);
    if (ok && out.oom)
        ok = tmpl_fail_value(st, m, "out of memory") != NULL;
    st->call_depth--;
    st->out = saved_out;
    st->tname = saved_tname;
    st->scope = saved_scope;
    tmpl_scope_free(&scope);
    if (bound != stack)
        free(bound);
    size_t len = out.len;
    char *s = cg_buf_take(&out);
    if (!ok) {
        free(s);
        return NULL;
    }
    tmpl_value *r = tmpl_str_take(s, len);
    return r ? r : tmpl_fail_value(st, call, "out of memory");
}

/* ---- entry ---- */

static bool tmpl_check_context(tmpl_state *st, const char *name, const tmpl_value *ctx)
{
    if (ctx && ctx->kind != TMPL_MAP)
        tmpl_fail(&st->diag, name, 1, 1, "the context must be a map, not %s", tmpl_kind_name(ctx->kind));
    else if (ctx && !tmpl_ok(ctx))
        tmpl_fail(&st->diag, name, 1, 1, "the context is incomplete (out of memory while building it)");
    return !st->diag.failed;
}

bool tmpl_render(const char *name, const char *text, const tmpl_value *ctx, tmpl_load_fn load, void *load_user,
                 char **out, char *err, size_t errlen)
{
    cg_buf buf = {0};
    tmpl_scope root;
    tmpl_scope_init(&root, NULL);
    tmpl_state st = {.diag = {.err = err, .errlen = errlen}, .ctx = ctx, .scope = &root, .root = &root,
                     .load = load, .load_user = load_user, .out = &buf};
    if (err && errlen)
        err[0] = '\0';
    if (out)
        *out = NULL;
    st.tname = name = name ? name : "template";
    if (!text || !out)
        tmpl_fail(&st.diag, name, 1, 1, "no template text or no place for the output");
    else if (tmpl_check_context(&st, name, ctx)) {
        tmpl_parsed *p = tmpl_get_parsed(&st, NULL, name, text);
        if (p && tmpl_exec(&st, p->root) && buf.oom)
            tmpl_fail(&st.diag, name, 1, 1, "out of memory");
    }
    tmpl_scope_free(&root);
    tmpl_free_parsed(st.parsed);
    if (!st.diag.failed && !(*out = cg_buf_take(&buf)))
        tmpl_fail(&st.diag, name, 1, 1, "out of memory");
    cg_buf_free(&buf);
    return !st.diag.failed;
}
