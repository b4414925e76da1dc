/* Batched 1-D complex-to-complex FFT kernels rendered from an fft_plan (fbfft's warp
 * transforms): each transform lives in the registers of plan.lanes lanes, register stages are
 * straight-line butterflies, lane stages exchange values with warp shuffles. */
#ifndef CG_FFT_KERNEL_H
#define CG_FFT_KERNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "fft_plan.h"
#include "generate.h"

typedef struct fft_spec {
    int n;
    int sign;        /* -1 forward (decimation in frequency), +1 inverse (in time), unscaled */
    bool natural;    /* natural order on the spectrum side; else digit-reversed (fft_plan.h) */
    int64_t batch;   /* transforms, each n contiguous complex floats (interleaved re, im) */
} fft_spec;

/* Renders the kernel: in0 = input, out = output, both float2[batch][n]. */
convgen_status cg_fft_c2c_kernel(const fft_spec *spec, cg_kernel *out);

#endif
