#include "values.h"

#include <stdarg.h>
#include <stdio.h>

#include "magic.h"
#include "problem.h"
#include "util.h"

tmpl_value *cg_value_magic(uint32_t d, int64_t max_dividend)
{
    magic_u32 m;
    if (max_dividend > UINT32_MAX)
        max_dividend = UINT32_MAX;
    if (!magic_u32_gen(d, (uint32_t)max_dividend, &m)) {
        cg_fail(CONVGEN_ERROR_INTERNAL, "no magic number for division by %u up to %lld", d, (long long)max_dividend);
        return NULL;
    }
    tmpl_value *v = tmpl_map();
    tmpl_set_bool(v, "pow2", m.mul == 0);
    tmpl_set_int(v, "mul", m.mul);
    tmpl_set_int(v, "shift", m.shift);
    return v;
}

tmpl_value *cg_value_epilogue(unsigned epilogue, bool applies)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_bool(v, "bias", applies && (epilogue & CG_EPILOGUE_BIAS));
    tmpl_set_bool(v, "relu", applies && (epilogue & CG_EPILOGUE_RELU));
    return v;
}

tmpl_value *cg_value_digits(const char *index, int64_t max_index, int count, const int64_t *sizes,
                            const char *const *names, const char *rest)
{
    tmpl_value *list = tmpl_list();
    char src[32], quot[32];
    snprintf(src, sizeof src, "%s", index);
    int64_t max = max_index;
    bool ok = true;
    for (int i = count - 1, q = 1; i >= 0; --i) {
        tmpl_value *g = tmpl_map();
        tmpl_set_str(g, "name", names[i]);
        tmpl_set_int(g, "size", sizes[i]);
        if (sizes[i] == 1) {
            tmpl_set_str(g, "kind", "zero");
        } else {
            snprintf(quot, sizeof quot, "%s_%d", index, q++);
            tmpl_set_str(g, "kind", "div");
            tmpl_set_str(g, "src", src);
            tmpl_set_str(g, "quot", quot);
            tmpl_value *div = cg_value_magic((uint32_t)sizes[i], max);
            ok &= div != NULL;
            tmpl_map_set(g, "div", div);
            snprintf(src, sizeof src, "%s", quot);
            max /= sizes[i];
        }
        tmpl_list_push(list, g);
    }
    tmpl_value *g = tmpl_map();
    tmpl_set_str(g, "kind", "rest");
    tmpl_set_str(g, "name", rest);
    tmpl_set_str(g, "src", src);
    tmpl_list_push(list, g);
    if (!ok) {
        tmpl_unref(list);
        return NULL;
    }
    return list;
}

void cg_value_line(tmpl_value *lines, const char *fmt, ...)
{
    cg_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    cg_buf_vprintf(&b, fmt, ap);
    va_end(ap);
    tmpl_list_push(lines, tmpl_str(b.data ? b.data : ""));
    cg_buf_free(&b);
}
