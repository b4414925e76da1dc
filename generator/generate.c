/* The generator's entry points (generate.h): a convolution pass's program through its planner,
 * its kernels' headers stamped; a batched FFT plan; the targets' limits. */
#include "generate.h"

#include <stdio.h>
#include <string.h>

#include "fft/fft_kernel.h"
#include "header.h"
#include "net/pool.h"
#include "util.h"

convgen_status cg_generate(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                           const cg_target *target, cg_generated *out)
{
    return cg_generate_tuned(p, pass, algo, target, NULL, out);
}

/* A layer's epilogue must be applied by the kernels that write y, or the plan would silently
 * compute another function. */
static convgen_status check_epilogue_applied(const cg_generated *g)
{
    bool applied = false;
    for (int i = 0; i < g->kernel_count; ++i)
        applied |= g->kernels[i].epilogue;
    if (applied == (g->problem.epilogue != 0))
        return CONVGEN_SUCCESS;
    return applied ? cg_fail(CONVGEN_ERROR_INTERNAL, "%s: a kernel applies an epilogue the layer does not have",
                             convgen_algo_name(g->algo))
                   : cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "%s does not apply a bias or ReLU as it stores y",
                             convgen_algo_name(g->algo));
}

/* Most kernels are the same generated for any SM count (only split reductions, persistent grids
 * and a few FFT launches size themselves by it). Off CG_DEFAULT_SMS, those of `out` are taken as
 * generated for the default count, their headers stamped so: their "emitted by" line names no
 * --sms, and their source, a kernel set's key, is the one a set built for the default count holds,
 * so that the set serves them on a GPU of any count. The runtime launches `out`'s grids either way
 * (the same source). Here: the program at the default count into d (stamped) and which of `out`'s
 * kernels, not stamped yet, it has the same. */
static void generate_at_default_sms(const cg_planner *planner, const cg_problem *p, convgen_pass pass,
                                    const cg_target *t, const cg_tuning *tune, const cg_generated *out,
                                    cg_generated *d, bool *same)
{
    if (t->sm_count == CG_DEFAULT_SMS)
        return;
    cg_target plain = *t;
    plain.sm_count = CG_DEFAULT_SMS;
    char error[1024]; /* a failure at the default count is not the caller's */
    snprintf(error, sizeof error, "%s", convgen_last_error());
    *d = (cg_generated){.algo = out->algo, .pass = pass, .problem = *p};
    bool ok = planner->generate(p, pass, &plain, tune, d) == CONVGEN_SUCCESS && d->kernel_count == out->kernel_count &&
              check_epilogue_applied(d) == CONVGEN_SUCCESS;
    for (int i = 0; ok && i < d->kernel_count; ++i)
        same[i] = d->kernels[i].source && out->kernels[i].source &&
                  strcmp(d->kernels[i].name, out->kernels[i].name) == 0 &&
                  strcmp(d->kernels[i].source, out->kernels[i].source) == 0;
    if (ok && cg_stamp_headers(d, &plain, tune) != CONVGEN_SUCCESS)
        memset(same, 0, sizeof(bool) * CG_MAX_KERNELS);
    cg_restore_error(error);
}

/* `out`'s kernels that d has the same take d's stamped sources; d is freed. */
static void take_default_count_kernels(cg_generated *out, cg_generated *d, const bool *same)
{
    for (int i = 0; i < out->kernel_count; ++i)
        if (same[i]) {
            char *mine = out->kernels[i].source;
            out->kernels[i].source = d->kernels[i].source;
            d->kernels[i].source = mine;
        }
    cg_generated_free(d);
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
    convgen_status s = cg_epilogue_check(p, pass);
    if (s == CONVGEN_SUCCESS)
        s = planner->applicable(p, pass);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_target t = target ? *target : (cg_target){0}; /* its other zeros are the generator's defaults */
    if (t.sm_count <= 0)
        t.sm_count = CG_DEFAULT_SMS;
    out->algo = algo;
    out->pass = pass;
    out->problem = *p;
    s = planner->generate(p, pass, &t, tune, out);
    if (s == CONVGEN_SUCCESS)
        s = check_epilogue_applied(out);
    cg_generated plain = {0};
    bool same[CG_MAX_KERNELS] = {false};
    if (s == CONVGEN_SUCCESS)
        generate_at_default_sms(planner, p, pass, &t, tune, out, &plain, same);
    if (s == CONVGEN_SUCCESS)
        s = cg_stamp_headers(out, &t, tune);
    take_default_count_kernels(out, &plain, same);
    if (s != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

convgen_status cg_generate_fft_plan(const cg_fft_problem *p, const cg_target *target, cg_generated *out)
{
    convgen_status s = cg_generate_fft(p, target, out);
    if (s == CONVGEN_SUCCESS && (s = cg_stamp_fft_headers(out, p)) != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

static convgen_status generate_conv(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    return cg_generate_tuned(spec->problem.problem, spec->pass, spec->algo, target, spec->tune, out);
}

static const cg_kind_planner conv_kind_planner = {&cg_conv_kind, generate_conv};

/* The batched-FFT kind's one planner. */
static convgen_status generate_fft_spec(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    return cg_generate_fft_plan(spec->problem.problem, target, out);
}

static const cg_kind_planner fft_kind_planner = {&cg_fft_kind, generate_fft_spec};

/* Pooling's one planner: the kernel of net/pool.c. */
static convgen_status generate_pool_spec(const cg_spec *spec, const cg_target *target, cg_generated *out)
{
    return cg_generate_pool(spec->problem.problem, target, out);
}

static const cg_kind_planner pool_kind_planner = {&cg_pool_kind, generate_pool_spec};

/* The problem kinds, one line each: a new kind is its problem's file and a line here. */
static const cg_kind_planner *const kinds[] = {
    &conv_kind_planner,
    &fft_kind_planner,
    &pool_kind_planner,
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
