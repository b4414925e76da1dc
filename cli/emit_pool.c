/* convgen emit --pool MODE: the source of a pooling plan's kernel (convgen_emit_pool), from
 * options that fill a convgen_pool_desc. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "convgen.h"
#include "layer.h"
#include "verbs.h"

static int usage(void)
{
    printf("usage: convgen emit --pool MODE --in DxHxW --window DxHxW [--n N] [--c C]\n"
           "Prints the CUDA source of a pooling plan's kernel (convgen_plan_pool).\n"
           "Options:\n"
           "  --pool MODE        max (max pooling), fragments (ZNNi's max-pooling fragments) or\n"
           "                     interleave (fragments of --in back into dense volumes)\n"
           "  --in DxHxW         the input's extent (HxW: rank 2)\n"
           "  --window DxHxW     the window, also the stride, 1..8 a dimension (as many as --in)\n"
           "  --n N              batch entries (default 1)\n"
           "  --c C              channels (default 1)\n"
           "  -h, --help         this text\n");
    return 0;
}

/* "95x95x95" into positive extents, outermost first (cg_parse_dims); how many (0: malformed). */
static int parse_extents(const char *option, const char *v, int64_t out[3])
{
    int n = cg_parse_dims(v, out);
    for (int i = 0; i < n; ++i)
        n = out[i] >= 1 ? n : 0;
    if (!n)
        fprintf(stderr, "convgen: emit: %s '%s' must be DxHxW or HxW of positive integers\n", option, v);
    return n;
}

static bool parse(int argc, char **argv, convgen_pool_desc *d)
{
    int64_t in[3], window[3], x;
    int in_rank = 0, window_rank = 0;
    *d = (convgen_pool_desc){.n = 1, .c = 1, .mode = -1};
    for (int i = 0; i < argc; i += 2) {
        if (i + 1 == argc) {
            fprintf(stderr, "convgen: emit --pool: %s needs a value\n", argv[i]);
            return false;
        }
        const char *o = argv[i], *v = argv[i + 1];
        if (strcmp(o, "--pool") == 0 && (strcmp(v, "max") == 0 || strcmp(v, "fragments") == 0 ||
                                         strcmp(v, "interleave") == 0))
            d->mode = strcmp(v, "max") == 0 ? CONVGEN_POOL_MAX
                      : strcmp(v, "fragments") == 0 ? CONVGEN_POOL_FRAGMENTS : CONVGEN_POOL_INTERLEAVE;
        else if (strcmp(o, "--in") == 0)
            in_rank = parse_extents(o, v, in);
        else if (strcmp(o, "--window") == 0)
            window_rank = parse_extents(o, v, window);
        else if ((strcmp(o, "--n") == 0 || strcmp(o, "--c") == 0) && cli_parse_int(o, v, 1, (int64_t)1 << 40, &x))
            *(o[2] == 'n' ? &d->n : &d->c) = x;
        else {
            fprintf(stderr, "convgen: emit --pool: '%s %s': unknown option or bad value ('convgen emit --pool --help')\n",
                    o, v);
            return false;
        }
        if ((strcmp(o, "--in") == 0 && !in_rank) || (strcmp(o, "--window") == 0 && !window_rank))
            return false;
    }
    if (d->mode < 0 || !in_rank || in_rank != window_rank || in_rank < 2) {
        fprintf(stderr, "convgen: emit --pool: needs --pool max|fragments|interleave, and --in and --window of one "
                        "rank, 2 or 3\n");
        return false;
    }
    d->rank = in_rank;
    for (int i = 0; i < in_rank; ++i)
        d->in[i] = in[i], d->window[i] = window[i] > 64 ? 65 : (int)window[i]; /* the library names a bad window */
    return true;
}

int cli_emit_pool(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage();
    convgen_pool_desc d;
    if (!parse(argc, argv, &d))
        return 2;
    char *src;
    convgen_status s = convgen_emit_pool(&d, &src);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("emit", s);
    fputs(src, stdout);
    free(src);
    return 0;
}
