/* Every emitted kernel says what it is: its header names the layer, the pass and its step, the
 * FLOPs, and the command that emits it again, and that command does, byte for byte. Checked on
 * every file of the build's kernel set (generated/default) and on batched FFT plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "convgen.h"

static char convgen_bin[4096];

/* The whole output of `convgen ARGS` (the words of `command` after "convgen "), malloc'ed. */
static char *run_convgen(const char *command, size_t *size)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", convgen_bin, command);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0, n;
    char *out = malloc(cap);
    while ((n = fread(out + len, 1, cap - len, p)) > 0)
        if ((len += n) == cap)
            out = realloc(out, cap *= 2);
    pclose(p);
    *size = len;
    return out;
}

static char *read_all(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return text;
}

/* The command of the header's "emitted by:" line ("emit --algo ..."), or "" without one. */
static void emit_command(const char *source, char *command, size_t size)
{
    const char *at = strstr(source, "\n * emitted by: convgen ");
    command[0] = '\0';
    if (at)
        snprintf(command, size, "%.*s", (int)strcspn(at + 24, "\n"), at + 24);
}

/* Emits the kernel again from its command; true when the bytes match. */
static bool emits_again(const char *source, size_t size, const char *what)
{
    char command[4096];
    emit_command(source, command, sizeof command);
    size_t again_size;
    char *again = run_convgen(command, &again_size);
    bool same = again_size == size && memcmp(again, source, size) == 0;
    if (!same)
        print_message("%s: 'convgen %s' emits %zu bytes, not the %zu of the file\n", what, command, again_size, size);
    free(again);
    return same;
}

/* The build's kernel set: the sources its compile edges name (BUILDDIR/kernel_set.ninja), so
 * files left in generated/default by an earlier configuration do not count. */
static void test_every_kernel_of_the_set_says_what_it_is_and_emits_again(void **state)
{
    (void)state;
    char edges[4200];
    snprintf(edges, sizeof edges, "%.*s/kernel_set.ninja", (int)(strrchr(convgen_bin, '/') - convgen_bin), convgen_bin);
    FILE *f = fopen(edges, "r");
    if (!f) {
        print_message("no %s: the build has not planned its kernel set\n", edges);
        skip();
    }
    static const char *const lines[] = {"\n * layer: ", "\n * pass: ", "\n * FLOPs: ", "\n * emitted by: convgen emit "};
    int files = 0, lacking = 0, differing = 0;
    char line[8192];
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, ": compile_kernel ");
        char path[4096];
        if (!at || sscanf(at + 17, "%4095s", path) != 1)
            continue;
        size_t size;
        char *source = read_all(path, &size);
        const char *name = strrchr(path, '/') + 1;
        ++files;
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; ++i)
            if (!strstr(source, lines[i])) {
                print_message("%s: the header has no '%s' line\n", name, lines[i] + 4);
                ++lacking;
            }
        const char *second = strstr(source, "\n * emitted by: ");
        if (second && strstr(second + 1, "\n * emitted by: ")) {
            print_message("%s: the header has two 'emitted by:' lines\n", name);
            ++lacking;
        }
        differing += !emits_again(source, size, name);
        free(source);
    }
    fclose(f);
    print_message("%d kernels of the set: %d header lines missing or doubled, %d emitted differently\n", files, lacking,
                  differing);
    assert_true(files > 0);
    assert_int_equal(lacking, 0);
    assert_int_equal(differing, 0);
}

/* Batched FFT plans of every type, rank, layout and order, with windows, offsets, strides and a
 * scale: each kernel's command emits it again. */
static void test_fft_plans_emit_again(void **state)
{
    (void)state;
    const convgen_fft_desc descs[] = {
        {.rank = 2, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 128, .channels = 64, .window = {27, 27}},
        {.rank = 2, .n = 64, .type = CONVGEN_FFT_C2R, .batch = 3, .window = {20, 30}, .offset = {5, 7}, .scale = 0.125f,
         .layout = CONVGEN_FFT_LAYOUT_TRANSPOSED, .order = CONVGEN_FFT_ORDER_NATURAL},
        {.rank = 1, .n = 48, .type = CONVGEN_FFT_R2C, .batch = 5, .channels = 2, .real_stride = {200, 64},
         .spectrum_stride = {100, 25}},
        {.rank = 1, .n = 16, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_INVERSE, .batch = 7, .scale = 1.0f / 3},
        {.rank = 2, .n = 256, .type = CONVGEN_FFT_R2C, .batch = 2},
    };
    int kernels = 0;
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; ++i)
        for (int k = 0;; ++k) {
            char *source;
            if (convgen_emit_fft(&descs[i], k, &source) != CONVGEN_SUCCESS)
                break;
            char what[64];
            snprintf(what, sizeof what, "FFT plan %zu kernel %d", i, k);
            const char *first = strstr(source, "\n * emitted by: ");
            assert_true(first && !strstr(first + 1, "\n * emitted by: "));
            assert_true(emits_again(source, strlen(source), what));
            free(source);
            ++kernels;
        }
    print_message("%d FFT kernels emitted again\n", kernels);
    assert_true(kernels >= (int)(sizeof descs / sizeof descs[0]));
}

int main(void)
{
    /* <builddir>/tests/test_headers -> <builddir>/convgen */
    ssize_t len = readlink("/proc/self/exe", convgen_bin, sizeof convgen_bin - 16);
    convgen_bin[len > 0 ? len : 0] = '\0';
    for (int up = 0; up < 2; ++up) {
        char *slash = strrchr(convgen_bin, '/');
        if (slash)
            *slash = '\0';
    }
    strcat(convgen_bin, "/convgen");
    unsetenv("CONVGEN_TEMPLATE_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kernel_of_the_set_says_what_it_is_and_emits_again),
        cmocka_unit_test(test_fft_plans_emit_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
