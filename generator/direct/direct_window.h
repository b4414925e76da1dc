/* direct's bprop by sliding windows, for layers with few input channels (direct_window.c). */
#ifndef CG_DIRECT_WINDOW_H
#define CG_DIRECT_WINDOW_H

#include "generate.h"

/* Whether the window kernel takes this pass: bprop, rank 1 or 2, C <= 4, no dilation, and
 * sizes within its 32-bit indices and launch limits; else direct's GEMM does. */
bool cg_direct_window_fits(const cg_problem *p, convgen_pass pass);

/* The one kernel (no workspace) into out->kernels[0]. */
convgen_status cg_direct_window_generate(const cg_problem *p, convgen_pass pass, cg_generated *out);

#endif
