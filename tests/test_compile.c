/* Compile checks, no GPU needed: every layer of the set, all three passes, renders and
 * compiles with NVRTC for sm_90 with 0 bytes of stack and 0 spills; the cache levels answer
 * in order; a compile error keeps NVRTC's log. */
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

#include "cache.h"
#include "cubin.h"
#include "generate.h"
#include "jit.h"
#include "layer.h"
#include "planner_cases.h"

static convgen_context *offline_for(const char *arch, const char *cache_dir)
{
    convgen_context_options o = {.offline = 1, .arch = arch, .cache_dir = cache_dir, .disk_cache = cache_dir ? 0 : -1};
    convgen_context *ctx = NULL;
    convgen_status s = convgen_context_create(&o, &ctx);
    if (s != CONVGEN_SUCCESS)
        fail_msg("offline context: %s", convgen_last_error());
    return ctx;
}

static convgen_context *offline(const char *cache_dir) { return offline_for("sm_90", cache_dir); }

/* Every registered planner on every layer and pass of the set: each case it takes compiles
 * without local memory; each one it refuses must be a refusal tests/planner_cases.c expects. */
static void test_every_layer_compiles_for_sm_90_without_local_memory(void **state)
{
    (void)state;
    cg_layer *layers;
    int count, kernels = 0;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    convgen_context *ctx = offline(NULL);
    planner_tally tally = {0};
    for (int a = 0; a < cg_planner_count(); ++a)
        for (int i = 0; i < count; ++i)
            for (int pass = 0; pass < 3; ++pass) {
                const cg_planner *planner = cg_planner_at(a);
                cg_problem p;
                assert_int_equal(cg_problem_init(&p, &layers[i].desc), CONVGEN_SUCCESS);
                convgen_plan *plan;
                convgen_status s = convgen_plan_conv(ctx, &layers[i].desc, (convgen_pass)pass, planner->algo, &plan);
                if (s == CONVGEN_ERROR_COMPILE)
                    fail_msg("%s %s %s: %s\n%s", layers[i].name, planner->name, convgen_pass_name((convgen_pass)pass),
                             convgen_last_error(), convgen_last_compile_log());
                bool taken = planner_takes(planner, &p, (convgen_pass)pass, s, layers[i].name);
                planner_tally_add(&tally, taken);
                if (!taken)
                    continue;
                for (int k = 0; k < convgen_plan_kernel_count(plan); ++k, ++kernels) {
                    convgen_kernel_info info;
                    assert_int_equal(convgen_plan_kernel_info(plan, k, &info), CONVGEN_SUCCESS);
                    print_message("%-4s %-8s %-36s %3d regs %5d B smem, stack %d, spills %d/%d\n", layers[i].name,
                                  convgen_pass_name((convgen_pass)pass), info.name, info.registers, info.shared_bytes,
                                  info.stack_bytes, info.spill_store_bytes, info.spill_load_bytes);
                    assert_true(info.registers > 0); /* the report was parsed */
                    assert_int_equal(info.stack_bytes, 0);
                    assert_int_equal(info.spill_store_bytes, 0);
                    assert_int_equal(info.spill_load_bytes, 0);
                }
                convgen_plan_destroy(plan);
            }
    print_message("%d kernels compiled: %d planners x %d layers x 3 passes = %d cases, %d taken, %d refused as "
                  "tests/planner_cases.c expects\n",
                  kernels, cg_planner_count(), count, tally.cases, tally.taken, tally.refused);
    convgen_context_destroy(ctx);
    free(layers);
}

/* Whether the planner's products can be convgen's own GEMM (options.gemm): a program of some
 * layer and pass, with the generated GEMM asked for, has a GEMM kernel step. */
static bool takes_generated_gemm(const cg_planner *planner, const cg_layer *layers, int count)
{
    const cg_tuning generated = {.gemm = CONVGEN_GEMM_GENERATED};
    bool found = false;
    for (int i = 0; i < count && !found; ++i)
        for (int pass = 0; pass < 3 && !found; ++pass) {
            cg_problem p;
            cg_generated g;
            if (cg_problem_init(&p, &layers[i].desc) != CONVGEN_SUCCESS ||
                cg_generate_tuned(&p, (convgen_pass)pass, planner->algo, NULL, &generated, &g) != CONVGEN_SUCCESS)
                continue;
            for (int s = 0; s < g.step_count; ++s)
                found |= g.steps[s].kind == CG_STEP_KERNEL && g.steps[s].op.kind == CG_OP_GEMM;
            cg_generated_free(&g);
        }
    return found;
}

/* Every planner whose products can be convgen's own GEMM (options.gemm), on the layer set: the
 * products' kernels of every pass compile without local memory, accgrad also summing over
 * sub-batches (the zeroing kernel and the accumulating one), under half the workspace it needs
 * whole. */
static void test_generated_gemm_compiles_without_local_memory(void **state)
{
    (void)state;
    cg_layer *layers;
    int count, planners = 0;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    convgen_context *ctx = offline(NULL);
    for (int a = 0; a < cg_planner_count(); ++a) {
        const cg_planner *planner = cg_planner_at(a);
        if (!takes_generated_gemm(planner, layers, count))
            continue;
        int kernels = 0;
        ++planners;
        for (int i = 0; i < count; ++i)
            for (int run = 0; run < 4; ++run) {
                convgen_pass pass = (convgen_pass)(run % 3);
                convgen_plan_options o = {.gemm = CONVGEN_GEMM_GENERATED};
                convgen_plan *plan;
                if (convgen_plan_conv_ex(ctx, &layers[i].desc, pass, planner->algo, &o, &plan) != CONVGEN_SUCCESS)
                    continue; /* strided, rank 3, kernels past 7 (winograd) */
                if (run == 3) { /* accgrad again in sub-batches */
                    convgen_plan_workspace_size(plan, &o.workspace_limit);
                    o.workspace_limit /= 2;
                    convgen_plan_destroy(plan);
                    if (convgen_plan_conv_ex(ctx, &layers[i].desc, pass, planner->algo, &o, &plan) != CONVGEN_SUCCESS)
                        continue; /* a batch of one */
                }
                for (int k = 0; k < convgen_plan_kernel_count(plan); ++k) {
                    convgen_kernel_info info;
                    assert_int_equal(convgen_plan_kernel_info(plan, k, &info), CONVGEN_SUCCESS);
                    if (!strstr(info.name, "products"))
                        continue;
                    ++kernels;
                    assert_true(info.registers > 0);
                    if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
                        fail_msg("%s %s %s: stack %d, spills %d/%d", layers[i].name, convgen_pass_name(pass), info.name,
                                 info.stack_bytes, info.spill_store_bytes, info.spill_load_bytes);
                }
                convgen_plan_destroy(plan);
            }
        print_message("%s: %d generated GEMM kernels compiled without local memory\n", planner->name, kernels);
        assert_true(kernels >= count); /* about one per layer it takes, and pass */
    }
    print_message("%d planners take the generated GEMM\n", planners);
    assert_true(planners >= 2); /* winograd's and fft's products at least */
    convgen_context_destroy(ctx);
    free(layers);
}

/* A visit of each_tensor_kernel: kernel k of the plan of `layer` and `pass`; `tally` the test's. */
typedef void (*kernel_visit)(const cg_layer *layer, convgen_pass pass, const convgen_plan *plan, int k,
                             const convgen_kernel_info *info, int *tally);

/* Every kernel of algo's plans with gemm=tensor for arch, on every layer and pass of the set it plans. */
static void each_tensor_kernel(convgen_algo algo, const char *arch, kernel_visit visit, int *tally)
{
    cg_layer *layers;
    int count;
    assert_int_equal(cg_layer_read_file(CONVGEN_SOURCE_DIR "/bench/layers.txt", &layers, &count), CONVGEN_SUCCESS);
    convgen_context *ctx = offline_for(arch, NULL);
    for (int i = 0; i < count; ++i)
        for (int p = 0; p < 3; ++p) {
            convgen_plan_options o = {.gemm = CONVGEN_GEMM_TENSOR};
            convgen_plan *plan;
            if (convgen_plan_conv_ex(ctx, &layers[i].desc, (convgen_pass)p, algo, &o, &plan) != CONVGEN_SUCCESS)
                continue; /* what the algorithm does not take (stride, kernel size, shared memory) */
            for (int k = 0; k < convgen_plan_kernel_count(plan); ++k) {
                convgen_kernel_info info;
                assert_int_equal(convgen_plan_kernel_info(plan, k, &info), CONVGEN_SUCCESS);
                visit(&layers[i], (convgen_pass)p, plan, k, &info, tally);
            }
            convgen_plan_destroy(plan);
        }
    convgen_context_destroy(ctx);
    free(layers);
}

static void fail_on_local_memory(const cg_layer *layer, convgen_pass pass, const convgen_kernel_info *info)
{
    if (info->stack_bytes || info->spill_store_bytes || info->spill_load_bytes)
        fail_msg("%s %s %s: %d registers, stack %d, spills %d/%d", layer->name, convgen_pass_name(pass), info->name,
                 info->registers, info->stack_bytes, info->spill_store_bytes, info->spill_load_bytes);
}

/* tally: wgmma products kernels, accgrad's of them, other products kernels */
static void visit_winograd(const cg_layer *layer, convgen_pass pass, const convgen_plan *plan, int k,
                           const convgen_kernel_info *info, int *tally)
{
    const char *src = convgen_plan_source(plan, k);
    bool wgmma = strstr(src, "\n" CG_SM90A_MARKER "\n") != NULL;
    if (!strstr(info->name, "products")) {
        assert_false(wgmma);
        return;
    }
    if (!wgmma) {
        ++tally[2];
        return;
    }
    assert_non_null(strstr(src, "wgmma.mma_async"));
    ++tally[0];
    tally[1] += pass == CONVGEN_ACCGRAD;
    fail_on_local_memory(layer, pass, info);
}

/* winograd's products on the tensor cores (gemm=tensor, gemm_tc.c): for every pass of every 2-D
 * and 3-D layer of the set winograd plans, the products kernel is the wgmma one where the kernel
 * takes the GEMM, compiles for sm_90a (the marker line; a plain sm_90 compile stops at its #error)
 * without local memory; accgrad's too (its sum over the tiles, split into runs), except over a
 * 3-D layer's bricks, which keeps cuBLAS's. */
static void test_tensor_gemm_compiles_for_sm_90a_without_local_memory(void **state)
{
    (void)state;
    int tally[3] = {0};
    each_tensor_kernel(CONVGEN_ALGO_WINOGRAD, "sm_90", visit_winograd, tally);
    print_message("winograd: %d tensor-core products kernels compiled for sm_90a without local memory (%d of them "
                  "accgrad's), %d others\n", tally[0], tally[1], tally[2]);
    assert_true(tally[0] >= 30 && tally[1] >= 10); /* every pass of the 3x3 and 5x5 layers, at least */
}

/* tally: kernels, those reading A from a patch, those by wgmma (and their pieces' kernels) */
static void visit_direct(const cg_layer *layer, convgen_pass pass, const convgen_plan *plan, int k,
                         const convgen_kernel_info *info, int *tally)
{
    const char *src = convgen_plan_source(plan, k);
    ++tally[0];
    tally[1] += strstr(src, "load_patch(") != NULL;
    tally[2] += strstr(src, "\n" CG_SM90A_MARKER "\n") != NULL && strstr(src, "wgmma.mma_async") != NULL;
    fail_on_local_memory(layer, pass, info);
}

/* direct's tensor form (gemm=tensor, direct_tc.c) on every layer and pass of the set it plans,
 * for sm_90 (wgmma where A comes from a patch, compiled for sm_90a) and for sm_80 (mma.sync): each
 * kernel compiles without local memory. Its blocks an SM and whether A comes from a patch rest on
 * an estimate of a thread's registers (registers_likely), which NVRTC's allocation can outgrow:
 * this is where a spill it lets through shows, beyond the shipped picks the kernel set compiles. */
static void test_direct_tensor_compiles_without_local_memory(void **state)
{
    (void)state;
    int sm90[3] = {0}, sm80[3] = {0};
    each_tensor_kernel(CONVGEN_ALGO_DIRECT, "sm_90", visit_direct, sm90);
    each_tensor_kernel(CONVGEN_ALGO_DIRECT, "sm_80", visit_direct, sm80);
    print_message("direct tensor: sm_90, %d kernels compiled without local memory, %d of them reading A from a "
                  "patch, %d by wgmma; sm_80, %d kernels, %d from a patch\n", sm90[0], sm90[1], sm90[2], sm80[0],
                  sm80[1]);
    /* the 2-D 3x3 layers' fprop and bprop read patches, on sm_90 by wgmma */
    assert_true(sm90[0] >= 60 && sm90[1] >= 30 && sm90[2] >= 30);
    assert_true(sm80[0] >= 60 && sm80[1] >= 30 && sm80[2] == 0);
}

static const convgen_conv_desc small = {.rank = 2, .n = 2, .c = 3, .k = 5, .in = {11, 13}, .kernel = {3, 3}};

static void test_second_plan_comes_from_memory_then_disk_after_memory_is_cleared(void **state)
{
    (void)state;
    char dir[] = "/tmp/convgen-cache-XXXXXX";
    assert_non_null(mkdtemp(dir));
    convgen_conv_desc d = small;
    d.k = 6 + (int)(getpid() % 1000); /* a shape no earlier run of this program cached */
    cache_mem_clear();
    convgen_context *ctx = offline(dir);
    convgen_plan *plan;
    convgen_kernel_info info;
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    assert_int_equal(convgen_plan_kernel_info(plan, 0, &info), CONVGEN_SUCCESS);
    assert_int_equal(info.origin, CONVGEN_FROM_NVRTC);
    convgen_plan_destroy(plan);

    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    convgen_plan_kernel_info(plan, 0, &info);
    assert_int_equal(info.origin, CONVGEN_FROM_MEMORY_CACHE);
    int regs = info.registers;
    convgen_plan_destroy(plan);

    cache_mem_clear();
    assert_int_equal(convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
    convgen_plan_kernel_info(plan, 0, &info);
    assert_int_equal(info.origin, CONVGEN_FROM_DISK_CACHE);
    assert_int_equal(info.registers, regs);
    convgen_plan_destroy(plan);
    convgen_context_destroy(ctx);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
}

static void test_compile_error_keeps_nvrtc_log(void **state)
{
    (void)state;
    cache_kernel k;
    convgen_kernel_origin origin;
    const char *bad = "extern \"C\" __global__ void broken(float *y) { y[0] = undefined_name; }\n";
    assert_int_equal(jit_get(bad, "broken", "sm_90", NULL, &k, &origin), CONVGEN_ERROR_COMPILE);
    assert_non_null(strstr(convgen_last_error(), "broken"));
    assert_non_null(strstr(convgen_last_compile_log(), "undefined_name"));
}

static void test_report_parser_reads_ptxas_lines(void **state)
{
    (void)state;
    const char *log = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                      "ptxas info    : Function properties for k\n"
                      "    24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
                      "ptxas info    : Used 96 registers, used 1 barriers, 8448 bytes smem, 384 bytes cmem[0]\n";
    cache_kernel k = {0};
    assert_true(jit_parse_report(log, "k", &k));
    assert_false(jit_parse_report("ptxas info    : 0 bytes gmem\n", "k", &k));
    assert_int_equal(k.stack_bytes, 24);
    assert_int_equal(k.spill_store_bytes, 8);
    assert_int_equal(k.spill_load_bytes, 12);
    assert_int_equal(k.registers, 96);
    assert_int_equal(k.shared_bytes, 8448);
}

/* The cubin's own attributes agree with ptxas' report, and a damaged cubin is refused. */
static void test_cubin_report_matches_ptxas_report(void **state)
{
    (void)state;
    const convgen_conv_desc d = {.rank = 2, .n = 4, .c = 16, .k = 24, .in = {20, 20}, .kernel = {5, 5}};
    for (int pass = 0; pass < 3; ++pass) {
        char *src;
        assert_int_equal(convgen_emit(&d, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, 0, &src), CONVGEN_SUCCESS);
        char name[64];
        snprintf(name, sizeof name, "convgen_direct_%s", convgen_pass_name((convgen_pass)pass));
        cache_kernel k, from_elf = {0};
        convgen_kernel_origin origin;
        assert_int_equal(jit_get(src, name, "sm_90", NULL, &k, &origin), CONVGEN_SUCCESS);
        assert_true(cubin_read_report(k.cubin, k.cubin_size, name, &from_elf));
        assert_true(k.registers > 0);
        assert_int_equal(from_elf.registers, k.registers);
        assert_int_equal(from_elf.stack_bytes, k.stack_bytes);
        assert_true(from_elf.shared_bytes >= k.shared_bytes && k.shared_bytes > 0);
        assert_false(cubin_read_report(k.cubin, k.cubin_size, "no_such_kernel", &from_elf));
        assert_false(cubin_read_report(k.cubin, 100, name, &from_elf));
        ((unsigned char *)k.cubin)[1] ^= 0xff; /* not ELF any more */
        assert_false(cubin_read_report(k.cubin, k.cubin_size, name, &from_elf));
        cache_kernel_free(&k);
        free(src);
    }
}

static void test_64_bit_addressing_kernels_compile_without_local_memory(void **state)
{
    (void)state;
    const convgen_conv_desc d = {.rank = 2, .n = 2, .c = 64, .k = 2, .in = {8192, 4096}, .kernel = {3, 3},
                                 .pad_before = {1, 1}, .pad_after = {1, 1}};
    convgen_context *ctx = offline(NULL);
    for (int pass = 0; pass < 3; ++pass) {
        convgen_plan *plan;
        assert_int_equal(convgen_plan_conv(ctx, &d, (convgen_pass)pass, CONVGEN_ALGO_DIRECT, &plan), CONVGEN_SUCCESS);
        assert_non_null(strstr(convgen_plan_source(plan, 0), "unsigned long long idx_t"));
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_kernel_info(plan, 0, &info), CONVGEN_SUCCESS);
        assert_int_equal(info.stack_bytes, 0);
        assert_int_equal(info.spill_store_bytes, 0);
        assert_int_equal(info.spill_load_bytes, 0);
        convgen_plan_destroy(plan);
    }
    convgen_context_destroy(ctx);
}

/* Plans each case's pass with direct-window offline: its one kernel, named `name`, may use no
 * local memory (no stack, no spills). */
static void window_kernels_use_no_local_memory(const convgen_conv_desc *cases, size_t count, convgen_pass pass,
                                               const char *name)
{
    convgen_context *ctx = offline(NULL);
    for (size_t i = 0; i < count; ++i) {
        convgen_plan *plan;
        assert_int_equal(convgen_plan_conv(ctx, &cases[i], pass, CONVGEN_ALGO_DIRECT_WINDOW, &plan), CONVGEN_SUCCESS);
        convgen_kernel_info info;
        assert_int_equal(convgen_plan_kernel_info(plan, 0, &info), CONVGEN_SUCCESS);
        assert_string_equal(info.name, name);
        if (info.stack_bytes || info.spill_store_bytes || info.spill_load_bytes)
            fail_msg("case %zu (%u threads): %d registers, stack %d, spills %d/%d", i, info.block[0], info.registers,
                     info.stack_bytes, info.spill_store_bytes, info.spill_load_bytes);
        convgen_plan_destroy(plan);
    }
    convgen_context_destroy(ctx);
}

/* direct-window's bprop at every block size it launches (2 to 256 threads), and in 3-D with 2 to 8
 * slices of dx a thread: none may spill. The
 * register cap follows the block size; 16-thread blocks once asked for 32 blocks per
 * multiprocessor, so ptxas capped them at 64 registers and spilled. */
static void test_window_bprop_compiles_without_local_memory_at_every_block_size(void **state)
{
    (void)state;
    const convgen_conv_desc cases[] = {
        {.rank = 2, .n = 1, .c = 2, .k = 3, .in = {9, 2}, .kernel = {3, 2}, .stride = {1, 3}},   /* 16 threads */
        {.rank = 1, .n = 1, .c = 3, .k = 8, .in = {40}, .kernel = {7}, .pad_before = {3}, .pad_after = {3}},
        {.rank = 1, .n = 2, .c = 4, .k = 5, .in = {9}, .kernel = {3}},                            /* 4 threads */
        {.rank = 2, .n = 2, .c = 3, .k = 6, .in = {20, 22}, .kernel = {2, 2}, .stride = {3, 3}},
        {.rank = 2, .n = 1, .c = 4, .k = 7, .in = {70, 70}, .kernel = {5, 5}, .pad_before = {2, 2},
         .pad_after = {2, 2}},
        {.rank = 2, .n = 1, .c = 3, .k = 4, .in = {30, 30}, .kernel = {13, 13}, .pad_before = {6, 6},
         .pad_after = {6, 6}},
        {.rank = 2, .n = 2, .c = 1, .k = 5, .in = {40, 300}, .kernel = {3, 3}, .pad_before = {1, 1},
         .pad_after = {1, 1}},                                                                     /* 256 threads */
        {.rank = 3, .n = 1, .c = 1, .k = 80, .in = {128, 128, 128}, .kernel = {4, 4, 4}},         /* Z1: 4 slices a thread */
        {.rank = 3, .n = 1, .c = 1, .k = 8, .in = {17, 16, 15}, .kernel = {4, 4, 4}},             /* 8 slices */
        {.rank = 3, .n = 2, .c = 3, .k = 6, .in = {9, 9, 9}, .kernel = {3, 3, 3}},                /* C = 3, 2 slices */
    };
    window_kernels_use_no_local_memory(cases, sizeof cases / sizeof cases[0], CONVGEN_BPROP, "convgen_direct_bprop_window");
}

/* direct-window's fprop, the sliding kernel, at its block shapes (32 to 256 threads; 1 to 8
 * channels and 1 to 8 depth positions a thread, a loop over row groups, several stages): none
 * may spill. Unrolled whole, its tap rows and weight copies spilled (a 2-D stem: 7 KiB). */
static void test_slide_fprop_compiles_without_local_memory(void **state)
{
    (void)state;
    const convgen_conv_desc cases[] = {
        {.rank = 3, .n = 1, .c = 1, .k = 80, .in = {128, 128, 128}, .kernel = {4, 4, 4}},             /* Z1 */
        {.rank = 2, .n = 32, .c = 3, .k = 64, .in = {224, 224}, .kernel = {7, 7}, .pad_before = {3, 3},
         .pad_after = {3, 3}, .stride = {2, 2}},                                                         /* G1 */
        {.rank = 2, .n = 128, .c = 3, .k = 96, .in = {128, 128}, .kernel = {11, 11}},                   /* L1 */
        {.rank = 2, .n = 2, .c = 4, .k = 8, .in = {37, 41}, .kernel = {11, 11}, .pad_before = {5, 5},
         .pad_after = {5, 5}, .stride = {4, 4}},                                                         /* 2 stages */
        {.rank = 3, .n = 2, .c = 2, .k = 200, .in = {11, 9, 10}, .kernel = {3, 3, 3}, .dilation = {2, 1, 1},
         .pad_before = {2, 1, 1}, .pad_after = {2, 1, 0}, .mode = CONVGEN_CONVOLUTION},
        {.rank = 1, .n = 3, .c = 2, .k = 7, .in = {300}, .kernel = {7}, .pad_before = {3}, .pad_after = {3},
         .stride = {2}},
    };
    window_kernels_use_no_local_memory(cases, sizeof cases / sizeof cases[0], CONVGEN_FPROP, "convgen_direct_fprop_slide");
}

static void test_bad_architecture_is_named(void **state)
{
    (void)state;
    assert_int_equal(jit_check_arch("sm_1"), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "arch = 'sm_1'"));
    assert_int_equal(jit_check_arch("compute"), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "arch = 'compute'"));
    assert_int_equal(jit_check_arch("sm_90"), CONVGEN_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_parser_reads_ptxas_lines),
        cmocka_unit_test(test_bad_architecture_is_named),
        cmocka_unit_test(test_cubin_report_matches_ptxas_report),
        cmocka_unit_test(test_64_bit_addressing_kernels_compile_without_local_memory),
        cmocka_unit_test(test_window_bprop_compiles_without_local_memory_at_every_block_size),
        cmocka_unit_test(test_slide_fprop_compiles_without_local_memory),
        cmocka_unit_test(test_compile_error_keeps_nvrtc_log),
        cmocka_unit_test(test_second_plan_comes_from_memory_then_disk_after_memory_is_cleared),
        cmocka_unit_test(test_every_layer_compiles_for_sm_90_without_local_memory),
        cmocka_unit_test(test_generated_gemm_compiles_without_local_memory),
        cmocka_unit_test(test_tensor_gemm_compiles_for_sm_90a_without_local_memory),
        cmocka_unit_test(test_direct_tensor_compiles_without_local_memory),
    };
    const char *filter = getenv("CONVGEN_TEST_FILTER"); /* e.g. "*direct_tensor*" */
    if (filter)
        cmocka_set_test_filter(filter);
    return cmocka_run_group_tests_name("compile", tests, NULL, NULL);
}
