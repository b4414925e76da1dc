#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "util.h"

/* The planners, one module each. A new algorithm adds one line here. */
extern const cg_planner cg_direct_planner, cg_cufft_planner, cg_fft_planner, cg_fft_tiled_planner,
    cg_fft_fused_planner, cg_winograd_planner, cg_winograd_fused_planner;

static const cg_planner *const planners[] = {
    &cg_direct_planner,
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

const char *convgen_algo_name(convgen_algo algo)
{
    if (algo == CONVGEN_ALGO_AUTO)
        return "auto";
    const cg_planner *p = cg_planner_of(algo);
    return p ? p->name : "unknown";
}

const char *convgen_pass_name(convgen_pass pass)
{
    switch (pass) {
    case CONVGEN_FPROP: return "fprop";
    case CONVGEN_BPROP: return "bprop";
    case CONVGEN_ACCGRAD: return "accgrad";
    }
    return "unknown";
}

convgen_status cg_generate(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                           const cg_target *target, cg_generated *out)
{
    return cg_generate_tuned(p, pass, algo, target, NULL, out);
}

convgen_status cg_generate_tuned(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                                 const cg_target *target, const cg_tuning *tune, cg_generated *out)
{
    memset(out, 0, sizeof *out);
    if (pass != CONVGEN_FPROP && pass != CONVGEN_BPROP && pass != CONVGEN_ACCGRAD)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "pass = %d is not FPROP, BPROP or ACCGRAD", (int)pass);
    const cg_planner *planner = cg_planner_of(algo);
    if (!planner)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "algo = %d is not a known algorithm", (int)algo);
    convgen_status s = planner->applicable(p, pass);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_target t = target ? *target : (cg_target){0}; /* its other zeros are the generator's defaults */
    if (t.sm_count <= 0)
        t.sm_count = 132;
    out->algo = algo;
    out->pass = pass;
    out->problem = *p;
    s = planner->generate(p, pass, &t, tune, out);
    if (s == CONVGEN_SUCCESS)
        s = cg_stamp_headers(out, &t, tune);
    if (s != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

void cg_generated_free(cg_generated *g)
{
    for (int i = 0; i < CG_MAX_KERNELS; ++i)
        free(g->kernels[i].source);
    memset(g, 0, sizeof *g);
}

static convgen_status generate_conv(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    return cg_generate_tuned(spec->problem.problem, spec->pass, spec->algo, target, spec->tune, out);
}

static const cg_kind_planner conv_kind_planner = {&cg_conv_kind, generate_conv};

/* The problem kinds, one line each (a kind's planner lives with its family). */
extern const cg_kind_planner cg_fft_kind_planner;

static const cg_kind_planner *const kinds[] = {
    &conv_kind_planner,
    &cg_fft_kind_planner,
};

#define KIND_COUNT (sizeof kinds / sizeof kinds[0])

int cg_kind_count(void) { return (int)KIND_COUNT; }

const cg_kind_planner *cg_kind_at(int i) { return i >= 0 && i < (int)KIND_COUNT ? kinds[i] : NULL; }

const cg_kind_planner *cg_kind_planner_of(const cg_problem_kind *kind)
{
    for (size_t i = 0; i < KIND_COUNT; ++i)
        if (kinds[i]->kind == kind)
            return kinds[i];
    return NULL;
}

convgen_status cg_generate_spec(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    const cg_kind_planner *k = cg_kind_planner_of(spec->problem.kind);
    if (!k) {
        memset(out, 0, sizeof *out);
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "problem kind %s is not in the registry",
                       spec->problem.kind ? spec->problem.kind->name : "(none)");
    }
    return k->generate(spec, target, out);
}

bool cg_target_shared_limits(const char *arch, int *per_block, int *per_sm)
{
    /* The CUDA programming guide's table of compute capabilities: the opt-in maximum per block
     * and the capacity per multiprocessor. */
    static const struct {
        int cc, per_block_kib, per_sm_kib;
    } limits[] = {{70, 96, 96}, {72, 96, 96}, {75, 64, 64},   {80, 163, 164}, {86, 99, 100},
                  {87, 163, 164}, {89, 99, 100}, {90, 227, 228}, {100, 227, 228}, {120, 99, 100}};
    int cc = 0;
    if (!arch || sscanf(arch, "sm_%d", &cc) != 1)
        return false;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; ++i)
        if (limits[i].cc == cc) {
            *per_block = limits[i].per_block_kib * 1024;
            *per_sm = limits[i].per_sm_kib * 1024;
            return true;
        }
    return false;
}

int cg_target_max_cluster(const char *arch)
{
    int cc = 0;
    if (!arch || sscanf(arch, "sm_%d", &cc) != 1)
        return 0;
    return cc >= 90 ? 8 : 1;
}
