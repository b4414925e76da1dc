/* Every emitted kernel says what it is: its header names the layer, the pass and its step, the
 * FLOPs, and the command that emits it again, and that command does, byte for byte. Checked on
 * every file of the build's kernel set (generated/default), on every kernel of every registered
 * planner over bench/layers.txt with each tuning the emit CLI can say, and on batched FFT plans. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "convgen.h"
#include "generate.h"
#include "layer.h"
#include "planner_cases.h"
#include "verbs.h"

static char convgen_bin[4096];

/* The whole output of `convgen ARGS` (the words of `command` after "convgen "), malloc'ed. */
static char *run_convgen(const char *command, size_t *size)
{
    char *cmd;
    assert_true(asprintf(&cmd, "'%s' %s 2>&1", convgen_bin, command) > 0);
    FILE *p = popen(cmd, "r");
    free(cmd);
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

/* ---- every planner's kernels over the layer set, emitted again from their own commands ---- */

/* The output of `convgen COMMAND` (COMMAND: an "emitted by:" line's words after "convgen ",
 * "emit ...") run in this process by the verb's own function, as main calls it: thousands of
 * commands in seconds where a process each (it loads cuFFT, cuBLAS and NVRTC) takes minutes.
 * emits_again runs the built binary itself on a sample. */
static char *emit_in_process(const char *command, size_t *size, int *status)
{
    char words[4096], *argv[64];
    int argc = 0;
    snprintf(words, sizeof words, "%s", command);
    if (strpbrk(words, "'\"\\$`"))
        fail_msg("'%s': a word a shell would read otherwise", command);
    for (char *w = strtok(words, " "); w && argc < 64; w = strtok(NULL, " "))
        argv[argc++] = w;
    if (argc < 1 || strcmp(argv[0], "emit") != 0)
        fail_msg("'%s' is not an emit command", command);
    fflush(stdout);
    FILE *captured = tmpfile();
    assert_non_null(captured);
    int saved = dup(STDOUT_FILENO);
    dup2(fileno(captured), STDOUT_FILENO);
    *status = cli_emit(argc - 1, argv + 1);
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    long n = ftell(captured);
    char *out = calloc(1, (size_t)(n > 0 ? n : 0) + 1);
    assert_non_null(out);
    rewind(captured);
    *size = n > 0 ? fread(out, 1, (size_t)n, captured) : 0;
    fclose(captured);
    return out;
}

/* The commands already run, so that each distinct one runs once. */
#define SEEN_SLOTS (1 << 16)
static char *seen[SEEN_SLOTS];

static bool first_time(const char *command)
{
    uint64_t h = 1469598103934665603u;
    for (const char *c = command; *c; ++c)
        h = (h ^ (unsigned char)*c) * 1099511628211u;
    for (size_t i = h % SEEN_SLOTS;; i = (i + 1) % SEEN_SLOTS) {
        if (!seen[i]) {
            seen[i] = strdup(command);
            return true;
        }
        if (strcmp(seen[i], command) == 0)
            return false;
    }
}

static void forget_commands(void)
{
    for (size_t i = 0; i < SEEN_SLOTS; ++i)
        free(seen[i]), seen[i] = NULL;
}

/* A kernel's source without its "emitted by:" line, which names the tuning asked for even where
 * a planner ignores it. */
static bool same_but_command(const char *a, const char *b)
{
    const char *ca = strstr(a, "\n * emitted by: "), *cb = strstr(b, "\n * emitted by: ");
    if (!ca || !cb || ca - a != cb - b || strncmp(a, b, (size_t)(ca - a)) != 0)
        return false;
    ca = strchr(ca + 1, '\n'), cb = strchr(cb + 1, '\n');
    return ca && cb && strcmp(ca, cb) == 0;
}

/* Whether a variant's program is the default's but for the command lines: a tuning the planner
 * does not take. */
static bool same_program(const cg_generated *a, const cg_generated *b)
{
    if (a->kernel_count != b->kernel_count)
        return false;
    for (int k = 0; k < a->kernel_count; ++k)
        if (!same_but_command(a->kernels[k].source, b->kernels[k].source))
            return false;
    return true;
}

/* The tunings the emit CLI can say (--gemm, --tile, --fourier, --workspace-limit, and a target:
 * --arch, --sms), each tried on every case a planner takes; one that does not change a
 * planner's program is none of its variants. */
enum { V_DEFAULT, V_CUBLAS, V_GENERATED, V_TILE2, V_TILE4, V_TILE6, V_TILE_FIRST, V_BASIS, V_TILE32, V_BASIS_FIRST,
       V_LIMIT, V_TARGET, VARIANTS };
static const char *const variant_names[VARIANTS] = {
    "default", "--gemm cublas", "--gemm generated", "--tile 2x2", "--tile 4x4", "--tile 6x6",
    "--tile 4 (4x0: the first dimension's)", "--fourier (the next power of two of fft's basis)", "--fourier 32x32",
    "--fourier 128 (128x0: the first dimension's)", "--workspace-limit (half)", "--arch sm_80 --sms 108 (an A100)"};

/* The target of a variant: an A100's (a JIT plan on one), else the generator's default. */
static cg_target variant_target(int v)
{
    cg_target t = {0};
    if (v == V_TARGET) {
        t.sm_count = 108;
        assert_true(cg_target_shared_limits("sm_80", &t.shared_per_block, &t.shared_per_sm));
        t.max_cluster = cg_target_max_cluster("sm_80");
        snprintf(t.arch, sizeof t.arch, "sm_80");
    }
    return t;
}

static cg_tuning variant_tuning(int v, const cg_problem *p, convgen_pass pass, const cg_generated *plain)
{
    cg_tuning t = {0};
    int64_t basis = cg_fft_basis(p, pass), pow2 = 2;
    while (pow2 < basis)
        pow2 *= 2;
    for (int d = 0; d < p->rank; ++d) {
        if (v >= V_TILE2 && v <= V_TILE6)
            t.winograd_m[d] = 2 + 2 * (v - V_TILE2);
        if (v == V_BASIS)
            t.fourier_size[d] = basis && pow2 != basis ? pow2 : 0;
        if (v == V_TILE32)
            t.fourier_size[d] = 32;
    }
    /* what the CLI makes of one size: the first dimension's, the others chosen */
    t.winograd_m[0] = v == V_TILE_FIRST ? 4 : t.winograd_m[0];
    t.fourier_size[0] = v == V_BASIS_FIRST ? 128 : t.fourier_size[0];
    t.gemm = v == V_CUBLAS ? CONVGEN_GEMM_CUBLAS : v == V_GENERATED ? CONVGEN_GEMM_GENERATED : 0;
    t.workspace_limit = v == V_LIMIT ? (plain->workspace_bytes + 1) / 2 : 0;
    return t;
}

typedef struct emit_tally {
    int cases[VARIANTS], taken[VARIANTS], refused[VARIANTS], unchanged[VARIANTS], kernels[VARIANTS];
    int commands, repeated, differing, sampled;
} emit_tally;

/* Each kernel of g emitted again from its header's command (once per distinct command); the
 * first kernel of each planner and variant also by the built binary. */
static void emit_again_in_process(const cg_generated *g, const char *what, bool sample, emit_tally *t)
{
    for (int k = 0; k < g->kernel_count; ++k) {
        const char *source = g->kernels[k].source;
        char command[4096], name[300];
        emit_command(source, command, sizeof command);
        if (!command[0])
            fail_msg("%s kernel %d (%s): no 'emitted by:' line", what, k, g->kernels[k].name);
        snprintf(name, sizeof name, "%s kernel %d", what, k);
        if (sample && k == 0) {
            t->sampled += 1;
            t->differing += !emits_again(source, strlen(source), name);
        }
        if (!first_time(command)) {
            ++t->repeated;
            continue;
        }
        ++t->commands;
        size_t size;
        int status;
        char *again = emit_in_process(command, &size, &status);
        if (status != 0 || size != strlen(source) || memcmp(again, source, size) != 0) {
            print_message("%s: 'convgen %s' exits %d and emits %zu bytes, not the %zu of the kernel\n", name, command,
                          status, size, strlen(source));
            ++t->differing;
        }
        free(again);
    }
}

/* Every registered planner x pass x layer of bench/layers.txt, by default and with each tuning
 * the emit CLI can say that changes its program: each kernel's "emitted by:" command emits it
 * again byte for byte. Refusals of the default must be the table's (tests/planner_cases.c);
 * those of a variant are counted (a tile or basis the layer cannot take). */
static void test_every_planner_kernel_of_the_layer_set_emits_again(void **state)
{
    (void)state;
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    emit_tally t = {0};
    planner_tally cases = {0};
    for (int a = 0; a < cg_planner_count(); ++a) {
        const cg_planner *planner = cg_planner_at(a);
        bool sampled[VARIANTS] = {false};
        for (int i = 0; i < count; ++i)
            for (int pass = 0; pass < 3; ++pass) {
                cg_problem p;
                cg_generated plain;
                assert_int_equal(cg_problem_init(&p, &layers[i].desc), CONVGEN_SUCCESS);
                convgen_status s = cg_generate_tuned(&p, (convgen_pass)pass, planner->algo, NULL, NULL, &plain);
                bool taken = planner_takes(planner, &p, (convgen_pass)pass, s, layers[i].name);
                planner_tally_add(&cases, taken);
                if (!taken)
                    continue;
                for (int v = 0; v < VARIANTS; ++v) {
                    cg_tuning tune = variant_tuning(v, &p, (convgen_pass)pass, &plain);
                    cg_generated g;
                    ++t.cases[v];
                    cg_target target = variant_target(v);
                    if (v != V_DEFAULT && cg_generate_tuned(&p, (convgen_pass)pass, planner->algo, &target, &tune,
                                                            &g) != CONVGEN_SUCCESS) {
                        ++t.refused[v];
                        continue;
                    }
                    if (v != V_DEFAULT && same_program(&g, &plain)) {
                        ++t.unchanged[v];
                        cg_generated_free(&g);
                        continue;
                    }
                    const cg_generated *made = v == V_DEFAULT ? &plain : &g;
                    char what[256];
                    snprintf(what, sizeof what, "%s %s %s (%s)", planner->name, layers[i].name,
                             convgen_pass_name((convgen_pass)pass), variant_names[v]);
                    ++t.taken[v];
                    t.kernels[v] += made->kernel_count;
                    emit_again_in_process(made, what, !sampled[v], &t);
                    sampled[v] = true;
                    if (v != V_DEFAULT)
                        cg_generated_free(&g);
                }
                cg_generated_free(&plain);
            }
    }
    print_message("%d planners x %d layers x 3 passes = %d cases: %d taken, %d refused as tests/planner_cases.c "
                  "expects\n", cg_planner_count(), count, cases.cases, cases.taken, cases.refused);
    for (int v = 0; v < VARIANTS; ++v)
        print_message("  %-50s %4d cases: %4d programs (%5d kernels), %4d the default's (not a variant of the "
                      "planner), %4d refused\n", variant_names[v], t.cases[v], t.taken[v], t.kernels[v],
                      t.unchanged[v], t.refused[v]);
    print_message("%d distinct commands emitted again in this process (%d repeated), %d of them also by %s; %d "
                  "emitted differently\n", t.commands, t.repeated, t.sampled, convgen_bin, t.differing);
    forget_commands();
    free(layers);
    assert_true(t.commands > 0);
    assert_int_equal(t.differing, 0);
}

/* Layers with an epilogue: every planner's fprop of every layer of bench/layers.txt with a bias
 * and ReLU (and ReLU alone on the first ten), its kernels' "emitted by:" commands (which carry
 * --bias --relu) emit them again byte for byte. */
static void test_epilogue_kernels_emit_again(void **state)
{
    (void)state;
    cg_layer *layers;
    int count, programs = 0;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    emit_tally t = {0};
    for (int a = 0; a < cg_planner_count(); ++a)
        for (int i = 0; i < count; ++i)
            for (int e = 0; e < (i < 10 ? 2 : 1); ++e) {
                convgen_conv_desc d = layers[i].desc;
                d.epilogue = e ? CONVGEN_EPILOGUE_RELU : CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
                cg_problem p;
                cg_generated g;
                assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
                if (cg_generate_tuned(&p, CONVGEN_FPROP, cg_planner_at(a)->algo, NULL, NULL, &g) != CONVGEN_SUCCESS)
                    continue; /* the planner does not take the layer: as without an epilogue */
                char what[256];
                snprintf(what, sizeof what, "%s %s fprop (%s)", cg_planner_at(a)->name, layers[i].name,
                         e ? "relu" : "bias relu");
                for (int k = 0; k < g.kernel_count; ++k)
                    if (!strstr(g.kernels[k].source, e ? " --relu\n" : " --bias --relu\n"))
                        fail_msg("%s kernel %d: its header does not say the epilogue", what, k);
                emit_again_in_process(&g, what, programs == 0, &t);
                ++programs;
                cg_generated_free(&g);
            }
    print_message("%d programs with an epilogue, %d distinct commands emitted again; %d emitted differently\n", programs,
                  t.commands, t.differing);
    forget_commands();
    free(layers);
    assert_true(programs > 0);
    assert_int_equal(t.differing, 0);
}

/* Sizes fixed along later dimensions only, as the tuner fixes Winograd's tile where the kernel
 * has one tap along the first ({0, m}: "--tile 0x1"); the command once left them out. */
static void test_sizes_fixed_along_later_dimensions_emit_again(void **state)
{
    (void)state;
    const convgen_conv_desc d = {.rank = 2, .n = 2, .c = 5, .k = 6, .in = {14, 16}, .kernel = {1, 7}};
    const struct {
        convgen_algo algo;
        cg_tuning tune;
        const char *says;
    } cases[] = {
        {CONVGEN_ALGO_WINOGRAD, {.winograd_m = {0, 1}}, "--tile 0x1"},
        {CONVGEN_ALGO_CUFFT, {.fourier_size = {0, 32}}, "--fourier 0x32"},
    };
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    emit_tally t = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int pass = 0; pass < 3; ++pass) {
            cg_generated g, plain;
            assert_int_equal(cg_generate_tuned(&p, (convgen_pass)pass, cases[i].algo, NULL, &cases[i].tune, &g),
                             CONVGEN_SUCCESS);
            assert_int_equal(cg_generate(&p, (convgen_pass)pass, cases[i].algo, NULL, &plain), CONVGEN_SUCCESS);
            if (same_program(&g, &plain)) /* the sizes make another program */
                fail_msg("%s %s: the same program as the planner's own", cases[i].says,
                         convgen_pass_name((convgen_pass)pass));
            assert_non_null(strstr(g.kernels[0].source, cases[i].says));
            emit_again_in_process(&g, cases[i].says, pass == 0, &t);
            cg_generated_free(&g);
            cg_generated_free(&plain);
        }
    forget_commands();
    print_message("%d commands emitted again, %d also by the binary: %d emitted differently\n", t.commands, t.sampled,
                  t.differing);
    assert_int_equal(t.differing, 0);
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
        /* sizes of several radices, as tools/emit-snapshot.sh emits them */
        {.rank = 2, .n = 35, .type = CONVGEN_FFT_R2C, .batch = 4, .channels = 3},
        {.rank = 2, .n = 128, .type = CONVGEN_FFT_C2R, .batch = 4, .layout = CONVGEN_FFT_LAYOUT_TRANSPOSED,
         .order = CONVGEN_FFT_ORDER_DIGIT_REVERSED},
        {.rank = 2, .n = 8, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_FORWARD, .batch = 8},
        /* rank 3: windows, offsets, pitches and strides on both kernels of a plan */
        {.rank = 3, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 80, .channels = 80, .window = {5, 5, 5}},
        {.rank = 3, .n = 24, .type = CONVGEN_FFT_C2R, .batch = 2, .channels = 3, .window = {9, 10, 11},
         .offset = {3, 2, 1}, .pitch = 12, .plane_pitch = 130, .real_stride = {3610, 1200}, .scale = 0.5f,
         .layout = CONVGEN_FFT_LAYOUT_TRANSPOSED, .order = CONVGEN_FFT_ORDER_DIGIT_REVERSED},
        {.rank = 3, .n = 12, .type = CONVGEN_FFT_C2C, .direction = CONVGEN_FFT_INVERSE, .batch = 3},
    };
    int kernels = 0;
    for (size_t i = 0; i < sizeof descs / sizeof descs[0]; ++i)
        for (int k = 0;; ++k) {
            char *source;
            if (convgen_emit_fft(&descs[i], k, &source) != CONVGEN_SUCCESS) {
                if (k == 0) /* every plan has a kernel 0: the descriptor itself is wrong */
                    fail_msg("FFT plan %zu: %s", i, convgen_last_error());
                break;
            }
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

/* A kernel whose source does not depend on the SM count is, on a GPU of another count, the default
 * count's (its "emitted by" line naming no --sms), so that the build's kernel set, generated for
 * CG_DEFAULT_SMS, holds it; one that does depend on it (the tensor GEMM's persistent grid, split
 * reductions) names the count. 114: an H100 PCIe's. */
static void test_kernels_that_ignore_the_sm_count_are_the_default_counts(void **state)
{
    (void)state;
    const struct {
        convgen_algo algo;
        convgen_pass pass;
        convgen_conv_desc d;
    } cases[] = {
        {CONVGEN_ALGO_WINOGRAD, CONVGEN_FPROP, {.rank = 2, .n = 32, .c = 256, .k = 256, .in = {56, 56}, .kernel = {3, 3},
                                                .pad_before = {1, 1}, .pad_after = {1, 1}}}, /* V3 */
        {CONVGEN_ALGO_WINOGRAD, CONVGEN_ACCGRAD, {.rank = 2, .n = 32, .c = 256, .k = 256, .in = {56, 56}, .kernel = {3, 3},
                                                  .pad_before = {1, 1}, .pad_after = {1, 1}}},
        {CONVGEN_ALGO_DIRECT, CONVGEN_ACCGRAD, {.rank = 2, .n = 128, .c = 64, .k = 64, .in = {64, 64}, .kernel = {9, 9}}},
        {CONVGEN_ALGO_FFT, CONVGEN_FPROP, {.rank = 2, .n = 128, .c = 128, .k = 128, .in = {16, 16}, .kernel = {7, 7}}},
        {CONVGEN_ALGO_WINOGRAD_FUSED, CONVGEN_FPROP, {.rank = 2, .n = 32, .c = 32, .k = 32, .in = {27, 27}, .kernel = {3, 3}}}};
    const cg_target other = {.sm_count = 114}, plain = {.sm_count = CG_DEFAULT_SMS};
    int same = 0, named = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cg_problem p;
        assert_int_equal(cg_problem_init(&p, &cases[i].d), CONVGEN_SUCCESS);
        cg_generated g, d;
        assert_int_equal(cg_generate(&p, cases[i].pass, cases[i].algo, &other, &g), CONVGEN_SUCCESS);
        assert_int_equal(cg_generate(&p, cases[i].pass, cases[i].algo, &plain, &d), CONVGEN_SUCCESS);
        assert_int_equal(g.kernel_count, d.kernel_count);
        for (int k = 0; k < g.kernel_count; ++k) {
            if (!g.kernels[k].source)
                continue;
            const bool identical = strcmp(g.kernels[k].source, d.kernels[k].source) == 0,
                       names = strstr(g.kernels[k].source, " --sms 114 ") != NULL;
            if (identical == names)
                fail_msg("case %zu kernel %d (%s): %s the default count's, and %s --sms 114", i, k, g.kernels[k].name,
                         identical ? "is" : "is not", names ? "names" : "does not name");
            same += identical, named += names;
        }
        cg_generated_free(&g);
        cg_generated_free(&d);
    }
    print_message("at 114 SMs: %d kernels the default count's, %d naming the count\n", same, named);
    assert_true(same > 0 && named > 0);
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
        cmocka_unit_test(test_kernels_that_ignore_the_sm_count_are_the_default_counts),
        cmocka_unit_test(test_every_kernel_of_the_set_says_what_it_is_and_emits_again),
        cmocka_unit_test(test_every_planner_kernel_of_the_layer_set_emits_again),
        cmocka_unit_test(test_sizes_fixed_along_later_dimensions_emit_again),
        cmocka_unit_test(test_epilogue_kernels_emit_again),
        cmocka_unit_test(test_fft_plans_emit_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
