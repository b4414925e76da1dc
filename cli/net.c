/* convgen net: a network file's planning arithmetic, on any machine (generator/net/net.c): the
 * field of view, the input patch whose max-pooling fragments drop no voxel, and each layer's
 * tensor and memory for that patch: what the executor (convgen infer) plans with. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "layer.h"
#include "net/net.h"
#include "util.h"
#include "verbs.h"

#define NET_FILE_MAX (1u << 20) /* a network file: a few dozen lines */

static int usage(void)
{
    printf("usage: convgen net FILE [--m DxHxW]\n"
           "Prints a network file's arithmetic: its field of view, the input patch whose final\n"
           "max-pooling fragments are m voxels a side (default 1; HxW for a rank 2 network) and\n"
           "its dense output, then each layer's tensor for that patch (batch entries, the pooling\n"
           "fragments among them, x channels x extent) and its bytes in fp32. Nothing runs on a GPU.\n"
           "A network file: 'input C', then a layer a line, 'conv K DxHxW [relu]' or 'pool DxHxW'\n"
           "(bench/nets/ has ZNNi's four).\n");
    return 0;
}

/* "DxHxW" (rank 3) or "HxW" (rank 2, depth 1) of positive integers into m (cg_parse_dims). */
static bool parse_m(const char *v, int rank, int64_t m[3])
{
    int64_t x[CONVGEN_MAX_RANK];
    int n = cg_parse_dims(v, x);
    for (int i = 0; i < n; ++i)
        n = x[i] >= 1 ? n : 0;
    if (n != rank) {
        fprintf(stderr, "convgen: net: --m '%s' must be %s of positive integers\n", v, rank == 3 ? "DxHxW" : "HxW");
        return false;
    }
    m[0] = rank == 3 ? x[0] : 1, m[1] = x[rank - 2], m[2] = x[rank - 1];
    return true;
}

static void print_extent(const cg_net *net, const int64_t e[3])
{
    if (net->rank == 3)
        printf("%lldx%lldx%lld", (long long)e[0], (long long)e[1], (long long)e[2]);
    else
        printf("%lldx%lld", (long long)e[1], (long long)e[2]);
}

static void print_plan(const cg_net *net, const cg_net_patch *patch)
{
    int64_t fov[3], peak = 0;
    cg_net_field_of_view(net, fov);
    printf("rank %d, %lld input channel%s, %d layers\nfield of view: ", net->rank, (long long)net->c,
           net->c > 1 ? "s" : "", net->count);
    print_extent(net, fov);
    printf("\npatch: input ");
    print_extent(net, patch->in);
    printf(", dense output ");
    print_extent(net, patch->out);
    printf(" (final fragments ");
    print_extent(net, patch->m);
    printf(")\n\n| layer | what | batch x channels x extent | MiB |\n| ---: | --- | --- | ---: |\n");
    for (int i = 0; i <= net->count; ++i) {
        const cg_net_tensor *t = &patch->shape[i];
        double bytes = 4.0 * (double)t->batch * (double)t->c * (double)(t->ext[0] * t->ext[1] * t->ext[2]);
        const cg_net_layer *L = i ? &net->layers[i - 1] : NULL;
        printf("| %d | ", i);
        if (!L)
            printf("input");
        else if (L->kind == CG_NET_CONV)
            printf("conv %lld %dx%dx%d%s", (long long)L->k, L->size[0], L->size[1], L->size[2], L->relu ? " relu" : "");
        else
            printf("pool %dx%dx%d (fragments)", L->size[0], L->size[1], L->size[2]);
        printf(" | %lld x %lld x ", (long long)t->batch, (long long)t->c);
        print_extent(net, t->ext);
        printf(" | %.1f |\n", bytes / (1 << 20));
        if (i) { /* a layer holds its input and its output at once */
            const cg_net_tensor *u = &patch->shape[i - 1];
            double in = 4.0 * (double)u->batch * (double)u->c * (double)(u->ext[0] * u->ext[1] * u->ext[2]);
            peak = in + bytes > peak ? (int64_t)(in + bytes) : peak;
        }
    }
    printf("\nlargest layer input + output: %.1f MiB (weights and workspace not counted)\n", (double)peak / (1 << 20));
}

int cli_net(int argc, char **argv)
{
    const char *file = NULL, *m_text = NULL;
    for (int i = 0; i < argc; ++i) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage();
        if (strcmp(argv[i], "--m") == 0 && i + 1 < argc)
            m_text = argv[++i];
        else if (argv[i][0] == '-' || file) {
            fprintf(stderr, "convgen: net: '%s': %s ('convgen net --help')\n", argv[i],
                    argv[i][0] == '-' ? "unknown option, or one without its value" : "one network file only");
            return 2;
        } else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "convgen: net: which network file? ('convgen net --help')\n");
        return 2;
    }
    char *text = cg_read_file(file, NET_FILE_MAX, NULL);
    if (!text) {
        fprintf(stderr, "convgen: net: cannot read '%s': %s\n", file, cg_read_error(errno));
        return 1;
    }
    cg_net net;
    convgen_status s = cg_net_parse(text, &net);
    free(text);
    if (s != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: net: %s: %s\n", file, convgen_last_error());
        return 1;
    }
    int64_t m[3] = {1, 1, 1};
    if (m_text && !parse_m(m_text, net.rank, m))
        return 2;
    cg_net_patch patch;
    if ((s = cg_net_patch_of(&net, m, &patch)) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: net: %s: %s\n", file, convgen_last_error());
        return 1;
    }
    print_plan(&net, &patch);
    return 0;
}
