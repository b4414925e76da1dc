/* The emitted kernels' CUDA run on the CPU (tests/kernel_cpu): every planner's program for small
 * layers of every pass, its kernels compiled by the host's C++ compiler and run thread by thread,
 * against the float64 reference, outputs poisoned with NaN, random operands (never zero). Where
 * test_conv_program checks what a planner decided by each kernel's op, this checks the kernels'
 * own code, in CI, where no GPU is; test_gpu_conv checks the same programs on the device. The
 * targets: an A100's (sm_80) and the H100's (sm_90: its tensor-core GEMM, mbarriers, bulk copies
 * and clusters run too; a kernel of asm the CPU cannot run would be listed as not run, with the
 * PTX that stopped it). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/mman.h>

#include "direct/direct_tc.h"
#include "gemm_tc.h"
#include "generate.h"
#include "kernel_cpu/kernel_cpu.h"
#include "reference.h"
#include "util.h"

#ifndef CONVGEN_TEST_CXX
#define CONVGEN_TEST_CXX "c++"
#endif

#define ERROR_BOUND 1e-5 /* fp32 kernels against float64, as test_conv_program's */

static kcpu_runner *runner;
static char why_not[512];
static uint64_t rng_state = 20261205u;

static void fill(float *v, int64_t n) { cg_fill_random(v, n, &rng_state); }

/* n floats that end against an inaccessible page (16-byte aligned start: up to 3 floats of
 * slack), so that a kernel's read or write past an operand faults rather than passing on
 * whatever the heap holds there. */
static float *guarded(int64_t n)
{
    size_t page = 4096, bytes = ((size_t)n * 4 + 15) & ~(size_t)15, span = (bytes + page - 1) / page * page + page;
    char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(base != MAP_FAILED);
    assert_int_equal(mprotect(base + span - page, page, PROT_NONE), 0);
    return (float *)(base + span - page - bytes);
}

static void unguard(float *v, int64_t n)
{
    size_t page = 4096, bytes = ((size_t)n * 4 + 15) & ~(size_t)15, span = (bytes + page - 1) / page * page + page;
    munmap((char *)v + bytes + page - span, span);
}

/* Floats by which cpu_error places in1 past a 16-byte boundary (0: aligned), for the kernels'
 * paths for a caller's operand that is only 4-byte aligned. */
static int in1_shift;

/* Where set, text that one of the program's kernels must have (cpu_error fails it otherwise): the
 * form a test means to run, so that a planner's change of mind cannot pass it unrun. */
static const char *required_text;

/* Runs the algorithm's program for (d, pass) on target t (NULL: the H100's) with the kernels on the
 * CPU; returns its relative error against float64, REFUSED where the planner refuses the layer, or
 * NOT_RUN with the reason in why (PTX the CPU cannot run). */
#define REFUSED (-1.0)
#define NOT_RUN (-2.0)
static double cpu_error(const convgen_conv_desc *d, convgen_pass pass, convgen_algo algo, const cg_target *t,
                        const cg_tuning *tuning, char *why, size_t why_size)
{
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, d), CONVGEN_SUCCESS);
    cg_generated g;
    cg_tuning tune = tuning ? *tuning : (cg_tuning){0};
    if (cg_generate_tuned(&p, pass, algo, t, &tune, &g) != CONVGEN_SUCCESS)
        return REFUSED;
    bool has_required = !required_text;
    for (int i = 0; i < g.kernel_count && !has_required; ++i)
        has_required = strstr(g.kernels[i].source, required_text) != NULL;
    if (!has_required)
        fail_msg("%s %s: no kernel of the program has '%s'", convgen_algo_name(algo), convgen_pass_name(pass),
                 required_text);
    int64_t elems[3];
    cg_problem_operand_elems(&p, pass, elems);
    float *in0 = guarded(elems[0]), *in1 = guarded(elems[1] + in1_shift) + in1_shift, *out = guarded(elems[2]),
          *bias = guarded(p.k);
    fill(in0, elems[0]), fill(in1, elems[1]), fill(bias, p.k);
    memset(out, 0xFF, 4 * (size_t)elems[2]); /* NaN: an output never written fails */
    const cg_kernel_runner r = kcpu_program_runner(runner);
    const float *b = p.epilogue & CG_EPILOGUE_BIAS ? bias : NULL;
    if (kcpu_prepare(runner, g.kernels, g.kernel_count) != CONVGEN_SUCCESS)
        fail_msg("%s %s: %s", convgen_algo_name(algo), convgen_pass_name(pass), convgen_last_error());
    convgen_status s = cg_program_run(&g, in0, in1, b, out, &r);
    double e = NOT_RUN;
    if (s == CONVGEN_SUCCESS)
        e = ref_compare(&p, pass, in0, in1, b, out, elems[2], elems[2], &rng_state, &(double){0});
    else if (strstr(convgen_last_error(), ": asm: "))
        snprintf(why, why_size, "%s", strstr(convgen_last_error(), "kernel_cpu: "));
    else
        fail_msg("%s %s: %s", convgen_algo_name(algo), convgen_pass_name(pass), convgen_last_error());
    cg_generated_free(&g);
    unguard(in0, elems[0]), unguard(in1 - in1_shift, elems[1] + in1_shift), unguard(out, elems[2]), unguard(bias, p.k);
    return e;
}

static int setup(void **state)
{
    (void)state;
    if (kcpu_create(CONVGEN_TEST_CXX, CONVGEN_SOURCE_DIR "/tests/kernel_cpu", &runner) != CONVGEN_SUCCESS)
        snprintf(why_not, sizeof why_not, "%s", convgen_last_error());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    kcpu_destroy(runner);
    return 0;
}

static void skip_without_compiler(void)
{
    if (!runner) {
        printf("SKIPPED: no C++ compiler to build kernels for the CPU: %s\n", why_not);
        skip();
    }
}

/* An sm_80 GPU of `sms` SMs (an A100's shared memory): mma.sync's, no wgmma. */
static cg_target sm80(int sms)
{
    cg_target t = {.sm_count = sms};
    assert_true(cg_target_shared_limits("sm_80", &t.shared_per_block, &t.shared_per_sm));
    t.max_cluster = cg_target_max_cluster("sm_80");
    snprintf(t.arch, sizeof t.arch, "sm_80");
    return t;
}

static cg_target a100(void) { return sm80(108); }

/* Small layers that reach every planner's paths: 3x3 and 5x5 with pads, uneven sizes and
 * uneven pads, rank 1 and 3, stride 2 (direct's), dilation 2, 1x1, few channels (direct-window),
 * and 40 channels, which fill several of the fused kernels' chunks and blocks. */
static const convgen_conv_desc layers[] = {
    {.rank = 2, .n = 2, .c = 8, .k = 8, .in = {10, 10}, .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}},
    {.rank = 2, .n = 1, .c = 3, .k = 5, .in = {9, 11}, .kernel = {5, 5}, .pad_before = {2, 1}, .pad_after = {0, 2},
     .mode = CONVGEN_CROSS_CORRELATION},
    {.rank = 3, .n = 1, .c = 2, .k = 3, .in = {5, 6, 7}, .kernel = {3, 3, 3}, .pad_before = {1, 1, 1},
     .pad_after = {1, 1, 1}},
    {.rank = 1, .n = 2, .c = 3, .k = 2, .in = {20}, .kernel = {4}, .pad_before = {1}, .pad_after = {2}},
    {.rank = 2, .n = 2, .c = 4, .k = 6, .in = {12, 12}, .kernel = {3, 3}, .stride = {2, 2}},
    {.rank = 2, .n = 1, .c = 5, .k = 3, .in = {13, 12}, .kernel = {3, 2}, .dilation = {2, 1}, .pad_before = {2, 0}},
    {.rank = 2, .n = 3, .c = 6, .k = 7, .in = {6, 5}, .kernel = {1, 1}},
    {.rank = 2, .n = 1, .c = 40, .k = 36, .in = {14, 15}, .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}},
};
enum { LAYERS = sizeof layers / sizeof layers[0], PASSES = 3 };

/* Fails the test for (d, pass, algo) on t, whose error was e, after running the program again in
 * each order and logging both errors: once in several runs of the whole suite (sessions 66, 68,
 * 69), a 3-D layer's fft (layers[2], the random layer 2) has come out non-finite, never when its
 * test ran alone. */
static void fail_with_reruns(const convgen_conv_desc *d, convgen_pass pass, convgen_algo algo, const cg_target *t,
                             double e, const char *label)
{
    double again[2];
    char why[600] = "";
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        again[order - KCPU_IN_ORDER] = cpu_error(d, pass, algo, t, NULL, why, sizeof why);
    }
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
    fail_msg("%s %s %s: relative error %.3g (again in order %.3g, reversed %.3g) %s", label, convgen_algo_name(algo),
             convgen_pass_name(pass), e, again[0], again[1], why);
}

/* Every planner's program of every layer and pass on target t (NULL: the H100's): each one the
 * CPU runs is within the bound. Programs that reach PTX the CPU cannot run are counted and named;
 * *ran says how many ran. */
static void every_planner(const cg_target *t, const int *which, int count, int *ran, int *not_run)
{
    *ran = *not_run = 0;
    for (int i = 0; i < count; ++i)
        for (int planner = 0; planner < cg_planner_count(); ++planner)
            for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
                const convgen_algo a = cg_planner_at(planner)->algo;
                const char *algo = convgen_algo_name(a), *pass_name = convgen_pass_name((convgen_pass)pass);
                char why[600] = "";
                double e = cpu_error(&layers[which[i]], (convgen_pass)pass, a, t, NULL, why, sizeof why);
                if (e == REFUSED)
                    continue;
                if (e == NOT_RUN) {
                    printf("not run on the CPU: layer %d %s %s: %s\n", which[i], algo, pass_name, why);
                    ++*not_run;
                    continue;
                }
                if (!(e < ERROR_BOUND)) {
                    char label[32];
                    snprintf(label, sizeof label, "layer %d", which[i]);
                    fail_with_reruns(&layers[which[i]], (convgen_pass)pass, a, t, e, label);
                }
                ++*ran;
            }
}

static void test_every_planner_on_an_a100(void **state)
{
    (void)state;
    skip_without_compiler();
    cg_target t = a100();
    int ran, not_run, all[LAYERS];
    for (int l = 0; l < LAYERS; ++l)
        all[l] = l;
    every_planner(&t, all, LAYERS, &ran, &not_run);
    printf("sm_80: %d programs ran on the CPU within %.0e, %d not run\n", ran, ERROR_BOUND, not_run);
    assert_int_equal(not_run, 0);
    assert_true(ran >= 120);
}

static void test_every_planner_on_an_h100(void **state)
{
    (void)state;
    skip_without_compiler();
    /* the layers whose sm_90 programs differ from sm_80's beyond the header: 3x3 2-D and 3-D
     * (winograd's, fft's), and 40 channels */
    const int which[] = {0, 2, 7};
    int ran, not_run;
    every_planner(NULL, which, 3, &ran, &not_run);
    printf("sm_90: %d programs ran on the CPU within %.0e, %d not run (their PTX above)\n", ran, ERROR_BOUND, not_run);
    assert_true(ran >= 50);
    assert_int_equal(not_run, 0); /* layer 7's winograd accgrad among them: the tensor GEMM */
}

static int no_required_text(void **state)
{
    (void)state;
    required_text = NULL;
    if (runner)
        kcpu_set_schedule(runner, KCPU_ALTERNATE);
    return 0;
}

/* A 2-D layer of n images, c and k channels, h x w, an r x r kernel, padded by pad each side. */
#define LAYER2(n_, c_, k_, h_, w_, r_, pad_) \
    {.rank = 2, .n = n_, .c = c_, .k = k_, .in = {h_, w_}, .kernel = {r_, r_}, .pad_before = {pad_, pad_}, \
     .pad_after = {pad_, pad_}}

/* The program for (d, pass, algo) on target t with `tune`, which must have the text `required`,
 * within the bound in each of the runner's orders: each catches its own races (kernel_cpu_sm90.h),
 * whatever the program's launch count. `what` names it in a failure. Returns the runs, 2. */
static int check_both_orders(const convgen_conv_desc *d, convgen_pass pass, convgen_algo algo, const cg_target *t,
                             const cg_tuning *tune, const char *required, const char *what)
{
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        required_text = required;
        char why[600] = "";
        double e = cpu_error(d, pass, algo, t, tune, why, sizeof why);
        if (!(e >= 0 && e < ERROR_BOUND))
            fail_msg("%s %s, %s: %.3g %s %s", what, convgen_pass_name(pass), order == KCPU_IN_ORDER ? "in order" : "reversed",
                     e, why, e == REFUSED ? convgen_last_error() : "");
    }
    return 2;
}

/* winograd's products by the tensor-core GEMM (gemm_tc.cu: mbarriers, bulk copies, wgmma in
 * 3xTF32), every pass, on test_gpu_conv's winograd_tensor shapes: the transforms' pieces with and
 * without their lo halves, operands as stored (accgrad's), sums not a whole number of steps, bn
 * of 24 to 256 and half tiles (520 and 300 outputs), sub-batches, 3-D, convolution mode, sums
 * past a run (2100 channels: two runs the output transform adds), R4 in small (36 blocks);
 * planned for 132 SMs and again (but those of 2100 channels) for 2, where each block takes
 * several tiles in turn (persistent); each program in both of the runner's orders. accgrad of a
 * 3-D layer is cuBLAS's, not run here. */
static void test_winograd_tensor_gemm(void **state)
{
    (void)state;
    skip_without_compiler();
    convgen_conv_desc shapes[] = {
        LAYER2(4, 16, 24, 28, 28, 3, 1), LAYER2(8, 36, 40, 20, 20, 3, 1), LAYER2(4, 64, 300, 14, 14, 3, 1),
        LAYER2(8, 8, 520, 9, 9, 3, 1), LAYER2(4, 32, 32, 32, 32, 5, 2), LAYER2(8, 64, 64, 15, 17, 3, 0),
        LAYER2(4, 12, 20, 18, 18, 3, 1), LAYER2(2, 13, 21, 19, 19, 3, 1), LAYER2(6, 21, 130, 11, 11, 3, 1),
        LAYER2(2, 2100, 24, 10, 10, 3, 1), LAYER2(2, 24, 2100, 10, 10, 3, 1), LAYER2(2, 256, 256, 7, 7, 3, 1),
        {.rank = 3, .n = 4, .c = 16, .k = 20, .in = {10, 12, 12}, .kernel = {3, 3, 3}, .pad_before = {1, 1, 1},
         .pad_after = {1, 1, 1}},
        {.rank = 3, .n = 4, .c = 10, .k = 12, .in = {9, 9, 9}, .kernel = {3, 3, 3}, .pad_before = {1, 1, 1},
         .pad_after = {1, 1, 1}},
    };
    shapes[6].mode = CONVGEN_CONVOLUTION;
    const cg_target few = {.sm_count = 2};
    const cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    int ran = 0;
    for (int ti = 0; ti < 2; ++ti)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int pass = CONVGEN_FPROP; pass <= (shapes[i].rank < 3 ? CONVGEN_ACCGRAD : CONVGEN_BPROP); ++pass) {
                if (ti == 1 && (shapes[i].c > 2048 || shapes[i].k > 2048))
                    continue; /* the runs of 2100 channels once (a third of the test's time) */
                char what[64];
                snprintf(what, sizeof what, "shape %zu%s", i, ti ? " on 2 SMs" : "");
                ran += check_both_orders(&shapes[i], (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD, ti ? &few : NULL, &tune,
                                         ti ? "(persistent)" : "wgmma.mma_async", what);
            }
    printf("winograd's tensor-core GEMM: %d runs within %.0e (each program in both orders)\n", ran, ERROR_BOUND);
}

/* fft's products by the complex GEMM on the tensor cores (gemm=tensor: gemm_complex_tc.cu, mma.sync
 * in 3xTF32), every pass: rows below 16 (blocks of 16) and past 32 (two row blocks, the last part
 * outside), columns of 4 to 32 and past, sums below a mma's 4 (3 channels), between steps and over
 * many, bins not a multiple of the block's 4, rank 1 to 3, convolution mode; the tiles by 16-byte
 * copies of bin pairs (14 of the 24 programs; shape 7's 10 bins leave the last block one pair, with
 * tiles 16 rows wide and a sum of 3 among them) and by 8-byte copies (where a thread's copies would
 * lie more step rows apart than the step has: shape 1 fprop and accgrad, shape 4 bprop and accgrad;
 * where the bins are odd: shapes 5 and 6); on the H100's target and an A100's, each program in
 * both of the runner's orders. */
static void test_fft_tensor_gemm(void **state)
{
    (void)state;
    skip_without_compiler();
    convgen_conv_desc shapes[] = {
        LAYER2(4, 16, 24, 20, 20, 5, 2), LAYER2(2, 3, 5, 12, 12, 3, 1), LAYER2(8, 40, 36, 16, 16, 7, 0),
        LAYER2(33, 20, 70, 9, 11, 3, 1), LAYER2(3, 9, 2, 13, 10, 4, 1),
        {.rank = 3, .n = 3, .c = 6, .k = 10, .in = {8, 8, 8}, .kernel = {3, 3, 3}, .pad_before = {1, 1, 1},
         .pad_after = {1, 1, 1}},
        {.rank = 1, .n = 5, .c = 7, .k = 18, .in = {40}, .kernel = {6}, .pad_before = {2}, .pad_after = {3}},
        {.rank = 1, .n = 3, .c = 10, .k = 12, .in = {16}, .kernel = {5}, .pad_before = {1}, .pad_after = {1}},
    };
    shapes[4].mode = CONVGEN_CONVOLUTION;
    const cg_target sm80 = a100();
    const cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    int ran = 0;
    for (int ti = 0; ti < 2; ++ti)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
                char what[64];
                snprintf(what, sizeof what, "shape %zu%s", i, ti ? " on sm_80" : "");
                ran += check_both_orders(&shapes[i], (convgen_pass)pass, CONVGEN_ALGO_FFT, ti ? &sm80 : NULL, &tune,
                                         "mma.sync.aligned.m16n8k8", what);
            }
    /* each copy form where it is meant to be */
    ran += check_both_orders(&shapes[0], CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL, &tune, "cp.async.cg.shared.global",
                             "shape 0 by bin pairs");
    ran += check_both_orders(&shapes[1], CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL, &tune, "cp.async.ca.shared.global",
                             "shape 1 by 8-byte copies");
    printf("fft's complex GEMM on the tensor cores: %d runs within %.0e (each program in both orders)\n", ran,
           ERROR_BOUND);
}

/* direct's implicit GEMM on the tensor cores (gemm=tensor: mma.sync in 3xTF32, an sm_80 GPU's form),
 * every pass of every small layer it takes (taps 1 to 27, accgrad's to 9; rank 1 to 3, pads
 * uneven, dilation, stride but in bprop, channels not a whole chunk), of 72 columns (column tiles
 * of 16, the last half outside the GEMM) in convolution mode, fprop with bias and ReLU, accgrad in
 * one split (no workspace); planned for 108 SMs (accgrad's sum in many splits) and for 2 (few),
 * each in both of the runner's orders; three tiles the rule picks, named. What it refuses, it
 * names. sm_90's form (wgmma) is test_direct_tensor_patch's. */
static void test_direct_tensor(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_target many = a100(), few = sm80(2);
    const cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    convgen_conv_desc shapes[LAYERS + 1];
    memcpy(shapes, layers, sizeof layers);
    shapes[LAYERS] = (convgen_conv_desc){.rank = 2, .n = 3, .c = 20, .k = 72, .in = {9, 11}, .kernel = {3, 3},
                                         .pad_before = {1, 1}, .pad_after = {1, 1}, .mode = CONVGEN_CONVOLUTION};
    int ran = 0, refused = 0;
    for (int ti = 0; ti < 2; ++ti)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
                cg_problem p;
                cg_generated g;
                assert_int_equal(cg_problem_init(&p, &shapes[i]), CONVGEN_SUCCESS);
                char why[32] = "";
                if (pass == CONVGEN_BPROP && p.stride[0] > 1)
                    snprintf(why, sizeof why, "bprop of stride 2");
                if (pass == CONVGEN_ACCGRAD && cg_problem_kernel_pixels(&p) > 9)
                    snprintf(why, sizeof why, "accgrad of %lld taps", (long long)cg_problem_kernel_pixels(&p));
                if (why[0]) {
                    assert_int_equal(cg_generate_tuned(&p, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, NULL, &tune, &g),
                                     CONVGEN_ERROR_NOT_SUPPORTED);
                    assert_non_null(strstr(convgen_last_error(), why));
                    ++refused;
                    continue;
                }
                char what[64];
                snprintf(what, sizeof what, "direct tensor, shape %zu%s", i, ti ? " on 2 SMs" : "");
                ran += check_both_orders(&shapes[i], (convgen_pass)pass, CONVGEN_ALGO_DIRECT, ti ? &few : &many, &tune,
                                         "mma.sync.aligned", what);
            }
    cg_target a = a100();
    convgen_conv_desc d = layers[0];
    d.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
    ran += check_both_orders(&d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &a, &tune, "fmaxf(", "direct tensor, epilogue");
    /* accgrad in one split, its workspace limited to nothing: 25 chunks, their sums joined by fp32
     * adds every 8 (the second accumulator) */
    const cg_tuning no_workspace = {.gemm = CONVGEN_GEMM_TENSOR, .workspace_limit = 1};
    const convgen_conv_desc long_sum = {.rank = 2, .n = 2, .c = 8, .k = 8, .in = {20, 20}, .kernel = {3, 3},
                                        .pad_before = {1, 1}, .pad_after = {1, 1}};
    ran += check_both_orders(&long_sum, CONVGEN_ACCGRAD, CONVGEN_ALGO_DIRECT, &many, &no_workspace, "recent[i][j]",
                             "direct tensor, accgrad without workspace");
    /* the tile of the least time on the busiest SM (choose_tiles' tile_time): fprop on 4 SMs, 64 x 16
     * (20 tiles, 5 on the busiest: 318 against 64 x 32's 321, and 128 x 64's 350, 3 tiles each
     * alone on an SM); bprop on 1 SM, 64 x 64 (5 tiles, where 128 x 64's 3 cover 384 rows for 288);
     * fprop and bprop on 1 SM, 128 x 64 where 128 rows waste none (16 x 16: 512 rows) */
    const cg_target four = sm80(4), one = sm80(1);
    const convgen_conv_desc wide_cols = {.rank = 2, .n = 2, .c = 64, .k = 64, .in = {12, 12}, .kernel = {3, 3},
                                         .pad_before = {1, 1}, .pad_after = {1, 1}};
    const convgen_conv_desc whole_rows = {.rank = 2, .n = 2, .c = 64, .k = 64, .in = {16, 16}, .kernel = {3, 3},
                                          .pad_before = {1, 1}, .pad_after = {1, 1}};
    ran += check_both_orders(&wide_cols, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &four, &tune, "block 64 x 16",
                             "direct tensor, 64 x 16 tiles");
    ran += check_both_orders(&wide_cols, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, &one, &tune, "block 64 x 64",
                             "direct tensor, 64 x 64 tiles");
    ran += check_both_orders(&whole_rows, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &one, &tune, "block 128 x 64",
                             "direct tensor, 128 x 64 tiles");
    ran += check_both_orders(&whole_rows, CONVGEN_BPROP, CONVGEN_ALGO_DIRECT, &one, &tune, "block 128 x 64",
                             "direct tensor, 128 x 64 tiles");
    /* 49 taps are refused by name */
    const convgen_conv_desc wide = {.rank = 2, .n = 1, .c = 4, .k = 4, .in = {9, 9}, .kernel = {7, 7}};
    const struct { const convgen_conv_desc *d; convgen_pass pass; const char *why; } refusals[] = {
        {&wide, CONVGEN_FPROP, "49 taps"}};
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; ++i) {
        cg_problem p;
        cg_generated g;
        assert_int_equal(cg_problem_init(&p, refusals[i].d), CONVGEN_SUCCESS);
        assert_int_equal(cg_generate_tuned(&p, refusals[i].pass, CONVGEN_ALGO_DIRECT, NULL, &tune, &g),
                         CONVGEN_ERROR_NOT_SUPPORTED);
        assert_non_null(strstr(convgen_last_error(), refusals[i].why));
        ++refused;
    }
    /* 27 taps and 64 outputs (ZNNi's 3-D layers): a narrower tile where the widest overruns the
     * shared memory, not a refusal; on an A100, 25 taps too (F2) */
    const convgen_conv_desc deep = {.rank = 3, .n = 1, .c = 64, .k = 64, .in = {18, 18, 18}, .kernel = {3, 3, 3},
                                    .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}},
                            f2 = {.rank = 2, .n = 64, .c = 64, .k = 128, .in = {56, 56}, .kernel = {5, 5},
                                  .pad_before = {2, 2}, .pad_after = {2, 2}};
    const struct { const convgen_conv_desc *d; const cg_target *t; } fits[] = {{&deep, NULL}, {&f2, &a}};
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; ++i)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
            cg_problem p;
            direct_tc_spec spec;
            assert_int_equal(cg_problem_init(&p, fits[i].d), CONVGEN_SUCCESS);
            if (cg_direct_tc_spec(&p, (convgen_pass)pass, fits[i].t, 0, &spec) != CONVGEN_SUCCESS)
                fail_msg("fit %zu %s: %s", i, convgen_pass_name((convgen_pass)pass), convgen_last_error());
            assert_true(spec.shared_bytes <= cg_target_shared_per_block(fits[i].t));
        }
    /* a chunk's channels 36 M floats apart: their offsets in 64 bits */
    const convgen_conv_desc huge = {.rank = 2, .n = 1, .c = 64, .k = 64, .in = {6002, 6002}, .kernel = {1, 1}};
    cg_problem hp;
    cg_generated hg;
    assert_int_equal(cg_problem_init(&hp, &huge), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_tuned(&hp, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &many, &tune, &hg), CONVGEN_SUCCESS);
    assert_non_null(strstr(hg.kernels[0].source, "(long long)i * 36024004"));
    cg_generated_free(&hg);
    printf("direct's tensor-core GEMM: %d runs within %.0e (each program in both orders), %d refusals named\n", ran,
           ERROR_BOUND, refused);
}

/* direct's tensor forms with A from a patch of src in shared memory (each chunk's lines of the
 * tile copied once, the sum tap-major), fprop and bprop: tiles across 2 to 4 small images, pads
 * uneven, channels not a whole chunk, stride 2, dilation 2, rank 1 (its images the lines),
 * convolution mode, a 2 x 2 kernel (16 channels a chunk), a 1 x 3 one, tiles inside one image, and
 * pads past the kernel's reach (bprop's origin negative); wgmma's fprop with bias and ReLU too. Each on an sm_80 GPU (mma.sync: 108 SMs,
 * 64-row tiles, and 2, 128 rows), where it must copy the patch (load_patch), and on sm_90 (wgmma,
 * B's pieces made by the kernel before: 132 SMs and 2), where the products must be wgmma's, and
 * tiles of 256 rows on sm_90; each program in both of the runner's orders. The gather's tiles are test_direct_tensor's. */
static void test_direct_tensor_patch(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    const cg_target many80 = a100(), few80 = sm80(2), few90 = {.sm_count = 2};
    const cg_target *targets[] = {&many80, &few80, NULL, &few90};
    const char *const names[] = {"", " on 2 SMs", ", wgmma", ", wgmma on 2 SMs"};
#define D2(n_, c_, k_, h_, w_, r_, s_) \
    {.rank = 2, .n = n_, .c = c_, .k = k_, .in = {h_, w_}, .kernel = {r_, s_}}
    convgen_conv_desc shapes[] = {
        D2(3, 8, 16, 7, 9, 3, 3),   D2(2, 20, 24, 15, 13, 3, 3), D2(2, 8, 8, 17, 19, 3, 3),
        D2(2, 8, 8, 14, 14, 3, 3),  D2(2, 8, 8, 12, 12, 3, 3),   D2(2, 16, 8, 11, 11, 2, 2),
        D2(2, 8, 8, 9, 20, 1, 3),   D2(2, 16, 64, 20, 20, 3, 3), D2(2, 8, 8, 10, 10, 3, 3),
        {.rank = 1, .n = 4, .c = 16, .k = 8, .in = {50}, .kernel = {3}, .pad_before = {1}, .pad_after = {1}},
    };
#undef D2
    shapes[0].pad_before[0] = shapes[0].pad_before[1] = shapes[0].pad_after[0] = shapes[0].pad_after[1] = 1;
    shapes[1].pad_before[0] = 2, shapes[1].pad_after[0] = 1, shapes[1].pad_after[1] = 2;
    shapes[2].pad_before[0] = shapes[2].pad_before[1] = shapes[2].pad_after[0] = shapes[2].pad_after[1] = 1;
    shapes[2].stride[0] = shapes[2].stride[1] = 2;
    shapes[3].pad_before[0] = shapes[3].pad_before[1] = shapes[3].pad_after[0] = shapes[3].pad_after[1] = 2;
    shapes[3].dilation[0] = shapes[3].dilation[1] = 2;
    shapes[4].pad_before[0] = shapes[4].pad_before[1] = shapes[4].pad_after[0] = shapes[4].pad_after[1] = 1;
    shapes[4].mode = CONVGEN_CONVOLUTION;
    shapes[6].pad_before[1] = shapes[6].pad_after[1] = 1;
    /* pads past the kernel's reach: bprop's origin (r - 1) dil - pad is negative */
    shapes[8].pad_before[0] = shapes[8].pad_before[1] = shapes[8].pad_after[0] = shapes[8].pad_after[1] = 3;
    int ran = 0;
    for (int ti = 0; ti < 4; ++ti)
        for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; ++i)
            for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
                if (pass == CONVGEN_BPROP && shapes[i].stride[0] > 1)
                    continue; /* bprop of stride 2 is refused (test_direct_tensor) */
                char what[64];
                snprintf(what, sizeof what, "direct tensor, patch, shape %zu%s", i, names[ti]);
                ran += check_both_orders(&shapes[i], (convgen_pass)pass, CONVGEN_ALGO_DIRECT, targets[ti], &tune,
                                         ti < 2 ? "load_patch(" : "wgmma.mma_async", what);
            }
    /* tiles of 256 rows (four warpgroups, 512 threads), fprop and bprop: 64 channels a side, one
       image of 30 x 30 on 2 SMs */
    const convgen_conv_desc tall = {.rank = 2, .n = 1, .c = 64, .k = 64, .in = {30, 30}, .kernel = {3, 3},
                                    .pad_before = {1, 1}, .pad_after = {1, 1}};
    for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass)
        ran += check_both_orders(&tall, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, &few90, &tune, "4 warpgroups of 64 x 64",
                                 "direct tensor, patch, wgmma, 256 x 64 on 2 SMs");
    /* wgmma's fprop with bias and ReLU as it stores y (sm_90, the default target) */
    convgen_conv_desc biased = shapes[1];
    biased.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
    ran += check_both_orders(&biased, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL, &tune, "fmaxf(",
                             "direct tensor, patch, wgmma, epilogue");
    /* a workspace limit below wgmma's pieces: mma.sync's form on sm_90, which needs none (its
       instruction: wgmma's source names mma.sync in a comment) */
    const cg_tuning small_workspace = {.gemm = CONVGEN_GEMM_TENSOR, .workspace_limit = 1024};
    ran += check_both_orders(&shapes[7], CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, NULL, &small_workspace, "mma.sync.aligned",
                             "direct tensor, patch, sm_90 within a workspace limit");
    printf("direct's tensor form, A from a patch: %d runs within %.0e (each program in both orders)\n", ran,
           ERROR_BOUND);
}

/* One prepared run of direct's wgmma program for (d, pass): its first kernel (the weights' pieces)
 * once on w, w then poisoned (NaN), and the kernels after it on two random inputs, each output
 * poisoned before and compared with float64 on the original w: the worse error. */
static double direct_prepared_error(const convgen_conv_desc *d, convgen_pass pass)
{
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, d), CONVGEN_SUCCESS);
    cg_generated g;
    cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    assert_int_equal(cg_generate_tuned(&p, pass, CONVGEN_ALGO_DIRECT, NULL, &tune, &g), CONVGEN_SUCCESS);
    assert_true(cg_program_prepares_weights(&g));
    assert_true(g.kernels[0].weights_only && strstr(g.kernels[1].source, "wgmma.mma_async"));
    assert_int_equal(kcpu_prepare(runner, g.kernels, g.kernel_count), CONVGEN_SUCCESS);
    int64_t elems[3];
    cg_problem_operand_elems(&p, pass, elems);
    float *w = guarded(elems[1]), *x = guarded(elems[0]), *out = guarded(elems[2]), *bias = guarded(p.k),
          *poisoned = guarded(elems[1]);
    char *ws = malloc((size_t)g.workspace_bytes);
    assert_non_null(ws);
    memset(ws, 0xFF, (size_t)g.workspace_bytes);
    memset(poisoned, 0xFF, 4 * (size_t)elems[1]);
    fill(w, elems[1]), fill(bias, p.k);
    const float *b = p.epilogue & CG_EPILOGUE_BIAS ? bias : NULL;
    const cg_kernel_runner r = kcpu_program_runner(runner);
    if (r.run(r.user, &g.kernels[0], NULL, w, NULL, ws, b) != CONVGEN_SUCCESS)
        fail_msg("pieces: %s", convgen_last_error());
    double worst = 0;
    for (int run = 0; run < 2; ++run) {
        fill(x, elems[0]);
        memset(out, 0xFF, 4 * (size_t)elems[2]);
        for (int i = 1; i < g.kernel_count; ++i)
            if (r.run(r.user, &g.kernels[i], x, poisoned, out, ws, b) != CONVGEN_SUCCESS)
                fail_msg("kernel %d: %s", i, convgen_last_error());
        double e = ref_compare(&p, pass, x, w, b, out, elems[2], elems[2], &rng_state, &(double){0});
        worst = e > worst || e != e ? e : worst;
    }
    free(ws);
    cg_generated_free(&g);
    unguard(w, elems[1]), unguard(x, elems[0]), unguard(out, elems[2]), unguard(bias, p.k),
        unguard(poisoned, elems[1]);
    return worst;
}

/* direct's wgmma form (sm_90) prepares its weights: B's pieces made once by its first kernel and
 * read by the GEMM from the workspace, never from w (poisoned after), on two inputs each: fprop
 * with bias and ReLU, bprop, a channel tail (20 channels) and a partial column tile. mma.sync's form
 * (sm_80), one kernel, has nothing to prepare. */
static void test_direct_tensor_prepared(void **state)
{
    (void)state;
    skip_without_compiler();
    convgen_conv_desc d = {.rank = 2, .n = 2, .c = 20, .k = 24, .in = {15, 13}, .kernel = {3, 3},
                           .pad_before = {1, 1}, .pad_after = {1, 1}};
    int ran = 0;
    for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
        d.epilogue = pass == CONVGEN_FPROP ? CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU : 0;
        double e = direct_prepared_error(&d, (convgen_pass)pass);
        printf("direct tensor, wgmma, prepared %s: %.2e\n", convgen_pass_name((convgen_pass)pass), e);
        if (!(e < ERROR_BOUND))
            fail_msg("direct tensor, wgmma, prepared %s: relative error %.3e", convgen_pass_name((convgen_pass)pass), e);
        ++ran;
    }
    d.epilogue = 0;
    cg_problem p;
    cg_generated g;
    const cg_target a = a100();
    assert_int_equal(cg_problem_init(&p, &d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &a, &(cg_tuning){.gemm = CONVGEN_GEMM_TENSOR},
                                       &g),
                     CONVGEN_SUCCESS);
    assert_false(cg_program_prepares_weights(&g));
    cg_generated_free(&g);
    printf("direct's wgmma form on prepared weights: %d runs within %.0e\n", ran, ERROR_BOUND);
}

/* direct's tensor fprop copies B as each column's line of w, 16 bytes at a time, where w is 16-byte
 * aligned and c x taps a multiple of 4 (layers 0 and 7; c 20: a last chunk of 4 channels, a partial
 * column tile), else 4 bytes a copy: each layer with w aligned and with w 4 bytes past it. */
static void test_direct_tensor_weights_misaligned(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_tuning tune = {.gemm = CONVGEN_GEMM_TENSOR};
    const cg_target a = a100(); /* mma.sync's form: sm_90's reads B's pieces (test_direct_tensor_patch) */
    const convgen_conv_desc short_chunk = {.rank = 2, .n = 3, .c = 20, .k = 72, .in = {9, 11}, .kernel = {3, 3},
                                           .pad_before = {1, 1}, .pad_after = {1, 1}};
    const convgen_conv_desc *ds[] = {&layers[0], &layers[7], &short_chunk};
    int ran = 0;
    for (int shift = 0; shift <= 1; ++shift) {
        in1_shift = shift; /* back to 0 by the test's teardown, however it ends */
        for (size_t i = 0; i < sizeof ds / sizeof ds[0]; ++i) {
            char what[64];
            snprintf(what, sizeof what, "direct tensor, B by lines, layer %zu, w %s", i, shift ? "4-byte aligned" : "aligned");
            ran += check_both_orders(ds[i], CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &a, &tune, "load_b_lines(line_dst", what);
        }
    }
    printf("direct's tensor fprop, B by 16-byte lines or 4-byte copies: %d runs within %.0e\n", ran, ERROR_BOUND);
}

/* fprop's epilogue (bias and ReLU) as each algorithm's last kernel applies it. */
static void test_epilogue(void **state)
{
    (void)state;
    skip_without_compiler();
    cg_target t = a100();
    convgen_conv_desc d = layers[0];
    d.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
    int ran = 0;
    for (int planner = 0; planner < cg_planner_count(); ++planner) {
        const convgen_algo a = cg_planner_at(planner)->algo;
        char why[600] = "";
        double e = cpu_error(&d, CONVGEN_FPROP, a, &t, NULL, why, sizeof why);
        if (e == REFUSED)
            continue;
        if (!(e >= 0 && e < ERROR_BOUND))
            fail_msg("%s: %.3g %s", convgen_algo_name(a), e, why);
        ++ran;
    }
    assert_true(ran >= 6);
}

/* winograd's tiles F(2), F(4), F(6) and its generated GEMM; winograd-fused's F(2) and F(4), each
 * pass; the sub-batches a workspace limit forces. */
static void test_winograd_tiles_and_sub_batches(void **state)
{
    (void)state;
    skip_without_compiler();
    cg_target t = a100();
    for (int m = 2; m <= 6; m += 2)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass)
            for (int a = CONVGEN_ALGO_WINOGRAD; a <= CONVGEN_ALGO_WINOGRAD_FUSED; ++a) {
                cg_tuning tune = {.winograd_m = {m, m}, .gemm = a == CONVGEN_ALGO_WINOGRAD ? CONVGEN_GEMM_GENERATED : 0};
                char why[600] = "";
                double e = cpu_error(&layers[7], (convgen_pass)pass, (convgen_algo)a, &t, &tune, why, sizeof why);
                if (e == REFUSED && a == CONVGEN_ALGO_WINOGRAD_FUSED && m == 6)
                    continue; /* alpha 8: the cluster kernel's, sm_90 */
                if (!(e >= 0 && e < ERROR_BOUND))
                    fail_msg("%s m=%d %s: %.3g %s", convgen_algo_name((convgen_algo)a), m,
                             convgen_pass_name((convgen_pass)pass), e, why);
            }
    convgen_conv_desc d = layers[0];
    d.n = 5;
    for (int planner = 0; planner < cg_planner_count(); ++planner)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
            const convgen_algo a = cg_planner_at(planner)->algo;
            cg_tuning tune = {.workspace_limit = 1}; /* the least: sub-batches of one image where they split */
            char why[600] = "";
            double e = cpu_error(&d, (convgen_pass)pass, a, &t, &tune, why, sizeof why);
            if (e != REFUSED && !(e >= 0 && e < ERROR_BOUND))
                fail_msg("%s %s in sub-batches: %.3g %s", convgen_algo_name(a),
                         convgen_pass_name((convgen_pass)pass), e, why);
        }
}

/* winograd-fused with the weights' transforms made inside its kernel (weights=inside): fprop and
 * bprop, F(2) and F(4), both modes (the weights flipped or not, each pass), 2-D and 3-D, uneven
 * pads and a 5 x 5 kernel, and 40 x 36 channels (several chunks and blocks of outputs), on both
 * targets (the one-block kernel: too few channels for sm_90's cluster kernel). One kernel, no
 * workspace, nothing to prepare; accgrad refuses it. */
static void test_winograd_fused_weights_inside(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_target a = a100();
    const cg_target *targets[] = {&a, NULL};
    const int which[] = {0, 1, 2, 7};
    int ran = 0;
    for (int ti = 0; ti < 2; ++ti)
        for (int i = 0; i < 4; ++i)
            for (int mode = 0; mode < 2; ++mode)
                for (int m = 2; m <= 4; m += 2)
                    for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
                        if (ti == 1 && (m == 2 || mode == 1))
                            continue; /* sm_90 emits the same one-block kernel: one of each layer suffices */
                        convgen_conv_desc d = layers[which[i]];
                        d.mode = mode ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
                        cg_tuning tune = {.weights = CONVGEN_WEIGHTS_INSIDE};
                        for (int r = d.rank - 2; r < d.rank; ++r)
                            tune.winograd_m[r] = d.kernel[r] == 5 && m == 4 ? 2 : m; /* 5 x 5: alpha 6 at most */
                        char why[600] = "";
                        double e = cpu_error(&d, (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD_FUSED, targets[ti], &tune,
                                             why, sizeof why);
                        if (!(e >= 0 && e < ERROR_BOUND))
                            fail_msg("layer %d mode %d m=%d %s (%s): %.3g %s %s", which[i], mode, m,
                                     convgen_pass_name((convgen_pass)pass), ti ? "sm_90" : "sm_80", e, why,
                                     e == REFUSED ? convgen_last_error() : "");
                        ++ran;
                    }
    convgen_conv_desc biased = layers[7];
    biased.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU; /* fprop's store, after the inside form's sums */
    char why[600] = "";
    double e = cpu_error(&biased, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD_FUSED, targets[0],
                         &(cg_tuning){.weights = CONVGEN_WEIGHTS_INSIDE}, why, sizeof why);
    if (!(e >= 0 && e < ERROR_BOUND))
        fail_msg("layer 7 with bias and ReLU, weights inside: %.3g %s", e, why);
    /* fprop's 16-byte lines of w with a short last chunk: 12 channels, chunks of 8 and 4 */
    convgen_conv_desc short_chunk = layers[7];
    short_chunk.c = 12;
    for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
        e = cpu_error(&short_chunk, (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD_FUSED, targets[0],
                      &(cg_tuning){.weights = CONVGEN_WEIGHTS_INSIDE}, why, sizeof why);
        if (!(e >= 0 && e < ERROR_BOUND))
            fail_msg("12 channels, %s, weights inside: %.3g %s", convgen_pass_name((convgen_pass)pass), e, why);
    }
    printf("winograd-fused, weights inside: %d programs within %.0e, and fprop with bias and ReLU\n", ran + 1,
           ERROR_BOUND);

    cg_problem p;
    assert_int_equal(cg_problem_init(&p, &layers[7]), CONVGEN_SUCCESS);
    cg_generated g;
    cg_tuning inside = {.weights = CONVGEN_WEIGHTS_INSIDE};
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD_FUSED, &a, &inside, &g), CONVGEN_SUCCESS);
    assert_int_equal(g.kernel_count, 1);
    assert_int_equal(g.workspace_bytes, 0);
    assert_false(cg_program_prepares_weights(&g));
    cg_generated_free(&g);
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_FPROP, CONVGEN_ALGO_WINOGRAD_FUSED, &a, &(cg_tuning){0}, &g),
                     CONVGEN_SUCCESS);
    assert_int_equal(g.kernel_count, 2); /* the weights' kernel, then the fused one */
    assert_true(cg_program_prepares_weights(&g));
    cg_generated_free(&g);
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_ACCGRAD, CONVGEN_ALGO_WINOGRAD_FUSED, &a, &inside, &g),
                     CONVGEN_ERROR_NOT_SUPPORTED);
    assert_non_null(strstr(convgen_last_error(), "weights=inside"));
}

/* An sm_86's target (99 KiB of shared memory a block): accgrad's raw tiles in one buffer. */
static cg_target ampere_86(void)
{
    cg_target t = {.sm_count = 84};
    assert_true(cg_target_shared_limits("sm_86", &t.shared_per_block, &t.shared_per_sm));
    t.max_cluster = 1;
    snprintf(t.arch, sizeof t.arch, "sm_86");
    return t;
}

static int aligned_in1(void **state)
{
    in1_shift = 0;
    return no_required_text(state);
}

/* winograd-fused bprop with the weights inside copies w's lines 16 bytes at a time where w is
 * 16-byte aligned (test_winograd_fused_weights_inside's layers 0 and 7), else 4 bytes: here w
 * starts 4 bytes past a 16-byte boundary. */
static void test_winograd_fused_bprop_weights_misaligned(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_target a = a100();
    in1_shift = 1; /* back to 0 by the test's teardown, however it ends */
    for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass)
        for (int i = 0; i < 2; ++i)
            for (int m = 2; m <= 4; m += 2) {
                cg_tuning tune = {.weights = CONVGEN_WEIGHTS_INSIDE, .winograd_m = {m, m}};
                char why[600] = "";
                double e = cpu_error(&layers[i ? 7 : 0], (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD_FUSED, &a, &tune, why,
                                     sizeof why);
                if (!(e >= 0 && e < ERROR_BOUND))
                    fail_msg("layer %d m=%d %s, w 4-byte aligned: %.3g %s", i ? 7 : 0, m,
                             convgen_pass_name((convgen_pass)pass), e, why);
            }
}

/* The fused accgrad's kernel (winograd-fused's grid z, its runs of tiles) on target a, and the
 * split's runs as asked: `runs` runs (1: no sum kernel, no workspace). */
static void check_accgrad_runs(const convgen_conv_desc *d, int m, int64_t limit, unsigned runs, const cg_target *a)
{
    cg_problem p;
    assert_int_equal(cg_problem_init(&p, d), CONVGEN_SUCCESS);
    cg_tuning tune = {.workspace_limit = limit};
    tune.winograd_m[d->rank - 2] = tune.winograd_m[d->rank - 1] = m;
    cg_generated g;
    assert_int_equal(cg_generate_tuned(&p, CONVGEN_ACCGRAD, CONVGEN_ALGO_WINOGRAD_FUSED, a, &tune, &g), CONVGEN_SUCCESS);
    assert_int_equal(g.kernels[0].grid[2], runs);
    assert_int_equal(g.kernel_count, runs > 1 ? 2 : 1);
    assert_true(runs > 1 ? g.workspace_bytes > 0 && (!limit || g.workspace_bytes <= limit) : g.workspace_bytes == 0);
    cg_generated_free(&g);
    char why[600] = "";
    double e = cpu_error(d, CONVGEN_ACCGRAD, CONVGEN_ALGO_WINOGRAD_FUSED, a, &tune, why, sizeof why);
    if (!(e >= 0 && e < ERROR_BOUND))
        fail_msg("rank %d m=%d mode %d in %u run%s (%s): %.3g %s", d->rank, m, (int)d->mode, runs,
                 runs > 1 ? "s" : "", a->arch, e, why);
}

/* winograd-fused's accgrad over runs of several chunks, whose raw tiles alternate between two
 * stages (one on an sm_86, whose blocks have no room for two): the tiles split into runs (the
 * last one short, its last chunk partial), one run of several chunks where the workspace limit
 * allows no partial dw, F(3, 4) and F(3, 2), both modes, 2-D and 3-D. */
static void test_winograd_fused_accgrad_runs(void **state)
{
    (void)state;
    skip_without_compiler();
    const cg_target a = a100(), b = ampere_86();
    /* F(3, 4): 5 x 4 tiles an image, 60 in all; 2 x 2 blocks of (k, c), one an SM of 108: runs of
     * 16, 16, 16 and 12 (two chunks each, the last one partial) */
    convgen_conv_desc d = {.rank = 2, .n = 3, .c = 20, .k = 36, .in = {17, 15}, .kernel = {3, 3},
                           .pad_before = {1, 1}, .pad_after = {1, 1}};
    for (int mode = 0; mode < 2; ++mode) {
        d.mode = mode ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
        check_accgrad_runs(&d, 4, 0, 4, &a);
        check_accgrad_runs(&d, 4, 1, 1, &a); /* 60 tiles: 8 chunks, the last one partial */
        check_accgrad_runs(&d, 2, 0, 14, &a); /* 9 x 8 tiles an image, 216; 3 blocks an SM: 13 runs of 16, one of 8 */
    }
    check_accgrad_runs(&d, 4, 0, 4, &b); /* 84 SMs: the same runs, one stage */
    check_accgrad_runs(&d, 4, 1, 1, &b);
    /* 3-D: (channel, depth tap) pairs, 6 slices of 2 x 3 tiles, 72 in all: 4 runs of 16, one of 8 */
    convgen_conv_desc v = {.rank = 3, .n = 2, .c = 3, .k = 5, .in = {6, 7, 10}, .kernel = {3, 3, 3},
                           .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}, .mode = CONVGEN_CONVOLUTION};
    check_accgrad_runs(&v, 4, 0, 5, &a);
    check_accgrad_runs(&v, 4, 1, 1, &a); /* 9 chunks */
    check_accgrad_runs(&v, 4, 1, 1, &b);
}

/* winograd-fused's cluster kernel (sm_90: winograd_fused_cluster.cu, clusters of 3 or 8 blocks
 * sharing each tile's transform elements through distributed shared memory, st.async and
 * mbarriers across the cluster, a named barrier, cluster barriers): fprop and bprop, alpha 6 (its
 * SIMT products) and alpha 8 (3xTF32 by mma.sync), 3 x 3 and 5 x 5, 64 and 128 outputs and 72
 * (padded to the blocks' 64), convolution mode, 2-D and 3-D; planned for 2 SMs, where clusters this
 * small fill the GPU; each program in both orders. */
static void test_winograd_fused_cluster_kernel(void **state)
{
    (void)state;
    skip_without_compiler();
    const struct {
        convgen_conv_desc d;
        int m;
    } cases[] = {
        {{.rank = 2, .n = 1, .c = 64, .k = 64, .in = {12, 12}, .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}}, 4},
        {{.rank = 2, .n = 1, .c = 64, .k = 64, .in = {12, 12}, .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}}, 6},
        {{.rank = 2, .n = 1, .c = 64, .k = 72, .in = {10, 11}, .kernel = {5, 5}, .pad_before = {2, 2}, .pad_after = {2, 1},
          .mode = CONVGEN_CONVOLUTION}, 2},
        {{.rank = 2, .n = 1, .c = 64, .k = 72, .in = {10, 11}, .kernel = {5, 5}, .pad_before = {2, 2}, .pad_after = {2, 1},
          .mode = CONVGEN_CONVOLUTION}, 4},
        {{.rank = 2, .n = 1, .c = 128, .k = 128, .in = {12, 12}, .kernel = {3, 3}, .pad_before = {1, 1}, .pad_after = {1, 1}}, 6},
        {{.rank = 3, .n = 1, .c = 64, .k = 64, .in = {4, 8, 8}, .kernel = {3, 3, 3}, .pad_before = {1, 1, 1},
          .pad_after = {1, 1, 1}}, 4},
    };
    const cg_target few = {.sm_count = 2};
    int ran = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_BPROP; ++pass) {
            const convgen_conv_desc *d = &cases[i].d;
            cg_tuning tune = {0};
            tune.winograd_m[d->rank - 2] = tune.winograd_m[d->rank - 1] = cases[i].m;
            const bool alpha8 = cases[i].m + (int)d->kernel[d->rank - 1] - 1 == 8;
            char what[64];
            snprintf(what, sizeof what, "case %zu (m=%d)", i, cases[i].m);
            ran += check_both_orders(d, (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD_FUSED, &few, &tune,
                                     alpha8 ? "mma.sync" /* only the cluster kernel's */ : "__cluster_dims__", what);
        }
    printf("winograd-fused's cluster kernel: %d runs within %.0e (each program in both orders)\n", ran, ERROR_BOUND);
}

/* fft's real transforms of planes whose spectra pass one block's shared memory (fft_real.cu's
 * cluster layout: block r of a cluster of 4 owns its columns of the spectrum, the others' rows
 * reach them through distributed shared memory), every pass, uneven and even planes, on the H100's
 * target, each program in both orders. */
static void test_fft_cluster_kernels(void **state)
{
    (void)state;
    skip_without_compiler();
    const convgen_conv_desc planes[] = {
        {.rank = 2, .n = 2, .c = 2, .k = 3, .in = {200, 200}, .kernel = {3, 3}},
        {.rank = 2, .n = 1, .c = 1, .k = 2, .in = {220, 250}, .kernel = {5, 3}, .pad_before = {2, 1}, .pad_after = {2, 1},
         .mode = CONVGEN_CONVOLUTION},
    };
    int ran = 0;
    for (size_t i = 0; i < sizeof planes / sizeof planes[0]; ++i)
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
            char what[32];
            snprintf(what, sizeof what, "plane %zu", i);
            ran += check_both_orders(&planes[i], (convgen_pass)pass, CONVGEN_ALGO_FFT, NULL, NULL, "in clusters of", what);
        }
    printf("fft's cluster transforms: %d runs within %.0e (each program in both orders)\n", ran, ERROR_BOUND);
}

/* Whether a kernel of the program for (d, pass) on the H100's target has `text`. */
static bool program_has(const convgen_conv_desc *d, convgen_pass pass, convgen_algo algo, const cg_tuning *tune,
                        const char *text)
{
    cg_problem p;
    cg_generated g;
    cg_tuning t = *tune;
    assert_int_equal(cg_problem_init(&p, d), CONVGEN_SUCCESS);
    assert_int_equal(cg_generate_tuned(&p, pass, algo, NULL, &t, &g), CONVGEN_SUCCESS);
    bool has = false;
    for (int i = 0; i < g.kernel_count && !has; ++i)
        has = strstr(g.kernels[i].source, text) != NULL;
    cg_generated_free(&g);
    return has;
}

/* fft's warp transforms at sizes with factors 3, 5 and 7, where those radices run in registers
 * (small_dft's symmetric form) and across lanes (the lane butterfly by pairs of digits): 15 (5
 * lanes, radix 3 in registers), 21 (7 lanes), 28 (a radix-7 lane stage with a twiddle), 35 (7
 * lanes, radix 5 in registers), 45 (radices 3 and 3 across lanes, 5 in registers), 49 (7 and 7),
 * 60 (lanes 5 and 3), 63 (lanes 3 and 3, 7 in registers); rank 2 every pass, rank 1 fprop; the
 * H100's target, each program in both orders. Every size has an odd lane stage (the runs require
 * its text), and all but 28 and 60 an odd register stage (checked in the source). */
static void test_fft_odd_radices(void **state)
{
    (void)state;
    skip_without_compiler();
    static const int sizes[] = {15, 21, 28, 35, 45, 49, 60, 63};
    const char *lane_pairs = "(x_(d+m) - x_(d-m))", *register_pairs = "t1 = c_sub(a1, a";
    int ran = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i) {
        const int n = sizes[i];
        const cg_tuning tune = {.fourier_size = {n, n}};
        const convgen_conv_desc plane = {.rank = 2, .n = 1, .c = 2, .k = 3, .in = {n - 3, n - 2}, .kernel = {3, 3},
                                         .pad_before = {1, 1}, .pad_after = {0, 1}};
        if (n != 28 && n != 60 && !program_has(&plane, CONVGEN_FPROP, CONVGEN_ALGO_FFT, &tune, register_pairs))
            fail_msg("%d points: no odd register stage", n);
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
            char what[48];
            snprintf(what, sizeof what, "2-D, %d points", n);
            ran += check_both_orders(&plane, (convgen_pass)pass, CONVGEN_ALGO_FFT, NULL, &tune, lane_pairs, what);
        }
        const cg_tuning line_tune = {.fourier_size = {n}};
        const convgen_conv_desc line = {.rank = 1, .n = 2, .c = 3, .k = 2, .in = {n - 4}, .kernel = {5},
                                        .pad_before = {2}, .pad_after = {2}, .mode = CONVGEN_CONVOLUTION};
        char what[48];
        snprintf(what, sizeof what, "1-D, %d points", n);
        ran += check_both_orders(&line, CONVGEN_FPROP, CONVGEN_ALGO_FFT, NULL, &line_tune, lane_pairs, what);
    }
    printf("fft's odd radices: %d runs within %.0e (each program in both orders)\n", ran, ERROR_BOUND);
}

/* Random small layers (seeded): kernels 1 to 7 (3-D: 1 to 3), pads past the kernel, dilation 2,
 * either mode, ranks 1 to 3, batches and channels 1 to 5, every planner and pass on an A100. */
static convgen_conv_desc random_layer(uint64_t *state)
{
    int rank = 1 + (int)(cg_next_random(state) % 3);
    convgen_conv_desc d = {.rank = rank, .n = 1 + (int64_t)(cg_next_random(state) % 3),
                           .c = 1 + (int64_t)(cg_next_random(state) % 5), .k = 1 + (int64_t)(cg_next_random(state) % 5)};
    for (int r = 0; r < rank; ++r) {
        d.kernel[r] = 1 + (int64_t)(cg_next_random(state) % (rank == 3 ? 3 : 7));
        d.dilation[r] = cg_next_random(state) % 4 == 0 ? 2 : 1;
        d.pad_before[r] = (int64_t)(cg_next_random(state) % (uint64_t)(d.kernel[r] + 1));
        d.pad_after[r] = (int64_t)(cg_next_random(state) % (uint64_t)d.kernel[r]);
        d.in[r] = (d.kernel[r] - 1) * d.dilation[r] + 1 + (int64_t)(cg_next_random(state) % (rank == 3 ? 4 : 10));
    }
    d.mode = cg_next_random(state) % 4 == 0 ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
    return d;
}

static void test_random_layers(void **state)
{
    (void)state;
    skip_without_compiler();
    cg_target t = a100();
    uint64_t seed = 20261205u;
    int ran = 0;
    for (int l = 0; l < 10; ++l) {
        convgen_conv_desc d = random_layer(&seed);
        for (int planner = 0; planner < cg_planner_count(); ++planner)
            for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
                const convgen_algo a = cg_planner_at(planner)->algo;
                char why[600] = "";
                double e = cpu_error(&d, (convgen_pass)pass, a, &t, NULL, why, sizeof why);
                if (e == REFUSED)
                    continue;
                if (!(e >= 0 && e < ERROR_BOUND)) {
                    char label[64];
                    snprintf(label, sizeof label, "random layer %d (rank %d, kernel %lld, in %lld)%s", l, d.rank,
                             (long long)d.kernel[0], (long long)d.in[0], why[0] ? " not run" : "");
                    fail_with_reruns(&d, (convgen_pass)pass, a, &t, e, label);
                }
                ++ran;
            }
    }
    printf("10 random layers: %d programs ran on the CPU within %.0e\n", ran, ERROR_BOUND);
    assert_true(ran >= 100);
}

/* ---- the runner itself: each check below must catch what it is for ---- */

/* A one-kernel program of `source` (kernel `name`, `threads` threads, one block) run on in/out. */
static convgen_status run_blocks(const char *source, unsigned blocks, unsigned threads, unsigned dynamic_shared,
                                 const float *in, float *out)
{
    cg_kernel k = {.source = (char *)source, .grid = {blocks, 1, 1}, .block = {threads, 1, 1},
                   .shared_bytes = dynamic_shared};
    snprintf(k.name, sizeof k.name, "probe");
    return kcpu_launch(runner, &k, in, NULL, out, NULL, NULL);
}

static convgen_status run_source(const char *source, unsigned threads, unsigned dynamic_shared, const float *in,
                                 float *out)
{
    return run_blocks(source, 1, threads, dynamic_shared, in, out);
}

/* Each thread writes its shared slot and reads its neighbour's: right with the barrier between;
 * without it, NaN (the poison) in each order where the reader runs before the writer: the last
 * thread in order, the first reversed. And a missing barrier after a write by the first warp
 * only, which the in-order run cannot see, shows reversed. */
static void test_runner_catches_a_missing_barrier(void **state)
{
    (void)state;
    skip_without_compiler();
    const char *with = "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n"
                       "{\n    __shared__ float s[64];\n    s[threadIdx.x] = in[threadIdx.x];\n    __syncthreads();\n"
                       "    out[threadIdx.x] = s[(threadIdx.x + 1) % 64u];\n}\n";
    char without[512];
    snprintf(without, sizeof without, "%s", with);
    char *barrier = strstr(without, "__syncthreads();");
    memcpy(barrier, "                ", 16);
    const char *first_warp = "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n"
                             "{\n    __shared__ float s[32];\n    if (threadIdx.x < 32u)\n        s[threadIdx.x] = in[threadIdx.x];\n"
                             "    out[threadIdx.x] = s[threadIdx.x % 32u];\n}\n";
    float in[64], out[64];
    fill(in, 64);
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        assert_int_equal(run_source(with, 64, 0, in, out), CONVGEN_SUCCESS);
        for (int i = 0; i < 64; ++i)
            assert_true(out[i] == in[(i + 1) % 64]);
        assert_int_equal(run_source(without, 64, 0, in, out), CONVGEN_SUCCESS);
        assert_true(isnan(out[order == KCPU_IN_ORDER ? 0 : 63])); /* the reader that ran before its writer */
    }
    kcpu_set_schedule(runner, KCPU_IN_ORDER);
    assert_int_equal(run_source(first_warp, 64, 0, in, out), CONVGEN_SUCCESS);
    assert_false(isnan(out[63])); /* what the in-order run cannot see */
    kcpu_set_schedule(runner, KCPU_REVERSED);
    assert_int_equal(run_source(first_warp, 64, 0, in, out), CONVGEN_SUCCESS);
    assert_true(isnan(out[63]));
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
}

/* Runs `source` on 32 or 64 threads of random input and asserts that it fails, its error naming
 * `what`. */
static void assert_run_fails_naming(const char *source, unsigned threads, unsigned dynamic_shared, const char *what)
{
    float in[64], out[64];
    fill(in, threads);
    assert_int_not_equal(run_source(source, threads, dynamic_shared, in, out), CONVGEN_SUCCESS);
    assert_non_null(strstr(convgen_last_error(), what));
}

/* A write past the launch's dynamic shared memory fails the block. */
static void test_runner_bounds_dynamic_shared_memory(void **state)
{
    (void)state;
    skip_without_compiler();
    const char *source = "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n"
                         "{\n    extern __shared__ float s[];\n    s[threadIdx.x] = in[threadIdx.x];\n    __syncthreads();\n"
                         "    out[threadIdx.x] = s[threadIdx.x];\n}\n";
    float in[32], out[32];
    fill(in, 32);
    assert_int_equal(run_source(source, 32, 128, in, out), CONVGEN_SUCCESS);
    assert_run_fails_naming(source, 32, 64, "past its 64 dynamic bytes");
}

/* A warp sync that one lane never reaches (it has left) is a deadlock, reported, not a hang. */
static void test_runner_reports_a_deadlock(void **state)
{
    (void)state;
    skip_without_compiler();
    const char *source = "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n"
                         "{\n    if (threadIdx.x != 5u)\n        __syncwarp();\n"
                         "    out[threadIdx.x] = in[threadIdx.x];\n}\n";
    assert_run_fails_naming(source, 64, 0, "deadlock");
}

/* A cp.async copy lands at the wait that covers it in order (read before it, shared memory is
 * still the poison), at its issue reversed; a source size under the copy's gives zeros past it. */
static void test_runner_lands_copies_at_their_wait(void **state)
{
    (void)state;
    skip_without_compiler();
    const char *source =
        "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n{\n"
        "    extern __shared__ __align__(16) float s[];\n"
        "    const unsigned to = (unsigned)__cvta_generic_to_shared(s + 4 * threadIdx.x);\n"
        "    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\\n\" ::\"r\"(to), \"l\"(in + 4 * threadIdx.x), "
        "\"r\"(threadIdx.x == 1u ? 8 : 16));\n"
        "    asm volatile(\"cp.async.commit_group;\\n\" ::);\n"
        "    out[threadIdx.x] = s[4 * threadIdx.x];\n"
        "    asm volatile(\"cp.async.wait_group 0;\\n\" ::);\n"
        "    for (int i = 0; i < 4; ++i)\n        out[8 + 4 * threadIdx.x + i] = s[4 * threadIdx.x + i];\n}\n";
    float in[8], out[16];
    fill(in, 8);
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        assert_int_equal(run_source(source, 2, 32, in, out), CONVGEN_SUCCESS);
        if (order == KCPU_IN_ORDER) /* landed at the wait */
            assert_true(isnan(out[0]) && isnan(out[1]));
        else /* landed at issue */
            assert_true(out[0] == in[0] && out[1] == in[4]);
        for (int i = 0; i < 4; ++i)
            assert_true(out[8 + i] == in[i]);
        assert_true(out[12] == in[4] && out[13] == in[5] && out[14] == 0.0f && out[15] == 0.0f);
    }
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
}

/* sm_90's bulk copy counted on an mbarrier (common.cuh's bulk_loads): thread 0 sets the mbarrier
 * up, expects 64 bytes and copies them; every thread reads its float before the wait and after.
 * In order the copy lands only when a wait needs it (a read before the first wait sees the poison);
 * after the wait, each order has the data. A wait on an mbarrier never set up, and copies of more bytes
 * than it expects, fail, naming what. */
static void test_runner_runs_bulk_copies_on_mbarriers(void **state)
{
    (void)state;
    skip_without_compiler();
    char source[2048];
    const char *format =
        "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n{\n"
        "    extern __shared__ __align__(16) float s[];\n"
        "    unsigned long long *bar = (unsigned long long *)(s + 32);\n"
        "    const unsigned b = (unsigned)__cvta_generic_to_shared(bar);\n"
        "    if (threadIdx.x == 0u) {\n%s"
        "        asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%%0], %%1;\\n\" ::\"r\"(b), \"r\"(64u) : \"memory\");\n"
        "        asm volatile(\"cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%%0], [%%1], %%2, [%%3];\\n\" ::"
        "\"r\"((unsigned)__cvta_generic_to_shared(s)), \"l\"(in), \"r\"(%uu), \"r\"(b) : \"memory\");\n"
        "    }\n"
        "    __syncthreads();\n"
        "    out[threadIdx.x] = s[threadIdx.x];\n"
        "    unsigned done = 0;\n"
        "    while (!done)\n"
        "        asm volatile(\"{\\n .reg .pred p;\\n mbarrier.try_wait.parity.shared::cta.b64 p, [%%1], 0;\\n selp.u32 %%0, 1, 0, p;\\n}\\n\""
        " : \"=r\"(done) : \"r\"(b) : \"memory\");\n"
        "    out[16 + threadIdx.x] = s[threadIdx.x];\n}\n";
    const char *init = "        asm volatile(\"mbarrier.init.shared::cta.b64 [%0], 1;\\n\" ::\"r\"(b) : \"memory\");\n"
                       "        asm volatile(\"fence.mbarrier_init.release.cluster;\\n\" ::: \"memory\");\n";
    float in[64], out[64];
    fill(in, 64);
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        snprintf(source, sizeof source, format, init, 64u);
        assert_int_equal(run_source(source, 16, 256, in, out), CONVGEN_SUCCESS);
        for (int i = 0; i < 16; ++i)
            assert_true(out[16 + i] == in[i]);
        if (order == KCPU_IN_ORDER) /* the last thread at the barrier runs on first: its read came before any wait */
            assert_true(isnan(out[15]));
        snprintf(source, sizeof source, format, "", 64u);
        assert_run_fails_naming(source, 16, 256, "never set up");
        snprintf(source, sizeof source, format, init, 80u);
        assert_run_fails_naming(source, 16, 256, "more bytes than");
    }
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
}

/* A cluster of two blocks of 32 threads: each writes its shared memory, meets its peer at the
 * cluster barrier, and reads the peer's through mapa; with a second barrier before the end, each
 * reads its peer's data in both orders. Without it, the block that runs last reads a peer that has
 * already ended, which the GPU leaves undefined: its shared memory is the poison again. */
static void test_runner_runs_a_cluster(void **state)
{
    (void)state;
    skip_without_compiler();
    char source[2048];
    const char *format =
        "__device__ __forceinline__ float *peer(const float *local, unsigned rank)\n{\n    float *p;\n"
        "    asm(\"mapa.u64 %%0, %%1, %%2;\" : \"=l\"(p) : \"l\"(local), \"r\"(rank));\n    return p;\n}\n"
        "__device__ __forceinline__ void cluster_sync()\n{\n"
        "    asm volatile(\"barrier.cluster.arrive.release.aligned;\\n\\tbarrier.cluster.wait.acquire.aligned;\" ::: \"memory\");\n}\n"
        "extern \"C\" __global__ void __cluster_dims__(2, 1, 1) probe(const float *in, const float *u, float *out, void *ws)\n{\n"
        "    extern __shared__ float s[];\n    unsigned r;\n"
        "    asm(\"mov.u32 %%0, %%%%cluster_ctarank;\" : \"=r\"(r));\n"
        "    s[threadIdx.x] = in[threadIdx.x + 32u * r];\n    cluster_sync();\n"
        "    out[threadIdx.x + 32u * r] = *peer(&s[threadIdx.x], r ^ 1u);\n%s}\n";
    float in[64], out[64];
    fill(in, 64);
    snprintf(source, sizeof source, format, "    cluster_sync();\n");
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        assert_int_equal(run_blocks(source, 2, 32, 128, in, out), CONVGEN_SUCCESS);
        for (int i = 0; i < 64; ++i)
            assert_true(out[i] == in[i ^ 32]);
    }
    snprintf(source, sizeof source, format, "");
    kcpu_set_schedule(runner, KCPU_IN_ORDER);
    assert_int_equal(run_blocks(source, 2, 32, 128, in, out), CONVGEN_SUCCESS);
    assert_true(isnan(out[32])); /* block 1's first thread ran after block 0 had ended */
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
}

/* bench/probes/wino_gemm_end.cuh's kernel (issue 30's products with the output transform on their
 * sums: clusters of 8 blocks, wgmma m64n32k8 in 3xTF32, each block's row transform sent by st.async
 * into the block of its tiles, cluster-scope mbarriers both ways), run here before a GPU runs it,
 * on one persistent cluster so that every mbarrier goes through both of its phases: F(6, 3) over
 * 3 items of 64 tiles (the last 2 tiles short) x 64 outputs, U's lo halves made in the block and
 * the L2 prefetch asked for; F(4, 5) over 2 x 2 items (128 outputs), U's lo halves loaded. Every
 * output against float64, in both orders. */
static void run_fused_end_probe(int m, int outputs, bool lo_made)
{
    enum { TILES = 130, C = 16, BLOCKS = 3, PIECE = 512 };
    FILE *f = fopen(CONVGEN_SOURCE_DIR "/bench/probes/wino_gemm_end.cuh", "rb");
    assert_non_null(f);
    static char source[1 << 16];
    size_t n = fread(source, 1, sizeof source - 1024, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof source - 1024);
    const int nblocks = outputs / 64;
    snprintf(source + n, sizeof source - n,
             "\nstatic const Problem kcpu_problem = {%uu, %uu, %uu, %uu, %uu, %uu, %uu};\n"
             "extern \"C\" __global__ void probe(const float *in0, const float *in1, float *out, void *ws, const float *bias)\n"
             "{\n    wino_gemm_end<%d, 1, %d>(in0, in1, out, kcpu_problem);\n}\n",
             TILES, outputs, C / 8, BLOCKS, nblocks, BLOCKS * nblocks, lo_made ? 4 : 0, m, lo_made);
    /* V's pieces [tile block][step][element][64 x 8]; U's [output block][step][element][64 x 8],
     * its hi halves alone or each piece's hi then lo; both K-major core matrices: row r, channel c
     * at (r / 8) 64 + (c / 4) 32 + (r % 8) 4 + c % 4 */
    const int64_t nv = (int64_t)BLOCKS * (C / 8) * 64 * PIECE, nu = (int64_t)nblocks * (C / 8) * 64 * PIECE,
                  u_floats = lo_made ? nu : 2 * nu, ny = (int64_t)TILES * outputs * m * m;
    float *v = guarded(nv), *u = guarded(u_floats), *y = guarded(ny);
    fill(v, nv);
    fill(u, u_floats);
    for (int64_t piece = 0; !lo_made && piece < nu / PIECE; ++piece)
        for (int i = 0; i < PIECE; ++i)
            u[(2 * piece + 1) * PIECE + i] = cg_tf32_lo(u[2 * piece * PIECE + i]);
    static const float at6[6][8] = {{1, 1, 1, 1, 1, 1, 1, 0},           {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
                                    {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},   {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},
                                    {0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0}, {0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1}};
    static const float at4[4][8] = {{1, 1, 1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},
                                    {0, 1, 1, 4, 4, 0.25f, 0.25f, 0}, {0, 1, -1, 8, -8, 0.125f, -0.125f, 1}};
    const float(*at)[8] = m == 6 ? at6 : at4;
    cg_kernel k = {.source = source, .grid = {8, 1, 1}, .block = {384, 1, 1}, .shared_bytes = 229440};
    snprintf(k.name, sizeof k.name, "probe");
    for (int order = KCPU_IN_ORDER; order <= KCPU_REVERSED; ++order) {
        kcpu_set_schedule(runner, (kcpu_schedule)order);
        for (int64_t i = 0; i < ny; ++i)
            y[i] = NAN;
        if (kcpu_launch(runner, &k, v, u, y, NULL, NULL) != CONVGEN_SUCCESS)
            fail_msg("%s", convgen_last_error());
        double worst = 0;
        for (int tile = 0; tile < TILES; ++tile)
            for (int out = 0; out < outputs; ++out) {
                double mm[8][8], mag[8][8];
                const int r = tile % 64, b = tile / 64, o = out % 64, nb = out / 64;
                for (int e = 0; e < 64; ++e) {
                    double sum = 0, size = 0;
                    for (int c = 0; c < C; ++c) {
                        const int64_t at_v = (((int64_t)b * (C / 8) + c / 8) * 64 + e) * PIECE,
                                      at_u = (((int64_t)nb * (C / 8) + c / 8) * 64 + e) * PIECE * (lo_made ? 1 : 2);
                        const double p = (double)v[at_v + (r / 8) * 64 + (c % 8 / 4) * 32 + (r % 8) * 4 + c % 4] *
                                         u[at_u + (o / 8) * 64 + (c % 8 / 4) * 32 + (o % 8) * 4 + c % 4];
                        sum += p, size += fabs(p);
                    }
                    mm[e / 8][e % 8] = sum, mag[e / 8][e % 8] = size;
                }
                for (int p = 0; p < m; ++p)
                    for (int q = 0; q < m; ++q) {
                        double want = 0, scale = 0;
                        for (int i = 0; i < 8; ++i)
                            for (int j = 0; j < 8; ++j)
                                want += at[p][i] * mm[i][j] * at[q][j], scale += fabs(at[p][i] * at[q][j]) * mag[i][j];
                        const float got = y[((int64_t)tile * outputs + out) * m * m + p * m + q];
                        if (!(fabs(got - want) <= 1e-5 * scale))
                            fail_msg("F(%d) order %d: tile %d output %d point (%d, %d): %g, want %g (scale %g)", m, order,
                                     tile, out, p, q, got, want, scale);
                        if (fabs(got - want) / scale > worst)
                            worst = fabs(got - want) / scale;
                    }
            }
        printf("the fused end's probe, F(%d) (U's lo %s), order %d: %lld outputs within %.1e of the sum of |terms|\n", m,
               lo_made ? "made" : "loaded", order, (long long)ny, worst);
    }
    kcpu_set_schedule(runner, KCPU_ALTERNATE);
    unguard(v, nv);
    unguard(u, u_floats);
    unguard(y, ny);
}

static void test_fused_end_probe(void **state)
{
    (void)state;
    skip_without_compiler();
    run_fused_end_probe(6, 64, true);
    run_fused_end_probe(4, 128, false);
}

/* PTX the CPU cannot run fails where it is reached, naming it. */
static void test_runner_names_ptx_it_cannot_run(void **state)
{
    (void)state;
    skip_without_compiler();
    const char *source = "extern \"C\" __global__ void probe(const float *in, const float *u, float *out, void *ws)\n{\n"
                         "    unsigned r;\n    asm(\"mov.u32 %0, %%smid;\" : \"=r\"(r));\n"
                         "    out[threadIdx.x] = in[threadIdx.x] + r;\n}\n";
    assert_run_fails_naming(source, 32, 0, "smid");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_runner_catches_a_missing_barrier),
        cmocka_unit_test(test_runner_bounds_dynamic_shared_memory),
        cmocka_unit_test(test_runner_reports_a_deadlock),
        cmocka_unit_test(test_runner_lands_copies_at_their_wait),
        cmocka_unit_test(test_runner_runs_bulk_copies_on_mbarriers),
        cmocka_unit_test(test_runner_runs_a_cluster),
        cmocka_unit_test(test_runner_names_ptx_it_cannot_run),
        cmocka_unit_test(test_fused_end_probe),
        cmocka_unit_test_teardown(test_direct_tensor, no_required_text),
        cmocka_unit_test_teardown(test_direct_tensor_weights_misaligned, aligned_in1),
        cmocka_unit_test_teardown(test_direct_tensor_patch, no_required_text),
        cmocka_unit_test(test_direct_tensor_prepared),
        cmocka_unit_test(test_epilogue),
        cmocka_unit_test(test_winograd_tiles_and_sub_batches),
        cmocka_unit_test(test_winograd_fused_weights_inside),
        cmocka_unit_test_teardown(test_winograd_fused_bprop_weights_misaligned, aligned_in1),
        cmocka_unit_test(test_winograd_fused_accgrad_runs),
        cmocka_unit_test(test_every_planner_on_an_a100),
        cmocka_unit_test(test_every_planner_on_an_h100),
        cmocka_unit_test_teardown(test_winograd_tensor_gemm, no_required_text),
        cmocka_unit_test_teardown(test_fft_tensor_gemm, no_required_text),
        cmocka_unit_test_teardown(test_winograd_fused_cluster_kernel, no_required_text),
        cmocka_unit_test_teardown(test_fft_cluster_kernels, no_required_text),
        cmocka_unit_test_teardown(test_fft_odd_radices, no_required_text),
        cmocka_unit_test(test_random_layers),
    };
    const char *filter = getenv("CONVGEN_TEST_FILTER"); /* e.g. "*a100*" */
    if (filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests(tests, setup, teardown);
}
