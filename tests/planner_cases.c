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

/* fft's cubic 3-D basis past convgen's 3-D transforms (64 points a side), per pass; a strided
 * layer is stride 1's entry. */
static bool volume_basis_past_64(const cg_problem *p, convgen_pass pass)
{
    return p->rank == 3 && !strided(p) && cg_fft_basis(p, pass) == 0;
}
static bool fprop_basis_past_64(const cg_problem *p) { return volume_basis_past_64(p, CONVGEN_FPROP); }
static bool bprop_basis_past_64(const cg_problem *p) { return volume_basis_past_64(p, CONVGEN_BPROP); }
static bool accgrad_basis_past_64(const cg_problem *p) { return volume_basis_past_64(p, CONVGEN_ACCGRAD); }

static int64_t largest_kernel(const cg_problem *p)
{
    int64_t r = 0;
    for (int d = 0; d < p->rank; ++d)
        r = p->kernel[d] > r ? p->kernel[d] : r;
    return r;
}

static bool kernel_past_7(const cg_problem *p) { return largest_kernel(p) > 7; }

/* fft-fused's 3-D tiles are at most 16 points a side: a kernel spanning more does not fit. */
static bool volume_span_past_16(const cg_problem *p)
{
    for (int d = 0; p->rank == 3 && d < p->rank; ++d)
        if ((p->kernel[d] - 1) * p->dilation[d] + 1 > 16)
            return true;
    return false;
}
static bool channels_past_4(const cg_problem *p) { return p->c > 4; }

/* More than 16 taps in a stride phase along y or x (ceil(kernel / stride); a 3-D layer's depth
 * taps are stages, any number). */
static bool phase_taps_past_16(const cg_problem *p)
{
    for (int d = p->rank == 3 ? 1 : 0; d < p->rank; ++d)
        if ((p->kernel[d] + p->stride[d] - 1) / p->stride[d] > 16)
            return true;
    return false;
}
/* direct-window's block and stage (generator/direct/direct_window.c, choose): threads over 8 or
 * 4 pixels a thread along x and the rows along y, up to 256; a stage of one output channel holds
 * its window of dy (rows x a pitch of 4 past a multiple of 8, rounded up to whole rounds of the
 * block's copies) and its weights (a float4 of channels a tap, or with one channel the taps of a
 * row padded to a float4), 6144 floats at most, with at most 16 window copies and 4 weight copies
 * a thread. Written out again here so that a change of the kernel's reach shows in the table. */
static int64_t pow2_at_least(int64_t x, int64_t cap)
{
    int64_t p = 1;
    while (p < x && p < cap)
        p *= 2;
    return p;
}

static bool window_stage_too_big(const cg_problem *p)
{
    int64_t pixels[2] = {1, 1}, taps[2] = {1, 1};
    for (int d = p->rank == 3 ? 1 : 0; d < p->rank; ++d) { /* y and x: a 3-D layer's last two */
        int at = d + 2 - p->rank;
        pixels[at] = (p->in[d] + p->stride[d] - 1) / p->stride[d];
        taps[at] = (p->kernel[d] + p->stride[d] - 1) / p->stride[d];
    }
    int64_t px = pixels[1] >= 64 ? 8 : 4, lx = pow2_at_least((pixels[1] + px - 1) / px, 32);
    int64_t ly = pow2_at_least(pixels[0], 64);
    ly = ly > 256 / lx ? 256 / lx : ly;
    int64_t threads = lx * ly, rows = ly + taps[0] - 1, cols = (lx * px + taps[1] - 1 + 7) / 8 * 8 + 4;
    /* the window rounded up to whole rounds of the block's copies; with one input channel a tap
     * row's weights are the taps themselves, padded to a float4, else a float4 of channels a tap */
    int64_t copies = (rows * cols + threads - 1) / threads, window = copies * threads;
    int64_t weights = taps[0] * (p->c == 1 ? (taps[1] + 3) / 4 * 4 : 4 * taps[1]);
    return window + weights > 6144 || copies > 16 || (weights + threads - 1) / threads > 4;
}

/* direct-window's fprop (generator/direct/direct_slide.c): at most 16 taps a dimension; a
 * thread's column of x along the view's depth (a 2-D layer's rows) at most 16 values even for one
 * position, and a row of the block's window (32 outputs along x) at most 32 copies of 32. */
static bool taps_past_16(const cg_problem *p) { return largest_kernel(p) > 16; }

static bool slide_column_too_long(const cg_problem *p)
{
    int x = p->rank - 1;
    bool column = p->rank > 1 && (p->kernel[0] - 1) * p->dilation[0] + 1 > 16;
    return column || 31 * p->stride[x] + (p->kernel[x] - 1) * p->dilation[x] + 1 > 1024;
}

static bool strided_depth(const cg_problem *p) { return p->rank == 3 && p->stride[0] != 1; }

/* across the plane: the last two dimensions (a 3-D kernel's depth is summed directly) */
static bool plane_kernel_outside_2_to_5(const cg_problem *p)
{
    for (int d = p->rank >= 2 ? p->rank - 2 : 0; d < p->rank; ++d)
        if (p->kernel[d] < 2 || p->kernel[d] > 5)
            return true;
    return false;
}

#define ALL 0u
#define ACCGRAD (1u << CONVGEN_ACCGRAD)
#define FPROP (1u << CONVGEN_FPROP)
#define BPROP (1u << CONVGEN_BPROP)

/* In the planners' own words (their applicable functions and generate's first checks). */
static const planner_refusal refusals[] = {
    /* the correlation theorem holds for stride 1 (fft_conv_dims) */
    {"cufft fft fft-tiled fft-fused", ALL, strided, "FFT convolution needs stride 1"},
    /* fft's one cubic basis in 3-D: at most 64 points a side (convgen's 3-D transforms) */
    {"fft", 1u << CONVGEN_FPROP, fprop_basis_past_64, "beyond 64 in 3-D"},
    {"fft", 1u << CONVGEN_BPROP, bprop_basis_past_64, "beyond 64 in 3-D"},
    {"fft", ACCGRAD, accgrad_basis_past_64, "beyond 64 in 3-D"},
    /* fft-fused: one kernel per tile for fprop and bprop only, on 2-D and 3-D tiles (3-D: up to 16 points) */
    {"fft-fused", ACCGRAD, NULL, "accgrad's fused kernel is not built"},
    {"fft-fused", ALL, rank_1, "its kernel takes 2-D and 3-D tiles"},
    {"fft-fused", ALL, volume_span_past_16, "its transforms reach 16"},
    /* Winograd's F(m, r): stride 1, no dilation, kernels up to 7 (wino_applicable) */
    {"winograd winograd-fused", ALL, strided, "stride 1 only"},
    {"winograd winograd-fused", ALL, dilated, "dilation 1 only"},
    {"winograd winograd-fused", ALL, kernel_past_7, "kernels up to 7"},
    /* winograd-fused: its kernels hold F(m x m, r x r) for r from 2 to 5 across a 2-D layer's
     * plane or a 3-D layer's (whose depth taps it sums directly) */
    {"winograd-fused", ALL, rank_1, "2-D and 3-D layers only"},
    {"winograd-fused", ALL, plane_kernel_outside_2_to_5, "kernels 2 to 5 across the plane"},
    /* direct-window: few input channels; fprop by sliding each thread's outputs over the taps
     * (direct_slide.c), bprop by sliding windows (direct_window.c) */
    {"direct-window", ACCGRAD, NULL, "accgrad is direct's"},
    {"direct-window", ALL, channels_past_4, "it takes at most 4"},
    {"direct-window", FPROP, taps_past_16, "it slides at most 16"},
    {"direct-window", FPROP, slide_column_too_long, "are too few for the kernel's taps"},
    {"direct-window", BPROP, strided_depth, "along depth; its 3-D windows take stride 1 there"},
    {"direct-window", BPROP, dilated, "dilation["},
    {"direct-window", BPROP, phase_taps_past_16, "it takes at most 16"},
    {"direct-window", BPROP, window_stage_too_big, "do not fit a stage's shared memory and registers"},
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
