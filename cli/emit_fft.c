/* convgen emit --algo fft: the source of a batched FFT plan's kernels, from options that fill a
 * convgen_fft_desc field by field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"
#include "layer.h"
#include "args.h"
#include "verbs.h"

static int usage(void)
{
    printf("usage: convgen emit --algo fft --n N [options]\n"
           "Prints the CUDA source of a batched FFT plan's kernels (convgen_plan_fft).\n"
           "  --type T          r2c (default), c2r, c2c-forward or c2c-inverse\n"
           "  --rank R          1 or 2 (default 2; c2c: 1)\n"
           "  --n N             size of every dimension: 2^a 3^b 5^c 7^d in 2..256\n"
           "  --batch B         transforms (default 1); --channels C: B x C transforms\n"
           "  --window HxW      the real window (rank 1: W), default the whole signal\n"
           "  --offset YxX      where the window sits in the signal (default 0)\n"
           "  --pitch P         real elements between window rows (default W)\n"
           "  --real-stride BxC, --spectrum-stride BxC\n"
           "                    elements between batch entries and between channels on the signal\n"
           "                    and the spectrum side (default packed)\n"
           "  --layout L        natural or transposed (rank 2 spectra)\n"
           "  --order O         natural or reversed (digit-reversed) along the n-bin axis\n"
           "  --scale S         multiply outputs by S (default 1)\n"
           "  --kernel I        print only kernel I (rank 2 n = 256 has two)\n");
    return 0;
}

static bool set_type(convgen_fft_desc *d, const char *v)
{
    static const struct { const char *name; convgen_fft_type type; int dir; } types[] = {
        {"r2c", CONVGEN_FFT_R2C, 0}, {"c2r", CONVGEN_FFT_C2R, 0},
        {"c2c-forward", CONVGEN_FFT_C2C, CONVGEN_FFT_FORWARD}, {"c2c-inverse", CONVGEN_FFT_C2C, CONVGEN_FFT_INVERSE}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(v, types[i].name) == 0) {
            d->type = types[i].type, d->direction = (convgen_fft_direction)types[i].dir;
            return true;
        }
    fprintf(stderr, "convgen: --type '%s' must be r2c, c2r, c2c-forward or c2c-inverse\n", v);
    return false;
}

/* "HxW" (or "W"): sizes outermost first, into two ints. */
static bool set_pair(int out[2], const char *option, const char *v)
{
    int64_t dims[CONVGEN_MAX_RANK];
    int r = cg_parse_dims(v, dims);
    if (r < 1 || r > 2 || dims[0] > 1024 || (r == 2 && dims[1] > 1024)) {
        fprintf(stderr, "convgen: %s '%s' must be N or HxW\n", option, v);
        return false;
    }
    out[0] = (int)dims[0], out[1] = r == 2 ? (int)dims[1] : 0;
    return true;
}

/* "BxC": the strides between batch entries and between channels. */
static bool set_strides(int64_t out[2], const char *option, const char *v)
{
    int64_t dims[CONVGEN_MAX_RANK];
    if (cg_parse_dims(v, dims) != 2) {
        fprintf(stderr, "convgen: %s '%s' must be BxC (elements between batch entries x between channels)\n", option,
                v);
        return false;
    }
    out[0] = dims[0], out[1] = dims[1];
    return true;
}

static bool set_word(int *out, const char *option, const char *v, const char *zero, const char *one)
{
    if (strcmp(v, zero) == 0 || strcmp(v, one) == 0) {
        *out = strcmp(v, one) == 0;
        return true;
    }
    fprintf(stderr, "convgen: %s '%s' must be %s or %s\n", option, v, zero, one);
    return false;
}

static bool parse(int argc, char **argv, convgen_fft_desc *d, int *kernel, bool *help)
{
    *d = (convgen_fft_desc){.rank = 2, .type = CONVGEN_FFT_R2C, .batch = 1};
    *kernel = -1;
    int layout = 0, order = 0;
    bool rank_given = false;
    for (int i = 0; i < argc; ++i) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool ok = true;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            *help = true;
            continue;
        }
        if (!v || strncmp(a, "--", 2) != 0) {
            fprintf(stderr, "convgen: emit --algo fft: '%s' %s\n", a, v ? "is not an option" : "needs a value");
            return false;
        }
        ++i;
        if (strcmp(a, "--algo") == 0)
            ok = strcmp(v, "fft") == 0;
        else if (strcmp(a, "--type") == 0)
            ok = set_type(d, v);
        else if (strcmp(a, "--rank") == 0)
            d->rank = atoi(v), rank_given = true;
        else if (strcmp(a, "--n") == 0)
            d->n = atoi(v);
        else if (strcmp(a, "--batch") == 0)
            d->batch = atoll(v);
        else if (strcmp(a, "--channels") == 0)
            d->channels = atoll(v);
        else if (strcmp(a, "--window") == 0)
            ok = set_pair(d->window, a, v);
        else if (strcmp(a, "--offset") == 0)
            ok = set_pair(d->offset, a, v);
        else if (strcmp(a, "--real-stride") == 0)
            ok = set_strides(d->real_stride, a, v);
        else if (strcmp(a, "--spectrum-stride") == 0)
            ok = set_strides(d->spectrum_stride, a, v);
        else if (strcmp(a, "--pitch") == 0)
            d->pitch = atoll(v);
        else if (strcmp(a, "--layout") == 0)
            ok = set_word(&layout, a, v, "natural", "transposed");
        else if (strcmp(a, "--order") == 0)
            ok = set_word(&order, a, v, "natural", "reversed");
        else if (strcmp(a, "--scale") == 0)
            d->scale = strtof(v, NULL);
        else if (strcmp(a, "--kernel") == 0)
            *kernel = atoi(v);
        else {
            fprintf(stderr, "convgen: emit --algo fft: unknown option '%s'\n", a);
            return false;
        }
        if (!ok)
            return false;
    }
    if (!rank_given && d->type == CONVGEN_FFT_C2C)
        d->rank = 1;
    d->layout = (convgen_fft_layout)layout;
    d->order = (convgen_fft_order)order;
    return true;
}

int cli_emit_fft(int argc, char **argv)
{
    convgen_fft_desc d;
    int kernel;
    bool help = false;
    if (!parse(argc, argv, &d, &kernel, &help))
        return 2;
    if (help)
        return usage();
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
