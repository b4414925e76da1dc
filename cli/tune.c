/* convgen tune and convgen explain: what AUTO weighs, measures and chooses, for people.
 *
 * tune times every candidate of each layer and pass (wisdom is not consulted: the point is to
 * measure), prints the table and the winner, and merges the winners into a wisdom file.
 * explain plans one layer as AUTO would (wisdom first) and says what it chose, why, and what
 * the chosen kernels use. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "args.h"
#include "tune.h"
#include "verbs.h"

static const char *const chosen_by_names[] = {"the caller", "measurement", "wisdom", "the cost model"};
static const char *const effort_names[] = {"measure", "estimate", "exhaustive"};

static void print_ms(double ms)
{
    if (ms >= 0)
        printf(" %10.4f", ms);
    else
        printf(" %10s", "-");
}

/* The candidates' table; the winner marked '*'. */
static void print_candidates(const convgen_plan *plan, int rank)
{
    convgen_choice ch;
    convgen_plan_choice(plan, &ch);
    printf("  %-32s %10s %10s %10s %12s  %s\n", "candidate", "estimate", "measured", "vs first", "workspace", "");
    for (int i = 0; i < ch.candidate_count; ++i) {
        convgen_candidate c;
        convgen_plan_candidate(plan, i, &c);
        char name[96];
        tune_describe(c.algo, &c.options, rank, name, sizeof name);
        printf("%c %-32s", i == ch.winner ? '*' : ' ', name);
        print_ms(c.estimate_ms);
        print_ms(c.ms);
        if (c.difference >= 0)
            printf(" %10.2e", c.difference);
        else
            printf(" %10s", "-");
        printf(" %12zu  %s%s%s\n", c.workspace_bytes, c.status == CONVGEN_SUCCESS ? "" : convgen_status_string(c.status),
               c.status == CONVGEN_SUCCESS ? "" : ": ", c.status == CONVGEN_SUCCESS ? "" : c.note);
    }
}

static void write_csv(FILE *csv, const char *layer, convgen_pass pass, const convgen_plan *plan, int rank)
{
    convgen_choice ch;
    convgen_plan_choice(plan, &ch);
    for (int i = 0; i < ch.candidate_count; ++i) {
        convgen_candidate c;
        convgen_plan_candidate(plan, i, &c);
        char name[96];
        tune_describe(c.algo, &c.options, rank, name, sizeof name);
        fprintf(csv, "%s,%s,%s,%s,%.6g,%.6g,%.3e,%zu,%d\n", layer, convgen_pass_name(pass), name,
                c.status == CONVGEN_SUCCESS ? "ok" : convgen_status_string(c.status), c.estimate_ms, c.ms, c.difference,
                c.workspace_bytes, i == ch.winner);
    }
    fflush(csv); /* a long tuning run leaves what it measured so far */
}

/* A progress bar on stderr while a layer's candidates run, where stderr is a terminal. */
static void progress_bar(int done, int total, void *user)
{
    const int width = 30;
    int filled = total ? done * width / total : width;
    fprintf(stderr, "\r  %-24s [%.*s%*s] %d/%d", (const char *)user, filled, "##############################",
            width - filled, "", done, total);
    if (done == total)
        fprintf(stderr, "\r%*s\r", 70, "");
    fflush(stderr);
}

static int tune_layer(const cli_args *a, convgen_context *ctx, const cg_layer *layer, FILE *csv)
{
    int rc = 0;
    for (int pi = 0; pi < a->pass_count; ++pi) {
        convgen_pass pass = (convgen_pass)a->passes[pi];
        char label[64];
        snprintf(label, sizeof label, "%s %s", layer->name[0] ? layer->name : "layer", convgen_pass_name(pass));
        convgen_plan_options o = a->options;
        if (isatty(STDERR_FILENO))
            o.progress = progress_bar, o.progress_user = label;
        convgen_plan *plan;
        convgen_status s = convgen_plan_conv_ex(ctx, &layer->desc, pass, CONVGEN_ALGO_AUTO, &o, &plan);
        printf("%s\n", label);
        if (s != CONVGEN_SUCCESS) {
            printf("  no algorithm: %s: %s\n", convgen_status_string(s), convgen_last_error());
            rc = 1;
            continue;
        }
        print_candidates(plan, layer->desc.rank);
        convgen_choice ch;
        convgen_plan_choice(plan, &ch);
        char name[96];
        tune_describe(ch.algo, &ch.options, layer->desc.rank, name, sizeof name);
        convgen_candidate w = {.ms = -1};
        convgen_plan_candidate(plan, ch.winner, &w);
        printf("  winner: %s, %.4f ms %s (chosen by %s)\n", name, ch.ms >= 0 ? ch.ms : w.estimate_ms,
               ch.ms >= 0 ? "measured" : "estimated", chosen_by_names[ch.chosen_by]);
        if (csv)
            write_csv(csv, layer->name[0] ? layer->name : "layer", pass, plan, layer->desc.rank);
        convgen_plan_destroy(plan);
    }
    return rc;
}

/* Merges this run's winners into `path`: the file's entries first, ours over them. */
static int save_wisdom(const char *path)
{
    char *ours;
    if (convgen_wisdom_export_string(&ours) != CONVGEN_SUCCESS)
        return cli_fail("tune", CONVGEN_ERROR_OUT_OF_MEMORY);
    convgen_wisdom_forget();
    if (access(path, F_OK) == 0 && convgen_wisdom_import(path) != CONVGEN_SUCCESS)
        fprintf(stderr, "convgen: tune: %s (it is replaced)\n", convgen_last_error());
    convgen_status s = convgen_wisdom_import_string(ours);
    free(ours);
    if (s == CONVGEN_SUCCESS)
        s = convgen_wisdom_export(path);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("tune", s);
    printf("wisdom: %d entries in %s\n", convgen_wisdom_count(), path);
    return 0;
}

static int tune_usage(const cli_args *a)
{
    printf("usage: convgen tune [--pass PASS] [--effort LEVEL] [--wisdom FILE] [--csv FILE] (LAYER | --set FILE)\n"
           "Plans each pass of the layer (or of every layer of FILE) with every applicable algorithm\n"
           "and its main tuning parameters, runs each on the GPU on the same random inputs (its output\n"
           "checked against the first's), times it (median of CUDA-event timed runs) and prints the\n"
           "candidates: the cost model's estimate, the measured time, the difference from the first\n"
           "candidate's output and the workspace, the winner marked '*'. The winners are merged into\n"
           "the wisdom file (--wisdom, default $CONVGEN_WISDOM), which AUTO plans then read instead of\n"
           "timing; --csv writes the table. Without a GPU it ranks by the cost model.\n\n%s",
           cli_layer_usage);
    return a->help ? 0 : 2;
}

int cli_tune(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, true, &a))
        return 2;
    if (a.help || (!a.have_layer && !a.set))
        return tune_usage(&a);
    cg_layer *layers = &a.layer;
    int count = 1;
    if (a.set && cg_layer_read_file(a.set, &layers, &count) != CONVGEN_SUCCESS)
        return cli_fail("tune", CONVGEN_ERROR_IO);
    const char *wisdom = a.wisdom ? a.wisdom : getenv("CONVGEN_WISDOM");
    /* Measure, whatever wisdom knows (the file's and the kernel set's, whose kernels then come
     * from NVRTC or the disk cache); the winners are merged into the file at the end. */
    unsetenv("CONVGEN_WISDOM");
    setenv("CONVGEN_KERNEL_SET", "off", 1);
    FILE *csv = a.csv ? fopen(a.csv, "w") : NULL;
    if (a.csv && !csv) {
        perror(a.csv);
        return 1;
    }
    if (csv)
        fprintf(csv, "layer,pass,candidate,status,estimate_ms,ms,difference,workspace_bytes,winner\n");
    convgen_context *ctx;
    convgen_status s = cli_open_context(a.arch, a.no_cache, false, a.sm_count, &ctx);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("tune", s);
    printf("%s (%s), effort %s\n", convgen_context_device_name(ctx), convgen_context_arch(ctx),
           effort_names[a.options.effort]);
    int rc = 0;
    for (int i = 0; i < count; ++i)
        rc |= tune_layer(&a, ctx, &layers[i], csv);
    if (csv)
        fclose(csv);
    if (wisdom && *wisdom && convgen_wisdom_count() > 0)
        rc |= save_wisdom(wisdom);
    convgen_context_destroy(ctx);
    if (layers != &a.layer)
        free(layers);
    return rc;
}

int cli_explain(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, true, &a))
        return 2;
    if (a.help || !a.have_layer) {
        printf("usage: convgen explain [--pass PASS] [--effort LEVEL] [--wisdom FILE] [--arch sm_XX] LAYER\n"
               "Plans the layer with algorithm auto, as a program would (wisdom from --wisdom or\n"
               "$CONVGEN_WISDOM first, else timing on the GPU, else the cost model), and says which\n"
               "algorithm it chose and why: the wisdom entry, or the candidates it weighed. Then the\n"
               "chosen kernels: registers, shared memory, stack, spills, compile time.\n\n%s",
               cli_layer_usage);
        return a.help ? 0 : 2;
    }
    if (a.wisdom && convgen_wisdom_import(a.wisdom) != CONVGEN_SUCCESS)
        fprintf(stderr, "convgen: explain: %s\n", convgen_last_error());
    convgen_context *ctx;
    convgen_status s = cli_open_context(a.arch, a.no_cache, false, a.sm_count, &ctx);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("explain", s);
    printf("%s (%s)\n", convgen_context_device_name(ctx), convgen_context_arch(ctx));
    int rc = 0;
    for (int pi = 0; pi < a.pass_count && rc == 0; ++pi) {
        convgen_pass pass = (convgen_pass)a.passes[pi];
        convgen_plan *plan;
        s = convgen_plan_conv_ex(ctx, &a.layer.desc, pass, CONVGEN_ALGO_AUTO, &a.options, &plan);
        if (s != CONVGEN_SUCCESS) {
            rc = cli_fail("explain", s);
            break;
        }
        convgen_choice ch;
        convgen_plan_choice(plan, &ch);
        char name[96];
        tune_describe(ch.algo, &ch.options, a.layer.desc.rank, name, sizeof name);
        printf("\n%s: %s, chosen by %s", convgen_pass_name(pass), name, chosen_by_names[ch.chosen_by]);
        if (ch.chosen_by == CONVGEN_CHOSEN_BY_WISDOM)
            printf(" (tuned at effort %s: %.4f ms then)\n", effort_names[ch.effort], ch.ms);
        else if (ch.chosen_by == CONVGEN_CHOSEN_BY_MEASUREMENT)
            printf(" (%.4f ms, the fastest of the candidates that ran and agreed)\n", ch.ms);
        else
            printf(" (no GPU timing: the smallest estimate of FLOPs, bytes and launches)\n");
        if (ch.candidate_count)
            print_candidates(plan, a.layer.desc.rank);
        cli_print_kernel_header();
        cli_print_kernels(plan, pass);
        convgen_plan_destroy(plan);
    }
    convgen_context_destroy(ctx);
    return rc;
}
