#include "templates.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

/* An override is an editor's tool: a few hundred KiB at most; far more is a wrong path. */
#define MAX_OVERRIDE_BYTES ((size_t)4 << 20)

/* One name looked up in CONVGEN_TEMPLATE_DIR during a render: the override's text, or none (the
 * embedded copy serves), or why the file that is there cannot be used. Each name is read once
 * per render, so a template included a hundred times is one read and one parse. */
typedef struct override {
    char *name, *path, *text, *problem;
} override;

typedef struct loaded {
    const char *dir; /* the override folder, NULL when none is set (or it is not a folder) */
    override *v;
    int count, cap;
} loaded;

static const char *embedded_text(const char *name)
{
    for (const cg_embedded_template *t = cg_embedded_templates; t->name; ++t)
        if (strcmp(t->name, name) == 0)
            return t->text;
    return NULL;
}

/* A warning once per process for each `key` (a path): renders repeat, the warning need not. */
static void warn_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn_once(const char *key, const char *fmt, ...)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char *warned[64];
    static int count;
    bool first = true;
    pthread_mutex_lock(&lock);
    for (int i = 0; i < count && first; ++i)
        first = strcmp(warned[i], key) != 0;
    char *copy = first && count < (int)(sizeof warned / sizeof warned[0]) ? cg_strdup(key) : NULL;
    if (copy)
        warned[count++] = copy;
    else if (first && count == (int)(sizeof warned / sizeof warned[0]))
        first = false; /* 64 distinct paths warned already: the rest are quiet (out of memory: warned
                          again next time) */
    pthread_mutex_unlock(&lock);
    if (!first)
        return;
    cg_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    cg_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    if (!b.oom)
        cg_warn("%s", b.data);
    cg_buf_free(&b);
}

/* CONVGEN_TEMPLATE_DIR when it names a folder; a name that is not one is warned about (once). */
static const char *override_dir(void)
{
    const char *dir = getenv("CONVGEN_TEMPLATE_DIR");
    struct stat st;
    if (!dir || !*dir)
        return NULL;
    int r = stat(dir, &st);
    if (r != 0 || !S_ISDIR(st.st_mode)) {
        warn_once(dir, "CONVGEN_TEMPLATE_DIR=%s is not a folder (%s): the embedded templates are used", dir,
                  r != 0 ? strerror(errno) : "not a directory");
        return NULL;
    }
    return dir;
}

/* Reads DIR/name into `o`: the text, or no text (ENOENT: not overridden; not a regular file:
 * warned about and not overridden), or a problem (unreadable, too large, a NUL byte). */
static void override_read(const char *dir, override *o)
{
    cg_buf p = {0};
    cg_buf_printf(&p, "%s/%s", dir, o->name);
    o->path = cg_buf_take(&p);
    if (!o->path)
        return;
    size_t size = 0;
    errno = 0;
    o->text = cg_read_file(o->path, MAX_OVERRIDE_BYTES, &size);
    int err = errno;
    cg_buf why = {0};
    if (!o->text && err == EINVAL)
        warn_once(o->path, "template override %s is not a regular file: the embedded %s is used", o->path, o->name);
    else if (!o->text && err != ENOENT && err != ENOTDIR)
        cg_buf_printf(&why, "cannot read %s: %s", o->path, cg_read_error(err ? err : EIO));
    else if (o->text && memchr(o->text, '\0', size))
        cg_buf_printf(&why, "%s has a NUL byte at offset %zu (templates are text)", o->path,
                      (size_t)((char *)memchr(o->text, '\0', size) - o->text));
    if (why.len) {
        free(o->text);
        o->text = NULL;
        o->problem = cg_buf_take(&why);
    }
    cg_buf_free(&why);
    if (o->text)
        cg_debug("template %s from %s", o->name, o->path);
}

/* The override of `name` in l->dir, read on first use; NULL when out of memory. */
static const override *override_of(loaded *l, const char *name)
{
    for (int i = 0; i < l->count; ++i)
        if (strcmp(l->v[i].name, name) == 0)
            return &l->v[i];
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 8;
        override *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v)
            return NULL;
        l->v = v, l->cap = cap;
    }
    override *o = &l->v[l->count];
    *o = (override){.name = cg_strdup(name)};
    if (!o->name)
        return NULL;
    l->count++;
    override_read(l->dir, o);
    return o;
}

/* The override folder's copy if there is one, else the embedded copy. */
static tmpl_source load_template(void *user, const char *name)
{
    loaded *l = user;
    if (l->dir) {
        const override *o = override_of(l, name);
        if (!o)
            return (tmpl_source){.problem = "out of memory reading a template override"};
        if (o->text || o->problem)
            return (tmpl_source){.text = o->text, .origin = o->path, .problem = o->problem};
    }
    return (tmpl_source){.text = embedded_text(name)};
}

convgen_status cg_render_template(const char *name, const tmpl_value *ctx, char **out)
{
    loaded l = {.dir = override_dir()};
    tmpl_source src = load_template(&l, name);
    char err[1024] = "";
    convgen_status s = CONVGEN_SUCCESS;
    *out = NULL;
    if (!src.text)
        s = src.problem ? cg_fail(CONVGEN_ERROR_TEMPLATE, "template %s cannot be used: %s", name, src.problem)
                        : cg_fail(CONVGEN_ERROR_TEMPLATE, "template %s not found", name);
    else if (!tmpl_render(src.origin ? src.origin : name, src.text, ctx, load_template, &l, out, err, sizeof err))
        s = cg_fail(CONVGEN_ERROR_TEMPLATE, "%s", err);
    for (int i = 0; i < l.count; ++i) {
        free(l.v[i].name);
        free(l.v[i].path);
        free(l.v[i].text);
        free(l.v[i].problem);
    }
    free(l.v);
    return s;
}

convgen_status cg_render_kernel(const char *name, tmpl_value *ctx, char **out)
{
    convgen_status s = tmpl_ok(ctx) ? cg_render_template(name, ctx, out)
                                    : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building the context of %s", name);
    tmpl_unref(ctx);
    return s;
}
