/* The layers of the code hold (README's layout table, each folder's README.md): which object
 * file uses which, read from the built objects' symbol tables (nm -P), so that a call counts
 * whatever header it went through.
 *   - No import circles: no two files use each other, directly or around a loop, except inside
 *     the template engine's own folder (a parser and an evaluator may recurse into each other).
 *   - Folders by family: a family (generator/fft/, fftconv/, winograd/, direct/) uses the
 *     generator's core (the .c files at generator/ itself), the template engine and the
 *     families ALLOWED names; the core uses no family but through its registries (REGISTRIES
 *     below); the runtime and the CLI use the core, the engine and the problem kinds'
 *     constructors (PROBLEM_KINDS), never a family's planners or kernels directly; nothing in
 *     generator/ uses the runtime or the CLI.
 * The objects are those configure listed (BUILDDIR/library.ninja, cli.ninja). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_FILES = 256, MAX_SYMBOLS = 8192 };

typedef struct symbol {
    char *name;
    int file;
} symbol;

static char builddir[4096];
static char *files[MAX_FILES]; /* "generator/fft/fft_kernel.o", relative to builddir */
static int file_count;
static bool uses[MAX_FILES][MAX_FILES];
static symbol defined[MAX_SYMBOLS];
static int defined_count;

/* The core's files that may name a family's entries: the tables that register them. */
static const char *const REGISTRIES[] = {
    "generator/registry.o",     /* the planner registry: one line per algorithm */
    "generator/generate.o",     /* the entry points: a convolution's planner, a batched FFT plan */
    "generator/op_kinds.o",     /* the op kinds: one line per kind, each in its family's file */
};

/* The problems' files, which the runtime constructs plans' problems with (convgen_plan_fft
 * checks its desc into the FFT kind's problem): a problem kind is vocabulary every layer shares,
 * wherever its family keeps it. */
static const char *const PROBLEM_KINDS[] = {
    "generator/problem.o",
    "generator/fft/fft_problem.o",
    "generator/net/pool_problem.o",
    "generator/net/net.o", /* a network: the executor's problem, which `convgen net` prints */
    "generator/net/net_segments.o", /* its cost model and the host mode's segments: the executor's planning */
};

/* Family -> the other families it may use. */
static const struct {
    const char *family, *may_use;
} ALLOWED[] = {
    {"generator/fftconv", "generator/fft"}, /* FFT convolution runs convgen's FFT kernels */
};

static bool starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

/* "generator/fft/x.o" -> "generator/fft"; "generator/x.o" -> "generator". */
static void folder_of(const char *file, char *out, size_t size)
{
    snprintf(out, size, "%s", file);
    char *slash = strrchr(out, '/');
    if (slash)
        *slash = '\0';
}

static bool is_family(const char *folder)
{
    return starts_with(folder, "generator/") && strcmp(folder, "generator/template") != 0;
}

static int add_file(const char *name)
{
    for (int i = 0; i < file_count; ++i)
        if (strcmp(files[i], name) == 0)
            return i;
    assert_true(file_count < MAX_FILES);
    files[file_count] = strdup(name);
    return file_count++;
}

/* Every object a configure-written edge file names: "build $builddir/X.o: cc ...". */
static void read_objects(const char *edges)
{
    char path[4200], line[1024];
    snprintf(path, sizeof path, "%s/%s", builddir, edges);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot read %s (run ./configure)", path);
    while (fgets(line, sizeof line, f)) {
        char name[512];
        if (sscanf(line, "build $builddir/%511[^:]: cc ", name) == 1)
            add_file(name);
    }
    fclose(f);
}

/* Runs nm -P on one object; `fn` gets each symbol and its type letter. */
static void each_symbol(int file, void (*fn)(int file, const char *name, char type))
{
    char cmd[8500], line[1024];
    snprintf(cmd, sizeof cmd, "nm -P '%s/%s'", builddir, files[file]);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        char name[512], type;
        if (sscanf(line, "%511s %c", name, &type) == 2)
            fn(file, name, type);
    }
    assert_int_equal(pclose(p), 0);
}

static void note_definition(int file, const char *name, char type)
{
    if (type == 'T' || type == 'D' || type == 'B' || type == 'R' || type == 'C') {
        assert_true(defined_count < MAX_SYMBOLS);
        defined[defined_count++] = (symbol){strdup(name), file};
    }
}

static void note_use(int file, const char *name, char type)
{
    if (type != 'U')
        return;
    for (int i = 0; i < defined_count; ++i)
        if (strcmp(defined[i].name, name) == 0 && defined[i].file != file)
            uses[file][defined[i].file] = true;
}

static int setup(void **state)
{
    (void)state;
    ssize_t len = readlink("/proc/self/exe", builddir, sizeof builddir - 1);
    builddir[len > 0 ? len : 0] = '\0';
    for (int up = 0; up < 2; ++up) { /* BUILDDIR/tests/test_layers */
        char *slash = strrchr(builddir, '/');
        if (slash)
            *slash = '\0';
    }
    read_objects("library.ninja");
    read_objects("cli.ninja");
    for (int i = 0; i < file_count; ++i)
        each_symbol(i, note_definition);
    for (int i = 0; i < file_count; ++i)
        each_symbol(i, note_use);
    return 0;
}

/* ---- circles: Tarjan's strongly connected components ---- */

static int order[MAX_FILES], low[MAX_FILES], stack[MAX_FILES], depth, counter;
static bool on_stack[MAX_FILES];
static int circles;

static bool inside_engine(int file) { return starts_with(files[file], "generator/template/"); }

static void component_of(int v)
{
    order[v] = low[v] = ++counter;
    stack[depth++] = v;
    on_stack[v] = true;
    for (int w = 0; w < file_count; ++w) {
        if (!uses[v][w])
            continue;
        if (!order[w]) {
            component_of(w);
            low[v] = low[w] < low[v] ? low[w] : low[v];
        } else if (on_stack[w] && order[w] < low[v]) {
            low[v] = order[w];
        }
    }
    if (low[v] != order[v])
        return;
    int members[MAX_FILES], n = 0;
    bool engine = true;
    do {
        members[n] = stack[--depth];
        on_stack[members[n]] = false;
        engine &= inside_engine(members[n]);
    } while (members[n++] != v);
    if (n < 2 || engine)
        return;
    ++circles;
    printf("circle of %d files:", n);
    for (int i = 0; i < n; ++i)
        printf(" %s", files[members[i]]);
    printf("\n");
}

static void test_no_import_circles(void **state)
{
    (void)state;
    memset(order, 0, sizeof order);
    counter = depth = circles = 0;
    for (int v = 0; v < file_count; ++v)
        if (!order[v])
            component_of(v);
    printf("%d object files, %d circles outside the template engine\n", file_count, circles);
    assert_int_equal(circles, 0);
}

/* ---- folders by family ---- */

static bool is_registry(const char *file)
{
    for (size_t i = 0; i < sizeof REGISTRIES / sizeof REGISTRIES[0]; ++i)
        if (strcmp(file, REGISTRIES[i]) == 0)
            return true;
    return false;
}

static bool family_may_use(const char *from, const char *to)
{
    for (size_t i = 0; i < sizeof ALLOWED / sizeof ALLOWED[0]; ++i)
        if (strcmp(from, ALLOWED[i].family) == 0 && strcmp(to, ALLOWED[i].may_use) == 0)
            return true;
    return false;
}

static bool is_problem_kind(const char *file)
{
    for (size_t i = 0; i < sizeof PROBLEM_KINDS / sizeof PROBLEM_KINDS[0]; ++i)
        if (strcmp(file, PROBLEM_KINDS[i]) == 0)
            return true;
    return false;
}

/* Why file a may not use file b, or NULL where it may. */
static const char *forbidden(int a, int b)
{
    char from[512], to[512];
    folder_of(files[a], from, sizeof from);
    folder_of(files[b], to, sizeof to);
    if (strcmp(from, to) == 0)
        return NULL;
    if (starts_with(from, "generator") && (starts_with(to, "runtime") || starts_with(to, "cli")))
        return "the generator uses no runtime or CLI code";
    if (!is_family(to))
        return NULL; /* the core and the engine are everyone's */
    if (strcmp(from, "generator") == 0)
        return is_registry(files[a]) ? NULL : "the core reaches a family only through a registry";
    if (is_family(from))
        return family_may_use(from, to) ? NULL : "a family uses only the core, the engine and what ALLOWED lists";
    if (is_problem_kind(files[b]))
        return NULL;
    return "the runtime and the CLI reach a family only through the generator's registry";
}

static void test_folders_by_family(void **state)
{
    (void)state;
    int bad = 0, edges = 0;
    for (int a = 0; a < file_count; ++a)
        for (int b = 0; b < file_count; ++b) {
            if (!uses[a][b])
                continue;
            ++edges;
            const char *why = forbidden(a, b);
            if (why) {
                printf("%s uses %s: %s\n", files[a], files[b], why);
                ++bad;
            }
        }
    printf("%d uses between %d object files, %d against the layers\n", edges, file_count, bad);
    assert_int_equal(bad, 0);
}

/* The check sees uses at all: the planner registry uses every family (a broken reading of nm
 * would find nothing and pass everything). */
static void test_the_registry_is_seen(void **state)
{
    (void)state;
    int registry = add_file("generator/registry.o"), families = 0;
    const char *const wanted[] = {"generator/direct", "generator/fftconv", "generator/winograd"};
    for (size_t i = 0; i < sizeof wanted / sizeof wanted[0]; ++i)
        for (int b = 0; b < file_count; ++b) {
            char to[512];
            folder_of(files[b], to, sizeof to);
            if (uses[registry][b] && strcmp(to, wanted[i]) == 0) {
                ++families;
                break;
            }
        }
    assert_int_equal(families, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_the_registry_is_seen),
        cmocka_unit_test(test_no_import_circles),
        cmocka_unit_test(test_folders_by_family),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
