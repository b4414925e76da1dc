/* Internals of the template engine, shared by its files:
 *   tmpl_value.c   values, lists, maps (insertion-ordered, hashed), reference counts
 *   tmpl_lex.c     text and tags to tokens, whitespace control, comments
 *   tmpl_parse.c   tokens to a tree of statements and expressions
 *   tmpl_eval.c    expressions: operators, attributes, indexes, calls
 *   tmpl_filters.c filters (f32, hex, join, ...) and the globals range/len/min/max
 *   tmpl.c         statements, scopes, macros, includes, errors, tmpl_render
 * Everything a parse allocates lives in an arena freed with its template, so a failed parse
 * frees with one call. */
#ifndef CG_TMPL_INTERNAL_H
#define CG_TMPL_INTERNAL_H

#include <stdarg.h>

#include "tmpl.h"
#include "util.h"

/* ---- values ---- */

typedef enum tmpl_kind {
    TMPL_NONE, TMPL_BOOL, TMPL_INT, TMPL_FLOAT, TMPL_STR, TMPL_LIST, TMPL_MAP,
    TMPL_MACRO, /* a {% macro %} bound to the template that defined it */
    TMPL_LOOP,  /* the `loop` variable of a for loop */
} tmpl_kind;

typedef struct tmpl_entry {
    char *key;
    tmpl_value *v;
} tmpl_entry;

struct tmpl_node;

struct tmpl_value {
    int rc;
    tmpl_kind kind;
    bool failed; /* a container that lost an element to out-of-memory */
    union {
        bool b;
        int64_t i;
        double f;
        struct { char *s; size_t len; } str;
        struct { tmpl_value **items; size_t len, cap; } list;
        struct { tmpl_entry *entries; size_t len, cap; uint32_t *slots; size_t nslots; } map;
        struct { const struct tmpl_node *node; const char *tname; } macro;
        struct { int64_t index0, length; } loop;
    } u;
};

tmpl_value *tmpl_none(void);
tmpl_value *tmpl_str_n(const char *s, size_t n);
/* Takes over a malloc'ed NUL-terminated string of length n (frees it when out of memory). */
tmpl_value *tmpl_str_take(char *s, size_t n);
tmpl_value *tmpl_macro_value(const struct tmpl_node *node, const char *tname);
tmpl_value *tmpl_loop_value(int64_t index0, int64_t length);
/* The value under `key`, borrowed, or NULL. */
tmpl_value *tmpl_map_get(const tmpl_value *map, const char *key);
const char *tmpl_kind_name(tmpl_kind k);
/* strcmp(a, b) == 0, skipping the call when the first characters differ (lookups are hot). */
static inline bool tmpl_streq(const char *a, const char *b) { return a[0] == b[0] && __builtin_strcmp(a, b) == 0; }
bool tmpl_truthy(const tmpl_value *v);
bool tmpl_equal(const tmpl_value *a, const tmpl_value *b);

/* ---- tokens ---- */

typedef enum tmpl_tok_kind {
    TK_EOF, TK_TEXT, TK_EXPR_BEGIN, TK_EXPR_END, TK_STMT_BEGIN, TK_STMT_END,
    TK_NAME, TK_INT, TK_FLOAT, TK_STRING, TK_OP, TK_ERROR,
} tmpl_tok_kind;

typedef enum tmpl_op {
    OP_NONE,
    /* binary, in the order of tmpl_op_text */
    OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_FLOORDIV, OP_MOD, OP_POW, OP_TILDE,
    OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
    /* punctuation */
    OP_ASSIGN, OP_LPAREN, OP_RPAREN, OP_LBRACKET, OP_RBRACKET, OP_LBRACE, OP_RBRACE,
    OP_COMMA, OP_DOT, OP_COLON, OP_PIPE,
    /* keyword operators, only in the tree */
    OP_IN, OP_NOTIN, OP_AND, OP_OR, OP_NOT, OP_NEG, OP_POS,
    OP_COUNT
} tmpl_op;

extern const char *const tmpl_op_text[OP_COUNT];

typedef struct tmpl_token {
    tmpl_tok_kind kind;
    tmpl_op op;
    int line, col;
    const char *str; /* TEXT: into the source; NAME, STRING: NUL-terminated in the arena */
    size_t len;
    int64_t i;
    double f;
    const char *msg; /* TK_ERROR */
} tmpl_token;

/* ---- arena ---- */

typedef struct tmpl_chunk tmpl_chunk;
typedef struct tmpl_arena {
    tmpl_chunk *head;
} tmpl_arena;

void *tmpl_arena_alloc(tmpl_arena *a, size_t n);
char *tmpl_arena_strdup(tmpl_arena *a, const char *s, size_t n);
void tmpl_arena_free(tmpl_arena *a);

/* Splits `text` into a malloc'ed array of tokens ending with TK_EOF or TK_ERROR; names and
 * strings go to the arena. NULL only when out of memory. */
tmpl_token *tmpl_lex(tmpl_arena *a, const char *text, size_t *count);

/* ---- tree ---- */

typedef enum tmpl_node_kind {
    /* expressions */
    E_LIT, E_NAME, E_LIST, E_MAP, E_ATTR, E_INDEX, E_CALL, E_FILTER, E_UNARY, E_BINARY,
    E_COMPARE, E_COND,
    /* statements */
    S_BLOCK, S_TEXT, S_OUTPUT, S_FOR, S_IF, S_SET, S_MACRO, S_INCLUDE,
} tmpl_node_kind;

/* One shape for every node; what kids and names hold depends on the kind:
 *   E_LIT value        E_NAME str       E_LIST kids=items     E_MAP kids=key,value,key,...
 *   E_ATTR kids[0] . str                E_INDEX kids[0] [ kids[1] ]
 *   E_CALL kids[0] ( kids[1..] ), names[i] = keyword of kids[i] or NULL (names[0] NULL)
 *   E_FILTER kids[0] | str ( kids[1..] ), names as E_CALL E_UNARY op kids[0]  E_BINARY kids[0] op kids[1]
 *   E_COMPARE kids[0] ops[0] kids[1] ops[1] kids[2] ...   (chained like Python)
 *   E_COND kids[1] if kids[0] else kids[2] (nkids 2 without else)
 *   S_BLOCK kids=statements   S_TEXT str,len   S_OUTPUT kids[0]
 *   S_FOR names=targets in kids[0], body kids[1]
 *   S_IF kids[0] then kids[1] else kids[2] (an S_BLOCK or, for elif, an S_IF)
 *   S_SET str = kids[0]       S_INCLUDE kids[0]
 *   S_MACRO str ( names ), body kids[0], default of names[i] in kids[1+i] or NULL
 * line/col: the token an error about this node points at. */
typedef struct tmpl_node {
    tmpl_node_kind kind;
    tmpl_op op;
    int line, col;
    int nkids, nnames;
    struct tmpl_node **kids;
    const char **names;
    tmpl_op *ops;
    const char *str;
    size_t len;
    tmpl_value *value;
    int filter; /* E_FILTER: index from tmpl_filter_index */
} tmpl_node;

/* ---- errors ---- */

typedef struct tmpl_diag {
    char *err;
    size_t errlen;
    bool failed;
    bool undefined; /* the error is an unknown name or key, which |default may absorb */
} tmpl_diag;

/* Records "tname:line:col: message" unless an error is already recorded. */
void tmpl_fail(tmpl_diag *d, const char *tname, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Parses tokens into an S_BLOCK; NULL after reporting an error. Literal values are pushed on
 * `lits` (a list) so that the template can release them. */
tmpl_node *tmpl_parse(tmpl_arena *a, const tmpl_token *toks, tmpl_value *lits, tmpl_diag *d,
                      const char *tname);

/* ---- evaluation ---- */

typedef struct tmpl_var {
    const char *name;
    tmpl_value *v;
} tmpl_var;

/* Variables of one level: the render's root, a loop iteration, a macro call. */
typedef struct tmpl_scope {
    struct tmpl_scope *parent;
    tmpl_var *vars;
    int n, cap;
    tmpl_var inline_vars[6];
} tmpl_scope;

typedef struct tmpl_parsed tmpl_parsed;

typedef struct tmpl_state {
    tmpl_diag diag;
    const char *tname; /* the template whose nodes are being evaluated */
    const tmpl_value *ctx;
    tmpl_scope *scope, *root;
    tmpl_load_fn load;
    void *load_user;
    tmpl_parsed *parsed;
    int include_depth, call_depth;
    int64_t steps; /* loop iterations, macro calls and includes so far (tmpl_step) */
    cg_buf *out;
} tmpl_state;

void tmpl_scope_init(tmpl_scope *s, tmpl_scope *parent);
void tmpl_scope_free(tmpl_scope *s);
/* Binds name to v in s (taking the reference); false when out of memory. */
bool tmpl_scope_set(tmpl_scope *s, const char *name, tmpl_value *v);
/* The variable `name` seen from the current scope (scopes, then the context), borrowed. */
tmpl_value *tmpl_lookup(tmpl_state *st, const char *name);

/* Evaluates an expression to a new reference, or NULL after reporting an error. */
tmpl_value *tmpl_eval(tmpl_state *st, const tmpl_node *n);
/* Appends v as {{ }} prints it; false (reported at n) for lists, maps, none. */
bool tmpl_print(tmpl_state *st, const tmpl_node *n, const tmpl_value *v, cg_buf *b);
/* Calls a macro with evaluated arguments; returns its output as a string. */
tmpl_value *tmpl_call_macro(tmpl_state *st, const tmpl_node *call, const tmpl_value *macro,
                            tmpl_value **args, int nargs);
tmpl_value *tmpl_apply_filter(tmpl_state *st, const tmpl_node *n);
tmpl_value *tmpl_call_global(tmpl_state *st, const tmpl_node *n, tmpl_value **args, int nargs);
bool tmpl_is_global(const char *name);
/* The filter's index in the table, or -1: resolved once when parsing. */
int tmpl_filter_index(const char *name);
/* a op b for op in < <= > >= on two numbers or two strings; false after reporting others. */
bool tmpl_less(tmpl_state *st, const tmpl_node *n, tmpl_op op, const tmpl_value *a, const tmpl_value *b, bool *res);
tmpl_value *tmpl_fail_value(tmpl_state *st, const tmpl_node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* False (with the error) for a text of `len` bytes over the longest a render may make. */
bool tmpl_text_fits(tmpl_state *st, const tmpl_node *n, size_t len);

/* Shortest decimal of a float/double that reads back bit-identically; false for inf/nan. */
bool tmpl_format_f32(float f, char *buf, size_t size);
bool tmpl_format_f64(double f, char *buf, size_t size);

#endif
