/* GPU tests of the direct algorithm: every pass against the CPU float64 reference on random
 * data, outputs (and workspace) poisoned with NaN first, relative error <= 1e-5. Without a
 * GPU every test skips and says why. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"
#include "verify.h"

#define ERROR_BOUND 1e-5
#define SHAPES 50

static convgen_context *ctx;
static char no_device_reason[512];

typedef struct shape {
    char name[160];
    convgen_conv_desc d;
} shape;

static shape shapes[SHAPES];

#define DESC2(n_, c_, k_, h, w, r, s, pad, str, dil)                                                          \
    (convgen_conv_desc){.rank = 2, .n = n_, .c = c_, .k = k_, .in = {h, w}, .kernel = {r, s},                 \
                        .pad_before = {pad, pad}, .pad_after = {pad, pad}, .stride = {str, str},             \
                        .dilation = {dil, dil}}

/* The edge cases by hand: odd sizes, padding, stride 2, dilation 2, C = 1, K = 1, N = 1,
 * convolution mode, asymmetric padding, rank 1 and 3. */
static int handpicked(shape *s)
{
    int n = 0;
    s[n++].d = DESC2(2, 3, 5, 11, 13, 3, 3, 0, 1, 1);
    s[n++].d = DESC2(3, 4, 6, 17, 9, 5, 3, 2, 1, 1);
    s[n++].d = DESC2(2, 5, 7, 15, 15, 3, 3, 1, 2, 1);
    s[n++].d = DESC2(1, 6, 4, 19, 21, 3, 3, 2, 1, 2);
    s[n++].d = DESC2(4, 1, 8, 12, 12, 5, 5, 0, 1, 1);      /* C = 1 */
    s[n++].d = DESC2(3, 9, 1, 10, 14, 3, 3, 1, 1, 1);      /* K = 1 */
    s[n++].d = DESC2(1, 16, 16, 9, 9, 9, 9, 0, 1, 1);      /* N = 1, 1x1 output */
    s[n++].d = DESC2(2, 3, 4, 23, 17, 7, 7, 3, 2, 1);      /* the stem's shape, small */
    s[n++].d = DESC2(2, 4, 3, 13, 13, 3, 3, 2, 2, 2);      /* stride 2 and dilation 2 */
    s[n++].d = DESC2(2, 3, 70, 7, 7, 1, 1, 0, 1, 1);       /* 1x1 kernel, K > 64 */
    s[n++].d = DESC2(8, 4, 4, 32, 32, 3, 3, 1, 1, 1);      /* long reduction, split accgrad */
    s[n++].d = DESC2(2, 130, 129, 6, 6, 3, 3, 1, 1, 1);    /* C, K past one tile */
    s[n].d = DESC2(2, 3, 5, 10, 11, 3, 2, 0, 1, 1);
    s[n].d.mode = CONVGEN_CONVOLUTION;                     /* flipped kernel */
    ++n;
    s[n].d = DESC2(2, 3, 4, 12, 9, 4, 3, 0, 1, 1);
    s[n].d.pad_before[0] = 2, s[n].d.pad_after[0] = 0;     /* asymmetric padding */
    s[n].d.pad_before[1] = 0, s[n].d.pad_after[1] = 1;
    ++n;
    s[n].d = DESC2(2, 3, 4, 16, 15, 3, 3, 1, 1, 1);
    s[n].d.stride[0] = 2, s[n].d.dilation[1] = 3;          /* per-dimension stride and dilation */
    ++n;
    s[n++].d = (convgen_conv_desc){.rank = 1, .n = 3, .c = 5, .k = 6, .in = {37}, .kernel = {5},
                                   .pad_before = {2}, .pad_after = {1}, .stride = {2}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 2, .c = 3, .k = 4, .in = {7, 8, 9}, .kernel = {3, 3, 3},
                                   .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 1, .c = 2, .k = 3, .in = {9, 6, 7}, .kernel = {3, 2, 3},
                                   .stride = {2, 1, 2}, .dilation = {1, 2, 1}, .mode = CONVGEN_CONVOLUTION};
    return n;
}

static unsigned draw(unsigned *state, unsigned lo, unsigned hi)
{
    *state = *state * 1664525u + 1013904223u;
    return lo + (*state >> 8) % (hi - lo + 1);
}

/* The rest at random (fixed seed, so failures reproduce): odd sizes, any padding. */
static void random_shape(unsigned *st, convgen_conv_desc *d)
{
    *d = (convgen_conv_desc){.rank = 2, .n = draw(st, 1, 4), .c = draw(st, 1, 150), .k = draw(st, 1, 150)};
    for (int i = 0; i < 2; ++i) {
        d->kernel[i] = draw(st, 1, 7);
        d->dilation[i] = draw(st, 1, 4) == 4 ? 2 : 1;
        d->stride[i] = draw(st, 1, 3) == 3 ? 2 : 1;
        d->pad_before[i] = draw(st, 0, (unsigned)d->kernel[i] / 2 + 1);
        d->pad_after[i] = draw(st, 0, (unsigned)d->kernel[i] / 2);
        int64_t span = d->dilation[i] * (d->kernel[i] - 1) + 1;
        d->in[i] = span + draw(st, 0, 16);
    }
    d->mode = draw(st, 0, 3) == 0 ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
}

static void name_shape(shape *s)
{
    const convgen_conv_desc *d = &s->d;
    int at = snprintf(s->name, sizeof s->name, "n%lld c%lld k%lld in", (long long)d->n, (long long)d->c, (long long)d->k);
    for (int i = 0; i < d->rank; ++i)
        at += snprintf(s->name + at, sizeof s->name - (size_t)at, "%s%lld", i ? "x" : "", (long long)d->in[i]);
    at += snprintf(s->name + at, sizeof s->name - (size_t)at, " ker");
    for (int i = 0; i < d->rank; ++i)
        at += snprintf(s->name + at, sizeof s->name - (size_t)at, "%s%lld", i ? "x" : "", (long long)d->kernel[i]);
    at += snprintf(s->name + at, sizeof s->name - (size_t)at, " pad %lld+%lld str %lld dil %lld%s",
                   (long long)d->pad_before[0], (long long)d->pad_after[0], (long long)(d->stride[0] ? d->stride[0] : 1),
                   (long long)(d->dilation[0] ? d->dilation[0] : 1), d->mode ? " conv" : "");
}

static void check_shape(void **state)
{
    const shape *s = *state;
    if (!ctx)
        skip();
    for (int pass = 0; pass < 3; ++pass) {
        cg_verify_result r;
        convgen_status st = cg_verify(ctx, &s->d, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, 7 + (unsigned)pass, 0, &r);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s %s: %s: %s", s->name, convgen_pass_name((convgen_pass)pass), convgen_status_string(st),
                     convgen_last_error());
        print_message("%-8s rel %.2e max-abs %.2e unwritten %lld (%lld elements)\n", convgen_pass_name((convgen_pass)pass),
                      r.rel_error, r.max_abs_error, (long long)r.unwritten, (long long)r.elems);
        assert_int_equal(r.checked, r.elems);
        if (r.unwritten)
            fail_msg("%s %s: %lld of %lld output elements were never written (still NaN poison)", s->name,
                     convgen_pass_name((convgen_pass)pass), (long long)r.unwritten, (long long)r.elems);
        if (!(r.rel_error <= ERROR_BOUND))
            fail_msg("%s %s: relative error %.3e > %.0e", s->name, convgen_pass_name((convgen_pass)pass), r.rel_error,
                     ERROR_BOUND);
    }
}

static int open_device(void **state)
{
    (void)state;
    convgen_status s = convgen_context_create(NULL, &ctx);
    if (s != CONVGEN_SUCCESS) {
        ctx = NULL;
        snprintf(no_device_reason, sizeof no_device_reason, "%s", convgen_last_error());
        printf("GPU tests SKIPPED: %s\n", no_device_reason);
    } else {
        printf("GPU tests on %s (%s)\n", convgen_context_device_name(ctx), convgen_context_arch(ctx));
    }
    return 0;
}

static int close_device(void **state)
{
    (void)state;
    convgen_context_destroy(ctx);
    return 0;
}

int main(void)
{
    struct CMUnitTest tests[SHAPES];
    int n = handpicked(shapes);
    unsigned seed = 20261123u;
    while (n < SHAPES)
        random_shape(&seed, &shapes[n++].d);
    for (int i = 0; i < SHAPES; ++i) {
        name_shape(&shapes[i]);
        tests[i] = (struct CMUnitTest){.name = shapes[i].name, .test_func = check_shape, .initial_state = &shapes[i]};
    }
    return _cmocka_run_group_tests("gpu_direct", tests, SHAPES, open_device, close_device);
}
