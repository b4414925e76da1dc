/* Layer lines: the bench file's format, parsed into problems. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_with_name_and_note_parses_every_field),
        cmocka_unit_test(test_three_dimensional_layer_has_rank_three),
        cmocka_unit_test(test_comment_and_blank_lines_are_not_layers),
        cmocka_unit_test(test_bad_words_are_named),
        cmocka_unit_test(test_the_bench_layer_file_parses_and_validates),
        cmocka_unit_test(test_missing_file_is_an_io_error_naming_it),
    };
    return cmocka_run_group_tests_name("layer", tests, NULL, NULL);
}
