#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "generate.h"
#include "layers_file.h"

#define LAYER_VERBS (CLI_EMIT | CLI_COMPILE | CLI_CHECK | CLI_TUNE | CLI_EXPLAIN)
#define PLAN_VERBS (LAYER_VERBS | CLI_GENERATE)
#define MAX_SMS 65536 /* --sms: more than any GPU has, and cost-model products stay in int */
#define MAX_OPTION_SIZE (1 << 20) /* --tile, --fourier */

typedef struct cli_option cli_option;
typedef bool (*option_setter)(cli_args *a, const cli_option *o, const char *value);

/* One common option: the verbs it applies to, how it is set, what it says in --help ('\n'
 * starts an indented line). Layer options apply once the layer (and its rank) is known. */
struct cli_option {
    const char *name, *value; /* value: its placeholder in --help; NULL for a flag */
    unsigned verbs;
    bool layer_option;
    option_setter set;
    size_t field; /* set_text's and set_flag's field of cli_args */
    const char *help;
};

/* ---- numbers ---- */

bool cli_parse_int(const char *option, const char *text, int64_t min, int64_t max, int64_t *out)
{
    if (cg_parse_integer(text, min, max, out))
        return true;
    fprintf(stderr, "convgen: %s '%s' must be an integer from %lld to %lld\n", option, text, (long long)min,
            (long long)max);
    return false;
}

bool cli_parse_float(const char *option, const char *text, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double x = *text && !isspace((unsigned char)*text) ? strtod(text, &end) : NAN;
    if (isnan(x) || *end || errno == ERANGE || !isfinite(x) || x < min || x > max) {
        fprintf(stderr, "convgen: %s '%s' must be a number from %g to %g\n", option, text, min, max);
        return false;
    }
    *out = x;
    return true;
}

/* "AxB" sizes, each from min to max: *given of them (1..CONVGEN_MAX_RANK) into dst. */
static bool parse_sizes(const cli_option *o, const char *v, int64_t min, int64_t max, int64_t *dst, int *given)
{
    *given = cg_parse_dims(v, dst);
    for (int i = 0; i < *given; ++i)
        *given = dst[i] >= min && dst[i] <= max ? *given : 0;
    if (*given == 0)
        fprintf(stderr, "convgen: %s '%s' must be sizes like 4x4 (or one for every dimension), each from %lld to %lld\n",
                o->name, v, (long long)min, (long long)max);
    return *given > 0;
}

/* ---- setters ---- */

static bool set_text(cli_args *a, const cli_option *o, const char *v)
{
    *(const char **)((char *)a + o->field) = v;
    return true;
}

static bool set_flag(cli_args *a, const cli_option *o, const char *v)
{
    (void)v;
    *(bool *)((char *)a + o->field) = true;
    return true;
}

void cli_algo_names(char *text, size_t size)
{
    int used = snprintf(text, size, "auto");
    for (int i = 0; i < cg_planner_count() && used >= 0 && (size_t)used < size; ++i)
        used += snprintf(text + used, size - (size_t)used, ", %s", cg_planner_at(i)->name);
}

static bool set_algo(cli_args *a, const cli_option *o, const char *v)
{
    const cg_planner *p = cg_planner_named(v);
    a->algo_given = true;
    if (strcmp(v, "auto") == 0)
        return a->algo = CONVGEN_ALGO_AUTO, true;
    if (p)
        return a->algo = p->algo, true;
    char names[256];
    cli_algo_names(names, sizeof names);
    fprintf(stderr, "convgen: %s '%s' is not an algorithm: %s\n", o->name, v, names);
    return false;
}

static bool set_pass(cli_args *a, const cli_option *o, const char *v)
{
    static const char *const names[] = {"fprop", "bprop", "accgrad"};
    a->pass_count = 0;
    a->all_passes = strcmp(v, "all") == 0;
    for (int i = 0; i < 3; ++i)
        if (a->all_passes || strcmp(v, names[i]) == 0)
            a->passes[a->pass_count++] = i;
    if (!a->pass_count)
        fprintf(stderr, "convgen: %s '%s' must be fprop, bprop, accgrad or all\n", o->name, v);
    return a->pass_count > 0;
}

/* A word of `words` (NULL-ended) into *out as its index, else an error listing them. */
static bool set_word(const cli_option *o, const char *v, const char *const *words, int *out)
{
    for (int i = 0; words[i]; ++i)
        if (strcmp(v, words[i]) == 0)
            return *out = i, true;
    fprintf(stderr, "convgen: %s '%s' must be one of:", o->name, v);
    for (int i = 0; words[i]; ++i)
        fprintf(stderr, " %s", words[i]);
    fprintf(stderr, "\n");
    return false;
}

static bool set_gemm(cli_args *a, const cli_option *o, const char *v)
{
    static const char *const words[] = {"cublas", "generated", "tensor", NULL};
    static const int kinds[] = {CONVGEN_GEMM_CUBLAS, CONVGEN_GEMM_GENERATED, CONVGEN_GEMM_TENSOR};
    int i;
    if (!set_word(o, v, words, &i))
        return false;
    a->options.gemm = kinds[i];
    return true;
}

static bool set_weights(cli_args *a, const cli_option *o, const char *v)
{
    static const char *const words[] = {"before", "inside", NULL};
    static const convgen_weights where[] = {CONVGEN_WEIGHTS_BEFORE, CONVGEN_WEIGHTS_INSIDE};
    int i;
    if (!set_word(o, v, words, &i))
        return false;
    a->options.weights = where[i];
    return true;
}

static bool set_effort(cli_args *a, const cli_option *o, const char *v)
{
    static const char *const words[] = {"measure", "estimate", "exhaustive", NULL};
    static const convgen_effort efforts[] = {CONVGEN_EFFORT_MEASURE, CONVGEN_EFFORT_ESTIMATE, CONVGEN_EFFORT_EXHAUSTIVE};
    int i;
    if (!set_word(o, v, words, &i))
        return false;
    a->options.effort = efforts[i];
    return true;
}

/* Each integer checked in range before it is narrowed to its field. */
static bool set_kernel(cli_args *a, const cli_option *o, const char *v)
{
    int64_t x;
    return cli_parse_int(o->name, v, -1, INT32_MAX, &x) && (a->kernel = (int)x, true);
}

static bool set_seed(cli_args *a, const cli_option *o, const char *v)
{
    int64_t x;
    return cli_parse_int(o->name, v, 0, UINT32_MAX, &x) && (a->seed = (unsigned)x, true);
}

static bool set_samples(cli_args *a, const cli_option *o, const char *v)
{
    int64_t x;
    return cli_parse_int(o->name, v, 0, LONG_MAX, &x) && (a->samples = (long)x, true);
}

static bool set_sms(cli_args *a, const cli_option *o, const char *v)
{
    int64_t x;
    return cli_parse_int(o->name, v, 1, MAX_SMS, &x) && (a->sm_count = (int)x, true);
}

static bool set_tf32(cli_args *a, const cli_option *o, const char *v)
{
    (void)o, (void)v;
    a->options.allow_tf32 = 1;
    return true;
}

static bool set_workspace_limit(cli_args *a, const cli_option *o, const char *v)
{
    int64_t x;
    return cli_parse_int(o->name, v, 0, INT64_MAX, &x) && (a->options.workspace_limit = (size_t)x, true);
}

/* --tile and --fourier: 0 leaves a dimension to the planner, as in convgen_plan_options (the
 * kernels' re-emit commands say "--tile 4x0" for a tile fixed along the first dimension only). */
static bool set_tuning_sizes(cli_args *a, const cli_option *o, const char *v)
{
    int64_t dims[CONVGEN_MAX_RANK];
    int given;
    if (!parse_sizes(o, v, 0, MAX_OPTION_SIZE, dims, &given))
        return false;
    for (int d = 0; d < given; ++d)
        if (strcmp(o->name, "--tile") == 0)
            a->options.winograd_m[d] = (int)dims[d];
        else
            a->options.fourier_size[d] = dims[d];
    return true;
}

/* --stride 2x1 and friends: one size per spatial dimension, or one for all. */
static bool set_layer_sizes(cli_args *a, const cli_option *o, const char *v)
{
    convgen_conv_desc *d = &a->layer.desc;
    int64_t dims[CONVGEN_MAX_RANK], *dst = strcmp(o->name, "--pad-before") == 0 ? d->pad_before
                                           : strcmp(o->name, "--pad-after") == 0 ? d->pad_after
                                           : strcmp(o->name, "--stride") == 0    ? d->stride
                                                                                 : d->dilation;
    int given;
    if (!parse_sizes(o, v, strncmp(o->name, "--pad", 5) == 0 ? 0 : 1, INT32_MAX, dims, &given))
        return false;
    if (given != 1 && given != d->rank) {
        fprintf(stderr, "convgen: %s '%s' must give 1 or %d sizes (the layer's dimensions)\n", o->name, v, d->rank);
        return false;
    }
    for (int i = 0; i < d->rank; ++i)
        dst[i] = dims[given == 1 ? 0 : i];
    return true;
}

static bool set_convolution(cli_args *a, const cli_option *o, const char *v)
{
    (void)o, (void)v;
    a->layer.desc.mode = CONVGEN_CONVOLUTION;
    return true;
}

/* --bias, --relu: the layer's epilogue bits. */
static bool set_epilogue(cli_args *a, const cli_option *o, const char *v)
{
    (void)v;
    a->layer.desc.epilogue |= strcmp(o->name, "--bias") == 0 ? CONVGEN_EPILOGUE_BIAS : CONVGEN_EPILOGUE_RELU;
    return true;
}

/* ---- the table ---- */

#define F(field) offsetof(cli_args, field)

static const cli_option options[] = {
    {"--algo", "NAME", CLI_EMIT | CLI_COMPILE | CLI_CHECK, false, set_algo, 0,
     "direct (default: implicit GEMM, any layer); direct-window (fprop\n"
     "and bprop with up to 4 input channels, by sliding instead); cufft, fft,\n"
     "fft-tiled or fft-fused (stride 1: FFT convolution through cuFFT,\n"
     "through convgen's own FFTs, in overlap-save tiles, or in one kernel\n"
     "per tile); winograd (stride 1, kernels up to 7)\n"
     "or winograd-fused (the transforms inside the product kernel, kernels\n"
     "2 to 5 across the plane, 2-D and 3-D); auto (the fastest, from wisdom,\n"
     "timed on the GPU, or by the cost model offline: convgen tune and\n"
     "explain say how)"},
    {"--algo", "NAME", CLI_GENERATE, false, set_algo, 0,
     "every layer's algorithm where its line has no algo=NAME (default auto:\n"
     "the wisdom's choice for the architecture, else the cost model's)"},
    {"--pass", "PASS", LAYER_VERBS, false, set_pass, 0, "fprop, bprop, accgrad or all (default: emit fprop, else all)"},
    {"--kernel", "I", CLI_EMIT, false, set_kernel, 0, "print only the plan's kernel I (from 0; default: all)"},
    {"--arch", "sm_XX", CLI_COMPILE | CLI_TUNE | CLI_EXPLAIN, false, set_text, F(arch),
     "compile for it, offline (default: the GPU's, else sm_90)"},
    {"--arch", "sm_XX", CLI_EMIT, false, set_text, F(arch),
     "emit for its shared-memory and cluster limits (default sm_90's)"},
    {"--arch", "LIST", CLI_GENERATE, false, set_text, F(arch), "the architectures, like sm_80,sm_90 (default sm_90)"},
    {"--sms", "N", PLAN_VERBS & ~CLI_CHECK, false, set_sms, 0,
     "multiprocessors to size split reductions for, 1 to 65536\n"
     "(default: the GPU's, else 132)"},
    {"--gemm", "KIND", PLAN_VERBS, false, set_gemm, 0,
     "winograd's, fft's and fft-tiled's products: cublas, generated\n"
     "(convgen's own batched GEMM) or tensor (winograd's, every pass, on\n"
     "sm_90: convgen's GEMM in 3xTF32 on the tensor cores; fft's, sm_80 on:\n"
     "its generated GEMM by mma.sync in 3xTF32); default: winograd,\n"
     "tensor on sm_90 for 64 outputs and sums or more (3-D: 128) and accgrad\n"
     "with 32 channels a side, else generated for 33 to 64 output channels\n"
     "(3-D: to 127) over 1000 tiles;\n"
     "fft, generated; fft-tiled, cublas; direct: tensor (fprop and stride-1\n"
     "bprop of up to 32 taps, accgrad of up to 9, by mma.sync in 3xTF32,\n"
     "sm_80 on; on sm_90 fprop and bprop of rank 1-2 and up to 9 taps by\n"
     "wgmma, w's pieces made by a kernel before), else its FMA kernel"},
    {"--weights", "WHERE", PLAN_VERBS, false, set_weights, 0,
     "winograd-fused's weights' transforms, fprop and bprop: before (a\n"
     "kernel of their own, what convgen_prepare_weights runs once; the\n"
     "default) or inside (the fused kernel's blocks make them: one launch,\n"
     "nothing to prepare; not on sm_90's cluster kernel)"},
    {"--tile", "MxN", PLAN_VERBS, false, set_tuning_sizes, 0,
     "winograd: the output tile m of F(m, r) per dimension; 0 (and the\n"
     "default): chosen (winograd-fused on 3-D layers: 0 or 1 along the\n"
     "depth, e.g. 0x4x4)"},
    {"--fourier", "AxB", PLAN_VERBS, false, set_tuning_sizes, 0,
     "cufft: the transform size per dimension; 0 (and the default): the\n"
     "smallest that fits"},
    {"--tf32", NULL, PLAN_VERBS, false, set_tf32, 0, "the library GEMMs may use TF32 tensor cores (allow_tf32)"},
    {"--workspace-limit", "BYTES", PLAN_VERBS, false, set_workspace_limit, 0,
     "the plan's workspace cap: sub-batches, or an error (default 0: none)"},
    {"--effort", "LEVEL", PLAN_VERBS & ~CLI_EMIT, false, set_effort, 0,
     "auto: measure (default), estimate (the cost model, no timing) or\n"
     "exhaustive (every Winograd tile too)"},
    {"--no-cache", NULL, CLI_COMPILE | CLI_CHECK | CLI_TUNE | CLI_EXPLAIN, false, set_flag, F(no_cache),
     "skip the disk cache of compiled kernels"},
    {"--seed", "S", CLI_CHECK, false, set_seed, 0, "the random data's seed, 0 to 4294967295 (default 1)"},
    {"--samples", "N", CLI_CHECK, false, set_samples, 0,
     "output points checked (default: all where cheap, else 4096; 0: all)"},
    {"--set", "FILE", CLI_TUNE | CLI_GENERATE, false, set_text, F(set), "a layer file: each of its layers"},
    {"--wisdom", "FILE", CLI_TUNE, false, set_text, F(wisdom),
     "merge the measured winners into FILE (default $CONVGEN_WISDOM); a file\n"
     "that is not wisdom is never overwritten"},
    {"--wisdom", "FILE", CLI_EXPLAIN | CLI_GENERATE, false, set_text, F(wisdom),
     "the wisdom to choose by (explain: also $CONVGEN_WISDOM's)"},
    {"--csv", "FILE", CLI_TUNE, false, set_text, F(csv), "also write the candidates' table as CSV"},
    {"--out", "DIR", CLI_GENERATE, false, set_text, F(out_dir), "the folder of the emitted sources"},
    {"--cache", "DIR", CLI_GENERATE, false, set_text, F(cache_dir), "a disk cache of compiled kernels"},
    {"--embed", "FILE.c", CLI_GENERATE, false, set_text, F(embed), "the cubins and the wisdom as a kernel set in C"},
    {"--set-name", "NAME", CLI_GENERATE, false, set_text, F(set_name), "the --embed set's C name (default: FILE)"},
    {"--ninja", "FILE", CLI_GENERATE, false, set_text, F(ninja), "ninja's edges instead of compiling (the build's)"},
    {"--layers", "FILE", LAYER_VERBS, true, set_text, F(layers_file),
     "the file of layer names (default $CONVGEN_LAYERS, else the installed\n"
     "layers.txt, else the source tree's bench/layers.txt)"},
    {"--pad-before", "AxB", LAYER_VERBS, true, set_layer_sizes, 0, "padding before, per dimension (or one for all)"},
    {"--pad-after", "AxB", LAYER_VERBS, true, set_layer_sizes, 0, "padding after"},
    {"--stride", "AxB", LAYER_VERBS, true, set_layer_sizes, 0, "stride per dimension"},
    {"--dilation", "AxB", LAYER_VERBS, true, set_layer_sizes, 0, "dilation per dimension"},
    {"--convolution", NULL, LAYER_VERBS, true, set_convolution, 0, "a true convolution (the kernel flipped), not a correlation"},
    {"--bias", NULL, LAYER_VERBS, true, set_epilogue, 0, "fprop adds a bias per output channel as it stores y"},
    {"--relu", NULL, LAYER_VERBS, true, set_epilogue, 0, "fprop stores max(y, 0) (after the bias)"},
};

#define OPTION_COUNT (int)(sizeof options / sizeof options[0])

/* The option of that name for the verb (an option may read differently for one verb), else
 * the first of that name (which the verb then refuses), else NULL. */
static const cli_option *option_named(const char *name, unsigned verb)
{
    const cli_option *any = NULL;
    for (int i = 0; i < OPTION_COUNT; ++i)
        if (strcmp(options[i].name, name) == 0) {
            if (options[i].verbs & verb)
                return &options[i];
            any = any ? any : &options[i];
        }
    return any;
}

/* ---- usage ---- */

static void print_option(FILE *f, const cli_option *o)
{
    char head[40];
    snprintf(head, sizeof head, "%s%s%s", o->name, o->value ? " " : "", o->value ? o->value : "");
    fprintf(f, "  %-18s ", head);
    for (const char *p = o->help; *p; ++p)
        if (*p == '\n')
            fprintf(f, "\n%21s", "");
        else
            fputc(*p, f);
    fputc('\n', f);
}

void cli_print_options(const cli_verb *verb, FILE *f)
{
    fprintf(f, "Options:\n");
    for (int i = 0; i < OPTION_COUNT; ++i)
        if ((options[i].verbs & verb->bit) && !options[i].layer_option)
            print_option(f, &options[i]);
    fprintf(f, "  %-18s this text\n", "-h, --help");
    if (!verb->takes_layer)
        return;
    fprintf(f, "\nA layer is written like a line of bench/layers.txt, or by its name in that file:\n"
               "  [name] n c k input kernel pad stride      e.g.  L2 128 64 64 64x64 9x9 0 1\n"
               "and these options say what a line cannot:\n");
    for (int i = 0; i < OPTION_COUNT; ++i)
        if ((options[i].verbs & verb->bit) && options[i].layer_option)
            print_option(f, &options[i]);
}

int cli_usage(const cli_verb *verb, FILE *f)
{
    fprintf(f, "usage: convgen %s %s\n", verb->name, verb->synopsis);
    if (verb->about)
        fprintf(f, "%s\n", verb->about);
    cli_print_options(verb, f);
    return f == stdout ? 0 : 2;
}

/* ---- did you mean ---- */

/* Levenshtein distance, for words of up to 63 characters (more: far from everything). */
static int edit_distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 1 << 20;
    int row[64];
    for (size_t j = 0; j <= m; ++j)
        row[j] = (int)j;
    for (size_t i = 1; i <= n; ++i) {
        int diagonal = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= m; ++j) {
            int up = row[j], best = diagonal + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diagonal = up, row[j] = best;
        }
    }
    return row[m];
}

const char *cli_nearest(const char *word, const char *const *names, int count)
{
    const char *best = NULL;
    int best_distance = 4, len = (int)strlen(word); /* ninja's limit: 3 edits */
    for (int i = 0; i < count; ++i) {
        int d = edit_distance(word, names[i]);
        if (d < best_distance && d < len)
            best = names[i], best_distance = d;
    }
    return best;
}

/* "unknown option" or "does not apply", naming the nearest option that does. */
static void unknown_option(const cli_verb *verb, const char *name)
{
    const char *names[OPTION_COUNT];
    int count = 0;
    for (int i = 0; i < OPTION_COUNT; ++i)
        if (options[i].verbs & verb->bit)
            names[count++] = options[i].name;
    const cli_option *o = option_named(name, verb->bit);
    const char *near = o ? NULL : cli_nearest(name, names, count);
    if (o)
        fprintf(stderr, "convgen %s: %s does not apply to %s", verb->name, name, verb->name);
    else
        fprintf(stderr, "convgen %s: unknown option '%s'", verb->name, name);
    if (near)
        fprintf(stderr, "; did you mean '%s'?", near);
    fprintf(stderr, " ('convgen %s --help' lists its options)\n", verb->name);
}

/* ---- the layer ---- */

bool cli_skip_pass(const cli_args *a, convgen_pass pass, convgen_status s, bool as_comment)
{
    if (!a->all_passes || s != CONVGEN_ERROR_NOT_SUPPORTED)
        return false;
    printf(as_comment ? "/* %s: not supported: %s */\n" : "%-8s not supported: %s\n", convgen_pass_name(pass),
           convgen_last_error());
    return true;
}

int cli_fail(const char *what, convgen_status s)
{
    fprintf(stderr, "convgen: %s: %s: %s\n", what, convgen_status_string(s), convgen_last_error());
    const char *log = convgen_last_compile_log();
    if (s == CONVGEN_ERROR_COMPILE && *log)
        fprintf(stderr, "NVRTC log:\n%s\n", log);
    return 1;
}

const char *cli_layers_file(const cli_args *a)
{
    return cli_layers_file_for(a->layers_file);
}

static bool lookup_layer(cli_args *a, const char *name)
{
    cg_layer *layers;
    int count;
    convgen_status s = cg_layer_read_file(cli_layers_file(a), &layers, &count);
    if (s != CONVGEN_SUCCESS) {
        cli_fail("reading layers", s);
        return false;
    }
    for (int i = 0; i < count; ++i)
        if (strcmp(layers[i].name, name) == 0) {
            a->layer = layers[i];
            free(layers);
            return true;
        }
    free(layers);
    fprintf(stderr, "convgen: no layer named '%s' in %s\n", name, cli_layers_file(a));
    return false;
}

static bool parse_layer(cli_args *a, const char **words, int count)
{
    if (count == 1)
        return lookup_layer(a, words[0]);
    int used;
    convgen_status s = cg_layer_parse_words(words, count, &a->layer, &used);
    if (s != CONVGEN_SUCCESS) {
        cli_fail("layer", s);
        return false;
    }
    if (used != count) {
        fprintf(stderr, "convgen: unexpected word '%s' after the layer\n", words[used]);
        return false;
    }
    return true;
}

/* ---- parsing ---- */

#define MAX_WORDS 32
#define MAX_LAYER_OPTIONS 16

typedef struct parsed {
    const char *words[MAX_WORDS];
    int word_count;
    const cli_option *layer_options[MAX_LAYER_OPTIONS];
    const char *layer_values[MAX_LAYER_OPTIONS];
    int layer_option_count;
} parsed;

/* One option at argv[*i] (its value after it): set now, or kept for the layer. */
static bool take_option(const cli_verb *verb, int argc, char **argv, int *i, cli_args *a, parsed *p)
{
    const char *name = argv[*i];
    const cli_option *o = option_named(name, verb->bit);
    if (!o || !(o->verbs & verb->bit)) {
        unknown_option(verb, name);
        return false;
    }
    if (o->value && *i + 1 == argc) {
        fprintf(stderr, "convgen %s: %s needs a value (%s)\n", verb->name, name, o->value);
        return false;
    }
    const char *v = o->value ? argv[++*i] : NULL;
    if (!o->layer_option || o->set == set_text) /* --layers is listed with them, needed before */
        return o->set(a, o, v);
    if (p->layer_option_count == MAX_LAYER_OPTIONS) {
        fprintf(stderr, "convgen %s: more than %d layer options\n", verb->name, MAX_LAYER_OPTIONS);
        return false;
    }
    p->layer_options[p->layer_option_count] = o;
    p->layer_values[p->layer_option_count++] = v;
    return true;
}

static bool apply_layer_options(cli_args *a, const parsed *p)
{
    for (int i = 0; i < p->layer_option_count; ++i)
        if (!p->layer_options[i]->set(a, p->layer_options[i], p->layer_values[i]))
            return false;
    return true;
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    return false;
}

bool cli_parse(int argc, char **argv, const cli_verb *verb, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->kernel = -1;
    a->seed = 1;
    a->samples = -1;
    set_pass(a, option_named("--pass", verb->bit), verb->default_pass_all ? "all" : "fprop");
    if ((a->help = wants_help(argc, argv)))
        return true;
    parsed p = {0};
    for (int i = 0; i < argc; ++i) {
        if (strncmp(argv[i], "--", 2) == 0) {
            if (!take_option(verb, argc, argv, &i, a, &p))
                return false;
        } else if (p.word_count == MAX_WORDS || !verb->takes_layer) {
            fprintf(stderr, "convgen %s: unexpected word '%s'\n", verb->name, argv[i]);
            return false;
        } else {
            p.words[p.word_count++] = argv[i];
        }
    }
    if (p.word_count == 0)
        return true;
    a->have_layer = parse_layer(a, p.words, p.word_count) && apply_layer_options(a, &p);
    if (a->have_layer && a->layer.desc.epilogue && a->all_passes) /* a bias and ReLU are fprop's */
        a->pass_count = 1, a->passes[0] = CONVGEN_FPROP;
    return a->have_layer;
}
