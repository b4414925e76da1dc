/* Where template text comes from: the copies embedded in the library at build time, or, for
 * tuning by hand, the folder named by CONVGEN_TEMPLATE_DIR (edited templates win). */
#ifndef CG_TEMPLATES_H
#define CG_TEMPLATES_H

#include "convgen.h"
#include "template/tmpl.h"

typedef struct cg_embedded_template {
    const char *name;
    const char *text;
} cg_embedded_template;

/* Provided by the build (build/templates_embedded.c, from templates/). */
extern const cg_embedded_template cg_embedded_templates[];

/* Renders template `name` with `ctx` into *out (malloc'ed). On failure returns
 * CONVGEN_ERROR_TEMPLATE with "name:line:col: ..." in convgen_last_error(), where name is the
 * override's path for a text read from CONVGEN_TEMPLATE_DIR (so the line counts in the file that
 * was used). An override that cannot be read, or has a NUL byte, is such an error naming its
 * path; one that is not a regular file (a folder, a FIFO), or a CONVGEN_TEMPLATE_DIR that is not a
 * folder, is warned about once per process and the embedded copy serves. */
convgen_status cg_render_template(const char *name, const tmpl_value *ctx, char **out);

/* A kernel's source: cg_render_template of `ctx`, which it takes (unrefs), or
 * CONVGEN_ERROR_OUT_OF_MEMORY naming the template where building ctx ran out of memory. */
convgen_status cg_render_kernel(const char *name, tmpl_value *ctx, char **out);

#endif
