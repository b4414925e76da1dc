/* Generated 1-D FFT kernels: every supported size renders and compiles for sm_90 without local
 * memory, forward and inverse; on a GPU each runs against the plan's double-precision
 * evaluation (itself checked against a naive DFT in test_fft_plan), outputs poisoned first. */
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
#include "fft/fft_kernel.h"
#include "jit.h"

#define BOUND 1e-5

static int sizes[FFT_MAX_N], size_count;
static convgen_context *gpu;

static int setup(void **state)
{
    (void)state;
    for (int n = 1; n <= FFT_MAX_N; ++n)
        if (fft_size_supported(n))
            sizes[size_count++] = n;
    if (convgen_context_create(NULL, &gpu) != CONVGEN_SUCCESS) {
        printf("FFT GPU tests SKIPPED: %s\n", convgen_last_error());
        gpu = NULL;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    convgen_context_destroy(gpu);
    return 0;
}

/* A packed 1-D C2C problem. */
static cg_fft_problem problem(int n, int sign, bool natural, int64_t batch)
{
    convgen_fft_desc d = {.rank = 1, .n = n, .type = CONVGEN_FFT_C2C, .direction = sign, .batch = batch,
                          .order = natural ? CONVGEN_FFT_ORDER_NATURAL : CONVGEN_FFT_ORDER_DIGIT_REVERSED};
    cg_fft_problem p;
    if (cg_fft_problem_init(&p, &d) != CONVGEN_SUCCESS)
        fail_msg("n = %d: %s", n, convgen_last_error());
    return p;
}

static void compile_ok(const cg_fft_problem *sp, cache_kernel *c, cg_kernel *k)
{
    convgen_status s = cg_fft_c2c_kernel(sp, k);
    if (s != CONVGEN_SUCCESS)
        fail_msg("n = %d: %s", sp->n, convgen_last_error());
    convgen_kernel_origin origin;
    s = jit_get(k->source, k->name, "sm_90", NULL, c, &origin);
    if (s != CONVGEN_SUCCESS)
        fail_msg("n = %d: %s\n%s", sp->n, convgen_last_error(), convgen_last_compile_log());
}

static void test_every_size_compiles_without_local_memory(void **state)
{
    (void)state;
    for (int i = 0; i < size_count; ++i)
        for (int sign = -1; sign <= 1; sign += 2) {
            cg_fft_problem sp = problem(sizes[i], sign, sizes[i] % 7 == 0, 1000);
            cache_kernel c;
            cg_kernel k;
            compile_ok(&sp, &c, &k);
            if (sign < 0)
                print_message("n = %3d: %2d registers\n", sp.n, c.registers);
            if (c.stack_bytes || c.spill_store_bytes || c.spill_load_bytes)
                fail_msg("n = %d sign %d: stack %d, spills %d/%d", sp.n, sign, c.stack_bytes, c.spill_store_bytes,
                         c.spill_load_bytes);
            cache_kernel_free(&c);
            free(k.source);
        }
}

static void test_bad_specs_are_named(void **state)
{
    (void)state;
    cg_fft_problem p;
    convgen_fft_desc d = {.rank = 1, .n = 11, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_FORWARD, .batch = 1};
    assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "n = 11"));
    d.n = 16, d.direction = 0;
    assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "direction = 0"));
    d.direction = CONVGEN_FFT_INVERSE, d.batch = 0;
    assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "batch = 0"));
    /* The 1-D kernel renders rank 1 C2C only; anything else is a caller's bug. */
    d.batch = 1, d.rank = 2;
    assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_SUCCESS);
    cg_kernel k;
    assert_int_equal(cg_fft_c2c_kernel(&p, &k), CONVGEN_ERROR_INTERNAL);
}

/* ---- on the GPU ---- */

static uint64_t rng = 0x1234567887654321ull;

static float uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* Runs kernel k on `elems` complex inputs; output poisoned with NaN first. */
static void run(const cg_kernel *k, const cache_kernel *c, const float *in, float *out, size_t elems)
{
    const cg_driver *drv = gpu->drv;
    CUfunction fn;
    assert_int_equal(ctx_load_function(gpu, c, k->source, k->name, &fn), CONVGEN_SUCCESS);
    CUcontext popped;
    CUdeviceptr din = 0, dout = 0;
    size_t bytes = elems * 2 * sizeof(float);
    assert_int_equal(drv->CtxPushCurrent(gpu->primary), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&din, bytes), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dout, bytes), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyHtoD(din, in, bytes), CUDA_SUCCESS);
    assert_int_equal(drv->MemsetD8(dout, 0xFF, bytes), CUDA_SUCCESS);
    void *null = NULL;
    void *args[4] = {&din, &null, &dout, &null};
    assert_int_equal(drv->LaunchKernel(fn, k->grid[0], 1, 1, k->block[0], 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
    assert_int_equal(drv->CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyDtoH(out, dout, bytes), CUDA_SUCCESS);
    drv->MemFree(din);
    drv->MemFree(dout);
    drv->CtxPopCurrent(&popped);
}

static double check(const cg_fft_problem *sp, const float *in, const float *out)
{
    fft_plan p;
    char err[128];
    assert_true(fft_plan_make(sp->n, sp->natural, &p, err, sizeof err));
    double d2 = 0, r2 = 0;
    double complex x[FFT_MAX_N], y[FFT_MAX_N];
    for (int64_t b = 0; b < sp->count; ++b) {
        for (int i = 0; i < sp->n; ++i)
            x[i] = in[2 * (b * sp->n + i)] + I * in[2 * (b * sp->n + i) + 1];
        fft_plan_eval(&p, sp->sign, x, y);
        for (int i = 0; i < sp->n; ++i) {
            double complex g = out[2 * (b * sp->n + i)] + I * out[2 * (b * sp->n + i) + 1];
            d2 += pow(cabs(g - y[i]), 2);
            r2 += pow(cabs(y[i]), 2);
        }
    }
    return isnan(d2) ? INFINITY : sqrt(d2 / r2);
}

static void test_every_size_matches_the_plan_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    double worst = 0;
    for (int i = 0; i < size_count; ++i)
        for (int v = 0; v < 4; ++v) {
            cg_fft_problem sp = problem(sizes[i], v & 1 ? 1 : -1, v >= 2, v == 3 ? 1 : 333);
            cache_kernel c;
            cg_kernel k;
            compile_ok(&sp, &c, &k);
            size_t elems = (size_t)sp.count * sp.n;
            float *in = malloc(elems * 2 * sizeof(float)), *out = malloc(elems * 2 * sizeof(float));
            for (size_t e = 0; e < 2 * elems; ++e)
                in[e] = uniform();
            run(&k, &c, in, out, elems);
            double e = check(&sp, in, out);
            worst = e > worst ? e : worst;
            if (!(e <= BOUND))
                fail_msg("n = %d %s %s batch %lld: relative error %.3e", sp.n, sp.sign < 0 ? "forward" : "inverse",
                         sp.natural ? "natural" : "digit-reversed", (long long)sp.count, e);
            free(in);
            free(out);
            cache_kernel_free(&c);
            free(k.source);
        }
    print_message("%d sizes x 4 variants: worst relative error %.3e\n", size_count, worst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_specs_are_named),
        cmocka_unit_test(test_every_size_compiles_without_local_memory),
        cmocka_unit_test(test_every_size_matches_the_plan_on_the_gpu),
    };
    return cmocka_run_group_tests_name("fft_kernel", tests, setup, teardown);
}
