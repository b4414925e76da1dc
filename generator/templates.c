#include "templates.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Texts read from CONVGEN_TEMPLATE_DIR live as long as one render. */
typedef struct loaded {
    char *texts[16];
    int count;
} loaded;

static const char *embedded_text(const char *name)
{
    for (const cg_embedded_template *t = cg_embedded_templates; t->name; ++t)
        if (strcmp(t->name, name) == 0)
            return t->text;
    return NULL;
}

/* The override folder's copy if there is one, else the embedded copy. */
static const char *load_template(void *user, const char *name)
{
    loaded *l = user;
    const char *dir = getenv("CONVGEN_TEMPLATE_DIR");
    if (dir && *dir && l->count < (int)(sizeof l->texts / sizeof l->texts[0])) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text = cg_read_file(path, (size_t)4 << 20, NULL);
        if (text) {
            cg_debug("template %s from %s", name, path);
            return l->texts[l->count++] = text;
        }
    }
    return embedded_text(name);
}

convgen_status cg_render_template(const char *name, const tmpl_value *ctx, char **out)
{
    loaded l = {0};
    const char *text = load_template(&l, name);
    char err[1024] = "";
    convgen_status s = CONVGEN_SUCCESS;
    *out = NULL;
    if (!text)
        s = cg_fail(CONVGEN_ERROR_TEMPLATE, "template %s not found", name);
    else if (!tmpl_render(name, text, ctx, load_template, &l, out, err, sizeof err))
        s = cg_fail(CONVGEN_ERROR_TEMPLATE, "%s", err);
    for (int i = 0; i < l.count; ++i)
        free(l.texts[i]);
    return s;
}
