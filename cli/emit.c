/* convgen emit: kernel source to stdout. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "generate.h"
#include "plan.h"
#include "problem.h"
#include "verbs.h"

static const cli_verb emit_verb = {
    "emit", CLI_EMIT, "[options] LAYER",
    "Prints the CUDA source of the layer's kernels for the pass (fprop by default); a plan\n"
    "may have several kernels (e.g. a split reduction's sum): --kernel I prints only one.\n"
    "Any candidate of 'convgen tune' is emitted with its algorithm and tuning options.\n"
    "Batched FFTs: convgen emit --algo fft --n N [options] ('convgen emit --algo fft --help').\n"
    "Pooling: convgen emit --pool max|fragments --in DxHxW --window DxHxW ('convgen emit --pool --help').\n",
    false, true};

/* --algo fft with --n (or --help) is a batched FFT plan, with its own options; --algo fft
 * with a layer is the FFT convolution. */
static bool batched_fft(int argc, char **argv)
{
    bool fft = false, sized = false;
    for (int i = 0; i < argc; ++i) {
        fft |= i + 1 < argc && strcmp(argv[i], "--algo") == 0 && strcmp(argv[i + 1], "fft") == 0;
        sized |= strcmp(argv[i], "--n") == 0 || strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0;
    }
    return fft && sized;
}

int cli_emit(int argc, char **argv)
{
    if (batched_fft(argc, argv))
        return cli_emit_fft(argc, argv);
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--pool") == 0)
            return cli_emit_pool(argc, argv);
    cli_args a;
    if (!cli_parse(argc, argv, &emit_verb, &a))
        return 2;
    if (a.help || !a.have_layer)
        return cli_usage(&emit_verb, a.help ? stdout : stderr);
    if (a.algo == CONVGEN_ALGO_AUTO) {
        fprintf(stderr, "convgen: emit: --algo auto chooses on a GPU or from wisdom: 'convgen explain' says what it "
                        "chose; emit that with its --algo, --tile, --gemm and --weights\n");
        return 2;
    }
    cg_tuning tuning;
    if (plan_tuning_of(&a.options, &tuning) != CONVGEN_SUCCESS)
        return cli_fail("emit", CONVGEN_ERROR_INVALID_VALUE);
    cg_target target = {.sm_count = a.sm_count};
    if (a.arch) { /* the architecture's limits, as an offline context of it plans */
        if (!cg_target_shared_limits(a.arch, &target.shared_per_block, &target.shared_per_sm)) {
            fprintf(stderr, "convgen: emit: --arch '%s' is not an architecture convgen knows (sm_70 .. sm_120)\n", a.arch);
            return 2;
        }
        target.max_cluster = cg_target_max_cluster(a.arch);
        snprintf(target.arch, sizeof target.arch, "%s", a.arch);
    }
    int skipped = 0;
    for (int pi = 0; pi < a.pass_count; ++pi) {
        cg_problem p;
        cg_generated gen;
        convgen_status s = cg_problem_init(&p, &a.layer.desc);
        if (s == CONVGEN_SUCCESS)
            s = cg_generate_tuned(&p, (convgen_pass)a.passes[pi], a.algo, &target, &tuning, &gen);
        if (cli_skip_pass(&a, (convgen_pass)a.passes[pi], s, true)) {
            ++skipped;
            continue;
        }
        if (s != CONVGEN_SUCCESS)
            return cli_fail("emit", s);
        if (a.kernel >= gen.kernel_count) {
            fprintf(stderr, "convgen: --kernel %d: this plan has %d kernel(s)\n", a.kernel, gen.kernel_count);
            cg_generated_free(&gen);
            return 2;
        }
        if (a.kernel < 0 && gen.step_count > 0) { /* a program of steps: list it first */
            char *program = cg_program_describe(&gen);
            fputs(program ? program : "/* (out of memory listing the plan's steps) */\n", stdout);
            free(program);
        }
        for (int i = 0; i < gen.kernel_count; ++i)
            if (a.kernel < 0 || a.kernel == i)
                fputs(gen.kernels[i].source, stdout);
        cg_generated_free(&gen);
    }
    /* the algorithm takes no pass of the layer: an error, with the last pass's reason */
    return skipped == a.pass_count ? cli_fail("emit", CONVGEN_ERROR_NOT_SUPPORTED) : 0;
}

