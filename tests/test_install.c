/* The installed convgen as an application meets it: tools/install.sh into a prefix under a
 * temporary folder, the installed CLI generates the application's own kernel set (a layer the
 * library's set lacks), and a program of app.c and that set is built from the installed header
 * with the installed convgen.pc, linked shared and static (pkg-config --static: what libconvgen.a
 * needs), and run with no LD_LIBRARY_PATH. Offline for sm_90, it registers its set and plans the
 * layer's three passes with DIRECT: every kernel comes from the kernel set; without registering,
 * from NVRTC. The programs are built with the build's compiler and sanitizers
 * (CONVGEN_TEST_CC), which a sanitized libconvgen needs. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CONVGEN_TEST_CC
#define CONVGEN_TEST_CC "cc"
#endif

static char tmpdir[256], root[4096], builddir[4096], prefix[512];

/* The application: argv[1] "register" registers app_set first; prints one line per kernel,
 * "KERNEL_SET name (origin N)" or "OTHER name (origin N)". */
static const char app_c[] =
    "#include <convgen.h>\n"
    "#include <stdio.h>\n"
    "#include <string.h>\n"
    "\n"
    "extern const convgen_kernel_set app_set;\n"
    "\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "    if (argc > 1 && strcmp(argv[1], \"register\") == 0 && convgen_kernel_set_register(&app_set)) {\n"
    "        fprintf(stderr, \"register: %s\\n\", convgen_last_error());\n"
    "        return 1;\n"
    "    }\n"
    "    convgen_context_options o = {.offline = 1, .arch = \"sm_90\", .disk_cache = -1};\n"
    "    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 4, .k = 8, .in = {10, 10}, .kernel = {3, 3},\n"
    "                           .pad_before = {1, 1}, .pad_after = {1, 1}};\n"
    "    convgen_context *ctx;\n"
    "    if (convgen_context_create(&o, &ctx)) {\n"
    "        fprintf(stderr, \"context: %s\\n\", convgen_last_error());\n"
    "        return 1;\n"
    "    }\n"
    "    for (int pass = 0; pass < 3; ++pass) {\n"
    "        convgen_plan *plan;\n"
    "        if (convgen_plan_conv(ctx, &d, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, &plan)) {\n"
    "            fprintf(stderr, \"plan: %s\\n\", convgen_last_error());\n"
    "            return 1;\n"
    "        }\n"
    "        for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {\n"
    "            convgen_kernel_info info;\n"
    "            if (convgen_plan_kernel_info(plan, i, &info))\n"
    "                return 1;\n"
    "            printf(\"%s %s (origin %d)\\n\", info.origin == CONVGEN_FROM_KERNEL_SET ? \"KERNEL_SET\" : \"OTHER\",\n"
    "                   info.name, (int)info.origin);\n"
    "        }\n"
    "        convgen_plan_destroy(plan);\n"
    "    }\n"
    "    convgen_context_destroy(ctx);\n"
    "    return 0;\n"
    "}\n";

/* Runs `cmd` (sh) in tmpdir with the installed convgen.pc on PKG_CONFIG_PATH, no disk cache
 * and no LD_LIBRARY_PATH; its output into *out (malloc'ed). Returns its exit status. */
static int run(char **out, const char *fmt, ...)
{
    char cmd[8192], body[6144], log[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    snprintf(log, sizeof log, "%s/run.log", tmpdir);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && unset LD_LIBRARY_PATH CONVGEN_KERNEL_SET CONVGEN_WISDOM && "
             "export PKG_CONFIG_PATH='%s/lib/pkgconfig' CONVGEN_CACHE_DIR=off && (%s) >'%s' 2>&1",
             tmpdir, prefix, body, log);
    int rc = system(cmd);
    FILE *f = fopen(log, "r");
    *out = calloc(1, 1 << 16);
    if (f) {
        size_t n = fread(*out, 1, (1 << 16) - 1, f);
        (*out)[n] = '\0';
        fclose(f);
    }
    return rc;
}

#define RUN_OK(...)                                                                                                    \
    do {                                                                                                               \
        char *log_;                                                                                                    \
        if (run(&log_, __VA_ARGS__) != 0)                                                                              \
            fail_msg("failed: %s\n%s", #__VA_ARGS__, log_);                                                            \
        free(log_);                                                                                                    \
    } while (0)

static void test_install_puts_everything_in_the_prefix(void **state)
{
    (void)state;
    RUN_OK("cd '%s' && sh '%s/tools/install.sh' '%s' '%s' '%s' sm_90", root, CONVGEN_SOURCE_DIR, CONVGEN_SOURCE_DIR,
           builddir, prefix);
    const char *files[] = {"include/convgen.h", "lib/libconvgen.a", "lib/libconvgen.so.0", "lib/libconvgen.so",
                           "bin/convgen", "lib/pkgconfig/convgen.pc"};
    for (size_t i = 0; i < sizeof files / sizeof *files; ++i) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", prefix, files[i]);
        if (access(path, R_OK) != 0)
            fail_msg("%s was not installed", path);
    }
    char *libs;
    assert_int_equal(run(&libs, "pkg-config --libs convgen"), 0);
    print_message("pkg-config --libs convgen: %s", libs);
    assert_non_null(strstr(libs, "-Wl,-rpath,")); /* a prefix outside /usr */
    free(libs);
}

/* The installed Python package imports from the prefix alone (no CONVGEN_LIBRARY, no source
 * tree on its path) and plans offline through the installed library. */
static void test_installed_python_package_finds_its_library(void **state)
{
    (void)state;
    char *where;
    if (run(&where, "command -v python3") != 0) {
        free(where);
        skip(); /* install.sh says it skipped the package */
    }
    free(where);
    RUN_OK("unset CONVGEN_LIBRARY PYTHONPATH && export PYTHONPATH=$(cat '%s/share/convgen/python-path') && "
           "cd / && python3 -c 'import convgen, sys; assert convgen._lib.lib._name.startswith(sys.argv[1]), "
           "convgen._lib.lib._name; c = convgen.Context(offline=True, arch=\"sm_90\", disk_cache=False); "
           "print(c.plan_conv(convgen.Conv(n=1, c=2, k=3, input=(8, 8), kernel=(3, 3)), \"fprop\", "
           "\"direct\").kernels[0].name)' '%s'",
           prefix, prefix);
}

/* The application's set, from the installed CLI: a layer the library's own set lacks. */
static void test_installed_cli_embeds_a_set(void **state)
{
    (void)state;
    RUN_OK("echo 'A1 2 4 8 10x10 3x3 1 1 algo=direct' > app_layers.txt && "
           "'%s/bin/convgen' generate --set app_layers.txt --arch sm_90 --out app_src --embed app_set.c",
           prefix);
    char *text;
    assert_int_equal(run(&text, "cat app_set.c"), 0);
    assert_non_null(strstr(text, "#include <convgen.h>"));
    assert_null(strstr(text, "kernel_set.h"));
    assert_non_null(strstr(text, "const convgen_kernel_set app_set = {"));
    free(text);
}

/* Each line of the app's output says KERNEL_SET (want_set) or not. */
static void assert_origins(const char *binary, const char *arg, bool want_set)
{
    char *out;
    if (run(&out, "./%s %s", binary, arg) != 0)
        fail_msg("./%s %s failed:\n%s", binary, arg, out);
    int kernels = 0, from_set = 0;
    for (const char *line = out; *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : line + strlen(line))
        kernels += strncmp(line, "KERNEL_SET ", 11) == 0 || strncmp(line, "OTHER ", 6) == 0,
            from_set += strncmp(line, "KERNEL_SET ", 11) == 0;
    print_message("./%s %s: %d kernels, %d from the kernel set\n%s", binary, arg, kernels, from_set, out);
    assert_true(kernels >= 3);
    if (from_set != (want_set ? kernels : 0))
        fail_msg("./%s %s:\n%s", binary, arg, out);
    free(out);
}

static void test_app_links_shared_with_its_set(void **state)
{
    (void)state;
    RUN_OK("%s -std=c17 -Wall -Werror -o app_shared app.c app_set.c $(pkg-config --cflags --libs convgen)",
           CONVGEN_TEST_CC);
    assert_origins("app_shared", "register", true);
    assert_origins("app_shared", "", false); /* the set is what served them */
}

static void test_app_links_static_with_its_set(void **state)
{
    (void)state;
    RUN_OK("%s -std=c17 -Wall -Werror -o app_static app.c app_set.c $(pkg-config --cflags convgen) "
           "'%s/lib/libconvgen.a' $(pkg-config --static --libs convgen)", CONVGEN_TEST_CC, prefix);
    assert_origins("app_static", "register", true);
}

int main(void)
{
    /* <root>/build/tests/test_install: the build folder and the folder of build.ninja */
    ssize_t len = readlink("/proc/self/exe", builddir, sizeof builddir - 1);
    builddir[len > 0 ? len : 0] = '\0';
    for (int up = 0; up < 2; ++up)
        if (strrchr(builddir, '/'))
            *strrchr(builddir, '/') = '\0';
    snprintf(root, sizeof root, "%s", builddir);
    if (strrchr(root, '/'))
        *strrchr(root, '/') = '\0';
    snprintf(tmpdir, sizeof tmpdir, "%s/convgen-test-install-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(prefix, sizeof prefix, "%s/prefix", tmpdir);
    char path[600];
    snprintf(path, sizeof path, "%s/app.c", tmpdir);
    FILE *f = fopen(path, "w");
    if (!f || fputs(app_c, f) < 0 || fclose(f) != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_install_puts_everything_in_the_prefix),
        cmocka_unit_test(test_installed_python_package_finds_its_library),
        cmocka_unit_test(test_installed_cli_embeds_a_set),
        cmocka_unit_test(test_app_links_shared_with_its_set),
        cmocka_unit_test(test_app_links_static_with_its_set),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (failed == 0 && system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failed;
}
