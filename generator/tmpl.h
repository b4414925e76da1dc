/* The template engine: a Jinja subset that renders CUDA skeletons from plain values.
 *
 * Why hand-written: no C Jinja engine is packaged for Debian, and CTPL (the nearest C
 * library) marks statements with {…}, which collides with every brace of CUDA source.
 *
 * Supported: {{ expr }}, {% for x in xs %} (loop.index, loop.index0, loop.first, loop.last,
 * loop.length; `for k, v in map|items` too), range(a, b, step), {% if %}{% elif %}{% else %},
 * {% set x = expr %}, {# comments #}, whitespace control {%- -%} {{- -}}, {% macro %} /
 * {% call %}-free macro calls, {% include "name" %}; ints, floats, strings, bools, lists,
 * maps; + - * / // % ** (ints and floats), == != < <= > >=, and or not, in, ~ (concatenate),
 * x.attr, x[i], x[key], function-style calls of macros and a few globals (range, len, min,
 * max); filters: f32 (exact round-tripping float literal: 0.5f, -1.0f, 1.17549435e-38f),
 * f64, hex (0x1f), upper, lower, join(sep), length, int, float, abs, default(v), indent(n),
 * items.
 * Errors name the template, line and column: "direct.cu:12:5: unknown variable 'tile_m'".
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

/* Finds the text of an included template by name; returns NULL if there is none. The text
 * must stay valid until tmpl_render returns. */
typedef const char *(*tmpl_load_fn)(void *user, const char *name);

/* Renders template `text` (named `name` in errors) with the variables of map `ctx`.
 * On success *out is a malloc'ed string and the result is true. On failure *out is NULL and
 * `err` holds "name:line:col: message" (truncated to errlen). */
bool tmpl_render(const char *name, const char *text, const tmpl_value *ctx, tmpl_load_fn load,
                 void *load_user, char **out, char *err, size_t errlen);

#endif
