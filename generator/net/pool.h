/* The pooling kernel (templates/net/pool.cu) of a pooling problem. */
#ifndef CG_POOL_H
#define CG_POOL_H

#include "generate.h"
#include "pool_problem.h"

/* One kernel: x (in0) -> y (out0), no workspace. */
convgen_status cg_generate_pool(const cg_pool_problem *p, const cg_target *target, cg_generated *out);

#endif
