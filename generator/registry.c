/* The registry of planners (generate.h): which algorithms there are, in the order auto and the
 * tuner try them, by value and by name. A new algorithm adds one line to the table; nothing
 * else in convgen switches on an algorithm. Only the entry points (generate.c) and the runtime
 * look planners up: a planner's own code never does, so no planner depends on another. */
#include <stddef.h>
#include <string.h>

#include "generate.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

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

int cg_candidates_list(const cg_problem *problem, convgen_pass pass, int effort, const cg_tuning *fixed,
                       convgen_algo *algos, cg_tuning *tunings, int max)
{
    int count = 0;
    for (int i = 0; i < cg_planner_count() && count < max; ++i) {
        const cg_planner *p = cg_planner_at(i);
        int n = 1;
        tunings[count] = fixed ? *fixed : (cg_tuning){0};
        if (fixed && p->variants && p->applicable(problem, pass) == CONVGEN_SUCCESS)
            n = p->variants(problem, pass, effort, fixed, tunings + count, max - count);
        for (int v = 0; v < n; ++v)
            algos[count++] = p->algo;
    }
    return count;
}

uint64_t cg_candidates_hash(const cg_problem *p, convgen_pass pass, int effort, bool tf32, uint64_t workspace_limit)
{
    const cg_tuning given = {.tf32 = tf32,
                             .workspace_limit = workspace_limit > INT64_MAX ? INT64_MAX : (int64_t)workspace_limit};
    cg_tuning tunings[CG_MAX_CANDIDATES];
    convgen_algo algos[CG_MAX_CANDIDATES];
    const int n = cg_candidates_list(p, pass, effort, &given, algos, tunings, CG_MAX_CANDIDATES);
    XXH64_state_t state;
    XXH64_reset(&state, 0);
    for (int i = 0; i < n; ++i) {
        char variant[CG_VARIANT_MAX];
        const char *name = convgen_algo_name(algos[i]);
        cg_variant_print(cg_planner_of(algos[i]), &tunings[i], p->rank, variant, sizeof variant);
        XXH64_update(&state, name, strlen(name));
        XXH64_update(&state, " ", 1);
        XXH64_update(&state, variant, strlen(variant));
        XXH64_update(&state, "\n", 1);
    }
    const uint64_t h = XXH64_digest(&state);
    return h ? h : 1; /* 0 says "not known" in wisdom */
}
