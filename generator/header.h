/* The identity lines of every emitted kernel's header (layer, pass and step, FLOPs, the command
 * that emits it again), from the data the kernel was generated from. */
#ifndef CG_HEADER_H
#define CG_HEADER_H

#include <stddef.h>

#include "generate.h"

/* The `convgen emit` command that emits kernel `kernel` (-1: all of them) of this layer, pass,
 * algorithm, target and tuning again, byte for byte. */
void cg_emit_command(const cg_problem *p, convgen_pass pass, convgen_algo algo, const cg_target *t,
                     const cg_tuning *tune, int kernel, char *buf, size_t size);

/* The same for a batched FFT plan's kernel (convgen emit --algo fft ...). */
void cg_fft_emit_command(const cg_fft_problem *p, int kernel, char *buf, size_t size);
convgen_status cg_stamp_fft_headers(cg_generated *g, const cg_fft_problem *p);

/* Adds the identity lines after the title line of each kernel's header comment. */
convgen_status cg_stamp_headers(cg_generated *g, const cg_target *t, const cg_tuning *tune);

#endif
