/* Generated batched FFTs through the public API (convgen_plan_fft): R2C, C2R and C2C forward and
 * inverse, rank 1, 2 and 3 (rank 3 up to n = 64). Bad descriptors get a message naming the
 * field; every size renders and compiles for sm_90 without local memory; rank 3 plans' steps
 * evaluate on the CPU to the float64 transform; on a GPU, every size against a float64 DFT
 * computed here and against cuFFT run on the padded copy its users make, with windows, strides,
 * both layouts and orders, and scales. Outputs are poisoned first and every element outside the
 * requested output (gaps between strided transforms, columns past a window, a guard region
 * past the end) must still hold the poison afterwards. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <complex.h>
#include <cufft.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "fft/fft_kernel.h"
#include "fft/fft_problem.h"
#include "jit.h"
#include "util.h"

#define BOUND 1e-5
#define GUARD 512 /* poisoned elements past the last output */

static int sizes[FFT_MAX_N], size_count;
/* few_sms plans for 3 multiprocessors of the GPU and no thread-block clusters: a block then works
 * several images in turn. one_sm plans for one multiprocessor, so that no grid is smaller: 1-D R2C
 * then loads its twiddle factors from the table, which on the GPU's count the small batches of
 * gpu_cases do not (they compute them with sincospif). */
static convgen_context *gpu, *few_sms, *one_sm, *offline;

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
        printf("batched FFT GPU tests SKIPPED: %s\n", convgen_last_error());
        gpu = NULL;
        return 0;
    }
    o = (convgen_context_options){.sm_count = 3};
    if (convgen_context_create(&o, &few_sms) != CONVGEN_SUCCESS)
        return -1;
    few_sms->max_cluster = 1; /* as a GPU without thread-block clusters: R2C and C2R take the resident layout too */
    o = (convgen_context_options){.sm_count = 1};
    if (convgen_context_create(&o, &one_sm) != CONVGEN_SUCCESS)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    convgen_context_destroy(one_sm);
    convgen_context_destroy(few_sms);
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
    d = good, d.rank = 4, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "rank = 4");
    d = good, d.window[2] = 5, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "window[2] = 5");
    d = good, d.plane_pitch = 900, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "plane_pitch = 900");
    /* rank 3: a window of 27 planes of 27 x 32 */
    d = good, d.rank = 3, d.n = 128, expect_error(&d, CONVGEN_ERROR_NOT_SUPPORTED, "n = 128: rank 3");
    d = good, d.rank = 3, d.plane_pitch = 800, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "plane_pitch = 800");
    d = good, d.rank = 3, d.window[2] = 33, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "window[2] = 33");
    d = good, d.rank = 3, d.offset[0] = 6, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "offset[0] = 6");
    d = good, d.rank = 3, d.pitch = 20, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "pitch = 20 must be >= window[2]");
    d = good, d.rank = 3, d.plane_pitch = (int64_t)1 << 61, d.batch = 8,
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "plane_pitch = 2305843009213693952");
    d = good, d.rank = 3, d.window[1] = 2, d.pitch = (int64_t)3 << 61, /* 1 row of it fits, 2 do not */
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "(the default plane_pitch) overflow 64 bits");
    /* R2C n = 60: 1300000 volumes make 2.4e9 depth columns, past a 32-bit multiply-and-shift by 1860 */
    d = (convgen_fft_desc){.rank = 3, .n = 60, .type = CONVGEN_FFT_R2C, .batch = 1300000},
    expect_error(&d, CONVGEN_ERROR_NOT_SUPPORTED, "past the depth pass's 32-bit index division by 1860");
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
    d = good, d.type = CONVGEN_FFT_C2C, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "direction = 0");
    d = good, d.pitch = (int64_t)1 << 61, expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "pitch = 2305843009213693952");
    d = good, d.rank = 1, d.window[1] = 0, d.layout = CONVGEN_FFT_LAYOUT_TRANSPOSED,
    expect_error(&d, CONVGEN_ERROR_INVALID_VALUE, "layout = TRANSPOSED");
    expect_error(NULL, CONVGEN_ERROR_INVALID_VALUE, "desc is NULL");
    assert_int_equal(convgen_emit_fft(&good, 0, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_int_equal(convgen_emit_fft(&good, 1, &src), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "kernel index 1"));
}

/* The four transforms a plan can be. */
typedef struct kind {
    convgen_fft_type type;
    convgen_fft_direction direction;
    const char *name;
} kind;

static const kind kinds[] = {
    {CONVGEN_FFT_R2C, 0, "R2C"},
    {CONVGEN_FFT_C2R, 0, "C2R"},
    {CONVGEN_FFT_C2C, CONVGEN_FFT_FORWARD, "C2C forward"},
    {CONVGEN_FFT_C2C, CONVGEN_FFT_INVERSE, "C2C inverse"},
};
enum { KINDS = sizeof kinds / sizeof kinds[0] };

/* A window that leaves a border on both sides where the size allows, so clipped and pruned
 * registers are exercised; the whole signal for the smallest sizes. */
static void some_window(int n, int salt, int *size, int *at)
{
    *size = n > 4 ? n - n / 4 - salt % 3 : n;
    *at = n > 4 ? (n - *size) / 2 + salt % 2 : 0;
    if (*at + *size > n)
        *at = n - *size;
}

static convgen_fft_desc variant(int n, int rank, kind k, int v)
{
    convgen_fft_desc d = {.rank = rank, .n = n, .type = k.type, .direction = k.direction, .batch = v % 3 == 2 ? 1 : 37};
    if (rank == 3) /* volumes: a few */
        d.batch = v % 3 == 2 ? 1 : 3;
    if (v % 3 == 1) /* with both orders over the variants */
        d.channels = 3;
    if (v % 2 == 1)
        for (int i = 0; i < rank; ++i)
            some_window(n, v + i, &d.window[i], &d.offset[i]);
    if (rank >= 2)
        d.layout = v % 3 == 1 ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL;
    if (rank >= 2 || k.type == CONVGEN_FFT_C2C)
        d.order = v % 4 >= 2 ? CONVGEN_FFT_ORDER_DIGIT_REVERSED : CONVGEN_FFT_ORDER_NATURAL;
    if (v % 5 == 3) { /* strided: gaps that must stay untouched */
        int w = d.window[rank - 1] ? d.window[rank - 1] : n;
        int h = rank >= 2 && d.window[rank - 2] ? d.window[rank - 2] : n;
        int planes = rank == 3 && d.window[0] ? d.window[0] : n;
        int half = k.type == CONVGEN_FFT_C2C ? n : n / 2 + 1;
        d.pitch = rank >= 2 ? w + 3 : 0;
        int64_t signal = rank >= 2 ? (int64_t)(h - 1) * d.pitch + w : w;
        if (rank == 3) { /* planes with a gap of 4 after each */
            d.plane_pitch = signal + 4;
            signal += (int64_t)(planes - 1) * d.plane_pitch;
        }
        int64_t spec = rank >= 2 ? (int64_t)n * half * (rank == 3 ? n : 1) : half;
        int64_t channels = d.channels ? d.channels : 1;
        d.real_stride[1] = signal + 5; /* channel-major within a batch entry, with gaps */
        d.real_stride[0] = channels * (signal + 5) + 2;
        d.spectrum_stride[1] = spec + 7;
        d.spectrum_stride[0] = channels * (spec + 7) + 1;
    }
    bool inverse = k.type == CONVGEN_FFT_C2R || k.direction == CONVGEN_FFT_INVERSE;
    if (inverse && v % 2 == 0)
        d.scale = 1.0f / (float)(rank == 3 ? n * n * n : rank == 2 ? n * n : n);
    else if (!inverse && v % 4 == 2)
        d.scale = 0.5f;
    return d;
}

/* NVRTC dominates the tests' time: plan everything once on all cores first, so the checks
 * then find each kernel in the memory cache. */
typedef struct warm_job {
    convgen_context *ctx;
    const convgen_fft_desc *cases;
} warm_job;

static void warm_one(void *user, int i)
{
    const warm_job *job = user;
    convgen_plan *plan;
    if (convgen_plan_fft(job->ctx, &job->cases[i], &plan) == CONVGEN_SUCCESS)
        convgen_plan_destroy(plan); /* a failure shows again, with its message, where it is checked */
}

static void warm_up(convgen_context *ctx, const convgen_fft_desc *cases, int count)
{
    warm_job job = {.ctx = ctx, .cases = cases};
    cg_parallel_for(count, warm_one, &job);
}

static int kind_of(const convgen_fft_desc *d)
{
    int k = 0;
    while (kinds[k].type != d->type || kinds[k].direction != d->direction)
        ++k;
    return k;
}

/* Plans and compiles each case on `ctx`: no kernel may use local memory, nor clusters where the
 * context has none. */
static int compile_cases(convgen_context *ctx, const convgen_fft_desc *cases, int count)
{
    int kernels = 0;
    warm_up(ctx, cases, count);
    for (int i = 0; i < count; ++i) {
        const convgen_fft_desc *d = &cases[i];
        convgen_plan *p;
        if (convgen_plan_fft(ctx, d, &p) != CONVGEN_SUCCESS)
            fail_msg("n = %d rank %d %s: %s\n%s", d->n, d->rank, kinds[kind_of(d)].name, convgen_last_error(),
                     convgen_last_compile_log());
        for (int j = 0; j < convgen_plan_kernel_count(p); ++j, ++kernels) {
            convgen_kernel_info info;
            assert_int_equal(convgen_plan_kernel_info(p, j, &info), CONVGEN_SUCCESS);
            if (ctx->max_cluster == 1 && strstr(convgen_plan_source(p, j), "__cluster_dims__"))
                fail_msg("%s: thread-block clusters in a context without them", info.name);
            if (j == 0 && kind_of(d) == 0)
                print_message("n = %3d rank %d: %3d registers\n", d->n, d->rank, info.registers);
            if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
                fail_msg("%s: stack %d, spills %d/%d", info.name, info.stack_bytes, info.spill_store_bytes,
                         info.spill_load_bytes);
        }
        convgen_plan_destroy(p);
    }
    return kernels;
}

/* Whether the generator spreads a case over thread-block clusters on an H100. */
static bool clustered(const convgen_fft_desc *d)
{
    cg_fft_problem p;
    cg_generated gen;
    assert_int_equal(cg_fft_problem_init(&p, d), CONVGEN_SUCCESS);
    if (cg_generate_fft(&p, &(cg_target){.sm_count = 132}, &gen) != CONVGEN_SUCCESS)
        fail_msg("n = %d rank %d %s: %s", d->n, d->rank, kinds[kind_of(d)].name, convgen_last_error());
    bool yes = strstr(gen.kernels[0].source, "__cluster_dims__") != NULL;
    cg_generated_free(&gen);
    return yes;
}

/* Every size, rank and kind for sm_90 (rank 3 up to n = 64); and the cases that use clusters there once more as
 * planned for a GPU without them (the resident layout of generator/fft/fft_real.c). */
static void test_every_size_compiles_without_local_memory(void **state)
{
    (void)state;
    int count = 0, clustered_count = 0;
    convgen_fft_desc *cases = malloc(sizeof *cases * size_count * 3 * KINDS);
    convgen_fft_desc *others = malloc(sizeof *others * size_count * 3 * KINDS);
    for (int i = 0; i < size_count; ++i)
        for (int rank = 1; rank <= 3 && (rank < 3 || sizes[i] <= FFT_MAX_VOLUME_N); ++rank)
            for (int k = 0; k < KINDS; ++k) {
                cases[count] = variant(sizes[i], rank, kinds[k], i + k);
                if (clustered(&cases[count]))
                    others[clustered_count++] = cases[count];
                ++count;
            }
    int kernels = compile_cases(offline, cases, count);
    print_message("%d kernels for sm_90, none with local memory\n", kernels);
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    convgen_context *ctx;
    assert_int_equal(convgen_context_create(&o, &ctx), CONVGEN_SUCCESS);
    ctx->max_cluster = 1;
    kernels = compile_cases(ctx, others, clustered_count);
    convgen_context_destroy(ctx);
    print_message("%d kernels of the %d clustered cases planned without clusters, none with local memory\n",
                  kernels, clustered_count);
    free(others);
    free(cases);
}

/* Shared memory follows the target: on an A100 (163 KiB a block, 164 a multiprocessor) every
 * kernel asks for no more than it may (rank 2, and rank 3, whose one pass the H100's shared
 * memory takes to n = 28 and the A100's to 25) and uses neither clusters nor bulk copies, and an
 * offline sm_80 context knows those limits. */
static void test_shared_memory_fits_the_target(void **state)
{
    (void)state;
    const cg_target a100 = {.sm_count = 108, .shared_per_block = 163 * 1024, .shared_per_sm = 164 * 1024,
                            .max_cluster = 1};
    int checked = 0;
    for (int i = 0; i < size_count; ++i)
        for (int kr = 0; kr < 2 * KINDS; ++kr) {
            const int k = kr % KINDS, rank = kr < KINDS ? 2 : 3;
            if (rank == 3 && sizes[i] > FFT_MAX_VOLUME_N)
                continue;
            convgen_fft_desc d = variant(sizes[i], rank, kinds[k], i);
            d.batch = rank == 2 ? 100000 : 1000, d.channels = 0; /* enough images for several per block */
            cg_fft_problem p;
            cg_generated gen;
            assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_SUCCESS);
            assert_int_equal(cg_generate_fft(&p, &a100, &gen), CONVGEN_SUCCESS);
            for (int j = 0; j < gen.kernel_count; ++j, ++checked)
                if (gen.kernels[j].shared_bytes > (unsigned)a100.shared_per_block)
                    fail_msg("%s: %u bytes of shared memory", gen.kernels[j].name, gen.kernels[j].shared_bytes);
                else if (strstr(gen.kernels[j].source, "__cluster_dims__"))
                    fail_msg("%s: thread-block clusters on a GPU without them", gen.kernels[j].name);
                else if (strstr(gen.kernels[j].source, "cp.async.bulk"))
                    fail_msg("%s: sm_90's bulk copies on a GPU without them", gen.kernels[j].name);
            cg_generated_free(&gen);
        }
    print_message("%d kernels within the A100's shared memory\n", checked);
    convgen_context_options o = {.offline = 1, .arch = "sm_80", .disk_cache = -1};
    convgen_context *ctx;
    assert_int_equal(convgen_context_create(&o, &ctx), CONVGEN_SUCCESS);
    assert_int_equal(ctx->shared_per_block, 163 * 1024);
    assert_int_equal(ctx->shared_per_sm, 164 * 1024);
    assert_int_equal(ctx->max_cluster, 1);
    convgen_context_destroy(ctx);
    assert_int_equal(offline->max_cluster, 8); /* sm_90 */
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
        return base + (p->type == CONVGEN_FFT_C2C ? bin_position(p, pl, kx) : kx);
    int y = bin_position(p, pl, ky);
    return base + (p->transposed ? (int64_t)kx * p->n + y : (int64_t)y * p->half + kx);
}

static int64_t offset_of(const int64_t stride[2], const cg_fft_problem *p, int64_t tr)
{
    return tr / p->channels * stride[0] + tr % p->channels * stride[1];
}

static int rows_of(const cg_fft_problem *p) { return p->rank >= 2 ? p->n : 1; }
static int planes_of(const cg_fft_problem *p) { return p->rank == 3 ? p->n : 1; }

/* A rank 3 problem's window planes as the rank 2 problem of one of them, unscaled. */
static cg_fft_problem plane_of(const cg_fft_problem *p)
{
    cg_fft_problem q = *p;
    q.rank = 2, q.d = 1, q.oz = 0, q.scale = 1.0f;
    return q;
}

/* Where bin (kz, ky, kx) of a spectrum at `base` sits (kz = 0 below rank 3). */
static int64_t volume_index(const cg_fft_problem *p, const fft_plan *pl, int64_t base, int kz, int ky, int kx)
{
    if (p->rank < 3)
        return spectrum_index(p, pl, base, ky, kx);
    cg_fft_problem q = plane_of(p);
    return spectrum_index(&q, pl, base + (int64_t)kz * p->n * p->half, ky, kx);
}

/* A C2R's input as its users have it, the Hermitian half of a real signal's spectrum: columns kx
 * = 0 and n/2 conjugate-symmetric over (kz, ky), their self-mirrored bins real. Outside that the
 * half alone does not define the inverse, and cuFFT's answer depends on the algorithm it picks:
 * on random halves, 2-D n = 128 at 100 transforms differed from the reference's convention (the
 * imaginary parts of the real bins dropped, which the kernels follow) by 9%. */
static void make_hermitian(const cg_fft_problem *p, const fft_plan *pl, float *in)
{
    int ny = rows_of(p), nz = planes_of(p);
    for (int64_t tr = 0; tr < p->count; ++tr) {
        int64_t base = offset_of(p->spectrum_stride, p, tr);
        for (int kx = 0; kx < p->half; kx += p->n % 2 == 0 ? p->n / 2 : p->half)
            for (int kz = 0; kz < nz; ++kz)
                for (int ky = 0; ky < ny; ++ky) {
                    int mz = (nz - kz) % nz, my = (ny - ky) % ny;
                    int64_t a = volume_index(p, pl, base, kz, ky, kx), b = volume_index(p, pl, base, mz, my, kx);
                    if (a == b)
                        in[2 * a + 1] = 0.0f;
                    else if (kz * ny + ky < mz * ny + my)
                        in[2 * b] = in[2 * a], in[2 * b + 1] = -in[2 * a + 1];
                }
    }
}

/* Signal value at element index `at` of the input (real or complex). */
static double complex signal_at(const cg_fft_problem *p, const float *in, int64_t at)
{
    return p->type == CONVGEN_FFT_C2C ? in[2 * at] + I * in[2 * at + 1] : in[at];
}

static double complex spectrum_at(const float *in, int64_t at) { return in[2 * at] + I * in[2 * at + 1]; }

/* Forward transform tr over the zero-padded window: spec[ky][kx], kx < half. */
static void forward_reference(const cg_fft_problem *p, const float *in, int64_t tr, double complex *spec,
                              double complex *rows)
{
    int n = p->n, half = p->half;
    int64_t base = offset_of(p->real_stride, p, tr);
    for (int y = 0; y < p->h; ++y)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int x = 0; x < p->w; ++x)
                s += signal_at(p, in, base + (int64_t)y * p->pitch + x) * root(-1, (long)kx * (x + p->ox), n);
            rows[y * half + kx] = s;
        }
    for (int ky = 0; ky < rows_of(p); ++ky)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int y = 0; y < p->h; ++y)
                s += rows[y * half + kx] * root(-1, (long)ky * (y + p->oy), n);
            spec[ky * half + kx] = s * (double)p->scale;
        }
}

/* Inverse transform tr at the window's rows and columns: out[y][x]. C2R takes the Hermitian
 * half with the imaginary parts of bins 0 and n/2 dropped (as cuFFT does); its result is real. */
static void inverse_from(const cg_fft_problem *p, const double complex *spec, double complex *out,
                         double complex *cols);

static void inverse_reference(const cg_fft_problem *p, const fft_plan *pl, const float *in, int64_t tr,
                              double complex *out, double complex *cols, double complex *spec)
{
    int64_t base = offset_of(p->spectrum_stride, p, tr);
    for (int ky = 0; ky < rows_of(p); ++ky)
        for (int kx = 0; kx < p->half; ++kx)
            spec[ky * p->half + kx] = spectrum_at(in, spectrum_index(p, pl, base, ky, kx));
    inverse_from(p, spec, out, cols);
}

/* The inverse of a spectrum spec[ky][kx] (natural) at the window's rows and columns. */
static void inverse_from(const cg_fft_problem *p, const double complex *spec, double complex *out,
                         double complex *cols)
{
    int n = p->n, half = p->half;
    for (int y = 0; y < p->h; ++y)
        for (int kx = 0; kx < half; ++kx) {
            double complex s = 0;
            for (int ky = 0; ky < rows_of(p); ++ky)
                s += spec[ky * half + kx] * root(+1, (long)ky * (y + p->oy), n);
            cols[y * half + kx] = s;
        }
    for (int y = 0; y < p->h; ++y)
        for (int x = 0; x < p->w; ++x) {
            int m = x + p->ox;
            const double complex *c = cols + y * half;
            double complex s = 0;
            if (p->type == CONVGEN_FFT_C2C) {
                for (int k = 0; k < n; ++k)
                    s += c[k] * root(+1, (long)k * m, n);
            } else {
                s = creal(c[0]);
                for (int k = 1; 2 * k < n; ++k)
                    s += 2.0 * creal(c[k] * root(+1, (long)k * m, n));
                if (n % 2 == 0)
                    s += creal(c[n / 2]) * (m % 2 ? -1.0 : 1.0);
            }
            out[y * p->w + x] = s * (double)p->scale;
        }
}

/* Rank 3, forward: each window plane's 2-D spectrum, then the sum along depth: spec[kz][ky][kx]. */
static void forward_volume(const cg_fft_problem *p, const float *in, int64_t tr, double complex *spec,
                           double complex *planes, double complex *rows)
{
    cg_fft_problem q = plane_of(p);
    int n = p->n;
    int64_t bins = (int64_t)n * p->half, floats = p->type == CONVGEN_FFT_C2C ? 2 : 1;
    for (int z = 0; z < p->d; ++z)
        forward_reference(&q, in + floats * z * p->plane_pitch, tr, planes + z * bins, rows);
    for (int kz = 0; kz < n; ++kz)
        for (int64_t e = 0; e < bins; ++e) {
            double complex s = 0;
            for (int z = 0; z < p->d; ++z)
                s += planes[z * bins + e] * root(-1, (long)kz * (z + p->oz), n);
            spec[kz * bins + e] = s * (double)p->scale;
        }
}

/* Rank 3, inverse: the sum along depth at each window plane, then its 2-D inverse:
 * out[z][y][x] over the window. */
static void inverse_volume(const cg_fft_problem *p, const fft_plan *pl, const float *in, int64_t tr,
                           double complex *out, double complex *cols, double complex *plane)
{
    cg_fft_problem q = plane_of(p);
    q.scale = p->scale;
    int n = p->n, half = p->half;
    int64_t base = offset_of(p->spectrum_stride, p, tr);
    for (int z = 0; z < p->d; ++z) {
        for (int ky = 0; ky < n; ++ky)
            for (int kx = 0; kx < half; ++kx) {
                double complex s = 0;
                for (int kz = 0; kz < n; ++kz)
                    s += spectrum_at(in, volume_index(p, pl, base, kz, ky, kx)) * root(+1, (long)kz * (z + p->oz), n);
                plane[ky * half + kx] = s;
            }
        inverse_from(&q, plane, out + (int64_t)z * p->h * p->w, cols);
    }
}

/* ---- cuFFT on the padded copy ---- */

static const char *cufft_error(cufftResult r)
{
    static char buf[32];
    snprintf(buf, sizeof buf, "cufftResult %d", (int)r);
    return buf;
}

/* cuFFT's answer to the same problem, the way its users get it: the input copied into dense,
 * zero-padded arrays, natural layout and order. Returns forward spectra [count][planes][rows][half]
 * or whole inverse signals [count][planes][rows][n], complex (a C2R result in the real parts),
 * unscaled. */
static double complex *cufft_result(const cg_fft_problem *p, const fft_plan *pl, const float *in)
{
    int n = p->n, ny = rows_of(p), nz = planes_of(p), half = p->half;
    bool forward = p->sign < 0, complex_signal = p->type == CONVGEN_FFT_C2C;
    size_t signal = (size_t)p->count * nz * ny * n, spectrum = (size_t)p->count * nz * ny * half;
    size_t in_floats = forward ? signal * (complex_signal ? 2 : 1) : 2 * spectrum;
    size_t out_floats = forward ? 2 * spectrum : signal * (complex_signal ? 2 : 1);
    float *dense = calloc(in_floats, sizeof *dense), *got = malloc(out_floats * sizeof *got);
    assert_non_null(dense);
    assert_non_null(got);
    for (int64_t tr = 0; tr < p->count; ++tr) {
        if (forward) {
            int64_t base = offset_of(p->real_stride, p, tr);
            for (int z = 0; z < p->d; ++z)
                for (int y = 0; y < p->h; ++y)
                    for (int x = 0; x < p->w; ++x) {
                        double complex v = signal_at(p, in, base + z * p->plane_pitch + (int64_t)y * p->pitch + x);
                        size_t at = (((size_t)tr * nz + z + p->oz) * ny + y + p->oy) * n + x + p->ox;
                        if (complex_signal)
                            dense[2 * at] = (float)creal(v), dense[2 * at + 1] = (float)cimag(v);
                        else
                            dense[at] = (float)creal(v);
                    }
        } else {
            int64_t base = offset_of(p->spectrum_stride, p, tr);
            for (int kz = 0; kz < nz; ++kz)
                for (int ky = 0; ky < ny; ++ky)
                    for (int kx = 0; kx < half; ++kx) {
                        int64_t from = volume_index(p, pl, base, kz, ky, kx);
                        size_t at = (((size_t)tr * nz + kz) * ny + ky) * half + kx;
                        dense[2 * at] = in[2 * from], dense[2 * at + 1] = in[2 * from + 1];
                    }
        }
    }
    const cg_driver *drv = gpu->drv;
    CUcontext popped;
    CUdeviceptr din, dout;
    assert_int_equal(drv->CtxPushCurrent(gpu->primary), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&din, in_floats * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dout, out_floats * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyHtoD(din, dense, in_floats * sizeof(float)), CUDA_SUCCESS);
    int dims[3] = {n, n, n};
    cufftType type = p->type == CONVGEN_FFT_R2C ? CUFFT_R2C : p->type == CONVGEN_FFT_C2R ? CUFFT_C2R : CUFFT_C2C;
    cufftHandle plan;
    cufftResult r = cufftPlanMany(&plan, p->rank, dims, NULL, 1, 0, NULL, 1, 0, type, (int)p->count);
    if (r == CUFFT_SUCCESS) {
        if (type == CUFFT_R2C)
            r = cufftExecR2C(plan, (cufftReal *)din, (cufftComplex *)dout);
        else if (type == CUFFT_C2R)
            r = cufftExecC2R(plan, (cufftComplex *)din, (cufftReal *)dout);
        else
            r = cufftExecC2C(plan, (cufftComplex *)din, (cufftComplex *)dout, forward ? CUFFT_FORWARD : CUFFT_INVERSE);
        cufftDestroy(plan);
    }
    if (r != CUFFT_SUCCESS)
        fail_msg("cuFFT n = %d rank %d: %s", n, p->rank, cufft_error(r));
    assert_int_equal(drv->CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyDtoH(got, dout, out_floats * sizeof(float)), CUDA_SUCCESS);
    drv->MemFree(din);
    drv->MemFree(dout);
    drv->CtxPopCurrent(&popped);
    size_t values = forward ? spectrum : signal;
    double complex *result = malloc(values * sizeof *result);
    assert_non_null(result);
    bool real_out = p->type == CONVGEN_FFT_C2R;
    for (size_t i = 0; i < values; ++i)
        result[i] = real_out ? got[i] : got[2 * i] + I * got[2 * i + 1];
    free(dense);
    free(got);
    return result;
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
/* Where set, run() passes the data as a user's slice of a larger array may: the real side 4 bytes
 * and the spectra 8 bytes past a 16-byte boundary (their types' own alignment), so that C2R's
 * copies by the copy engine, which need 16, fall back to the threads' (misaligned_cases). */
static bool misaligned;

static void run(convgen_plan *plan, bool forward, const float *in, size_t in_floats, float *out, size_t out_floats)
{
    const cg_driver *drv = gpu->drv;
    CUcontext popped;
    CUdeviceptr din = 0, dout = 0, ws = 0;
    size_t ws_bytes;
    /* floats before the data: the spectra's side by two, the real side by one (forward: in real) */
    size_t in_skip = misaligned ? (forward ? 1 : 2) : 0, out_skip = misaligned ? (forward ? 2 : 1) : 0;
    assert_int_equal(convgen_plan_workspace_size(plan, &ws_bytes), CONVGEN_SUCCESS);
    assert_int_equal(drv->CtxPushCurrent(gpu->primary), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&din, (in_floats + in_skip) * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemAlloc(&dout, (out_floats + out_skip + GUARD) * sizeof(float)), CUDA_SUCCESS);
    din += in_skip * sizeof(float), dout += out_skip * sizeof(float);
    if (ws_bytes)
        assert_int_equal(drv->MemAlloc(&ws, ws_bytes), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyHtoD(din, in, in_floats * sizeof(float)), CUDA_SUCCESS);
    assert_int_equal(drv->MemsetD8(dout, 0xFF, (out_floats + GUARD) * sizeof(float)), CUDA_SUCCESS);
    convgen_status s = convgen_execute_fft(plan, (void *)din, (void *)dout, (void *)ws, ws_bytes, NULL);
    if (s != CONVGEN_SUCCESS)
        fail_msg("execute: %s", convgen_last_error());
    assert_int_equal(drv->CtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(drv->MemcpyDtoH(out, dout, (out_floats + GUARD) * sizeof(float)), CUDA_SUCCESS);
    din -= in_skip * sizeof(float), dout -= out_skip * sizeof(float);
    drv->MemFree(din);
    drv->MemFree(dout);
    if (ws)
        drv->MemFree(ws);
    drv->CtxPopCurrent(&popped);
}

/* Squared differences against the float64 reference (ref), against cuFFT (cu), and cuFFT's own
 * against the reference; the floats outside the output that were written, the outputs that
 * were not. */
typedef struct errors {
    double ref_d2, ref_r2, cu_d2, cu_r2, cu_ref_d2;
    int64_t untouched_written, unwritten;
} errors;

static void compare(errors *e, double complex got, double complex want, double complex cufft)
{
    e->ref_d2 += pow(cabs(got - want), 2);
    e->ref_r2 += pow(cabs(want), 2);
    e->cu_d2 += pow(cabs(got - cufft), 2);
    e->cu_r2 += pow(cabs(cufft), 2);
    e->cu_ref_d2 += pow(cabs(cufft - want), 2);
}

/* Checks every output; marks what was compared, then every unmarked float must be poison.
 * Without cuFFT (the CPU's evaluation), its error terms compare the reference with itself. */
static void check(const cg_fft_problem *p, const fft_plan *pl, const float *in, const float *out, size_t out_floats,
                  bool with_cufft, errors *e)
{
    bool *seen = calloc(out_floats + GUARD, 1);
    int n = p->n, ny = rows_of(p), nz = planes_of(p), half = p->half;
    size_t volume = (size_t)nz * n * n;
    double complex *want = malloc(sizeof *want * volume), *scratch = malloc(sizeof *scratch * n * n);
    double complex *planes = malloc(sizeof *planes * volume);
    double complex *cu = with_cufft ? cufft_result(p, pl, in) : NULL;
    bool complex_out = p->type != CONVGEN_FFT_C2R;
    for (int64_t tr = 0; tr < p->count; ++tr) {
        if (p->sign < 0) {
            if (p->rank == 3)
                forward_volume(p, in, tr, want, planes, scratch);
            else
                forward_reference(p, in, tr, want, scratch);
            int64_t base = offset_of(p->spectrum_stride, p, tr);
            for (int kz = 0; kz < nz; ++kz)
                for (int ky = 0; ky < ny; ++ky)
                    for (int kx = 0; kx < half; ++kx) {
                        int64_t at = volume_index(p, pl, base, kz, ky, kx);
                        size_t bin = ((size_t)kz * ny + ky) * half + kx;
                        compare(e, out[2 * at] + I * out[2 * at + 1], want[bin],
                                cu ? cu[(size_t)tr * nz * ny * half + bin] * (double)p->scale : want[bin]);
                        e->unwritten += poisoned(out[2 * at]) || poisoned(out[2 * at + 1]);
                        seen[2 * at] = seen[2 * at + 1] = true;
                    }
            continue;
        }
        if (p->rank == 3)
            inverse_volume(p, pl, in, tr, want, scratch, planes);
        else
            inverse_reference(p, pl, in, tr, want, scratch, planes);
        int64_t base = offset_of(p->real_stride, p, tr);
        for (int z = 0; z < p->d; ++z)
            for (int y = 0; y < p->h; ++y)
                for (int x = 0; x < p->w; ++x) {
                    int64_t at = base + z * p->plane_pitch + (int64_t)y * p->pitch + x;
                    size_t point = ((size_t)z * p->h + y) * p->w + x;
                    double complex cufft =
                        cu ? cu[(((size_t)tr * nz + z + p->oz) * ny + y + p->oy) * n + x + p->ox] * (double)p->scale
                           : want[point];
                    if (complex_out) {
                        compare(e, out[2 * at] + I * out[2 * at + 1], want[point], cufft);
                        e->unwritten += poisoned(out[2 * at]) || poisoned(out[2 * at + 1]);
                        seen[2 * at] = seen[2 * at + 1] = true;
                    } else {
                        compare(e, out[at], want[point], cufft);
                        e->unwritten += poisoned(out[at]);
                        seen[at] = true;
                    }
                }
    }
    for (size_t i = 0; i < out_floats + GUARD; ++i)
        e->untouched_written += !seen[i] && !poisoned(out[i]);
    free(cu);
    free(want);
    free(planes);
    free(scratch);
    free(seen);
}

typedef struct result {
    double ref, cufft, cufft_ref; /* relative errors: against the reference, against cuFFT; cuFFT's own */
} result;

/* Plans, runs and checks one descriptor. */
static result run_one(convgen_context *ctx, const convgen_fft_desc *d)
{
    cg_fft_problem p;
    fft_plan pl;
    char err[128];
    assert_int_equal(cg_fft_problem_init(&p, d), CONVGEN_SUCCESS);
    assert_true(fft_plan_make(p.n, p.natural, &pl, err, sizeof err));
    convgen_plan *plan;
    if (convgen_plan_fft(ctx, d, &plan) != CONVGEN_SUCCESS)
        fail_msg("n = %d: %s\n%s", d->n, convgen_last_error(), convgen_last_compile_log());
    for (int k = 0; k < convgen_plan_kernel_count(plan); ++k) {
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_kernel_info(plan, k, &info), CONVGEN_SUCCESS);
        if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
            fail_msg("%s: stack %d, spills %d/%d", info.name, info.stack_bytes, info.spill_store_bytes,
                     info.spill_load_bytes);
    }
    bool forward = p.sign < 0;
    int signal_floats = p.type == CONVGEN_FFT_C2C ? 2 : 1;
    size_t in_floats = (size_t)(forward ? signal_floats * p.real_elements : 2 * p.spectrum_elements);
    size_t out_floats = (size_t)(forward ? 2 * p.spectrum_elements : signal_floats * p.real_elements);
    float *in = malloc(in_floats * sizeof(float)), *out = malloc((out_floats + GUARD) * sizeof(float));
    for (size_t i = 0; i < in_floats; ++i)
        in[i] = uniform();
    if (p.type == CONVGEN_FFT_C2R)
        make_hermitian(&p, &pl, in);
    run(plan, forward, in, in_floats, out, out_floats);
    errors e = {0};
    check(&p, &pl, in, out, out_floats, true, &e);
    result r = {.ref = e.unwritten ? INFINITY : sqrt(e.ref_d2 / e.ref_r2),
                .cufft = e.unwritten ? INFINITY : sqrt(e.cu_d2 / e.cu_r2),
                .cufft_ref = sqrt(e.cu_ref_d2 / e.ref_r2)};
    if (!(r.ref <= BOUND) || !(r.cufft <= BOUND) || e.untouched_written) {
        char what[256];
        cg_fft_problem_describe(&p, what, sizeof what);
        fail_msg("%s (layout %d order %d pitch %lld strides %lld/%lld): relative error %.3e (against cuFFT %.3e), "
                 "%lld unwritten, %lld written outside the output", what, d->layout, d->order, (long long)p.pitch,
                 (long long)p.real_stride[0], (long long)p.spectrum_stride[0], r.ref, r.cufft, (long long)e.unwritten,
                 (long long)e.untouched_written);
    }
    free(in);
    free(out);
    convgen_plan_destroy(plan);
    return r;
}

/* The GPU test's descriptors: every size, rank and kind, two variants each (rank 3: one above n = 32); and for the small
 * 2-D sizes a third with enough images that blocks take several (a block is sized so that each
 * multiprocessor gets two: thousands of images). */
enum { EXCHANGED_CASES = 2 * 4, CASES_PER_SIZE = 3 * KINDS * 2 + KINDS + EXCHANGED_CASES };

/* Sizes and kinds whose rank 2 natural-order plans are exchanged (fft_real.c, choose_exchange). */
static bool exchanged_kind(int n, convgen_fft_type type, bool transposed)
{
    if (type == CONVGEN_FFT_C2C)
        return false;
    return n == 64 || n == 128 || (n == 16 && type == CONVGEN_FFT_R2C && !transposed);
}

static int gpu_cases(convgen_fft_desc *cases)
{
    int count = 0;
    for (int i = 0; i < size_count; ++i) {
        int n = sizes[i];
        for (int rank = 1; rank <= 3 && (rank < 3 || n <= FFT_MAX_VOLUME_N); ++rank)
            for (int k = 0; k < KINDS; ++k)
                for (int v = 0; v < (rank == 3 && n > 32 ? 1 : 2); ++v) {
                    convgen_fft_desc d = variant(n, rank, kinds[k], 2 * i + v + rank);
                    if (rank == 2 && n >= 48) /* the float64 reference is O(n^3) per image */
                        d.batch = 3, d.channels = d.channels > 1 ? 2 : 1;
                    if (rank == 3 && n >= 24) /* and O(n^4) per volume */
                        d.batch = 1, d.channels = d.channels > 1 ? 2 : 1;
                    cases[count++] = d;
                }
        for (int k = 0; n <= 32 && k < KINDS; ++k) {
            convgen_fft_desc d = variant(n, 2, kinds[k], i + k);
            d.channels = 0, d.real_stride[0] = d.real_stride[1] = d.spectrum_stride[0] = d.spectrum_stride[1] = 0;
            d.batch = 12000;
            cases[count++] = d;
        }
        /* Exchanged plans (rank 2, natural order), whatever the variants above picked: the packed
         * kinds x layouts x whole and offset windows that exchange (n = 16: 12000 images too). */
        for (int k = 0; k < 2; ++k)
            for (int c = 0; c < 4; ++c) {
                bool transposed = c & 1, windowed = c & 2;
                if (!exchanged_kind(n, kinds[k].type, transposed))
                    continue;
                convgen_fft_desc d = {.rank = 2, .n = n, .type = kinds[k].type, .batch = n >= 48 ? 3 : 37,
                                      .channels = c == 1 ? 2 : 0, .order = CONVGEN_FFT_ORDER_NATURAL,
                                      .layout = transposed ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL};
                if (windowed) {
                    some_window(n, i + c, &d.window[0], &d.offset[0]);
                    some_window(n, i + c + 1, &d.window[1], &d.offset[1]);
                }
                if (n == 16 && c == 2)
                    d.batch = 12000;
                if (kinds[k].type == CONVGEN_FFT_C2R)
                    d.scale = 1.0f / (float)(n * n);
                cases[count++] = d;
            }
    }
    return count;
}


/* The generator's plan for a descriptor on a target: its workspace and grid. */
static void plan_shape(const convgen_fft_desc *d, const cg_target *t, int64_t *workspace, unsigned *grid)
{
    cg_fft_problem p;
    cg_generated gen;
    assert_int_equal(cg_fft_problem_init(&p, d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_fft(&p, t, &gen), CONVGEN_SUCCESS);
    *workspace = gen.workspace_bytes;
    *grid = gen.kernels[0].grid[0];
    cg_generated_free(&gen);
}

/* Rank 2 sizes whose spectrum is too large for shared memory alone, so that a fixed grid of
 * blocks works image after image (C2C from n = 120, R2C and C2R from 160): the smallest such
 * size of each kind, n = 245 (one block of 8 warps: more than 8 registers per lane) and 256.
 * Planned for few_sms's 3 multiprocessors, 7 images (or 3 x 3 channels) make blocks loop. */
static int looping_cases(convgen_fft_desc *cases)
{
    const cg_target three = {.sm_count = 3, .max_cluster = 1}; /* as few_sms */
    int count = 0;
    for (int k = 0; k < KINDS; ++k) {
        bool first = true;
        for (int i = 0; i < size_count; ++i) {
            convgen_fft_desc d = variant(sizes[i], 2, kinds[k], i + k);
            d.batch = d.channels > 1 ? 3 : 7;
            int64_t workspace;
            unsigned grid;
            plan_shape(&d, &three, &workspace, &grid);
            if (grid < d.batch * (d.channels ? d.channels : 1) && (first || sizes[i] == 245 || sizes[i] == 256)) {
                cases[count++] = d;
                first = false;
            }
        }
    }
    return count;
}

/* Where the layouts switch, offline: the clusters of blocks per image on an H100, the resident
 * path's grid and slots without clusters, and the staging of natural-layout spectra through
 * shared memory, which small spectra skip. */
static void test_layout_choices(void **state)
{
    (void)state;
    const cg_target h100 = {.sm_count = 132}, no_clusters = {.sm_count = 132, .max_cluster = 1};
    int64_t workspace;
    unsigned grid;
    /* Clusters: the smallest of 2, 4, 8 blocks whose share leaves room for three blocks per
     * multiprocessor. R2C n = 256: 128 rows of 2 x 33 slots, 4 blocks; n = 160: 80 rows of
     * 2 x 41, 2 blocks; C2R n = 256: 256 rows of 33 columns, 4 blocks. C2C keeps the slots. */
    const struct { convgen_fft_type type; int n; unsigned blocks_per_image; } clusters[] = {
        {CONVGEN_FFT_R2C, 256, 4}, {CONVGEN_FFT_R2C, 160, 2}, {CONVGEN_FFT_C2R, 256, 4},
        {CONVGEN_FFT_R2C, 150, 1}, /* fits one block */
    };
    for (size_t i = 0; i < sizeof clusters / sizeof clusters[0]; ++i) {
        convgen_fft_desc c = {.rank = 2, .n = clusters[i].n, .type = clusters[i].type, .batch = 1000};
        plan_shape(&c, &h100, &workspace, &grid);
        assert_int_equal(workspace, 0);
        assert_int_equal(grid, 1000 * clusters[i].blocks_per_image);
        assert_int_equal(clustered(&c), clusters[i].blocks_per_image > 1);
    }
    convgen_fft_desc c2c = {.rank = 2, .n = 256, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_FORWARD, .batch = 1000};
    plan_shape(&c2c, &h100, &workspace, &grid);
    assert_int_equal(grid, 132);
    convgen_fft_desc d = {.rank = 2, .n = 256, .type = CONVGEN_FFT_R2C, .batch = 1000};
    plan_shape(&d, &no_clusters, &workspace, &grid);
    /* 128 row pairs of 257 float2: two blocks per multiprocessor, 56 rows each in shared memory
     * (114 KiB less the 1 KiB reserved), 72 in the slot. */
    int64_t slot = ((int64_t)72 * 257 * 8 + 127) / 128 * 128;
    assert_int_equal(grid, 264);
    assert_int_equal(workspace, 264 * slot);
    d.batch = 5;
    plan_shape(&d, &no_clusters, &workspace, &grid);
    assert_int_equal(grid, 5);
    assert_int_equal(workspace, 5 * slot);
    d.type = CONVGEN_FFT_C2C, d.direction = CONVGEN_FFT_FORWARD, d.batch = 1000; /* 256 rows: one block */
    plan_shape(&d, &no_clusters, &workspace, &grid);
    assert_int_equal(grid, 132);
    assert_int_equal(workspace, 132 * (((int64_t)(256 - 113) * 257 * 8 + 127) / 128 * 128));
    d.type = CONVGEN_FFT_R2C, d.direction = 0;
    d.n = 150; /* 75 x 151 x 8 bytes fit in shared memory */
    plan_shape(&d, &no_clusters, &workspace, &grid);
    assert_int_equal(workspace, 0);
    assert_int_equal(grid, 1000);
    d.n = 160; /* 80 x 161 x 8 do not fit the fused layout, but do two blocks' shares */
    plan_shape(&d, &no_clusters, &workspace, &grid);
    assert_int_equal(workspace, 0);
    assert_int_equal(grid, 264);
    const struct { convgen_fft_type type; int n; int layout; const char *words; bool present; } staging[] = {
        {CONVGEN_FFT_R2C, 16, 0, "stores: through a shared-memory tile", false},
        {CONVGEN_FFT_R2C, 32, 0, "stores: through a shared-memory tile", true},
        {CONVGEN_FFT_R2C, 32, 1, "stores: through a shared-memory tile", false},
        /* The tile aliased onto the spectrum only where it would cost the second block. */
        {CONVGEN_FFT_R2C, 64, 0, "stores: staged in the spectrum's own shared memory", false},
        {CONVGEN_FFT_R2C, 128, 0, "stores: staged in the spectrum's own shared memory", true},
        {CONVGEN_FFT_R2C, 128, 1, "stores: staged in the spectrum's own shared memory", false},
        {CONVGEN_FFT_C2R, 20, 0, "loads: the block's spectra come into shared memory", false},
        {CONVGEN_FFT_C2R, 24, 0, "loads: the block's spectra come into shared memory", true},
        {CONVGEN_FFT_C2R, 24, 1, "loads: the block's spectra come into shared memory", false},
        /* Light power-of-two plans (2 registers per lane) ask for the blocks that 40 registers each
         * allow: 6 of 8 warps at n = 16; heavier ones and n = 12 keep a budget of 128. */
        {CONVGEN_FFT_R2C, 8, 0, "__launch_bounds__(256, 6)", true},
        {CONVGEN_FFT_C2R, 16, 0, "__launch_bounds__(256, 6)", true},
        /* Exchanged plans (all stages in registers, phases through a warp scratch): rank 2 R2C and
         * C2R n = 64 and 128 in natural order, and n = 16 R2C natural (n = 32, C2R n = 16 and
         * transposed R2C n = 16 measured slower). */
        {CONVGEN_FFT_R2C, 16, 0, "phases of registers, exchanged through shared memory", true},
        {CONVGEN_FFT_C2R, 16, 0, "phases of registers, exchanged through shared memory", false},
        {CONVGEN_FFT_R2C, 64, 1, "phases of registers, exchanged through shared memory", true},
        {CONVGEN_FFT_R2C, 32, 0, "phases of registers, exchanged through shared memory", false},
        {CONVGEN_FFT_C2R, 128, 0, "phases of registers, exchanged through shared memory", true},
        {CONVGEN_FFT_R2C, 256, 0, "phases of registers, exchanged through shared memory", false},
        {CONVGEN_FFT_R2C, 64, 0, "xch[xb0 + ", true},
        {CONVGEN_FFT_R2C, 16, 1, "phases of registers, exchanged through shared memory", false},
        {CONVGEN_FFT_R2C, 64, 0, "        __syncwarp();\n        xch[xb0 + 0u] = x[0];", true},
        {CONVGEN_FFT_R2C, 64, 0, "__launch_bounds__(256, 2)", true},
        {CONVGEN_FFT_R2C, 12, 0, "__launch_bounds__(256, 2)", true}, /* not a power of two */
        /* Rank 2 powers of two load their twiddle factors once per lane; n = 200 keeps them per
         * transform (its radix-5 factors held in registers spilled). */
        {CONVGEN_FFT_R2C, 64, 0, "const float2 tw0_8 = twiddle(tj0 + 8u, 1u); // stage 0", true},
        {CONVGEN_FFT_R2C, 64, 0, "const float2 w = tw0_8;", true}, /* and the transforms use it */
        {CONVGEN_FFT_R2C, 64, 0, "twiddle(tj0 + 8u, 1u);\n", false},
        {CONVGEN_FFT_C2R, 64, 1, "const float2 tw0_8 = twiddle(tj0 + 8u, 1u); // stage 0", true},
        {CONVGEN_FFT_R2C, 8, 0, "const float2 tw0_0 = twiddle(0u + l, 1u); // stage 0, registers 0, 1", true},
        {CONVGEN_FFT_R2C, 200, 0, "// stage 0, registers", false},
        /* Exchanged inverses read their columns straight (n = 64: 1.71x -> 1.88x) unless the copy
         * engine brings the spectra in (sm_90, this context's target), lane stages through a flat
         * copy where buf's rows are the spectrum's (R2C copies nothing by the copy engine); R2C
         * n = 128 runs 12 warps a block, two blocks per multiprocessor, and copies its aliased
         * spectrum out a warp per row. */
        {CONVGEN_FFT_C2R, 64, 0, "(64 rows, one flat copy by the copy engine, cp.async.bulk)", true},
        {CONVGEN_FFT_C2R, 128, 0, "(128 rows, one flat copy by the copy engine, cp.async.bulk)", true},
        {CONVGEN_FFT_C2R, 64, 1, "loads: the block's spectra come into shared memory", false},
        {CONVGEN_FFT_R2C, 64, 0, "bulk_", false},
        /* R2C n = 64's buf rows, swizzle and column stride: row stores, column loads and tile stores
         * all conflict-free by the bank model (column_aware_pitch); transposed: no tile, no stride */
        {CONVGEN_FFT_R2C, 64, 0, "buf rows of 72 float2s, bin k of row r at k ^ (r & 3), a warp's columns 8 apart, "
                                 "the fewest of pitches 65..80, swizzles and column strides: rows 16, columns 32", true},
        {CONVGEN_FFT_R2C, 64, 0, "float2 (*const buf)[32][72]", true},
        {CONVGEN_FFT_R2C, 64, 0, "tile rows 16 / 16", true},
        {CONVGEN_FFT_R2C, 64, 0, "const unsigned skl = kl ^ (q & 3u);", true},
        {CONVGEN_FFT_R2C, 64, 0, "const unsigned kx = c < 32u ? c % 4u * 8u + c / 4u : c;", true},
        {CONVGEN_FFT_R2C, 64, 1, "columns 8 apart", false},
        {CONVGEN_FFT_C2R, 32, 0, "(32 rows, one flat copy by the copy engine", true},
        {CONVGEN_FFT_C2R, 32, 0, "so this is one flat copy", true}, /* the template's copy, not only the header */
        {CONVGEN_FFT_C2R, 120, 0, "(120 rows, one flat copy)", false}, /* padded rows: 61 bins in 65 */
        {CONVGEN_FFT_R2C, 128, 0, "__launch_bounds__(384, 2)", true},
        {CONVGEN_FFT_R2C, 128, 1, "__launch_bounds__(384, 2)", true},
        {CONVGEN_FFT_C2R, 128, 0, "__launch_bounds__(256, 2)", true},
        {CONVGEN_FFT_R2C, 128, 0, "a warp per row", true},
        /* Unguarded forward column loads; aliased only without idle lanes (n = 120: 30 lanes), never
         * in the inverse. */
        {CONVGEN_FFT_R2C, 64, 0, "const unsigned simg", true},
        {CONVGEN_FFT_R2C, 128, 1, "const unsigned simg", true},
        {CONVGEN_FFT_R2C, 128, 0, "const unsigned simg", false}, /* 2 columns per warp: 65 leave one idle */
        {CONVGEN_FFT_R2C, 120, 0, "const unsigned simg", false},
        {CONVGEN_FFT_C2R, 64, 0, "const unsigned simg", false},
    };
    for (size_t i = 0; i < sizeof staging / sizeof staging[0]; ++i) {
        convgen_fft_desc s = {.rank = 2, .n = staging[i].n, .type = staging[i].type, .batch = 1000,
                              .layout = staging[i].layout ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL};
        char *src = NULL;
        assert_int_equal(convgen_emit_fft(&s, 0, &src), CONVGEN_SUCCESS);
        if ((strstr(src, staging[i].words) != NULL) != staging[i].present)
            fail_msg("n = %d layout %d: \"%s\" %s", s.n, staging[i].layout, staging[i].words,
                     staging[i].present ? "missing" : "present");
        free(src);
    }
    /* 2-D C2C inverses stage their loads through the division loop (the flat copy is measured for C2R
     * only); 1-D R2C computes its twiddles where its grid is smaller than the 132 multiprocessors an
     * offline plan assumes, C2R never. */
    const struct { convgen_fft_type type; convgen_fft_direction dir; int rank, n; int64_t batch; const char *words;
                   bool present; } others[] = {
        {CONVGEN_FFT_C2C, CONVGEN_FFT_INVERSE, 2, 21, 1000, "come into shared memory coalesced (21 rows)", true},
        {CONVGEN_FFT_C2C, CONVGEN_FFT_INVERSE, 2, 21, 1000, "one flat copy", false},
        {CONVGEN_FFT_R2C, 0, 1, 64, 1024, "twiddles: sincospif", true},
        {CONVGEN_FFT_R2C, 0, 1, 64, 1 << 20, "twiddles: table", true},
        {CONVGEN_FFT_C2R, 0, 1, 64, 1024, "twiddles: table", true},
    };
    for (size_t i = 0; i < sizeof others / sizeof others[0]; ++i) {
        convgen_fft_desc o = {.rank = others[i].rank, .n = others[i].n, .type = others[i].type,
                              .direction = others[i].dir, .batch = others[i].batch};
        char *src = NULL;
        assert_int_equal(convgen_emit_fft(&o, 0, &src), CONVGEN_SUCCESS);
        if ((strstr(src, others[i].words) != NULL) != others[i].present)
            fail_msg("rank %d n = %d, %lld transforms: \"%s\" %s", o.rank, o.n, (long long)o.batch, others[i].words,
                     others[i].present ? "missing" : "present");
        free(src);
    }
    /* Rank 3's second kernel takes its blocks from the last volume back (the first kernel wrote it
     * last, so it is still in the L2 cache): the R2C depth pass, the C2R plane stage; the first
     * kernels in order. And R2C n = 128 runs 12 warps a block for whole signals only. */
    const struct { convgen_fft_type type; int rank, n, kernel, window; const char *words; bool present; } orders[] = {
        {CONVGEN_FFT_R2C, 3, 64, 1, 0, "(1649u - blockIdx.x) * 128u", true},
        {CONVGEN_FFT_R2C, 3, 64, 0, 0, "const unsigned image0 = blockIdx.x * 1u;", true},
        {CONVGEN_FFT_C2R, 3, 64, 1, 0, "const unsigned image0 = (6399u - blockIdx.x) * 1u;", true},
        {CONVGEN_FFT_C2R, 3, 64, 0, 0, "const unsigned g = blockIdx.x * 128u", true},
        {CONVGEN_FFT_R2C, 2, 128, 0, 0, "__launch_bounds__(384, 2)", true},
        {CONVGEN_FFT_R2C, 2, 128, 0, 95, "__launch_bounds__(384, 2)", false},
    };
    for (size_t i = 0; i < sizeof orders / sizeof orders[0]; ++i) {
        convgen_fft_desc o = {.rank = orders[i].rank, .n = orders[i].n, .type = orders[i].type, .batch = 100};
        if (orders[i].window)
            o.window[0] = o.window[1] = orders[i].window, o.offset[0] = o.offset[1] = 17;
        char *src = NULL;
        assert_int_equal(convgen_emit_fft(&o, orders[i].kernel, &src), CONVGEN_SUCCESS);
        if ((strstr(src, orders[i].words) != NULL) != orders[i].present)
            fail_msg("rank %d n = %d kernel %d: \"%s\" %s", o.rank, o.n, orders[i].kernel, orders[i].words,
                     orders[i].present ? "missing" : "present");
        free(src);
    }
    for (int n = 16; n <= 128; n *= 2) /* exchanged_kind, which picks the GPU test's cases, says what the generator does */
        for (int k = 0; k < KINDS; ++k)
            for (int layout = 0; layout < 2; ++layout) {
                convgen_fft_desc s = {.rank = 2, .n = n, .type = kinds[k].type, .direction = kinds[k].direction,
                                      .batch = 100, .layout = layout ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL};
                char *src = NULL;
                assert_int_equal(convgen_emit_fft(&s, 0, &src), CONVGEN_SUCCESS);
                if ((strstr(src, "exchanged through shared memory") != NULL) != exchanged_kind(n, s.type, layout))
                    fail_msg("n = %d %s layout %d: exchanged plan %s", n, kinds[k].name, layout,
                             exchanged_kind(n, s.type, layout) ? "missing" : "unexpected");
                free(src);
            }
    convgen_fft_desc loops[3 * KINDS];
    int count = looping_cases(loops);
    print_message("%d looping cases for the GPU:", count);
    for (int i = 0; i < count; ++i)
        print_message(" %s n = %d;", kinds[kind_of(&loops[i])].name, loops[i].n);
    print_message("\n");
}

static void run_cases(convgen_context *ctx, const convgen_fft_desc *cases, int count, result worst[3][KINDS])
{
    warm_up(ctx, cases, count);
    for (int c = 0; c < count; ++c) {
        result r = run_one(ctx, &cases[c]);
        result *w = &worst[cases[c].rank - 1][kind_of(&cases[c])];
        w->ref = fmax(w->ref, r.ref), w->cufft = fmax(w->cufft, r.cufft), w->cufft_ref = fmax(w->cufft_ref, r.cufft_ref);
    }
}

/* The plan's twiddle line names `how` (table or sincospif). */
static void expect_twiddles(convgen_context *ctx, const convgen_fft_desc *d, const char *how)
{
    convgen_plan *p;
    assert_int_equal(convgen_plan_fft(ctx, d, &p), CONVGEN_SUCCESS);
    char want[32];
    snprintf(want, sizeof want, "twiddles: %s", how);
    const char *src = convgen_plan_source(p, 0);
    if (!strstr(src, want) && !strstr(src, "no twiddle factors"))
        fail_msg("1-D R2C n = %d, %lld transforms: no \"%s\"", d->n, (long long)d->batch, want);
    convgen_plan_destroy(p);
}

/* gpu_cases' 1-D R2C cases, whose plans the GPU's multiprocessor count decides (see one_sm). */
static int rank1_r2c_cases(convgen_fft_desc *cases)
{
    int all = gpu_cases(cases), count = 0;
    for (int i = 0; i < all; ++i)
        if (cases[i].rank == 1 && cases[i].type == CONVGEN_FFT_R2C && cases[i].n > 2)
            cases[count++] = cases[i];
    return count;
}

/* Natural 2-D C2R whose kernels bring the spectra in by the copy engine (sm_90 and later): n = 32
 * (several images a block, the last block partial), 64 and 128 (exchanged plans). Run misaligned,
 * they take the threads' copies instead. (A 3-D plane stage reads the workspace, always aligned.) */
static int misaligned_cases(convgen_fft_desc *cases)
{
    const int n[] = {32, 64, 128}, rank[] = {2, 2, 2}, batch[] = {4097, 300, 100};
    for (int i = 0; i < 3; ++i)
        cases[i] = (convgen_fft_desc){.rank = rank[i], .n = n[i], .type = CONVGEN_FFT_C2R, .batch = batch[i]};
    return 3;
}

/* Natural R2C and C2R whose last block holds fewer images than the others (n = 32: 2 and 5 images a
 * block, 4097 images), so the flat copies' guards for the missing ones run. */
static int partial_block_cases(convgen_fft_desc *cases)
{
    int count = 0;
    for (int k = 0; k < KINDS; ++k)
        if (kinds[k].type != CONVGEN_FFT_C2C)
            cases[count++] = (convgen_fft_desc){.rank = 2, .n = 32, .type = kinds[k].type, .batch = 4097,
                                                .scale = kinds[k].type == CONVGEN_FFT_C2R ? 0.25f : 0.0f};
    return count;
}

static void test_every_size_matches_the_reference_and_cufft_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    convgen_fft_desc *cases = malloc(sizeof *cases * size_count * CASES_PER_SIZE);
    result worst[3][KINDS] = {{{0}}};
    int count = gpu_cases(cases);
    run_cases(gpu, cases, count, worst);
    int looping = looping_cases(cases);
    run_cases(few_sms, cases, looping, worst);
    for (int i = 0; i < looping; ++i) { /* few_sms planned them as chosen: blocks that loop, no clusters */
        convgen_plan *p;
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_fft(few_sms, &cases[i], &p), CONVGEN_SUCCESS);
        assert_int_equal(convgen_plan_kernel_info(p, 0, &info), CONVGEN_SUCCESS);
        int64_t images = cases[i].batch * (cases[i].channels ? cases[i].channels : 1);
        if (info.grid[0] >= images || strstr(convgen_plan_source(p, 0), "__cluster_dims__"))
            fail_msg("n = %d %s: grid %u for %lld images, not the resident layout", cases[i].n,
                     kinds[kind_of(&cases[i])].name, info.grid[0], (long long)images);
        convgen_plan_destroy(p);
    }
    count += looping;
    int table = rank1_r2c_cases(cases);
    run_cases(one_sm, cases, table, worst);
    for (int i = 0; i < table; ++i) { /* the twiddle table for one multiprocessor, sincospif below the GPU's */
        expect_twiddles(one_sm, &cases[i], "table");
        convgen_plan *p;
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_fft(gpu, &cases[i], &p), CONVGEN_SUCCESS);
        assert_int_equal(convgen_plan_kernel_info(p, 0, &info), CONVGEN_SUCCESS);
        convgen_plan_destroy(p);
        if ((int)info.grid[0] < gpu->sm_count)
            expect_twiddles(gpu, &cases[i], "sincospif");
    }
    count += table;
    int partial = partial_block_cases(cases);
    run_cases(gpu, cases, partial, worst);
    for (int i = 0; i < partial; ++i) { /* the cases run the partial-block guards */
        convgen_plan *p;
        assert_int_equal(convgen_plan_fft(gpu, &cases[i], &p), CONVGEN_SUCCESS);
        if (!strstr(convgen_plan_source(p, 0), "const unsigned total = "))
            fail_msg("n = 32 %s, 4097 images: no partial last block", kinds[kind_of(&cases[i])].name);
        convgen_plan_destroy(p);
    }
    count += partial;
    int odd = misaligned_cases(cases);
    for (int i = 0; i < odd && gpu->max_cluster != 1; ++i) { /* they copy by the copy engine where aligned */
        convgen_plan *p;
        assert_int_equal(convgen_plan_fft(gpu, &cases[i], &p), CONVGEN_SUCCESS);
        if (!strstr(convgen_plan_source(p, 0), "bulk_copy("))
            fail_msg("C2R n = %d %d-D: no copy by the copy engine", cases[i].n, cases[i].rank);
        convgen_plan_destroy(p);
    }
    run_cases(gpu, cases, odd, worst); /* aligned: by the copy engine */
    misaligned = true;
    run_cases(gpu, cases, odd, worst); /* not: by the threads */
    misaligned = false;
    count += 2 * odd;
    print_message("%d runs (%d planned for 3 multiprocessors, %d for one); worst relative errors against float64, against cuFFT "
                  "(cuFFT's own against float64):\n",
                  count, looping, table);
    for (int rank = 1; rank <= 3; ++rank)
        for (int k = 0; k < KINDS; ++k)
            print_message("  %d-D %-12s %.3e  %.3e  (%.3e)\n", rank, kinds[k].name, worst[rank - 1][k].ref,
                          worst[rank - 1][k].cufft, worst[rank - 1][k].cufft_ref);
    free(cases);
}

/* Rank 3 plans on the CPU (CI has no GPU): each plan's steps evaluated as their ops say
 * (generator/fft/fft_op.c, the spectra in natural order) from the plan's own pointers, against
 * the float64 transform of the whole volume: the one pass of small volumes (n <= 28, one step
 * whose op is the whole transform), and the two steps of larger ones, the plane stage and the
 * depth pass. Windows with
 * offsets along every dimension, plane and row pitches, strides with gaps, channels and a scale;
 * the output poisoned with NaN, and every element outside it must stay NaN. */
static void test_rank3_plans_evaluate_on_the_cpu(void **state)
{
    (void)state;
    const convgen_fft_desc descs[] = {
        {.rank = 3, .n = 12, .type = CONVGEN_FFT_R2C, .batch = 2, .channels = 2, .window = {5, 4, 3},
         .offset = {2, 7, 1}, .pitch = 5, .plane_pitch = 23, .real_stride = {200, 97}, .scale = 0.5f},
        {.rank = 3, .n = 10, .type = CONVGEN_FFT_C2R, .batch = 3, .window = {4, 10, 7}, .offset = {6, 0, 2},
         .scale = 1.0f / 1000, .spectrum_stride = {700, 0}},
        {.rank = 3, .n = 8, .type = CONVGEN_FFT_R2C, .batch = 1, .channels = 3},
        {.rank = 3, .n = 9, .type = CONVGEN_FFT_C2R, .batch = 1, .channels = 2, .window = {9, 3, 9},
         .offset = {0, 5, 0}, .pitch = 11, .plane_pitch = 40, .real_stride = {0, 400}},
        {.rank = 3, .n = 30, .type = CONVGEN_FFT_R2C, .batch = 2, .window = {7, 30, 5}, .offset = {23, 0, 2},
         .pitch = 6, .plane_pitch = 190, .real_stride = {2000, 0}, .scale = 0.25f},
        {.rank = 3, .n = 32, .type = CONVGEN_FFT_C2R, .batch = 1, .channels = 2, .window = {5, 32, 11},
         .offset = {3, 0, 7}, .scale = 0.5f},
        {.rank = 3, .n = 21, .type = CONVGEN_FFT_C2R, .batch = 3, .window = {21, 15, 19}, .offset = {0, 6, 1},
         .scale = 0.125f},
        {.rank = 3, .n = 18, .type = CONVGEN_FFT_R2C, .batch = 5, .window = {18, 7, 18}, .offset = {0, 11, 0},
         .spectrum_stride = {3300, 0}},
    };
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; ++i) {
        cg_fft_problem p;
        fft_plan pl;
        char err[128];
        cg_generated g;
        assert_int_equal(cg_fft_problem_init(&p, &descs[i]), CONVGEN_SUCCESS);
        assert_true(fft_plan_make(p.n, true, &pl, err, sizeof err));
        assert_int_equal(cg_generate_fft(&p, NULL, &g), CONVGEN_SUCCESS);
        assert_int_equal(g.step_count, cg_fft_cube_applies(&p, NULL) ? 1 : 2);
        bool forward = p.sign < 0;
        size_t in_floats = (size_t)(forward ? p.real_elements : 2 * p.spectrum_elements);
        size_t out_floats = (size_t)(forward ? 2 * p.spectrum_elements : p.real_elements);
        float *in = malloc(in_floats * sizeof *in), *out = malloc((out_floats + GUARD) * sizeof *out);
        for (size_t k = 0; k < in_floats; ++k)
            in[k] = uniform();
        memset(out, 0xFF, (out_floats + GUARD) * sizeof *out); /* poison(): all bits set */
        if (cg_program_evaluate(&g, in, NULL, NULL, out) != CONVGEN_SUCCESS)
            fail_msg("rank 3 plan %zu: %s", i, convgen_last_error());
        errors e = {0};
        check(&p, &pl, in, out, out_floats, false, &e);
        double rel = sqrt(e.ref_d2 / e.ref_r2);
        print_message("rank 3 plan %zu (%s n = %d, %d step%s): relative error %.2e on the CPU\n", i,
                      forward ? "R2C" : "C2R", p.n, g.step_count, g.step_count > 1 ? "s" : "", rel);
        if (!(rel <= 1e-6) || e.unwritten || e.untouched_written)
            fail_msg("rank 3 plan %zu: relative error %.3e, %lld unwritten, %lld written outside the output", i, rel,
                     (long long)e.unwritten, (long long)e.untouched_written);
        free(in), free(out);
        cg_generated_free(&g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rank3_plans_evaluate_on_the_cpu),
        cmocka_unit_test(test_bad_descriptors_are_named),
        cmocka_unit_test(test_every_size_compiles_without_local_memory),
        cmocka_unit_test(test_shared_memory_fits_the_target),
        cmocka_unit_test(test_layout_choices),
        cmocka_unit_test(test_every_size_matches_the_reference_and_cufft_on_the_gpu),
    };
    return cmocka_run_group_tests_name("fft_batched", tests, setup, teardown);
}
