/* The table of expected refusals (planner_cases.h). Each entry is a limit a planner documents,
 * written as a predicate on the layer so that it is checked both ways. */
#include "planner_cases.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

static bool strided(const cg_problem *p)
{
    for (int d = 0; d < p->rank; ++d)
        if (p->stride[d] > 1)
            return true;
    return false;
}

static bool dilated(const cg_problem *p)
{
    for (int d = 0; d < p->rank; ++d)
        if (p->dilation[d] > 1)
            return true;
    return false;
}

static bool rank_1(const cg_problem *p) { return p->rank == 1; }
static bool rank_3(const cg_problem *p) { return p->rank == 3; }

static int64_t largest_kernel(const cg_problem *p)
{
    int64_t r = 0;
    for (int d = 0; d < p->rank; ++d)
        r = p->kernel[d] > r ? p->kernel[d] : r;
    return r;
}

static int64_t smallest_kernel(const cg_problem *p)
{
    int64_t r = INT64_MAX;
    for (int d = 0; d < p->rank; ++d)
        r = p->kernel[d] < r ? p->kernel[d] : r;
    return r;
}

static bool kernel_past_7(const cg_problem *p) { return largest_kernel(p) > 7; }
static bool channels_past_4(const cg_problem *p) { return p->c > 4; }

/* More than 16 taps in a stride phase along some dimension (ceil(kernel / stride)). */
static bool phase_taps_past_16(const cg_problem *p)
{
    for (int d = 0; d < p->rank; ++d)
        if ((p->kernel[d] + p->stride[d] - 1) / p->stride[d] > 16)
            return true;
    return false;
}
static bool kernel_outside_2_to_5(const cg_problem *p) { return smallest_kernel(p) < 2 || largest_kernel(p) > 5; }

#define ALL 0u
#define ACCGRAD (1u << CONVGEN_ACCGRAD)
#define NOT_BPROP ((1u << CONVGEN_FPROP) | (1u << CONVGEN_ACCGRAD))

/* In the planners' own words (their applicable functions and generate's first checks). */
static const planner_refusal refusals[] = {
    /* the correlation theorem holds for stride 1 (fft_conv_dims) */
    {"cufft fft fft-tiled fft-fused", ALL, strided, "FFT convolution needs stride 1"},
    /* convgen's own FFT kernels are 1-D and 2-D (fc_fft_applicable) */
    {"fft fft-tiled fft-fused", ALL, rank_3, "convgen's FFTs are 1-D and 2-D"},
    /* fft-fused: one kernel per tile for fprop and bprop only, on 2-D tiles */
    {"fft-fused", ACCGRAD, NULL, "accgrad's fused kernel is not built"},
    {"fft-fused", ALL, rank_1, "its kernel takes 2-D tiles"},
    /* Winograd's F(m, r): 1-D and 2-D, stride 1, no dilation, kernels up to 7 (wino_applicable) */
    {"winograd winograd-fused", ALL, rank_3, "1-D and 2-D layers only"},
    {"winograd winograd-fused", ALL, strided, "stride 1 only"},
    {"winograd winograd-fused", ALL, dilated, "dilation 1 only"},
    {"winograd winograd-fused", ALL, kernel_past_7, "kernels up to 7"},
    /* winograd-fused: its kernels hold F(m x m, r x r) for r from 2 to 5 on 2-D layers */
    {"winograd-fused", ALL, rank_1, "2-D layers only"},
    {"winograd-fused", ALL, kernel_outside_2_to_5, "kernels 2 to 5"},
    /* direct-window (issue 27 item 4, registered on another branch; an entry naming a planner
     * that is not registered matches nothing): the few-channel bprop by sliding windows */
    {"direct-window", NOT_BPROP, NULL, "bprop only"},
    {"direct-window", ALL, rank_3, "its windows are 1-D and 2-D"},
    {"direct-window", ALL, channels_past_4, "it takes at most 4"},
    {"direct-window", ALL, dilated, "dilation["},
    {"direct-window", ALL, phase_taps_past_16, "it takes at most 16"},
};

/* Whether `name` is one of the space-separated words of `list`. */
static bool named(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *at = list; (at = strstr(at, name)) != NULL; at += len)
        if ((at == list || at[-1] == ' ') && (at[len] == ' ' || at[len] == '\0'))
            return true;
    return false;
}

const planner_refusal *planner_refusal_of(const char *algo, const cg_problem *p, convgen_pass pass,
                                          const char *message)
{
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
        const planner_refusal *r = &refusals[i];
        if (named(r->algos, algo) && (!r->passes || r->passes & (1u << pass)) && (!r->when || r->when(p)) &&
            (!message || strstr(message, r->reason)))
            return r;
    }
    return NULL;
}

bool planner_takes(const cg_planner *planner, const cg_problem *p, convgen_pass pass, convgen_status s,
                   const char *what)
{
    const planner_refusal *expected = planner_refusal_of(planner->name, p, pass, NULL);
    if (s == CONVGEN_SUCCESS && expected)
        fail_msg("%s %s %s: the planner takes it, but the table of expected refusals (tests/planner_cases.c) says "
                 "'%s': correct the table", what, planner->name, convgen_pass_name(pass), expected->reason);
    if (s == CONVGEN_SUCCESS)
        return true;
    const char *message = convgen_last_error();
    if (s == CONVGEN_ERROR_NOT_SUPPORTED && planner_refusal_of(planner->name, p, pass, message))
        return false;
    fail_msg("%s %s %s: %s: %s\n(a refusal no entry of tests/planner_cases.c expects: a bug, or a limit to add "
             "there%s%s)", what, planner->name, convgen_pass_name(pass), convgen_status_string(s), message,
             expected ? "; the table expects: " : "", expected ? expected->reason : "");
    return false;
}

void planner_tally_add(planner_tally *t, bool taken)
{
    ++t->cases;
    t->taken += taken;
    t->refused += !taken;
}
