/* Kernels from source to cubin: memory cache, then the build's kernel set, then disk cache, then NVRTC. Works with no GPU
 * and no driver (NVRTC does not need one). */
#ifndef CG_JIT_H
#define CG_JIT_H

#include <stdbool.h>

#include "cache.h"
#include "convgen.h"

/* Checks that NVRTC can target `arch` ("sm_90"); the error names the field. */
convgen_status jit_check_arch(const char *arch);

/* The cubin and compile report of kernel `name` in `source` for `arch` (sm_90a where arch is sm_90
 * and the source needs sm_90a's instructions: jit.c). `disk` may be NULL.
 * On a compile error returns CONVGEN_ERROR_COMPILE with NVRTC's log kept for
 * convgen_last_compile_log(). */
convgen_status jit_get(const char *source, const char *name, const char *arch, cache_disk *disk,
                       cache_kernel *out, convgen_kernel_origin *origin);

/* One kernel of a batch for jit_get_all: in, its source and entry point; out, what jit_get
 * gives and, where it failed, its message and NVRTC log (jit_get keeps those per thread). */
typedef struct jit_job {
    const char *source, *name;
    cache_kernel compiled;
    convgen_kernel_origin origin;
    convgen_status status;
    char *message, *log;
} jit_job;

/* jit_get for every job, on every core at once (NVRTC compiles one program per thread). */
void jit_get_all(jit_job *jobs, int count, const char *arch, cache_disk *disk);
/* A failed job's error raised again on the caller's thread (message and log); its status. */
convgen_status jit_job_fail(const jit_job *job);
/* Frees what a job holds (its cubin, message and log). */
void jit_job_free(jit_job *job);

/* The cache key of a kernel's source for `arch`: everything that decides its cubin (the
 * source, the architecture, the compile options, NVRTC's version). */
cache_key jit_key(const char *source, const char *arch);
/* NVRTC's version and the compile options, one line: what besides a source and an architecture
 * decides a cubin (the build's kernel set recompiles when it changes). */
void jit_compiler_text(char *buf, size_t size);

/* Fills the report fields of `k` from ptxas' verbose log for entry `name`; false if the log
 * has no report for it. */
bool jit_parse_report(const char *log, const char *name, cache_kernel *k);

#endif
