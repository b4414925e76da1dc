/* The resource report read from a cubin itself (an ELF file): registers and stack frame from
 * the .nv.info attributes, shared memory from the kernel's .nv.shared section. The ptxas log
 * is the first source (it also counts spills); this one answers when a log has no report. */
#ifndef CG_CUBIN_H
#define CG_CUBIN_H

#include <stdbool.h>
#include <stddef.h>

#include "cache.h"

/* Fills registers, stack_bytes and shared_bytes of `k` for entry `name`; false if the cubin
 * is malformed or has no such kernel. */
bool cubin_read_report(const void *cubin, size_t size, const char *name, cache_kernel *k);

#endif
