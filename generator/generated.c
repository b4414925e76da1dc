/* A planner's output, cg_generated (generate.h): freeing it, and whether its weights can be
 * prepared once. The planners use these, so this file uses no planner. */
#include <stdlib.h>
#include <string.h>

#include "generate.h"

void cg_generated_free(cg_generated *g)
{
    for (int i = 0; i < CG_MAX_KERNELS; ++i)
        free(g->kernels[i].source);
    memset(g, 0, sizeof *g);
}

/* Whether a step of phase 1 or 2 reads in1: a pad of operand 1 or a Winograd transform of it, a
 * binding to it, cuFFT reading it in place; a kernel whose op does not say what it reads counts
 * as reading it. */
static bool reads_weights(const cg_step *st)
{
    if (st->kind == CG_STEP_FFT)
        return st->fft.real_operand == 1;
    if (st->kind != CG_STEP_KERNEL)
        return false;
    bool bound = false;
    for (int a = 0; a < 4; ++a)
        bound |= st->args[a].base == CG_ARG_IN1;
    bool winograd = st->op.kind == CG_OP_WINOGRAD && st->op.wino.operand == 1 && st->op.wino.stage != CG_WINO_AT;
    return bound || winograd || st->op.kind == CG_OP_OTHER || (st->op.kind == CG_OP_PAD && st->op.pad.operand == 1);
}

bool cg_program_prepares_weights(const cg_generated *g)
{
    if (g->step_count == 0) /* kernels only (direct): a first that lays w out, the rest never read it */
        return g->kernel_count > 1 && g->kernels[0].weights_only;
    bool before = false;
    for (int i = 0; i < g->step_count; ++i) {
        if (g->steps[i].phase == 0)
            before = true;
        else if (reads_weights(&g->steps[i]))
            return false;
    }
    return before;
}
