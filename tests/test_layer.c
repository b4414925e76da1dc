/* Layer lines: the bench file's format, parsed into problems. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer.h"
#include "problem.h"

static void test_line_with_name_and_note_parses_every_field(void **state)
{
    (void)state;
    cg_layer l;
    int is_layer;
    assert_int_equal(cg_layer_parse_line("G1     32    3   64  224x224    7x7   3 2  ResNet stem\n", &l, &is_layer),
                     CONVGEN_SUCCESS);
    assert_true(is_layer);
    assert_string_equal(l.name, "G1");
    assert_string_equal(l.note, "ResNet stem");
    assert_int_equal(l.desc.rank, 2);
    assert_int_equal(l.desc.n, 32);
    assert_int_equal(l.desc.c, 3);
    assert_int_equal(l.desc.k, 64);
    assert_int_equal(l.desc.in[0], 224);
    assert_int_equal(l.desc.in[1], 224);
    assert_int_equal(l.desc.kernel[1], 7);
    assert_int_equal(l.desc.pad_before[1], 3);
    assert_int_equal(l.desc.pad_after[0], 3);
    assert_int_equal(l.desc.stride[0], 2);
    assert_int_equal(l.desc.dilation[1], 1);
}

static void test_three_dimensional_layer_has_rank_three(void **state)
{
    (void)state;
    cg_layer l;
    int is_layer;
    assert_int_equal(cg_layer_parse_line("Z5 1 80 80 48x48x48 5x5x5 0 1", &l, &is_layer), CONVGEN_SUCCESS);
    assert_int_equal(l.desc.rank, 3);
    assert_int_equal(l.desc.in[2], 48);
    assert_int_equal(l.desc.kernel[0], 5);
}

static void test_comment_and_blank_lines_are_not_layers(void **state)
{
    (void)state;
    cg_layer l;
    int is_layer = 1;
    assert_int_equal(cg_layer_parse_line("# name n c k\n", &l, &is_layer), CONVGEN_SUCCESS);
    assert_false(is_layer);
    assert_int_equal(cg_layer_parse_line("   \n", &l, &is_layer), CONVGEN_SUCCESS);
    assert_false(is_layer);
}

static void test_bad_words_are_named(void **state)
{
    (void)state;
    cg_layer l;
    int is_layer;
    assert_int_equal(cg_layer_parse_line("X 1 2 three 8x8 3x3 0 1", &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "layer k = 'three'"));
    assert_int_equal(cg_layer_parse_line("X 1 2 3 8x8 3x3x3 0 1", &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "layer kernel = '3x3x3'"));
    assert_int_equal(cg_layer_parse_line("X 1 2 3 8y8 3x3 0 1", &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "layer input = '8y8'"));
    assert_int_equal(cg_layer_parse_line("X 1 2 3 8x8 3x3 0", &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "7 words"));
}

static void test_the_bench_layer_file_parses_and_validates(void **state)
{
    (void)state;
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    assert_true(count >= 30);
    for (int i = 0; i < count; ++i) {
        cg_problem p;
        assert_int_equal(cg_problem_init(&p, &layers[i].desc), CONVGEN_SUCCESS);
    }
    assert_string_equal(layers[0].name, "L1");
    free(layers);
}

static void test_missing_file_is_an_io_error_naming_it(void **state)
{
    (void)state;
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file("/nonexistent/layers.txt", &layers, &count), CONVGEN_ERROR_IO);
    assert_non_null(strstr(convgen_last_error(), "/nonexistent/layers.txt"));
    assert_null(layers);
}

/* A file of `text` in a fresh temporary folder; its path into `path`. */
static void write_temp_file(char *path, size_t size, const char *name, const char *text)
{
    char dir[256];
    snprintf(dir, sizeof dir, "%s/convgen-test-layer-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    assert_non_null(mkdtemp(dir));
    snprintf(path, size, "%s/%s", dir, name);
    if (!text)
        return;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void remove_temp_file(const char *path)
{
    unlink(path);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", path);
    *strrchr(dir, '/') = '\0';
    rmdir(dir);
}

/* A line of any length is one line: a layer spread over 3000 bytes parses, and an error after
 * it names the line it is on (a 1023-byte reader split the long line in two). */
static void test_long_line_is_one_line_and_errors_name_the_true_line(void **state)
{
    (void)state;
    char text[4096], path[512];
    snprintf(text, sizeof text, "# long\nL9%3000s1 2 3 8x8 3x3 1 1\n", "");
    write_temp_file(path, sizeof path, "long.txt", text);
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file(path, &layers, &count), CONVGEN_SUCCESS);
    assert_int_equal(count, 1);
    assert_string_equal(layers[0].name, "L9");
    assert_int_equal(layers[0].desc.k, 3);
    free(layers);
    remove_temp_file(path);
    snprintf(text + strlen(text), sizeof text - strlen(text), "X 1 2 three 8x8 3x3 0 1\n");
    write_temp_file(path, sizeof path, "long.txt", text);
    assert_int_equal(cg_layer_read_file(path, &layers, &count), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "long.txt:3: "));
    assert_null(layers);
    remove_temp_file(path);
}

/* Two names that share 31 characters were cut to one, the second layer unreachable. */
static void test_over_long_name_is_rejected(void **state)
{
    (void)state;
    cg_layer l;
    int is_layer;
    assert_int_equal(cg_layer_parse_line("abcdefghijklmnopqrstuvwxyz01234 1 2 3 8x8 3x3 0 1", &l, &is_layer),
                     CONVGEN_SUCCESS);
    assert_string_equal(l.name, "abcdefghijklmnopqrstuvwxyz01234");
    assert_int_equal(cg_layer_parse_line("abcdefghijklmnopqrstuvwxyz012345 1 2 3 8x8 3x3 0 1", &l, &is_layer),
                     CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "'abcdefghijklmnopqrstuvwxyz012345'"));
    assert_non_null(strstr(convgen_last_error(), "31"));
}

/* Names become file names (convgen generate): "../x" would write outside the folder. */
static void test_names_are_identifiers(void **state)
{
    (void)state;
    static const char *const bad[] = {"../escaped", "a/b", ".hidden", "a\\b", "x$y", "x:y", "-a", "+a"};
    cg_layer l;
    int is_layer;
    char line[128];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(line, sizeof line, "%s 2 3 4 8x8 3x3 1 1 algo=direct", bad[i]);
        assert_int_equal(cg_layer_parse_line(line, &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
        assert_non_null(strstr(convgen_last_error(), "layer name"));
    }
    assert_int_equal(cg_layer_parse_line("_ok-name_1.2 2 3 4 8x8 3x3 1 1", &l, &is_layer), CONVGEN_SUCCESS);
    assert_string_equal(l.name, "_ok-name_1.2");
}

/* Every number of a line: digits only, in range, overflow refused (not wrapped or cut). */
static void test_numbers_are_strict_and_in_range(void **state)
{
    (void)state;
    static const struct { const char *line, *says; } bad[] = {
        {"X 99999999999999999999 2 3 8x8 3x3 0 1", "layer n = '99999999999999999999'"},
        {"X 0 2 3 8x8 3x3 0 1", "layer n = '0' must be an integer from 1 to 2147483647"},
        {"X 1 2 4294967296 8x8 3x3 0 1", "layer k = '4294967296'"},
        {"X 1 2 3 8x8 3x3 -1 1", "layer pad = '-1' must be an integer from 0 to 2147483647"},
        {"X 1 2 3 8x8 3x3 0 0", "layer stride = '0'"},
        {"X 1 2 3 8x8 3x3 0 +1", "layer stride = '+1'"},
        {"X 1 2 3 8x0 3x3 0 1", "layer input = '8x0'"},
        {"X 1 2 3 8x4294967297 3x3 0 1", "layer input = '8x4294967297'"},
        {"X 1 2 3 8x8 3x3abc 0 1", "layer kernel = '3x3abc'"},
        {"X 1 2 3 8x8 0x3 0 1", "layer kernel = '0x3'"},
    };
    cg_layer l;
    int is_layer;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        assert_int_equal(cg_layer_parse_line(bad[i].line, &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
        if (!strstr(convgen_last_error(), bad[i].says))
            fail_msg("'%s': the error '%s' does not say '%s'", bad[i].line, convgen_last_error(), bad[i].says);
    }
}

/* The integer parser every reader of numbers shares (the CLI's options too). */
static void test_integer_parser_refuses_junk_overflow_and_range(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_true(cg_parse_integer("-1", -1, 5, &v));
    assert_int_equal(v, -1);
    assert_true(cg_parse_integer("2147483647", 0, INT32_MAX, &v));
    assert_int_equal(v, INT32_MAX);
    static const char *const junk[] = {"", "-", "32abc", " 3", "3 ", "+3", "0x10", "4294967298",
                                       "99999999999999999999", "-7", "6"};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; ++i)
        if (cg_parse_integer(junk[i], -1, i + 2 < sizeof junk / sizeof junk[0] ? INT32_MAX : 5, &v))
            fail_msg("'%s' was taken as %lld", junk[i], (long long)v);
}

/* Words past what a line may hold, and a note past what a layer keeps, are errors, not cut. */
static void test_nothing_is_silently_cut(void **state)
{
    (void)state;
    char line[2048] = "X 1 2 3 8x8 3x3 0 1";
    cg_layer l;
    int is_layer;
    for (int i = 0; i < 70; ++i)
        strcat(line, " w");
    assert_int_equal(cg_layer_parse_line(line, &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    snprintf(line, sizeof line, "X 1 2 3 8x8 3x3 0 1 %0200d", 7);
    assert_int_equal(cg_layer_parse_line(line, &l, &is_layer), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "note"));
}

/* /dev/zero hung the reader (an endless line of NULs) and a FIFO blocked it in open. */
static void test_devices_and_fifos_are_refused_at_once(void **state)
{
    (void)state;
    cg_layer *layers;
    int count;
    alarm(20); /* a hang is a failure */
    assert_int_equal(cg_layer_read_file("/dev/zero", &layers, &count), CONVGEN_ERROR_IO);
    assert_non_null(strstr(convgen_last_error(), "/dev/zero"));
    assert_non_null(strstr(convgen_last_error(), "not a regular file"));
    char path[512];
    write_temp_file(path, sizeof path, "fifo", NULL);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_int_equal(cg_layer_read_file(path, &layers, &count), CONVGEN_ERROR_IO);
    assert_non_null(strstr(convgen_last_error(), "not a regular file"));
    remove_temp_file(path);
    alarm(0);
}

/* A NUL byte is not text: the line it is on is named. */
static void test_nul_byte_is_an_error_naming_its_line(void **state)
{
    (void)state;
    char path[512];
    write_temp_file(path, sizeof path, "nul.txt", "L1 1 2 3 8x8 3x3 0 1\nL2 1 2 3 8x8 3x3 0 1\n");
    FILE *f = fopen(path, "a");
    assert_non_null(f);
    fwrite("L3 1\0 2 3 8x8 3x3 0 1\n", 1, 22, f);
    fclose(f);
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file(path, &layers, &count), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "nul.txt:3: "));
    remove_temp_file(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_with_name_and_note_parses_every_field),
        cmocka_unit_test(test_three_dimensional_layer_has_rank_three),
        cmocka_unit_test(test_comment_and_blank_lines_are_not_layers),
        cmocka_unit_test(test_bad_words_are_named),
        cmocka_unit_test(test_the_bench_layer_file_parses_and_validates),
        cmocka_unit_test(test_missing_file_is_an_io_error_naming_it),
        cmocka_unit_test(test_long_line_is_one_line_and_errors_name_the_true_line),
        cmocka_unit_test(test_over_long_name_is_rejected),
        cmocka_unit_test(test_names_are_identifiers),
        cmocka_unit_test(test_numbers_are_strict_and_in_range),
        cmocka_unit_test(test_integer_parser_refuses_junk_overflow_and_range),
        cmocka_unit_test(test_nothing_is_silently_cut),
        cmocka_unit_test(test_devices_and_fifos_are_refused_at_once),
        cmocka_unit_test(test_nul_byte_is_an_error_naming_its_line),
    };
    return cmocka_run_group_tests_name("layer", tests, NULL, NULL);
}
