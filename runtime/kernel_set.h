/* Build-time kernel sets: kernels emitted and compiled when the library was built (`convgen
 * generate --embed`, the configured --kernel-set and --arch), embedded in it, and consulted
 * after the memory cache and before the disk cache and NVRTC. A set also carries the wisdom it
 * was generated with, so that AUTO plans on the GPU it was tuned on choose those kernels
 * without timing anything. $CONVGEN_KERNEL_SET=off ignores the set (the bench does, to time
 * the JIT paths). */
#ifndef CG_KERNEL_SET_H
#define CG_KERNEL_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"

/* One compiled kernel of a set: its cache key (jit.c's: source, architecture, options, NVRTC
 * version), compile report, and cubin at `offset` of the set's blob. */
typedef struct cg_set_kernel {
    uint64_t key_hi, key_lo;
    int registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes;
    double compile_ms;
    size_t offset, size;
} cg_set_kernel;

/* Defined by the generated kernel_set.c of the build, or empty (kernel_set_none.c) in the
 * generator that builds it. Sorted by key. */
extern const cg_set_kernel cg_kernel_set[];
extern const size_t cg_kernel_set_count;
extern const unsigned char cg_kernel_set_blob[];
extern const char cg_kernel_set_wisdom[]; /* "" when it has none */

/* The set's kernel of a key, copied into *out (the caller frees it), or false. */
bool kernel_set_get(cache_key key, cache_kernel *out);

#endif
