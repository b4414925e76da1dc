/* Command-line pieces shared by the verbs: the layer (written like a line of
 * bench/layers.txt, plus options for what a line cannot say), the table of common options
 * (each says which verbs take it, so a verb lists and accepts only those), and the one number
 * parser of the CLI. */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "convgen.h"
#include "layer.h"

typedef struct cli_args {
    cg_layer layer;
    bool have_layer;
    convgen_algo algo;
    bool algo_given;            /* --algo was on the command line */
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
    const char *set_name;       /* --set-name NAME (generate --embed) */
    const char *ninja;          /* --ninja FILE (generate: the build's edges) */
    bool no_cache;              /* --no-cache */
    bool help;
} cli_args;

/* The verbs that parse with cli_parse, a bit each: an option names the verbs it applies to. */
enum {
    CLI_EMIT = 1 << 0,
    CLI_COMPILE = 1 << 1,
    CLI_CHECK = 1 << 2,
    CLI_TUNE = 1 << 3,
    CLI_EXPLAIN = 1 << 4,
    CLI_GENERATE = 1 << 5,
};

/* A verb's command line: its bit, what follows "usage: convgen NAME", what it does (NULL: the
 * verb prints that itself, then cli_print_options), whether it defaults to --pass all, and
 * whether it takes a LAYER. */
typedef struct cli_verb {
    const char *name;
    unsigned bit;
    const char *synopsis;
    const char *about;
    bool default_pass_all;
    bool takes_layer;
} cli_verb;

/* Parses argv after the verb. With -h or --help anywhere, sets a->help and parses nothing
 * else. On an error prints it (naming the option and the value) and returns false. */
bool cli_parse(int argc, char **argv, const cli_verb *verb, cli_args *a);

/* The verb's usage, about text and options to `f`; returns main's exit code: 0 when `f` is
 * stdout (asked for), 2 otherwise (a usage error). */
int cli_usage(const cli_verb *verb, FILE *f);
/* The options that apply to the verb and, for a verb of layers, how a layer is written. */
void cli_print_options(const cli_verb *verb, FILE *f);

/* The one number parser: `text` whole (digits, an optional '-'; no blanks, '+' or suffix),
 * from min to max, overflow out of range. Otherwise prints "OPTION 'TEXT' must be an integer
 * from MIN to MAX" and returns false. */
bool cli_parse_int(const char *option, const char *text, int64_t min, int64_t max, int64_t *out);
/* A finite number (strtod's syntax, whole) from min to max, else an error like cli_parse_int's. */
bool cli_parse_float(const char *option, const char *text, double min, double max, double *out);

/* The name of `names` nearest to `word` (edit distance, at most 3 and less than the word's
 * length), or NULL: the "did you mean" of an unknown verb or option, as ninja's. */
const char *cli_nearest(const char *word, const char *const *names, int count);

/* The algorithms as --algo takes them, "auto, direct, ..." (the planners' registry). */
void cli_algo_names(char *text, size_t size);

/* The layer file used to look layers up by name. */
const char *cli_layers_file(const cli_args *a);

/* Prints a failed status and convgen_last_error(); returns 1 for main's exit code. */
int cli_fail(const char *what, convgen_status s);

/* With every pass asked for, a pass the algorithm does not support is a line of the output
 * ("accgrad  not supported: ...", a C comment where the output is source) rather than an error:
 * true when `s` is that, after printing it. */
bool cli_skip_pass(const cli_args *a, convgen_pass pass, convgen_status s, bool as_comment);

#endif
