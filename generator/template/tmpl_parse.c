/* The parser: tokens to a tree, by recursive descent with Jinja's precedence, loosest first:
 *   a if c else b  <  or  <  and  <  not  <  == != < <= > >= in, not in (chained)
 *   <  + -  <  ~  <  * / // %  <  **  <  unary - +  <  x|filter  <  x.a x[i] f(...)
 * (as jinja2's parser: `~` binds tighter than `+`, `**` is left-associative and `-2 ** 2` is
 * (-2) ** 2). The whole template is parsed before anything renders, so a syntax error in a
 * branch not taken is still reported. */
#include "tmpl_internal.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* ---- arena ---- */

struct tmpl_chunk {
    tmpl_chunk *next;
    size_t used, cap;
    alignas(max_align_t) unsigned char data[];
};

void *tmpl_arena_alloc(tmpl_arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    tmpl_chunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->next = a->head;
        c->used = 0;
        c->cap = cap;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *tmpl_arena_strdup(tmpl_arena *a, const char *s, size_t n)
{
    char *d = tmpl_arena_alloc(a, n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

void tmpl_arena_free(tmpl_arena *a)
{
    while (a->head) {
        tmpl_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

/* ---- parser state ---- */

enum { TMPL_MAX_NESTING = 128 }; /* bounds recursion here and in evaluation */

typedef struct tmpl_parser {
    tmpl_arena *arena;
    const tmpl_token *t;
    tmpl_value *lits;
    tmpl_diag *d;
    const char *tname;
    int depth;
} tmpl_parser;

/* Children gathered before their count is known, then copied into the arena. */
typedef struct tmpl_kids {
    tmpl_node **v;
    const char **names;
    tmpl_op *ops;
    int n, cap;
    bool oom;
} tmpl_kids;

static void tmpl_kids_push(tmpl_kids *k, tmpl_node *n, const char *name, tmpl_op op)
{
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 8;
        tmpl_node **v = realloc(k->v, (size_t)cap * sizeof *v);
        const char **names = realloc(k->names, (size_t)cap * sizeof *names);
        tmpl_op *ops = realloc(k->ops, (size_t)cap * sizeof *ops);
        k->v = v ? v : k->v;
        k->names = names ? names : k->names;
        k->ops = ops ? ops : k->ops;
        if (!v || !names || !ops) {
            k->oom = true;
            return;
        }
        k->cap = cap;
    }
    k->v[k->n] = n;
    k->names[k->n] = name;
    k->ops[k->n++] = op;
}

static void tmpl_kids_free(tmpl_kids *k)
{
    free(k->v);
    free(k->names);
    free(k->ops);
}

static bool tmpl_oom(tmpl_parser *p)
{
    tmpl_fail(p->d, p->tname, p->t->line, p->t->col, "out of memory");
    return false;
}

static void *tmpl_copy(tmpl_parser *p, const void *src, size_t n)
{
    void *d = tmpl_arena_alloc(p->arena, n ? n : 1);
    if (d && n)
        memcpy(d, src, n);
    return d;
}

/* Moves the gathered children into node n (kids always; names/ops when asked). */
static bool tmpl_kids_finish(tmpl_parser *p, tmpl_kids *k, tmpl_node *n, bool names, bool ops)
{
    bool ok = !k->oom;
    if (ok) {
        n->nkids = k->n;
        n->kids = tmpl_copy(p, k->v, (size_t)k->n * sizeof *k->v);
        ok = n->kids != NULL;
        if (ok && names) {
            n->nnames = k->n;
            ok = (n->names = tmpl_copy(p, k->names, (size_t)k->n * sizeof *k->names)) != NULL;
        }
        if (ok && ops)
            ok = (n->ops = tmpl_copy(p, k->ops, (size_t)k->n * sizeof *k->ops)) != NULL;
    }
    tmpl_kids_free(k);
    return ok || tmpl_oom(p);
}

static tmpl_node *tmpl_node_new(tmpl_parser *p, tmpl_node_kind kind, const tmpl_token *at)
{
    tmpl_node *n = tmpl_arena_alloc(p->arena, sizeof *n);
    if (!n)
        return tmpl_oom(p), NULL;
    n->kind = kind;
    n->line = at->line;
    n->col = at->col;
    return n;
}

/* ---- tokens ---- */

static bool tmpl_is_op(const tmpl_parser *p, tmpl_op op) { return p->t->kind == TK_OP && p->t->op == op; }
static bool tmpl_is_name(const tmpl_token *t, const char *name) { return t->kind == TK_NAME && tmpl_streq(t->str, name); }

static bool tmpl_is_keyword(const char *s)
{
    static const char *const kw[] = {"and", "or", "not", "in", "if", "else", "is"};
    for (size_t i = 0; i < sizeof kw / sizeof kw[0]; ++i)
        if (tmpl_streq(s, kw[i]))
            return true;
    return false;
}

/* Reports the current token as unexpected; a lexical error reports itself instead. */
static bool tmpl_unexpected(tmpl_parser *p)
{
    const tmpl_token *t = p->t;
    const char *what;
    switch (t->kind) {
    case TK_ERROR: tmpl_fail(p->d, p->tname, t->line, t->col, "%s", t->msg); return false;
    case TK_NAME: tmpl_fail(p->d, p->tname, t->line, t->col, "unexpected '%s'", t->str); return false;
    case TK_OP: tmpl_fail(p->d, p->tname, t->line, t->col, "unexpected '%s'", tmpl_op_text[t->op]); return false;
    case TK_INT: case TK_FLOAT: what = "number"; break;
    case TK_STRING: what = "string"; break;
    case TK_EXPR_END: what = "'}}'"; break;
    case TK_STMT_END: what = "'%}'"; break;
    case TK_EXPR_BEGIN: what = "'{{'"; break;
    case TK_STMT_BEGIN: what = "'{%'"; break;
    default: what = "end of template"; break;
    }
    tmpl_fail(p->d, p->tname, t->line, t->col, "unexpected %s", what);
    return false;
}

static bool tmpl_expect_op(tmpl_parser *p, tmpl_op op)
{
    if (!tmpl_is_op(p, op))
        return tmpl_unexpected(p);
    p->t++;
    return true;
}

static bool tmpl_expect_kind(tmpl_parser *p, tmpl_tok_kind kind)
{
    if (p->t->kind != kind)
        return tmpl_unexpected(p);
    p->t++;
    return true;
}

/* A name that is not a keyword, for targets and parameters. */
static const char *tmpl_expect_name(tmpl_parser *p)
{
    if (p->t->kind != TK_NAME || tmpl_is_keyword(p->t->str))
        return tmpl_unexpected(p), NULL;
    return (p->t++)->str;
}

static bool tmpl_enter(tmpl_parser *p)
{
    if (++p->depth <= TMPL_MAX_NESTING)
        return true;
    tmpl_fail(p->d, p->tname, p->t->line, p->t->col, "nesting too deep");
    return false;
}

/* ---- expressions ---- */

static tmpl_node *tmpl_parse_expr(tmpl_parser *p);
static tmpl_node *tmpl_parse_or(tmpl_parser *p);

static tmpl_node *tmpl_binary(tmpl_parser *p, tmpl_node_kind kind, tmpl_op op, const tmpl_token *at,
                              tmpl_node *l, tmpl_node *r)
{
    if (!l || !r)
        return NULL;
    tmpl_node *n = tmpl_node_new(p, kind, at);
    if (!n || !(n->kids = tmpl_arena_alloc(p->arena, 3 * sizeof *n->kids)))
        return n ? (tmpl_oom(p), NULL) : NULL;
    n->op = op;
    n->kids[0] = l;
    n->kids[1] = r;
    n->nkids = 2;
    return n;
}

static tmpl_node *tmpl_literal(tmpl_parser *p, tmpl_value *v)
{
    tmpl_node *n = tmpl_node_new(p, E_LIT, p->t);
    if (!v || !n) {
        tmpl_unref(v);
        return n ? (tmpl_oom(p), NULL) : NULL;
    }
    n->value = v;
    tmpl_list_push(p->lits, v);
    p->t++;
    return p->lits->failed ? (tmpl_oom(p), NULL) : n;
}

/* Comma-separated expressions up to `close`; `keywords` allows name=value (calls), `pairs`
 * key: value (maps). */
static bool tmpl_parse_items(tmpl_parser *p, tmpl_kids *k, tmpl_op close, bool keywords, bool pairs)
{
    bool seen_keyword = false;
    while (!tmpl_is_op(p, close)) {
        const char *kw = NULL;
        if (keywords && p->t->kind == TK_NAME && p->t[1].kind == TK_OP && p->t[1].op == OP_ASSIGN) {
            kw = p->t->str;
            p->t += 2;
            seen_keyword = true;
        } else if (seen_keyword) {
            tmpl_fail(p->d, p->tname, p->t->line, p->t->col, "positional argument after keyword argument");
            return false;
        }
        tmpl_node *e = tmpl_parse_expr(p);
        if (!e)
            return false;
        tmpl_kids_push(k, e, kw, OP_NONE);
        if (pairs && !(tmpl_expect_op(p, OP_COLON) && (e = tmpl_parse_expr(p))))
            return false;
        if (pairs)
            tmpl_kids_push(k, e, NULL, OP_NONE);
        if (!tmpl_is_op(p, OP_COMMA))
            break;
        p->t++;
    }
    return tmpl_expect_op(p, close);
}

/* A node of `kind` whose children are the items up to `close` (after the opening token). */
static tmpl_node *tmpl_parse_seq(tmpl_parser *p, tmpl_node_kind kind, const tmpl_token *at,
                                 tmpl_node *first, tmpl_op close, bool keywords, bool pairs)
{
    tmpl_node *n = tmpl_node_new(p, kind, at);
    tmpl_kids k = {0};
    if (first)
        tmpl_kids_push(&k, first, NULL, OP_NONE);
    if (!n || !tmpl_parse_items(p, &k, close, keywords, pairs)) {
        tmpl_kids_free(&k);
        return NULL;
    }
    return tmpl_kids_finish(p, &k, n, keywords, false) ? n : NULL;
}

static tmpl_node *tmpl_parse_name(tmpl_parser *p)
{
    const char *s = p->t->str;
    if (!strcmp(s, "true") || !strcmp(s, "True"))
        return tmpl_literal(p, tmpl_bool(true));
    if (!strcmp(s, "false") || !strcmp(s, "False"))
        return tmpl_literal(p, tmpl_bool(false));
    if (!strcmp(s, "none") || !strcmp(s, "None"))
        return tmpl_literal(p, tmpl_none());
    if (tmpl_is_keyword(s))
        return tmpl_unexpected(p), NULL;
    tmpl_node *n = tmpl_node_new(p, E_NAME, p->t);
    if (n)
        n->str = (p->t++)->str;
    return n;
}

static tmpl_node *tmpl_parse_primary(tmpl_parser *p)
{
    const tmpl_token *t = p->t;
    switch (t->kind) {
    case TK_NAME: return tmpl_parse_name(p);
    case TK_INT: return tmpl_literal(p, tmpl_int(t->i));
    case TK_FLOAT: return tmpl_literal(p, tmpl_float(t->f));
    case TK_STRING: return tmpl_literal(p, tmpl_str_n(t->str, t->len));
    default: break;
    }
    if (tmpl_is_op(p, OP_LPAREN)) {
        p->t++;
        tmpl_node *e = tmpl_parse_expr(p);
        return e && tmpl_expect_op(p, OP_RPAREN) ? e : NULL;
    }
    if (tmpl_is_op(p, OP_LBRACKET))
        return p->t++, tmpl_parse_seq(p, E_LIST, t, NULL, OP_RBRACKET, false, false);
    if (tmpl_is_op(p, OP_LBRACE))
        return p->t++, tmpl_parse_seq(p, E_MAP, t, NULL, OP_RBRACE, false, true);
    return tmpl_unexpected(p), NULL;
}

/* x.name, x[i] and calls, left to right. */
static tmpl_node *tmpl_parse_postfix(tmpl_parser *p, tmpl_node *n)
{
    while (n) {
        const tmpl_token *at = p->t;
        if (tmpl_is_op(p, OP_DOT)) {
            p->t++;
            if (p->t->kind != TK_NAME)
                return tmpl_unexpected(p), NULL;
            tmpl_node *a = tmpl_node_new(p, E_ATTR, p->t);
            if (a && (a->kids = tmpl_arena_alloc(p->arena, sizeof *a->kids))) {
                a->kids[0] = n;
                a->nkids = 1;
                a->str = (p->t++)->str;
            } else if (a) {
                return tmpl_oom(p), NULL;
            }
            n = a;
        } else if (tmpl_is_op(p, OP_LBRACKET)) {
            p->t++;
            tmpl_node *i = tmpl_parse_expr(p);
            n = tmpl_binary(p, E_INDEX, OP_NONE, at, n, i);
            if (n && !tmpl_expect_op(p, OP_RBRACKET))
                return NULL;
        } else if (tmpl_is_op(p, OP_LPAREN)) {
            p->t++;
            const tmpl_token where = {.line = n->line, .col = n->col};
            n = tmpl_parse_seq(p, E_CALL, &where, n, OP_RPAREN, true, false);
        } else {
            break;
        }
    }
    return n;
}

/* x|name and x|name(args), any number of them. */
static tmpl_node *tmpl_parse_filters(tmpl_parser *p, tmpl_node *n)
{
    while (n && tmpl_is_op(p, OP_PIPE)) {
        p->t++;
        if (p->t->kind != TK_NAME)
            return tmpl_unexpected(p), NULL;
        const tmpl_token *at = p->t++;
        int filter = tmpl_filter_index(at->str);
        if (filter < 0) {
            tmpl_fail(p->d, p->tname, at->line, at->col, "unknown filter '%s'", at->str);
            return NULL;
        }
        if (tmpl_is_op(p, OP_LPAREN)) {
            p->t++;
            n = tmpl_parse_seq(p, E_FILTER, at, n, OP_RPAREN, true, false);
        } else {
            tmpl_kids k = {0};
            tmpl_kids_push(&k, n, NULL, OP_NONE);
            n = tmpl_node_new(p, E_FILTER, at);
            if (!n || !tmpl_kids_finish(p, &k, n, true, false))
                return NULL;
        }
        if (n) {
            n->str = at->str;
            n->filter = filter;
        }
    }
    return n;
}

static tmpl_node *tmpl_parse_unary(tmpl_parser *p, bool with_filter)
{
    if (!tmpl_enter(p))
        return NULL;
    tmpl_node *n;
    const tmpl_token *at = p->t;
    if (tmpl_is_op(p, OP_SUB) || tmpl_is_op(p, OP_ADD)) {
        p->t++;
        tmpl_node *e = tmpl_parse_unary(p, false);
        n = e ? tmpl_binary(p, E_UNARY, at->op == OP_SUB ? OP_NEG : OP_POS, at, e, e) : NULL;
        if (n)
            n->nkids = 1;
    } else {
        n = tmpl_parse_primary(p);
    }
    n = tmpl_parse_postfix(p, n);
    if (with_filter)
        n = tmpl_parse_filters(p, n);
    p->depth--;
    return n;
}

/* Left-associative binary levels: each entry lists its operators, ending with OP_NONE. */
static const tmpl_op tmpl_levels[][5] = {
    {OP_ADD, OP_SUB, OP_NONE},
    {OP_TILDE, OP_NONE},
    {OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_NONE},
    {OP_POW, OP_NONE},
};

static tmpl_node *tmpl_parse_level(tmpl_parser *p, int level)
{
    if (level == 4)
        return tmpl_parse_unary(p, true);
    tmpl_node *n = tmpl_parse_level(p, level + 1);
    for (;;) {
        const tmpl_op *op = tmpl_levels[level];
        while (*op != OP_NONE && !tmpl_is_op(p, *op))
            op++;
        if (!n || *op == OP_NONE)
            return n;
        const tmpl_token *at = p->t++;
        n = tmpl_binary(p, E_BINARY, *op, at, n, tmpl_parse_level(p, level + 1));
    }
}

/* The comparison operator at the current token (consuming it), or OP_NONE. */
static tmpl_op tmpl_compare_op(tmpl_parser *p)
{
    if (p->t->kind == TK_OP && p->t->op >= OP_EQ && p->t->op <= OP_GE)
        return (p->t++)->op;
    if (tmpl_is_name(p->t, "in"))
        return p->t++, OP_IN;
    if (tmpl_is_name(p->t, "not") && tmpl_is_name(&p->t[1], "in"))
        return p->t += 2, OP_NOTIN;
    return OP_NONE;
}

static tmpl_node *tmpl_parse_compare(tmpl_parser *p)
{
    tmpl_node *first = tmpl_parse_level(p, 0);
    const tmpl_token *at = p->t;
    tmpl_op op = first ? tmpl_compare_op(p) : OP_NONE;
    if (op == OP_NONE)
        return first;
    tmpl_node *n = tmpl_node_new(p, E_COMPARE, at);
    tmpl_kids k = {0};
    tmpl_kids_push(&k, first, NULL, op); /* ops[i] sits between kids[i] and kids[i + 1] */
    while (n) {
        tmpl_node *e = tmpl_parse_level(p, 0);
        tmpl_op next = e ? tmpl_compare_op(p) : OP_NONE;
        tmpl_kids_push(&k, e, NULL, next);
        if (!e)
            n = NULL;
        if (next == OP_NONE)
            break;
    }
    if (!n) {
        tmpl_kids_free(&k);
        return NULL;
    }
    return tmpl_kids_finish(p, &k, n, false, true) ? n : NULL;
}

static tmpl_node *tmpl_parse_not(tmpl_parser *p)
{
    if (!tmpl_is_name(p->t, "not"))
        return tmpl_parse_compare(p);
    if (!tmpl_enter(p))
        return NULL;
    const tmpl_token *at = p->t++;
    tmpl_node *e = tmpl_parse_not(p);
    tmpl_node *n = tmpl_binary(p, E_UNARY, OP_NOT, at, e, e);
    if (n)
        n->nkids = 1;
    p->depth--;
    return n;
}

static tmpl_node *tmpl_parse_logic(tmpl_parser *p, bool is_or)
{
    tmpl_node *n = is_or ? tmpl_parse_logic(p, false) : tmpl_parse_not(p);
    while (n && tmpl_is_name(p->t, is_or ? "or" : "and")) {
        const tmpl_token *at = p->t++;
        n = tmpl_binary(p, E_BINARY, is_or ? OP_OR : OP_AND, at, n,
                        is_or ? tmpl_parse_logic(p, false) : tmpl_parse_not(p));
    }
    return n;
}

static tmpl_node *tmpl_parse_or(tmpl_parser *p) { return tmpl_parse_logic(p, true); }

/* `a if c else b`; without else the value is the empty string. */
static tmpl_node *tmpl_parse_expr(tmpl_parser *p)
{
    if (!tmpl_enter(p))
        return NULL;
    tmpl_node *n = tmpl_parse_or(p);
    while (n && tmpl_is_name(p->t, "if")) {
        const tmpl_token *at = p->t++;
        tmpl_node *c = tmpl_node_new(p, E_COND, at);
        tmpl_node *cond = c ? tmpl_parse_or(p) : NULL;
        tmpl_node *other = NULL;
        if (cond && tmpl_is_name(p->t, "else")) {
            p->t++;
            if (!(other = tmpl_parse_expr(p)))
                cond = NULL;
        }
        if (!cond || !(c->kids = tmpl_arena_alloc(p->arena, 3 * sizeof *c->kids))) {
            if (cond)
                tmpl_oom(p);
            n = NULL;
            break;
        }
        c->kids[0] = cond;
        c->kids[1] = n;
        c->kids[2] = other;
        c->nkids = other ? 3 : 2;
        n = c;
    }
    p->depth--;
    return n;
}

/* ---- statements ---- */

static tmpl_node *tmpl_parse_body(tmpl_parser *p, const char *const *enders, const tmpl_token *open);

/* Consumes "{% name %}" where the caller has checked the name. */
static bool tmpl_end_tag(tmpl_parser *p)
{
    p->t += 2;
    return tmpl_expect_kind(p, TK_STMT_END);
}

static tmpl_node *tmpl_parse_for(tmpl_parser *p, const tmpl_token *kw)
{
    static const char *const enders[] = {"endfor", NULL};
    tmpl_node *n = tmpl_node_new(p, S_FOR, kw);
    tmpl_kids targets = {0};
    const char *name = n ? tmpl_expect_name(p) : NULL;
    for (; name; name = tmpl_expect_name(p)) {
        tmpl_kids_push(&targets, NULL, name, OP_NONE);
        if (!tmpl_is_op(p, OP_COMMA))
            break;
        p->t++;
    }
    tmpl_node *iter = NULL, *body = NULL;
    if (name && tmpl_is_name(p->t, "in")) {
        p->t++;
        iter = tmpl_parse_expr(p);
    } else if (name) {
        tmpl_unexpected(p);
    }
    if (iter && tmpl_expect_kind(p, TK_STMT_END))
        body = tmpl_parse_body(p, enders, kw);
    if (!body || !tmpl_end_tag(p)) {
        tmpl_kids_free(&targets);
        return NULL;
    }
    n->nnames = targets.n;
    n->names = tmpl_copy(p, targets.names, (size_t)targets.n * sizeof *targets.names);
    tmpl_kids_free(&targets);
    n->kids = tmpl_arena_alloc(p->arena, 2 * sizeof *n->kids);
    if (!n->names || !n->kids)
        return tmpl_oom(p), NULL;
    n->kids[0] = iter;
    n->kids[1] = body;
    n->nkids = 2;
    return n;
}

/* After "if" or "elif": condition, body, then elif / else / endif. */
static tmpl_node *tmpl_parse_if(tmpl_parser *p, const tmpl_token *kw, const tmpl_token *open)
{
    static const char *const enders[] = {"elif", "else", "endif", NULL};
    static const char *const endif[] = {"endif", NULL};
    tmpl_node *n = tmpl_node_new(p, S_IF, kw);
    tmpl_node *cond = n ? tmpl_parse_expr(p) : NULL;
    tmpl_node *then = cond && tmpl_expect_kind(p, TK_STMT_END) ? tmpl_parse_body(p, enders, open) : NULL;
    if (!then || !(n->kids = tmpl_arena_alloc(p->arena, 3 * sizeof *n->kids)))
        return then ? (tmpl_oom(p), NULL) : NULL;
    n->kids[0] = cond;
    n->kids[1] = then;
    n->nkids = 2;
    const tmpl_token *end = p->t + 1;
    if (tmpl_is_name(end, "elif")) {
        p->t += 2;
        if (!tmpl_enter(p) || !(n->kids[2] = tmpl_parse_if(p, end, open)))
            return NULL;
        p->depth--;
        n->nkids = 3;
        return n;
    }
    if (tmpl_is_name(end, "else")) {
        if (!tmpl_end_tag(p) || !(n->kids[2] = tmpl_parse_body(p, endif, open)))
            return NULL;
        n->nkids = 3;
    }
    return tmpl_end_tag(p) ? n : NULL;
}

static tmpl_node *tmpl_parse_set(tmpl_parser *p, const tmpl_token *kw)
{
    tmpl_node *n = tmpl_node_new(p, S_SET, kw);
    if (!n || !(n->str = tmpl_expect_name(p)) || !tmpl_expect_op(p, OP_ASSIGN))
        return NULL;
    tmpl_node *e = tmpl_parse_expr(p);
    if (!e || !tmpl_expect_kind(p, TK_STMT_END))
        return NULL;
    if (!(n->kids = tmpl_arena_alloc(p->arena, sizeof *n->kids)))
        return tmpl_oom(p), NULL;
    n->kids[0] = e;
    n->nkids = 1;
    return n;
}

/* "(a, b=1)": names and their defaults (NULL for none) after the body slot. */
static bool tmpl_parse_params(tmpl_parser *p, tmpl_kids *k)
{
    if (!tmpl_expect_op(p, OP_LPAREN))
        return false;
    tmpl_kids_push(k, NULL, NULL, OP_NONE); /* the body, filled in later */
    while (!tmpl_is_op(p, OP_RPAREN)) {
        const tmpl_token *at = p->t;
        const char *name = tmpl_expect_name(p);
        tmpl_node *def = NULL;
        if (!name)
            return false;
        if (tmpl_is_op(p, OP_ASSIGN) && (p->t++, !(def = tmpl_parse_expr(p))))
            return false;
        if (!def && k->n > 1 && k->v[k->n - 1]) {
            tmpl_fail(p->d, p->tname, at->line, at->col, "parameter '%s' without a default follows one with a default", name);
            return false;
        }
        tmpl_kids_push(k, def, name, OP_NONE);
        if (!tmpl_is_op(p, OP_COMMA))
            break;
        p->t++;
    }
    return tmpl_expect_op(p, OP_RPAREN) && tmpl_expect_kind(p, TK_STMT_END);
}

static tmpl_node *tmpl_parse_macro(tmpl_parser *p, const tmpl_token *kw)
{
    static const char *const enders[] = {"endmacro", NULL};
    tmpl_node *n = tmpl_node_new(p, S_MACRO, kw);
    tmpl_kids k = {0};
    if (!n || !(n->str = tmpl_expect_name(p)) || !tmpl_parse_params(p, &k) ||
        !(k.v[0] = tmpl_parse_body(p, enders, kw)) || !tmpl_end_tag(p)) {
        tmpl_kids_free(&k);
        return NULL;
    }
    if (!tmpl_kids_finish(p, &k, n, true, false))
        return NULL;
    n->names++; /* names[i] is parameter i, its default kids[1 + i] */
    n->nnames--;
    return n;
}

static tmpl_node *tmpl_parse_include(tmpl_parser *p, const tmpl_token *kw)
{
    tmpl_node *n = tmpl_node_new(p, S_INCLUDE, kw);
    tmpl_node *e = n ? tmpl_parse_expr(p) : NULL;
    if (!e || !tmpl_expect_kind(p, TK_STMT_END))
        return NULL;
    if (!(n->kids = tmpl_arena_alloc(p->arena, sizeof *n->kids)))
        return tmpl_oom(p), NULL;
    n->line = e->line; /* a missing template is reported at its name */
    n->col = e->col;
    n->kids[0] = e;
    n->nkids = 1;
    return n;
}

/* After "{%": one statement. */
static tmpl_node *tmpl_parse_stmt(tmpl_parser *p)
{
    const tmpl_token *kw = p->t;
    if (kw->kind != TK_NAME)
        return tmpl_unexpected(p), NULL;
    p->t++;
    const char *s = kw->str;
    if (!strcmp(s, "for"))
        return tmpl_parse_for(p, kw);
    if (!strcmp(s, "if"))
        return tmpl_parse_if(p, kw, kw);
    if (!strcmp(s, "set"))
        return tmpl_parse_set(p, kw);
    if (!strcmp(s, "macro"))
        return tmpl_parse_macro(p, kw);
    if (!strcmp(s, "include"))
        return tmpl_parse_include(p, kw);
    if (!strcmp(s, "endfor") || !strcmp(s, "endif") || !strcmp(s, "endmacro"))
        tmpl_fail(p->d, p->tname, kw->line, kw->col, "unmatched '%s'", s);
    else if (!strcmp(s, "else") || !strcmp(s, "elif"))
        tmpl_fail(p->d, p->tname, kw->line, kw->col, "unexpected '%s'", s);
    else
        tmpl_fail(p->d, p->tname, kw->line, kw->col, "unknown statement '%s'", s);
    return NULL;
}

static bool tmpl_is_ender(const tmpl_token *t, const char *const *enders)
{
    for (; enders && *enders; ++enders)
        if (tmpl_is_name(t, *enders))
            return true;
    return false;
}

static tmpl_node *tmpl_parse_output(tmpl_parser *p)
{
    tmpl_node *e = tmpl_parse_expr(p);
    if (!e || !tmpl_expect_kind(p, TK_EXPR_END))
        return NULL;
    tmpl_node *n = tmpl_node_new(p, S_OUTPUT, &(tmpl_token){.line = e->line, .col = e->col});
    if (n && !(n->kids = tmpl_arena_alloc(p->arena, sizeof *n->kids)))
        return tmpl_oom(p), NULL;
    if (n) {
        n->kids[0] = e;
        n->nkids = 1;
    }
    return n;
}

static tmpl_node *tmpl_parse_text(tmpl_parser *p)
{
    tmpl_node *n = tmpl_node_new(p, S_TEXT, p->t);
    if (n) {
        n->str = p->t->str;
        n->len = p->t->len;
        p->t++;
    }
    return n;
}

/* Statements up to "{% ender %}" (left unconsumed) or, with no enders, the end. */
static tmpl_node *tmpl_parse_body(tmpl_parser *p, const char *const *enders, const tmpl_token *open)
{
    tmpl_node *block = tmpl_enter(p) ? tmpl_node_new(p, S_BLOCK, p->t) : NULL;
    tmpl_kids k = {0};
    for (bool ok = block != NULL; ok;) {
        const tmpl_token *t = p->t;
        tmpl_node *n = NULL;
        if (t->kind == TK_EOF && open) {
            tmpl_fail(p->d, p->tname, open->line, open->col, "'%s' is not closed (missing '%s')", open->str,
                      !strcmp(open->str, "macro") ? "endmacro" : !strcmp(open->str, "for") ? "endfor" : "endif");
        } else if (t->kind == TK_EOF || (t->kind == TK_STMT_BEGIN && tmpl_is_ender(t + 1, enders))) {
            p->depth--;
            return tmpl_kids_finish(p, &k, block, false, false) ? block : NULL;
        } else if (t->kind == TK_TEXT) {
            n = tmpl_parse_text(p);
        } else if (t->kind == TK_EXPR_BEGIN) {
            p->t++;
            n = tmpl_parse_output(p);
        } else if (t->kind == TK_STMT_BEGIN) {
            p->t++;
            n = tmpl_parse_stmt(p);
        } else {
            tmpl_unexpected(p);
        }
        ok = n != NULL;
        tmpl_kids_push(&k, n, NULL, OP_NONE);
    }
    tmpl_kids_free(&k);
    return NULL;
}

tmpl_node *tmpl_parse(tmpl_arena *a, const tmpl_token *toks, tmpl_value *lits, tmpl_diag *d, const char *tname)
{
    tmpl_parser p = {.arena = a, .t = toks, .lits = lits, .d = d, .tname = tname};
    return tmpl_parse_body(&p, NULL, NULL);
}
