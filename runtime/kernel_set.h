/* Kernel sets: kernels emitted and compiled ahead of time, consulted after the memory cache and
 * before the disk cache and NVRTC. The library's own set is the build's (the configured
 * --kernel-set and --arch, through `convgen embed-set`), linked in; a program adds its own with
 * convgen_kernel_set_register (convgen.h; `convgen generate --embed` writes them). Both are a
 * convgen_kernel_set. A set also carries the wisdom it was generated with, so that AUTO plans
 * on the GPU it was tuned on choose those kernels without timing anything.
 * $CONVGEN_KERNEL_SET=off ignores every set (the bench does, to time the JIT paths). */
#ifndef CG_KERNEL_SET_H
#define CG_KERNEL_SET_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "convgen.h"

/* The library's own set: defined by the generated kernel_set.c of the build, or empty
 * (kernel_set_none.c) in the generator that builds it. */
extern const convgen_kernel_set cg_kernel_set;

/* Whether sets are consulted at all ($CONVGEN_KERNEL_SET is not "off"). Inline: the wisdom asks
 * it too, and kernel_set.c uses the wisdom (no circle between the two files). */
static inline bool kernel_set_enabled(void)
{
    const char *env = getenv("CONVGEN_KERNEL_SET");
    return !env || strcmp(env, "off") != 0;
}

/* The kernel of a key from the library's set or a registered one, copied into *out (the caller
 * frees it), or false. */
bool kernel_set_get(cache_key key, cache_kernel *out);

#endif
