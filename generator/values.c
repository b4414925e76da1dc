#include "values.h"

#include <stdarg.h>

#include "magic.h"
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
