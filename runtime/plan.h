/* Plans of one algorithm (plan.c), as the layers above them use them: AUTO (tune.c), which
 * plans its candidates here, and the CLI. plan.c calls nothing of theirs. */
#ifndef CG_PLAN_H
#define CG_PLAN_H

#include "convgen.h"
#include "generate.h"

/* The generator's tuning for plan options (checked), and what it may know of the context's GPU. */
convgen_status plan_tuning_of(const convgen_plan_options *o, cg_tuning *t);
cg_target plan_target_of(const convgen_context *ctx);

/* Sets the options' fields of the knobs a tuning fixes (fourier_size, winograd_m, gemm) to the
 * tuning's: plan_tuning_of's way back, for those fields. */
void plan_options_take_knobs(convgen_plan_options *o, const cg_tuning *t);

/* What a convolution plan request is checked for first, AUTO's too: a place for the plan (*out
 * set to NULL) and options that are valid, as the generator's tuning. */
convgen_status plan_request(const convgen_plan_options *options, convgen_plan **out, cg_tuning *tune);

/* convgen_plan_conv_ex for one algorithm, not AUTO (whose tuner plans through this). */
convgen_status plan_conv_algo(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                              convgen_algo algo, const convgen_plan_options *options, convgen_plan **out);

/* How AUTO chose the plan: `choice` and its candidates (malloc'ed, or NULL; the plan frees them). */
void plan_set_choice(convgen_plan *plan, const convgen_choice *choice, convgen_candidate *candidates);

#endif
