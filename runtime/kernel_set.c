/* Looking kernels up in kernel sets (kernel_set.h): the library's own, then the registered ones,
 * each a binary search by key; and convgen_kernel_set_register, which checks a set whole before
 * the library trusts any of it. */
#include "kernel_set.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "wisdom.h"

/* The registered sets, in the order registered. Sets are never removed, so a kernel found
 * stays valid after the lock is released. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const convgen_kernel_set **registered;
static size_t registered_count, registered_cap;

static int compare(cache_key key, const convgen_set_kernel *k)
{
    if (key.hi != k->key_hi)
        return key.hi < k->key_hi ? -1 : 1;
    return key.lo < k->key_lo ? -1 : key.lo > k->key_lo;
}

static const convgen_set_kernel *find(const convgen_kernel_set *set, cache_key key)
{
    size_t lo = 0, hi = set->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare(key, &set->kernels[mid]);
        if (c == 0)
            return &set->kernels[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return NULL;
}

static const convgen_set_kernel *find_registered(cache_key key)
{
    const convgen_set_kernel *k = NULL;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < registered_count && !k; ++i)
        k = find(registered[i], key);
    pthread_mutex_unlock(&lock);
    return k;
}

bool kernel_set_get(cache_key key, cache_kernel *out)
{
    if (!kernel_set_enabled())
        return false;
    const convgen_set_kernel *k = find(&cg_kernel_set, key);
    if (!k && !(k = find_registered(key)))
        return false;
    if (!(out->cubin = malloc(k->cubin_size)))
        return false;
    memcpy(out->cubin, k->cubin, k->cubin_size);
    out->cubin_size = k->cubin_size;
    out->registers = k->registers, out->shared_bytes = k->shared_bytes, out->stack_bytes = k->stack_bytes;
    out->spill_store_bytes = k->spill_store_bytes, out->spill_load_bytes = k->spill_load_bytes;
    out->compile_ms = k->compile_ms;
    return true;
}

/* ---- registering ---- */

/* "sm_90" or "sm_90a"; whether this NVRTC knows it does not matter (its keys then never match). */
static bool arch_ok(const char *arch)
{
    int sm = 0, end = 0;
    return sscanf(arch, "sm_%d%n", &sm, &end) == 1 && sm > 0 && (!arch[end] || strcmp(arch + end, "a") == 0);
}

static convgen_status check_kernel(const convgen_kernel_set *set, size_t i)
{
    const convgen_set_kernel *k = &set->kernels[i];
    if (!k->arch || !arch_ok(k->arch))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "set->kernels[%zu].arch = '%s' must look like sm_90", i,
                       k->arch ? k->arch : "(null)");
    if (!k->cubin)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "set->kernels[%zu].cubin is NULL", i);
    if (k->cubin_size < 4 || memcmp(k->cubin, "\x7f" "ELF", 4) != 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "set->kernels[%zu].cubin (cubin_size = %zu) is not a cubin: %s", i,
                       k->cubin_size, k->cubin_size < 4 ? "too small" : "no ELF header");
    if (i > 0 && compare((cache_key){k->key_hi, k->key_lo}, &set->kernels[i - 1]) <= 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "set->kernels[%zu] (key %016" PRIx64 "%016" PRIx64 ") is not after set->kernels[%zu]: the "
                       "kernels must be sorted by key, each key once", i, k->key_hi, k->key_lo, i - 1);
    return CONVGEN_SUCCESS;
}

/* The whole set, before any of it is used. */
static convgen_status check_set(const convgen_kernel_set *set)
{
    if (!set)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "set is NULL");
    if (set->magic != CONVGEN_KERNEL_SET_MAGIC)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "set->magic = 0x%08x is not CONVGEN_KERNEL_SET_MAGIC (0x%08x): not a kernel set written by "
                       "convgen generate --embed", (unsigned)set->magic, CONVGEN_KERNEL_SET_MAGIC);
    if (set->version != CONVGEN_KERNEL_SET_VERSION)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "set->version = %u is not this library's CONVGEN_KERNEL_SET_VERSION %u: generate the set again "
                       "with this convgen", (unsigned)set->version, CONVGEN_KERNEL_SET_VERSION);
    if (set->count > 0 && !set->kernels)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "set->kernels is NULL, with set->count = %zu", set->count);
    for (size_t i = 0; i < set->count; ++i) {
        convgen_status s = check_kernel(set, i);
        if (s != CONVGEN_SUCCESS)
            return s;
    }
    return set->wisdom && set->wisdom[0] ? wisdom_check_text(set->wisdom, "set->wisdom") : CONVGEN_SUCCESS;
}

static bool is_registered(const convgen_kernel_set *set)
{
    for (size_t i = 0; i < registered_count; ++i)
        if (registered[i] == set)
            return true;
    return false;
}

/* Room for one more set in the list (under `lock`). */
static convgen_status reserve_one(void)
{
    if (registered_count < registered_cap)
        return CONVGEN_SUCCESS;
    size_t cap = registered_cap ? 2 * registered_cap : 8;
    const convgen_kernel_set **grown = realloc(registered, sizeof *grown * cap);
    if (!grown)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory registering a kernel set");
    registered = grown, registered_cap = cap;
    return CONVGEN_SUCCESS;
}

convgen_status convgen_kernel_set_register(const convgen_kernel_set *set)
{
    /* One registration at a time, so that the sets are consulted in the order their wisdom was
     * imported; `lock` alone guards the list, which lookups read meanwhile. */
    static pthread_mutex_t registering = PTHREAD_MUTEX_INITIALIZER;
    convgen_status s = check_set(set);
    if (s != CONVGEN_SUCCESS)
        return s;
    pthread_mutex_lock(&registering);
    pthread_mutex_lock(&lock);
    bool again = is_registered(set) || set == &cg_kernel_set;
    if (!again)
        s = reserve_one(); /* before the wisdom: a set whose wisdom is in is always listed */
    pthread_mutex_unlock(&lock);
    /* the library's set's wisdom and $CONVGEN_WISDOM first, so that this set's fills in over the
     * former and under the latter, whenever the first AUTO plan comes */
    if (!again && s == CONVGEN_SUCCESS) {
        wisdom_load_env();
        if (kernel_set_enabled() && set->wisdom && set->wisdom[0])
            s = wisdom_import_provisional(set->wisdom, "set->wisdom");
    }
    if (!again && s == CONVGEN_SUCCESS) {
        pthread_mutex_lock(&lock);
        registered[registered_count++] = set;
        pthread_mutex_unlock(&lock);
        cg_debug("kernel set %p registered: %zu kernels%s", (const void *)set, set->count,
                 set->wisdom && set->wisdom[0] ? " and wisdom" : "");
    }
    pthread_mutex_unlock(&registering);
    return s;
}
