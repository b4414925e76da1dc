/* The cache key and the kernel record shared by the memory and disk caches (cache.h).
 *
 * The key is XXH3-128 over a serialization of its fields in which every field carries its
 * length, so no two different tuples feed the hash the same bytes ("ab" + "c" and "a" + "bc"
 * differ). xxHash is used header-only (XXH_INLINE_ALL): nothing links libxxhash. */
#include "cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

/* Bumped whenever the key material changes meaning, so old keys cannot collide with new. */
#define CACHE_KEY_DOMAIN "convgen-cache-key-1"

/* Feeds a u64 in little-endian order, so keys agree across hosts sharing a cache folder. */
static void feed_u64(XXH3_state_t *st, uint64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    XXH3_128bits_update(st, b, sizeof b);
}

/* A string as presence flag, length, bytes: NULL, "" and every split of the text differ. */
static void feed_str(XXH3_state_t *st, const char *s)
{
    feed_u64(st, s != NULL);
    if (!s)
        return;
    size_t n = strlen(s);
    feed_u64(st, n);
    XXH3_128bits_update(st, s, n);
}

cache_key cache_key_of(const char *source, const char *arch, const char *options,
                       int nvrtc_major, int nvrtc_minor)
{
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_128bits_reset(&st);
    feed_str(&st, CACHE_KEY_DOMAIN);
    feed_str(&st, source);
    feed_str(&st, arch);
    feed_str(&st, options);
    feed_u64(&st, (uint64_t)(int64_t)nvrtc_major);
    feed_u64(&st, (uint64_t)(int64_t)nvrtc_minor);
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    return (cache_key){.hi = h.high64, .lo = h.low64};
}

void cache_key_hex(cache_key key, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)key.hi, (unsigned long long)key.lo);
}

void cache_kernel_free(cache_kernel *k)
{
    if (!k)
        return;
    free(k->cubin);
    *k = (cache_kernel){0};
}
