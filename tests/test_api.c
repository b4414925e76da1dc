/* The public API's argument checks: every bad argument gets a status and a message naming
 * it, on machines with or without a GPU. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"
#include "problem.h"
#include "verify.h"

static const convgen_conv_desc layer = {.rank = 2, .n = 2, .c = 3, .k = 4, .in = {9, 9}, .kernel = {3, 3}};

#define assert_error(call, status, text)                                                                     \
    do {                                                                                                     \
        assert_int_equal((call), (status));                                                                  \
        if (!strstr(convgen_last_error(), (text)))                                                           \
            fail_msg("message '%s' does not name '%s'", convgen_last_error(), (text));                       \
    } while (0)

static convgen_context *offline(void)
{
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    convgen_context *ctx = NULL;
    assert_int_equal(convgen_context_create(&o, &ctx), CONVGEN_SUCCESS);
    return ctx;
}

static void test_context_arguments_are_checked(void **state)
{
    (void)state;
    convgen_context *ctx = (convgen_context *)&ctx;
    convgen_context_options o = {.offline = 1};
    assert_error(convgen_context_create(NULL, NULL), CONVGEN_ERROR_INVALID_VALUE, "ctx");
    assert_error(convgen_context_create(&o, &ctx), CONVGEN_ERROR_INVALID_VALUE, "arch");
    assert_null(ctx);
    o.arch = "sm_x";
    assert_error(convgen_context_create(&o, &ctx), CONVGEN_ERROR_INVALID_VALUE, "arch = 'sm_x'");
    o.arch = "sm_90", o.sm_count = -1;
    assert_error(convgen_context_create(&o, &ctx), CONVGEN_ERROR_INVALID_VALUE, "sm_count = -1");
}

static void test_device_context_succeeds_or_says_why_not(void **state)
{
    (void)state;
    convgen_context *ctx = NULL;
    convgen_status s = convgen_context_create(NULL, &ctx);
    if (s == CONVGEN_SUCCESS) {
        assert_true(strncmp(convgen_context_arch(ctx), "sm_", 3) == 0);
        convgen_context_destroy(ctx);
        return;
    }
    assert_int_equal(s, CONVGEN_ERROR_NO_DEVICE);
    assert_null(ctx);
    assert_true(strstr(convgen_last_error(), "driver") || strstr(convgen_last_error(), "device"));
    print_message("no device here: %s\n", convgen_last_error());
}

static void test_plan_arguments_are_checked(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_plan *plan = (convgen_plan *)&plan;
    convgen_conv_desc bad = layer;
    bad.kernel[1] = 0;
    assert_error(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL), CONVGEN_ERROR_INVALID_VALUE, "plan");
    assert_error(convgen_plan_conv(NULL, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_ERROR_INVALID_VALUE, "ctx");
    assert_null(plan);
    assert_error(convgen_plan_conv(ctx, NULL, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_ERROR_INVALID_VALUE, "desc");
    assert_error(convgen_plan_conv(ctx, &bad, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_ERROR_INVALID_VALUE, "kernel[1] = 0");
    assert_error(convgen_plan_conv(ctx, &layer, (convgen_pass)3, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_ERROR_INVALID_VALUE, "pass = 3");
    assert_error(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, (convgen_algo)9, &plan), CONVGEN_ERROR_INVALID_VALUE, "algo = 9");
    convgen_context_destroy(ctx);
}

static void test_offline_plan_reports_but_does_not_execute(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_plan *plan;
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT_WINDOW, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_count(plan), 1);
    assert_non_null(strstr(convgen_plan_source(plan, 0), "convgen_direct_bprop"));
    assert_null(convgen_plan_source(plan, 1));
    convgen_kernel_info info;
    assert_int_equal(convgen_plan_kernel_info(plan, 0, &info), CONVGEN_SUCCESS);
    assert_string_equal(info.name, "convgen_direct_bprop_window"); /* C = 3: the sliding windows */
    assert_int_equal(info.block[0], 64);                           /* 16 rows x 4 x 4 pixels of 9 x 9 */
    assert_error(convgen_plan_kernel_info(plan, 1, &info), CONVGEN_ERROR_INVALID_VALUE, "kernel index 1");
    assert_error(convgen_plan_kernel_info(plan, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "info");
    size_t ws = 1;
    assert_int_equal(convgen_plan_workspace_size(plan, &ws), CONVGEN_SUCCESS);
    assert_int_equal(ws, 0);
    assert_error(convgen_plan_workspace_size(plan, NULL), CONVGEN_ERROR_INVALID_VALUE, "bytes");

    float *p = (float *)(uintptr_t)0x1000; /* never dereferenced: argument checks come first */
    assert_error(convgen_execute(plan, NULL, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "in0 (dy)");
    assert_error(convgen_execute(plan, p, NULL, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "in1 (w)");
    assert_error(convgen_execute(plan, p, p, NULL, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "out (dx)");
    assert_error(convgen_execute(plan, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    assert_error(convgen_execute(NULL, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "plan");
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
}

static void test_execute_refuses_too_little_workspace(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc big = {.rank = 2, .n = 64, .c = 8, .k = 8, .in = {64, 64}, .kernel = {5, 5}};
    convgen_plan *plan;
    assert_int_equal(convgen_plan_conv(ctx, &big, CONVGEN_ACCGRAD, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    size_t ws = 0;
    convgen_plan_workspace_size(plan, &ws);
    assert_true(ws > 0); /* dw is tiny, the reduction long: a split reduction */
    float *p = (float *)(uintptr_t)0x1000;
    assert_error(convgen_execute(plan, p, p, p, p, ws - 4, NULL), CONVGEN_ERROR_INSUFFICIENT_WORKSPACE, "workspace_bytes");
    assert_error(convgen_execute(plan, p, p, p, NULL, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "workspace is NULL");
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
}

/* winograd-fused's kernels copy the weights' transforms from the workspace 16 bytes at a time (or
 * by bulk copies): a workspace off the plans' 256-byte alignment is refused with the reason (the
 * kernels', not a library's), before an offline context says it cannot execute; the same plan's
 * prepared path checks it too. */
static void test_execute_refuses_a_misaligned_workspace(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 8, .k = 16, .in = {20, 20}, .kernel = {3, 3}};
    convgen_plan *plan;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD_FUSED, &plan), CONVGEN_SUCCESS);
    size_t ws = 0;
    convgen_plan_workspace_size(plan, &ws);
    assert_true(ws > 0);
    float *p = (float *)(uintptr_t)0x1000;
    char *aligned = (char *)(uintptr_t)0x10000;
    assert_error(convgen_execute(plan, p, p, p, aligned + 4, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "256-byte aligned for the winograd-fused plan's kernels' copies of it");
    assert_error(convgen_execute_prepared(plan, p, p, aligned + 16, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "256-byte aligned");
    assert_error(convgen_execute(plan, p, p, p, aligned, ws, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
}

/* Prepared weights: only plans with weight transforms take them, every argument checked before
 * an offline context says it cannot execute. */
static void test_prepared_weights_are_checked(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 3, .k = 4, .in = {20, 20}, .kernel = {5, 5}};
    convgen_plan *direct, *accgrad, *fused;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &direct), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_ACCGRAD, CONVGEN_ALGO_FFT, &accgrad), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_BPROP, CONVGEN_ALGO_FFT_FUSED, &fused), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_prepares_weights(direct), 0);
    assert_int_equal(convgen_plan_prepares_weights(accgrad), 0);
    assert_int_equal(convgen_plan_prepares_weights(fused), 1);
    assert_int_equal(convgen_plan_prepares_weights(NULL), 0);
    size_t ws = 0;
    convgen_plan_workspace_size(fused, &ws);
    float *p = (float *)(uintptr_t)0x1000; /* never dereferenced: offline */
    void *aligned = (void *)(uintptr_t)0x10000;
    assert_error(convgen_prepare_weights(NULL, p, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    assert_error(convgen_prepare_weights(direct, p, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "no weight transforms");
    assert_error(convgen_execute_prepared(accgrad, p, p, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "fft accgrad plan has no weight transforms");
    assert_error(convgen_prepare_weights(fused, NULL, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "w is NULL");
    assert_error(convgen_prepare_weights(fused, p, aligned, ws - 1, NULL), CONVGEN_ERROR_INSUFFICIENT_WORKSPACE,
                 "workspace_bytes");
    assert_error(convgen_prepare_weights(fused, p, NULL, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "workspace is NULL");
    assert_error(convgen_execute_prepared(fused, NULL, p, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "in0 is NULL");
    assert_error(convgen_execute_prepared(fused, p, NULL, aligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "out is NULL");
    assert_error(convgen_prepare_weights(fused, p, aligned, ws, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    assert_error(convgen_execute_prepared(fused, p, p, aligned, ws, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    /* direct's tensor form on sm_90 lays w out first (wgmma's pieces): weights to prepare */
    convgen_plan *wgmma;
    const convgen_conv_desc d3 = {.rank = 2, .n = 2, .c = 16, .k = 16, .in = {12, 12}, .kernel = {3, 3}};
    const convgen_plan_options tensor = {.gemm = CONVGEN_GEMM_TENSOR};
    assert_int_equal(convgen_plan_conv_ex(ctx, &d3, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, &tensor, &wgmma), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_prepares_weights(wgmma), 1);
    convgen_plan_workspace_size(wgmma, &ws);
    assert_true(ws > 0);
    void *misaligned = (void *)(uintptr_t)0x10008; /* its pieces are copied 16 bytes at a time */
    assert_error(convgen_prepare_weights(wgmma, p, misaligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "16-byte aligned");
    assert_error(convgen_execute_prepared(wgmma, p, p, misaligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "16-byte aligned");
    assert_error(convgen_execute(wgmma, p, p, p, misaligned, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "16-byte aligned");
    assert_error(convgen_prepare_weights(wgmma, p, aligned, ws, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    assert_error(convgen_execute_prepared(wgmma, p, p, aligned, ws, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    convgen_plan_destroy(wgmma);
    convgen_plan_destroy(direct);
    convgen_plan_destroy(accgrad);
    convgen_plan_destroy(fused);
    convgen_context_destroy(ctx);
}

static void test_plan_options_are_checked(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_plan *plan;
    convgen_plan_options o = {.fourier_size = {16, -2}};
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "fourier_size[1] = -2");
    o.fourier_size[1] = 10; /* fprop's correlation of 7 outputs with 3 taps needs 9 points */
    assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan), CONVGEN_SUCCESS);
    assert_non_null(strstr(convgen_plan_source(plan, 0), "16x10 Fourier basis"));
    size_t ws = 0;
    assert_int_equal(convgen_plan_workspace_size(plan, &ws), CONVGEN_SUCCESS);
    convgen_plan_destroy(plan);
    o.fourier_size[1] = 8;
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "fourier_size[1] = 8 is below 9");
    o.fourier_size[1] = 10, o.workspace_limit = ws - 1; /* two sub-batches of one image */
    assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan), CONVGEN_SUCCESS);
    assert_non_null(strstr(convgen_plan_source(plan, 0), "sub-batches: 2 chunks of 1 of the batch's images"));
    size_t chunked = 0;
    assert_int_equal(convgen_plan_workspace_size(plan, &chunked), CONVGEN_SUCCESS);
    assert_true(chunked < ws);
    convgen_plan_destroy(plan);
    o.workspace_limit = 1024; /* less than a single image needs */
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan),
                 CONVGEN_ERROR_WORKSPACE_LIMIT, "workspace_limit is 1024");
    assert_null(plan);
    /* convgen's FFTs need no cuFFT work area: a limit of the plan's own workspace keeps the batch whole. */
    for (convgen_algo algo = CONVGEN_ALGO_FFT; algo <= CONVGEN_ALGO_FFT_TILED; ++algo) {
        o = (convgen_plan_options){0};
        assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_BPROP, algo, &o, &plan), CONVGEN_SUCCESS);
        assert_int_equal(convgen_plan_workspace_size(plan, &ws), CONVGEN_SUCCESS);
        convgen_plan_destroy(plan);
        o.workspace_limit = ws;
        assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_BPROP, algo, &o, &plan), CONVGEN_SUCCESS);
        assert_null(strstr(convgen_plan_source(plan, 0), "sub-batches"));
        convgen_plan_destroy(plan);
    }
    o = (convgen_plan_options){.fourier_size = {0, 0, 4}};
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "fourier_size[2] = 4, but the layer has rank 2");
    convgen_conv_desc strided = layer;
    strided.stride[1] = 2;
    assert_error(convgen_plan_conv_ex(ctx, &strided, CONVGEN_BPROP, CONVGEN_ALGO_CUFFT, NULL, &plan),
                 CONVGEN_ERROR_NOT_SUPPORTED, "stride[1] = 2");
    /* Winograd's tile: within [0, 11], within the rank, and alpha = m + r - 1 at most 12 */
    o = (convgen_plan_options){.winograd_m = {2, 13}};
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "winograd_m[1] = 13 must be in [0, 12]");
    o = (convgen_plan_options){.gemm = 4}; /* the products' GEMM: CHOSEN, CUBLAS, GENERATED or TENSOR */
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "gemm = 4");
    o = (convgen_plan_options){.winograd_m = {2, 11}}; /* F(11, 3): alpha 13 */
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "winograd_m[1] = 11");
    convgen_conv_desc padded = {.rank = 2, .n = 1, .c = 1, .k = 1, .in = {3, 3}, .kernel = {3, 3},
                                .pad_before = {40000, 40000}, .pad_after = {40000, 40000}};
    assert_error(convgen_plan_conv_ex(ctx, &padded, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, NULL, &plan),
                 CONVGEN_ERROR_NOT_SUPPORTED, "32-bit indices"); /* 80001^2 outputs a plane */
    o = (convgen_plan_options){.winograd_m = {0, 0, 2}};
    assert_error(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &o, &plan),
                 CONVGEN_ERROR_INVALID_VALUE, "winograd_m[2] = 2, but the layer has rank 2");
    o.winograd_m[2] = 0, o.winograd_m[0] = 6;
    assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &o, &plan), CONVGEN_SUCCESS);
    assert_non_null(strstr(convgen_plan_source(plan, 1), "BT of F(6,3)"));
    convgen_plan_destroy(plan);
    assert_error(convgen_plan_conv_ex(ctx, &strided, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, NULL, &plan),
                 CONVGEN_ERROR_NOT_SUPPORTED, "stride[1] = 2");
    convgen_conv_desc large = layer;
    large.kernel[0] = 9;
    assert_error(convgen_plan_conv_ex(ctx, &large, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, NULL, &plan),
                 CONVGEN_ERROR_NOT_SUPPORTED, "kernel[0] = 9");
    convgen_context_destroy(ctx);
}

/* Does any kernel of the plan have `name` in its entry point? */
static bool has_kernel(const convgen_plan *plan, const char *name)
{
    for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {
        convgen_kernel_info info;
        if (convgen_plan_kernel_info(plan, i, &info) == CONVGEN_SUCCESS && strstr(info.name, name))
            return true;
    }
    return false;
}

static void test_cufft_reads_in_place_only_when_aligned(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    /* A 1x1 kernel: x is its own padded 9x9 image, which cuFFT reads in place... */
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 1, .k = 1, .in = {9, 9}, .kernel = {1, 1}};
    convgen_plan *plan;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &plan), CONVGEN_SUCCESS);
    assert_false(has_kernel(plan, "pad_x"));
    size_t ws = 0;
    convgen_plan_workspace_size(plan, &ws);
    float *p = (float *)(uintptr_t)0x10000;
    assert_error(convgen_execute(plan, p, p, p, (char *)p + 8, ws, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "256-byte aligned");
    assert_error(convgen_execute(plan, p + 1, p, p, p, ws, NULL), CONVGEN_ERROR_INVALID_VALUE, "in0 = ");
    convgen_plan_destroy(plan);
    /* ... but not in sub-batches of one image, 81 floats apart: those would be misaligned. */
    convgen_plan_options o = {.workspace_limit = ws - 1};
    assert_int_equal(convgen_plan_conv_ex(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &o, &plan), CONVGEN_SUCCESS);
    assert_true(has_kernel(plan, "pad_x"));
    convgen_plan_destroy(plan);
    /* A dimension of one point gets a transform of two. */
    d.in[0] = 1;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_CUFFT, &plan), CONVGEN_SUCCESS);
    assert_non_null(strstr(convgen_plan_source(plan, 0), "2x9 Fourier basis"));
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
}

static void test_fft_pads_and_clips_through_its_windows(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc d = layer;
    d.pad_before[0] = d.pad_after[0] = 2;
    convgen_plan *plan;
    /* fprop: x and w are windows of the padded images, y one of the inverse's output; the
     * generated GEMM reads the spectra as the R2Cs leave them (R2C of w, of x, the products,
     * C2R), cuBLAS's after transposes (two more kernels and one back). */
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_count(plan), 4);
    assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip") || has_kernel(plan, "transpose"));
    convgen_plan_destroy(plan);
    convgen_plan_options cublas = {.gemm = CONVGEN_GEMM_CUBLAS};
    assert_int_equal(convgen_plan_conv_ex(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &cublas, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_count(plan), 6);
    assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip") || has_kernel(plan, "products"));
    convgen_plan_destroy(plan);
    /* bprop is the convolution dx = dy * w, every operand a window (either GEMM), without
     * padding and with one up to the kernel's extent less one (here 0 and 2 of 3 taps). */
    for (int gemm = CONVGEN_GEMM_CUBLAS; gemm <= CONVGEN_GEMM_GENERATED; ++gemm) {
        convgen_plan_options o = {.gemm = gemm};
        assert_int_equal(convgen_plan_conv_ex(ctx, &layer, CONVGEN_BPROP, CONVGEN_ALGO_FFT, &o, &plan), CONVGEN_SUCCESS);
        assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip"));
        convgen_plan_destroy(plan);
        assert_int_equal(convgen_plan_conv_ex(ctx, &d, CONVGEN_BPROP, CONVGEN_ALGO_FFT, &o, &plan), CONVGEN_SUCCESS);
        assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip"));
        convgen_plan_destroy(plan);
    }
    /* A padding past that cuts dy's head: bprop is then the correlation with w's taps mirrored,
     * which a kernel writes. */
    convgen_conv_desc wide = layer;
    wide.pad_before[0] = wide.pad_after[0] = 3;
    assert_int_equal(convgen_plan_conv(ctx, &wide, CONVGEN_BPROP, CONVGEN_ALGO_FFT, &plan), CONVGEN_SUCCESS);
    assert_true(has_kernel(plan, "pad_w"));
    assert_false(has_kernel(plan, "pad_dy") || has_kernel(plan, "clip"));
    convgen_plan_destroy(plan);
    /* accgrad with dilated taps: dw is clipped from the padded images. */
    d.dilation[1] = 2;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_ACCGRAD, CONVGEN_ALGO_FFT, &plan), CONVGEN_SUCCESS);
    assert_true(has_kernel(plan, "clip_dw"));
    convgen_plan_destroy(plan);
    /* 3-D: each transform one pass on chip on a basis of 7 points a side (R2C of w, of x, the
     * products, C2R), the operands through the windows still; on a basis of 35 (in[0] = 34), a
     * plane stage and a depth pass each; a cubic basis past convgen's 3-D transforms is refused. */
    convgen_conv_desc volume = {.rank = 3, .n = 1, .c = 1, .k = 1, .in = {5, 6, 7}, .kernel = {3, 3, 3}};
    assert_int_equal(convgen_plan_conv(ctx, &volume, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_count(plan), 4);
    assert_true(has_kernel(plan, "r2c3d7_one_pass") && has_kernel(plan, "c2r3d7_one_pass"));
    assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip") || has_kernel(plan, "transpose"));
    convgen_plan_destroy(plan);
    volume.in[0] = 34;
    assert_int_equal(convgen_plan_conv(ctx, &volume, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_count(plan), 7);
    assert_true(has_kernel(plan, "3d35_planes") && has_kernel(plan, "3d35_depth"));
    assert_false(has_kernel(plan, "pad") || has_kernel(plan, "clip") || has_kernel(plan, "transpose"));
    convgen_plan_destroy(plan);
    volume.in[0] = 70;
    assert_error(convgen_plan_conv(ctx, &volume, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &plan), CONVGEN_ERROR_NOT_SUPPORTED,
                 "beyond 64 in 3-D");
    convgen_context_destroy(ctx);
}

/* The plan cache keys a program by its problem's kind and fields: planning one problem again
 * shares the first plan's program (the very same source), another problem or kind does not,
 * and each plan runs only through its kind's execute. */
static void test_plans_of_one_problem_share_their_program(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc other = layer;
    other.dilation[1] = 2;
    convgen_fft_desc f = {.rank = 1, .n = 16, .type = CONVGEN_FFT_R2C, .batch = 4}, g = f;
    g.scale = 0.5f;
    convgen_plan *a, *b, *c, *fa, *fb, *fc;
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &a), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &b), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_conv(ctx, &other, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &c), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_fft(ctx, &f, &fa), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_fft(ctx, &f, &fb), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_fft(ctx, &g, &fc), CONVGEN_SUCCESS);
    assert_ptr_equal(convgen_plan_source(a, 0), convgen_plan_source(b, 0));
    assert_ptr_not_equal(convgen_plan_source(a, 0), convgen_plan_source(c, 0));
    assert_ptr_equal(convgen_plan_source(fa, 0), convgen_plan_source(fb, 0));
    assert_ptr_not_equal(convgen_plan_source(fa, 0), convgen_plan_source(fc, 0));
    convgen_kernel_info info;
    assert_int_equal(convgen_plan_kernel_info(fb, 0, &info), CONVGEN_SUCCESS);
    assert_int_equal(info.origin, CONVGEN_FROM_MEMORY_CACHE);
    float *p = (float *)(uintptr_t)0x1000;
    assert_error(convgen_execute(fa, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "FFT plan");
    assert_error(convgen_execute_fft(a, p, p + 64, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "convolution plan");
    convgen_choice choice;
    assert_error(convgen_plan_choice(fa, &choice), CONVGEN_ERROR_INVALID_VALUE, "FFT plan");
    assert_int_equal(convgen_plan_choice(a, &choice), CONVGEN_SUCCESS);
    assert_false(convgen_plan_prepares_weights(fa));
    convgen_plan *plans[] = {a, b, c, fa, fb, fc};
    for (size_t i = 0; i < sizeof plans / sizeof plans[0]; ++i)
        convgen_plan_destroy(plans[i]);
    convgen_context_destroy(ctx);
}

/* A layer's epilogue: only known bits, only fprop, its own plan (not another's program), and
 * a bias exactly where the layer adds one, named by each refusal. */
static void test_epilogue_is_checked(void **state)
{
    (void)state;
    convgen_context *ctx = offline();
    convgen_conv_desc biased = layer, bad = layer;
    biased.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
    bad.epilogue = 4;
    convgen_plan *plain, *with, *relu;
    assert_error(convgen_plan_conv(ctx, &bad, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &with), CONVGEN_ERROR_INVALID_VALUE,
                 "epilogue");
    assert_error(convgen_plan_conv(ctx, &biased, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, &with), CONVGEN_ERROR_INVALID_VALUE,
                 "epilogue");
    assert_error(convgen_plan_conv(ctx, &biased, CONVGEN_ACCGRAD, CONVGEN_ALGO_AUTO, &with), CONVGEN_ERROR_INVALID_VALUE,
                 "epilogue");
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plain), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_conv(ctx, &biased, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &with), CONVGEN_SUCCESS);
    biased.epilogue = CONVGEN_EPILOGUE_RELU;
    assert_int_equal(convgen_plan_conv(ctx, &biased, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &relu), CONVGEN_SUCCESS);
    assert_ptr_not_equal(convgen_plan_source(plain, 0), convgen_plan_source(with, 0));
    assert_ptr_not_equal(convgen_plan_source(relu, 0), convgen_plan_source(with, 0));
    assert_non_null(strstr(convgen_plan_source(with, 0), "const float *__restrict__ bias"));
    assert_non_null(strstr(convgen_plan_source(with, 0), "--bias --relu"));
    assert_null(strstr(convgen_plan_source(relu, 0), "bias"));
    float *p = (float *)(uintptr_t)0x1000; /* never dereferenced: argument checks come first */
    assert_error(convgen_execute(with, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "convgen_execute_bias");
    assert_error(convgen_execute_bias(with, p, p, NULL, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "bias is NULL");
    assert_error(convgen_execute_bias(plain, p, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "bias");
    assert_error(convgen_execute_bias(relu, p, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "bias");
    assert_error(convgen_execute_bias(with, p, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    assert_error(convgen_execute(relu, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_NO_DEVICE, "offline");
    assert_error(convgen_execute_prepared_bias(with, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE,
                 "no weight transforms");
    convgen_plan_destroy(plain);
    convgen_plan_destroy(with);
    convgen_plan_destroy(relu);
    convgen_context_destroy(ctx);
}

static void test_emit_needs_no_context(void **state)
{
    (void)state;
    char *src = NULL;
    assert_int_equal(convgen_emit(&layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, 0, &src), CONVGEN_SUCCESS);
    assert_non_null(strstr(src, "__global__"));
    free(src);
    assert_error(convgen_emit(&layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, 5, &src), CONVGEN_ERROR_INVALID_VALUE, "kernel index 5");
    assert_null(src);
    assert_error(convgen_emit(&layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, 0, NULL), CONVGEN_ERROR_INVALID_VALUE, "source");
}

static void test_every_status_has_its_own_sentence(void **state)
{
    (void)state;
    for (int a = CONVGEN_SUCCESS; a <= CONVGEN_ERROR_WORKSPACE_LIMIT; ++a) {
        assert_true(strlen(convgen_status_string((convgen_status)a)) > 3);
        for (int b = 0; b < a; ++b)
            assert_string_not_equal(convgen_status_string((convgen_status)a), convgen_status_string((convgen_status)b));
    }
    assert_string_equal(convgen_status_string((convgen_status)99), "unknown status");
}

static int warnings;
static void count_warnings(convgen_log_level level, const char *message, void *user)
{
    (void)message;
    (void)user;
    warnings += level == CONVGEN_LOG_WARNING;
}

static void test_unwritable_cache_dir_warns_once_and_still_compiles(void **state)
{
    (void)state;
    convgen_set_log_callback(count_warnings, NULL);
    /* A folder under a regular file cannot be created, even by root. */
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .cache_dir = "/dev/null/convgen"};
    convgen_context *ctx;
    assert_int_equal(convgen_context_create(&o, &ctx), CONVGEN_SUCCESS);
    convgen_plan *plan;
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    convgen_plan_destroy(plan);
    assert_int_equal(convgen_plan_conv(ctx, &layer, CONVGEN_ACCGRAD, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
    assert_int_equal(warnings, 1);
    convgen_set_log_callback(NULL, NULL);
}

/* convgen check's bound follows the pass's reduction length: a 9-term-sum floor of 1e-5, and a
 * weight gradient over 128 x 31 x 31 products (measured at 1.05e-5 to 3.1e-5 on correct plans)
 * held to 4 u sqrt(L), not to the floor. */
static void test_check_bound_follows_the_reduction_length(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 2, .n = 128, .c = 96, .k = 256, .in = {31, 31}, .kernel = {5, 5},
                           .pad_before = {2, 2}, .pad_after = {2, 2}};
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    double accgrad = cg_verify_bound(&p, CONVGEN_ACCGRAD), fprop = cg_verify_bound(&p, CONVGEN_FPROP);
    assert_true(accgrad >= 4 * 0x1p-24 * sqrt(128.0 * 31 * 31) * 0.999 && accgrad > 3.1e-5);
    assert_true(fprop >= 1e-5 && fprop < accgrad);
    d = (convgen_conv_desc){.rank = 2, .n = 1, .c = 1, .k = 1, .in = {3, 3}, .kernel = {3, 3}};
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    assert_true(cg_verify_bound(&p, CONVGEN_FPROP) == 1e-5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_context_arguments_are_checked),
        cmocka_unit_test(test_device_context_succeeds_or_says_why_not),
        cmocka_unit_test(test_plan_arguments_are_checked),
        cmocka_unit_test(test_offline_plan_reports_but_does_not_execute),
        cmocka_unit_test(test_prepared_weights_are_checked),
        cmocka_unit_test(test_execute_refuses_too_little_workspace),
        cmocka_unit_test(test_execute_refuses_a_misaligned_workspace),
        cmocka_unit_test(test_plan_options_are_checked),
        cmocka_unit_test(test_cufft_reads_in_place_only_when_aligned),
        cmocka_unit_test(test_fft_pads_and_clips_through_its_windows),
        cmocka_unit_test(test_plans_of_one_problem_share_their_program),
        cmocka_unit_test(test_epilogue_is_checked),
        cmocka_unit_test(test_emit_needs_no_context),
        cmocka_unit_test(test_every_status_has_its_own_sentence),
        cmocka_unit_test(test_unwritable_cache_dir_warns_once_and_still_compiles),
        cmocka_unit_test(test_check_bound_follows_the_reduction_length),
    };
    return cmocka_run_group_tests_name("api", tests, NULL, NULL);
}
