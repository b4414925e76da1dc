/* Batched FFT kernels rendered from an fft_plan (fbfft's warp transforms): each transform lives
 * in the registers of plan.lanes lanes, register stages are straight-line butterflies, lane
 * stages exchange values with warp shuffles. The family's entry points; fft_warp.h has the
 * pieces its kernels share. */
#ifndef CG_FFT_KERNEL_H
#define CG_FFT_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "fft_plan.h"
#include "fft_problem.h"
#include "generate.h"

/* Renders the 1-D C2C kernel of a rank 1 C2C problem: in0 = input, out0 = output. */
convgen_status cg_fft_c2c_kernel(const cg_fft_problem *p, cg_kernel *out);

/* The kernels of a batched FFT (fft_kernel.c: 1-D C2C; fft_real.c: R2C, C2R and 2-D C2C). */
convgen_status cg_generate_fft(const cg_fft_problem *p, const cg_target *target, cg_generated *out);
/* fft_real.c's: R2C, C2R and 2-D C2C. */
convgen_status cg_fft_real_kernels(const cg_fft_problem *p, const cg_target *target, cg_generated *out);
/* fft_volume.c's: rank 3, a plane stage (fft_real.c's kernel over planes) and a depth pass, as
 * two kernel steps; the inverse keeps the window's planes in the workspace between them. */
convgen_status cg_fft_volume_kernels(const cg_fft_problem *p, const cg_target *target, cg_generated *out);
/* fft_cube.c's: rank 3 R2C and C2R of volumes small enough for one pass on chip (n <= 28 where a
 * block may have the H100's shared memory), one kernel whose one step's op is the whole problem. */
bool cg_fft_cube_applies(const cg_fft_problem *p, const cg_target *target);
convgen_status cg_fft_cube_kernel(const cg_fft_problem *p, const cg_target *target, cg_generated *out);

#endif
