#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "layers_file.h"

const char cli_layer_usage[] =
    "A layer is written like a line of bench/layers.txt, or by its name in that file:\n"
    "  [name] n c k input kernel pad stride      e.g.  L2 128 64 64 64x64 9x9 0 1\n"
    "  options for what a line cannot say:\n"
    "    --pad-before AxB  --pad-after AxB  --stride AxB  --dilation AxB  --convolution\n"
    "    --layers FILE     the file for names (default $CONVGEN_LAYERS, else the installed layers.txt,\n"
    "                      else the source tree's bench/layers.txt)\n"
    "Common options:\n"
    "  --algo NAME        direct (default); cufft, fft, fft-tiled or fft-fused (stride 1: FFT\n"
    "                     convolution through cuFFT, through convgen's own FFTs, in overlap-save\n"
    "                     tiles, or in one kernel per tile); winograd (stride 1, kernels up to 7)\n"
    "                     or winograd-fused (the transforms inside the product kernel, kernels\n"
    "                     2 to 5); auto (the fastest, from wisdom, timed on the GPU, or by\n"
    "                     the cost model offline: convgen tune and explain say how)\n"
    "  --pass PASS        fprop, bprop, accgrad or all\n"
    "  --sms N            multiprocessors to size split reductions for (default: the GPU's, else 132)\n"
    "  --gemm KIND        winograd's, fft's and fft-tiled's products: cublas or generated\n"
    "                     (convgen's own batched GEMM); default: winograd, generated for 33 to\n"
    "                     64 output channels over 1000 tiles; fft, generated; fft-tiled, cublas\n"
    "  --tile MxN         winograd: the output tile m of F(m, r) per dimension (default: chosen)\n"
    "  --fourier AxB      cufft: the transform size per dimension (default: the smallest that fits)\n"
    "  --effort LEVEL     auto: measure (default), estimate (the cost model, no timing) or\n"
    "                     exhaustive (every Winograd tile too)\n";

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

static bool set_pass(cli_args *a, const char *v)
{
    static const char *const names[] = {"fprop", "bprop", "accgrad"};
    a->pass_count = 0;
    a->all_passes = strcmp(v, "all") == 0;
    for (int i = 0; i < 3; ++i)
        if (strcmp(v, "all") == 0 || strcmp(v, names[i]) == 0)
            a->passes[a->pass_count++] = i;
    if (!a->pass_count)
        fprintf(stderr, "convgen: --pass '%s' must be fprop, bprop, accgrad or all\n", v);
    return a->pass_count > 0;
}

/* --stride 2x1 and friends: one value per spatial dimension, or one for all. */
static bool set_dims(int64_t *dst, const char *option, const char *v, int rank)
{
    int64_t dims[CONVGEN_MAX_RANK];
    int r = cg_parse_dims(v, dims);
    if (r != 1 && r != rank) {
        fprintf(stderr, "convgen: %s '%s' must give 1 or %d sizes like 1x2\n", option, v, rank);
        return false;
    }
    for (int i = 0; i < rank; ++i)
        dst[i] = dims[r == 1 ? 0 : i];
    return true;
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

typedef struct extra_option { const char *name, *value; } extra_option;

/* Layer options apply once the layer (and so its rank) is known. */
static bool apply_layer_options(cli_args *a, const extra_option *opts, int count)
{
    convgen_conv_desc *d = &a->layer.desc;
    for (int i = 0; i < count; ++i) {
        const char *n = opts[i].name, *v = opts[i].value;
        bool ok = strcmp(n, "--convolution") == 0 ? (d->mode = CONVGEN_CONVOLUTION, true)
                  : strcmp(n, "--pad-before") == 0 ? set_dims(d->pad_before, n, v, d->rank)
                  : strcmp(n, "--pad-after") == 0  ? set_dims(d->pad_after, n, v, d->rank)
                  : strcmp(n, "--stride") == 0     ? set_dims(d->stride, n, v, d->rank)
                                                   : set_dims(d->dilation, n, v, d->rank);
        if (!ok)
            return false;
    }
    return true;
}

static bool needs_value(const char *o)
{
    static const char *const with_value[] = {"--algo", "--pass", "--kernel", "--arch", "--set", "--out",
                                             "--layers", "--seed", "--samples", "--sms", "--pad-before",
                                             "--pad-after", "--stride", "--dilation", "--gemm",
                                             "--effort", "--wisdom", "--csv", "--tile", "--fourier",
                                             "--cache", "--embed", "--ninja"};
    for (size_t i = 0; i < sizeof with_value / sizeof with_value[0]; ++i)
        if (strcmp(o, with_value[i]) == 0)
            return true;
    return false;
}

static bool set_option(cli_args *a, const char *o, const char *v)
{
    if (strcmp(o, "--algo") == 0 && strcmp(v, "auto") == 0)
        return a->algo = CONVGEN_ALGO_AUTO, true;
    if (strcmp(o, "--tile") == 0 || strcmp(o, "--fourier") == 0) {
        int64_t dims[CONVGEN_MAX_RANK] = {0};
        int rank = cg_parse_dims(v, dims);
        for (int d = 0; d < rank; ++d)
            rank = dims[d] >= 1 && dims[d] <= 1 << 20 ? rank : 0;
        if (rank == 0) {
            fprintf(stderr, "convgen: %s '%s' must be sizes like 4x4\n", o, v);
            return false;
        }
        for (int d = 0; d < rank; ++d)
            if (o[2] == 't')
                a->options.winograd_m[d] = (int)dims[d];
            else
                a->options.fourier_size[d] = dims[d];
        return true;
    }
    if (strcmp(o, "--effort") == 0) {
        a->options.effort = strcmp(v, "measure") == 0      ? CONVGEN_EFFORT_MEASURE
                            : strcmp(v, "estimate") == 0   ? CONVGEN_EFFORT_ESTIMATE
                            : strcmp(v, "exhaustive") == 0 ? CONVGEN_EFFORT_EXHAUSTIVE
                                                           : -1;
        if (a->options.effort < 0)
            fprintf(stderr, "convgen: --effort '%s' is not measure, estimate or exhaustive\n", v);
        return a->options.effort >= 0;
    }
    if (strcmp(o, "--algo") == 0) {
        const cg_planner *p = cg_planner_named(v);
        if (!p)
            fprintf(stderr, "convgen: --algo '%s' is not an algorithm (direct)\n", v);
        return p && (a->algo = p->algo, true);
    }
    if (strcmp(o, "--pass") == 0)
        return set_pass(a, v);
    if (strcmp(o, "--gemm") == 0) {
        a->options.gemm = strcmp(v, "cublas") == 0      ? CONVGEN_GEMM_CUBLAS
                          : strcmp(v, "generated") == 0 ? CONVGEN_GEMM_GENERATED
                                                        : -1;
        if (a->options.gemm < 0)
            fprintf(stderr, "convgen: --gemm '%s' is not cublas or generated\n", v);
        return a->options.gemm >= 0;
    }
    char *end;
    if (strcmp(o, "--kernel") == 0 || strcmp(o, "--seed") == 0 || strcmp(o, "--samples") == 0 ||
        strcmp(o, "--sms") == 0) {
        long x = strtol(v, &end, 10);
        if (*end || end == v || x < 0) {
            fprintf(stderr, "convgen: %s '%s' must be a non-negative integer\n", o, v);
            return false;
        }
        if (strcmp(o, "--kernel") == 0)
            a->kernel = (int)x;
        else if (strcmp(o, "--seed") == 0)
            a->seed = (unsigned)x;
        else if (strcmp(o, "--sms") == 0)
            a->sm_count = (int)x;
        else
            a->samples = x;
        return true;
    }
    const char **dst = strcmp(o, "--arch") == 0 ? &a->arch : strcmp(o, "--set") == 0 ? &a->set
                       : strcmp(o, "--out") == 0 ? &a->out_dir : strcmp(o, "--wisdom") == 0 ? &a->wisdom
                       : strcmp(o, "--csv") == 0 ? &a->csv : strcmp(o, "--cache") == 0 ? &a->cache_dir
                       : strcmp(o, "--embed") == 0 ? &a->embed : strcmp(o, "--ninja") == 0 ? &a->ninja
                                                   : &a->layers_file;
    *dst = v;
    return true;
}

bool cli_parse(int argc, char **argv, bool default_pass_all, cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->kernel = -1;
    a->seed = 1;
    a->samples = -1;
    set_pass(a, default_pass_all ? "all" : "fprop");
    const char *words[32];
    extra_option extras[16];
    int nwords = 0, nextras = 0;
    for (int i = 0; i < argc; ++i) {
        const char *o = argv[i];
        if (strcmp(o, "-h") == 0 || strcmp(o, "--help") == 0) {
            a->help = true;
        } else if (strcmp(o, "--no-cache") == 0) {
            a->no_cache = true;
        } else if (strcmp(o, "--convolution") == 0) {
            if (nextras == 16) {
                fprintf(stderr, "convgen: too many layer options\n");
                return false;
            }
            extras[nextras++] = (extra_option){o, NULL};
        } else if (o[0] == '-' && o[1] == '-') {
            if (!needs_value(o) || i + 1 == argc) {
                fprintf(stderr, "convgen: %s option '%s'\n", needs_value(o) ? "missing the value of" : "unknown", o);
                return false;
            }
            const char *v = argv[++i];
            bool layer_option = strncmp(o, "--pad", 5) == 0 || strcmp(o, "--stride") == 0 || strcmp(o, "--dilation") == 0;
            if (layer_option && nextras == 16) {
                fprintf(stderr, "convgen: too many layer options\n");
                return false;
            }
            if (layer_option)
                extras[nextras++] = (extra_option){o, v};
            else if (!set_option(a, o, v))
                return false;
        } else if (nwords == 32) {
            fprintf(stderr, "convgen: too many words: '%s'\n", o);
            return false;
        } else {
            words[nwords++] = o;
        }
    }
    if (a->help || nwords == 0)
        return true;
    a->have_layer = parse_layer(a, words, nwords) && apply_layer_options(a, extras, nextras);
    return a->have_layer;
}
