/* Tests of where template text comes from (generator/templates.h): the embedded copies and the
 * edited ones of CONVGEN_TEMPLATE_DIR, with what goes wrong there: an empty override, a NUL
 * byte, many overrides in one render, errors in an override, a folder that is not one, and an
 * override that is not a regular file (a folder, a FIFO that must not block the render). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "templates.h"
#include "util.h"

static char dir[64];
static int warnings;
static char last_warning[1024];

static void capture_log(convgen_log_level level, const char *message, void *user)
{
    (void)user;
    if (level != CONVGEN_LOG_WARNING)
        return;
    ++warnings;
    snprintf(last_warning, sizeof last_warning, "%s", message);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/cg-test-templates-XXXXXX");
    if (!mkdtemp(dir))
        return -1;
    setenv("CONVGEN_TEMPLATE_DIR", dir, 1);
    warnings = 0;
    last_warning[0] = '\0';
    convgen_set_log_callback(capture_log, NULL);
    alarm(30); /* a render that blocks (on a FIFO) fails the suite instead of hanging it */
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
    alarm(0);
    unsetenv("CONVGEN_TEMPLATE_DIR");
    convgen_set_log_callback(NULL, NULL);
    return nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Writes `size` bytes of `text` to DIR/name. */
static void put(const char *name, const char *text, size_t size)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, size, f), size);
    assert_int_equal(fclose(f), 0);
}

static void put_text(const char *name, const char *text) { put(name, text, strlen(text)); }

static tmpl_value *spin_ctx(void)
{
    tmpl_value *ctx = tmpl_map();
    tmpl_set_str(ctx, "kernel_name", "spin");
    return ctx;
}

/* Renders `name` and expects success; returns the output. */
static char *render_ok(const char *name, const tmpl_value *ctx)
{
    char *out = NULL;
    convgen_status s = cg_render_template(name, ctx, &out);
    if (s != CONVGEN_SUCCESS)
        fail_msg("render of %s failed: %s", name, convgen_last_error());
    assert_non_null(out);
    return out;
}

static void expect_render_error(const char *name, const char *want_start)
{
    char *out = (char *)"untouched";
    assert_int_equal(cg_render_template(name, NULL, &out), CONVGEN_ERROR_TEMPLATE);
    assert_null(out);
    if (strncmp(convgen_last_error(), want_start, strlen(want_start)) != 0)
        fail_msg("error '%s' does not start with '%s'", convgen_last_error(), want_start);
}

static void test_override_that_renders_to_nothing_gives_an_empty_source(void **state)
{
    (void)state;
    put_text("bench_spin.cu", ""); /* ": > DIR/bench_spin.cu" */
    tmpl_value *ctx = spin_ctx();
    char *out = render_ok("bench_spin.cu", ctx);
    assert_string_equal(out, "");
    free(out);
    put_text("bench_spin.cu", "{# all comment #}");
    out = render_ok("bench_spin.cu", ctx);
    assert_string_equal(out, "");
    free(out);
    tmpl_unref(ctx);
}

static void test_override_with_a_nul_byte_is_an_error_naming_the_file(void **state)
{
    (void)state;
    put("bench_spin.cu", "ok\0{{ kernel_name }}", 20);
    char want[256];
    snprintf(want, sizeof want, "template bench_spin.cu cannot be used: %s/bench_spin.cu has a NUL byte at offset 2",
             dir);
    expect_render_error("bench_spin.cu", want);
    /* included: the error points at the include and names the file */
    put_text("main.cu", "a\n{% include 'inc.cuh' %}");
    put("inc.cuh", "x\0y", 3);
    snprintf(want, sizeof want, "%s/main.cu:2:12: template 'inc.cuh' cannot be used: %s/inc.cuh has a NUL byte at "
             "offset 1", dir, dir);
    expect_render_error("main.cu", want);
}

/* There used to be 16 override texts a render; the 17th fell back to the embedded copy (none
 * here: "not found"). Twenty in a row and a chain of twenty nested includes all come from DIR. */
static void test_twenty_overrides_in_one_render_all_come_from_the_folder(void **state)
{
    (void)state;
    cg_buf main_text = {0}, want = {0};
    char name[32], text[64];
    for (int i = 0; i < 20; ++i) {
        snprintf(name, sizeof name, "row%d.cuh", i);
        snprintf(text, sizeof text, "[%d]", i);
        put_text(name, text);
        cg_buf_printf(&main_text, "{%% include 'row%d.cuh' %%}{%% include 'row%d.cuh' %%}", i, i);
        cg_buf_printf(&want, "[%d][%d]", i, i);
        snprintf(name, sizeof name, "chain%d.cuh", i);
        if (i < 19)
            snprintf(text, sizeof text, "<%d{%% include 'chain%d.cuh' %%}>", i, i + 1);
        else
            snprintf(text, sizeof text, "<%d>", i);
        put_text(name, text);
    }
    cg_buf_puts(&main_text, "{% include 'chain0.cuh' %}");
    cg_buf_puts(&want, "<0<1<2<3<4<5<6<7<8<9<10<11<12<13<14<15<16<17<18<19>>>>>>>>>>>>>>>>>>>>");
    put_text("main.cu", main_text.data);
    char *out = render_ok("main.cu", NULL);
    assert_string_equal(out, want.data);
    free(out);
    cg_buf_free(&main_text);
    cg_buf_free(&want);
}

static void test_error_in_an_override_names_its_path_and_line(void **state)
{
    (void)state;
    put_text("main.cu", "one\ntwo\n{% include 'bad.cuh' %}");
    put_text("bad.cuh", "x\ny\n  {{ nope }}");
    char want[256];
    snprintf(want, sizeof want, "%s/bad.cuh:3:6: unknown variable 'nope'", dir);
    expect_render_error("main.cu", want);
    put_text("main.cu", "one\n{{ 1 + }}");
    snprintf(want, sizeof want, "%s/main.cu:2:", dir);
    expect_render_error("main.cu", want);
}

static void test_template_dir_that_is_not_a_folder_is_warned_about_once(void **state)
{
    (void)state;
    char missing[128];
    snprintf(missing, sizeof missing, "%s/no-such-folder", dir);
    setenv("CONVGEN_TEMPLATE_DIR", missing, 1);
    tmpl_value *ctx = spin_ctx();
    for (int i = 0; i < 3; ++i) {
        char *out = render_ok("bench_spin.cu", ctx); /* the embedded copy */
        assert_non_null(strstr(out, "spin(unsigned long long ns)"));
        free(out);
    }
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, missing));
    put_text("plain-file", "x");
    snprintf(missing, sizeof missing, "%s/plain-file", dir);
    setenv("CONVGEN_TEMPLATE_DIR", missing, 1);
    for (int i = 0; i < 2; ++i)
        free(render_ok("bench_spin.cu", ctx));
    assert_int_equal(warnings, 2);
    assert_non_null(strstr(last_warning, "not a directory"));
    tmpl_unref(ctx);
}

/* A folder or a FIFO where an override would be: warned about once, the embedded copy serves,
 * and the FIFO (no writer) neither blocks the render nor is read. */
static void test_override_that_is_not_a_regular_file_is_warned_about_and_skipped(void **state)
{
    (void)state;
    char path[256];
    snprintf(path, sizeof path, "%s/bench_spin.cu", dir);
    assert_int_equal(mkfifo(path, 0644), 0);
    tmpl_value *ctx = spin_ctx();
    for (int i = 0; i < 2; ++i) {
        char *out = render_ok("bench_spin.cu", ctx);
        assert_non_null(strstr(out, "spin(unsigned long long ns)"));
        free(out);
    }
    assert_int_equal(warnings, 1);
    assert_non_null(strstr(last_warning, path));
    assert_non_null(strstr(last_warning, "not a regular file"));
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0755), 0);
    free(render_ok("bench_spin.cu", ctx));
    free(render_ok("bench_spin.cu", ctx));
    assert_int_equal(warnings, 1); /* once per path and process: this one was warned about */
    snprintf(path, sizeof path, "%s/common.cuh", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    put_text("main.cu", "{% include 'common.cuh' %}{{ times('x', 1) }}");
    char *out = render_ok("main.cu", NULL);
    assert_string_equal(out, "x");
    free(out);
    assert_int_equal(warnings, 2);
    assert_non_null(strstr(last_warning, path));
    tmpl_unref(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_override_that_renders_to_nothing_gives_an_empty_source, setup, teardown),
        cmocka_unit_test_setup_teardown(test_override_with_a_nul_byte_is_an_error_naming_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(test_twenty_overrides_in_one_render_all_come_from_the_folder, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_in_an_override_names_its_path_and_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_template_dir_that_is_not_a_folder_is_warned_about_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_override_that_is_not_a_regular_file_is_warned_about_and_skipped, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
