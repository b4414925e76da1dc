/* Batched 1-D complex-to-complex FFT kernels rendered from an fft_plan (fbfft's warp
 * transforms): each transform lives in the registers of plan.lanes lanes, register stages are
 * straight-line butterflies, lane stages exchange values with warp shuffles. */
#ifndef CG_FFT_KERNEL_H
#define CG_FFT_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "fft_plan.h"
#include "fft_problem.h"
#include "tmpl.h"
#include "generate.h"

typedef struct fft_spec {
    int n;
    int sign;        /* -1 forward (decimation in frequency), +1 inverse (in time), unscaled */
    bool natural;    /* natural order on the spectrum side; else digit-reversed (fft_plan.h) */
    int64_t batch;   /* transforms, each n contiguous complex floats (interleaved re, im) */
    float scale;     /* outputs are multiplied by it; 0 or 1: not at all */
} fft_spec;

/* Renders the kernel: in0 = input, out = output, both float2[batch][n]. */
convgen_status cg_fft_c2c_kernel(const fft_spec *spec, cg_kernel *out);

/* The plan's part of a template context, shared by the FFT templates (fft_warp.cuh): n, sign,
 * lanes, regs, per_warp, idle_lanes, lane_div, twiddles, stages and lane stages. */
void cg_fft_warp_context(tmpl_value *ctx, const fft_plan *plan, int sign);

/* For each register r: the index of the element lane l holds there, as a C expression in l;
 * natural: the spectrum's natural index, else the position r * lanes + l. */
tmpl_value *cg_fft_positions(const fft_plan *plan, bool natural);

/* The kernels of a batched FFT (fft_kernel.c: C2C; fft_real.c: R2C and C2R). */
convgen_status cg_generate_fft(const cg_fft_problem *p, const cg_target *target, cg_generated *out);
convgen_status cg_fft_real_kernels(const cg_fft_problem *p, const cg_target *target, cg_generated *out);

#endif
