/* Wisdom's reader at scale and against files that never end (runtime/wisdom.c): 50,000 entries
 * import and are each found by key; /dev/zero and a FIFO are refused at once, never read; a
 * layer (compared through its problem kind) finds only its own wisdom. The format's round trip,
 * merging, damage and stale entries are test_tune's; the formats (1, the oldest read, to 4) and
 * their entries' variants are here. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "convgen.h"
#include "wisdom.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

static char tmpdir[256];

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Entry i of a generated set: a layer per i (batch and channels vary), each pass in turn, one
 * of four algorithms; every tenth layer also measured on a second GPU, slower there. */
static wisdom_entry generated(int i, const char *gpu)
{
    convgen_conv_desc d = {.rank = 2, .n = 1 + i % 97, .c = 1 + i / 97, .k = 3 + i % 5, .in = {32, 32},
                           .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}};
    wisdom_entry e = {.effort = CONVGEN_EFFORT_MEASURE, .ms = 1 + i % 1000 * 1e-3};
    assert_int_equal(cg_problem_init(&e.key.layer, &d), CONVGEN_SUCCESS);
    static const convgen_algo algos[] = {CONVGEN_ALGO_DIRECT, CONVGEN_ALGO_WINOGRAD, CONVGEN_ALGO_FFT_TILED,
                                         CONVGEN_ALGO_CUFFT};
    e.algo = algos[i % 4];
    e.key.pass = (convgen_pass)(i / 7 % 3);
    snprintf(e.key.gpu, sizeof e.key.gpu, "%s", gpu);
    snprintf(e.key.arch, sizeof e.key.arch, "sm_90");
    snprintf(e.key.version, sizeof e.key.version, "%s", CONVGEN_VERSION_STRING);
    return e;
}

#ifndef ENTRIES
#define ENTRIES 50000 /* -DENTRIES=n to time another size */
#endif

/* Was quadratic in the entries (10,000 took 2.6 s; 50,000 did not finish in 120 s): the hang
 * guard (alarm) is what fails then, not a timing assertion. */
static void test_import_of_50000_entries_counts_and_finds_each(void **state)
{
    (void)state;
    alarm(60); /* about 0.5 s here; quadratic, it took minutes */
    convgen_wisdom_forget();
    int added = 0;
    for (int i = 0; i < ENTRIES; ++i) {
        wisdom_entry e = generated(i, "NVIDIA H100 80GB HBM3");
        assert_int_equal(wisdom_add(&e), CONVGEN_SUCCESS);
        ++added;
        if (i % 10 == 0) {
            e = generated(i, "NVIDIA H200");
            e.ms *= 2;
            assert_int_equal(wisdom_add(&e), CONVGEN_SUCCESS);
            ++added;
        }
    }
    assert_int_equal(convgen_wisdom_count(), added);
    char *text, *again;
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    convgen_wisdom_forget();
    double t0 = seconds();
    assert_int_equal(convgen_wisdom_import_string(text), CONVGEN_SUCCESS);
    double t1 = seconds();
    assert_int_equal(convgen_wisdom_count(), added);
    for (int i = 0; i < ENTRIES; ++i) {
        wisdom_entry want = generated(i, "NVIDIA H100 80GB HBM3"), got;
        assert_true(wisdom_lookup(&want.key, CONVGEN_EFFORT_MEASURE, &got));
        assert_int_equal(got.algo, want.algo);
        assert_true(fabs(got.ms - want.ms) < 1e-5); /* written with 6 digits */
        assert_false(wisdom_lookup(&want.key, CONVGEN_EFFORT_EXHAUSTIVE, &got));
        if (i % 10 == 0) {
            /* "any GPU" finds the earliest entry of the key: the H100's, imported first */
            want.key.gpu[0] = '\0';
            assert_true(wisdom_lookup(&want.key, CONVGEN_EFFORT_MEASURE, &got));
            assert_string_equal(got.key.gpu, "NVIDIA H100 80GB HBM3");
            want = generated(i, "NVIDIA H200");
            assert_true(wisdom_lookup(&want.key, CONVGEN_EFFORT_MEASURE, &got));
            assert_true(fabs(got.ms - 2 * want.ms) < 1e-4);
        }
    }
    wisdom_entry other = generated(ENTRIES, "NVIDIA H100 80GB HBM3"), got;
    assert_false(wisdom_lookup(&other.key, CONVGEN_EFFORT_MEASURE, &got));
    double t2 = seconds();
    /* importing the same again replaces each entry in place */
    assert_int_equal(convgen_wisdom_import_string(text), CONVGEN_SUCCESS);
    double t3 = seconds();
    assert_int_equal(convgen_wisdom_count(), added);
    assert_int_equal(convgen_wisdom_export_string(&again), CONVGEN_SUCCESS);
    assert_string_equal(text, again);
    print_message("%d entries (%zu bytes): import %.3f s, %d lookups %.3f s, import over them %.3f s\n", added,
                  strlen(text), t1 - t0, ENTRIES + ENTRIES / 10 * 2, t2 - t1, t3 - t2);
    free(text);
    free(again);
    convgen_wisdom_forget();
    alarm(0);
}

/* An entry for a rank 3 layer, or for it with field f changed: n, c, k, mode, rank, then each
 * dimension of in, kernel, pad_before, pad_after, stride and dilation (f < LAYER_FIELDS). */
enum { LAYER_FIELDS = 5 + 6 * CONVGEN_MAX_RANK };
static wisdom_entry layer_entry(int f)
{
    convgen_conv_desc d = {.rank = 3, .n = 2, .c = 3, .k = 5, .in = {17, 19, 23}, .kernel = {3, 5, 7},
                           .pad_before = {1, 2, 3}, .pad_after = {2, 3, 4}, .stride = {1, 2, 3}, .dilation = {1, 2, 1}};
    int64_t *scalars[3] = {&d.n, &d.c, &d.k};
    int64_t *dims[6] = {d.in, d.kernel, d.pad_before, d.pad_after, d.stride, d.dilation};
    if (f >= 0 && f < 3)
        ++*scalars[f];
    else if (f == 3)
        d.mode = CONVGEN_CONVOLUTION;
    else if (f == 4)
        d.rank = 2;
    else if (f > 4)
        ++dims[(f - 5) / CONVGEN_MAX_RANK][(f - 5) % CONVGEN_MAX_RANK];
    wisdom_entry e = generated(0, "NVIDIA H100 80GB HBM3");
    assert_int_equal(cg_problem_init(&e.key.layer, &d), CONVGEN_SUCCESS);
    e.ms = 2 + f;
    return e;
}

static void test_a_layer_finds_only_its_own_wisdom(void **state)
{
    (void)state;
    convgen_wisdom_forget();
    wisdom_entry base = layer_entry(-1), got;
    assert_int_equal(wisdom_add(&base), CONVGEN_SUCCESS);
    for (int f = 0; f < LAYER_FIELDS; ++f) {
        wisdom_entry e = layer_entry(f);
        if (wisdom_lookup(&e.key, CONVGEN_EFFORT_MEASURE, &got))
            fail_msg("the layer with field %d changed found the other layer's wisdom", f);
        assert_int_equal(wisdom_add(&e), CONVGEN_SUCCESS);
    }
    assert_int_equal(convgen_wisdom_count(), LAYER_FIELDS + 1);
    for (int f = -1; f < LAYER_FIELDS; ++f) {
        wisdom_entry e = layer_entry(f);
        assert_true(wisdom_lookup(&e.key, CONVGEN_EFFORT_MEASURE, &got));
        assert_true(got.ms == e.ms);
    }
    /* out is not what an entry stores (it follows from the rest): a stale one still finds it */
    base.key.layer.out[1] += 3;
    assert_true(wisdom_lookup(&base.key, CONVGEN_EFFORT_MEASURE, &got));
    assert_true(got.ms == 1);
    convgen_wisdom_forget();
}

/* /dev/zero never ends and a FIFO without a writer blocks in open(): both are refused before a
 * byte is read, quickly (the hang guard fails the test otherwise). */
static void test_import_of_dev_zero_and_a_fifo_fails_at_once(void **state)
{
    (void)state;
    alarm(30);
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_import("/dev/zero"), CONVGEN_ERROR_IO);
    assert_non_null(strstr(convgen_last_error(), "/dev/zero"));
    assert_non_null(strstr(convgen_last_error(), "not a regular file"));
    char fifo[320];
    snprintf(fifo, sizeof fifo, "%s/fifo.wisdom", tmpdir);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    assert_int_equal(convgen_wisdom_import(fifo), CONVGEN_ERROR_IO);
    assert_non_null(strstr(convgen_last_error(), "not a regular file"));
    assert_int_equal(convgen_wisdom_import(tmpdir), CONVGEN_ERROR_IO); /* a folder */
    assert_int_equal(convgen_wisdom_count(), 0);
    /* $CONVGEN_WISDOM naming the FIFO: the export after tuning leaves it alone, unblocked */
    setenv("CONVGEN_WISDOM", fifo, 1);
    wisdom_save_env();
    unsetenv("CONVGEN_WISDOM");
    struct stat st;
    assert_int_equal(stat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    remove(fifo);
    char lock[340];
    snprintf(lock, sizeof lock, "%s.lock", fifo);
    remove(lock);
    alarm(0);
}

/* A wisdom text of one entry line, with its end line. */
static char *sealed_entry(const char *gpu, const char *arch)
{
    static char text[1024];
    int n = snprintf(text, sizeof text, "convgen-wisdom 1\ngpu=%s arch=%s version=0.1.0 pass=fprop n=8 c=16 k=16 "
                     "in=20x20 kernel=3x3 pad_before=1x1 pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation "
                     "limit=0 tf32=0 effort=measure algo=direct fourier=0x0 m=0x0 gemm=chosen ms=1.5\n", gpu, arch);
    snprintf(text + n, sizeof text - (size_t)n, "end entries=1 xxh64=%016" PRIx64 "\n", XXH64(text, (size_t)n, 0));
    return text;
}

/* What imports must export to a text that imports again: a value the writer could not write
 * back is refused on reading (found by fuzz_wisdom: gpu=M3" was read as 'M3"' and exported as
 * "M3"", which no reader takes). */
static void test_values_that_would_not_read_back_are_refused(void **state)
{
    (void)state;
    static const struct { const char *gpu, *arch; bool ok; } cases[] = {
        {"\"NVIDIA H100\"", "sm_90", true}, {"H100", "sm_90", true}, {"\"M3\"", "\"sm_90\"", true},
        {"M3\"", "sm_90", false}, {"M\"3", "sm_90", false}, {"\"M3\"x", "sm_90", false},
        {"\"M3\"\"", "sm_90", false}, {"H100", "\"sm 90\"", false}, {"H100", "sm\"90", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        convgen_wisdom_forget();
        convgen_status s = convgen_wisdom_import_string(sealed_entry(cases[i].gpu, cases[i].arch));
        if ((s == CONVGEN_SUCCESS) != cases[i].ok)
            fail_msg("gpu=%s arch=%s: %s", cases[i].gpu, cases[i].arch, s ? convgen_last_error() : "imported");
        if (s != CONVGEN_SUCCESS)
            continue;
        char *text;
        assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
        convgen_wisdom_forget();
        assert_int_equal(convgen_wisdom_import_string(text), CONVGEN_SUCCESS);
        assert_int_equal(convgen_wisdom_count(), 1);
        free(text);
    }
    convgen_wisdom_forget();
}

/* A wisdom text of format `format` with these entry lines, and its end line. */
static char *sealed_text(int format, const char *const *lines, int count)
{
    static char text[8192];
    int n = snprintf(text, sizeof text, "convgen-wisdom %d\n# a comment\n", format);
    for (int i = 0; i < count; ++i)
        n += snprintf(text + n, sizeof text - (size_t)n, "%s\n", lines[i]);
    snprintf(text + n, sizeof text - (size_t)n, "end entries=%d xxh64=%016" PRIx64 "\n", count, XXH64(text, (size_t)n, 0));
    return text;
}

#define KEY_C3_BPROP "gpu=G arch=sm_90 version=0.1.0 pass=bprop n=2 c=3 k=8 in=20x20 kernel=3x3 pad_before=1x1 " \
    "pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation limit=0 tf32=0 effort=measure"
#define KEY_C3_FPROP "gpu=G arch=sm_90 version=0.1.0 pass=fprop n=2 c=3 k=8 in=20x20 kernel=3x3 pad_before=1x1 " \
    "pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation limit=0 tf32=0 effort=measure"
#define KEY_C8_BPROP "gpu=G arch=sm_90 version=0.1.0 pass=bprop n=2 c=8 k=8 in=20x20 kernel=3x3 pad_before=1x1 " \
    "pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation limit=0 tf32=0 effort=exhaustive"
#define KEY_C8_FPROP "gpu=G arch=sm_90 version=0.1.0 pass=fprop n=2 c=8 k=8 in=20x20 kernel=3x3 pad_before=1x1 " \
    "pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation limit=0 tf32=0 effort=exhaustive"
#define KEY_C8_ACCGRAD "gpu=G arch=sm_90 version=0.1.0 pass=accgrad n=2 c=8 k=8 in=20x20 kernel=3x3 pad_before=1x1 " \
    "pad_after=1x1 stride=1x1 dilation=1x1 mode=correlation limit=0 tf32=0 effort=exhaustive"

/* The entry of a key line's layer and pass (gpu G, sm_90), which must be held. */
static wisdom_entry held_entry(int n, int c, convgen_pass pass)
{
    convgen_conv_desc d = {.rank = 2, .n = n, .c = c, .k = 8, .in = {20, 20}, .kernel = {3, 3}, .pad_before = {1, 1},
                           .pad_after = {1, 1}};
    wisdom_key k = {.gpu = "G", .arch = "sm_90", .version = "0.1.0", .pass = pass};
    wisdom_entry e;
    assert_int_equal(cg_problem_init(&k.layer, &d), CONVGEN_SUCCESS);
    assert_true(wisdom_lookup(&k, CONVGEN_EFFORT_MEASURE, &e));
    return e;
}

/* Format 1 (the knobs as fields) reads into the same entries as format 2: the variant its
 * planner prints of those fields (knobs it has not are dropped), "direct" meaning direct-window
 * where that applies (direct chose it silently then), and is written back as format 2. */
static void test_format_1_reads_as_algorithm_and_variant(void **state)
{
    (void)state;
    const char *const v1[] = {
        KEY_C3_BPROP " algo=direct fourier=0x0 m=0x0 gemm=chosen ms=0.5",
        KEY_C3_FPROP " algo=direct fourier=0x0 m=0x0 gemm=chosen ms=0.25",
        KEY_C8_BPROP " algo=direct fourier=0x0 m=0x0 gemm=chosen ms=1.5",
        KEY_C8_FPROP " algo=winograd fourier=0x0 m=6x6 gemm=cublas ms=1",
        KEY_C8_ACCGRAD " algo=cufft fourier=32x30 m=0x0 gemm=generated ms=2",
    };
    const struct { int c; convgen_pass pass; convgen_algo algo; const char *variant; } want[] = {
        {3, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT_WINDOW, ""},
        {3, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, ""},
        {8, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, ""},
        {8, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD, "m=6x6 gemm=cublas"},
        {8, CONVGEN_ACCGRAD, CONVGEN_ALGO_CUFFT, "fourier=32x30"},
    };
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_import_string(sealed_text(1, v1, 5)), CONVGEN_SUCCESS);
    assert_int_equal(convgen_wisdom_count(), 5);
    char *text, *again;
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    for (int round = 0; round < 2; ++round) {
        for (int i = 0; i < 5; ++i) {
            wisdom_entry e = held_entry(2, want[i].c, want[i].pass);
            if (e.algo != want[i].algo || strcmp(e.variant, want[i].variant) != 0)
                fail_msg("entry %d: %s \"%s\", want %s \"%s\"", i, convgen_algo_name(e.algo), e.variant,
                         convgen_algo_name(want[i].algo), want[i].variant);
        }
        convgen_wisdom_forget(); /* again from the format-2 export */
        assert_int_equal(convgen_wisdom_import_string(text), CONVGEN_SUCCESS);
    }
    assert_int_equal(strncmp(text, "convgen-wisdom 2\n", 17), 0);
    assert_non_null(strstr(text, "effort=measure algo=direct-window variant=\"\" ms=0.5\n"));
    assert_non_null(strstr(text, "algo=winograd variant=\"m=6x6 gemm=cublas\" ms=1\n"));
    assert_null(strstr(text, "fourier=0x0"));
    assert_int_equal(convgen_wisdom_export_string(&again), CONVGEN_SUCCESS);
    assert_string_equal(text, again);
    free(text);
    free(again);
    convgen_wisdom_forget();
}

/* The shipped wisdom (bench/wisdom/) reads whole: the H100's in format 4 (every entry carries its
 * candidates' hash), none.wisdom still in format 1.
 * G1's bprop, measured as direct in format 1, reads as direct-window, which is the kernel that
 * entry planned then. */
static void test_shipped_wisdom_reads(void **state)
{
    (void)state;
    static const char *const files[] = {CONVGEN_SOURCE_DIR "/bench/wisdom/nvidia-h100-80gb-hbm3.wisdom",
                                        CONVGEN_SOURCE_DIR "/bench/wisdom/none.wisdom"};
    /* 111: 84 of the 2-D layers and 27 of the nine 3-D ones, every one's candidates known and
       none stale (as this convgen lists them). A change to a layer's candidates makes its
       entries stale, and this fails until they are tuned again (convgen tune --set ...
       --effort exhaustive on an H100): the shipped choices would no longer answer, and every
       program would measure those layers at its first plan. */
    const int entries[] = {111, 0};
    const char *const headers[] = {"convgen-wisdom 4\n", "convgen-wisdom 1\n"};
    for (int i = 0; i < 2; ++i) {
        convgen_wisdom_forget();
        FILE *f = fopen(files[i], "r");
        char first[64] = "";
        assert_non_null(f);
        assert_non_null(fgets(first, sizeof first, f));
        fclose(f);
        assert_string_equal(first, headers[i]);
        if (convgen_wisdom_import(files[i]) != CONVGEN_SUCCESS)
            fail_msg("%s", convgen_last_error());
        assert_int_equal(convgen_wisdom_count(), entries[i]);
    }
    convgen_wisdom_import(files[0]);
    convgen_conv_desc g1 = {.rank = 2, .n = 32, .c = 3, .k = 64, .in = {224, 224}, .kernel = {7, 7},
                            .pad_before = {3, 3}, .pad_after = {3, 3}, .stride = {2, 2}};
    wisdom_key k = {.gpu = "NVIDIA H100 80GB HBM3", .arch = "sm_90", .version = "0.1.0"};
    assert_int_equal(cg_problem_init(&k.layer, &g1), CONVGEN_SUCCESS);
    /* fprop: direct-window's sliding kernel, re-tuned at exhaustive effort when it came */
    const convgen_algo want[3] = {CONVGEN_ALGO_DIRECT_WINDOW, CONVGEN_ALGO_DIRECT_WINDOW, CONVGEN_ALGO_DIRECT};
    for (int pass = 0; pass < 3; ++pass) {
        wisdom_entry e;
        k.pass = (convgen_pass)pass;
        assert_true(wisdom_lookup(&k, CONVGEN_EFFORT_EXHAUSTIVE, &e));
        assert_int_equal(e.algo, want[pass]);
        assert_string_equal(e.variant, "");
        assert_true(e.candidates != 0);
    }
    convgen_wisdom_forget();
}

/* Damage in one entry refuses the whole file, in either format, naming the line (and, for a
 * variant its planner refuses, why); a format this convgen does not read is refused at once. */
static void test_a_bad_entry_refuses_the_whole_file(void **state)
{
    (void)state;
    const char *good1 = KEY_C8_FPROP " algo=winograd fourier=0x0 m=6x6 gemm=cublas ms=1";
    const char *good2 = KEY_C8_FPROP " algo=winograd variant=\"m=6x6 gemm=cublas\" ms=1";
    const char *good4 = KEY_C8_FPROP " algo=winograd variant=\"m=6x6 gemm=cublas\" ms=1 candidates=0000000000000000";
    const struct { int format; const char *second, *why; } cases[] = {
        {1, KEY_C8_BPROP " algo=winograd fourier=0x0 m=13x13 gemm=cublas ms=1", "line 4 is not a wisdom entry of format 1"},
        {1, KEY_C8_BPROP " algo=winograd fourier=0x0 m=6x6 gemm=fast ms=1", "line 4 is not a wisdom entry of format 1"},
        {1, KEY_C8_BPROP " algo=winograd fourier=-1x0 m=6x6 gemm=cublas ms=1", "of format 1"},
        {1, KEY_C8_BPROP " algo=winograd fourier=0x0 m=6x6 ms=1", "of format 1"},                 /* a field short */
        {1, KEY_C8_BPROP " algo=winograd fourier=0x0 m=6x6 gemm=cublas tile=3 ms=1", "of format 1"}, /* one more */
        {1, KEY_C8_BPROP " algo=tiled fourier=0x0 m=0x0 gemm=chosen ms=1", "of format 1"},
        {1, KEY_C3_BPROP " algo=direct-window fourier=0x0 m=0x0 gemm=chosen ms=1", "of format 1"}, /* not then */
        {1, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1", "of format 1"},       /* format 2's in format 1 */
        {2, KEY_C8_BPROP " algo=winograd fourier=0x0 m=6x6 gemm=cublas ms=1", "of format 2"}, /* and the other way */
        {2, KEY_C8_BPROP " algo=winograd variant=\"m=6x6 tile=3\" ms=1",
         "line 4 is not a wisdom entry of format 2: winograd: variant \"m=6x6 tile=3\": 'tile' is no key of winograd's"},
        {2, KEY_C8_BPROP " algo=winograd variant=\"gemm=cublas m=6x6\" ms=1", "is not as winograd writes it"},
        {2, KEY_C8_BPROP " algo=direct variant=\"m=6x6\" ms=1", "'m' is no key of direct's (gemm)"},
        {2, KEY_C8_BPROP " algo=winograd variant=m=6x6 gemm=cublas ms=1", "of format 2"}, /* unquoted: 21 fields */
        {2, KEY_C8_BPROP " algo=winograd ms=1 tf32=0", "of format 2"},
        {2, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1 candidates=0000000000000000", "of format 2"}, /* 4's */
        {4, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1", "of format 4"}, /* no candidates */
        {4, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1 candidates=12345", "of format 4"}, /* 16 digits */
        {4, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1 candidates=-123456789abcdef", "of format 4"},
        {4, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1 candidates=0123456789abcdeg", "of format 4"},
        {4, KEY_C8_BPROP " algo=winograd variant=\"m=6x6\" ms=1 candidates=0x23456789abcdef", "of format 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *good = cases[i].format == 1 ? good1 : cases[i].format == 4 ? good4 : good2;
        const char *lines[3] = {good, cases[i].second, good};
        convgen_wisdom_forget();
        convgen_status s = convgen_wisdom_import_string(sealed_text(cases[i].format, lines, 3));
        if (s != CONVGEN_ERROR_INVALID_VALUE || !strstr(convgen_last_error(), cases[i].why))
            fail_msg("case %zu: expected '%s', got %d: %s", i, cases[i].why, s, convgen_last_error());
        assert_int_equal(convgen_wisdom_count(), 0); /* nothing of it merged */
        lines[1] = lines[0]; /* the same file without the bad line reads */
        assert_int_equal(convgen_wisdom_import_string(sealed_text(cases[i].format, lines, 2)), CONVGEN_SUCCESS);
        assert_int_equal(convgen_wisdom_count(), 1);
    }
    const char *lines[1] = {good2};
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_import_string(sealed_text(5, lines, 1)), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "a later format than this convgen reads (1 to 4)"));
    assert_int_equal(convgen_wisdom_import_string(sealed_text(0, lines, 1)), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "is not convgen wisdom"));
    assert_int_equal(convgen_wisdom_count(), 0);
}

#define N337 "input 1; conv 80 2x2x2 relu; pool 2x2x2; conv 80 3x3x3 relu; pool 2x2x2; conv 80 3x3x3 relu; " \
    "pool 2x2x2; conv 80 3x3x3 relu; conv 80 3x3x3 relu; conv 80 3x3x3 relu; conv 3 3x3x3 relu"
#define NET_KEY(net) "net=\"" net "\" gpu=\"G\" arch=sm_90 version=0.1.0 "
#define NET_LIMITS "memory=1073741824 host_memory=8589934592 mode=auto "

/* A network's measured patch (format 3) reads back and is found for its network, volume and
 * limits (the memory within 1/32: a free-memory default moves a little), at its effort or less,
 * and for any GPU of the architecture; it exports verbatim, and a file without one is still
 * written in format 2. A bad network line refuses the whole file. */
static void test_a_networks_patch_reads_back_and_a_bad_one_refuses_the_file(void **state)
{
    (void)state;
    const char *layer = KEY_C8_FPROP " algo=winograd variant=\"m=6x6 gemm=cublas\" ms=1";
    const char *net = NET_KEY(N337) "volume=1024x1024x1024 " NET_LIMITS "effort=measure fragment=59x20x30 chose=host s=42.5";
    const char *rank2 = NET_KEY("input 2; conv 3 3x3 relu; pool 2x2; conv 1 2x2") "volume=0x101x93 memory=400000 "
                        "host_memory=8589934592 mode=host effort=exhaustive fragment=1x3x2 chose=host s=0.0123";
    const char *lines[3] = {layer, net, rank2};
    convgen_wisdom_forget();
    if (convgen_wisdom_import_string(sealed_text(3, lines, 3)) != CONVGEN_SUCCESS)
        fail_msg("%s", convgen_last_error());
    assert_int_equal(convgen_wisdom_count(), 3);
    wisdom_net_key k = {.gpu = "G", .arch = "sm_90", .version = "0.1.0", .net = N337, .volume = {1024, 1024, 1024},
                        .memory_limit = ((uint64_t)1 << 30) + ((uint64_t)1 << 24), .host_limit = (uint64_t)8 << 30};
    wisdom_net_entry e;
    assert_true(wisdom_net_lookup(&k, CONVGEN_EFFORT_MEASURE, &e));
    assert_int_equal(e.fragment[0], 59), assert_int_equal(e.fragment[1], 20), assert_int_equal(e.fragment[2], 30);
    assert_int_equal(e.mode, CONVGEN_NET_HOST);
    assert_true(e.seconds == 42.5);
    assert_false(wisdom_net_lookup(&k, CONVGEN_EFFORT_EXHAUSTIVE, &e)); /* measured with less */
    k.gpu[0] = '\0';
    assert_true(wisdom_net_lookup(&k, CONVGEN_EFFORT_MEASURE, &e)); /* any GPU of sm_90 */
    wisdom_net_key other = k;
    other.memory_limit = (uint64_t)1 << 31;
    assert_false(wisdom_net_lookup(&other, CONVGEN_EFFORT_MEASURE, &e));
    other = k, other.volume[2] = 1000;
    assert_false(wisdom_net_lookup(&other, CONVGEN_EFFORT_MEASURE, &e));
    other = k, other.mode = CONVGEN_NET_HOST;
    assert_false(wisdom_net_lookup(&other, CONVGEN_EFFORT_MEASURE, &e));
    other = k, other.net[strlen(other.net) - 5] = '\0'; /* "conv 3 3x3x3": no ReLU */
    assert_false(wisdom_net_lookup(&other, CONVGEN_EFFORT_MEASURE, &e));
    char *text;
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    assert_int_equal(strncmp(text, "convgen-wisdom 3\n", 17), 0);
    char want[1024];
    snprintf(want, sizeof want, "\n%s\n%s\n", net, rank2);
    assert_non_null(strstr(text, want));
    free(text);
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_import_string(sealed_text(3, lines, 1)), CONVGEN_SUCCESS); /* the layer's only */
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    assert_int_equal(strncmp(text, "convgen-wisdom 2\n", 17), 0);
    free(text);
    const struct { int format; const char *line, *why; } cases[] = {
        {2, net, "line 4 is not a wisdom entry of format 2"}, /* no networks in format 2 */
        {3, NET_KEY("input 1; conv 3 3x3x3  relu") "volume=0x0x0 " NET_LIMITS "effort=measure fragment=1x1x1 chose=device s=1",
         "line 4 is not a network's wisdom entry"}, /* not as convgen writes it */
        {3, NET_KEY("input 1; conv 3 3x3x3; pool 2x2x2") "volume=0x0x0 " NET_LIMITS "effort=measure fragment=1x1x1 chose=device s=1",
         "line 4 is not a network's"}, /* no network: it ends with a pooling */
        {3, NET_KEY("input 1; conv 3 3x3") "volume=5x40x40 " NET_LIMITS "effort=measure fragment=1x2x2 chose=device s=1",
         "line 4 is not a network's"}, /* rank 2 with a depth */
        {3, NET_KEY(N337) "volume=0x0x0 " NET_LIMITS "effort=measure fragment=0x20x30 chose=host s=1", "line 4 is not a network's"},
        {3, NET_KEY(N337) "volume=0x0x0 " NET_LIMITS "effort=estimate fragment=9x20x30 chose=host s=1", "line 4 is not"},
        {3, NET_KEY(N337) "volume=0x0x0 " NET_LIMITS "effort=measure fragment=9x20x30 chose=auto s=1", "line 4 is not"},
        {3, NET_KEY(N337) "volume=0x0x0 " NET_LIMITS "effort=measure fragment=9x20x30 chose=host s=-1", "line 4 is not"},
        {3, NET_KEY(N337) "volume=0x0x0 " NET_LIMITS "effort=measure fragment=9x20x30 chose=host", "line 4 is not"},
        {3, NET_KEY(N337) "volume=0x0 " NET_LIMITS "effort=measure fragment=9x20x30 chose=host s=1", "line 4 is not"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *three[3] = {layer, cases[i].line, layer};
        convgen_wisdom_forget();
        convgen_status s = convgen_wisdom_import_string(sealed_text(cases[i].format, three, 3));
        if (s != CONVGEN_ERROR_INVALID_VALUE || !strstr(convgen_last_error(), cases[i].why))
            fail_msg("case %zu: expected '%s', got %d: %s", i, cases[i].why, s, convgen_last_error());
        assert_int_equal(convgen_wisdom_count(), 0);
    }
    convgen_wisdom_forget();
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "%s/convgen-test-wisdom-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    unsetenv("CONVGEN_WISDOM");
    setenv("CONVGEN_KERNEL_SET", "off", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_import_of_50000_entries_counts_and_finds_each),
        cmocka_unit_test(test_import_of_dev_zero_and_a_fifo_fails_at_once),
        cmocka_unit_test(test_values_that_would_not_read_back_are_refused),
        cmocka_unit_test(test_a_layer_finds_only_its_own_wisdom),
        cmocka_unit_test(test_format_1_reads_as_algorithm_and_variant),
        cmocka_unit_test(test_shipped_wisdom_reads),
        cmocka_unit_test(test_a_bad_entry_refuses_the_whole_file),
        cmocka_unit_test(test_a_networks_patch_reads_back_and_a_bad_one_refuses_the_file),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(tmpdir);
    return failed;
}
