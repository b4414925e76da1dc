/* Pooling (generator/net/pool*.c, runtime/plan.c's convgen_*_pool): descriptors checked field by
 * field, the output's shape, the kernels compiled offline with no local memory, and on the GPU
 * every output against the CPU's maximum of its window (exact: a maximum rounds nothing), the
 * outputs poisoned first and the guard past them left poisoned. Without a GPU the last test
 * skips and says why. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "kernel_cpu/kernel_cpu.h"
#include "net/pool.h"
#include "net/pool_problem.h"

#define GUARD 256 /* poisoned floats past the last output */

static convgen_context *gpu, *offline;
static kcpu_runner *cpu; /* the kernels' CUDA on the CPU (tests/kernel_cpu); NULL: no C++ compiler */
static char no_cpu[512];

static int setup(void **state)
{
    (void)state;
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    if (convgen_context_create(&o, &offline) != CONVGEN_SUCCESS)
        return -1;
    if (convgen_context_create(NULL, &gpu) != CONVGEN_SUCCESS) {
        printf("pooling GPU tests SKIPPED: %s\n", convgen_last_error());
        gpu = NULL;
    }
    if (kcpu_create("c++", CONVGEN_SOURCE_DIR "/tests/kernel_cpu", &cpu) != CONVGEN_SUCCESS)
        snprintf(no_cpu, sizeof no_cpu, "%s", convgen_last_error());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    convgen_context_destroy(gpu);
    convgen_context_destroy(offline);
    kcpu_destroy(cpu);
    return 0;
}

static void expect_error(const convgen_pool_desc *d, const char *words)
{
    int64_t batch, out[CONVGEN_MAX_RANK];
    convgen_status s = convgen_pool_output(d, &batch, out);
    if (s != CONVGEN_ERROR_INVALID_VALUE || !strstr(convgen_last_error(), words))
        fail_msg("expected \"%s\", got status %d: %s", words, (int)s, convgen_last_error());
}

static void test_bad_descriptors_are_named(void **state)
{
    (void)state;
    const convgen_pool_desc good = {.mode = CONVGEN_POOL_FRAGMENTS, .rank = 3, .n = 2, .c = 4, .in = {9, 9, 9},
                                    .window = {2, 2, 2}};
    convgen_pool_desc d;
    d = good, d.mode = 7, expect_error(&d, "mode = 7");
    d = good, d.rank = 1, expect_error(&d, "rank = 1 must be 2 or 3");
    d = good, d.n = 0, expect_error(&d, "n = 0");
    d = good, d.c = -1, expect_error(&d, "c = -1");
    d = good, d.window[1] = 0, expect_error(&d, "window[1] = 0 must be 1..8");
    d = good, d.window[2] = 9, expect_error(&d, "window[2] = 9 must be 1..8");
    d = good, d.in[0] = 2, expect_error(&d, "in[0] = 2 must be 3.."); /* a fragment at offset 1 needs 3 */
    d = good, d.mode = CONVGEN_POOL_MAX, d.in[0] = 1, expect_error(&d, "in[0] = 1 must be 2..");
    d = good, d.window[0] = d.window[1] = d.window[2] = 5, d.in[0] = d.in[1] = d.in[2] = 20;
    expect_error(&d, "125 elements, more than 64");
    d = good, d.in[0] = d.in[1] = d.in[2] = 2000, expect_error(&d, "a volume of 2^31 elements or more");
    d = good, d.rank = 2, d.in[0] = d.in[1] = 50000, expect_error(&d, "in = 50000x50000: a volume of 2^31");
    d = good, d.n = (int64_t)1 << 40, d.c = (int64_t)1 << 30, expect_error(&d, "overflow 64 bits");
    d = good, d.n = (int64_t)1 << 28, expect_error(&d, "a grid of 2^31 blocks or more");
    expect_error(NULL, "desc is NULL");
    int64_t batch, out[3];
    assert_int_equal(convgen_pool_output(&good, NULL, out), CONVGEN_ERROR_INVALID_VALUE);
    assert_int_equal(convgen_pool_output(&good, &batch, NULL), CONVGEN_ERROR_INVALID_VALUE);
    char *src = (char *)1;
    d = good, d.rank = 4;
    assert_int_equal(convgen_emit_pool(&d, &src), CONVGEN_ERROR_INVALID_VALUE);
    assert_null(src);
    assert_int_equal(convgen_emit_pool(&good, NULL), CONVGEN_ERROR_INVALID_VALUE);
}

/* MAX rounds down like cuDNN; FRAGMENTS keeps the size every offset has, (in - p + 1) / p. */
static void test_output_shapes(void **state)
{
    (void)state;
    const struct { convgen_pool_mode mode; int rank; int64_t in[3]; int window[3]; int64_t batch, out[3]; } cases[] = {
        {CONVGEN_POOL_MAX, 3, {9, 10, 11}, {2, 2, 2}, 2, {4, 5, 5}},
        {CONVGEN_POOL_MAX, 2, {64, 48}, {2, 3}, 2, {32, 16}},
        {CONVGEN_POOL_FRAGMENTS, 3, {9, 10, 11}, {2, 2, 2}, 16, {4, 4, 5}},
        {CONVGEN_POOL_FRAGMENTS, 3, {15, 15, 15}, {2, 2, 1}, 8, {7, 7, 15}},
        {CONVGEN_POOL_FRAGMENTS, 2, {5, 8}, {3, 2}, 12, {1, 3}},
        {CONVGEN_POOL_INTERLEAVE, 3, {4, 4, 5}, {2, 2, 1}, 2, {8, 8, 5}},
        {CONVGEN_POOL_INTERLEAVE, 2, {3, 7}, {3, 2}, 2, {9, 14}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        convgen_pool_desc d = {.mode = cases[i].mode, .rank = cases[i].rank, .n = 2, .c = 3};
        memcpy(d.in, cases[i].in, sizeof d.in);
        memcpy(d.window, cases[i].window, sizeof d.window);
        int64_t batch, out[3] = {0};
        assert_int_equal(convgen_pool_output(&d, &batch, out), CONVGEN_SUCCESS);
        assert_int_equal(batch, cases[i].batch);
        for (int k = 0; k < d.rank; ++k)
            assert_int_equal(out[k], cases[i].out[k]);
    }
}

/* The shapes every test below runs: both modes, ranks 2 and 3, odd and prime extents, windows
 * anisotropic (2x2x1, 3x1, 1x2x3), several outputs a block and several blocks a volume. */
static const convgen_pool_desc shapes[] = {
    {CONVGEN_POOL_MAX, 3, 2, 3, {9, 10, 11}, {2, 2, 2}},
    {CONVGEN_POOL_MAX, 3, 1, 5, {33, 17, 29}, {2, 2, 1}},
    {CONVGEN_POOL_MAX, 2, 3, 4, {61, 47}, {3, 1}},
    {CONVGEN_POOL_MAX, 2, 1, 1, {100, 130}, {2, 2}},
    {CONVGEN_POOL_FRAGMENTS, 3, 2, 3, {9, 11, 13}, {2, 3, 2}},
    {CONVGEN_POOL_FRAGMENTS, 3, 1, 4, {15, 15, 15}, {2, 2, 1}},
    {CONVGEN_POOL_FRAGMENTS, 3, 3, 2, {23, 24, 25}, {2, 2, 2}},
    {CONVGEN_POOL_FRAGMENTS, 3, 1, 2, {7, 8, 20}, {1, 2, 3}},
    {CONVGEN_POOL_FRAGMENTS, 2, 2, 3, {37, 41}, {2, 2}},
    {CONVGEN_POOL_FRAGMENTS, 2, 1, 2, {9, 100}, {3, 4}},
    /* regions of more than 64 elements (5x5x3, 7x5): a thread per fragment's output */
    {CONVGEN_POOL_FRAGMENTS, 3, 2, 2, {11, 12, 9}, {3, 3, 2}},
    {CONVGEN_POOL_FRAGMENTS, 2, 1, 3, {30, 21}, {4, 3}},
    /* fragments back into dense volumes: odd extents, anisotropic windows */
    {CONVGEN_POOL_INTERLEAVE, 3, 2, 3, {5, 7, 9}, {2, 2, 2}},
    {CONVGEN_POOL_INTERLEAVE, 3, 1, 2, {7, 5, 33}, {2, 2, 1}},
    {CONVGEN_POOL_INTERLEAVE, 2, 3, 1, {13, 40}, {3, 2}},
};
enum { SHAPES = sizeof shapes / sizeof shapes[0] };

static void test_kernels_compile_without_local_memory(void **state)
{
    (void)state;
    for (int i = 0; i < SHAPES; ++i) {
        convgen_plan *plan;
        if (convgen_plan_pool(offline, &shapes[i], &plan) != CONVGEN_SUCCESS)
            fail_msg("shape %d: %s", i, convgen_last_error());
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_kernel_info(plan, 0, &info), CONVGEN_SUCCESS);
        if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
            fail_msg("%s: stack %d, spills %d/%d", info.name, info.stack_bytes, info.spill_store_bytes,
                     info.spill_load_bytes);
        /* the header says what it is and the window's loads are unrolled */
        const char *src = convgen_plan_source(plan, 0);
        static const char *const says[] = {"max pooling ", "max-pooling fragments ", "interleaved: "};
        assert_non_null(strstr(src, says[shapes[i].mode]));
        /* the fragments of a region that fits in registers come from one thread */
        int region = 1;
        for (int d = 0; d < shapes[i].rank; ++d)
            region *= 2 * shapes[i].window[d] - 1;
        bool all = shapes[i].mode == CONVGEN_POOL_FRAGMENTS && region <= 64;
        assert_int_equal(strstr(src, "one output position of all") != NULL, all);
        assert_null(strstr(src, "for ("));
        assert_int_equal(convgen_execute_pool(plan, (const float *)16, (float *)32, NULL), CONVGEN_ERROR_NO_DEVICE);
        convgen_plan_destroy(plan);
    }
}

/* Plans of the other kinds are refused, and named. */
static void test_kinds_are_kept_apart(void **state)
{
    (void)state;
    convgen_plan *pool, *fft;
    assert_int_equal(convgen_plan_pool(offline, &shapes[0], &pool), CONVGEN_SUCCESS);
    convgen_fft_desc f = {.rank = 2, .n = 16, .type = CONVGEN_FFT_R2C, .batch = 4};
    assert_int_equal(convgen_plan_fft(offline, &f, &fft), CONVGEN_SUCCESS);
    float *p = (float *)256;
    assert_int_equal(convgen_execute(pool, p, p, p, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "plan is a pooling plan: run it with convgen_execute_pool"));
    assert_int_equal(convgen_execute_fft(pool, p, p + 64, NULL, 0, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_int_equal(convgen_execute_pool(fft, p, p + 64, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "plan is an FFT plan: run it with convgen_execute_fft"));
    assert_int_equal(convgen_execute_pool(pool, p, p, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "y = x"));
    assert_int_equal(convgen_execute_pool(pool, NULL, p, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_int_equal(convgen_execute_pool(NULL, p, p + 64, NULL), CONVGEN_ERROR_INVALID_VALUE);
    convgen_choice choice;
    assert_int_equal(convgen_plan_choice(pool, &choice), CONVGEN_ERROR_INVALID_VALUE);
    convgen_plan_destroy(fft);
    convgen_plan_destroy(pool);
}

/* ---- on the GPU ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* y's element (f, n, c, z, y, x) by the definition: the max over the window at offset o + p z;
 * INTERLEAVE's (n, c, at): x[f][n][c][j] for at = o + p j, f the fragment of offset o. */
static float reference(const cg_pool_problem *p, const float *x, int64_t f, int64_t nc, const int64_t at[3])
{
    if (p->mode == CONVGEN_POOL_INTERLEAVE) {
        int64_t j[3], o[3];
        for (int d = 0; d < 3; ++d)
            j[d] = at[d] / p->window[d], o[d] = at[d] % p->window[d];
        int64_t from = (o[0] * p->window[1] + o[1]) * p->window[2] + o[2];
        return x[(from * p->n * p->c + nc) * p->in_volume + (j[0] * p->in[1] + j[1]) * p->in[2] + j[2]];
    }
    int64_t o[3] = {0, 0, 0};
    if (p->fragments > 1)
        o[0] = f / (p->window[1] * p->window[2]), o[1] = f / p->window[2] % p->window[1], o[2] = f % p->window[2];
    double m = -INFINITY;
    for (int i = 0; i < p->window[0]; ++i)
        for (int j = 0; j < p->window[1]; ++j)
            for (int k = 0; k < p->window[2]; ++k) {
                int64_t z = o[0] + p->window[0] * at[0] + i, y = o[1] + p->window[1] * at[1] + j,
                        w = o[2] + p->window[2] * at[2] + k;
                double v = x[nc * p->in_volume + (z * p->in[1] + y) * p->in[2] + w];
                m = v > m ? v : m;
            }
    return (float)m;
}

/* Runs the layer's plan on the GPU: x (in_n floats) in, y (out_n floats and GUARD more) out. */
static void execute_on_gpu(const convgen_pool_desc *d, const float *x, size_t in_n, float *y, size_t out_n)
{
    convgen_plan *plan;
    if (convgen_plan_pool(gpu, d, &plan) != CONVGEN_SUCCESS)
        fail_msg("%s", convgen_last_error());
    const cg_driver *drv = gpu->drv;
    CUcontext popped;
    CUdeviceptr dx, dy;
    assert_int_equal(drv->CtxPushCurrent(gpu->primary), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dx, in_n * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dy, (out_n + GUARD) * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyHtoD(dx, x, in_n * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemsetD8(dy, 0xFF, (out_n + GUARD) * sizeof(float)), CUDA_SUCCESS);
    if (convgen_execute_pool(plan, (const float *)dx, (float *)dy, NULL) != CONVGEN_SUCCESS)
        fail_msg("execute: %s", convgen_last_error());
    assert_int_equal(drv->CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyDtoH(y, dy, (out_n + GUARD) * sizeof(float)), CUDA_SUCCESS);
    drv->MemFree(dx);
    drv->MemFree(dy);
    drv->CtxPopCurrent(&popped);
    convgen_plan_destroy(plan);
}

/* The same with the generated kernels run on the CPU, in order, as the runtime launches them. */
static void execute_on_cpu(const convgen_pool_desc *d, const float *x, size_t in_n, float *y, size_t out_n)
{
    (void)in_n;
    cg_pool_problem p;
    cg_generated g;
    assert_int_equal(cg_pool_problem_init(&p, d), CONVGEN_SUCCESS);
    if (cg_generate_pool(&p, NULL, &g) != CONVGEN_SUCCESS)
        fail_msg("%s", convgen_last_error());
    memset(y, 0xFF, (out_n + GUARD) * sizeof(float));
    const cg_kernel_runner r = kcpu_program_runner(cpu);
    if (cg_program_run(&g, x, NULL, NULL, y, &r) != CONVGEN_SUCCESS)
        fail_msg("on the CPU: %s", convgen_last_error());
    cg_generated_free(&g);
}

typedef void (*executor)(const convgen_pool_desc *d, const float *x, size_t in_n, float *y, size_t out_n);

/* Runs one shape by `execute` and checks every output against its window's maximum, and that
 * nothing past the output was written. */
static void run_shape(const convgen_pool_desc *d, executor execute, int64_t *checked)
{
    cg_pool_problem p;
    assert_int_equal(cg_pool_problem_init(&p, d), CONVGEN_SUCCESS);
    bool interleave = p.mode == CONVGEN_POOL_INTERLEAVE;
    size_t in_n = (size_t)(p.n * p.c * p.in_volume * (interleave ? p.fragments : 1)),
           out_n = (size_t)(p.volumes * p.out_volume);
    float *x = malloc(in_n * sizeof *x), *y = malloc((out_n + GUARD) * sizeof *y);
    for (size_t i = 0; i < in_n; ++i)
        x[i] = uniform();
    execute(d, x, in_n, y, out_n);
    char what[256];
    cg_pool_problem_describe(&p, what, sizeof what);
    int64_t entries = p.n * p.c, e = 0;
    for (int64_t f = 0; f < (interleave ? 1 : p.fragments); ++f)
        for (int64_t nc = 0; nc < entries; ++nc)
            for (int64_t z = 0; z < p.out[0]; ++z)
                for (int64_t r = 0; r < p.out[1]; ++r)
                    for (int64_t w = 0; w < p.out[2]; ++w, ++e) {
                        const int64_t at[3] = {z, r, w};
                        float want = reference(&p, x, f, nc, at);
                        if (memcmp(&y[e], &want, sizeof want) != 0)
                            fail_msg("%s: y[%lld] (fragment %lld, entry %lld, at %lld,%lld,%lld) = %.9g, want %.9g", what,
                                     (long long)e, (long long)f, (long long)nc, (long long)z, (long long)r,
                                     (long long)w, (double)y[e], (double)want);
                    }
    for (size_t i = out_n; i < out_n + GUARD; ++i) {
        uint32_t bits;
        memcpy(&bits, &y[i], sizeof bits);
        if (bits != 0xFFFFFFFFu)
            fail_msg("%s: y[%zu], past the output, was written", what, i);
    }
    *checked += e;
    free(x);
    free(y);
}

static void test_every_output_is_its_window_maximum_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    int64_t checked = 0;
    for (int i = 0; i < SHAPES; ++i)
        run_shape(&shapes[i], execute_on_gpu, &checked);
    print_message("%d shapes, %lld outputs, each equal to its window's maximum\n", SHAPES, (long long)checked);
}

/* The same kernels' CUDA run on the CPU, where CI has no GPU. */
static void test_every_output_is_its_window_maximum_on_the_cpu(void **state)
{
    (void)state;
    if (!cpu) {
        printf("SKIPPED: no C++ compiler to build kernels for the CPU: %s\n", no_cpu);
        skip();
    }
    int64_t checked = 0;
    for (int i = 0; i < SHAPES; ++i)
        run_shape(&shapes[i], execute_on_cpu, &checked);
    print_message("%d shapes, %lld outputs on the CPU, each equal to its window's maximum\n", SHAPES, (long long)checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_descriptors_are_named),
        cmocka_unit_test(test_output_shapes),
        cmocka_unit_test(test_kernels_compile_without_local_memory),
        cmocka_unit_test(test_kinds_are_kept_apart),
        cmocka_unit_test(test_every_output_is_its_window_maximum_on_the_gpu),
        cmocka_unit_test(test_every_output_is_its_window_maximum_on_the_cpu),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
