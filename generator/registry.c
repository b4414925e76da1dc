/* The registry of planners (generate.h): which algorithms there are, in the order auto and the
 * tuner try them, by value and by name. A new algorithm adds one line to the table; nothing
 * else in convgen switches on an algorithm. Only the entry points (generate.c) and the runtime
 * look planners up: a planner's own code never does, so no planner depends on another. */
#include <stddef.h>
#include <string.h>

#include "generate.h"

/* The planners, one module each. A new algorithm adds one line here. */
extern const cg_planner cg_direct_planner, cg_direct_window_planner, cg_cufft_planner, cg_fft_planner,
    cg_fft_tiled_planner, cg_fft_fused_planner, cg_winograd_planner, cg_winograd_fused_planner;

static const cg_planner *const planners[] = {
    &cg_direct_planner,
    &cg_direct_window_planner,
    &cg_cufft_planner,
    &cg_fft_planner,
    &cg_fft_tiled_planner,
    &cg_fft_fused_planner,
    &cg_winograd_planner,
    &cg_winograd_fused_planner,
};

#define PLANNER_COUNT (sizeof planners / sizeof planners[0])

int cg_planner_count(void) { return (int)PLANNER_COUNT; }

const cg_planner *cg_planner_at(int i) { return i >= 0 && i < (int)PLANNER_COUNT ? planners[i] : NULL; }

const cg_planner *cg_planner_of(convgen_algo algo)
{
    for (size_t i = 0; i < PLANNER_COUNT; ++i)
        if (planners[i]->algo == algo)
            return planners[i];
    return NULL;
}

const cg_planner *cg_planner_named(const char *name)
{
    for (size_t i = 0; name && i < PLANNER_COUNT; ++i)
        if (strcmp(planners[i]->name, name) == 0)
            return planners[i];
    return NULL;
}

const cg_planner *cg_planner_formerly_named(const char *name, const cg_problem *p, convgen_pass pass)
{
    for (size_t i = 0; name && i < PLANNER_COUNT; ++i)
        if (planners[i]->formerly && strcmp(planners[i]->formerly, name) == 0 &&
            (planners[i]->formerly_passes & (1u << pass)) && planners[i]->applicable(p, pass) == CONVGEN_SUCCESS)
            return planners[i];
    return cg_planner_named(name);
}

const char *convgen_algo_name(convgen_algo algo)
{
    if (algo == CONVGEN_ALGO_AUTO)
        return "auto";
    const cg_planner *p = cg_planner_of(algo);
    return p ? p->name : "unknown";
}

