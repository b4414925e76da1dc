/* The lexer: template text to tokens. Outside tags everything is text, lone braces of CUDA
 * source included; only "{{", "{%" and "{#" open a tag. Whitespace control is applied here:
 * "{%-" trims the text before the tag, "-%}" the text after it (newlines too, as Jinja).
 * A lexical error becomes a TK_ERROR token, so the parser reports errors in source order. */
#include "tmpl_internal.h"

#include <stdlib.h>
#include <string.h>

const char *const tmpl_op_text[OP_COUNT] = {
    [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/", [OP_FLOORDIV] = "//",
    [OP_MOD] = "%", [OP_POW] = "**", [OP_TILDE] = "~", [OP_EQ] = "==", [OP_NE] = "!=",
    [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">", [OP_GE] = ">=", [OP_ASSIGN] = "=",
    [OP_LPAREN] = "(", [OP_RPAREN] = ")", [OP_LBRACKET] = "[", [OP_RBRACKET] = "]",
    [OP_LBRACE] = "{", [OP_RBRACE] = "}", [OP_COMMA] = ",", [OP_DOT] = ".", [OP_COLON] = ":",
    [OP_PIPE] = "|", [OP_IN] = "in", [OP_NOTIN] = "not in", [OP_AND] = "and", [OP_OR] = "or",
    [OP_NOT] = "not", [OP_NEG] = "-", [OP_POS] = "+",
};

typedef struct tmpl_lexer {
    tmpl_arena *arena;
    const char *p, *line_start;
    int line;
    tmpl_token *toks;
    size_t n, cap;
    bool oom;
    bool strip_next; /* the last tag ended with '-' */
} tmpl_lexer;

static bool tmpl_is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }
static bool tmpl_is_digit(char c) { return c >= '0' && c <= '9'; }
static bool tmpl_is_name_start(char c) { return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static bool tmpl_is_name_char(char c) { return tmpl_is_name_start(c) || tmpl_is_digit(c); }

static int tmpl_lex_col(const tmpl_lexer *lx, const char *at) { return (int)(at - lx->line_start) + 1; }

/* Moves past one character, counting lines. */
static void tmpl_lex_step(tmpl_lexer *lx)
{
    if (*lx->p == '\n') {
        lx->line++;
        lx->line_start = lx->p + 1;
    }
    lx->p++;
}

static tmpl_token *tmpl_lex_push(tmpl_lexer *lx, tmpl_tok_kind kind, int line, int col)
{
    if (lx->n == lx->cap) {
        size_t cap = lx->cap ? lx->cap * 2 : 256;
        tmpl_token *t = realloc(lx->toks, cap * sizeof *t);
        if (!t) {
            lx->oom = true;
            return NULL;
        }
        lx->toks = t;
        lx->cap = cap;
    }
    tmpl_token *t = &lx->toks[lx->n++];
    *t = (tmpl_token){.kind = kind, .line = line, .col = col};
    return t;
}

static void tmpl_lex_error(tmpl_lexer *lx, int line, int col, const char *msg)
{
    tmpl_token *t = tmpl_lex_push(lx, TK_ERROR, line, col);
    if (t)
        t->msg = msg;
}

static bool tmpl_is_tag_open(const char *p) { return p[0] == '{' && (p[1] == '{' || p[1] == '%' || p[1] == '#'); }

/* Text up to the next tag, trimmed as the neighbouring tags ask. */
static void tmpl_lex_text(tmpl_lexer *lx)
{
    if (lx->strip_next)
        while (tmpl_is_space(*lx->p))
            tmpl_lex_step(lx);
    lx->strip_next = false;
    const char *start = lx->p;
    int line = lx->line, col = tmpl_lex_col(lx, start);
    for (;;) { /* memchr to the next brace: most of a CUDA template is plain text */
        const char *brace = strchr(lx->p, '{');
        const char *stop = brace ? brace : lx->p + strlen(lx->p);
        for (const char *nl; (nl = memchr(lx->p, '\n', (size_t)(stop - lx->p))); lx->p = nl + 1) {
            lx->line++;
            lx->line_start = nl + 1;
        }
        lx->p = stop;
        if (!brace || tmpl_is_tag_open(brace))
            break;
        lx->p++;
    }
    const char *end = lx->p;
    if (*end && end[2] == '-')
        while (end > start && tmpl_is_space(end[-1]))
            end--;
    if (end > start) {
        tmpl_token *t = tmpl_lex_push(lx, TK_TEXT, line, col);
        if (t) {
            t->str = start;
            t->len = (size_t)(end - start);
        }
    }
}

/* Skips a {# comment #}; false after reporting an unterminated one. */
static bool tmpl_lex_comment(tmpl_lexer *lx)
{
    int line = lx->line, col = tmpl_lex_col(lx, lx->p);
    const char *open = lx->p;
    lx->p += 2;
    while (*lx->p && !(lx->p[0] == '#' && lx->p[1] == '}'))
        tmpl_lex_step(lx);
    if (!*lx->p) {
        tmpl_lex_error(lx, line, col, "unterminated comment");
        return false;
    }
    lx->strip_next = lx->p - open > 2 && lx->p[-1] == '-';
    lx->p += 2;
    return true;
}

static bool tmpl_lex_number(tmpl_lexer *lx, tmpl_token *t)
{
    const char *s = lx->p;
    bool is_float = false;
    while (tmpl_is_digit(*lx->p))
        lx->p++;
    if (lx->p[0] == '.' && tmpl_is_digit(lx->p[1])) {
        is_float = true;
        for (lx->p++; tmpl_is_digit(*lx->p); lx->p++) {}
    }
    if ((*lx->p == 'e' || *lx->p == 'E') &&
        (tmpl_is_digit(lx->p[1]) || ((lx->p[1] == '+' || lx->p[1] == '-') && tmpl_is_digit(lx->p[2])))) {
        is_float = true;
        for (lx->p += 2; tmpl_is_digit(*lx->p); lx->p++) {}
    }
    char *end;
    if (is_float) {
        t->kind = TK_FLOAT;
        t->f = strtod(s, &end);
        return true;
    }
    t->kind = TK_INT;
    for (const char *q = s; q < lx->p; ++q)
        if (__builtin_mul_overflow(t->i, 10, &t->i) || __builtin_add_overflow(t->i, *q - '0', &t->i))
            return false;
    return true;
}

static char tmpl_unescape(char c)
{
    switch (c) {
    case 'n': return '\n';
    case 't': return '\t';
    case 'r': return '\r';
    case '\\': return '\\';
    case '"': return '"';
    case '\'': return '\'';
    default: return 0;
    }
}

/* A quoted string with \n \t \r \\ \" \' escapes (others keep their backslash, as Python). */
static bool tmpl_lex_string(tmpl_lexer *lx, tmpl_token *t)
{
    char quote = *lx->p++;
    cg_buf b = {0};
    for (; *lx->p && *lx->p != quote; tmpl_lex_step(lx)) {
        char c = *lx->p;
        if (c == '\\' && lx->p[1] && tmpl_unescape(lx->p[1])) {
            c = tmpl_unescape(lx->p[1]);
            lx->p++;
        }
        cg_buf_append(&b, &c, 1);
    }
    if (!*lx->p) {
        cg_buf_free(&b);
        return false;
    }
    lx->p++;
    t->kind = TK_STRING;
    t->len = b.len;
    t->str = tmpl_arena_strdup(lx->arena, b.data ? b.data : "", b.len);
    lx->oom |= b.oom || !t->str;
    cg_buf_free(&b);
    return true;
}

static tmpl_op tmpl_lex_op(const char *p, int *len)
{
    static const char *const two[] = {"//", "**", "==", "!=", "<=", ">="};
    static const tmpl_op two_ops[] = {OP_FLOORDIV, OP_POW, OP_EQ, OP_NE, OP_LE, OP_GE};
    for (int i = 0; i < 6; ++i)
        if (p[0] == two[i][0] && p[1] == two[i][1]) {
            *len = 2;
            return two_ops[i];
        }
    *len = 1;
    for (int op = OP_ADD; op <= OP_PIPE; ++op)
        if (tmpl_op_text[op][0] == p[0] && !tmpl_op_text[op][1])
            return (tmpl_op)op;
    return OP_NONE;
}

/* One token inside a tag; false after pushing an error token. */
static bool tmpl_lex_token(tmpl_lexer *lx, int *depth)
{
    int line = lx->line, col = tmpl_lex_col(lx, lx->p);
    tmpl_token *t = tmpl_lex_push(lx, TK_OP, line, col);
    if (!t)
        return false;
    char c = *lx->p;
    if (tmpl_is_name_start(c)) {
        const char *s = lx->p;
        while (tmpl_is_name_char(*lx->p))
            lx->p++;
        t->kind = TK_NAME;
        t->len = (size_t)(lx->p - s);
        t->str = tmpl_arena_strdup(lx->arena, s, t->len);
        lx->oom |= !t->str;
        return true;
    }
    if (tmpl_is_digit(c)) {
        if (tmpl_lex_number(lx, t))
            return true;
        lx->n--;
        tmpl_lex_error(lx, line, col, "integer literal too large");
        return false;
    }
    if (c == '"' || c == '\'') {
        if (tmpl_lex_string(lx, t))
            return true;
        lx->n--;
        tmpl_lex_error(lx, line, col, "unterminated string");
        return false;
    }
    int len;
    t->op = tmpl_lex_op(lx->p, &len);
    if (t->op == OP_NONE) {
        lx->n--;
        tmpl_lex_error(lx, line, col, "unexpected character");
        return false;
    }
    if (t->op == OP_LPAREN || t->op == OP_LBRACKET || t->op == OP_LBRACE)
        ++*depth;
    if ((t->op == OP_RPAREN || t->op == OP_RBRACKET || t->op == OP_RBRACE) && *depth > 0)
        --*depth;
    lx->p += len;
    return true;
}

/* The tokens of a {{ }} or {% %} tag. The closing "}}" counts only outside brackets, so a map
 * literal may end in "}}" as in Jinja. */
static bool tmpl_lex_tag(tmpl_lexer *lx)
{
    bool expr = lx->p[1] == '{';
    char close = expr ? '}' : '%';
    int line = lx->line, col = tmpl_lex_col(lx, lx->p);
    if (!tmpl_lex_push(lx, expr ? TK_EXPR_BEGIN : TK_STMT_BEGIN, line, col))
        return false;
    lx->p += lx->p[2] == '-' ? 3 : 2;
    for (int depth = 0;;) {
        while (tmpl_is_space(*lx->p))
            tmpl_lex_step(lx);
        if (!*lx->p) {
            tmpl_lex_error(lx, line, col, expr ? "unterminated '{{'" : "unterminated '{%'");
            return false;
        }
        bool dash = lx->p[0] == '-';
        const char *q = lx->p + dash;
        if (depth == 0 && q[0] == close && q[1] == '}') {
            if (!tmpl_lex_push(lx, expr ? TK_EXPR_END : TK_STMT_END, lx->line, tmpl_lex_col(lx, lx->p)))
                return false;
            lx->p = q + 2;
            lx->strip_next = dash;
            return true;
        }
        if (!tmpl_lex_token(lx, &depth))
            return false;
    }
}

tmpl_token *tmpl_lex(tmpl_arena *a, const char *text, size_t *count)
{
    tmpl_lexer lx = {.arena = a, .p = text, .line_start = text, .line = 1};
    bool ok = true;
    while (ok && !lx.oom) {
        tmpl_lex_text(&lx);
        if (!*lx.p)
            break;
        ok = lx.p[1] == '#' ? tmpl_lex_comment(&lx) : tmpl_lex_tag(&lx);
    }
    if (ok)
        tmpl_lex_push(&lx, TK_EOF, lx.line, tmpl_lex_col(&lx, lx.p));
    if (lx.oom) {
        free(lx.toks);
        return NULL;
    }
    *count = lx.n;
    return lx.toks;
}
