/* Generated R2C and C2R FFTs through the public API (convgen_plan_fft): bad descriptors get a
 * message naming the field; every size renders and compiles for sm_90 without local memory, rank
 * 1 and 2, both directions; on a GPU, every size against a float64 DFT computed here, with
 * windows, strides, both layouts and orders, and scales; outputs are poisoned first and every
 * element outside the requested output (gaps between strided transforms, columns past a window,
 * a guard region past the end) must still hold the poison afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "fft_kernel.h"
#include "fft_problem.h"
#include "jit.h"

#define BOUND 1e-5
#define GUARD 512 /* poisoned elements past the last output */

static int sizes[FFT_MAX_N], size_count;
static convgen_context *gpu, *offline;

static int setup(void **state)
{
    (void)state;
    /* CONVGEN_TEST_FFT_SIZES="16 12" runs only those sizes (to try a broken template quickly). */
    const char *only = getenv("CONVGEN_TEST_FFT_SIZES");
    for (int n = 1; n <= FFT_MAX_N; ++n) {
        char word[8];
        snprintf(word, sizeof word, " %d ", n);
        char padded[256];
        snprintf(padded, sizeof padded, " %s ", only ? only : "");
        if (fft_size_supported(n) && (!only || strstr(padded, word)))
            sizes[size_count++] = n;
    }
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    if (convgen_context_create(&o, &offline) != CONVGEN_SUCCESS)
        return -1;
    if (convgen_context_create(NULL, &gpu) != CONVGEN_SUCCESS) {
        printf("real FFT GPU tests SKIPPED: %s\n", convgen_last_error());
        gpu = NULL;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    convgen_context_destroy(gpu);
    convgen_context_destroy(offline);
    return 0;
}

static void expect_error(const convgen_fft_desc *d, convgen_status want, const char *words)
{
    char *src = NULL;
    convgen_status s = convgen_emit_fft(d, 0, &src);
    free(src);
    if (s != want || !strstr(convgen_last_error(), words))
        fail_msg("status %d (want %d), message \"%s\" (want \"%s\")", s, want, convgen_last_error(), words);
}

static void test_bad_descriptors_are_named(void **state)
{
    (void)state;
    const convgen_fft_desc good = {.rank = 2, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 4, .window = {27, 27}};
    char *src = NULL;
    assert_int_equal(convgen_emit_fft(&good, 0, &src), CONVGEN_SUCCESS);
    free(src);
    convgen_fft_desc d = good;
    d.n = 11, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "n = 11");
    d = good, d.rank = 3, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "rank = 3");
    d = good, d.type = 7, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "type = 7");
    d = good, d.direction = CONVGEN_FFT_INVERSE, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "direction = 1");
    d = good, d.batch = 0, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "batch = 0");
    d = good, d.channels = -2, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "channels = -2");
    d = good, d.window[1] = 33, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "window[1] = 33");
    d = good, d.offset[0] = 6, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "offset[0] = 6");
    d = good, d.pitch = 20, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "pitch = 20");
    d = good, d.spectrum_stride[1] = 100, d.channels = 2,
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "spectrum_stride[1] = 100");
    d = good, d.spectrum_stride[1] = 544, d.spectrum_stride[0] = 1000, d.channels = 2,
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "spectrum_stride[0] = 1000");
    d = good, d.real_stride[0] = -1, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "real_stride[0] = -1");
    d = good, d.layout = 5, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "layout = 5");
    d = good, d.scale = NAN, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "scale");
    d = good, d.batch = INT64_MAX, expect_error(&d, CONVGEN_ERROR_NOT_SUPPORTED, "2^31");
    d = good, d.rank = 1, d.window[1] = 0, d.order = CONVGEN_FFT_ORDER_DIGIT_REVERSED,
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "order = DIGIT_REVERSED");
    d = good, d.type = CONVGEN_FFT_C2C, d.direction = CONVGEN_FFT_FORWARD,
    expect_error(&d, CONVGEN_ERROR_NOT_SUPPORTED, "rank = 2 with type C2C");
    expect_error(NULL, CONVGEN_ERROR_INVALID_VALUE, "desc is NULL");
    assert_int_equal(convgen_emit_fft(&good, 0, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_int_equal(convgen_emit_fft(&good, 1, &src), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "kernel index 1"));
}

/* A window that leaves a border on both sides where the size allows, so clipped and pruned
 * registers are exercised; the whole signal for the smallest sizes. */
static void some_window(int n, int salt, int *size, int *at)
{
    *size = n > 4 ? n - n / 4 - salt % 3 : n;
    *at = n > 4 ? (n - *size) / 2 + salt % 2 : 0;
    if (*at + *size > n)
        *at = n - *size;
}

static convgen_fft_desc variant(int n, int rank, convgen_fft_type type, int v)
{
    convgen_fft_desc d = {.rank = rank, .n = n, .type = type, .batch = v % 3 == 2 ? 1 : 37};
    if (v % 4 == 1)
        d.channels = 3;
    if (v % 2 == 1) {
        some_window(n, v, &d.window[0], &d.offset[0]);
        if (rank == 2)
            some_window(n, v + 1, &d.window[1], &d.offset[1]);
    }
    if (rank == 2) {
        d.layout = v % 3 == 1 ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL;
        d.order = v % 4 >= 2 ? CONVGEN_FFT_ORDER_DIGIT_REVERSED : CONVGEN_FFT_ORDER_NATURAL;
    }
    if (v % 5 == 3) { /* strided: gaps that must stay untouched */
        int w = d.window[rank - 1] ? d.window[rank - 1] : n;
        d.pitch = rank == 2 ? w + 3 : 0;
        int64_t real = rank == 2 ? (int64_t)((d.window[0] ? d.window[0] : n) - 1) * d.pitch + w : w;
        int64_t spec = rank == 2 ? (int64_t)n * (n / 2 + 1) : n / 2 + 1;
        int64_t channels = d.channels ? d.channels : 1;
        d.real_stride[1] = real + 5; /* channel-major within a batch entry, with gaps */
        d.real_stride[0] = channels * (real + 5) + 2;
        d.spectrum_stride[1] = spec + 7;
        d.spectrum_stride[0] = channels * (spec + 7) + 1;
    }
    if (type == CONVGEN_FFT_C2R && v % 2 == 0)
        d.scale = 1.0f / (float)(rank == 2 ? n * n : n);
    return d;
}

static void test_every_size_compiles_without_local_memory(void **state)
{
    (void)state;
    int kernels = 0;
    for (int i = 0; i < size_count; ++i)
        for (int rank = 1; rank <= 2; ++rank)
            for (int type = CONVGEN_FFT_R2C; type <= CONVGEN_FFT_C2R; ++type) {
                convgen_fft_desc d = variant(sizes[i], rank, (convgen_fft_type)type, i + type);
                convgen_plan *p;
                if (convgen_plan_fft(offline, &d, &p) != CONVGEN_SUCCESS)
                    fail_msg("n = %d rank %d type %d: %s\n%s", d.n, rank, type, convgen_last_error(),
                             convgen_last_compile_log());
                for (int k = 0; k < convgen_plan_kernel_count(p); ++k, ++kernels) {
                    convgen_kernel_info info;
                    assert_int_equal(convgen_plan_kernel_info(p, k, &info), CONVGEN_SUCCESS);
                    if (k == 0 && type == CONVGEN_FFT_R2C)
                        print_message("n = %3d rank %d: %3d registers\n", d.n, rank, info.registers);
                    if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
                        fail_msg("%s: stack %d, spills %d/%d", info.name, info.stack_bytes, info.spill_store_bytes,
                                 info.spill_load_bytes);
                }
                convgen_plan_destroy(p);
            }
    print_message("%d kernels, none with local memory\n", kernels);
}

/* ---- the float64 reference ---- */

/* exp(sign 2 pi i num / den) from a table of the den-th roots (one size at a time). */
static double complex root(int sign, long num, long den)
{
    static double complex table[FFT_MAX_N];
    static long table_n;
    if (table_n != den) {
        for (long j = 0; j < den; ++j)
            table[j] = cos(2.0 * M_PI * (double)j / (double)den) - I * sin(2.0 * M_PI * (double)j / (double)den);
        table_n = den;
    }
    double complex w = table[num % den];
    return sign < 0 ? w : conj(w);
}

/* Where bin k of the n-bin axis sits. */
static int bin_position(const cg_fft_problem *p, const fft_plan *pl, int k)
{
    return p->natural ? k : fft_plan_output_position(pl, k);
}

static int64_t spectrum_index(const cg_fft_problem *p, const fft_plan *pl, int64_t base, int ky, int kx)
{
    if (p->rank == 1)
        return base + kx;
    int y = bin_position(p, pl, ky);
    return base + (p->transposed ? (int64_t)kx * p->n + y : (int64_t)y * p->half + kx);
}

static int64_t offset_of(const int64_t stride[2], const cg_fft_problem *p, int64_t tr)
{
    return tr / p->channels * stride[0] + tr % p->channels * stride[1];
}

/* R2C of transform tr: spec[ky][kx] over the zero-padded window. */
static void r2c_reference(const cg_fft_problem *p, const float *in, int64_t tr, double complex *spec)
{
    int n = p->n, half = p->half;
    double complex rows[FFT_MAX_N][FFT_MAX_N / 2 + 1];
    const float *src = in + offset_of(p->real_stride, p, tr);
    for (int y = 0; y < p->h; ++y)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int x = 0; x < p->w; ++x)
                s += src[(int64_t)y * p->pitch + x] * root(-1, (long)kx * (x + p->ox), n);
            rows[y][kx] = s;
        }
    int ny = p->rank == 2 ? n : 1;
    for (int ky = 0; ky < ny; ++ky)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int y = 0; y < p->h; ++y)
                s += rows[y][kx] * root(-1, (long)ky * (y + p->oy), n);
            spec[ky * half + kx] = s * (double)p->scale;
        }
}

/* C2R of transform tr: the real signal whose Hermitian half (imaginary parts of bins 0 and n/2
 * dropped) is given, at the window's rows and columns. */
static void c2r_reference(const cg_fft_problem *p, const fft_plan *pl, const float *in, int64_t tr, double *out)
{
    int n = p->n, half = p->half, ny = p->rank == 2 ? n : 1;
    double complex cols[FFT_MAX_N][FFT_MAX_N / 2 + 1];
    int64_t base = offset_of(p->spectrum_stride, p, tr);
    const float *spec = in;
    for (int y = 0; y < p->h; ++y)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int ky = 0; ky < ny; ++ky) {
                int64_t at = spectrum_index(p, pl, base, ky, kx);
                s += (spec[2 * at] + I * spec[2 * at + 1]) * root(+1, (long)ky * (y + p->oy), n);
            }
            cols[y][kx] = s;
        }
    for (int y = 0; y < p->h; ++y)
        for (int x = 0; x < p->w; ++x) {
            int m = x + p->ox;
            double s = creal(cols[y][0]);
            for (int k = 1; 2 * k < n; ++k)
                s += 2.0 * creal(cols[y][k] * root(+1, (long)k * m, n));
            if (n % 2 == 0)
                s += creal(cols[y][n / 2]) * (m % 2 ? -1.0 : 1.0);
            out[y * p->w + x] = s * (double)p->scale;
        }
}

/* ---- on the GPU ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static bool poisoned(float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    return bits == 0xFFFFFFFFu;
}

/* Runs the plan: in_floats inputs, out_floats outputs plus the guard, poisoned first. */
static void run(convgen_plan *plan, const float *in, size_t in_floats, float *out, size_t out_floats)
{
    const cg_driver *drv = gpu->drv;
    CUcontext popped;
    CUdeviceptr din = 0, dout = 0, ws = 0;
    size_t ws_bytes;
    assert_int_equal(convgen_plan_workspace_size(plan, &ws_bytes), CONVGEN_SUCCESS);
    assert_int_equal(drv->CtxPushCurrent(gpu->primary), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&din, in_floats * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dout, (out_floats + GUARD) * sizeof(float)), CUDA_SUCCESS);
    if (ws_bytes)
        assert_int_equal(drv->MemAlloc(&ws, ws_bytes), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyHtoD(din, in, in_floats * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemsetD8(dout, 0xFF, (out_floats + GUARD) * sizeof(float)), CUDA_SUCCESS);
    convgen_status s = convgen_execute_fft(plan, (void *)din, (void *)dout, (void *)ws, ws_bytes, NULL);
    if (s != CONVGEN_SUCCESS)
        fail_msg("execute: %s", convgen_last_error());
    assert_int_equal(drv->CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyDtoH(out, dout, (out_floats + GUARD) * sizeof(float)), CUDA_SUCCESS);
    drv->MemFree(din);
    drv->MemFree(dout);
    if (ws)
        drv->MemFree(ws);
    drv->CtxPopCurrent(&popped);
}

typedef struct errors {
    double d2, r2;
    int64_t untouched_written, unwritten;
} errors;

static void compare(errors *e, double got_re, double got_im, double complex want)
{
    e->d2 += pow(got_re - creal(want), 2) + pow(got_im - cimag(want), 2);
    e->r2 += pow(cabs(want), 2);
}

/* Checks every output; marks what was compared, then every unmarked float must be poison. */
static void check_r2c(const cg_fft_problem *p, const fft_plan *pl, const float *in, const float *out, size_t out_floats,
                      errors *e)
{
    bool *seen = calloc(out_floats + GUARD, 1);
    double complex *spec = malloc(sizeof *spec * FFT_MAX_N * (FFT_MAX_N / 2 + 1));
    int ny = p->rank == 2 ? p->n : 1;
    for (int64_t tr = 0; tr < p->count; ++tr) {
        r2c_reference(p, in, tr, spec);
        int64_t base = offset_of(p->spectrum_stride, p, tr);
        for (int ky = 0; ky < ny; ++ky)
            for (int kx = 0; kx < p->half; ++kx) {
                int64_t at = spectrum_index(p, pl, base, ky, kx);
                compare(e, out[2 * at], out[2 * at + 1], spec[ky * p->half + kx]);
                e->unwritten += poisoned(out[2 * at]) || poisoned(out[2 * at + 1]);
                seen[2 * at] = seen[2 * at + 1] = true;
            }
    }
    for (size_t i = 0; i < out_floats + GUARD; ++i)
        e->untouched_written += !seen[i] && !poisoned(out[i]);
    free(spec);
    free(seen);
}

static void check_c2r(const cg_fft_problem *p, const fft_plan *pl, const float *in, const float *out, size_t out_floats,
                      errors *e)
{
    bool *seen = calloc(out_floats + GUARD, 1);
    double *ref = malloc(sizeof *ref * FFT_MAX_N * FFT_MAX_N);
    for (int64_t tr = 0; tr < p->count; ++tr) {
        c2r_reference(p, pl, in, tr, ref);
        int64_t base = offset_of(p->real_stride, p, tr);
        for (int y = 0; y < p->h; ++y)
            for (int x = 0; x < p->w; ++x) {
                int64_t at = base + (int64_t)y * p->pitch + x;
                compare(e, out[at], 0.0, ref[y * p->w + x]);
                e->unwritten += poisoned(out[at]);
                seen[at] = true;
            }
    }
    for (size_t i = 0; i < out_floats + GUARD; ++i)
        e->untouched_written += !seen[i] && !poisoned(out[i]);
    free(ref);
    free(seen);
}

/* Plans, runs and checks one descriptor; returns the relative error. */
static double run_one(const convgen_fft_desc *d)
{
    cg_fft_problem p;
    fft_plan pl;
    char err[128];
    assert_int_equal(cg_fft_problem_init(&p, d), CONVGEN_SUCCESS);
    assert_true(fft_plan_make(p.n, p.natural, &pl, err, sizeof err));
    convgen_plan *plan;
    if (convgen_plan_fft(gpu, d, &plan) != CONVGEN_SUCCESS)
        fail_msg("n = %d: %s\n%s", d->n, convgen_last_error(), convgen_last_compile_log());
    bool forward = p.type == CONVGEN_FFT_R2C;
    size_t in_floats = (size_t)(forward ? p.real_elements : 2 * p.spectrum_elements);
    size_t out_floats = (size_t)(forward ? 2 * p.spectrum_elements : p.real_elements);
    float *in = malloc(in_floats * sizeof(float)), *out = malloc((out_floats + GUARD) * sizeof(float));
    for (size_t i = 0; i < in_floats; ++i)
        in[i] = uniform();
    run(plan, in, in_floats, out, out_floats);
    errors e = {0};
    if (forward)
        check_r2c(&p, &pl, in, out, out_floats, &e);
    else
        check_c2r(&p, &pl, in, out, out_floats, &e);
    double rel = e.unwritten ? INFINITY : sqrt(e.d2 / e.r2);
    if (!(rel <= BOUND) || e.untouched_written) {
        char what[256];
        cg_fft_problem_describe(&p, what, sizeof what);
        fail_msg("%s (layout %d order %d pitch %lld strides %lld/%lld): relative error %.3e, %lld unwritten, "
                 "%lld written outside the output", what, d->layout, d->order, (long long)p.pitch,
                 (long long)p.real_stride[0], (long long)p.spectrum_stride[0], rel, (long long)e.unwritten,
                 (long long)e.untouched_written);
    }
    free(in);
    free(out);
    convgen_plan_destroy(plan);
    return rel;
}

static void test_every_size_matches_the_reference_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    double worst[2][2] = {{0}};
    int runs = 0;
    for (int i = 0; i < size_count; ++i)
        for (int rank = 1; rank <= 2; ++rank)
            for (int type = CONVGEN_FFT_R2C; type <= CONVGEN_FFT_C2R; ++type)
                for (int v = 0; v < 2; ++v) {
                    convgen_fft_desc d = variant(sizes[i], rank, (convgen_fft_type)type, 2 * i + v + rank);
                    if (rank == 2 && sizes[i] >= 48) /* the float64 reference is O(n^3) per image */
                        d.batch = 3, d.channels = d.channels > 1 ? 2 : 1;
                    double e = run_one(&d);
                    double *w = &worst[rank - 1][type - CONVGEN_FFT_R2C];
                    *w = e > *w ? e : *w;
                    ++runs;
                }
    print_message("%d runs; worst relative error: 1-D R2C %.3e, C2R %.3e; 2-D R2C %.3e, C2R %.3e\n", runs,
                  worst[0][0], worst[0][1], worst[1][0], worst[1][1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_descriptors_are_named),
        cmocka_unit_test(test_every_size_compiles_without_local_memory),
        cmocka_unit_test(test_every_size_matches_the_reference_on_the_gpu),
    };
    return cmocka_run_group_tests_name("fft_real", tests, setup, teardown);
}
