/* A cost model of generated programs, for planning without a GPU (AUTO at effort ESTIMATE, and
 * offline): each step's FLOPs and bytes, from what its op describes, over the GPU's FMA rate
 * and memory bandwidth at an efficiency measured for its kind of step, plus a launch cost. It
 * ranks algorithms; it does not predict times to better than a factor of two. */
#ifndef CG_COST_MODEL_H
#define CG_COST_MODEL_H

#include "generate.h"

/* The GPU's ceilings. */
typedef struct cg_rates {
    double flops;       /* fp32 FLOP/s with every lane doing an FMA */
    double bytes;       /* device memory bytes/s, read plus written */
    double launch_s;    /* seconds a kernel launch or library call costs beyond its work */
} cg_rates;

/* An H100 SXM's, as the bench measured them (bench/NOTES.md: 64 TFLOP/s, 3.0 TB/s), scaled to
 * `sm_count` multiprocessors (0: 132). */
cg_rates cg_rates_for(int sm_count);

/* A step's FLOPs and bytes read and written, as the model counts them (kernel headers say them). */
void cg_step_work(const cg_step *st, int sm_count, double *flops, double *bytes);

/* Estimated milliseconds of one run of a generated program. */
double cg_estimate_ms(const cg_generated *g, const cg_rates *rates);

#endif
