/* Command-line pieces shared by the verbs: the layer (written like a line of
 * bench/layers.txt, plus options for what a line cannot say) and the common options. */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stdbool.h>

#include "convgen.h"
#include "layer.h"

typedef struct cli_args {
    cg_layer layer;
    bool have_layer;
    convgen_algo algo;
    int passes[3], pass_count;  /* --pass fprop|bprop|accgrad|all */
    bool all_passes;            /* --pass all (or its default): a pass the algorithm lacks is skipped */
    int kernel;                 /* --kernel I, -1 for all */
    const char *arch;           /* --arch */
    const char *set;            /* --set FILE */
    const char *out_dir;        /* --out DIR */
    const char *layers_file;    /* --layers FILE, for layers given by name */
    unsigned seed;              /* --seed */
    long samples;               /* --samples: checked output points, 0 = all */
    int sm_count;               /* --sms: multiprocessors to tune for (0: default) */
    convgen_plan_options options; /* --gemm cublas|generated: gemm; --effort */
    const char *wisdom;         /* --wisdom FILE (tune, explain) */
    const char *csv;            /* --csv FILE (tune) */
    const char *cache_dir;      /* --cache DIR (generate) */
    const char *embed;          /* --embed FILE.c (generate) */
    const char *ninja;          /* --ninja FILE (generate: the build's edges) */
    bool no_cache;              /* --no-cache */
    bool help;
} cli_args;

/* Parses argv after the verb. `default_pass_all` picks --pass all when none is given. On an
 * error prints it (naming the bad word) and returns false. */
bool cli_parse(int argc, char **argv, bool default_pass_all, cli_args *a);

/* The layer file used to look layers up by name. */
const char *cli_layers_file(const cli_args *a);

/* Prints a failed status and convgen_last_error(); returns 1 for main's exit code. */
int cli_fail(const char *what, convgen_status s);

/* With every pass asked for, a pass the algorithm does not support is a line of the output
 * ("accgrad  not supported: ...", a C comment where the output is source) rather than an error:
 * true when `s` is that, after printing it. */
bool cli_skip_pass(const cli_args *a, convgen_pass pass, convgen_status s, bool as_comment);

/* The usage text of the layer words and common options. */
extern const char cli_layer_usage[];

#endif
