/* Looking kernels up in the build's kernel set (kernel_set.h): a binary search by key. */
#include "kernel_set.h"

#include <stdlib.h>
#include <string.h>

static int compare(cache_key key, const cg_set_kernel *k)
{
    if (key.hi != k->key_hi)
        return key.hi < k->key_hi ? -1 : 1;
    return key.lo < k->key_lo ? -1 : key.lo > k->key_lo;
}

static bool enabled(void)
{
    const char *env = getenv("CONVGEN_KERNEL_SET");
    return !env || strcmp(env, "off") != 0;
}

bool kernel_set_get(cache_key key, cache_kernel *out)
{
    if (cg_kernel_set_count == 0 || !enabled())
        return false;
    size_t lo = 0, hi = cg_kernel_set_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare(key, &cg_kernel_set[mid]);
        if (c == 0) {
            const cg_set_kernel *k = &cg_kernel_set[mid];
            if (!(out->cubin = malloc(k->size)))
                return false;
            memcpy(out->cubin, cg_kernel_set_blob + k->offset, k->size);
            out->cubin_size = k->size;
            out->registers = k->registers, out->shared_bytes = k->shared_bytes, out->stack_bytes = k->stack_bytes;
            out->spill_store_bytes = k->spill_store_bytes, out->spill_load_bytes = k->spill_load_bytes;
            out->compile_ms = k->compile_ms;
            return true;
        }
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}
