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
    printf("  %-40s %10s %10s %10s %12s  %s\n", "candidate", "estimate", "measured", "vs first", "workspace", "");
    for (int i = 0; i < ch.candidate_count; ++i) {
        convgen_candidate c;
        convgen_plan_candidate(plan, i, &c);
        char name[96];
        tune_describe(c.algo, &c.options, rank, name, sizeof name);
        printf("%c %-40s", i == ch.winner ? '*' : ' ', name);
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

/* Tunes each pass of a layer; *measured counts the winners chosen by measurement (offline,
 * none: the cost model ranks, and nothing is worth saving as wisdom). */
static int tune_layer(const cli_args *a, convgen_context *ctx, const cg_layer *layer, FILE *csv, int *measured)
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
        *measured += ch.chosen_by == CONVGEN_CHOSEN_BY_MEASUREMENT;
        if (csv)
            write_csv(csv, layer->name[0] ? layer->name : "layer", pass, plan, layer->desc.rank);
        convgen_plan_destroy(plan);
    }
    return rc;
}

/* Whether `path` may be written as wisdom: absent, or wisdom already (checked before anything
 * is measured, so an hour of tuning does not end in a refusal). A file that is not wisdom (a
 * layer file given by mistake) is never overwritten, as the runtime's rule for
 * $CONVGEN_WISDOM. */
static bool wisdom_writable(const char *path)
{
    if (access(path, F_OK) != 0)
        return true;
    convgen_status s = convgen_wisdom_import(path);
    convgen_wisdom_forget(); /* tune measures, whatever the file knows */
    if (s != CONVGEN_SUCCESS)
        fprintf(stderr, "convgen: tune: --wisdom '%s' is not wisdom (%s): it is never overwritten\n", path,
                convgen_last_error());
    return s == CONVGEN_SUCCESS;
}

/* Merges this run's winners into `path`: the file's entries first, ours over them. */
static int save_wisdom(const char *path)
{
    char *ours;
    if (convgen_wisdom_export_string(&ours) != CONVGEN_SUCCESS)
        return cli_fail("tune", CONVGEN_ERROR_OUT_OF_MEMORY);
    convgen_wisdom_forget();
    convgen_status s = access(path, F_OK) == 0 ? convgen_wisdom_import(path) : CONVGEN_SUCCESS;
    if (s != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: tune: %s is no longer wisdom (%s): it is left as it is, and this run's winners "
                        "are not saved\n", path, convgen_last_error());
        free(ours);
        return 1;
    }
    s = convgen_wisdom_import_string(ours);
    free(ours);
    if (s == CONVGEN_SUCCESS)
        s = convgen_wisdom_export(path);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("tune", s);
    printf("wisdom: %d entries in %s\n", convgen_wisdom_count(), path);
    return 0;
}

static const cli_verb tune_verb = {
    "tune", CLI_TUNE, "[options] (LAYER | --set FILE)",
    "Plans each pass of the layer (or of every layer of FILE) with every applicable algorithm\n"
    "and its main tuning parameters, runs each on the GPU on the same random inputs (its output\n"
    "checked against the first's), times it (median of CUDA-event timed runs) and prints the\n"
    "candidates: the cost model's estimate, the measured time, the difference from the first\n"
    "candidate's output and the workspace, the winner marked '*'. The measured winners are\n"
    "merged into the wisdom file (--wisdom, default $CONVGEN_WISDOM), which AUTO plans then\n"
    "read instead of timing; --csv writes the table. Offline (no GPU, or --arch given) tune\n"
    "measures nothing: it ranks by the cost model only and writes no wisdom.\n",
    true, true};

/* The end of a run for the wisdom file: the measured winners merged into it, or why not. */
static int finish_wisdom(const char *wisdom, int measured)
{
    if (!wisdom || !*wisdom)
        return 0;
    if (measured > 0)
        return save_wisdom(wisdom);
    printf("wisdom: nothing was measured (offline, tune ranks by the cost model only): %s is not written\n",
           wisdom);
    return 0;
}

int cli_tune(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, &tune_verb, &a))
        return 2;
    if (a.help || (!a.have_layer && !a.set))
        return cli_usage(&tune_verb, a.help ? stdout : stderr);
    const char *wisdom = a.wisdom ? a.wisdom : getenv("CONVGEN_WISDOM");
    if (wisdom && *wisdom && !wisdom_writable(wisdom))
        return 2;
    cg_layer *layers = &a.layer;
    int count = 1;
    if (a.set && cg_layer_read_file(a.set, &layers, &count) != CONVGEN_SUCCESS)
        return cli_fail("tune", CONVGEN_ERROR_IO);
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
    int rc = 0, measured = 0;
    for (int i = 0; i < count; ++i)
        rc |= tune_layer(&a, ctx, &layers[i], csv, &measured);
    if (csv)
        fclose(csv);
    rc |= finish_wisdom(wisdom, measured);
    convgen_context_destroy(ctx);
    if (layers != &a.layer)
        free(layers);
    return rc;
}

static const cli_verb explain_verb = {
    "explain", CLI_EXPLAIN, "[options] LAYER",
    "Plans the layer with algorithm auto, as a program would (wisdom from --wisdom or\n"
    "$CONVGEN_WISDOM first, else timing on the GPU, else the cost model), and says which\n"
    "algorithm it chose and why: the wisdom entry, or the candidates it weighed. Then the\n"
    "chosen kernels: registers, shared memory, stack, spills, compile time.\n",
    true, true};

int cli_explain(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, &explain_verb, &a))
        return 2;
    if (a.help || !a.have_layer)
        return cli_usage(&explain_verb, a.help ? stdout : stderr);
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
