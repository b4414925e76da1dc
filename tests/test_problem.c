/* Tests of problem.c: every invalid field is refused with a message naming it, output sizes
 * match cuDNN's rule on hand-computed layers, and tensor sizes past 2^63 bytes are caught. And
 * of the problem kinds (problem_kind.h): what they print, the registry of kinds, and a program
 * generated from a kind's spec as from its own entry point. (The keys' fields: test_cache.c.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fft/fft_kernel.h"
#include "fft/fft_problem.h"
#include "generate.h"
#include "problem.h"

#define BIG (INT64_C(1) << 31) /* one past the largest dimension a kernel can index */

/* fbfft/cuDNN layer 2 of bench/layers.txt: the valid starting point of most tests. */
static convgen_conv_desc layer_l2(void)
{
    return (convgen_conv_desc){.rank = 2, .n = 128, .c = 64, .k = 64, .in = {64, 64}, .kernel = {9, 9}};
}

/* Fails unless init refuses desc with INVALID_VALUE and a message containing `expected`. */
static void expect_invalid(const convgen_conv_desc *desc, const char *expected)
{
    cg_problem p;
    convgen_status st = cg_problem_init(&p, desc);
    if (st != CONVGEN_ERROR_INVALID_VALUE)
        fail_msg("expected \"%s\": got status %d (%s)", expected, st, convgen_status_string(st));
    if (!strstr(convgen_last_error(), expected))
        fail_msg("expected \"%s\" in \"%s\"", expected, convgen_last_error());
}

static cg_problem init_or_fail(const convgen_conv_desc *desc)
{
    cg_problem p;
    if (cg_problem_init(&p, desc) != CONVGEN_SUCCESS)
        fail_msg("cg_problem_init failed: %s", convgen_last_error());
    return p;
}

/* Field by field: struct padding makes memcmp unreliable. */
static void assert_same_problem(const cg_problem *a, const cg_problem *b)
{
    assert_int_equal(a->rank, b->rank);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->c, b->c);
    assert_int_equal(a->k, b->k);
    assert_int_equal(a->flip, b->flip);
    for (int i = 0; i < CONVGEN_MAX_RANK; ++i) {
        assert_int_equal(a->in[i], b->in[i]);
        assert_int_equal(a->kernel[i], b->kernel[i]);
        assert_int_equal(a->out[i], b->out[i]);
        assert_int_equal(a->pad_before[i], b->pad_before[i]);
        assert_int_equal(a->pad_after[i], b->pad_after[i]);
        assert_int_equal(a->stride[i], b->stride[i]);
        assert_int_equal(a->dilation[i], b->dilation[i]);
    }
}

/* ---- invalid fields ---- */

static void test_null_desc_is_rejected(void **state)
{
    (void)state;
    expect_invalid(NULL, "desc is NULL");
}

static void test_rank_outside_1_to_3_is_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.rank = 4;
    expect_invalid(&d, "rank = 4 must be 1, 2 or 3");
    d.rank = 0;
    expect_invalid(&d, "rank = 0 must be 1, 2 or 3");
    d.rank = -1;
    expect_invalid(&d, "rank = -1 must be 1, 2 or 3");
}

static void test_batch_and_channels_below_1_are_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.n = 0;
    expect_invalid(&d, "n = 0 must be >= 1");
    d = layer_l2();
    d.c = -1;
    expect_invalid(&d, "c = -1 must be >= 1");
    d = layer_l2();
    d.k = 0;
    expect_invalid(&d, "k = 0 must be >= 1");
}

static void test_spatial_sizes_below_1_are_rejected_naming_the_dimension(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.kernel[1] = 0;
    expect_invalid(&d, "kernel[1] = 0 must be >= 1");
    d = layer_l2();
    d.in[0] = 0;
    expect_invalid(&d, "in[0] = 0 must be >= 1");
    d = (convgen_conv_desc){.rank = 3, .n = 1, .c = 1, .k = 1, .in = {4, 4, -7}, .kernel = {1, 1, 1}};
    expect_invalid(&d, "in[2] = -7 must be >= 1");
}

static void test_negative_padding_is_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.pad_before[1] = -1;
    expect_invalid(&d, "pad_before[1] = -1 must be >= 0");
    d = layer_l2();
    d.pad_after[0] = -3;
    expect_invalid(&d, "pad_after[0] = -3 must be >= 0");
}

static void test_negative_stride_or_dilation_is_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.stride[0] = -2;
    expect_invalid(&d, "stride[0] = -2 must be >= 1 (0 means 1)");
    d = layer_l2();
    d.dilation[1] = -2;
    expect_invalid(&d, "dilation[1] = -2 must be >= 1 (0 means 1)");
}

static void test_unknown_mode_is_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    d.mode = (convgen_mode)2;
    expect_invalid(&d, "mode = 2 must be");
    d.mode = (convgen_mode)-1;
    expect_invalid(&d, "mode = -1 must be");
}

/* Each field one past INT32_MAX, with the reason in the message. */
static void test_dimensions_past_int32_are_rejected(void **state)
{
    (void)state;
    const char *rule = "must be <= 2147483647 (kernels index with 32-bit values)";
    char expected[160];
    convgen_conv_desc d = layer_l2();
    d.n = BIG;
    snprintf(expected, sizeof expected, "n = 2147483648 %s", rule);
    expect_invalid(&d, expected);
    d = layer_l2();
    d.c = INT64_MAX;
    expect_invalid(&d, "c = 9223372036854775807 must be <= 2147483647");
    d = layer_l2();
    d.k = BIG;
    expect_invalid(&d, "k = 2147483648 must be <= 2147483647");
    const char *fields[] = {"in[1]", "kernel[1]", "pad_before[1]", "pad_after[1]", "stride[1]", "dilation[1]"};
    for (int f = 0; f < 6; ++f) {
        d = layer_l2();
        int64_t *field[] = {&d.in[1], &d.kernel[1], &d.pad_before[1], &d.pad_after[1], &d.stride[1], &d.dilation[1]};
        *field[f] = BIG;
        snprintf(expected, sizeof expected, "%s = 2147483648 %s", fields[f], rule);
        expect_invalid(&d, expected);
    }
}

static void test_kernel_wider_than_padded_input_is_rejected_naming_the_dimension(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 2, .n = 1, .c = 1, .k = 1, .in = {9, 5}, .kernel = {3, 7}};
    expect_invalid(&d, "kernel[1] = 7 with dilation 1 spans 7, more than the padded in[1] = 5 + 0 + 0 = 5");
    /* A dilated kernel of 3 taps spans 7 pixels. */
    d = (convgen_conv_desc){.rank = 2, .n = 1, .c = 1, .k = 1, .in = {6, 9}, .kernel = {3, 3},
                            .dilation = {3, 1}};
    expect_invalid(&d, "kernel[0] = 3 with dilation 3 spans 7, more than the padded in[0]");
    /* Padding on either side makes room for exactly one output. */
    d = (convgen_conv_desc){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5}, .kernel = {7},
                            .pad_before = {1}, .pad_after = {1}};
    cg_problem p = init_or_fail(&d);
    assert_int_equal(p.out[0], 1);
}

static void test_output_past_int32_from_padding_is_rejected(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 1, .n = 1, .c = 1, .k = 1, .in = {INT32_MAX}, .kernel = {1},
                           .pad_before = {INT32_MAX}};
    expect_invalid(&d, "out[0] = 4294967294 must be <= 2147483647");
    d.stride[0] = 2;
    cg_problem p = init_or_fail(&d);
    assert_int_equal(p.out[0], 2147483647);
}

/* ---- output sizes ---- */

typedef struct layer {
    const char *name;
    int rank;
    int64_t in, kernel, pad, stride, out; /* the same along every dimension, as in layers.txt */
} layer;

/* Outputs worked by hand: (in + 2 pad - kernel) / stride + 1. */
static const layer bench_layers[] = {
    {"L1", 2, 128, 11, 0, 1, 118}, {"L2", 2, 64, 9, 0, 1, 56},   {"L3", 2, 32, 9, 0, 1, 24},
    {"L4", 2, 16, 7, 0, 1, 10},    {"L5", 2, 13, 3, 0, 1, 11},   {"S57", 2, 57, 3, 0, 1, 55},
    {"V1", 2, 224, 3, 1, 1, 224},  {"R4", 2, 7, 3, 1, 1, 7},     {"F1", 2, 32, 5, 2, 1, 32},
    {"G1", 2, 224, 7, 3, 2, 112},  {"G2", 2, 28, 7, 3, 1, 28},   {"B3", 2, 32, 9, 0, 1, 24},
    {"Z3", 3, 48, 3, 0, 1, 46},    {"Z5", 3, 48, 5, 0, 1, 44},   {"Z7", 3, 40, 7, 0, 1, 34},
};

static void test_output_sizes_of_benchmark_layers_match_cudnn(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof bench_layers / sizeof bench_layers[0]; ++i) {
        const layer *l = &bench_layers[i];
        convgen_conv_desc d = {.rank = l->rank, .n = 32, .c = 64, .k = 64};
        for (int j = 0; j < l->rank; ++j) {
            d.in[j] = l->in;
            d.kernel[j] = l->kernel;
            d.pad_before[j] = d.pad_after[j] = l->pad;
            d.stride[j] = l->stride;
        }
        int64_t out[CONVGEN_MAX_RANK] = {-1, -1, -1};
        assert_int_equal(convgen_output_size(&d, out), CONVGEN_SUCCESS);
        for (int j = 0; j < l->rank; ++j)
            if (out[j] != l->out)
                fail_msg("%s: out[%d] = %lld, cuDNN gives %lld", l->name, j, (long long)out[j], (long long)l->out);
    }
}

/* Output sizes of one 1-D problem, for the cases below. */
static int64_t out_1d(int64_t in, int64_t kernel, int64_t pad_before, int64_t pad_after, int64_t stride,
                      int64_t dilation)
{
    convgen_conv_desc d = {.rank = 1, .n = 1, .c = 1, .k = 1, .in = {in}, .kernel = {kernel},
                           .pad_before = {pad_before}, .pad_after = {pad_after}, .stride = {stride},
                           .dilation = {dilation}};
    int64_t out[CONVGEN_MAX_RANK];
    if (convgen_output_size(&d, out) != CONVGEN_SUCCESS)
        fail_msg("convgen_output_size failed: %s", convgen_last_error());
    return out[0];
}

static void test_asymmetric_padding_counts_both_sides(void **state)
{
    (void)state;
    assert_int_equal(out_1d(10, 3, 2, 0, 1, 1), 10);  /* (12 - 3) / 1 + 1 */
    assert_int_equal(out_1d(10, 3, 2, 0, 2, 1), 5);   /* (12 - 3) / 2 + 1 */
    assert_int_equal(out_1d(7, 2, 0, 1, 2, 1), 4);    /* (8 - 2) / 2 + 1 */
    assert_int_equal(out_1d(224, 7, 2, 3, 2, 1), 112); /* TensorFlow's SAME for G1 */
    assert_int_equal(out_1d(224, 7, 3, 2, 2, 1), 112);
    assert_int_equal(out_1d(8, 3, 0, 4, 3, 1), 4);    /* (12 - 3) / 3 + 1 */
}

static void test_dilation_widens_the_kernel(void **state)
{
    (void)state;
    assert_int_equal(out_1d(32, 3, 2, 2, 1, 2), 32); /* span 5: (36 - 5) + 1 */
    assert_int_equal(out_1d(10, 3, 0, 0, 1, 2), 6);  /* span 5: (10 - 5) + 1 */
    assert_int_equal(out_1d(15, 3, 1, 1, 2, 3), 6);  /* span 7: (17 - 7) / 2 + 1 */
    assert_int_equal(out_1d(9, 1, 0, 0, 1, 5), 9);   /* one tap spans one pixel at any dilation */
}

static void test_rank_1_and_rank_3_use_their_own_dimensions(void **state)
{
    (void)state;
    assert_int_equal(out_1d(100, 5, 0, 0, 3, 1), 32); /* 95 / 3 + 1 */
    convgen_conv_desc d = {.rank = 3, .n = 2, .c = 3, .k = 4, .in = {8, 16, 32}, .kernel = {3, 3, 1},
                           .pad_before = {1, 0, 0}, .pad_after = {1, 0, 0}, .stride = {1, 2, 4}};
    cg_problem p = init_or_fail(&d);
    assert_int_equal(p.out[0], 8); /* (10 - 3) / 1 + 1 */
    assert_int_equal(p.out[1], 7); /* (16 - 3) / 2 + 1 */
    assert_int_equal(p.out[2], 8); /* (32 - 1) / 4 + 1 */
}

static void test_zero_stride_and_dilation_mean_1(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    cg_problem p = init_or_fail(&d);
    for (int i = 0; i < 2; ++i) {
        assert_int_equal(p.stride[i], 1);
        assert_int_equal(p.dilation[i], 1);
        assert_int_equal(p.out[i], 56);
    }
    d.stride[1] = 1;
    d.dilation[0] = 1;
    cg_problem explicit_ones = init_or_fail(&d);
    assert_same_problem(&p, &explicit_ones);
}

static void test_entries_past_rank_are_ignored(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 1, .n = 1, .c = 1, .k = 1, .in = {10, 0, -5}, .kernel = {3, 0, 99},
                           .pad_before = {0, -1, 7}, .pad_after = {0, 4, -2}, .stride = {0, -2, 3},
                           .dilation = {0, 5, -9}};
    cg_problem p = init_or_fail(&d);
    assert_int_equal(p.out[0], 8);
    for (int i = 1; i < CONVGEN_MAX_RANK; ++i) {
        assert_int_equal(p.in[i], 1);
        assert_int_equal(p.kernel[i], 1);
        assert_int_equal(p.out[i], 1);
        assert_int_equal(p.stride[i], 1);
        assert_int_equal(p.dilation[i], 1);
        assert_int_equal(p.pad_before[i], 0);
        assert_int_equal(p.pad_after[i], 0);
    }
}

static void test_mode_sets_flip(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    assert_false(init_or_fail(&d).flip);
    d.mode = CONVGEN_CONVOLUTION;
    assert_true(init_or_fail(&d).flip);
}

/* ---- tensor sizes ---- */

static void test_tensors_of_2_63_bytes_are_rejected_naming_the_tensor(void **state)
{
    (void)state;
    const int64_t top = INT32_MAX;
    convgen_conv_desc d = {.rank = 2, .n = top, .c = top, .k = 1, .in = {top, top}, .kernel = {1, 1}};
    expect_invalid(&d, "x [n][c][in...] has 2^63 bytes or more");
    /* w alone: padding lets the kernel grow while x stays small. */
    d = (convgen_conv_desc){.rank = 2, .n = 1, .c = 1, .k = top, .in = {1, 1}, .kernel = {top, top},
                            .pad_after = {top - 1, top - 1}};
    expect_invalid(&d, "w [k][c][kernel...] has 2^63 bytes or more");
    /* y alone: padding grows the output. */
    d = (convgen_conv_desc){.rank = 1, .n = top, .c = 1, .k = top, .in = {1}, .kernel = {1},
                            .pad_after = {top - 1}};
    expect_invalid(&d, "y [n][k][out...] has 2^63 bytes or more");
}

/* The limit is on bytes: 2^61 fp32 elements are 2^63 bytes and refused; 2^61 - 2^30 are not. */
static void test_limit_is_2_63_bytes_not_elements(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 1, .n = INT64_C(1) << 30, .c = INT32_MAX, .k = 1, .in = {1}, .kernel = {1}};
    cg_problem p = init_or_fail(&d); /* x: 2^61 - 2^30 elements, 2^63 - 2^32 bytes */
    assert_int_equal(cg_problem_x_elems(&p), (INT64_C(1) << 61) - (INT64_C(1) << 30));
    d.c = INT64_C(1) << 30;
    d.in[0] = 2;
    expect_invalid(&d, "x [n][c][in...] has 2^63 bytes or more"); /* exactly 2^61 elements */
}

/* ---- counts ---- */

static void test_element_counts_follow_the_pass(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    cg_problem p = init_or_fail(&d);
    const int64_t x = 128 * 64 * 64 * 64, w = 64 * 64 * 9 * 9, y = 128 * 64 * 56 * 56;
    assert_int_equal(cg_problem_in_pixels(&p), 64 * 64);
    assert_int_equal(cg_problem_kernel_pixels(&p), 81);
    assert_int_equal(cg_problem_out_pixels(&p), 56 * 56);
    assert_int_equal(cg_problem_x_elems(&p), x);
    assert_int_equal(cg_problem_w_elems(&p), w);
    assert_int_equal(cg_problem_y_elems(&p), y);
    const struct { convgen_pass pass; int64_t elems[3]; } passes[] = {
        {CONVGEN_FPROP, {x, w, y}}, {CONVGEN_BPROP, {y, w, x}}, {CONVGEN_ACCGRAD, {x, y, w}}};
    for (int i = 0; i < 3; ++i) {
        int64_t elems[3] = {0, 0, 0};
        cg_problem_operand_elems(&p, passes[i].pass, elems);
        for (int j = 0; j < 3; ++j)
            if (elems[j] != passes[i].elems[j])
                fail_msg("pass %d operand %d: %lld elements, expected %lld", (int)passes[i].pass, j,
                         (long long)elems[j], (long long)passes[i].elems[j]);
    }
}

static void test_flops_count_every_multiply_add_twice(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    cg_problem p = init_or_fail(&d);
    assert_true(cg_problem_flops(&p) == 266355081216.0); /* 2 * 128 * 64 * 64 * 81 * 56 * 56 */
    d = (convgen_conv_desc){.rank = 3, .n = 1, .c = 80, .k = 80, .in = {48, 48, 48}, .kernel = {3, 3, 3}};
    p = init_or_fail(&d);
    assert_true(cg_problem_flops(&p) == 2.0 * 80 * 80 * 27 * 46 * 46 * 46); /* Z3 */
}

/* ---- convgen_output_size ---- */

static void test_output_size_rejects_null_out_and_bad_desc(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    assert_int_equal(convgen_output_size(&d, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "out is NULL"));
    int64_t out[CONVGEN_MAX_RANK] = {-1, -1, -1};
    assert_int_equal(convgen_output_size(NULL, out), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "desc is NULL"));
    d.kernel[0] = 0;
    assert_int_equal(convgen_output_size(&d, out), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "kernel[0] = 0 must be >= 1"));
    assert_int_equal(out[0], -1); /* untouched on failure */
}

static void test_failed_init_leaves_the_problem_untouched(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    cg_problem p = init_or_fail(&d), before = p;
    d.in[1] = 4; /* 9x9 kernel on 4 pixels: fails after dimension 0 was filled in */
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_ERROR_INVALID_VALUE);
    assert_same_problem(&p, &before);
}

/* ---- problem kinds ---- */

static cg_fft_problem fft_or_fail(const convgen_fft_desc *d)
{
    cg_fft_problem p;
    if (cg_fft_problem_init(&p, d) != CONVGEN_SUCCESS)
        fail_msg("cg_fft_problem_init failed: %s", convgen_last_error());
    return p;
}

static const convgen_fft_desc fft_r2c = {.rank = 2, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 4, .channels = 3,
                                         .window = {27, 25}, .offset = {2, 3}};

static void test_kinds_describe_their_problems(void **state)
{
    (void)state;
    convgen_conv_desc l2 = layer_l2(), odd = {.rank = 2, .n = 1, .c = 2, .k = 3, .in = {16, 16}, .kernel = {3, 3},
                                              .pad_before = {1, 1}, .pad_after = {1, 2}, .stride = {2, 1},
                                              .dilation = {1, 2}, .mode = CONVGEN_CONVOLUTION};
    cg_problem a = init_or_fail(&l2), b = init_or_fail(&odd);
    cg_fft_problem f = fft_or_fail(&fft_r2c);
    char text[256];
    cg_conv_kind.describe(&a, text, sizeof text);
    assert_string_equal(text, "128 64 64 64x64 9x9 0 1");
    cg_conv_kind.describe(&b, text, sizeof text);
    assert_string_equal(text, "1 2 3 16x16 3x3 1 2 --pad-after 1x2 --stride 2x1 --dilation 1x2 --convolution");
    cg_fft_kind.describe(&f, text, sizeof text);
    assert_string_equal(text, "R2C forward 2-D n = 32, 12 transforms (4 x 3 channels), window 27x25 at 2,3");
    assert_string_equal(cg_conv_kind.name, "conv");
    assert_string_equal(cg_fft_kind.name, "fft");
}

/* Each kind once in the registry, with its methods, found by itself; the two there are now. */
static void test_registry_holds_each_kind_once(void **state)
{
    (void)state;
    bool conv = false, fft = false;
    for (int i = 0; i < cg_kind_count(); ++i) {
        const cg_kind_planner *k = cg_kind_at(i);
        assert_non_null(k->kind->name);
        assert_non_null(k->kind->hash);
        assert_non_null(k->kind->describe);
        assert_non_null(k->generate);
        assert_ptr_equal(cg_kind_planner_of(k->kind), k);
        for (int j = 0; j < i; ++j)
            assert_string_not_equal(cg_kind_at(j)->kind->name, k->kind->name);
        conv |= k->kind == &cg_conv_kind, fft |= k->kind == &cg_fft_kind;
    }
    assert_true(conv && fft);
    assert_null(cg_kind_at(cg_kind_count()));
    assert_null(cg_kind_at(-1));
}

static void test_problems_are_the_same_only_of_one_kind_and_fields(void **state)
{
    (void)state;
    convgen_conv_desc d = layer_l2();
    cg_problem a = init_or_fail(&d), b = init_or_fail(&d);
    cg_fft_problem f = fft_or_fail(&fft_r2c), g = fft_or_fail(&fft_r2c);
    assert_true(cg_problem_same(cg_conv_ref(&a), cg_conv_ref(&b)));
    assert_true(cg_problem_same(cg_fft_ref(&f), cg_fft_ref(&g)));
    assert_false(cg_problem_same(cg_conv_ref(&a), cg_fft_ref(&f)));
    /* a kind that hashes as another is still another: its name comes first */
    const cg_problem_kind twin = {"twin", cg_conv_kind.hash, cg_conv_kind.describe};
    assert_false(cg_problem_same(cg_conv_ref(&a), (cg_problem_ref){&twin, &b}));
    b.dilation[1] = 2;
    g.natural = !g.natural;
    assert_false(cg_problem_same(cg_conv_ref(&a), cg_conv_ref(&b)));
    assert_false(cg_problem_same(cg_fft_ref(&f), cg_fft_ref(&g)));
}

static void expect_same_program(const cg_generated *a, const cg_generated *b)
{
    assert_int_equal(a->kernel_count, b->kernel_count);
    for (int i = 0; i < a->kernel_count; ++i)
        assert_string_equal(a->kernels[i].source, b->kernels[i].source);
}

/* cg_generate_spec goes through the kind: a convolution's program is cg_generate_tuned's, an
 * FFT's cg_generate_fft_plan's, byte for byte; a kind not in the registry is refused. */
static void test_generating_starts_from_the_kind(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 3, .k = 4, .in = {9, 9}, .kernel = {3, 3}};
    cg_problem p = init_or_fail(&d);
    cg_fft_problem f = fft_or_fail(&fft_r2c);
    cg_tuning tune = {.gemm = CONVGEN_GEMM_GENERATED};
    cg_target t = {.sm_count = 108, .arch = "sm_80"};
    cg_generated by_spec, direct;
    assert_int_equal(cg_generate_spec(&(cg_spec){cg_conv_ref(&p), CONVGEN_BPROP, CONVGEN_ALGO_FFT, &tune}, &t, &by_spec),
                     CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_BPROP, CONVGEN_ALGO_FFT, &t, &tune, &direct), CONVGEN_SUCCESS);
    expect_same_program(&by_spec, &direct);
    assert_int_equal(by_spec.algo, CONVGEN_ALGO_FFT);
    cg_generated_free(&by_spec), cg_generated_free(&direct);
    assert_int_equal(cg_generate_spec(&(cg_spec){.problem = cg_fft_ref(&f)}, NULL, &by_spec), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_fft_plan(&f, NULL, &direct), CONVGEN_SUCCESS);
    expect_same_program(&by_spec, &direct);
    assert_non_null(strstr(by_spec.kernels[0].source, "emitted by: convgen emit --algo fft --type r2c"));
    cg_generated_free(&by_spec), cg_generated_free(&direct);
    const cg_problem_kind stray = {"stray", cg_conv_kind.hash, cg_conv_kind.describe};
    assert_int_equal(cg_generate_spec(&(cg_spec){.problem = {&stray, &p}}, NULL, &by_spec), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "problem kind stray"));
    assert_int_equal(by_spec.kernel_count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_null_desc_is_rejected),
        cmocka_unit_test(test_rank_outside_1_to_3_is_rejected),
        cmocka_unit_test(test_batch_and_channels_below_1_are_rejected),
        cmocka_unit_test(test_spatial_sizes_below_1_are_rejected_naming_the_dimension),
        cmocka_unit_test(test_negative_padding_is_rejected),
        cmocka_unit_test(test_negative_stride_or_dilation_is_rejected),
        cmocka_unit_test(test_unknown_mode_is_rejected),
        cmocka_unit_test(test_dimensions_past_int32_are_rejected),
        cmocka_unit_test(test_kernel_wider_than_padded_input_is_rejected_naming_the_dimension),
        cmocka_unit_test(test_output_past_int32_from_padding_is_rejected),
        cmocka_unit_test(test_output_sizes_of_benchmark_layers_match_cudnn),
        cmocka_unit_test(test_asymmetric_padding_counts_both_sides),
        cmocka_unit_test(test_dilation_widens_the_kernel),
        cmocka_unit_test(test_rank_1_and_rank_3_use_their_own_dimensions),
        cmocka_unit_test(test_zero_stride_and_dilation_mean_1),
        cmocka_unit_test(test_entries_past_rank_are_ignored),
        cmocka_unit_test(test_mode_sets_flip),
        cmocka_unit_test(test_tensors_of_2_63_bytes_are_rejected_naming_the_tensor),
        cmocka_unit_test(test_limit_is_2_63_bytes_not_elements),
        cmocka_unit_test(test_element_counts_follow_the_pass),
        cmocka_unit_test(test_flops_count_every_multiply_add_twice),
        cmocka_unit_test(test_output_size_rejects_null_out_and_bad_desc),
        cmocka_unit_test(test_failed_init_leaves_the_problem_untouched),
        cmocka_unit_test(test_kinds_describe_their_problems),
        cmocka_unit_test(test_registry_holds_each_kind_once),
        cmocka_unit_test(test_problems_are_the_same_only_of_one_kind_and_fields),
        cmocka_unit_test(test_generating_starts_from_the_kind),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
