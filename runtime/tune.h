/* The AUTO algorithm: candidates (algorithms and their main tuning parameters), chosen from
 * wisdom, by timing on the device, or by the cost model (convgen.h, convgen_plan_options.effort).
 * tune.c also holds the public convgen_plan_conv_ex, which hands AUTO to the tuner and any other
 * algorithm to plan.c: the tuner is above plans (plan.h) and the checks (verify.c) above it. */
#ifndef CG_TUNE_H
#define CG_TUNE_H

#include "convgen.h"
#include "generate.h"

/* What AUTO chose and the candidates it weighed (malloc'ed; NULL when there were none). */
typedef struct tune_report {
    convgen_choice choice;
    convgen_candidate *candidates;
} tune_report;

/* Plans the layer with the algorithm AUTO chooses; on success *report says how (the caller
 * owns report->candidates). */
convgen_status tune_auto(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                         const convgen_plan_options *options, convgen_plan **out, tune_report *report);

/* AUTO's choice without planning it (nothing compiled): the wisdom's for the context's GPU
 * (offline: any GPU of its architecture), else the cost model's. For build-time kernel sets. */
convgen_status tune_choose(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                           const convgen_plan_options *options, convgen_algo *algo, convgen_plan_options *chosen,
                           convgen_chosen_by *by);

/* "winograd m=4x4 gemm=generated", "fft fourier=64x64 gemm=cublas": the algorithm and its
 * planner's variant string of the options (cg_variant_print), for people (convgen tune and
 * explain, the bench's auto rows, convgen check). */
void tune_describe(convgen_algo algo, const convgen_plan_options *o, int rank, char *buf, size_t size);

#endif
