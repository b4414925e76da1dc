/* Fuzz target: the disk cache's entry check (cache_entry_parse, the very check cache_disk_get
 * makes on a file's bytes). The key is the one the header names, so the key check passes
 * whenever the rest can, except for inputs whose size is a multiple of 3, asked for another key
 * (which must then be refused). Checksums would stop every mutation, so an input whose length is odd has both of
 * its checksums made right here first (the payload's over whatever follows the header). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { HEADER = 84, PAYLOAD_SUM_AT = 68, HEADER_SUM_AT = 76 };

static uint64_t get_le(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static void put_le(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *bytes = malloc(size ? size : 1);
    if (!bytes)
        return 0;
    memcpy(bytes, data, size);
    if (size % 2 && size >= HEADER) {
        put_le(bytes + PAYLOAD_SUM_AT, XXH3_64bits(bytes + HEADER, size - HEADER));
        put_le(bytes + HEADER_SUM_AT, XXH3_64bits(bytes, HEADER_SUM_AT));
    }
    cache_key key = {0, 0};
    if (size >= 32)
        key = (cache_key){.hi = get_le(bytes + 16), .lo = get_le(bytes + 24)};
    bool other_key = size % 3 == 0;
    if (other_key)
        key.lo ^= 1;
    cache_kernel k = {0};
    const char *why = NULL;
    char buf[160];
    if (cache_entry_parse(bytes, size, key, &k, &why, buf, sizeof buf)) {
        if (other_key && size >= 32)
            abort(); /* an entry of another key was taken */
        if (!k.cubin || k.cubin_size != size - HEADER || memcmp(k.cubin, bytes + HEADER, k.cubin_size) != 0)
            abort(); /* a valid entry's kernel is exactly its payload */
        cache_kernel_free(&k);
    } else if (!why || k.cubin) {
        abort(); /* a refusal says why and hands out nothing */
    }
    free(bytes);
    return 0;
}
