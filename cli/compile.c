/* convgen compile: the compile report of a layer's kernels. */
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "verbs.h"

static const char *origin_name(convgen_kernel_origin o)
{
    return o == CONVGEN_FROM_NVRTC        ? "nvrtc"
           : o == CONVGEN_FROM_DISK_CACHE ? "disk cache"
           : o == CONVGEN_FROM_KERNEL_SET ? "kernel set"
                                          : "memory cache";
}

/* A device context when a GPU is there and no --arch was asked for, else offline. */
convgen_status cli_open_context(const char *arch, bool no_cache, bool need_device, int sm_count, convgen_context **ctx)
{
    convgen_context_options o = {.arch = arch, .disk_cache = no_cache ? -1 : 0, .sm_count = sm_count};
    if (arch && !need_device)
        o.offline = 1;
    convgen_status s = convgen_context_create(&o, ctx);
    if (s == CONVGEN_ERROR_NO_DEVICE && !need_device) {
        fprintf(stderr, "convgen: %s; compiling offline for sm_90\n", convgen_last_error());
        o.offline = 1;
        o.arch = "sm_90";
        s = convgen_context_create(&o, ctx);
    }
    return s;
}

void cli_print_kernel_header(void)
{
    printf("%-8s %-38s %5s %6s %6s %7s %7s %10s  %s\n", "pass", "kernel", "regs", "smem", "stack", "spill-st",
           "spill-ld", "compile-ms", "from");
}

bool cli_print_kernels(const convgen_plan *plan, convgen_pass pass)
{
    bool local = false;
    for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {
        convgen_kernel_info k;
        convgen_plan_kernel_info(plan, i, &k);
        printf("%-8s %-38s %5d %6d %6d %7d %7d %10.1f  %s\n", convgen_pass_name(pass), k.name, k.registers,
               k.shared_bytes, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes, k.compile_ms,
               origin_name(k.origin));
        local |= k.stack_bytes || k.spill_store_bytes || k.spill_load_bytes;
    }
    return local;
}

static const cli_verb compile_verb = {
    "compile", CLI_COMPILE, "[options] LAYER",
    "Compiles the layer's kernels with NVRTC (or finds them in the cache) and prints each\n"
    "kernel's registers, static shared memory, stack frame, spill stores/loads and NVRTC\n"
    "time, and, where cuobjdump or nvdisasm is on PATH, each kernel's SASS instruction mix\n"
    "(the most frequent opcodes). Without --arch it targets the GPU, or sm_90 when there is\n"
    "none.\n",
    true, true};

int cli_compile(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, &compile_verb, &a))
        return 2;
    if (a.help || !a.have_layer)
        return cli_usage(&compile_verb, a.help ? stdout : stderr);
    convgen_context *ctx;
    convgen_status s = cli_open_context(a.arch, a.no_cache, false, a.sm_count, &ctx);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("compile", s);
    printf("target %s (%s)\n", convgen_context_arch(ctx), convgen_context_device_name(ctx));
    cli_print_kernel_header();
    int rc = 0, skipped = 0;
    for (int pi = 0; pi < a.pass_count && rc == 0; ++pi) {
        convgen_plan *plan;
        convgen_pass pass = (convgen_pass)a.passes[pi];
        s = convgen_plan_conv_ex(ctx, &a.layer.desc, pass, a.algo, &a.options, &plan);
        if (cli_skip_pass(&a, pass, s, false)) {
            ++skipped;
            continue;
        }
        if (s != CONVGEN_SUCCESS) {
            rc = cli_fail("compile", s);
            break;
        }
        if (cli_print_kernels(plan, pass))
            rc = 3; /* local memory in an emitted kernel is a generator defect */
        for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {
            char mix[512];
            convgen_kernel_info k;
            convgen_plan_kernel_info(plan, i, &k);
            if (cli_sass_mix(convgen_plan_source(plan, i), k.name, convgen_context_arch(ctx), mix, sizeof mix))
                printf("%-8s   SASS of %s: %s\n", "", k.name, mix);
        }
        convgen_plan_destroy(plan);
    }
    if (rc == 3)
        fprintf(stderr, "convgen: a kernel uses local memory (stack or spills)\n");
    if (!cli_sass_available())
        printf("(no cuobjdump or nvdisasm on PATH: no SASS instruction mix)\n");
    if (skipped == a.pass_count)
        rc = cli_fail("compile", CONVGEN_ERROR_NOT_SUPPORTED); /* the algorithm takes no pass of the layer */
    convgen_context_destroy(ctx);
    return rc;
}
