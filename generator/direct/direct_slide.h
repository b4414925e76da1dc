/* direct-window's sliding kernel (direct_slide.c): fprop of layers with few input channels, and
 * their bprop at stride 1, as sums over taps with a block of outputs in each thread's registers.
 * direct_window.c's planner offers it beside its window bprop. */
#ifndef CG_DIRECT_SLIDE_H
#define CG_DIRECT_SLIDE_H

#include "generate.h"

/* CONVGEN_SUCCESS where the sliding kernel takes the layer and pass, else NOT_SUPPORTED with a
 * message saying why. */
convgen_status cg_slide_applicable(const cg_problem *p, convgen_pass pass);

/* Its one kernel into out (kernel_count 1, no workspace), its blocks per multiprocessor sized
 * for the target's shared memory. Two stages take at most 112 KiB, within sm_80's 163 KiB. */
convgen_status cg_slide_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, cg_generated *out);

#endif
