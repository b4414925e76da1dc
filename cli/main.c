/* convgen: emit, compile and check generated convolution kernels. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "convgen.h"
#include "verbs.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
    const char *what;
} verbs[] = {
    {"emit", cli_emit, "print the CUDA source of a layer's kernels"},
    {"compile", cli_compile, "compile a layer's kernels: registers, shared memory, stack, spills, time"},
    {"check", cli_check, "run a layer's kernels on the GPU against the CPU float64 reference"},
    {"tune", cli_tune, "time every algorithm on a layer (or a layer file) and print the candidates and the winner"},
    {"explain", cli_explain, "say which algorithm auto picks for a layer, why, and its kernels' resources"},
    {"net", cli_net, "a network file's field of view, patch, and each layer's tensor and memory (no GPU)"},
    {"infer", cli_infer, "run a network file densely over a volume on the GPU: its plan and voxels per second"},
    {"generate", cli_generate, "emit the kernels of a layer file into a folder (the build's kernel sets)"},
    {"compile-kernel", cli_compile_kernel, "(the build's) compile one emitted kernel into a cubin and its report"},
    {"embed-set", cli_embed_set, "(the build's) embed compiled kernels and wisdom as the library's kernel set"},
    {"bench", NULL, "time convgen against cuDNN on the layer set (runs convgen-bench)"},
};

/* The bench is its own program (it links cuDNN, which the library never does), installed
 * beside this one when configure found cuDNN. */
static int run_bench(char **argv)
{
    char self[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(self, '/');
    if (slash)
        *slash = '\0';
    snprintf(path, sizeof path, "%s/convgen-bench", slash ? self : ".");
    argv[1] = path;
    execv(path, argv + 1);
    fprintf(stderr, "convgen: cannot run %s (%s): the bench is built only where configure finds cuDNN\n", path,
            strerror(errno));
    return 1;
}

#define VERB_COUNT (sizeof verbs / sizeof verbs[0])

static int usage(FILE *f)
{
    fprintf(f, "convgen %s: fully specialized CUDA convolution kernels, generated per layer shape.\n\n"
               "usage: convgen VERB [options] LAYER\n\n", CONVGEN_VERSION_STRING);
    for (size_t i = 0; i < VERB_COUNT; ++i)
        fprintf(f, "  %-14s %s\n", verbs[i].name, verbs[i].what);
    fprintf(f, "\n'convgen VERB --help' tells more. Example:\n"
               "  convgen emit --algo direct --pass bprop L2 128 64 64 64x64 9x9 0 1\n");
    return f == stderr ? 2 : 0;
}

/* An unknown verb: said, with the nearest verb when one is near (as ninja does). */
static int unknown_verb(const char *word)
{
    const char *names[VERB_COUNT];
    for (size_t i = 0; i < VERB_COUNT; ++i)
        names[i] = verbs[i].name;
    const char *near = cli_nearest(word, names, (int)VERB_COUNT);
    fprintf(stderr, "convgen: unknown verb '%s'%s%s%s ('convgen --help' lists them)\n", word,
            near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(stderr);
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0)
        return usage(stdout);
    if (strcmp(argv[1], "--version") == 0)
        return printf("convgen %s\n", CONVGEN_VERSION_STRING) < 0;
    for (size_t i = 0; i < VERB_COUNT; ++i)
        if (strcmp(argv[1], verbs[i].name) == 0)
            return verbs[i].run ? verbs[i].run(argc - 2, argv + 2) : run_bench(argv);
    return unknown_verb(argv[1]);
}
