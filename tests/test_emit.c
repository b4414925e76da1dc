/* The emitted source of the direct algorithm: every layer of the set renders, each file says
 * what it is, index arithmetic is magic-number division only, and template overrides work. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "generate.h"
#include "layer.h"
#include "templates.h"

static cg_layer *layers;
static int layer_count;

static int load_layers(void **state)
{
    (void)state;
    return cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &layer_count) != CONVGEN_SUCCESS;
}

static int free_layers(void **state)
{
    (void)state;
    free(layers);
    return 0;
}

/* The source with comments and string literals (inline PTX's "%0" operands) removed, so
 * operators can be searched for. */
static char *code_only(const char *src)
{
    char *out = malloc(strlen(src) + 1), *o = out;
    for (const char *p = src; *p;) {
        if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n')
                ++p;
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (p[0] == '"') {
            for (++p; *p && *p != '"'; ++p)
                if (p[0] == '\\' && p[1])
                    ++p;
            p += *p == '"';
        } else {
            *o++ = *p++;
        }
    }
    *o = '\0';
    return out;
}

static void generate_ok(const cg_layer *l, convgen_pass pass, cg_generated *g)
{
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &l->desc), CONVGEN_SUCCESS);
    convgen_status s = cg_generate(&p, pass, CONVGEN_ALGO_DIRECT, NULL, g);
    if (s != CONVGEN_SUCCESS)
        fail_msg("%s %s: %s", l->name, convgen_pass_name(pass), convgen_last_error());
}

static void test_every_layer_and_pass_renders_with_a_header_saying_what_it_is(void **state)
{
    (void)state;
    for (int i = 0; i < layer_count; ++i)
        for (int pass = 0; pass < 3; ++pass) {
            cg_generated g;
            generate_ok(&layers[i], (convgen_pass)pass, &g);
            char layer[1024], line[1100]; /* the layer line is the conv kind's describe */
            cg_conv_kind.describe(&g.problem, layer, sizeof layer);
            snprintf(line, sizeof line, "\n * layer: %s (n c k input kernel pad stride)\n", layer);
            for (int k = 0; k < g.kernel_count; ++k) {
                const char *src = g.kernels[k].source;
                assert_true(strncmp(src, "/*\n * convgen " CG_GENERATOR_VERSION ": direct", 21 + strlen(CG_GENERATOR_VERSION)) == 0);
                assert_non_null(strstr(src, line));
                assert_non_null(strstr(src, "emitted by: convgen emit --algo direct --pass "));
                assert_non_null(strstr(src, "FLOPs: "));
                assert_non_null(strstr(src, "launch: grid ("));
                assert_non_null(strstr(src, g.kernels[k].name));
            }
            cg_generated_free(&g);
        }
}

static void test_emitted_kernels_divide_only_by_magic_numbers(void **state)
{
    (void)state;
    for (int i = 0; i < layer_count; ++i)
        for (int pass = 0; pass < 3; ++pass) {
            cg_generated g;
            generate_ok(&layers[i], (convgen_pass)pass, &g);
            for (int k = 0; k < g.kernel_count; ++k) {
                char *code = code_only(g.kernels[k].source);
                if (strchr(code, '/') || strchr(code, '%'))
                    fail_msg("%s %s kernel %d has a '/' or '%%' operator", layers[i].name,
                             convgen_pass_name((convgen_pass)pass), k);
                free(code);
            }
            cg_generated_free(&g);
        }
}

static const cg_layer *layer_named(const char *name)
{
    for (int i = 0; i < layer_count; ++i)
        if (strcmp(layers[i].name, name) == 0)
            return &layers[i];
    fail_msg("no layer %s", name);
    return NULL;
}

static void test_non_power_of_two_sizes_use_multiply_high(void **state)
{
    (void)state;
    cg_generated g;
    generate_ok(layer_named("L2"), CONVGEN_FPROP, &g); /* 56x56 outputs, 9x9 taps */
    assert_non_null(strstr(g.kernels[0].source, "__umulhi("));
    assert_non_null(strstr(g.kernels[0].source, "// row / 56"));
    assert_non_null(strstr(g.kernels[0].source, "// red / 9"));
    cg_generated_free(&g);
}

static void test_small_output_gets_a_split_reduction_with_workspace(void **state)
{
    (void)state;
    cg_generated g;
    generate_ok(layer_named("L2"), CONVGEN_ACCGRAD, &g); /* dw is 64 x 5184: 41 tiles, long reduction */
    assert_int_equal(g.kernel_count, 2);
    assert_true(g.workspace_bytes > 0);
    assert_int_equal(g.workspace_bytes % (64 * 64 * 81 * 4), 0);
    assert_true(g.kernels[0].grid[2] > 1);
    assert_int_equal(g.workspace_bytes / (64 * 64 * 81 * 4), g.kernels[0].grid[2]);
    cg_generated_free(&g);

    generate_ok(layer_named("L1"), CONVGEN_FPROP, &g); /* 128*118*118 rows: no split */
    assert_int_equal(g.kernel_count, 1);
    assert_int_equal(g.workspace_bytes, 0);
    cg_generated_free(&g);
}

/* A target without thread-block clusters (convgen generate --arch sm_80) gets none, also when it
 * leaves the multiprocessor count to the default: 2-D FFTs of n = 210 take clusters on sm_90. */
static void test_a_target_without_clusters_gets_none(void **state)
{
    (void)state;
    const char *words[] = {"X1", "1", "3", "4", "200x200", "3x3", "1", "1"};
    cg_layer l;
    int used;
    assert_int_equal(cg_layer_parse_words(words, 8, &l, &used), CONVGEN_SUCCESS);
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &l.desc), CONVGEN_SUCCESS);
    const cg_target targets[2] = {{.max_cluster = 1}, {0}};
    for (int t = 0; t < 2; ++t) {
        cg_generated g;
        assert_int_equal(cg_generate(&p, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &targets[t], &g), CONVGEN_SUCCESS);
        int clustered = 0;
        for (int k = 0; k < g.kernel_count; ++k)
            clustered += g.kernels[k].source && strstr(g.kernels[k].source, "__cluster_dims__") != NULL;
        cg_generated_free(&g);
        if ((clustered > 0) != (t == 1))
            fail_msg("target %d: %d kernels with clusters", t, clustered);
    }
}

/* winograd-fused's forward passes take the cluster kernel on sm_90 where it pays: F(6x6, 3x3)
 * (alpha 8: clusters of 8, 128 outputs a block) where those blocks fill the GPU twice (V3, L5),
 * F(4x4, 3x3) (alpha 6: clusters of 3, 64 outputs) where they do not (R3: 144 blocks) or the
 * outputs are 64 (S64), and F(4x4, 5x5) (alpha 8, a 5 x 5 kernel's default there: clusters of 8,
 * 64 outputs on F2's bprop) on layers of 64 channels or more whose clusters fill the GPU; the
 * one-block kernel on R4 (32 clusters), S13 (64 x 64 at 13x13, one wave short; at m = 2, the
 * shipped wisdom's pick for its bprop, F(2x2, 3x3), which has no timed cluster kernel), S27 (32
 * channels), F1 (32 data channels), and on a target without clusters (F2 there at F(2x2, 5x5)). */
static void test_winograd_fused_takes_a_cluster_where_it_pays(void **state)
{
    (void)state;
    const struct {
        const char *layer;
        convgen_pass pass;
        int cluster; /* blocks on sm_90; 0: the one-block kernel */
        int outputs; /* a cluster's on sm_90 */
    } cases[] = {{"V3", CONVGEN_FPROP, 8, 128}, {"V3", CONVGEN_BPROP, 8, 128}, {"L5", CONVGEN_FPROP, 8, 128},
                 {"R3", CONVGEN_FPROP, 3, 64},  {"S64", CONVGEN_FPROP, 3, 64},  {"F2", CONVGEN_BPROP, 8, 64},
                 {"R4", CONVGEN_FPROP, 0, 0},   {"S13", CONVGEN_BPROP, 0, 0},   {"S27", CONVGEN_FPROP, 0, 0},
                 {"F1", CONVGEN_FPROP, 0, 0},   {"S13", CONVGEN_BPROP, 0, 0}};
    const cg_target sm90 = {0}, sm80 = {.max_cluster = 1};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int t = 0; t < 2; ++t) {
            cg_problem p;
            assert_int_equal(cg_problem_init(&p, &layer_named(cases[i].layer)->desc), CONVGEN_SUCCESS);
            cg_generated g;
            const cg_tuning m2 = {.winograd_m = {2, 2}}; /* the last case's tile */
            assert_int_equal(cg_generate_tuned(&p, cases[i].pass, CONVGEN_ALGO_WINOGRAD_FUSED, t ? &sm80 : &sm90,
                                               i + 1 == sizeof cases / sizeof cases[0] ? &m2 : NULL, &g),
                             CONVGEN_SUCCESS);
            const char *src = g.kernels[g.kernel_count - 1].source, *dims = strstr(src, "__cluster_dims__(");
            int cluster = dims ? atoi(dims + strlen("__cluster_dims__(")) : 0, want = t ? 0 : cases[i].cluster;
            const char *plan = strstr(src, "32 tiles x ");
            int outputs = plan && cluster ? atoi(plan + strlen("32 tiles x ")) : 0;
            cg_generated_free(&g);
            if (cluster != want)
                fail_msg("%s %s on %s: clusters of %d blocks (0: the one-block kernel), not %d", cases[i].layer,
                         convgen_pass_name(cases[i].pass), t ? "sm_80" : "sm_90", cluster, want);
            if (cluster && outputs != cases[i].outputs)
                fail_msg("%s %s on sm_90: %d outputs a cluster, not %d", cases[i].layer,
                         convgen_pass_name(cases[i].pass), outputs, cases[i].outputs);
        }
}

/* winograd-fused of the layer `words` (a layers.txt line's 8 words) on sm_90 with F(m x m, r)
 * across the plane: g, or the test fails with the planner's reason. */
static void generate_fused_at_tile(const char *const words[8], convgen_pass pass, int m, cg_generated *g)
{
    cg_layer l;
    int used;
    assert_int_equal(cg_layer_parse_words(words, 8, &l, &used), CONVGEN_SUCCESS);
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &l.desc), CONVGEN_SUCCESS);
    const cg_target sm90 = {0};
    const cg_tuning tile = {.winograd_m = {m, m}};
    if (cg_generate_tuned(&p, pass, CONVGEN_ALGO_WINOGRAD_FUSED, &sm90, &tile, g) != CONVGEN_SUCCESS)
        fail_msg("%s %s at F(%dx%d): %s", words[0], convgen_pass_name(pass), m, m, convgen_last_error());
}

/* The cluster kernel's 8 x 8 tiles take 128 outputs a block only where the end's shared memory
 * fits: F(6x6, 3x3) on a layer of 256 outputs does (224 KiB), F(7x7, 2x2) on the same one does
 * not (240 KiB: rows of 7) and keeps 64 (one build refused it outright). */
static void test_winograd_fused_128_outputs_only_where_the_end_fits(void **state)
{
    (void)state;
    const struct {
        const char *kernel;
        int m;
        const char *plan;
    } cases[] = {{"3x3", 6, "32 tiles x 128 output channels"}, {"2x2", 7, "32 tiles x 64 output channels"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *words[] = {"X", "8", "128", "256", "64x64", cases[i].kernel, "1", "1"};
        cg_generated g;
        generate_fused_at_tile(words, CONVGEN_FPROP, cases[i].m, &g);
        const char *src = g.kernels[g.kernel_count - 1].source;
        bool found = strstr(src, "__cluster_dims__(8") && strstr(src, cases[i].plan);
        cg_generated_free(&g);
        if (!found)
            fail_msg("F(%dx%d, %s): not clusters of 8 with %s", cases[i].m, cases[i].m, cases[i].kernel, cases[i].plan);
    }
}

/* winograd-fused's cluster kernel sums its products on the tensor cores in 3xTF32 where its chunks
 * are whole K steps of 8 channels: alpha 8's forms, 64 outputs a warp (F(4x4, 5x5) of 128 channels,
 * too few blocks of 128 outputs to fill the GPU's 132 multiprocessors) and 128 (F(6x6, 3x3) of 256
 * x 256), and says so in the header; alpha 6 (F(4x4, 3x3), chunks of 12) keeps the FFMA products. */
static void test_winograd_fused_tensor_products_where_they_fit(void **state)
{
    (void)state;
    const struct {
        const char *words[8];
        int m;
        bool tensor;
    } cases[] = {{{"N", "64", "64", "128", "56x56", "5x5", "2", "1"}, 4, true},
                 {{"W", "8", "256", "256", "64x64", "3x3", "1", "1"}, 6, true},
                 {{"S", "8", "256", "256", "64x64", "3x3", "1", "1"}, 4, false}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cg_generated g;
        generate_fused_at_tile(cases[i].words, CONVGEN_BPROP, cases[i].m, &g);
        const char *src = g.kernels[g.kernel_count - 1].source;
        bool cluster = strstr(src, "__cluster_dims__(") != NULL, mma = strstr(src, "mma.sync.aligned.m16n8k8") != NULL,
             said = strstr(src, "the products in 3xTF32 on the tensor cores") != NULL;
        cg_generated_free(&g);
        if (!cluster || mma != cases[i].tensor || said != cases[i].tensor)
            fail_msg("%s: cluster %d, mma %d, header %d; expected tensor products %d", cases[i].words[0], cluster, mma,
                     said, cases[i].tensor);
    }
}

/* direct-window's kernels on a target of 99 KiB of shared memory a block (sm_89): each asks for no
 * more than that, or the planner refuses the layer with a reason. The sliding fprop's two stages
 * of 56 KiB asked for up to 113 KiB there, and its trickle stash up to 118 KiB. */
static void test_window_kernels_fit_a_small_targets_shared_memory(void **state)
{
    (void)state;
    cg_target t = {0};
    assert_true(cg_target_shared_limits("sm_89", &t.shared_per_block, &t.shared_per_sm));
    const char *shapes[][8] = {{"A", "2", "4", "64", "25x59x43", "5x6x6", "2", "1"},
                               {"B", "2", "4", "32", "245x118", "15x13", "0", "1"},
                               {"C", "2", "2", "128", "12x25x11", "5x5x7", "1", "1"},
                               {"D", "8", "4", "64", "98x48x61", "2x1x6", "1", "1"},
                               {"E", "1", "1", "80", "128x128x128", "4x4x4", "0", "1"}};
    int refused = 0, fitted = 0;
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
            cg_layer l;
            int used;
            assert_int_equal(cg_layer_parse_words(shapes[i], 8, &l, &used), CONVGEN_SUCCESS);
            cg_problem p;
            assert_int_equal(cg_problem_init(&p, &l.desc), CONVGEN_SUCCESS);
            cg_generated g;
            convgen_status s = cg_generate(&p, (convgen_pass)pass, CONVGEN_ALGO_DIRECT_WINDOW, &t, &g);
            if (s == CONVGEN_ERROR_NOT_SUPPORTED) {
                assert_non_null(strstr(convgen_last_error(), "do not fit"));
                ++refused;
                continue;
            }
            assert_int_equal(s, CONVGEN_SUCCESS);
            for (int k = 0; k < g.kernel_count; ++k)
                if (g.kernels[k].shared_bytes > (unsigned)t.shared_per_block)
                    fail_msg("%s %s: %u bytes of shared memory a block, past sm_89's %d", shapes[i][0],
                             convgen_pass_name((convgen_pass)pass), g.kernels[k].shared_bytes, t.shared_per_block);
            ++fitted;
            cg_generated_free(&g);
        }
    printf("direct-window on sm_89: %d kernels within its shared memory, %d layer passes refused\n", fitted, refused);
    assert_true(fitted >= 7); /* refused: A and C's fprops (a channel's stage past 49 KiB there), B's bprop (anywhere) */
}

static void test_template_dir_override_is_used(void **state)
{
    (void)state;
    char dir[] = "/tmp/convgen-tmpl-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/split_reduce.cu", dir);
    FILE *f = fopen(path, "w");
    fputs("// edited {{ kernel_name }}\n", f);
    fclose(f);
    setenv("CONVGEN_TEMPLATE_DIR", dir, 1);
    cg_generated g;
    generate_ok(layer_named("L2"), CONVGEN_ACCGRAD, &g);
    /* the edited template's text, after the header every kernel gets (which says what it is) */
    const char *edited = "\n */\n// edited convgen_direct_accgrad_sum_splits\n", *src = g.kernels[1].source;
    assert_true(strlen(src) > strlen(edited) && strcmp(src + strlen(src) - strlen(edited), edited) == 0);
    assert_non_null(strstr(src, " * emitted by: convgen emit --algo direct --pass accgrad --kernel 1 "));
    assert_non_null(strstr(g.kernels[0].source, "__global__")); /* not overridden: embedded copy */
    cg_generated_free(&g);

    f = fopen(path, "w");
    fputs("ok\n{{ 1 + }}\n", f);
    fclose(f);
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &layer_named("L2")->desc), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate(&p, CONVGEN_ACCGRAD, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_ERROR_TEMPLATE);
    assert_non_null(strstr(convgen_last_error(), "split_reduce.cu:2:"));
    unsetenv("CONVGEN_TEMPLATE_DIR");
    unlink(path);
    rmdir(dir);
}

static void test_unknown_algorithm_and_pass_are_named(void **state)
{
    (void)state;
    cg_problem p;
    cg_generated g;
    assert_int_equal(cg_problem_init(&p, &layer_named("L4")->desc), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate(&p, (convgen_pass)7, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "pass = 7"));
    assert_int_equal(cg_generate(&p, CONVGEN_FPROP, (convgen_algo)42, NULL, &g), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "algo = 42"));
}

static void test_too_many_column_tiles_is_not_supported(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 1, .n = 1, .c = 1, .k = 65536ll * 64 + 1, .in = {1}, .kernel = {1}};
    cg_problem p;
    cg_generated g;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate(&p, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_ERROR_NOT_SUPPORTED);
    assert_non_null(strstr(convgen_last_error(), "65535 column tiles"));
    d.k = 65535ll * 64;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate(&p, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_SUCCESS);
    assert_true(g.kernels[0].grid[1] <= 65535);
    cg_generated_free(&g);
}

/* A strided bprop runs per stride phase on blockIdx.z beside the splits; where the phases
 * would not fit grid.z (65535) it gathers every tap instead, and huge strides never overflow
 * the phase count. */
static void test_strided_bprop_phases_fit_grid_z(void **state)
{
    (void)state;
    const struct { convgen_conv_desc d; int phases; } cases[] = {
        {{.rank = 2, .n = 32, .c = 5, .k = 64, .in = {224, 224}, .kernel = {7, 7}, .pad_before = {3, 3},
          .pad_after = {3, 3}, .stride = {2, 2}}, 4},                     /* G1 with 5 channels (3: windows) */
        {{.rank = 3, .n = 1, .c = 3, .k = 4096, .in = {16, 224, 224}, .kernel = {4, 16, 16},
          .stride = {4, 16, 16}}, 1024},                                                       /* many splits wanted */
        {{.rank = 2, .n = 2, .c = 1, .k = 1, .in = {3, 3}, .kernel = {1, 1}, .stride = {46341, 46341}}, 0},
        {{.rank = 2, .n = 1, .c = 1, .k = 1, .in = {1, 1}, .kernel = {1, 1}, .stride = {65536, 65536}}, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cg_problem p;
        cg_generated g;
        assert_int_equal(cg_problem_init(&p, &cases[i].d), CONVGEN_SUCCESS);
        assert_int_equal(cg_generate(&p, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_SUCCESS);
        char line[64];
        snprintf(line, sizeof line, "stride phases: %d on blockIdx.z", cases[i].phases);
        if (cases[i].phases) {
            assert_non_null(strstr(g.kernels[0].source, line));
            assert_int_equal(g.kernels[0].grid[2] % (unsigned)cases[i].phases, 0);
        } else {
            assert_null(strstr(g.kernels[0].source, "stride phases"));
        }
        assert_true(g.kernels[0].grid[2] >= 1 && g.kernels[0].grid[2] <= 65535);
        cg_generated_free(&g);
    }
}

/* direct-window takes the fprops and bprops with C <= 4 (within their limits). Its bprop (rank 1
 * to 3, no dilation, stride 1 along depth) slides windows: its phases on grid.z with the images
 * (and a 3-D layer's input slices), a phase that no tap reaches (stride 3 > kernel 2) as a class
 * with no products; its fprop slides each thread's outputs over the taps, the images, channel
 * chunks and depth tiles on grid.z. Elsewhere it says why it does not apply, and direct always
 * runs its implicit GEMM, few channels or not. */
static void test_few_channel_layers_slide(void **state)
{
    (void)state;
    const struct { convgen_conv_desc d; convgen_pass pass; unsigned z; const char *has; } cases[] = {
        {{.rank = 2, .n = 32, .c = 3, .k = 64, .in = {224, 224}, .kernel = {7, 7}, .pad_before = {3, 3},
          .pad_after = {3, 3}, .stride = {2, 2}}, CONVGEN_BPROP, 128, "products<3, 3>"},  /* G1 */
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {20, 22}, .kernel = {2, 2}, .stride = {3, 3}}, CONVGEN_BPROP, 18,
         "products<0, 0>"},
        {{.rank = 1, .n = 3, .c = 4, .k = 7, .in = {300}, .kernel = {7}, .pad_before = {3}, .pad_after = {3}},
         CONVGEN_BPROP, 3, "products<1, 7>"}, /* rank 1: a unit height */
        {{.rank = 2, .n = 2, .c = 5, .k = 6, .in = {20, 22}, .kernel = {3, 3}, .stride = {2, 2}}, CONVGEN_BPROP, 0,
         "c = 5 input channels; it takes at most 4"},
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {20, 22}, .kernel = {3, 3}, .dilation = {2, 1}}, CONVGEN_BPROP, 0,
         "dilation[0] = 2"},
        {{.rank = 3, .n = 2, .c = 3, .k = 6, .in = {9, 9, 9}, .kernel = {3, 3, 3}}, CONVGEN_BPROP, 10,
         "depth: blocks of 2 input slice(s) (5 blocks for 9)"}, /* rank 3: images x depth blocks on grid.z */
        {{.rank = 3, .n = 1, .c = 1, .k = 80, .in = {128, 128, 128}, .kernel = {4, 4, 4}}, CONVGEN_BPROP, 32,
         "the 7 slices of dy they meet as more stages with 4 depth slice(s)"}, /* Z1: 4 slices a block */
        {{.rank = 3, .n = 2, .c = 3, .k = 6, .in = {9, 9, 9}, .kernel = {3, 3, 3}, .stride = {2, 1, 1}}, CONVGEN_BPROP,
         0, "stride[0] = 2 along depth"},
        {{.rank = 3, .n = 8000, .c = 1, .k = 2, .in = {9, 9, 9}, .kernel = {3, 3, 3}}, CONVGEN_BPROP, 0,
         "times the input slices exceed grid.z's 65535"},
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {20, 22}, .kernel = {3, 3}}, CONVGEN_FPROP, 6,
         "y[n][k][o] = sum over c < 3"}, /* fprop: the sliding kernel, a 2-D layer's rows as depth */
        {{.rank = 3, .n = 1, .c = 1, .k = 80, .in = {128, 128, 128}, .kernel = {4, 4, 4}}, CONVGEN_FPROP, 32,
         "8 row group(s) in turn"}, /* Z1: two chunks of 40 output channels x 16 depth tiles */
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {40, 40}, .kernel = {17, 3}}, CONVGEN_FPROP, 0,
         "kernel[0] = 17 taps; it slides at most 16"},
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {20, 22}, .kernel = {3, 3}}, CONVGEN_ACCGRAD, 0, "accgrad is direct's"},
        {{.rank = 2, .n = 2, .c = 3, .k = 6, .in = {40, 40}, .kernel = {17, 3}}, CONVGEN_BPROP, 0,
         "kernel[0] = 17 at stride 1 is 17 taps a stride phase; it takes at most 16"},
        {{.rank = 2, .n = 1, .c = 1, .k = 1, .in = {1, 1}, .kernel = {1, 1}, .stride = {1, 65536}}, CONVGEN_BPROP, 0,
         "stride[1] = 65536 beyond 65535"},
        {{.rank = 2, .n = 40000, .c = 3, .k = 6, .in = {20, 20}, .kernel = {3, 3}, .stride = {1, 2}}, CONVGEN_BPROP, 0,
         "n = 40000 images times 2 stride phases"},
    };
    const cg_planner *window = cg_planner_of(CONVGEN_ALGO_DIRECT_WINDOW);
    assert_non_null(window);
    assert_string_equal(window->name, "direct-window");
    assert_string_equal(convgen_algo_name(CONVGEN_ALGO_DIRECT_WINDOW), "direct-window");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        cg_problem p;
        cg_generated g;
        assert_int_equal(cg_problem_init(&p, &cases[i].d), CONVGEN_SUCCESS);
        bool fits = cases[i].z > 0;
        convgen_status s = cg_generate(&p, cases[i].pass, CONVGEN_ALGO_DIRECT_WINDOW, NULL, &g);
        if ((s == CONVGEN_SUCCESS) != fits || (window->applicable(&p, cases[i].pass) == CONVGEN_SUCCESS) != fits)
            fail_msg("case %zu: %s", i, s ? convgen_last_error() : "applies");
        if (fits) {
            assert_int_equal(g.algo, CONVGEN_ALGO_DIRECT_WINDOW);
            assert_int_equal(g.kernel_count, 1);
            assert_string_equal(g.kernels[0].name, cases[i].pass == CONVGEN_FPROP ? "convgen_direct_fprop_slide"
                                                                                   : "convgen_direct_bprop_window");
            assert_int_equal(g.workspace_bytes, 0);
            assert_int_equal(g.kernels[0].grid[2], cases[i].z);
            assert_non_null(strstr(g.kernels[0].source, cases[i].has));
            assert_non_null(strstr(g.kernels[0].source, "emitted by: convgen emit --algo direct-window "));
            cg_generated_free(&g);
        } else {
            assert_int_equal(s, CONVGEN_ERROR_NOT_SUPPORTED);
            if (!strstr(convgen_last_error(), "direct-window: ") || !strstr(convgen_last_error(), cases[i].has))
                fail_msg("case %zu: expected '%s' in: %s", i, cases[i].has, convgen_last_error());
        }
        if (cases[i].d.rank < 3 && cases[i].d.n < 40000) { /* direct: its GEMM, windows or not */
            assert_int_equal(cg_generate(&p, cases[i].pass, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_SUCCESS);
            assert_null(strstr(g.kernels[0].name, "window"));
            cg_generated_free(&g);
        }
    }
}

/* The registry says which planners sub-batch under a workspace limit (CG_PLANNER_SUB_BATCHES,
 * which makes the runtime retry with a smaller budget): exactly those whose programs, limited
 * to a byte under their whole batch's workspace, cut the batch into chunks. */
static void test_planners_that_sub_batch_say_so(void **state)
{
    (void)state;
    const convgen_conv_desc d = {.rank = 2, .n = 4, .c = 4, .k = 4, .in = {12, 12}, .kernel = {3, 3},
                                 .pad_before = {1, 1}, .pad_after = {1, 1}};
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    for (int i = 0; i < cg_planner_count(); ++i) {
        const cg_planner *pl = cg_planner_at(i);
        bool cut = false;
        for (int pass = 0; pass < 3; ++pass) {
            cg_generated g;
            if (cg_generate(&p, (convgen_pass)pass, pl->algo, NULL, &g) != CONVGEN_SUCCESS)
                continue;
            cg_tuning t = {.workspace_limit = g.workspace_bytes - 1};
            cg_generated_free(&g);
            if (t.workspace_limit > 0 && cg_generate_tuned(&p, (convgen_pass)pass, pl->algo, NULL, &t, &g) == CONVGEN_SUCCESS) {
                cut |= g.chunks > 1;
                cg_generated_free(&g);
            }
        }
        if (cut != ((pl->flags & CG_PLANNER_SUB_BATCHES) != 0))
            fail_msg("%s: %s sub-batches but %s CG_PLANNER_SUB_BATCHES", pl->name, cut ? "it" : "nothing",
                     cut ? "lacks" : "has");
    }
}

static void test_tensors_past_2_32_elements_get_64_bit_addressing(void **state)
{
    (void)state;
    /* x has 2 * 64 * 2^13 * 2^12 = 2^32 elements; every GEMM extent stays below 2^31. */
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 64, .k = 2, .in = {8192, 4096}, .kernel = {1, 1}};
    cg_problem p;
    cg_generated g;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    for (int pass = 0; pass < 3; ++pass) {
        assert_int_equal(cg_generate(&p, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_SUCCESS);
        assert_non_null(strstr(g.kernels[0].source, "typedef unsigned long long idx_t;"));
        cg_generated_free(&g);
    }
    d.in[0] = 16;
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate(&p, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL, &g), CONVGEN_SUCCESS);
    assert_non_null(strstr(g.kernels[0].source, "typedef unsigned idx_t;"));
    cg_generated_free(&g);
}

/* The source of kernel `name` of the layer's fprop by `algo` (tune may be NULL), which must exist. */
static char *fprop_kernel(const convgen_conv_desc *d, convgen_algo algo, const cg_tuning *tune, const char *name)
{
    cg_problem p;
    cg_generated g;
    assert_int_equal(cg_problem_init(&p, d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_FPROP, algo, NULL, tune, &g), CONVGEN_SUCCESS);
    char *source = NULL;
    for (int i = 0; i < g.kernel_count && !source; ++i)
        if (strstr(g.kernels[i].name, name))
            source = strdup(g.kernels[i].source);
    cg_generated_free(&g);
    assert_non_null(source);
    return source;
}

/* Shapes chosen for the layer: the generated SGEMM's block covers 80 columns by one block 80 wide
 * (64 and 256 keep 64 and 128); the 3-D transforms' bricks take the rows that fill phase B's
 * rounds (33 tiles a row: 3 rows; 32: 2; 16: 4; 14: 7; 4: the whole plane), and where one row of
 * large tiles does not fit, runs of one row; the SGEMM's copies at offsets worked out once; the
 * FFT's complex GEMM takes 65 to 80 rows in one block 80 high; direct's bias is read once before
 * the stores. */
static void test_kernels_are_shaped_to_the_layer(void **state)
{
    (void)state;
    const cg_tuning generated = {.gemm = CONVGEN_GEMM_GENERATED};
    const struct {
        int64_t n, c, k, in[3], pad;
        const char *gemm_tiles, *brick;
    } cases[] = {{8, 80, 80, {133, 133, 133}, 0, "tiles: 128 x 80 of C a block", "brick: 3 row(s) of 33 tiles"},
                 {2, 32, 32, {128, 128, 128}, 1, NULL /* 32 columns: the skinny GEMM */, "brick: 2 row(s) of 32 tiles"},
                 {2, 64, 64, {64, 64, 64}, 1, "tiles: 128 x 64 of C a block", "brick: 4 row(s) of 16 tiles"},
                 {64, 80, 80, {65, 65, 65}, 0, "tiles: 128 x 80 of C a block", "brick: 4 row(s) of 16 tiles"},
                 {8, 64, 128, {16, 56, 56}, 1, "tiles: 128 x 128 of C a block", "brick: 7 row(s) of 14 tiles"},
                 {2, 256, 256, {16, 16, 16}, 1, "tiles: 128 x 128 of C a block", "brick: 4 row(s) of 4 tiles"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        int64_t q = cases[i].pad;
        convgen_conv_desc d = {.rank = 3, .n = cases[i].n, .c = cases[i].c, .k = cases[i].k,
                               .in = {cases[i].in[0], cases[i].in[1], cases[i].in[2]}, .kernel = {3, 3, 3},
                               .pad_before = {q, q, q}, .pad_after = {q, q, q}};
        char *products = fprop_kernel(&d, CONVGEN_ALGO_WINOGRAD, &generated, "products");
        char *tiles = fprop_kernel(&d, CONVGEN_ALGO_WINOGRAD, &generated, "transform_x");
        assert_true(!cases[i].gemm_tiles || strstr(products, cases[i].gemm_tiles));
        assert_non_null(strstr(tiles, cases[i].brick));
        free(products);
        free(tiles);
    }
    /* F(6, 3)^3: one row of 49 tiles' 8 x 8 x 98 planes passes 48 KB, so runs of 16 */
    const convgen_conv_desc large = {.rank = 3, .n = 1, .c = 2, .k = 2, .in = {20, 20, 194}, .kernel = {3, 3, 3}};
    const cg_tuning six = {.winograd_m = {6, 6, 6}};
    char *tiles = fprop_kernel(&large, CONVGEN_ALGO_WINOGRAD, &six, "transform_x");
    assert_non_null(strstr(tiles, "brick: 1 row(s) of 16 tiles"));
    free(tiles);
    /* the SGEMM's copies worked out once: 128 rows' 32 float4 copies a step row over 160 threads
     * are 5 step rows apart, the second copy only for the first 3 rows; 80 columns' 20 a row 8 */
    const convgen_conv_desc eighty = {.rank = 3, .n = 64, .c = 80, .k = 80, .in = {65, 65, 65}, .kernel = {3, 3, 3}};
    char *sgemm = fprop_kernel(&eighty, CONVGEN_ALGO_WINOGRAD, &generated, "products");
    assert_non_null(strstr(sgemm, "op(A)'s copies: 2 a step, 5 step rows apart"));
    assert_non_null(strstr(sgemm, "op(B)'s copies: 1 a step, 8 step rows apart"));
    assert_non_null(strstr(sgemm, "if (i == 1u && s >= 8u) // the last copy only where the step has a row left"));
    assert_null(strstr(sgemm, "for (unsigned u = tid;"));
    free(sgemm);
    /* the CGEMM's rows: 65 to 80 in one block 80 high, 64 and 96 in blocks of 32 */
    const struct {
        int64_t k;
        const char *tiles;
    } rows[] = {{80, "tiles: 80 x 32 of C a block"}, {70, "tiles: 80 x 32 of C a block"},
                {64, "tiles: 32 x 32 of C a block"}, {96, "tiles: 32 x 32 of C a block"}};
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        const convgen_conv_desc fragments = {.rank = 3, .n = 64, .c = 80, .k = rows[i].k, .in = {31, 31, 31},
                                             .kernel = {3, 3, 3}};
        char *cgemm = fprop_kernel(&fragments, CONVGEN_ALGO_FFT, NULL, "products");
        assert_non_null(strstr(cgemm, rows[i].tiles));
        free(cgemm);
    }
    convgen_conv_desc first = {.rank = 3, .n = 1, .c = 1, .k = 80, .in = {40, 40, 40}, .kernel = {2, 2, 2},
                               .epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU};
    char *direct = fprop_kernel(&first, CONVGEN_ALGO_DIRECT, NULL, "direct_fprop");
    assert_non_null(strstr(direct, "= fmaxf((acc[i][j]) + bias_at[j], 0.0f);"));
    assert_null(strstr(direct, "__ldg(bias + col), 0.0f)"));
    free(direct);
}

static void test_describe_writes_a_layer_line_and_options(void **state)
{
    (void)state;
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 3, .k = 4, .in = {9, 10}, .kernel = {3, 2},
                           .pad_before = {1, 1}, .pad_after = {1, 2}, .stride = {2, 2}, .dilation = {1, 3},
                           .mode = CONVGEN_CONVOLUTION};
    cg_problem p;
    char text[256];
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    cg_problem_describe(&p, text, sizeof text);
    assert_string_equal(text, "2 3 4 9x10 3x2 1 2 --pad-after 1x2 --dilation 1x3 --convolution");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_layer_and_pass_renders_with_a_header_saying_what_it_is),
        cmocka_unit_test(test_emitted_kernels_divide_only_by_magic_numbers),
        cmocka_unit_test(test_non_power_of_two_sizes_use_multiply_high),
        cmocka_unit_test(test_small_output_gets_a_split_reduction_with_workspace),
        cmocka_unit_test(test_a_target_without_clusters_gets_none),
        cmocka_unit_test(test_winograd_fused_takes_a_cluster_where_it_pays),
        cmocka_unit_test(test_winograd_fused_128_outputs_only_where_the_end_fits),
        cmocka_unit_test(test_winograd_fused_tensor_products_where_they_fit),
        cmocka_unit_test(test_template_dir_override_is_used),
        cmocka_unit_test(test_unknown_algorithm_and_pass_are_named),
        cmocka_unit_test(test_describe_writes_a_layer_line_and_options),
        cmocka_unit_test(test_too_many_column_tiles_is_not_supported),
        cmocka_unit_test(test_strided_bprop_phases_fit_grid_z),
        cmocka_unit_test(test_few_channel_layers_slide),
        cmocka_unit_test(test_window_kernels_fit_a_small_targets_shared_memory),
        cmocka_unit_test(test_planners_that_sub_batch_say_so),
        cmocka_unit_test(test_tensors_past_2_32_elements_get_64_bit_addressing),
        cmocka_unit_test(test_kernels_are_shaped_to_the_layer),
    };
    return cmocka_run_group_tests_name("emit", tests, load_layers, free_layers);
}
