/* convgen emit / convgen generate: kernel source to stdout or into a folder. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "generate.h"
#include "problem.h"
#include "verbs.h"

static int emit_usage(void)
{
    printf("usage: convgen emit [--algo NAME] [--pass PASS] [--kernel I] LAYER\n"
           "Prints the CUDA source of the layer's kernels for the pass (fprop by default); a plan\n"
           "may have several kernels (e.g. a split reduction's sum): --kernel I prints only one.\n\n%s",
           cli_layer_usage);
    return 0;
}

int cli_emit(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, false, &a))
        return 2;
    if (a.help || !a.have_layer)
        return a.help ? emit_usage() : (emit_usage(), 2);
    for (int pi = 0; pi < a.pass_count; ++pi) {
        cg_problem p;
        cg_generated gen;
        convgen_status s = cg_problem_init(&p, &a.layer.desc);
        if (s == CONVGEN_SUCCESS)
            s = cg_generate(&p, (convgen_pass)a.passes[pi], a.algo, &(cg_target){.sm_count = a.sm_count}, &gen);
        if (s != CONVGEN_SUCCESS)
            return cli_fail("emit", s);
        if (a.kernel >= gen.kernel_count) {
            fprintf(stderr, "convgen: --kernel %d: this plan has %d kernel(s)\n", a.kernel, gen.kernel_count);
            cg_generated_free(&gen);
            return 2;
        }
        for (int i = 0; i < gen.kernel_count; ++i)
            if (a.kernel < 0 || a.kernel == i)
                fputs(gen.kernels[i].source, stdout);
        cg_generated_free(&gen);
    }
    return 0;
}

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "convgen: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* One file per kernel: <layer>_<algo>_<pass>[_<i>].cu, named so a user finds it. */
static int generate_layer(const cli_args *a, const cg_layer *layer, int index, int *files)
{
    cg_problem p;
    convgen_status s = cg_problem_init(&p, &layer->desc);
    if (s != CONVGEN_SUCCESS)
        return cli_fail(layer->name, s);
    for (int pass = 0; pass < 3; ++pass) {
        cg_generated gen;
        s = cg_generate(&p, (convgen_pass)pass, a->algo, &(cg_target){.sm_count = a->sm_count}, &gen);
        if (s == CONVGEN_ERROR_NOT_SUPPORTED)
            continue; /* the algorithm does not cover this layer: nothing to emit */
        if (s != CONVGEN_SUCCESS)
            return cli_fail(layer->name, s);
        for (int i = 0; i < gen.kernel_count; ++i) {
            char path[4096], name[40];
            if (layer->name[0])
                snprintf(name, sizeof name, "%s", layer->name);
            else
                snprintf(name, sizeof name, "layer%d", index);
            snprintf(path, sizeof path, "%s/%s_%s_%s%s%.0d.cu", a->out_dir, name, convgen_algo_name(a->algo),
                     convgen_pass_name((convgen_pass)pass), i ? "_" : "", i);
            if (write_file(path, gen.kernels[i].source)) {
                cg_generated_free(&gen);
                return 1;
            }
            ++*files;
        }
        cg_generated_free(&gen);
    }
    return 0;
}

int cli_generate(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, true, &a))
        return 2;
    if (a.help || !a.set || !a.out_dir) {
        printf("usage: convgen generate --set FILE --out DIR [--algo NAME]\n"
               "Emits every kernel of every layer in FILE (lines like bench/layers.txt), all three\n"
               "passes, into DIR as <layer>_<algo>_<pass>.cu. Layers the algorithm does not cover are\n"
               "skipped.\n");
        return a.help ? 0 : 2;
    }
    cg_layer *layers;
    int count, files = 0;
    convgen_status s = cg_layer_read_file(a.set, &layers, &count);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("generate", s);
    if (mkdir(a.out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "convgen: cannot create %s: %s\n", a.out_dir, strerror(errno));
        free(layers);
        return 1;
    }
    int rc = 0;
    for (int i = 0; i < count && rc == 0; ++i)
        rc = generate_layer(&a, &layers[i], i, &files);
    free(layers);
    if (rc == 0)
        printf("convgen: %d kernel sources from %d layers in %s\n", files, count, a.out_dir);
    return rc;
}
