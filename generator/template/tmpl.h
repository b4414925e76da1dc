/* The template engine: a Jinja subset that renders CUDA skeletons from plain values.
 *
 * Why hand-written: no C Jinja engine is packaged for Debian, and CTPL (the nearest C
 * library) marks statements with {…}, which collides with every brace of CUDA source.
 *
 * Supported (a Jinja subset; `{` and `}` alone are plain text, so CUDA braces pass through):
 *  - {{ expr }}; {# comments #}; whitespace control {%- -%} {{- -}} {#- -#} strips all
 *    whitespace, newlines included, on that side. Jinja's defaults otherwise: no trim_blocks,
 *    no lstrip_blocks (a newline after %} is kept). One difference: the template's trailing
 *    newline is kept (keep_trailing_newline), so emitted files end with one.
 *  - {% for x in xs %}, {% for k, v in m|items %} (unpacks lists; a map iterates its keys in
 *    insertion order) with loop.index, index0, first, last, length, revindex, revindex0;
 *    {% if %}{% elif %}{% else %}{% endif %}; {% set x = expr %}; {% include expr %};
 *    {% macro name(a, b=1) %}...{% endmacro %} called as name(1), name(1, b=2).
 *  - Scopes: {% set %} assigns in the current scope. Each for-loop iteration has its own
 *    scope (a set inside it is gone after the iteration); if-blocks share their enclosing
 *    scope. A macro body sees its arguments, the top-level variables and the context, not its
 *    caller's locals. An include renders in the scope of the {% include %} like C's #include:
 *    it sees the current variables, and its macros and sets stay visible afterwards.
 *  - Values: int (int64), float (double), string ('..' or "..", escapes \n \t \r \\ \" \'),
 *    true/false/True/False, none/None, [lists], {'maps': 1} (string keys), x.key, x['key'],
 *    x[i] (negative i counts from the end).
 *  - Operators, loosest first as in jinja2: `a if c else b` (without else: the empty string);
 *    or; and; not; == != < <= > >= in, not in (chained: a < b < c); + -; ~; * / // %; **
 *    (left-associative); unary - +; |filter; .attr [i] (). int op int stays int except
 *    `/`; // and % floor like Python; int overflow and division by zero are errors;
 *    string + string, string * int, list + list; `~` concatenates printable values; `and`/
 *    `or` return the deciding operand; truthiness as Python. No implicit conversion of
 *    strings or bools in arithmetic.
 *  - Globals range(b), range(a, b), range(a, b, step) (negative step ok, 0 an error), len,
 *    min, max (of a list or of several arguments).
 *  - Filters: f32 (shortest literal that reads back as the same float: 0.5f, 1.0f, -0.0f,
 *    1.1754944e-38f; inf/nan are errors), f64 (the same for double, no suffix), hex (0x1f;
 *    negative is an error), upper, lower, join(sep=''), length, int, float, abs,
 *    default(v[, boolean]) (for unknown variables/keys), indent(n=4) (all lines but the
 *    first; empty lines stay empty, as Jinja), items (a map as [key, value] pairs).
 *  - {{ }} prints ints in decimal, floats with %.17g (use |f32 for kernels), strings as-is,
 *    bools as true/false (C++); none, lists and maps are errors.
 * Unknown variables, keys and filters are errors (no silent undefined). Not supported: tests
 * (`is defined`), {% for %}{% else %}, {% raw %}, {% call %}, extends/blocks, slices, tuples,
 * keyword arguments to filters and globals, {% set %}...{% endset %}.
 * Errors name the template, line and column: "direct.cu:12:5: unknown variable 'tile_m'";
 * inside an include or a macro they name the template that holds the offending text.
 * A render changes the reference counts of the context's values: do not render the same
 * context on two threads at once.
 */
#ifndef CG_TMPL_H
#define CG_TMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tmpl_value tmpl_value;

/* Constructors return a new value with one reference, or NULL when out of memory. */
tmpl_value *tmpl_int(int64_t v);
tmpl_value *tmpl_float(double v);
tmpl_value *tmpl_str(const char *s);
tmpl_value *tmpl_bool(bool v);
tmpl_value *tmpl_list(void);
tmpl_value *tmpl_map(void);

/* Containers take over the caller's reference to `v` (NULL v is ignored and marks the
 * container as failed, so building code can check once at the end with tmpl_ok()). */
void tmpl_list_push(tmpl_value *list, tmpl_value *v);
void tmpl_map_set(tmpl_value *map, const char *key, tmpl_value *v);
/* Shorthands: tmpl_map_set(m, key, tmpl_int(v)) etc. */
void tmpl_set_int(tmpl_value *map, const char *key, int64_t v);
void tmpl_set_float(tmpl_value *map, const char *key, double v);
void tmpl_set_str(tmpl_value *map, const char *key, const char *s);
void tmpl_set_bool(tmpl_value *map, const char *key, bool v);
/* False if any construction inside `v` ran out of memory. */
bool tmpl_ok(const tmpl_value *v);

tmpl_value *tmpl_ref(tmpl_value *v);
void tmpl_unref(tmpl_value *v);

/* What a loader found for an included name: its text, or NULL where there is none; the name
 * errors inside the text carry, where that is not the included name (an override's path, so a
 * line number says which file it counts in); and, for a text that is there but cannot be used
 * (unreadable, a NUL byte), why, naming the file (text NULL then). The strings must stay valid
 * until tmpl_render returns. */
typedef struct tmpl_source {
    const char *text;
    const char *origin;
    const char *problem;
} tmpl_source;

/* Finds the text of an included template by name. */
typedef tmpl_source (*tmpl_load_fn)(void *user, const char *name);

/* Renders template `text` (named `name` in errors) with the variables of map `ctx`.
 * On success *out is a malloc'ed string and the result is true. On failure *out is NULL and
 * `err` holds "name:line:col: message" (truncated to errlen). */
bool tmpl_render(const char *name, const char *text, const tmpl_value *ctx, tmpl_load_fn load,
                 void *load_user, char **out, char *err, size_t errlen);

#endif
