/* The CPU reference: hand-computed small cases for each pass and each geometric feature, the
 * adjoint identities that tie fprop, bprop and accgrad together on random data, per-element
 * evaluation against the whole tensor, and the relative-error measure. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "reference.h"

/* A problem as cg_problem_init would leave it: stride and dilation 0 mean 1, and the output
 * sizes follow cuDNN. Built here so these tests do not depend on problem.c. */
static cg_problem finish(cg_problem p)
{
    for (int d = 0; d < p.rank; d++) {
        if (p.stride[d] == 0)
            p.stride[d] = 1;
        if (p.dilation[d] == 0)
            p.dilation[d] = 1;
        p.out[d] = (p.in[d] + p.pad_before[d] + p.pad_after[d] -
                    p.dilation[d] * (p.kernel[d] - 1) - 1) / p.stride[d] + 1;
    }
    return p;
}

static int64_t spatial(const int64_t *size, int rank)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= size[d];
    return n;
}

static int64_t x_elems(const cg_problem *p) { return p->n * p->c * spatial(p->in, p->rank); }
static int64_t w_elems(const cg_problem *p) { return p->k * p->c * spatial(p->kernel, p->rank); }
static int64_t y_elems(const cg_problem *p) { return p->n * p->k * spatial(p->out, p->rank); }

static int64_t out_elems(const cg_problem *p, convgen_pass pass)
{
    switch (pass) {
    case CONVGEN_BPROP: return x_elems(p);
    case CONVGEN_ACCGRAD: return w_elems(p);
    case CONVGEN_FPROP: break;
    }
    return y_elems(p);
}

/* The hand cases use small integers, which float64 sums exactly. */
static void expect_values(const double *got, const double *want, int64_t n)
{
    for (int64_t j = 0; j < n; j++)
        if (got[j] != want[j]) {
            print_error("element %lld: got %.17g, want %.17g\n", (long long)j, got[j], want[j]);
            fail();
        }
}

/* ---- hand-computed cases --------------------------------------------------------------- */

static const float x5[5] = {1, 2, 3, 4, 5};
static const float w_digits[3] = {1, 10, 100}; /* each output spells the taps it read */

static void test_fprop_1d_no_pad_is_sliding_dot_product(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}});
    assert_int_equal(p.out[0], 3);
    /* y[o] = x[o] + 10 x[o+1] + 100 x[o+2]: 1+20+300, 2+30+400, 3+40+500 */
    double y[3];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){321, 432, 543}, 3);
}

static void test_fprop_1d_pad_reads_zero_outside_input(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .pad_before = {1}, .pad_after = {1}});
    assert_int_equal(p.out[0], 5);
    /* y[o] = x[o-1] + 10 x[o] + 100 x[o+1], x[-1] = x[5] = 0:
     * y0 = 0 + 10 + 200, y4 = 4 + 50 + 0 */
    double y[5];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){210, 321, 432, 543, 54}, 5);
}

static void test_fprop_1d_asymmetric_pad_offsets_by_pad_before(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .pad_before = {2}});
    assert_int_equal(p.out[0], 5);
    /* y[o] = x[o-2] + 10 x[o-1] + 100 x[o]: y0 = 0 + 0 + 100, y1 = 0 + 10 + 200, then
     * 1+20+300, 2+30+400, 3+40+500 */
    double y[5];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){100, 210, 321, 432, 543}, 5);
}

static void test_fprop_1d_stride_2_skips_outputs(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .stride = {2}});
    assert_int_equal(p.out[0], 2);
    /* y[o] = x[2o] + 10 x[2o+1] + 100 x[2o+2]: 1+20+300, 3+40+500 */
    double y[2];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){321, 543}, 2);
}

static void test_fprop_1d_dilation_2_spreads_taps(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .dilation = {2}});
    assert_int_equal(p.out[0], 1);
    /* y0 = x0 + 10 x2 + 100 x4 = 1 + 30 + 500 */
    double y[1];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){531}, 1);
}

static void test_fprop_1d_convolution_mode_flips_kernel(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .flip = true});
    /* y[o] = sum_f x[o + 2 - f] w[f] = 100 x[o] + 10 x[o+1] + x[o+2]: 100+20+3, ... */
    double y[3];
    ref_conv(&p, CONVGEN_FPROP, x5, w_digits, y);
    expect_values(y, (double[]){123, 234, 345}, 3);
}

static void test_fprop_2d_sums_channels_per_output_channel(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 2, .n = 1, .c = 2, .k = 2, .in = {3, 3},
                                       .kernel = {2, 2}});
    assert_int_equal(p.out[0], 2);
    assert_int_equal(p.out[1], 2);
    const float x[2 * 9] = {1, 2, 3, 4, 5, 6, 7, 8, 9,   /* c0 */
                            1, 0, 2, 0, 3, 0, 4, 0, 5};  /* c1 */
    const float w[2 * 2 * 4] = {1, 0, 0, 0,  0, 0, 0, 1,  /* k0: c0 top-left, c1 bottom-right */
                                1, 1, 1, 1,  0, 2, 0, 0}; /* k1: c0 all ones, c1 2 top-right */
    /* k0: y[a][b] = x0[a][b] + x1[a+1][b+1]: 1+3, 2+0, 4+0, 5+5
     * k1: y[a][b] = (2x2 window sum of x0) + 2 x1[a][b+1]: 12+0, 16+4, 24+6, 28+0 */
    double y[8];
    ref_conv(&p, CONVGEN_FPROP, x, w, y);
    expect_values(y, (double[]){4, 2, 4, 10, 12, 20, 30, 28}, 8);
}

static void test_bprop_1d_stride_2_pad_1_gathers_matching_outputs(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .pad_before = {1}, .pad_after = {1},
                                       .stride = {2}});
    assert_int_equal(p.out[0], 3);
    const float dy[3] = {1, 10, 100}, w[3] = {1, 2, 3};
    /* dx[i] = sum over (o, f) with 2o - 1 + f = i of dy[o] w[f]:
     * i0: (0,1) 1*2            = 2
     * i1: (0,2) 1*3 + (1,0) 10  = 13
     * i2: (1,1) 10*2           = 20
     * i3: (1,2) 30 + (2,0) 100  = 130
     * i4: (2,1) 100*2          = 200 */
    double dx[5];
    ref_conv(&p, CONVGEN_BPROP, dy, w, dx);
    expect_values(dx, (double[]){2, 13, 20, 130, 200}, 5);
}

static void test_bprop_1d_dilation_2_convolution_mode(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {2}, .dilation = {2}, .flip = true});
    assert_int_equal(p.out[0], 3);
    const float dy[3] = {1, 10, 100}, w[2] = {1, 2};
    /* dx[i] = sum over (o, f) with o + 2 (1 - f) = i of dy[o] w[f]:
     * i0: (0,1) 2;  i1: (1,1) 20;  i2: (2,1) 200 + (0,0) 1;  i3: (1,0) 10;  i4: (2,0) 100 */
    double dx[5];
    ref_conv(&p, CONVGEN_BPROP, dy, w, dx);
    expect_values(dx, (double[]){2, 20, 201, 10, 100}, 5);
}

static void test_accgrad_1d_stride_2_pad_1_correlates_input_with_dy(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 1, .c = 1, .k = 1, .in = {5},
                                       .kernel = {3}, .pad_before = {1}, .pad_after = {1},
                                       .stride = {2}});
    const float dy[3] = {1, 10, 100};
    /* dw[f] = sum_o dy[o] x[2o - 1 + f]:
     * f0: 1*x[-1]=0 + 10*x1=20 + 100*x3=400 = 420
     * f1: 1*x0=1    + 10*x2=30 + 100*x4=500 = 531
     * f2: 1*x1=2    + 10*x3=40 + 100*x[5]=0 = 42 */
    double dw[3];
    ref_conv(&p, CONVGEN_ACCGRAD, x5, dy, dw);
    expect_values(dw, (double[]){420, 531, 42}, 3);
}

static void test_accgrad_1d_sums_over_batch(void **state)
{
    (void)state;
    cg_problem p = finish((cg_problem){.rank = 1, .n = 2, .c = 1, .k = 1, .in = {3},
                                       .kernel = {2}});
    const float x[6] = {1, 2, 3,  4, 5, 6}, dy[4] = {1, 10,  100, 1000};
    /* dw[f] = sum_{n,o} dy[n][o] x[n][o+f]:
     * f0: 1*1 + 10*2 + 100*4 + 1000*5 = 5421;  f1: 1*2 + 10*3 + 100*5 + 1000*6 = 6532 */
    double dw[2];
    ref_conv(&p, CONVGEN_ACCGRAD, x, dy, dw);
    expect_values(dw, (double[]){5421, 6532}, 2);
}

/* ---- adjoint identities ---------------------------------------------------------------- */

/* Deterministic values in [-1, 1). */
static void fill_random(float *v, int64_t n, uint64_t seed)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15u + 1;
    for (int64_t j = 0; j < n; j++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        v[j] = (float)((double)(s >> 11) / 9007199254740992.0 * 2 - 1);
    }
}

static double dot(const float *a, const double *b, int64_t n)
{
    double s = 0;
    for (int64_t j = 0; j < n; j++)
        s += (double)a[j] * b[j];
    return s;
}

static void expect_close(double got, double want, const char *what)
{
    double tol = 1e-10 * fmax(fabs(got), fabs(want));
    if (!(fabs(got - want) <= tol)) {
        print_error("%s: %.17g vs %.17g\n", what, got, want);
        fail();
    }
}

/* <fprop(x, w), dy> = <x, bprop(dy, w)> = <w, accgrad(x, dy)>: the three passes are the
 * three partial derivatives of one trilinear form, so each pins the others down. */
static void check_adjoint(cg_problem p)
{
    p = finish(p);
    int64_t nx = x_elems(&p), nw = w_elems(&p), ny = y_elems(&p);
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float *dy = malloc((size_t)ny * sizeof *dy);
    double *y = malloc((size_t)ny * sizeof *y), *dx = malloc((size_t)nx * sizeof *dx);
    double *dw = malloc((size_t)nw * sizeof *dw);
    assert_non_null(x); assert_non_null(w); assert_non_null(dy);
    assert_non_null(y); assert_non_null(dx); assert_non_null(dw);
    fill_random(x, nx, 1);
    fill_random(w, nw, 2);
    fill_random(dy, ny, 3);
    ref_conv(&p, CONVGEN_FPROP, x, w, y);
    ref_conv(&p, CONVGEN_BPROP, dy, w, dx);
    ref_conv(&p, CONVGEN_ACCGRAD, x, dy, dw);
    double via_y = dot(dy, y, ny), via_x = dot(x, dx, nx), via_w = dot(w, dw, nw);
    assert_true(fabs(via_y) > 1e-6); /* all-zero outputs would satisfy the identity */
    expect_close(via_x, via_y, "<x, bprop> vs <fprop, dy>");
    expect_close(via_w, via_y, "<w, accgrad> vs <fprop, dy>");
    free(x); free(w); free(dy); free(y); free(dx); free(dw);
}

/* Shapes with asymmetric padding, strides that leave input rows unread, odd sizes. */
static const cg_problem rank1_strided = {
    .rank = 1, .n = 2, .c = 3, .k = 2, .in = {11}, .kernel = {3}, .pad_before = {2},
    .pad_after = {1}, .stride = {2}, .dilation = {2}, .flip = true};
static const cg_problem rank2_mixed = {
    .rank = 2, .n = 2, .c = 2, .k = 3, .in = {7, 9}, .kernel = {3, 2}, .pad_before = {1, 0},
    .pad_after = {2, 1}, .stride = {2, 3}, .dilation = {2, 1}, .flip = true};
static const cg_problem rank3_mixed = {
    .rank = 3, .n = 2, .c = 3, .k = 2, .in = {5, 6, 7}, .kernel = {2, 3, 2},
    .pad_before = {1, 2, 0}, .pad_after = {0, 1, 1}, .stride = {3, 1, 2}, .dilation = {1, 2, 2}};

static void test_adjoint_rank1_stride2_dilation2_flip(void **state)
{
    (void)state;
    check_adjoint(rank1_strided);
}

static void test_adjoint_rank1_stride3_pad_after_only(void **state)
{
    (void)state;
    check_adjoint((cg_problem){.rank = 1, .n = 3, .c = 2, .k = 3, .in = {13}, .kernel = {4},
                               .pad_after = {3}, .stride = {3}});
}

static void test_adjoint_rank1_padding_wider_than_kernel(void **state)
{
    (void)state;
    /* The first and last outputs read nothing but padding. */
    check_adjoint((cg_problem){.rank = 1, .n = 2, .c = 2, .k = 2, .in = {4}, .kernel = {2},
                               .pad_before = {3}, .pad_after = {4}, .dilation = {2}});
}

static void test_adjoint_rank2_asymmetric_pad_stride_dilation_flip(void **state)
{
    (void)state;
    check_adjoint(rank2_mixed);
}

static void test_adjoint_rank3_asymmetric_pad_stride_dilation(void **state)
{
    (void)state;
    check_adjoint(rank3_mixed);
}

static void test_adjoint_rank3_stride3_flip(void **state)
{
    (void)state;
    check_adjoint((cg_problem){.rank = 3, .n = 2, .c = 2, .k = 3, .in = {6, 5, 9},
                               .kernel = {3, 2, 3}, .pad_before = {2, 0, 1},
                               .pad_after = {1, 1, 3}, .stride = {2, 2, 3},
                               .dilation = {1, 2, 2}, .flip = true});
}

/* ---- ref_conv_at ----------------------------------------------------------------------- */

static void check_at_matches_whole(cg_problem p)
{
    p = finish(p);
    int64_t nx = x_elems(&p), nw = w_elems(&p), ny = y_elems(&p);
    float *x = malloc((size_t)nx * sizeof *x), *w = malloc((size_t)nw * sizeof *w);
    float *dy = malloc((size_t)ny * sizeof *dy);
    assert_non_null(x); assert_non_null(w); assert_non_null(dy);
    fill_random(x, nx, 4);
    fill_random(w, nw, 5);
    fill_random(dy, ny, 6);
    const convgen_pass passes[3] = {CONVGEN_FPROP, CONVGEN_BPROP, CONVGEN_ACCGRAD};
    const float *in0[3] = {x, dy, x}, *in1[3] = {w, w, dy};
    for (int q = 0; q < 3; q++) {
        int64_t n = out_elems(&p, passes[q]);
        double *whole = malloc((size_t)n * sizeof *whole);
        assert_non_null(whole);
        ref_conv(&p, passes[q], in0[q], in1[q], whole);
        for (int64_t j = 0; j < n; j++) {
            double one = ref_conv_at(&p, passes[q], in0[q], in1[q], j);
            if (one != whole[j]) {
                print_error("pass %d index %lld: at %.17g, whole %.17g\n", q, (long long)j,
                            one, whole[j]);
                fail();
            }
        }
        free(whole);
    }
    free(x); free(w); free(dy);
}

static void test_conv_at_matches_conv_rank1(void **state)
{
    (void)state;
    check_at_matches_whole(rank1_strided);
}

static void test_conv_at_matches_conv_rank2(void **state)
{
    (void)state;
    check_at_matches_whole(rank2_mixed);
}

static void test_conv_at_matches_conv_rank3(void **state)
{
    (void)state;
    check_at_matches_whole(rank3_mixed);
}

/* ---- ref_relative_error ---------------------------------------------------------------- */

static void test_relative_error_nan_or_inf_is_infinite(void **state)
{
    (void)state;
    const double ref[3] = {1, 2, 3};
    assert_true(isinf(ref_relative_error((float[]){1, NAN, 3}, ref, 3)));
    assert_true(isinf(ref_relative_error((float[]){1, 2, -INFINITY}, ref, 3)));
    /* NaN against an all-zero reference too */
    assert_true(isinf(ref_relative_error((float[]){NAN}, (double[]){0}, 1)));
}

static void test_relative_error_identical_is_zero(void **state)
{
    (void)state;
    const float got[3] = {1.5f, -2.25f, 1e-3f};
    const double ref[3] = {1.5, -2.25, (double)1e-3f};
    assert_true(ref_relative_error(got, ref, 3) == 0);
}

static void test_relative_error_is_ratio_of_norms(void **state)
{
    (void)state;
    /* ||(3,1) - (3,4)|| / ||(3,4)|| = 3 / 5 */
    double e = ref_relative_error((float[]){3, 1}, (double[]){3, 4}, 2);
    assert_true(fabs(e - 0.6) < 1e-15);
}

static void test_relative_error_zero_reference_gives_norm_of_got(void **state)
{
    (void)state;
    assert_true(ref_relative_error((float[]){3, 4}, (double[]){0, 0}, 2) == 5);
    assert_true(ref_relative_error((float[]){0, 0}, (double[]){0, 0}, 2) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fprop_1d_no_pad_is_sliding_dot_product),
        cmocka_unit_test(test_fprop_1d_pad_reads_zero_outside_input),
        cmocka_unit_test(test_fprop_1d_asymmetric_pad_offsets_by_pad_before),
        cmocka_unit_test(test_fprop_1d_stride_2_skips_outputs),
        cmocka_unit_test(test_fprop_1d_dilation_2_spreads_taps),
        cmocka_unit_test(test_fprop_1d_convolution_mode_flips_kernel),
        cmocka_unit_test(test_fprop_2d_sums_channels_per_output_channel),
        cmocka_unit_test(test_bprop_1d_stride_2_pad_1_gathers_matching_outputs),
        cmocka_unit_test(test_bprop_1d_dilation_2_convolution_mode),
        cmocka_unit_test(test_accgrad_1d_stride_2_pad_1_correlates_input_with_dy),
        cmocka_unit_test(test_accgrad_1d_sums_over_batch),
        cmocka_unit_test(test_adjoint_rank1_stride2_dilation2_flip),
        cmocka_unit_test(test_adjoint_rank1_stride3_pad_after_only),
        cmocka_unit_test(test_adjoint_rank1_padding_wider_than_kernel),
        cmocka_unit_test(test_adjoint_rank2_asymmetric_pad_stride_dilation_flip),
        cmocka_unit_test(test_adjoint_rank3_asymmetric_pad_stride_dilation),
        cmocka_unit_test(test_adjoint_rank3_stride3_flip),
        cmocka_unit_test(test_conv_at_matches_conv_rank1),
        cmocka_unit_test(test_conv_at_matches_conv_rank2),
        cmocka_unit_test(test_conv_at_matches_conv_rank3),
        cmocka_unit_test(test_relative_error_nan_or_inf_is_infinite),
        cmocka_unit_test(test_relative_error_identical_is_zero),
        cmocka_unit_test(test_relative_error_is_ratio_of_norms),
        cmocka_unit_test(test_relative_error_zero_reference_gives_norm_of_got),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
