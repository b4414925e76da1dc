/* The kernel cache: compiled kernels keyed by a hash of everything that decides their bytes
 * (emitted source, target architecture, compile options, NVRTC version).
 *
 * Two levels live here: a process-wide memory cache (thread-safe) and a disk cache of one
 * file per kernel. The JIT module asks memory, then disk, then compiles with NVRTC and
 * stores the result in both. */
#ifndef CG_CACHE_H
#define CG_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 128-bit XXH3 of the key material. */
typedef struct cache_key {
    uint64_t hi, lo;
} cache_key;

cache_key cache_key_of(const char *source, const char *arch, const char *options,
                       int nvrtc_major, int nvrtc_minor);
/* 32 lowercase hex digits and a NUL. */
void cache_key_hex(cache_key key, char out[33]);

/* A compiled kernel: its cubin and the compile report. */
typedef struct cache_kernel {
    void *cubin;
    size_t cubin_size;
    int registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes;
    double compile_ms;
} cache_kernel;

/* Frees the cubin and zeroes the struct. */
void cache_kernel_free(cache_kernel *k);

/* ---- memory ---- */
/* On a hit, fills *out with a copy (the caller frees it with cache_kernel_free). */
bool cache_mem_get(cache_key key, cache_kernel *out);
/* Stores a copy; false only if out of memory. */
bool cache_mem_put(cache_key key, const cache_kernel *k);
/* Drops every entry (tests and the bench use it to measure the disk cache). The cache is
 * unbounded: a process holds every kernel it compiled, a few tens of KiB each. */
void cache_mem_clear(void);
/* Counts the clears: the contexts' plan caches (plan_cache.c) drop what was made before one. */
uint64_t cache_mem_generation(void);

/* ---- disk ----
 * Entry file <dir>/<first 2 hex digits>/<32 hex digits>.cgk: a header (magic "CGKERNEL",
 * format version, key, the report fields, payload length, payload checksum, header checksum)
 * then the cubin. Written to a temporary file in the same folder and renamed into place, so a
 * reader sees either nothing or a whole entry; two writers of one key both succeed and leave
 * one valid entry. An entry that is truncated, corrupted, of another format version or of
 * another key is removed and reported as a miss, never loaded. */
typedef struct cache_disk cache_disk;

/* The folder: `dir` if not NULL, else $CONVGEN_CACHE_DIR, else $XDG_CACHE_HOME/convgen, else
 * $HOME/.cache/convgen. Returns NULL if caching to disk is off ($CONVGEN_CACHE_DIR=off) or no
 * folder can be named. If the folder cannot be created or written, one warning is logged
 * (cg_warn) and the returned cache only reads. */
cache_disk *cache_disk_open(const char *dir);
void cache_disk_close(cache_disk *d);
const char *cache_disk_dir(const cache_disk *d);
bool cache_disk_writable(const cache_disk *d);

bool cache_disk_get(cache_disk *d, cache_key key, cache_kernel *out);
/* Best effort: a failed write logs one warning per cache and is otherwise ignored. */
void cache_disk_put(cache_disk *d, cache_key key, const cache_kernel *k);

/* Checks the bytes of a whole entry file as cache_disk_get checks the file (header, format,
 * key, lengths, checksums). True: *out holds a copy of the kernel (cache_kernel_free). False:
 * *why says what is wrong (a constant, or written to buf). The fuzz target's entry point. */
bool cache_entry_parse(const void *bytes, size_t size, cache_key key, cache_kernel *out, const char **why,
                       char *buf, size_t buf_size);

/* The entry path of a key (for tests that damage entries); malloc'ed. */
char *cache_disk_entry_path(const cache_disk *d, cache_key key);

#endif
