/* The process-wide memory cache (cache.h): an open-addressing table with linear probing,
 * keyed by the 128-bit key, holding private copies of kernels behind one mutex.
 *
 * Entries are never removed one by one (only cache_mem_clear drops them all), so probing needs
 * no tombstones. The key is already a uniform hash, so its low bits pick the slot directly.
 * Copies are made outside the lock on put and inside it on get (the entry may be replaced by a
 * concurrent put as soon as the lock is released). */
#include "cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct mem_slot {
    bool used;
    cache_key key;
    cache_kernel kernel;
} mem_slot;

static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static mem_slot *mem_slots;
static size_t mem_cap, mem_count; /* mem_cap is 0 or a power of two */

#define MEM_MIN_CAP 64

/* A deep copy; malloc(0) may return NULL, so an empty cubin still gets one byte. */
static bool kernel_copy(cache_kernel *dst, const cache_kernel *src)
{
    *dst = *src;
    dst->cubin = malloc(src->cubin_size ? src->cubin_size : 1);
    if (!dst->cubin) {
        *dst = (cache_kernel){0};
        return false;
    }
    if (src->cubin_size)
        memcpy(dst->cubin, src->cubin, src->cubin_size);
    return true;
}

static bool key_equal(cache_key a, cache_key b) { return a.hi == b.hi && a.lo == b.lo; }

/* The slot holding `key`, or the empty slot where it would go. Needs mem_cap > mem_count. */
static mem_slot *slot_find(mem_slot *slots, size_t cap, cache_key key)
{
    size_t i = (size_t)key.lo & (cap - 1);
    while (slots[i].used && !key_equal(slots[i].key, key))
        i = (i + 1) & (cap - 1);
    return &slots[i];
}

/* Doubles the table (or makes the first one) so it stays at most half full: short probes. */
static bool mem_grow(void)
{
    size_t cap = mem_cap ? mem_cap * 2 : MEM_MIN_CAP;
    mem_slot *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return false;
    for (size_t i = 0; i < mem_cap; i++)
        if (mem_slots[i].used)
            *slot_find(slots, cap, mem_slots[i].key) = mem_slots[i];
    free(mem_slots);
    mem_slots = slots;
    mem_cap = cap;
    return true;
}

bool cache_mem_get(cache_key key, cache_kernel *out)
{
    bool hit = false;
    pthread_mutex_lock(&mem_lock);
    if (mem_cap) {
        mem_slot *s = slot_find(mem_slots, mem_cap, key);
        hit = s->used && kernel_copy(out, &s->kernel);
    }
    pthread_mutex_unlock(&mem_lock);
    return hit;
}

/* Puts `copy` (already owned) into the table; on failure the caller still owns it. */
static bool mem_insert(cache_key key, cache_kernel *copy)
{
    if ((mem_count + 1) * 2 > mem_cap && !mem_grow())
        return false;
    mem_slot *s = slot_find(mem_slots, mem_cap, key);
    if (s->used) {
        cache_kernel_free(&s->kernel); /* same key, same bytes: keep the newest copy */
    } else {
        s->used = true;
        s->key = key;
        mem_count++;
    }
    s->kernel = *copy;
    return true;
}

bool cache_mem_put(cache_key key, const cache_kernel *k)
{
    cache_kernel copy;
    if (!kernel_copy(&copy, k))
        return false;
    pthread_mutex_lock(&mem_lock);
    bool ok = mem_insert(key, &copy);
    pthread_mutex_unlock(&mem_lock);
    if (!ok)
        cache_kernel_free(&copy);
    return ok;
}

static uint64_t generation;

uint64_t cache_mem_generation(void)
{
    pthread_mutex_lock(&mem_lock);
    uint64_t g = generation;
    pthread_mutex_unlock(&mem_lock);
    return g;
}

void cache_mem_clear(void)
{
    pthread_mutex_lock(&mem_lock);
    ++generation;
    for (size_t i = 0; i < mem_cap; i++)
        if (mem_slots[i].used)
            cache_kernel_free(&mem_slots[i].kernel);
    free(mem_slots);
    mem_slots = NULL;
    mem_cap = mem_count = 0;
    pthread_mutex_unlock(&mem_lock);
}
