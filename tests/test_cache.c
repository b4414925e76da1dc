/* Tests of the kernel cache (runtime/cache.h): the key, the memory cache, the disk cache and
 * its defences against damaged, foreign and stale entries; and of the plans' key
 * (runtime/plan_cache.h), which every field that decides a program must change.
 *
 * Every test runs in a fresh mkdtemp folder with HOME pointed at it and CONVGEN_CACHE_DIR and
 * XDG_CACHE_HOME unset, so nothing reaches the user's real cache. Warnings are captured through
 * convgen_set_log_callback and counted. Damaged entries are made by hand through the layout
 * documented in runtime/cache_disk.c (offsets below). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "fft/fft_problem.h"
#include "plan_cache.h"
#include "problem.h"
#include "util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

/* The entry layout (runtime/cache_disk.c). */
#define HDR_SIZE 84
#define HDR_VERSION_AT 8
#define HDR_PAYLOAD_SIZE_AT 60
#define HDR_SUM_AT 76

static char tmp[256];          /* this test's folder */
static int warnings;           /* warnings logged since setup */
static char last_warning[1024];

/* ---- fixture ---- */

static void capture_log(convgen_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != CONVGEN_LOG_WARNING)
        return;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", message);
}

static int setup(void **state)
{
    (void)state;
    umask(022);
    snprintf(tmp, sizeof tmp, "/tmp/cg-test-cache-XXXXXX");
    if (!mkdtemp(tmp))
        return -1;
    unsetenv("CONVGEN_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", tmp, 1);
    warnings = 0;
    last_warning[0] = '\0';
    convgen_set_log_callback(capture_log, NULL);
    cache_mem_clear();
    return 0;
}

/* Pre-order pass: folders a test made read-only must be writable again to be emptied. */
static int make_writable(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    if (flag == FTW_D || flag == FTW_DNR)
        chmod(path, 0755);
    return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static int teardown(void **state)
{
    (void)state;
    cache_mem_clear();
    convgen_set_log_callback(NULL, NULL);
    nftw(tmp, make_writable, 16, FTW_PHYS);
    return nftw(tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- helpers ---- */

static char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmp, name);
    return path;
}

static cache_key key_n(int n)
{
    char src[64];
    snprintf(src, sizeof src, "__global__ void k%d() {}", n);
    return cache_key_of(src, "sm_90", "-O3", 12, 4);
}

/* A kernel whose bytes and report all follow from `seed`, so a mix of two is detectable. */
static cache_kernel kernel_of(unsigned seed, size_t size)
{
    cache_kernel k = {
        .cubin = malloc(size ? size : 1), .cubin_size = size,
        .registers = (int)(seed % 255) + 1, .shared_bytes = (int)seed * 16,
        .stack_bytes = (int)(seed % 7), .spill_store_bytes = (int)(seed % 5) * 4,
        .spill_load_bytes = (int)(seed % 3) * 8, .compile_ms = 12.5 + seed,
    };
    assert_non_null(k.cubin);
    for (size_t i = 0; i < size; i++)
        ((unsigned char *)k.cubin)[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
    return k;
}

static bool kernels_equal(const cache_kernel *a, const cache_kernel *b)
{
    return a->cubin_size == b->cubin_size && memcmp(a->cubin, b->cubin, a->cubin_size) == 0
        && a->registers == b->registers && a->shared_bytes == b->shared_bytes
        && a->stack_bytes == b->stack_bytes && a->spill_store_bytes == b->spill_store_bytes
        && a->spill_load_bytes == b->spill_load_bytes && a->compile_ms == b->compile_ms;
}

static bool file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static unsigned char *file_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*size ? *size : 1);
    assert_non_null(data);
    assert_int_equal(fread(data, 1, *size, f), *size);
    fclose(f);
    return data;
}

static void file_write(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* Rewrites the header checksum so that only the field a test changed can be caught. */
static void reseal_header(unsigned char *entry)
{
    put_le(entry + HDR_SUM_AT, XXH3_64bits(entry, HDR_SUM_AT), 8);
}

/* A writable cache in <tmp>/cache holding kernel_of(seed, size) under key_n(n). */
static cache_disk *disk_with_entry(int n, unsigned seed, size_t size, char **path)
{
    cache_disk *d = cache_disk_open(tmp_path("cache"));
    assert_non_null(d);
    assert_true(cache_disk_writable(d));
    cache_kernel k = kernel_of(seed, size);
    cache_disk_put(d, key_n(n), &k);
    cache_kernel_free(&k);
    *path = cache_disk_entry_path(d, key_n(n));
    assert_non_null(*path);
    assert_true(file_exists(*path));
    return d;
}

/* The entry at `path` of key_n(n) must now be a miss, and gone. */
static void assert_rejected(cache_disk *d, int n, const char *path)
{
    cache_kernel out = {0};
    assert_false(cache_disk_get(d, key_n(n), &out));
    assert_null(out.cubin);
    assert_false(file_exists(path));
}

/* mkdir -p for tests. */
static bool make_folder_path(const char *path)
{
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
    return system(cmd) == 0;
}

/* ---- the key ---- */

static void test_cache_key_stable_for_equal_inputs(void **state)
{
    (void)state;
    char a[] = "__global__ void k() {}", b[] = "__global__ void k() {}";
    cache_key k1 = cache_key_of(a, "sm_90", "-O3 --use_fast_math", 12, 4);
    cache_key k2 = cache_key_of(b, "sm_90", "-O3 --use_fast_math", 12, 4);
    assert_true(k1.hi == k2.hi && k1.lo == k2.lo);
    assert_false(k1.hi == 0 && k1.lo == 0);
}

static bool key_eq(cache_key a, cache_key b) { return a.hi == b.hi && a.lo == b.lo; }

static void test_cache_key_differs_when_any_field_changes(void **state)
{
    (void)state;
    cache_key keys[] = {
        cache_key_of("src", "sm_90", "-O3", 12, 4),
        cache_key_of("src ", "sm_90", "-O3", 12, 4),
        cache_key_of("src", "sm_80", "-O3", 12, 4),
        cache_key_of("src", "sm_90", "-O2", 12, 4),
        cache_key_of("src", "sm_90", "", 12, 4),
        cache_key_of("src", "sm_90", NULL, 12, 4),
        cache_key_of("src", "sm_90", "-O3", 11, 4),
        cache_key_of("src", "sm_90", "-O3", 12, 5),
        cache_key_of("src", "sm_90", "-O3", 4, 12),
    };
    size_t n = sizeof keys / sizeof keys[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            assert_false(key_eq(keys[i], keys[j]));
    /* Both halves carry information: no half may be shared by all of them. */
    assert_false(keys[0].hi == keys[1].hi && keys[0].hi == keys[2].hi);
    assert_false(keys[0].lo == keys[1].lo && keys[0].lo == keys[2].lo);
}

static void test_cache_key_unambiguous_at_field_boundaries(void **state)
{
    (void)state;
    cache_key keys[] = {
        cache_key_of("ab", "c", "", 12, 4),
        cache_key_of("a", "bc", "", 12, 4),
        cache_key_of("a", "b", "c", 12, 4),
        cache_key_of("abc", "", "", 12, 4),
        cache_key_of("", "", "abc", 12, 4),
    };
    size_t n = sizeof keys / sizeof keys[0];
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            assert_false(key_eq(keys[i], keys[j]));
}

static void test_cache_key_hex_is_32_lowercase_digits_hi_first(void **state)
{
    (void)state;
    char hex[33];
    cache_key_hex((cache_key){.hi = 0x0123456789abcdefULL, .lo = 0xfedcba9876543210ULL}, hex);
    assert_string_equal(hex, "0123456789abcdeffedcba9876543210");
    cache_key_hex((cache_key){0}, hex);
    assert_string_equal(hex, "00000000000000000000000000000000");
}

/* ---- memory ---- */

/* ---- the plan key ---- */

static plan_key plan_key_for(cg_spec spec, const cg_target *target)
{
    plan_key k;
    plan_key_of(&k, &spec, target);
    assert_true(k.len > 0 && k.len <= sizeof k.bytes);
    return k;
}

static bool plan_key_eq(const plan_key *a, const plan_key *b)
{
    return a->len == b->len && memcmp(a->bytes, b->bytes, a->len) == 0;
}

static const cg_target h100 = {.sm_count = 132, .arch = "sm_90"};

/* A rank 3 layer whose fields all differ, so that a field written in another's place shows. */
static cg_problem conv_base(void)
{
    convgen_conv_desc d = {.rank = 3, .n = 2, .c = 3, .k = 5, .in = {17, 19, 23}, .kernel = {3, 5, 7},
                           .pad_before = {1, 2, 3}, .pad_after = {2, 3, 4}, .stride = {1, 2, 3}, .dilation = {1, 2, 1}};
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    return p;
}

/* conv_base with field f changed, in place (a derived field too: the key may not rely on
 * another field to tell it): rank, n, c, k, flip, then in, kernel, out, pad_before, pad_after,
 * stride and dilation in each dimension. */
enum { CONV_FIELDS = 5 + 7 * CONVGEN_MAX_RANK };
static cg_problem conv_variant(int f)
{
    cg_problem p = conv_base();
    int64_t *scalars[3] = {&p.n, &p.c, &p.k};
    int64_t *dims[7] = {p.in, p.kernel, p.out, p.pad_before, p.pad_after, p.stride, p.dilation};
    if (f == 0)
        p.rank = 2;
    else if (f <= 3)
        ++*scalars[f - 1];
    else if (f == 4)
        p.flip = !p.flip;
    else
        ++dims[(f - 5) / CONVGEN_MAX_RANK][(f - 5) % CONVGEN_MAX_RANK];
    return p;
}

/* An R2C whose fields all differ. */
static cg_fft_problem fft_base(void)
{
    convgen_fft_desc d = {.rank = 2, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 4, .channels = 3, .window = {27, 25},
                          .offset = {2, 3}, .pitch = 29, .layout = CONVGEN_FFT_LAYOUT_TRANSPOSED, .scale = 0.5f};
    cg_fft_problem p;
    assert_int_equal(cg_fft_problem_init(&p, &d), CONVGEN_SUCCESS);
    return p;
}

/* fft_base with field f of cg_fft_problem changed, in place (derived ones too). */
enum { FFT_FIELDS = 23 };
static cg_fft_problem fft_variant(int f)
{
    cg_fft_problem p = fft_base();
    int *narrow[8] = {&p.rank, &p.n, &p.sign, &p.h, &p.oy, &p.w, &p.ox, &p.half};
    int64_t *wide[10] = {&p.batch, &p.channels, &p.count, &p.pitch, &p.real_stride[0], &p.real_stride[1],
                         &p.spectrum_stride[0], &p.spectrum_stride[1], &p.real_elements, &p.spectrum_elements};
    if (f < 8)
        ++*narrow[f];
    else if (f < 18)
        ++*wide[f - 8];
    else if (f == 18)
        p.type = CONVGEN_FFT_C2R;
    else if (f == 19)
        p.transposed = !p.transposed;
    else if (f == 20)
        p.natural = !p.natural;
    else if (f == 21)
        p.scale *= 2;
    else
        p.epilogue = CG_EPILOGUE_RELU; /* a C2R into fprop's y (fftconv) */
    return p;
}

static void expect_all_distinct(const plan_key *keys, int n)
{
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            if (plan_key_eq(&keys[i], &keys[j]))
                fail_msg("plan keys %d and %d are equal", i, j);
}

static void test_plan_key_changes_with_every_conv_field(void **state)
{
    (void)state;
    cg_problem p = conv_base(), q = conv_base();
    plan_key keys[CONV_FIELDS + 1];
    keys[0] = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL}, &h100);
    plan_key again = plan_key_for((cg_spec){cg_conv_ref(&q), CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL}, &h100);
    assert_true(plan_key_eq(&keys[0], &again));
    cg_problem v[CONV_FIELDS];
    for (int f = 0; f < CONV_FIELDS; ++f) {
        v[f] = conv_variant(f);
        keys[f + 1] = plan_key_for((cg_spec){cg_conv_ref(&v[f]), CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL}, &h100);
    }
    expect_all_distinct(keys, CONV_FIELDS + 1);
}

/* Entries past the rank are not the layer's: they change no key. */
static void test_plan_key_ignores_entries_past_the_rank(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 3, .k = 5, .in = {17, 19}, .kernel = {3, 5}};
    cg_problem p, q;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    q = p;
    q.in[2] = 7, q.kernel[2] = 3, q.pad_before[2] = 1, q.stride[2] = 2;
    plan_key a = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, NULL}, &h100);
    plan_key b = plan_key_for((cg_spec){cg_conv_ref(&q), CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, NULL}, &h100);
    assert_true(plan_key_eq(&a, &b));
}

static void test_plan_key_changes_with_every_fft_field(void **state)
{
    (void)state;
    cg_fft_problem p = fft_base(), q = fft_base();
    plan_key keys[FFT_FIELDS + 1];
    keys[0] = plan_key_for((cg_spec){.problem = cg_fft_ref(&p)}, &h100);
    plan_key again = plan_key_for((cg_spec){.problem = cg_fft_ref(&q)}, &h100);
    assert_true(plan_key_eq(&keys[0], &again));
    cg_fft_problem v[FFT_FIELDS];
    for (int f = 0; f < FFT_FIELDS; ++f) {
        v[f] = fft_variant(f);
        keys[f + 1] = plan_key_for((cg_spec){.problem = cg_fft_ref(&v[f])}, &h100);
    }
    expect_all_distinct(keys, FFT_FIELDS + 1);
}

/* A convolution's key and an FFT's never meet, whatever their fields; nor those of two kinds
 * whose hashes write the same bytes: the kind's name comes first. */
static void test_plan_keys_of_conv_and_fft_never_collide(void **state)
{
    (void)state;
    cg_problem conv[CONV_FIELDS];
    cg_fft_problem fft[FFT_FIELDS];
    for (int f = 0; f < CONV_FIELDS; ++f)
        conv[f] = conv_variant(f);
    for (int f = 0; f < FFT_FIELDS; ++f)
        fft[f] = fft_variant(f);
    for (int i = 0; i < CONV_FIELDS; ++i)
        for (int j = 0; j < FFT_FIELDS; ++j) {
            plan_key a = plan_key_for((cg_spec){cg_conv_ref(&conv[i]), CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL}, &h100);
            plan_key b = plan_key_for((cg_spec){.problem = cg_fft_ref(&fft[j])}, &h100);
            assert_false(plan_key_eq(&a, &b));
        }
    const cg_problem_kind twin = {"twin", cg_conv_kind.hash, cg_conv_kind.describe};
    plan_key a = plan_key_for((cg_spec){cg_conv_ref(&conv[0]), CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL}, &h100);
    plan_key b = plan_key_for((cg_spec){{&twin, &conv[0]}, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL}, &h100);
    assert_false(plan_key_eq(&a, &b));
}

/* The rest of a spec (pass, algorithm, each tuning field), the target's every field and the
 * template folder change the key; a spec without tuning is one whose tuning is all chosen. */
static void test_plan_key_changes_with_pass_algo_tuning_target_and_templates(void **state)
{
    (void)state;
    cg_problem p = conv_base();
    cg_tuning none = {0}, t[9];
    for (int i = 0; i < 9; ++i)
        t[i] = none;
    t[0].fourier_size[0] = 64, t[1].fourier_size[1] = 64, t[2].fourier_size[2] = 64;
    t[3].winograd_m[0] = 4, t[4].winograd_m[1] = 4, t[5].winograd_m[2] = 4;
    t[6].gemm = CONVGEN_GEMM_CUBLAS, t[7].tf32 = true, t[8].workspace_limit = 1 << 20;
    cg_target targets[6];
    for (int i = 0; i < 6; ++i)
        targets[i] = h100;
    targets[0].sm_count = 108, targets[1].shared_per_block = 99 << 10, targets[2].shared_per_sm = 100 << 10;
    targets[3].l2_bytes = 40 << 20, targets[4].max_cluster = 1;
    snprintf(targets[5].arch, sizeof targets[5].arch, "sm_80");
    plan_key keys[1 + 2 + 9 + 6 + 1];
    int n = 0;
    cg_spec base = {cg_conv_ref(&p), CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &none};
    keys[n++] = plan_key_for(base, &h100);
    plan_key chosen = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, NULL}, &h100);
    assert_true(plan_key_eq(&keys[0], &chosen));
    keys[n++] = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_ACCGRAD, CONVGEN_ALGO_WINOGRAD, &none}, &h100);
    keys[n++] = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD_FUSED, &none}, &h100);
    for (int i = 0; i < 9; ++i)
        keys[n++] = plan_key_for((cg_spec){cg_conv_ref(&p), CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, &t[i]}, &h100);
    for (int i = 0; i < 6; ++i)
        keys[n++] = plan_key_for(base, &targets[i]);
    setenv("CONVGEN_TEMPLATE_DIR", tmp, 1);
    keys[n++] = plan_key_for(base, &h100);
    unsetenv("CONVGEN_TEMPLATE_DIR");
    expect_all_distinct(keys, n);
}

static void test_cache_mem_miss_then_hit(void **state)
{
    (void)state;
    cache_kernel k = kernel_of(3, 1000), out = {0};
    assert_false(cache_mem_get(key_n(1), &out));
    assert_true(cache_mem_put(key_n(1), &k));
    assert_true(cache_mem_get(key_n(1), &out));
    assert_true(kernels_equal(&k, &out));
    cache_kernel_free(&out);
    assert_false(cache_mem_get(key_n(2), &out));
    cache_mem_clear();
    assert_false(cache_mem_get(key_n(1), &out));
    cache_kernel_free(&k);
}

static void test_cache_mem_copies_are_independent(void **state)
{
    (void)state;
    cache_kernel k = kernel_of(5, 64), ref = kernel_of(5, 64), out = {0};
    assert_true(cache_mem_put(key_n(1), &k));
    memset(k.cubin, 0xee, k.cubin_size); /* the caller's buffer changes after put */
    k.registers = 99;
    assert_true(cache_mem_get(key_n(1), &out));
    assert_ptr_not_equal(out.cubin, k.cubin);
    assert_true(kernels_equal(&ref, &out));
    memset(out.cubin, 0xdd, out.cubin_size); /* and a copy got out changes */
    cache_kernel_free(&out);
    assert_true(cache_mem_get(key_n(1), &out));
    assert_true(kernels_equal(&ref, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&k);
    cache_kernel_free(&ref);
}

static void test_cache_mem_grows_and_keeps_every_entry(void **state)
{
    (void)state;
    enum { N = 3000 };
    for (int i = 0; i < N; i++) {
        cache_kernel k = kernel_of((unsigned)i, (size_t)(i % 97));
        assert_true(cache_mem_put(key_n(i), &k));
        cache_kernel_free(&k);
    }
    for (int i = 0; i < N; i++) {
        cache_kernel k = kernel_of((unsigned)i, (size_t)(i % 97)), out = {0};
        assert_true(cache_mem_get(key_n(i), &out));
        assert_true(kernels_equal(&k, &out));
        cache_kernel_free(&k);
        cache_kernel_free(&out);
    }
}

static void test_cache_mem_put_replaces_same_key(void **state)
{
    (void)state;
    cache_kernel a = kernel_of(1, 10), b = kernel_of(2, 20), out = {0};
    assert_true(cache_mem_put(key_n(7), &a));
    assert_true(cache_mem_put(key_n(7), &b));
    assert_true(cache_mem_get(key_n(7), &out));
    assert_true(kernels_equal(&b, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&a);
    cache_kernel_free(&b);
}

enum { THREADS = 8, SHARED_KEYS = 64, PRIVATE_KEYS = 300, ROUNDS = 3000 };
static atomic_int thread_errors;

/* Shared keys are put and read by every thread; private keys grow the table meanwhile. */
static void *mem_worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        int s = (i * 7 + t) % SHARED_KEYS, r = (i * 13 + t * 5) % SHARED_KEYS;
        cache_kernel k = kernel_of((unsigned)s, (size_t)(16 + s)), out = {0};
        if (!cache_mem_put(key_n(s), &k))
            atomic_fetch_add(&thread_errors, 1);
        cache_kernel_free(&k);
        if (cache_mem_get(key_n(r), &out)) {
            cache_kernel want = kernel_of((unsigned)r, (size_t)(16 + r));
            if (!kernels_equal(&want, &out))
                atomic_fetch_add(&thread_errors, 1);
            cache_kernel_free(&want);
            cache_kernel_free(&out);
        }
        if (i < PRIVATE_KEYS) {
            int p = 1000 + t * PRIVATE_KEYS + i;
            k = kernel_of((unsigned)p, 8);
            if (!cache_mem_put(key_n(p), &k))
                atomic_fetch_add(&thread_errors, 1);
            cache_kernel_free(&k);
        }
    }
    return NULL;
}

static void assert_mem_holds(int n, size_t size)
{
    cache_kernel want = kernel_of((unsigned)n, size), out = {0};
    assert_true(cache_mem_get(key_n(n), &out));
    assert_true(kernels_equal(&want, &out));
    cache_kernel_free(&want);
    cache_kernel_free(&out);
}

static void test_cache_mem_consistent_under_eight_threads(void **state)
{
    (void)state;
    pthread_t th[THREADS];
    atomic_store(&thread_errors, 0);
    for (int t = 0; t < THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, mem_worker, (void *)(intptr_t)t), 0);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    assert_int_equal(atomic_load(&thread_errors), 0);
    for (int s = 0; s < SHARED_KEYS; s++)
        assert_mem_holds(s, (size_t)(16 + s));
    for (int p = 1000; p < 1000 + THREADS * PRIVATE_KEYS; p++)
        assert_mem_holds(p, 8);
}

/* ---- disk: round trip ---- */

static void test_cache_disk_miss_then_put_then_hit_identical(void **state)
{
    (void)state;
    cache_disk *d = cache_disk_open(tmp_path("cache"));
    assert_non_null(d);
    assert_true(cache_disk_writable(d));
    assert_string_equal(cache_disk_dir(d), tmp_path("cache"));
    cache_kernel k = kernel_of(42, 70000), out = {0};
    k.compile_ms = 123.456789;
    k.registers = -1; /* negative fields survive the u32 encoding */
    assert_false(cache_disk_get(d, key_n(1), &out));
    cache_disk_put(d, key_n(1), &k);
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&k, &out));
    cache_kernel_free(&out);
    assert_false(cache_disk_get(d, key_n(2), &out));
    cache_disk_close(d);

    d = cache_disk_open(tmp_path("cache")); /* another open (process) sees it too */
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&k, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&k);
    cache_disk_close(d);
    assert_int_equal(warnings, 0);
}

static void test_cache_disk_empty_cubin_round_trips(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 9, 0, &path);
    cache_kernel want = kernel_of(9, 0), out = {0};
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&want, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&want);
    free(path);
    cache_disk_close(d);
}

/* No temporary left in an entry folder after puts. */
static int count_files(const char *folder)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", folder);
    FILE *p = popen(cmd, "r");
    int n = -1;
    if (p && fscanf(p, "%d", &n) != 1)
        n = -1;
    if (p)
        pclose(p);
    return n;
}

static void test_cache_disk_makes_nested_folders_and_0644_entries(void **state)
{
    (void)state;
    cache_disk *d = cache_disk_open(tmp_path("a/b/c"));
    assert_non_null(d);
    assert_true(cache_disk_writable(d));
    struct stat st;
    assert_int_equal(stat(tmp_path("a/b"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    assert_int_equal(stat(tmp_path("a/b/c"), &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    for (int i = 0; i < 20; i++) {
        cache_kernel k = kernel_of((unsigned)i, 100);
        cache_disk_put(d, key_n(i), &k);
        cache_kernel_free(&k);
    }
    char *path = cache_disk_entry_path(d, key_n(3));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    char hex[33];
    cache_key_hex(key_n(3), hex);
    char want[1024];
    snprintf(want, sizeof want, "%s/%.2s/%s.cgk", tmp_path("a/b/c"), hex, hex);
    assert_string_equal(path, want);
    assert_int_equal(count_files(tmp_path("a/b/c")), 20);
    free(path);
    cache_disk_close(d);
}

static void test_cache_disk_put_remakes_a_folder_removed_after_open(void **state)
{
    (void)state;
    cache_disk *d = cache_disk_open(tmp_path("cache"));
    assert_true(cache_disk_writable(d));
    assert_int_equal(nftw(tmp_path("cache"), remove_one, 16, FTW_DEPTH | FTW_PHYS), 0);
    cache_kernel k = kernel_of(4, 100), out = {0};
    cache_disk_put(d, key_n(1), &k);
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&k, &out));
    assert_int_equal(warnings, 0);
    cache_kernel_free(&out);
    cache_kernel_free(&k);
    cache_disk_close(d);
}

/* ---- disk: damaged entries ---- */

static void test_cache_disk_rejects_entry_truncated_by_one_byte(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 5000, &path);
    assert_int_equal(truncate(path, HDR_SIZE + 5000 - 1), 0);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

static void test_cache_disk_rejects_entry_truncated_in_header(void **state)
{
    (void)state;
    const off_t sizes[] = {HDR_SIZE / 2, 0, HDR_SIZE - 1, HDR_SIZE};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char *path;
        cache_disk *d = disk_with_entry(1, 1, 5000, &path);
        assert_int_equal(truncate(path, sizes[i]), 0);
        assert_rejected(d, 1, path);
        free(path);
        cache_disk_close(d);
    }
}

static void test_cache_disk_rejects_corrupted_payload_byte(void **state)
{
    (void)state;
    const size_t at[] = {0, 2500, 4999};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        char *path;
        cache_disk *d = disk_with_entry(1, 1, 5000, &path);
        size_t size;
        unsigned char *e = file_read(path, &size);
        e[HDR_SIZE + at[i]] ^= 0x01;
        file_write(path, e, size);
        free(e);
        assert_rejected(d, 1, path);
        free(path);
        cache_disk_close(d);
    }
}

static void test_cache_disk_rejects_every_corrupted_header_byte(void **state)
{
    (void)state;
    for (size_t at = 0; at < HDR_SIZE; at++) {
        char *path;
        cache_disk *d = disk_with_entry(1, 1, 300, &path);
        size_t size;
        unsigned char *e = file_read(path, &size);
        e[at] ^= 0x10;
        file_write(path, e, size);
        free(e);
        assert_rejected(d, 1, path);
        free(path);
        cache_disk_close(d);
    }
}

static void test_cache_disk_rejects_other_format_version(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    size_t size;
    unsigned char *e = file_read(path, &size);
    /* Control: resealing an untouched header must keep the entry valid. */
    reseal_header(e);
    file_write(path, e, size);
    cache_kernel out = {0};
    assert_true(cache_disk_get(d, key_n(1), &out));
    cache_kernel_free(&out);
    put_le(e + HDR_VERSION_AT, 2, 4);
    reseal_header(e);
    file_write(path, e, size);
    free(e);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

/* Each field the header checksum cannot vouch for (it is resealed) has its own check. */
static void test_cache_disk_rejects_resealed_header_with_any_wrong_field(void **state)
{
    (void)state;
    const struct { size_t at; int bytes; uint64_t value; } edits[] = {
        {0, 1, 'X'},                    /* magic */
        {12, 4, HDR_SIZE + 8},          /* header size */
        {16, 8, 0x1234},                /* key hi */
        {24, 8, 0x5678},                /* key lo */
        {HDR_PAYLOAD_SIZE_AT, 8, 299},  /* payload length one short */
        {HDR_PAYLOAD_SIZE_AT, 8, 301},  /* payload length one long */
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        char *path;
        cache_disk *d = disk_with_entry(1, 1, 300, &path);
        size_t size;
        unsigned char *e = file_read(path, &size);
        put_le(e + edits[i].at, edits[i].value, edits[i].bytes);
        reseal_header(e);
        file_write(path, e, size);
        free(e);
        assert_rejected(d, 1, path);
        free(path);
        cache_disk_close(d);
    }
}

static void test_cache_disk_rejects_oversized_payload_length(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    size_t size;
    unsigned char *e = file_read(path, &size);
    put_le(e + HDR_PAYLOAD_SIZE_AT, (uint64_t)1 << 40, 8);
    reseal_header(e);
    file_write(path, e, size);
    free(e);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

/* A whole, consistent entry whose cubin is larger than any real one (cache_disk.c's cap,
 * 256 MiB) is refused before its payload is allocated. The file is sparse: no disk used. */
static void test_cache_disk_rejects_payload_over_the_size_cap(void **state)
{
    (void)state;
    const uint64_t n = ((uint64_t)256 << 20) + 1;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    size_t size;
    unsigned char *e = file_read(path, &size);
    static unsigned char zeros[1 << 16];
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    for (uint64_t done = 0; done < n; done += sizeof zeros)
        XXH3_64bits_update(&st, zeros, n - done < sizeof zeros ? n - done : sizeof zeros);
    put_le(e + HDR_PAYLOAD_SIZE_AT, n, 8);
    put_le(e + HDR_PAYLOAD_SIZE_AT + 8, XXH3_64bits_digest(&st), 8);
    reseal_header(e);
    file_write(path, e, HDR_SIZE);
    free(e);
    assert_int_equal(truncate(path, (off_t)(HDR_SIZE + n)), 0);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

static void test_cache_disk_rejects_random_bytes(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    unsigned char junk[4096];
    srand(1234);
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (unsigned char)rand();
    file_write(path, junk, sizeof junk);
    assert_rejected(d, 1, path);
    memcpy(junk, "CGKERNEL", 8); /* right magic, nothing else */
    file_write(path, junk, sizeof junk);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

static void test_cache_disk_rejects_entry_of_another_key(void **state)
{
    (void)state;
    char *path_a, *path_b;
    cache_disk *d = disk_with_entry(1, 1, 300, &path_a);
    cache_kernel k = kernel_of(2, 400), out = {0};
    cache_disk_put(d, key_n(2), &k);
    path_b = cache_disk_entry_path(d, key_n(2));
    size_t size;
    unsigned char *e = file_read(path_b, &size);
    file_write(path_a, e, size); /* a whole, valid entry, at the wrong name */
    free(e);
    assert_rejected(d, 1, path_a);
    assert_true(cache_disk_get(d, key_n(2), &out)); /* the original is untouched */
    assert_true(kernels_equal(&k, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&k);
    free(path_a);
    free(path_b);
    cache_disk_close(d);
}

static void test_cache_disk_rejects_trailing_garbage(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    FILE *f = fopen(path, "ab");
    assert_non_null(f);
    fputc(0, f);
    fclose(f);
    assert_rejected(d, 1, path);
    free(path);
    cache_disk_close(d);
}

static void test_cache_disk_bad_entry_is_rewritten_by_next_put(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    assert_int_equal(truncate(path, 10), 0);
    assert_rejected(d, 1, path);
    cache_kernel k = kernel_of(1, 300), out = {0};
    cache_disk_put(d, key_n(1), &k);
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&k, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&k);
    free(path);
    cache_disk_close(d);
}

/* Opening a FIFO for reading blocks until a writer comes: a get must not. */
static void test_cache_disk_fifo_at_entry_name_is_a_miss_not_a_hang(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkfifo(path, 0644), 0);
    alarm(10); /* a hang becomes a failure */
    assert_rejected(d, 1, path);
    alarm(0);
    free(path);
    cache_disk_close(d);
}

/* The in-memory check (the fuzz target's entry) agrees with the file reader: a written entry's
 * bytes load as the kernel; one byte short, one byte flipped in the cubin or another key do not. */
static void test_cache_entry_parse_checks_bytes_as_the_reader_checks_files(void **state)
{
    (void)state;
    char *path, buf[160];
    const char *why = NULL;
    cache_disk *d = disk_with_entry(1, 5, 300, &path);
    size_t size;
    unsigned char *bytes = file_read(path, &size);
    cache_kernel want = kernel_of(5, 300), got = {0};
    assert_true(cache_entry_parse(bytes, size, key_n(1), &got, &why, buf, sizeof buf));
    assert_true(kernels_equal(&got, &want));
    cache_kernel_free(&got);
    assert_false(cache_entry_parse(bytes, size - 1, key_n(1), &got, &why, buf, sizeof buf));
    assert_non_null(strstr(why, "payload length 300 but 299 bytes follow"));
    assert_false(cache_entry_parse(bytes, 83, key_n(1), &got, &why, buf, sizeof buf));
    assert_string_equal(why, "shorter than a header");
    assert_false(cache_entry_parse(bytes, size, key_n(2), &got, &why, buf, sizeof buf));
    assert_string_equal(why, "entry of another key");
    bytes[size - 1] ^= 1;
    assert_false(cache_entry_parse(bytes, size, key_n(1), &got, &why, buf, sizeof buf));
    assert_string_equal(why, "payload checksum mismatch");
    assert_null(got.cubin);
    cache_kernel_free(&want);
    free(bytes);
    free(path);
    cache_disk_close(d);
}

/* ---- disk: unwritable folders ---- */

static void test_cache_disk_uncreatable_folder_warns_once_and_stores_nothing(void **state)
{
    (void)state;
    file_write(tmp_path("afile"), "x", 1); /* <tmp>/afile/sub cannot be made, even by root */
    cache_disk *d = cache_disk_open(tmp_path("afile/sub"));
    assert_non_null(d);
    assert_false(cache_disk_writable(d));
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, tmp_path("afile/sub")));
    assert_non_null(strstr(last_warning, "memory only"));
    for (int i = 0; i < 5; i++) {
        cache_kernel k = kernel_of((unsigned)i, 100), out = {0};
        cache_disk_put(d, key_n(i), &k);
        assert_false(cache_disk_get(d, key_n(i), &out));
        cache_kernel_free(&k);
    }
    assert_int_equal(warnings, 1);
    cache_disk_close(d);
}

/* The entry's folder name taken by a file: every put of that key fails, one warning. */
static void test_cache_disk_failed_writes_warn_once_per_cache(void **state)
{
    (void)state;
    cache_disk *d = cache_disk_open(tmp_path("cache"));
    assert_true(cache_disk_writable(d));
    char *path = cache_disk_entry_path(d, key_n(1));
    *strrchr(path, '/') = '\0';
    file_write(path, "x", 1);
    cache_kernel k = kernel_of(1, 300), out = {0};
    for (int i = 0; i < 4; i++)
        cache_disk_put(d, key_n(1), &k);
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, tmp_path("cache")));
    assert_false(cache_disk_get(d, key_n(1), &out));
    int other = 2; /* a key in another folder still gets written after the failure */
    char hex1[33], hex[33];
    cache_key_hex(key_n(1), hex1);
    for (cache_key_hex(key_n(other), hex); !strncmp(hex, hex1, 2); cache_key_hex(key_n(other), hex))
        other++;
    cache_disk_put(d, key_n(other), &k);
    assert_true(cache_disk_get(d, key_n(other), &out));
    cache_kernel_free(&out);
    cache_disk_close(d);

    d = cache_disk_open(tmp_path("cache")); /* a new cache may warn again, once */
    cache_disk_put(d, key_n(1), &k);
    cache_disk_put(d, key_n(1), &k);
    assert_int_equal(warnings, 2);
    cache_disk_close(d);
    cache_kernel_free(&k);
    free(path);
}

/* rename(2) cannot replace a non-empty folder: the temporary must not be left behind. */
static void test_cache_disk_failed_rename_leaves_no_temporary(void **state)
{
    (void)state;
    cache_disk *d = cache_disk_open(tmp_path("cache"));
    char *path = cache_disk_entry_path(d, key_n(1)), inner[600];
    assert_true(make_folder_path(path));
    snprintf(inner, sizeof inner, "%s/x", path);
    file_write(inner, "x", 1);
    cache_kernel k = kernel_of(1, 300);
    cache_disk_put(d, key_n(1), &k);
    cache_disk_put(d, key_n(1), &k);
    assert_int_equal(warnings, 1);
    *strrchr(path, '/') = '\0';
    assert_int_equal(count_files(path), 1); /* only <entry>.cgk/x */
    cache_kernel_free(&k);
    free(path);
    cache_disk_close(d);
}

#define CHECK(c) do { if (!(c)) return __LINE__; } while (0)

/* Runs against a folder already made read-only; returns 0 or the failing line (it may run in
 * a child without privileges, where cmocka's asserts cannot report). */
static int read_only_scenario(const char *dir)
{
    cache_kernel k1 = kernel_of(1, 300), other = kernel_of(2, 300), out = {0};
    warnings = 0;
    cache_disk *d = cache_disk_open(dir);
    CHECK(d && !cache_disk_writable(d));
    CHECK(warnings == 1 && strstr(last_warning, dir) && strstr(last_warning, "memory only"));
    for (int i = 2; i < 6; i++)
        cache_disk_put(d, key_n(i), &other);
    cache_disk_put(d, key_n(1), &other); /* would replace the entry if puts went through */
    CHECK(warnings == 1);
    for (int i = 2; i < 6; i++)
        CHECK(!cache_disk_get(d, key_n(i), &out));
    CHECK(cache_disk_get(d, key_n(1), &out) && kernels_equal(&k1, &out));
    cache_kernel_free(&out);
    cache_kernel_free(&k1);
    cache_kernel_free(&other);
    cache_disk_close(d);
    return 0;
}

/* Root writes through 0555, so then the scenario runs in a child that became "nobody". */
static int read_only_scenario_unprivileged(const char *dir)
{
    chmod(tmp, 0755);
    pid_t pid = fork();
    if (pid == 0) {
        bool dropped = setgroups(0, NULL) == 0 && setgid(65534) == 0 && setuid(65534) == 0;
        _exit(dropped ? read_only_scenario(dir) & 0xff : 254);
    }
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 253;
}

static void test_cache_disk_read_only_folder_warns_once_and_still_reads(void **state)
{
    (void)state;
    char *path;
    cache_disk *d = disk_with_entry(1, 1, 300, &path);
    cache_disk_close(d);
    *strrchr(path, '/') = '\0';
    assert_int_equal(chmod(path, 0555), 0);
    assert_int_equal(chmod(tmp_path("cache"), 0555), 0);
    int fd = open(tmp_path("cache/probe"), O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) {
        close(fd);
        unlink(tmp_path("cache/probe"));
        int rc = read_only_scenario_unprivileged(tmp_path("cache"));
        if (rc == 254)
            skip(); /* cannot drop root here; the uncreatable-folder test still runs */
        assert_int_equal(rc, 0);
    } else {
        assert_int_equal(read_only_scenario(tmp_path("cache")), 0);
    }
    free(path);
}

/* ---- disk: concurrent processes ---- */

enum { RACE_PAYLOAD = 256 * 1024, RACE_PUTS = 300 };

/* Writes one of two different kernels under one key, over and over. */
static void race_writer(const char *dir, unsigned seed)
{
    cache_disk *d = cache_disk_open(dir);
    cache_kernel k = kernel_of(seed, RACE_PAYLOAD);
    for (int i = 0; i < RACE_PUTS; i++)
        cache_disk_put(d, key_n(1), &k);
    cache_kernel_free(&k);
    cache_disk_close(d);
    _exit(warnings == 0 ? 0 : 3);
}

/* Reads until both writers are gone (EOF on `done`): every read is a miss or exactly one of
 * the two kernels, and once the entry has been seen it never goes missing again. */
static void race_reader(const char *dir, int done)
{
    cache_disk *d = cache_disk_open(dir);
    cache_kernel a = kernel_of(1, RACE_PAYLOAD), b = kernel_of(2, RACE_PAYLOAD), out = {0};
    fcntl(done, F_SETFL, O_NONBLOCK); /* EAGAIN while a writer lives, EOF after */
    bool seen = false, finished = false;
    int bad = 0;
    while (!finished) {
        char c;
        finished = read(done, &c, 1) == 0; /* one more read after the writers are gone */
        bool hit = cache_disk_get(d, key_n(1), &out);
        if (hit && !kernels_equal(&a, &out) && !kernels_equal(&b, &out))
            bad |= 1;
        if (!hit && (seen || finished))
            bad |= 2;
        seen |= hit;
        cache_kernel_free(&out);
    }
    cache_kernel_free(&a);
    cache_kernel_free(&b);
    cache_disk_close(d);
    _exit(bad ? 10 + bad : 0);
}

static void test_cache_disk_two_writers_and_a_reader_of_one_key(void **state)
{
    (void)state;
    const char *dir = tmp_path("cache");
    int done[2];
    assert_int_equal(pipe(done), 0);
    pid_t pids[3];
    for (int i = 0; i < 3; i++) {
        pids[i] = fork();
        assert_true(pids[i] >= 0);
        if (pids[i] == 0 && i == 0) {
            close(done[1]);
            race_reader(dir, done[0]);
        }
        if (pids[i] == 0) {
            close(done[0]);
            race_writer(dir, (unsigned)i);
        }
    }
    close(done[0]);
    close(done[1]);
    for (int i = 0; i < 3; i++) {
        int status;
        assert_int_equal(waitpid(pids[i], &status, 0), pids[i]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    cache_disk *d = cache_disk_open(dir);
    cache_kernel a = kernel_of(1, RACE_PAYLOAD), b = kernel_of(2, RACE_PAYLOAD), out = {0};
    assert_true(cache_disk_get(d, key_n(1), &out));
    assert_true(kernels_equal(&a, &out) || kernels_equal(&b, &out));
    assert_int_equal(count_files(dir), 1); /* no temporaries left behind */
    cache_kernel_free(&out);
    cache_kernel_free(&a);
    cache_kernel_free(&b);
    cache_disk_close(d);
}

/* ---- disk: which folder ---- */

static void test_cache_disk_off_disables_even_with_a_folder(void **state)
{
    (void)state;
    setenv("CONVGEN_CACHE_DIR", "off", 1);
    assert_null(cache_disk_open(NULL));
    assert_null(cache_disk_open(tmp_path("cache")));
    assert_false(file_exists(tmp_path("cache")));
    assert_false(file_exists(tmp_path(".cache")));
    cache_kernel k = kernel_of(1, 10), out = {0};
    cache_disk_put(NULL, key_n(1), &k); /* a disabled cache is a NULL one: harmless */
    assert_false(cache_disk_get(NULL, key_n(1), &out));
    cache_kernel_free(&k);
    assert_int_equal(warnings, 0);
}

static void expect_dir(const char *dir_arg, const char *want)
{
    cache_disk *d = cache_disk_open(dir_arg);
    assert_non_null(d);
    assert_string_equal(cache_disk_dir(d), want);
    assert_true(cache_disk_writable(d));
    struct stat st;
    assert_int_equal(stat(want, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    cache_disk_close(d);
}

static void test_cache_disk_folder_argument_beats_environment(void **state)
{
    (void)state;
    setenv("CONVGEN_CACHE_DIR", tmp_path("env"), 1);
    setenv("XDG_CACHE_HOME", tmp_path("xdg"), 1);
    expect_dir(tmp_path("arg"), tmp_path("arg"));
    assert_false(file_exists(tmp_path("env")));
}

static void test_cache_disk_convgen_cache_dir_beats_xdg_and_home(void **state)
{
    (void)state;
    char want[1024];
    snprintf(want, sizeof want, "%s", tmp_path("env/deep"));
    setenv("CONVGEN_CACHE_DIR", want, 1);
    setenv("XDG_CACHE_HOME", tmp_path("xdg"), 1);
    expect_dir(NULL, want);
    assert_false(file_exists(tmp_path("xdg")));
}

static void test_cache_disk_xdg_cache_home_beats_home(void **state)
{
    (void)state;
    char want[1024];
    setenv("XDG_CACHE_HOME", tmp_path("xdg"), 1);
    snprintf(want, sizeof want, "%s", tmp_path("xdg/convgen"));
    expect_dir(NULL, want);
    assert_false(file_exists(tmp_path(".cache")));
}

static void test_cache_disk_home_dot_cache_as_last_resort(void **state)
{
    (void)state;
    char want[1024];
    setenv("HOME", tmp_path("home"), 1);
    setenv("XDG_CACHE_HOME", "relative/xdg", 1); /* relative: invalid per XDG, ignored */
    snprintf(want, sizeof want, "%s", tmp_path("home/.cache/convgen"));
    expect_dir(NULL, want);
    setenv("CONVGEN_CACHE_DIR", "", 1); /* empty counts as unset */
    unsetenv("XDG_CACHE_HOME");
    expect_dir(NULL, want);
}

static void test_cache_disk_no_folder_without_home(void **state)
{
    (void)state;
    unsetenv("HOME");
    assert_null(cache_disk_open(NULL));
    assert_int_equal(warnings, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        T(test_cache_key_stable_for_equal_inputs),
        T(test_cache_key_differs_when_any_field_changes),
        T(test_cache_key_unambiguous_at_field_boundaries),
        T(test_cache_key_hex_is_32_lowercase_digits_hi_first),
        T(test_plan_key_changes_with_every_conv_field),
        T(test_plan_key_ignores_entries_past_the_rank),
        T(test_plan_key_changes_with_every_fft_field),
        T(test_plan_keys_of_conv_and_fft_never_collide),
        T(test_plan_key_changes_with_pass_algo_tuning_target_and_templates),
        T(test_cache_mem_miss_then_hit),
        T(test_cache_mem_copies_are_independent),
        T(test_cache_mem_grows_and_keeps_every_entry),
        T(test_cache_mem_put_replaces_same_key),
        T(test_cache_mem_consistent_under_eight_threads),
        T(test_cache_disk_miss_then_put_then_hit_identical),
        T(test_cache_disk_empty_cubin_round_trips),
        T(test_cache_entry_parse_checks_bytes_as_the_reader_checks_files),
        T(test_cache_disk_makes_nested_folders_and_0644_entries),
        T(test_cache_disk_put_remakes_a_folder_removed_after_open),
        T(test_cache_disk_rejects_entry_truncated_by_one_byte),
        T(test_cache_disk_rejects_entry_truncated_in_header),
        T(test_cache_disk_rejects_corrupted_payload_byte),
        T(test_cache_disk_rejects_every_corrupted_header_byte),
        T(test_cache_disk_rejects_other_format_version),
        T(test_cache_disk_rejects_resealed_header_with_any_wrong_field),
        T(test_cache_disk_rejects_oversized_payload_length),
        T(test_cache_disk_rejects_payload_over_the_size_cap),
        T(test_cache_disk_rejects_random_bytes),
        T(test_cache_disk_rejects_entry_of_another_key),
        T(test_cache_disk_rejects_trailing_garbage),
        T(test_cache_disk_bad_entry_is_rewritten_by_next_put),
        T(test_cache_disk_fifo_at_entry_name_is_a_miss_not_a_hang),
        T(test_cache_disk_uncreatable_folder_warns_once_and_stores_nothing),
        T(test_cache_disk_failed_writes_warn_once_per_cache),
        T(test_cache_disk_failed_rename_leaves_no_temporary),
        T(test_cache_disk_read_only_folder_warns_once_and_still_reads),
        T(test_cache_disk_two_writers_and_a_reader_of_one_key),
        T(test_cache_disk_off_disables_even_with_a_folder),
        T(test_cache_disk_folder_argument_beats_environment),
        T(test_cache_disk_convgen_cache_dir_beats_xdg_and_home),
        T(test_cache_disk_xdg_cache_home_beats_home),
        T(test_cache_disk_home_dot_cache_as_last_resort),
        T(test_cache_disk_no_folder_without_home),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
