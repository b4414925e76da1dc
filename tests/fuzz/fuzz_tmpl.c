/* Fuzz target: the template engine (generator/template/tmpl.h). The input is a template's text, rendered
 * with a small fixed context of every kind of value; it may include itself ('self.cu'), a
 * template of macros ('inc.cuh') and any embedded template by name. Errors are expected; a
 * crash, a leak, undefined behaviour or a hang is a finding. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "templates.h"
#include "template/tmpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char inc_text[] = "{%- macro twice(x, y=2) -%}{{ x }}{{ x * y }}{%- endmacro -%}\n{% set from_inc = [1, 2.5, 'z'] %}";

static tmpl_source load(void *user, const char *name)
{
    if (strcmp(name, "self.cu") == 0)
        return (tmpl_source){.text = user};
    if (strcmp(name, "inc.cuh") == 0)
        return (tmpl_source){.text = inc_text, .origin = "fuzz/inc.cuh"};
    if (strcmp(name, "broken.cuh") == 0)
        return (tmpl_source){.problem = "fuzz/broken.cuh cannot be read"};
    for (const cg_embedded_template *t = cg_embedded_templates; t->name; ++t)
        if (strcmp(t->name, name) == 0)
            return (tmpl_source){.text = t->text};
    return (tmpl_source){0};
}

static tmpl_value *context(void)
{
    tmpl_value *c = tmpl_map();
    tmpl_set_int(c, "n", 3);
    tmpl_set_int(c, "big", INT64_MAX);
    tmpl_set_int(c, "neg", -5);
    tmpl_set_float(c, "half", 0.5);
    tmpl_set_float(c, "tiny", 1e-45);
    tmpl_set_str(c, "name", "conv");
    tmpl_set_bool(c, "yes", true);
    tmpl_value *xs = tmpl_list();
    for (int i = 1; i <= 4; ++i)
        tmpl_list_push(xs, tmpl_int(i * 10));
    tmpl_map_set(c, "xs", xs);
    tmpl_value *m = tmpl_map();
    tmpl_set_int(m, "zeta", 1);
    tmpl_set_str(m, "mid", "m");
    tmpl_value *d = tmpl_map();
    tmpl_set_bool(d, "pow2", false);
    tmpl_set_int(d, "mul", 0x5555556);
    tmpl_set_int(d, "shift", 3);
    tmpl_map_set(m, "d", d);
    tmpl_map_set(c, "m", m);
    tmpl_map_set(c, "empty", tmpl_list());
    return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tmpl_value *ctx = context(); /* made and freed per input: a reference a render keeps leaks */
    char *text = malloc(size + 1), *out = NULL, err[256];
    if (!text || !ctx) {
        free(text);
        tmpl_unref(ctx);
        return 0;
    }
    memcpy(text, data, size);
    text[size] = '\0';
    if (tmpl_render("fuzz.cu", text, ctx, load, text, &out, err, sizeof err)) {
        if (!out)
            abort(); /* success promises an output */
        free(out);
    } else if (out || !err[0]) {
        abort(); /* failure promises no output and a message */
    }
    free(text);
    tmpl_unref(ctx);
    return 0;
}
