/* Runs a layer's plan on the GPU against the CPU float64 reference: random inputs in
 * [-1, 1) (never zeros), output and workspace poisoned with NaN first, so an element the
 * kernels never wrote shows as unwritten. Used by `convgen check` and the GPU tests. */
#ifndef CG_VERIFY_H
#define CG_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "problem.h"
#include "reference.h" /* cg_fill_random, cg_sampled_error */

typedef struct cg_verify_result {
    double rel_error;      /* ||got - ref|| / ||ref|| over the checked elements */
    double max_abs_error;
    int64_t elems;         /* output elements */
    int64_t checked;       /* elements compared with the reference */
    int64_t unwritten;     /* output elements still NaN (poison) after the run: over all elems */
    bool sampled;          /* checked < elems: the reference was evaluated on random points */
    double bound;          /* the largest rel_error an exact-to-fp32 plan of this problem may show
                              (cg_verify_bound) */
    char ran[160];         /* what ran: "winograd m=4x4 gemm=generated" or "auto chose fft
                              fourier=64x64 gemm=generated, from wisdom" */
} cg_verify_result;

/* The relative error bound of a pass: fp32 sums of L products of random-signed terms drift like
 * u sqrt(L) (u = 2^-24), so 4 u sqrt(L) for the reduction length L of the pass, and never below
 * 1e-5, which covers the FFT and Winograd transforms' own rounding on short sums (README's
 * Winograd table: F(6,3) 3.2e-6 at L = 576). A weight gradient of 128 x 31 x 31 products is
 * held to 8.4e-5, a 3x3 fprop of 64 channels to 1e-5. */
double cg_verify_bound(const cg_problem *p, convgen_pass pass);

/* samples < 0: all elements when the reference is cheap (<= 4e8 multiply-adds), else 4096
 * random ones; 0: all; > 0: that many random points. */
/* options: the plan's (NULL: defaults). */
convgen_status cg_verify(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                         convgen_algo algo, const convgen_plan_options *options, unsigned seed, int64_t samples,
                         cg_verify_result *result);

/* cg_verify with the output `out_shift` floats (0 to 3) past a cudaMalloc'd start: 4-byte aligned
 * only, as a caller's pointer into a larger tensor may be. */
convgen_status cg_verify_shifted(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                 convgen_algo algo, const convgen_plan_options *options, unsigned seed,
                                 int64_t samples, int out_shift, cg_verify_result *result);

/* The weights prepared once (convgen_prepare_weights), their device copy then poisoned, and two
 * random inputs run on them (convgen_execute_prepared), each against the reference with the
 * same weights: the result is the worse run's (unwritten: both runs' together). options: the
 * plan's (NULL: defaults). */
convgen_status cg_verify_prepared(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                  convgen_algo algo, const convgen_plan_options *options, unsigned seed,
                                  cg_verify_result *result);

#endif
