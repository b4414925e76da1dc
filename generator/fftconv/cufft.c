/* The "cufft" algorithm (generator/fftconv/program.c says how the program runs): FFT
 * convolution through cuFFT and cuBLAS, on one basis holding the whole correlation, for
 * stride-1 layers of rank 1 to 3. */
#include <string.h>

#include "fftconv.h"
#include "util.h"

static convgen_status cufft_applicable(const cg_problem *p, convgen_pass pass)
{
    char err[160];
    fft_conv_dim dims[CONVGEN_MAX_RANK];
    if (!fft_conv_dims(p, pass, dims, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "cufft: %s", err);
    return CONVGEN_SUCCESS;
}

static convgen_status cufft_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                     const cg_tuning *tune, cg_generated *out)
{
    lib_spec s;
    fc_spec_init(&s, false);
    convgen_status st = fc_whole_basis(p, pass, tune, &s);
    return st == CONVGEN_SUCCESS ? fc_program(p, pass, t, tune, &s, out) : st;
}

static const cg_knob cufft_knobs[] = {{"fourier", cg_fourier_print, cg_fourier_parse}, {NULL, NULL, NULL}};

const cg_planner cg_cufft_planner = {
    .algo = CONVGEN_ALGO_CUFFT,
    .name = "cufft",
    .flags = CG_PLANNER_SUB_BATCHES,
    .applicable = cufft_applicable,
    .generate = cufft_generate,
    .knobs = cufft_knobs,
};
