/* Winograd transforms derived in exact rationals (generator/winograd/winograd_transform.c): for every
 * F(m, r) with r <= 7 and m + r - 1 <= 12, random integer data and filters give exactly the
 * correlation, in 1-D and nested 2-D; the points and a few entries are pinned; bad sizes are
 * named. Also prints what fp32 does with each transform on the CPU (the error the kernels'
 * tests will be bounded by, measured again on the GPU). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "winograd/winograd_program.h"
#include "winograd/winograd_transform.h"

enum { MAX_R = 7 };

static uint64_t rng = 0x243f6a8885a308d3ull;

static int64_t small_int(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (int64_t)(rng >> 33) % 19 - 9; /* -9 .. 9 */
}

static void derive_ok(int m, int r, wino_transform *t)
{
    char err[128];
    if (!wino_derive(m, r, t, err, sizeof err))
        fail_msg("%s", err);
}

static void test_points_and_known_entries(void **state)
{
    (void)state;
    const char *want[] = {"0", "1", "-1", "1/2", "-1/2", "2", "-2", "1/4", "-1/4", "4", "-4"};
    for (int i = 0; i < 11; ++i) {
        cg_q p = wino_point(i);
        char got[32];
        snprintf(got, sizeof got, p.den == 1 ? "%lld" : "%lld/%lld", (long long)p.num, (long long)p.den);
        assert_string_equal(got, want[i]);
    }
    wino_transform t;
    derive_ok(2, 3, &t);
    /* AT of F(2,3) over 0, 1, -1, inf: [1 1 1 0; 0 1 -1 1]. */
    const int at[2][4] = {{1, 1, 1, 0}, {0, 1, -1, 1}};
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
            assert_true(cg_q_eq(t.at[i][j], cg_q_int(at[i][j])));
    /* G row 1 (point 1): 1^k / ((1 - 0)(1 + 1)) = 1/2 for every k; BT row inf: x (x - 1)(x + 1). */
    for (int k = 0; k < 3; ++k)
        assert_true(cg_q_eq(t.g[1][k], cg_q_make(1, 2)));
    const int bt_inf[4] = {0, -1, 0, 1};
    for (int c = 0; c < 4; ++c)
        assert_true(cg_q_eq(t.bt[3][c], cg_q_int(bt_inf[c])));
    char text[160];
    wino_describe(&t, text, sizeof text);
    assert_string_equal(text, "F(2,3): alpha 4, points 0, 1, -1, inf");

    /* F(1, 3) and F(3, 1) take their products as they are: BT the identity, and G and AT the
     * identity or ones (a 3-D layer's fused kernels sum their depth taps so). */
    const int cases[2][2] = {{1, 3}, {3, 1}};
    for (int c = 0; c < 2; ++c) {
        int m = cases[c][0], r = cases[c][1];
        derive_ok(m, r, &t);
        assert_true(t.direct);
        for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j)
                assert_true(cg_q_eq(t.bt[i][j], cg_q_int(i == j)));
            for (int k = 0; k < r; ++k)
                assert_true(cg_q_eq(t.g[i][k], cg_q_int(r == 1 || i == k)));
        }
        for (int i = 0; i < m; ++i)
            for (int j = 0; j < 3; ++j)
                assert_true(cg_q_eq(t.at[i][j], cg_q_int(m == 1 || i == j)));
    }
    wino_describe(&t, text, sizeof text);
    assert_string_equal(text, "F(3,1): alpha 3, direct (no interpolation)");
}

static void test_bad_sizes_are_named(void **state)
{
    (void)state;
    wino_transform t;
    char err[128];
    assert_false(wino_derive(7, 7, &t, err, sizeof err));
    assert_non_null(strstr(err, "F(7, 7)"));
    assert_false(wino_derive(0, 3, &t, err, sizeof err));
    assert_non_null(strstr(err, "F(0, 3)"));
}

/* y[i] = sum_k d[i + k] g[k], exactly. */
static void correlate_1d(int m, int r, const cg_q *d, const cg_q *g, cg_q *y)
{
    for (int i = 0; i < m; ++i) {
        y[i] = cg_q_int(0);
        for (int k = 0; k < r; ++k)
            y[i] = cg_q_add(y[i], cg_q_mul(d[i + k], g[k]));
    }
}

static void test_every_transform_is_exact_in_1d_and_2d(void **state)
{
    (void)state;
    int transforms = 0;
    for (int r = 1; r <= MAX_R; ++r)
        for (int m = 1; m + r - 1 <= WINO_MAX_ALPHA; ++m, ++transforms) {
            wino_transform t;
            derive_ok(m, r, &t);
            int a = t.alpha;
            cg_q d[WINO_MAX_ALPHA * WINO_MAX_ALPHA], g[MAX_R * MAX_R], y[WINO_MAX_ALPHA * WINO_MAX_ALPHA],
                want[WINO_MAX_ALPHA * WINO_MAX_ALPHA];
            for (int trial = 0; trial < 20; ++trial) {
                for (int i = 0; i < a; ++i)
                    d[i] = cg_q_int(small_int());
                for (int k = 0; k < r; ++k)
                    g[k] = cg_q_int(small_int());
                assert_true(wino_eval_1d(&t, d, g, y));
                correlate_1d(m, r, d, g, want);
                for (int i = 0; i < m; ++i)
                    if (!cg_q_eq(y[i], want[i]))
                        fail_msg("F(%d,%d) 1-D trial %d: y[%d] = %lld/%lld, want %lld", m, r, trial, i,
                                 (long long)y[i].num, (long long)y[i].den, (long long)want[i].num);
            }
            for (int trial = 0; trial < 4; ++trial) {
                for (int i = 0; i < a * a; ++i)
                    d[i] = cg_q_int(small_int());
                for (int k = 0; k < r * r; ++k)
                    g[k] = cg_q_int(small_int());
                assert_true(wino_eval_2d(&t, d, g, y));
                for (int i = 0; i < m; ++i)
                    for (int j = 0; j < m; ++j) {
                        cg_q s = cg_q_int(0);
                        for (int k = 0; k < r; ++k)
                            for (int l = 0; l < r; ++l)
                                s = cg_q_add(s, cg_q_mul(d[(i + k) * a + j + l], g[k * r + l]));
                        if (!cg_q_eq(y[i * m + j], s))
                            fail_msg("F(%dx%d,%dx%d) trial %d: Y[%d][%d] differs", m, m, r, r, trial, i, j);
                    }
            }
        }
    print_message("%d transforms exact in 1-D and 2-D\n", transforms);
}

/* Runs the program of m (rows x cols) on random integers and compares with M x exactly;
 * returns the operations a naive row-by-row evaluation would take. */
static int check_program(const cg_q m[][WINO_MAX_ALPHA], int rows, int cols, const char *what, const wino_program *p)
{
    int naive = 0;
    for (int i = 0; i < rows; ++i) {
        int terms = 0, multiplies = 0;
        for (int c = 0; c < cols; ++c)
            if (m[i][c].num)
                ++terms, multiplies += !(m[i][c].den == 1 && (m[i][c].num == 1 || m[i][c].num == -1));
        naive += (terms > 1 ? terms - 1 : 0) + multiplies;
    }
    for (int i = 0; i < p->stmt_count; ++i)
        for (int k = 0; k < p->stmts[i].term_count; ++k)
            if (p->stmts[i].terms[k].coef.num == 0)
                fail_msg("%s: a term with coefficient 0", what);
    for (int trial = 0; trial < 10; ++trial) {
        cg_q x[WINO_MAX_ALPHA], y[WINO_MAX_ALPHA];
        for (int c = 0; c < cols; ++c)
            x[c] = cg_q_int(small_int());
        assert_true(wino_program_run(p, x, y));
        for (int i = 0; i < rows; ++i) {
            cg_q want = cg_q_int(0);
            for (int c = 0; c < cols; ++c)
                want = cg_q_add(want, cg_q_mul(m[i][c], x[c]));
            if (!cg_q_eq(y[i], want))
                fail_msg("%s: output %d of trial %d differs", what, i, trial);
        }
    }
    return naive;
}

static void test_programs_compute_their_matrices(void **state)
{
    (void)state;
    int programs = 0;
    for (int r = 1; r <= MAX_R; ++r)
        for (int m = 1; m + r - 1 <= WINO_MAX_ALPHA; ++m) {
            wino_transform t;
            derive_ok(m, r, &t);
            const struct {
                const char *name;
                const cg_q (*matrix)[WINO_MAX_ALPHA];
                int rows, cols;
            } parts[] = {{"AT", (const cg_q(*)[WINO_MAX_ALPHA])t.at, m, t.alpha},
                         {"G", (const cg_q(*)[WINO_MAX_ALPHA])t.g, t.alpha, r},
                         {"BT", (const cg_q(*)[WINO_MAX_ALPHA])t.bt, t.alpha, t.alpha}};
            for (int i = 0; i < 3; ++i, ++programs) {
                wino_program p;
                char what[64];
                snprintf(what, sizeof what, "F(%d,%d) %s", m, r, parts[i].name);
                wino_program_build(parts[i].matrix, parts[i].rows, parts[i].cols, &p);
                int naive = check_program(parts[i].matrix, parts[i].rows, parts[i].cols, what, &p);
                int ops = p.adds + p.multiplies;
                if (ops > naive)
                    fail_msg("%s: %d operations, more than the %d of the plain rows", what, ops, naive);
                if ((m == 4 || m == 6) && r == 3)
                    print_message("%-12s %2d adds, %2d multiplies (rows one by one: %d operations)\n", what, p.adds,
                                  p.multiplies, naive);
                if (m == 4 && r == 3 && i == 2 && ops >= naive)
                    fail_msg("F(4,3) BT: the mirrored rows were not shared (%d operations)", ops);
            }
        }
    print_message("%d programs compute their matrices exactly\n", programs);
}

/* Includes come from the source tree's templates/. */
static tmpl_source load_from_source(void *user, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/templates/%s", CONVGEN_SOURCE_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return (tmpl_source){0};
    char *text = calloc(1, 1 << 16);
    size_t got = text ? fread(text, 1, (1 << 16) - 1, f) : 0;
    fclose(f);
    if (!got) {
        free(text);
        return (tmpl_source){0};
    }
    *(char **)user = text; /* freed by the caller: one include per render here */
    return (tmpl_source){.text = text};
}

static void test_programs_render_as_straight_line_code(void **state)
{
    (void)state;
    wino_transform t;
    derive_ok(4, 3, &t);
    wino_program p;
    wino_program_build((const cg_q(*)[WINO_MAX_ALPHA])t.bt, t.alpha, t.alpha, &p);
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "bt", wino_program_value(&p, "d", "t"));
    char *out = NULL, *included = NULL, err[256];
    bool ok = tmpl_render("test", "{%- include \"winograd/winograd.cuh\" -%}{{ wino_program(bt, \"v\", \"\") }}", ctx,
                          load_from_source, &included, &out, err, sizeof err);
    free(included);
    tmpl_unref(ctx);
    if (!ok)
        fail_msg("%s", err);
    int lines = 0;
    for (const char *c = out; *c; ++c)
        lines += *c == '\n';
    assert_int_equal(lines, p.stmt_count + p.outputs);
    /* No multiplication by 0 or 1 survives; constants are fp32 literals; mirrored rows share. */
    assert_null(strstr(out, " 1.0f *"));
    assert_null(strstr(out, "0.0f *"));
    assert_non_null(strstr(out, "0.25f * d["));
    assert_non_null(strstr(out, "v[0] = t"));
    assert_non_null(strstr(out, " = t0 + t1;"));
    print_message("F(4,3) BT:%s\n", out);
    free(out);
}

/* The 2-D transform in fp32 on the CPU against float64 correlation, on uniform [-1, 1] data:
 * informative (printed), and a sanity bound that catches a transform that is exact but
 * numerically useless. */
typedef float square[WINO_MAX_ALPHA][WINO_MAX_ALPHA];

/* out = M x M^T in fp32, M rows x inner (exact rationals rounded to fp32), x inner x inner. */
static void sandwich(square out, const cg_q m[][WINO_MAX_ALPHA], int rows, const square x, int inner)
{
    square tmp;
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < inner; ++j) {
            tmp[i][j] = 0;
            for (int k = 0; k < inner; ++k)
                tmp[i][j] += (float)cg_q_double(m[i][k]) * x[k][j];
        }
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < rows; ++j) {
            out[i][j] = 0;
            for (int k = 0; k < inner; ++k)
                out[i][j] += tmp[i][k] * (float)cg_q_double(m[j][k]);
        }
}

static double fp32_error_2d(const wino_transform *t)
{
    int a = t->alpha, r = t->r, m = t->m;
    double d2 = 0, r2 = 0;
    for (int trial = 0; trial < 200; ++trial) {
        square d, g, u, v, y;
        for (int i = 0; i < a; ++i)
            for (int j = 0; j < a; ++j)
                d[i][j] = (float)small_int() / 9.0f;
        for (int i = 0; i < r; ++i)
            for (int j = 0; j < r; ++j)
                g[i][j] = (float)small_int() / 9.0f;
        sandwich(u, (const cg_q(*)[WINO_MAX_ALPHA])t->g, a, (const float(*)[WINO_MAX_ALPHA])g, r);   /* G g G^T */
        sandwich(v, (const cg_q(*)[WINO_MAX_ALPHA])t->bt, a, (const float(*)[WINO_MAX_ALPHA])d, a);  /* BT d B */
        for (int i = 0; i < a; ++i)
            for (int j = 0; j < a; ++j)
                u[i][j] *= v[i][j];
        sandwich(y, (const cg_q(*)[WINO_MAX_ALPHA])t->at, m, (const float(*)[WINO_MAX_ALPHA])u, a); /* AT M A */
        for (int i = 0; i < m; ++i) /* against the float64 correlation */
            for (int j = 0; j < m; ++j) {
                double want = 0;
                for (int k = 0; k < r; ++k)
                    for (int l = 0; l < r; ++l)
                        want += (double)d[i + k][j + l] * g[k][l];
                d2 += (y[i][j] - want) * (y[i][j] - want), r2 += want * want;
            }
    }
    return sqrt(d2 / r2);
}

static void test_fp32_error_of_the_common_transforms(void **state)
{
    (void)state;
    const int common[][2] = {{2, 3}, {4, 3}, {6, 3}, {2, 5}, {4, 5}, {2, 7}};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; ++i) {
        wino_transform t;
        derive_ok(common[i][0], common[i][1], &t);
        double e = fp32_error_2d(&t);
        char text[160];
        wino_describe(&t, text, sizeof text);
        print_message("%-48s fp32 2-D relative error %.2e\n", text, e);
        assert_true(e < 1e-3);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_points_and_known_entries),
        cmocka_unit_test(test_bad_sizes_are_named),
        cmocka_unit_test(test_every_transform_is_exact_in_1d_and_2d),
        cmocka_unit_test(test_programs_compute_their_matrices),
        cmocka_unit_test(test_programs_render_as_straight_line_code),
        cmocka_unit_test(test_fp32_error_of_the_common_transforms),
    };
    return cmocka_run_group_tests_name("winograd_transform", tests, NULL, NULL);
}
