/* The convgen command line as a user meets it: every verb's --help, the options each verb
 * takes, numbers refused rather than cut, did-you-mean, and the files a verb may and may not
 * write. Runs the built convgen (beside this program's folder) offline: no GPU needed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdbool.h>

#include "generate.h"

static char convgen_bin[4096], tmpdir[512];
static char out_text[1 << 16], err_text[1 << 16];

static void slurp(const char *path, char *text, size_t size)
{
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(text, 1, size - 1, f) : 0;
    text[n] = '\0';
    if (f)
        fclose(f);
}

/* Runs `convgen ARGS` (ARGS as the shell reads them, with a time limit) and returns its exit
 * code; its output into out_text and err_text. */
static int convgen(const char *fmt, ...)
{
    char args[4096], cmd[12000], out[600], err[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(out, sizeof out, "%s/stdout", tmpdir);
    snprintf(err, sizeof err, "%s/stderr", tmpdir);
    snprintf(cmd, sizeof cmd, "CONVGEN_LAYERS='%s/bench/layers.txt' timeout 60 '%s' %s >'%s' 2>'%s' </dev/null",
             CONVGEN_SOURCE_DIR, convgen_bin, args, out, err);
    int status = system(cmd);
    slurp(out, out_text, sizeof out_text);
    slurp(err, err_text, sizeof err_text);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_in(const char *text, const char *what, const char *args)
{
    if (!strstr(text, what))
        fail_msg("convgen %s: the output does not say '%s':\n%s", args, what, text);
}

/* Runs convgen with `args`; expects exit code `rc` and `says` in its stderr (or NULL). */
static void expect_rc(int rc, const char *says, const char *args)
{
    int got = convgen("%s", args);
    if (got != rc)
        fail_msg("convgen %s: exit %d, not %d; stderr:\n%s", args, got, rc, err_text);
    if (says)
        expect_in(err_text, says, args);
}

static void write_file(const char *name, const char *text, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The verbs of `convgen --help`, the registry's list: each answers --help with its usage. */
static void test_every_verb_answers_help(void **state)
{
    (void)state;
    assert_int_equal(convgen("--help"), 0);
    char list[1 << 16];
    snprintf(list, sizeof list, "%s", out_text);
    int verbs = 0;
    for (char *line = strtok(list, "\n"); line; line = strtok(NULL, "\n")) {
        char verb[64], args[128], usage[128];
        if (strncmp(line, "  ", 2) != 0 || line[2] == ' ' || sscanf(line, "%63s", verb) != 1)
            continue;
        if (strcmp(verb, "bench") == 0 || strcmp(verb, "convgen") == 0)
            continue; /* bench is convgen-bench's (its own options); the example line */
        snprintf(args, sizeof args, "%s --help", verb);
        snprintf(usage, sizeof usage, "usage: convgen %s", verb);
        int rc = convgen("%s", args);
        if (rc != 0)
            fail_msg("convgen %s: exit %d; stderr:\n%s", args, rc, err_text);
        expect_in(out_text, usage, args);
        ++verbs;
    }
    assert_true(verbs >= 8);
}

/* Each verb lists the options that apply to it, and only those; one that does not apply is
 * refused by name. */
static void test_verbs_list_and_take_only_their_options(void **state)
{
    (void)state;
    static const struct { const char *verb, *has, *lacks; } lists[] = {
        {"compile", "--arch", "--wisdom"}, {"compile", "--no-cache", "--csv"}, {"compile", "--algo", "--seed"},
        {"check", "--seed", "--wisdom"},   {"check", "--samples", "--kernel"}, {"tune", "--wisdom", "--kernel"},
        {"tune", "--csv", "--samples"},    {"emit", "--kernel", "--samples"},  {"emit", "--tile", "--no-cache"},
        {"generate", "--ninja", "--seed"}, {"generate", "--embed", "--pass"},  {"explain", "--wisdom", "--csv"},
    };
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; ++i) {
        char args[64];
        snprintf(args, sizeof args, "%s --help", lists[i].verb);
        assert_int_equal(convgen("%s", args), 0);
        expect_in(out_text, lists[i].has, args);
        if (strstr(out_text, lists[i].lacks))
            fail_msg("convgen %s lists %s:\n%s", args, lists[i].lacks, out_text);
    }
    expect_rc(2, "--wisdom does not apply to compile", "compile --wisdom w.txt L2");
    expect_rc(2, "--seed does not apply to emit", "emit --seed 3 L2");
}

static void test_emit_fft_help_shows_the_fft_options(void **state)
{
    (void)state;
    assert_int_equal(convgen("emit --algo fft --help"), 0);
    expect_in(out_text, "usage: convgen emit --algo fft --n N", "emit --algo fft --help");
    expect_in(out_text, "--type", "emit --algo fft --help");
    expect_in(out_text, "--window", "emit --algo fft --help");
}

/* A pooling kernel's header says how to emit it again, and that command prints it byte for
 * byte; bad pooling options are named. */
static void test_emit_pool_says_how_to_emit_it_again(void **state)
{
    (void)state;
    const char *args = "emit --pool fragments --c 3 --in 9x11x13 --window 2x3x2";
    assert_int_equal(convgen("%s", args), 0);
    static char first[1 << 16];
    snprintf(first, sizeof first, "%s", out_text);
    const char *line = strstr(first, "emitted by: convgen ");
    assert_non_null(line);
    char again[256];
    size_t len = strcspn(line + strlen("emitted by: convgen "), "\n");
    snprintf(again, sizeof again, "%.*s", (int)len, line + strlen("emitted by: convgen "));
    expect_in(again, "--n 1 --c 3 --in 9x11x13 --window 2x3x2", args);
    assert_int_equal(convgen("%s", again), 0);
    if (strcmp(first, out_text) != 0)
        fail_msg("convgen %s prints another kernel than convgen %s", again, args);
    expect_rc(1, "window[1] = 9 must be 1..8", "emit --pool max --in 9x9 --window 2x9"); /* the library says it */
    expect_rc(2, "--pool avg", "emit --pool avg --in 9x9 --window 2x2");
    expect_rc(2, "--in and --window of one rank", "emit --pool max --in 9x9 --window 2x2x2");
    expect_rc(2, "--window needs a value", "emit --pool max --in 9x9 --window");
    assert_int_equal(convgen("emit --pool --help"), 0);
    expect_in(out_text, "usage: convgen emit --pool MODE", "emit --pool --help");
}

/* convgen net: a network file's arithmetic (ZNNi's n337: 85^3 field of view; one voxel a final
 * fragment needs 92^3 of input for 8^3 of dense output), and bad files and options named. */
static void test_net_prints_a_networks_arithmetic(void **state)
{
    (void)state;
    char args[1200], bad[512];
    snprintf(args, sizeof args, "net '%s/bench/nets/n337.net'", CONVGEN_SOURCE_DIR);
    assert_int_equal(convgen("%s", args), 0);
    expect_in(out_text, "field of view: 85x85x85", args);
    expect_in(out_text, "patch: input 92x92x92, dense output 8x8x8", args);
    expect_in(out_text, "| 6 | pool 2x2x2 (fragments) | 512 x 80 x 9x9x9 |", args); /* 4 convolutions of 3^3 to 1 */
    snprintf(args, sizeof args, "net '%s/bench/nets/n726.net' --m 2x3x4", CONVGEN_SOURCE_DIR);
    assert_int_equal(convgen("%s", args), 0);
    expect_in(out_text, "dense output 8x12x16 (final fragments 2x3x4)", args);
    snprintf(args, sizeof args, "net '%s/bench/nets/n726.net' --m 2x3", CONVGEN_SOURCE_DIR);
    expect_rc(2, "--m '2x3' must be DxHxW", args);
    write_file("bad.net", "input 1\nconv 8 3x3x3\npool 2x2x2 relu\nconv 1 1x1x1\n", bad, sizeof bad);
    snprintf(args, sizeof args, "net '%s'", bad);
    expect_rc(1, "line 3: pool takes a window", args);
    expect_rc(2, "which network file?", "net");
    expect_rc(1, "cannot read", "net /nonexistent.net");
}

/* convgen infer: its help, and what it refuses before touching a GPU. */
static void test_infer_checks_its_arguments(void **state)
{
    (void)state;
    char args[1200];
    assert_int_equal(convgen("infer --help"), 0);
    expect_in(out_text, "usage: convgen infer FILE --volume DxHxW", "infer --help");
    expect_rc(2, "needs a network file and --volume", "infer");
    snprintf(args, sizeof args, "infer '%s/bench/nets/n337.net'", CONVGEN_SOURCE_DIR);
    expect_rc(2, "needs a network file and --volume", args);
    snprintf(args, sizeof args, "infer '%s/bench/nets/n337.net' --volume 100x100", CONVGEN_SOURCE_DIR);
    expect_rc(2, "must have the network's rank, 3", args);
    snprintf(args, sizeof args, "infer '%s/bench/nets/n337.net' --volume 100x100x100 --m 2x2", CONVGEN_SOURCE_DIR);
    expect_rc(2, "--volume and --m must have the network's rank", args);
    snprintf(args, sizeof args, "infer '%s/bench/nets/n337.net' --volume 100x100x100 --frobnicate 1", CONVGEN_SOURCE_DIR);
    expect_rc(2, "unknown option '--frobnicate'", args);
    expect_rc(2, "cannot read it", "infer /nonexistent.net --volume 100x100x100");
    const char *bad[][2] = {{"--mode sideways", "--mode 'sideways' must be auto, device or host"},
                            {"--host-memory 0", "--host-memory '0' must be MiB, 1 to 2^40"},
                            {"--warmup 65", "--warmup '65' must be 0..64"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(args, sizeof args, "infer '%s/bench/nets/n337.net' --volume 100x100x100 %s", CONVGEN_SOURCE_DIR,
                 bad[i][0]);
        expect_rc(2, bad[i][1], args);
    }
}

/* "auto" and every registered planner's name. */
static void test_unknown_algorithm_lists_the_algorithms(void **state)
{
    (void)state;
    expect_rc(2, "--algo 'foo' is not an algorithm", "emit --algo foo L2");
    expect_in(err_text, "auto", "emit --algo foo L2");
    for (int i = 0; i < cg_planner_count(); ++i)
        expect_in(err_text, cg_planner_at(i)->name, "emit --algo foo L2");
}

/* As ninja: the nearest verb or option, when one is near. */
static void test_unknown_verb_and_option_get_did_you_mean(void **state)
{
    (void)state;
    expect_rc(2, "unknown verb 'emti'; did you mean 'emit'?", "emti");
    expect_rc(2, "unknown verb 'emitt'; did you mean 'emit'?", "emitt");
    expect_rc(2, "did you mean 'compile-kernel'?", "compile-kernle");
    expect_rc(2, "unknown verb 'xyzzyplugh'", "xyzzyplugh");
    if (strstr(err_text, "did you mean"))
        fail_msg("a guess for a word near nothing:\n%s", err_text);
    expect_rc(2, "unknown option '--wisdon'; did you mean '--wisdom'?", "tune --wisdon w.txt L2");
}

/* Numbers past int were cut to their low bits (--kernel 4294967298 emitted kernel 2). */
static void test_numbers_past_int_are_refused(void **state)
{
    (void)state;
    expect_rc(2, "--kernel '4294967298' must be an integer from -1 to 2147483647", "emit --algo fft --kernel 4294967298 R2");
    expect_rc(2, "--kernel '99999999999999999999' must be", "emit --kernel 99999999999999999999 L2");
    expect_rc(2, "--sms '4294967297' must be an integer from 1 to", "emit --sms 4294967297 L2");
    expect_rc(2, "--seed '4294967296' must be", "check --seed 4294967296 L2");
    expect_rc(2, "--samples '-2' must be", "check --samples -2 L2");
    expect_rc(2, "--stride '0' must be", "emit --stride 0 2 4 8 16x16 3x3 1 1");
    expect_rc(2, "--pad-before '4294967296x1' must be", "emit --pad-before 4294967296x1 2 4 8 16x16 3x3 1 1");
    expect_rc(0, NULL, "emit --kernel 0 --sms 8 2 4 8 16x16 3x3 1 1"); /* in range: taken */
}

/* emit --algo fft parsed with atoi and strtof: junk was zero, overflow wrapped. */
static void test_fft_options_are_strict_numbers(void **state)
{
    (void)state;
    expect_rc(2, "--n '4294967328' must be an integer from 2 to 256", "emit --algo fft --n 4294967328");
    expect_rc(2, "--n '32abc'", "emit --algo fft --n 32abc");
    expect_rc(2, "--n 'abc'", "emit --algo fft --n abc");
    expect_rc(2, "--batch '12abc'", "emit --algo fft --n 32 --batch 12abc");
    expect_rc(2, "--scale 'abc' must be", "emit --algo fft --n 32 --scale abc");
    expect_rc(2, "--scale '1e999' must be", "emit --algo fft --n 32 --scale 1e999");
    expect_rc(2, "--kernel '-7' must be an integer from -1 to", "emit --algo fft --n 32 --kernel -7");
    expect_rc(2, "--rank '4294967297'", "emit --algo fft --n 32 --rank 4294967297");
    expect_rc(0, NULL, "emit --algo fft --n 32 --batch 12 --scale 0.5 --kernel 0");
    expect_in(out_text, "n = 32", "emit --algo fft --n 32 ...");
    /* rank 3: a DxHxW window, a plane pitch; n = 16 in one pass (one kernel), n = 32 in two (the
     * planes, then the depth pass), each re-emitted with the same command */
    expect_rc(2, "--window '5x5x5x5' must be W, HxW or DxHxW", "emit --algo fft --rank 3 --n 32 --window 5x5x5x5");
    expect_rc(2, "--rank '4' must be an integer from 1 to 3", "emit --algo fft --rank 4 --n 32");
    expect_rc(1, "n = 128: rank 3 transforms go up to n = 64", "emit --algo fft --rank 3 --n 128");
    const char *volume = "emit --algo fft --rank 3 --n 16 --batch 2 --window 5x4x3 --offset 1x2x3 --pitch 4 --plane-pitch 20";
    expect_rc(0, NULL, volume);
    expect_in(out_text, "convgen_r2c3d16_one_pass", volume);
    expect_in(out_text, "--window 5x4x3 --offset 1x2x3 --pitch 4 --plane-pitch 20", volume);
    const char *large = "emit --algo fft --rank 3 --n 32 --batch 2 --window 5x4x3 --offset 1x2x3 --pitch 4 --plane-pitch 20";
    expect_rc(0, NULL, large);
    expect_in(out_text, "convgen_r2c3d32_planes", large);
    expect_in(out_text, "convgen_r2c3d32_depth", large);
    expect_in(out_text, "--window 5x4x3 --offset 1x2x3 --pitch 4 --plane-pitch 20", large);
}

/* Both ran with no architecture at all and built nothing. */
static void test_generate_refuses_an_empty_arch_list(void **state)
{
    (void)state;
    char set[600], args[2048];
    write_file("set.txt", "T1 2 4 8 16x16 3x3 1 1 algo=direct\n", set, sizeof set);
    static const char *const lists[] = {"''", "',,,'", "sm_90,", "',sm_90'"};
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; ++i) {
        snprintf(args, sizeof args, "generate --set '%s' --out '%s/out' --ninja '%s/set.ninja' --arch %s", set, tmpdir,
                 tmpdir, lists[i]);
        expect_rc(2, "--arch", args);
    }
}

/* A layer named ../escaped wrote escaped_*.cu into the parent of --out. */
static void test_generate_writes_nothing_outside_out(void **state)
{
    (void)state;
    char set[600], args[2048], escaped[700];
    write_file("escape.txt", "../escaped 2 3 4 8x8 3x3 1 1 algo=direct\n", set, sizeof set);
    snprintf(args, sizeof args, "generate --set '%s' --out '%s/out' --ninja '%s/set.ninja'", set, tmpdir, tmpdir);
    assert_int_not_equal(convgen("%s", args), 0);
    expect_in(err_text, "layer name '../escaped'", args);
    snprintf(escaped, sizeof escaped, "%s/escaped_direct_fprop.cu", tmpdir);
    assert_int_not_equal(access(escaped, F_OK), 0);
}

/* Offline, tune measures nothing: it wrote a wisdom file of no entries, and replaced a file
 * that was not wisdom (a layer file) with it. */
static void test_offline_tune_writes_no_wisdom_and_keeps_other_files(void **state)
{
    (void)state;
    char wisdom[600], layers[600], args[2048];
    snprintf(wisdom, sizeof wisdom, "%s/new-wisdom.txt", tmpdir);
    snprintf(args, sizeof args, "tune --arch sm_90 --pass fprop --wisdom '%s' 2 4 8 16x16 3x3 1 1", wisdom);
    expect_rc(0, NULL, args);
    expect_in(out_text, "cost model", args);
    assert_int_not_equal(access(wisdom, F_OK), 0);
    const char *text = "T1 2 4 8 16x16 3x3 1 1 algo=direct\n";
    write_file("layers-not-wisdom.txt", text, layers, sizeof layers);
    snprintf(args, sizeof args, "tune --arch sm_90 --pass fprop --wisdom '%s' 2 4 8 16x16 3x3 1 1", layers);
    expect_rc(2, "is not wisdom", args);
    char kept[256];
    slurp(layers, kept, sizeof kept);
    assert_string_equal(kept, text);
}

/* The layer file of names: a device or a FIFO is refused at once (it hung, or blocked). */
static void test_layers_file_must_be_a_regular_file(void **state)
{
    (void)state;
    expect_rc(2, "not a regular file", "emit --layers /dev/zero L2");
    char fifo[600], args[700];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    snprintf(args, sizeof args, "emit --layers '%s' L2", fifo);
    expect_rc(2, "not a regular file", args);
    unlink(fifo);
}

static void test_build_verbs_refuse_unknown_words(void **state)
{
    (void)state;
    expect_rc(2, "unknown option '--arc'", "compile-kernel --arc sm_90 --name k --out k.cubin k.cu");
    expect_rc(2, "unknown option '--outt'", "embed-set --outt set.c");
}

/* convgen bench (convgen-bench, built where configure finds cuDNN): what it checks before any
 * GPU work. A name not in the layer file is an error, with CONVGEN_LAYERS honoured as by the
 * other verbs; --out creates its folder; numbers are whole; --help answers anywhere. */
static bool bench_built(void)
{
    char path[4200];
    snprintf(path, sizeof path, "%.*s/convgen-bench", (int)(strrchr(convgen_bin, '/') - convgen_bin), convgen_bin);
    if (access(path, X_OK) == 0)
        return true;
    print_message("bench tests SKIPPED: no %s (configure found no cuDNN, so the bench is not built)\n", path);
    return false;
}

static void test_bench_refuses_unknown_names_and_bad_numbers(void **state)
{
    (void)state;
    if (!bench_built())
        skip();
    expect_rc(1, "no layer named 'NOPE' in", "bench NOPE");
    char set[512], args[1200];
    write_file("one.txt", "ONLY 1 2 2 8x8 3x3 1 1\n", set, sizeof set);
    snprintf(args, sizeof args, "bench --layers '%s' L2", set); /* L2 is in bench/layers.txt, not here */
    expect_rc(1, "no layer named 'L2' in", args);
    expect_rc(2, "--runs '30abc' must be an integer", "bench --runs 30abc L2");
    expect_rc(2, "--cudnn-graph '4294967360' must be an integer from 0 to 256", "bench --cudnn-graph 4294967360");
    assert_int_equal(convgen("bench L2 --help"), 0);
    expect_in(out_text, "usage: convgen bench", "bench L2 --help");
}

static void test_bench_creates_its_out_folder(void **state)
{
    (void)state;
    if (!bench_built())
        skip();
    char out[600];
    snprintf(out, sizeof out, "%s/bench/a/b", tmpdir);
    /* with no GPU to see, the bench stops right after making the folder */
    char cmd[12000];
    snprintf(cmd, sizeof cmd, "CUDA_VISIBLE_DEVICES= CONVGEN_LAYERS='%s/bench/layers.txt' timeout 60 '%s' bench --out '%s' B1 "
             ">/dev/null 2>&1 </dev/null", CONVGEN_SOURCE_DIR, convgen_bin, out);
    int rc = system(cmd);
    if (access(out, F_OK) != 0)
        fail_msg("convgen bench --out %s (exit %d) did not create the folder", out, rc);
}

int main(void)
{
    ssize_t len = readlink("/proc/self/exe", convgen_bin, sizeof convgen_bin - 1);
    convgen_bin[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(convgen_bin, '/');
    if (slash) /* <builddir>/tests/test_cli -> <builddir>/convgen */
        *slash = '\0';
    slash = strrchr(convgen_bin, '/');
    snprintf(slash ? slash + 1 : convgen_bin, sizeof convgen_bin - (size_t)(slash ? slash + 1 - convgen_bin : 0),
             "convgen");
    snprintf(tmpdir, sizeof tmpdir, "%s/convgen-test-cli-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    unsetenv("CONVGEN_WISDOM");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_verb_answers_help),
        cmocka_unit_test(test_verbs_list_and_take_only_their_options),
        cmocka_unit_test(test_emit_fft_help_shows_the_fft_options),
        cmocka_unit_test(test_emit_pool_says_how_to_emit_it_again),
        cmocka_unit_test(test_net_prints_a_networks_arithmetic),
        cmocka_unit_test(test_infer_checks_its_arguments),
        cmocka_unit_test(test_unknown_algorithm_lists_the_algorithms),
        cmocka_unit_test(test_unknown_verb_and_option_get_did_you_mean),
        cmocka_unit_test(test_numbers_past_int_are_refused),
        cmocka_unit_test(test_fft_options_are_strict_numbers),
        cmocka_unit_test(test_generate_refuses_an_empty_arch_list),
        cmocka_unit_test(test_generate_writes_nothing_outside_out),
        cmocka_unit_test(test_offline_tune_writes_no_wisdom_and_keeps_other_files),
        cmocka_unit_test(test_layers_file_must_be_a_regular_file),
        cmocka_unit_test(test_build_verbs_refuse_unknown_words),
        cmocka_unit_test(test_bench_refuses_unknown_names_and_bad_numbers),
        cmocka_unit_test(test_bench_creates_its_out_folder),
    };
    int failed = cmocka_run_group_tests_name("cli", tests, NULL, NULL);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failed;
}
