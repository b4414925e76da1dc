/* Build-time kernel sets, on the CPU: the library's own set (configure --kernel-set, embedded by
 * the build) serves AUTO's choice for a bench layer without NVRTC, the build compiled it through
 * one ninja edge per kernel, and `convgen generate` builds
 * a small set: sources with their headers, a compile report without local memory, an embedded
 * table; run again it compiles nothing and rewrites no source; after a template edit it
 * recompiles exactly the kernels whose source the edit changed. */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convgen.h"
#include "kernel_set.h"

static char tmpdir[256], convgen_bin[4096];

static void test_library_set_serves_auto(void **state)
{
    (void)state;
    if (cg_kernel_set.count == 0 || !cg_kernel_set.wisdom[0])
        skip(); /* configured with an empty set or without wisdom */
    convgen_context *ctx;
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    if (convgen_context_create(&o, &ctx) != CONVGEN_SUCCESS)
        skip();
    /* R4 of bench/layers.txt, whose choice the shipped wisdom holds for sm_90 */
    const convgen_conv_desc r4 = {.rank = 2, .n = 32, .c = 512, .k = 512, .in = {7, 7}, .kernel = {3, 3},
                                  .pad_before = {1, 1}, .pad_after = {1, 1}};
    for (int pass = 0; pass < 3; ++pass) {
        convgen_plan *plan;
        convgen_choice ch;
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_conv(ctx, &r4, (convgen_pass)pass, CONVGEN_ALGO_AUTO, &plan), CONVGEN_SUCCESS);
        assert_int_equal(convgen_plan_choice(plan, &ch), CONVGEN_SUCCESS);
        assert_int_equal(ch.chosen_by, CONVGEN_CHOSEN_BY_WISDOM);
        for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {
            assert_int_equal(convgen_plan_kernel_info(plan, i, &info), CONVGEN_SUCCESS);
            if (info.origin != CONVGEN_FROM_KERNEL_SET)
                fail_msg("R4 %s: %s's kernel %s came from %d, not the kernel set", convgen_pass_name((convgen_pass)pass),
                         convgen_algo_name(ch.algo), info.name, (int)info.origin);
        }
        print_message("R4 %-8s %s from the kernel set (%d kernels)\n", convgen_pass_name((convgen_pass)pass),
                      convgen_algo_name(ch.algo), convgen_plan_kernel_count(plan));
        convgen_plan_destroy(plan);
    }
    convgen_context_destroy(ctx);
}

/* The build's set is ninja's: one compile edge per kernel and architecture, each from a source in
 * generated/default that exists, and the edge that embeds them. */
static void test_build_writes_edges_per_kernel(void **state)
{
    (void)state;
    if (cg_kernel_set.count == 0)
        skip();
    char path[4200];
    snprintf(path, sizeof path, "%.*s/kernel_set.ninja", (int)(strrchr(convgen_bin, '/') - convgen_bin), convgen_bin);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("no %s: the build writes the kernel set's edges there", path);
    char line[8192];
    int edges = 0, embeds = 0;
    while (fgets(line, sizeof line, f)) {
        const char *at = strstr(line, ": compile_kernel ");
        embeds += strstr(line, ": embed_set") != NULL;
        if (!at)
            continue;
        ++edges;
        char source[4096];
        assert_int_equal(sscanf(at + 17, "%4095s", source), 1);
        if (access(source, R_OK) != 0)
            fail_msg("%s: the edge's source %s is not there", path, source);
    }
    fclose(f);
    print_message("%d compile edges, %zu kernels embedded\n", edges, cg_kernel_set.count);
    assert_int_equal(embeds, 1);
    assert_true((size_t)edges >= cg_kernel_set.count);
}

/* Runs convgen generate on `set` into tmpdir/out; its output into *log (malloc'ed). */
static int generate(const char *extra_env, char **log)
{
    char cmd[8192], log_path[512];
    snprintf(log_path, sizeof log_path, "%s/generate.log", tmpdir);
    snprintf(cmd, sizeof cmd,
             "%s '%s' generate --set '%s/set.txt' --out '%s/out' --arch sm_90 --cache '%s/cache' --embed '%s/set.c' "
             ">'%s' 2>&1",
             extra_env, convgen_bin, tmpdir, tmpdir, tmpdir, tmpdir, log_path);
    int rc = system(cmd);
    FILE *f = fopen(log_path, "r");
    *log = calloc(1, 1 << 16);
    if (f) {
        size_t n = fread(*log, 1, (1 << 16) - 1, f);
        (*log)[n] = '\0';
        fclose(f);
    }
    return rc;
}

typedef struct source_file {
    char name[256];
    struct timespec mtime;
} source_file;

static int list_sources(source_file *files, int max)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/out", tmpdir);
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".cu") != 0)
            continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
        assert_int_equal(stat(path, &st), 0);
        snprintf(files[n].name, sizeof files[n].name, "%s", e->d_name);
        files[n++].mtime = st.st_mtim;
    }
    closedir(d);
    return n;
}

static int compiled_count(const char *log)
{
    const char *at = strstr(log, " compiled, ");
    while (at && at > log && at[-1] != ' ')
        --at;
    return at ? atoi(at) : -1;
}

static bool source_has(const char *name, const char *text)
{
    char path[1024], buf[1 << 16];
    snprintf(path, sizeof path, "%s/out/%.255s", tmpdir, name);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strstr(buf, text) != NULL;
}

static bool same_time(struct timespec a, struct timespec b) { return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec; }

static void test_generate_small_set(void **state)
{
    (void)state;
    char path[512], *log;
    snprintf(path, sizeof path, "%s/set.txt", tmpdir);
    FILE *f = fopen(path, "w");
    fputs("# a small kernel set\nsmall 2 8 8 12x12 3x3 1 1 algo=winograd\nwide 2 4 6 9x9 5x5 0 1\n", f);
    fclose(f);
    int rc = generate("", &log);
    if (rc != 0)
        fail_msg("convgen generate failed:\n%s", log);
    print_message("%s", strstr(log, "convgen: ") ? strstr(log, "convgen: ") : log);
    assert_non_null(strstr(log, "none uses local memory"));
    assert_non_null(strstr(log, "small fprop: winograd"));
    source_file before[64], after[64];
    int n = list_sources(before, 64);
    assert_true(n >= 6);
    int winograd = 0;
    for (int i = 0; i < n; ++i) {
        char p[1024], head[512] = "";
        snprintf(p, sizeof p, "%s/out/%.255s", tmpdir, before[i].name);
        FILE *s = fopen(p, "r");
        assert_non_null(s);
        assert_true(fread(head, 1, sizeof head - 1, s) > 0);
        fclose(s);
        assert_true(strncmp(head, "/*", 2) == 0 && strstr(head, "convgen "));
        winograd += strncmp(before[i].name, "small_winograd_", 15) == 0;
    }
    assert_true(winograd >= 9); /* three transforms a pass */
    snprintf(path, sizeof path, "%s/set.c", tmpdir);
    FILE *c = fopen(path, "r");
    assert_non_null(c);
    char text[1 << 14];
    size_t len = fread(text, 1, sizeof text - 1, c);
    text[len] = '\0';
    fclose(c);
    assert_non_null(strstr(text, "const convgen_kernel_set set = {CONVGEN_KERNEL_SET_MAGIC"));
    assert_non_null(strstr(text, ".incbin"));
    free(log);

    /* again: nothing compiled, no source rewritten */
    sleep(1);
    assert_int_equal(generate("", &log), 0);
    assert_int_equal(compiled_count(log), 0);
    assert_int_equal(list_sources(after, 64), n);
    for (int i = 0; i < n; ++i)
        assert_true(same_time(before[i].mtime, after[i].mtime));
    free(log);

    /* a template edit: exactly the kernels from that template are compiled again */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/templates/winograd' && sed '$a // an edited template' "
             "'%s/templates/winograd/winograd.cu' > '%s/templates/winograd/winograd.cu'", tmpdir, CONVGEN_SOURCE_DIR, tmpdir);
    assert_int_equal(system(cmd), 0);
    char env[600];
    snprintf(env, sizeof env, "CONVGEN_TEMPLATE_DIR='%s/templates'", tmpdir);
    assert_int_equal(generate(env, &log), 0);
    int changed = 0, recompiled = compiled_count(log);
    assert_int_equal(list_sources(after, 64), n);
    for (int i = 0; i < n; ++i) { /* rewritten exactly where the edit shows */
        bool rewritten = !same_time(before[i].mtime, after[i].mtime);
        bool edited = source_has(after[i].name, "// an edited template");
        changed += rewritten;
        if (rewritten != edited)
            fail_msg("%s: %s", after[i].name, rewritten ? "rewritten, but the edit is not in it" : "not rewritten");
    }
    print_message("after the edit: %d sources rewritten, %d kernels compiled again\n", changed, recompiled);
    assert_true(changed >= 6 && changed < n);
    assert_int_equal(recompiled, changed);
    free(log);
}

/* ---- convgen_kernel_set_register ---- */

static const unsigned char fake_cubin[] = "\x7f" "ELF a cubin's bytes";
static const convgen_set_kernel two_kernels[] = {
    {1, 2, "sm_90", fake_cubin, sizeof fake_cubin, 32, 0, 0, 0, 0, 1.5},
    {1, 3, "sm_90a", fake_cubin, sizeof fake_cubin, 40, 1024, 0, 0, 0, 2.5},
};

/* `broken` refused, with INVALID_VALUE and a message that names `field`. */
static void assert_refused(const convgen_kernel_set *broken, const char *field)
{
    assert_int_equal(convgen_kernel_set_register(broken), CONVGEN_ERROR_INVALID_VALUE);
    if (!strstr(convgen_last_error(), field))
        fail_msg("the message '%s' does not name %s", convgen_last_error(), field);
    print_message("%s\n", convgen_last_error());
}

static void test_register_refuses_a_bad_set(void **state)
{
    (void)state;
    const convgen_kernel_set good = {CONVGEN_KERNEL_SET_MAGIC, CONVGEN_KERNEL_SET_VERSION, 2, two_kernels, NULL};
    convgen_kernel_set bad = good;
    convgen_set_kernel k[2];
    assert_refused(NULL, "set is NULL");
    bad.magic = 0x12345678;
    assert_refused(&bad, "set->magic");
    bad = good, bad.version = CONVGEN_KERNEL_SET_VERSION + 1;
    assert_refused(&bad, "set->version");
    bad = good, bad.kernels = NULL;
    assert_refused(&bad, "set->kernels is NULL");
    bad = good, bad.kernels = k;
    memcpy(k, two_kernels, sizeof k), k[1].arch = NULL;
    assert_refused(&bad, "set->kernels[1].arch");
    memcpy(k, two_kernels, sizeof k), k[0].arch = "compute_90";
    assert_refused(&bad, "set->kernels[0].arch");
    memcpy(k, two_kernels, sizeof k), k[1].cubin = NULL;
    assert_refused(&bad, "set->kernels[1].cubin is NULL");
    memcpy(k, two_kernels, sizeof k), k[0].cubin_size = 0;
    assert_refused(&bad, "set->kernels[0].cubin");
    memcpy(k, two_kernels, sizeof k), k[1].cubin = (const unsigned char *)"not an ELF file";
    assert_refused(&bad, "set->kernels[1].cubin");
    memcpy(k, two_kernels, sizeof k), k[1].key_lo = 2; /* the same key twice */
    assert_refused(&bad, "set->kernels[1]");
    memcpy(k, two_kernels, sizeof k), k[0].key_hi = 7; /* out of order */
    assert_refused(&bad, "set->kernels[1]");
    bad = good, bad.wisdom = "convgen wisdom, edited by hand\n";
    assert_refused(&bad, "set->wisdom");
}

static void test_registered_set_serves_its_kernels(void **state)
{
    (void)state;
    static const convgen_kernel_set set = {CONVGEN_KERNEL_SET_MAGIC, CONVGEN_KERNEL_SET_VERSION, 2, two_kernels, ""};
    cache_kernel k = {0};
    assert_false(kernel_set_get((cache_key){1, 3}, &k));
    assert_int_equal(convgen_kernel_set_register(&set), CONVGEN_SUCCESS);
    assert_int_equal(convgen_kernel_set_register(&set), CONVGEN_SUCCESS); /* again: nothing changes */
    assert_true(kernel_set_get((cache_key){1, 3}, &k));
    assert_int_equal(k.cubin_size, sizeof fake_cubin);
    assert_memory_equal(k.cubin, fake_cubin, sizeof fake_cubin);
    assert_int_equal(k.registers, 40);
    assert_int_equal(k.shared_bytes, 1024);
    cache_kernel_free(&k);
    assert_false(kernel_set_get((cache_key){1, 4}, &k));
    setenv("CONVGEN_KERNEL_SET", "off", 1);
    assert_false(kernel_set_get((cache_key){1, 2}, &k));
    unsetenv("CONVGEN_KERNEL_SET");
    assert_true(kernel_set_get((cache_key){1, 2}, &k));
    cache_kernel_free(&k);
}

/* A registered set's wisdom is held as the library's set's is: used, never exported. */
static void test_registered_set_imports_its_wisdom(void **state)
{
    (void)state;
    char path[4200];
    size_t size;
    snprintf(path, sizeof path, "%s/bench/wisdom/nvidia-h100-80gb-hbm3.wisdom", CONVGEN_SOURCE_DIR);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char wisdom[1 << 20];
    size = fread(wisdom, 1, sizeof wisdom - 1, f);
    fclose(f);
    wisdom[size] = '\0';
    static convgen_kernel_set set = {CONVGEN_KERNEL_SET_MAGIC, CONVGEN_KERNEL_SET_VERSION, 1, two_kernels, wisdom};
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_count(), 0);
    assert_int_equal(convgen_kernel_set_register(&set), CONVGEN_SUCCESS);
    int held = convgen_wisdom_count();
    print_message("%d wisdom entries held from the set\n", held);
    assert_true(held > 50);
    char *text;
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    assert_non_null(strstr(text, "end entries=0 "));
    free(text);
    convgen_wisdom_forget();
}

int main(void)
{
    ssize_t len = readlink("/proc/self/exe", convgen_bin, sizeof convgen_bin - 1);
    convgen_bin[len > 0 ? len : 0] = '\0';
    char *slash = strrchr(convgen_bin, '/');
    if (slash) /* <builddir>/tests/test_kernel_set -> <builddir>/convgen */
        *slash = '\0';
    slash = strrchr(convgen_bin, '/');
    snprintf(slash ? slash + 1 : convgen_bin, sizeof convgen_bin - (size_t)(slash ? slash + 1 - convgen_bin : 0),
             "convgen");
    snprintf(tmpdir, sizeof tmpdir, "%s/convgen-test-set-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(tmpdir))
        return 1;
    unsetenv("CONVGEN_WISDOM");
    unsetenv("CONVGEN_TEMPLATE_DIR");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_set_serves_auto),
        cmocka_unit_test(test_build_writes_edges_per_kernel),
        cmocka_unit_test(test_generate_small_set),
        cmocka_unit_test(test_register_refuses_a_bad_set),
        cmocka_unit_test(test_registered_set_serves_its_kernels),
        cmocka_unit_test(test_registered_set_imports_its_wisdom),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    return failed;
}
