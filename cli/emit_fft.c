/* convgen emit --algo fft: the source of a batched FFT plan's kernels, from options that fill a
 * convgen_fft_desc field by field. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"
#include "layer.h"
#include "args.h"
#include "verbs.h"

/* What the options fill: the plan's description and which kernel to print. */
typedef struct fft_args {
    convgen_fft_desc d;
    int kernel;
    bool rank_given;
} fft_args;

typedef struct fft_option {
    const char *name, *value, *help;
    bool (*set)(fft_args *f, const char *option, const char *v);
} fft_option;

static bool set_algo(fft_args *f, const char *option, const char *v)
{
    (void)f;
    bool fft = strcmp(v, "fft") == 0;
    if (!fft)
        fprintf(stderr, "convgen: emit: %s '%s' with --n: a batched FFT is --algo fft\n", option, v);
    return fft;
}

static bool set_type(fft_args *f, const char *option, const char *v)
{
    static const struct { const char *name; convgen_fft_type type; int dir; } types[] = {
        {"r2c", CONVGEN_FFT_R2C, 0}, {"c2r", CONVGEN_FFT_C2R, 0},
        {"c2c-forward", CONVGEN_FFT_C2C, CONVGEN_FFT_FORWARD}, {"c2c-inverse", CONVGEN_FFT_C2C, CONVGEN_FFT_INVERSE}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(v, types[i].name) == 0) {
            f->d.type = types[i].type, f->d.direction = (convgen_fft_direction)types[i].dir;
            return true;
        }
    fprintf(stderr, "convgen: %s '%s' must be r2c, c2r, c2c-forward or c2c-inverse\n", option, v);
    return false;
}

/* Each integer checked in range before it is narrowed to its field. */
static bool set_rank(fft_args *f, const char *option, const char *v)
{
    int64_t x;
    return cli_parse_int(option, v, 1, 3, &x) && (f->d.rank = (int)x, f->rank_given = true);
}

static bool set_n(fft_args *f, const char *option, const char *v)
{
    int64_t x;
    return cli_parse_int(option, v, 2, 256, &x) && (f->d.n = (int)x, true);
}

static bool set_count(fft_args *f, const char *option, const char *v)
{
    int64_t *dst = strcmp(option, "--batch") == 0       ? &f->d.batch
                   : strcmp(option, "--pitch") == 0       ? &f->d.pitch
                   : strcmp(option, "--plane-pitch") == 0 ? &f->d.plane_pitch
                                                          : &f->d.channels;
    return cli_parse_int(option, v, 1, INT64_MAX, dst);
}

static bool set_kernel(fft_args *f, const char *option, const char *v)
{
    int64_t x;
    return cli_parse_int(option, v, -1, INT32_MAX, &x) && (f->kernel = (int)x, true);
}

/* "W", "HxW" or "DxHxW": sizes outermost first, each from 0 to 1024, into three ints. */
static bool set_dims(fft_args *f, const char *option, const char *v)
{
    int *out = strcmp(option, "--window") == 0 ? f->d.window : f->d.offset;
    int64_t dims[CONVGEN_MAX_RANK];
    int r = cg_parse_dims(v, dims);
    bool ok = r >= 1 && r <= 3;
    for (int i = 0; ok && i < r; ++i)
        ok = dims[i] <= 1024;
    if (!ok) {
        fprintf(stderr, "convgen: %s '%s' must be W, HxW or DxHxW, sizes from 0 to 1024\n", option, v);
        return false;
    }
    for (int i = 0; i < 3; ++i)
        out[i] = i < r ? (int)dims[i] : 0;
    return true;
}

/* "BxC": elements between batch entries and between channels (0: packed). */
static bool set_strides(fft_args *f, const char *option, const char *v)
{
    int64_t *out = strcmp(option, "--real-stride") == 0 ? f->d.real_stride : f->d.spectrum_stride;
    int64_t dims[CONVGEN_MAX_RANK];
    if (cg_parse_dims(v, dims) != 2 || dims[0] < 0 || dims[1] < 0) {
        fprintf(stderr, "convgen: %s '%s' must be BxC: elements between batch entries x between channels\n", option, v);
        return false;
    }
    out[0] = dims[0], out[1] = dims[1];
    return true;
}

static bool set_word(fft_args *f, const char *option, const char *v)
{
    bool layout = strcmp(option, "--layout") == 0;
    const char *zero = "natural", *one = layout ? "transposed" : "reversed";
    if (strcmp(v, zero) != 0 && strcmp(v, one) != 0) {
        fprintf(stderr, "convgen: %s '%s' must be %s or %s\n", option, v, zero, one);
        return false;
    }
    if (layout)
        f->d.layout = strcmp(v, one) == 0 ? CONVGEN_FFT_LAYOUT_TRANSPOSED : CONVGEN_FFT_LAYOUT_NATURAL;
    else
        f->d.order = strcmp(v, one) == 0 ? CONVGEN_FFT_ORDER_DIGIT_REVERSED : CONVGEN_FFT_ORDER_NATURAL;
    return true;
}

/* 0 would mean 1 (convgen_fft_desc's "unscaled"): refused, as a scale that underflows to 0. */
static bool set_scale(fft_args *f, const char *option, const char *v)
{
    double x;
    if (!cli_parse_float(option, v, -FLT_MAX, FLT_MAX, &x))
        return false;
    if ((float)x == 0.0f) {
        fprintf(stderr, "convgen: %s '%s' must not be 0 (leave it out for no scaling)\n", option, v);
        return false;
    }
    f->d.scale = (float)x;
    return true;
}

static const fft_option options[] = {
    {"--algo", "fft", "a batched FFT plan (with --n)", set_algo},
    {"--type", "T", "r2c (default), c2r, c2c-forward or c2c-inverse", set_type},
    {"--rank", "R", "1, 2 or 3 (default 2; c2c: 1)", set_rank},
    {"--n", "N", "size of every dimension: 2^a 3^b 5^c 7^d in 2..256 (rank 3: ..64)", set_n},
    {"--batch", "B", "transforms (default 1)", set_count},
    {"--channels", "C", "B x C transforms (default 1)", set_count},
    {"--window", "HxW", "the real window (rank 1: W; rank 3: DxHxW), default the whole signal", set_dims},
    {"--offset", "YxX", "where the window sits in the signal (rank 3: ZxYxX; default 0)", set_dims},
    {"--pitch", "P", "real elements between window rows (default W)", set_count},
    {"--plane-pitch", "P", "rank 3: real elements between window planes (default H x pitch)", set_count},
    {"--real-stride", "BxC", "elements between batch entries x channels, signal side (default packed)", set_strides},
    {"--spectrum-stride", "BxC", "the same on the spectrum side (complex values)", set_strides},
    {"--layout", "L", "natural or transposed (rank 2 spectra, rank 3's planes)", set_word},
    {"--order", "O", "natural or reversed (digit-reversed) along the n-bin axis", set_word},
    {"--scale", "S", "multiply outputs by S (default 1)", set_scale},
    {"--kernel", "I", "print only kernel I (rank 3 has two: planes and depth, in the order they run)", set_kernel},
};

#define OPTION_COUNT (int)(sizeof options / sizeof options[0])

static int usage(void)
{
    printf("usage: convgen emit --algo fft --n N [options]\n"
           "Prints the CUDA source of a batched FFT plan's kernels (convgen_plan_fft). With a LAYER\n"
           "instead of --n, --algo fft is the FFT convolution ('convgen emit --help').\n"
           "Options:\n");
    for (int i = 0; i < OPTION_COUNT; ++i) {
        char head[32];
        snprintf(head, sizeof head, "%s %s", options[i].name, options[i].value);
        printf("  %-18s %s\n", head, options[i].help);
    }
    printf("  %-18s this text\n", "-h, --help");
    return 0;
}

static const fft_option *option_named(const char *name)
{
    const char *names[OPTION_COUNT];
    for (int i = 0; i < OPTION_COUNT; ++i) {
        if (strcmp(name, options[i].name) == 0)
            return &options[i];
        names[i] = options[i].name;
    }
    const char *near = cli_nearest(name, names, OPTION_COUNT);
    fprintf(stderr, "convgen: emit --algo fft: unknown option '%s'%s%s%s\n", name, near ? "; did you mean '" : "",
            near ? near : "", near ? "'?" : "");
    return NULL;
}

static bool parse(int argc, char **argv, fft_args *f)
{
    *f = (fft_args){.d = {.rank = 2, .type = CONVGEN_FFT_R2C, .batch = 1}, .kernel = -1};
    for (int i = 0; i < argc; ++i) {
        const fft_option *o = option_named(argv[i]);
        if (!o)
            return false;
        if (i + 1 == argc) {
            fprintf(stderr, "convgen: emit --algo fft: %s needs a value (%s)\n", argv[i], o->value);
            return false;
        }
        if (!o->set(f, argv[i], argv[i + 1]))
            return false;
        ++i;
    }
    if (!f->rank_given && f->d.type == CONVGEN_FFT_C2C)
        f->d.rank = 1;
    return true;
}

int cli_emit_fft(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage();
    fft_args f;
    if (!parse(argc, argv, &f))
        return 2;
    convgen_fft_desc d = f.d;
    int kernel = f.kernel;
    for (int i = kernel < 0 ? 0 : kernel;; ++i) {
        char *src;
        convgen_status s = convgen_emit_fft(&d, i, &src);
        if (s != CONVGEN_SUCCESS && i > 0 && kernel < 0 && strstr(convgen_last_error(), "kernel index"))
            return 0; /* printed them all */
        if (s != CONVGEN_SUCCESS)
            return cli_fail("emit", s);
        fputs(src, stdout);
        free(src);
        if (kernel >= 0)
            return 0;
    }
}
