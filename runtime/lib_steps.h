/* The library calls of a plan's steps (cg_step: cuFFT transforms, cuBLAS GEMMs) on a device
 * context. The cuFFT plans, made without a work area of their own, and the cuBLAS handle belong
 * to the context and serve all its plans; their work area is in the executing plan's
 * workspace, behind the generated buffers. */
#ifndef CG_LIB_STEPS_H
#define CG_LIB_STEPS_H

#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "generate.h"

typedef struct lib_steps lib_steps;

/* Sets up every library step of gen; *work_bytes: the work area they need, to be placed at
 * byte `work_offset` of the workspace (256-byte aligned). The context's primary context must
 * be current. */
convgen_status lib_steps_create(convgen_context *ctx, const cg_generated *gen, int64_t work_offset, lib_steps **out,
                                int64_t *work_bytes);
void lib_steps_destroy(lib_steps *ls);
/* Frees what the context's plans shared (cuFFT plans, the cuBLAS handle); its primary context
 * current. */
void lib_steps_release_context(convgen_context *ctx);

/* Runs library step i of gen on `stream` with the plan's operands and workspace; `accumulate`:
 * a GEMM that accumulates adds to its output (a chunk after the first). The primary context
 * must be current. */
convgen_status lib_steps_run(lib_steps *ls, const cg_generated *gen, int i, const void *in0, const void *in1,
                             void *workspace, bool accumulate, convgen_stream stream);

#endif
