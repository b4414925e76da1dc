/* convgen infer: a network file applied densely to a volume on the GPU (convgen_net_*): the
 * plan (--explain), and the throughput in output voxels per second over --runs runs, on a
 * random volume and random weights unless files are given. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "layer.h"
#include "net/net.h"
#include "reference.h"
#include "util.h"
#include "verbs.h"

static int usage(void)
{
    printf("usage: convgen infer FILE --volume DxHxW [options]\n"
           "Runs a network file (bench/nets/) over a volume of DxHxW voxels (HxW: rank 2), an output\n"
           "at every voxel whose field of view lies inside, patch by patch on the GPU, and prints the\n"
           "throughput in output voxels per second.\n"
           "Options:\n"
           "  --m DxHxW        each final fragment's extent (default: the least time for the volume\n"
           "                   as --effort finds it, in device mode among the patches whose tensors\n"
           "                   fit half the memory; a patch larger than the volume runs past its\n"
           "                   edge, zeros there)\n"
           "  --memory MIB     device memory the network may use (default: 90%% of the free)\n"
           "  --mode M         where a patch's tensors live: auto (default: the faster by the cost\n"
           "                   model), device (the whole patch on the GPU), host (pinned host memory,\n"
           "                   the network in segments run a chunk at a time: patches larger than\n"
           "                   the GPU's memory)\n"
           "  --host-memory MIB  pinned host memory the host mode's tensors may take (default: a\n"
           "                   quarter of the machine's)\n"
           "  --effort E       how each layer's algorithm and the patch are chosen: measure (default;\n"
           "                   the cost model's best patches timed, the fastest kept as wisdom, see\n"
           "                   $CONVGEN_WISDOM), estimate (the cost model's), exhaustive\n"
           "  --in FILE        the volume, raw little-endian fp32 [C][D][H][W] (default: random)\n"
           "  --weights FILE   every convolution's w [K][C][kernel] then bias [K], in layer order, raw\n"
           "                   little-endian fp32 (default: random, uniform in +-sqrt(6 / fan-in), biases a tenth)\n"
           "  --out FILE       the dense output, raw fp32 [K][D - fov + 1][H - fov + 1][W - fov + 1]\n"
           "  --runs N         timed runs (default 3)\n"
           "  --warmup N       untimed runs before them, 0..64 (default 1)\n"
           "  --explain        print the plan: patch, each layer's tensor and algorithm, memory\n"
           "  --profile        after the runs, time each step of one patch alone (host mode:\n"
           "                   each segment)\n");
    return 0;
}

/* `count` floats of a raw file into v; false, saying why, where it holds another number. */
static bool read_floats(const char *path, float *v, int64_t count)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(v, sizeof *v, (size_t)count, f) : 0;
    bool exact = f && got == (size_t)count && fgetc(f) == EOF;
    if (f)
        fclose(f);
    if (!exact)
        fprintf(stderr, "convgen: infer: %s must hold exactly %lld floats\n", path, (long long)count);
    return exact;
}

typedef struct infer_args {
    const char *net, *in, *out, *weights;
    int64_t volume[CONVGEN_MAX_RANK], m[CONVGEN_MAX_RANK];
    int volume_rank, m_rank, runs, warmup;
    convgen_net_options o;
    bool explain, profile;
} infer_args;

static bool parse(int argc, char **argv, infer_args *a)
{
    *a = (infer_args){.runs = 3, .warmup = 1};
    for (int i = 0; i < argc; ++i) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(o, "--explain") == 0 || strcmp(o, "--profile") == 0) {
            *(o[2] == 'e' ? &a->explain : &a->profile) = true;
            continue;
        }
        if (strncmp(o, "--", 2) != 0) {
            if (a->net)
                return fprintf(stderr, "convgen: infer: one network file, not '%s' too\n", o), false;
            a->net = o;
            continue;
        }
        if (!v)
            return fprintf(stderr, "convgen: infer: %s needs a value\n", o), false;
        ++i;
        int64_t x = 0;
        if (strcmp(o, "--volume") == 0 && !(a->volume_rank = cg_parse_dims(v, a->volume)))
            return fprintf(stderr, "convgen: infer: --volume '%s' must be DxHxW\n", v), false;
        else if (strcmp(o, "--m") == 0 && !(a->m_rank = cg_parse_dims(v, a->m)))
            return fprintf(stderr, "convgen: infer: --m '%s' must be DxHxW\n", v), false;
        else if (strcmp(o, "--memory") == 0 && !cg_parse_integer(v, 1, (int64_t)1 << 40, &x))
            return fprintf(stderr, "convgen: infer: --memory '%s' must be MiB, 1 to 2^40\n", v), false;
        else if (strcmp(o, "--memory") == 0)
            a->o.memory_limit = (size_t)x << 20;
        else if (strcmp(o, "--host-memory") == 0 && !cg_parse_integer(v, 1, (int64_t)1 << 40, &x))
            return fprintf(stderr, "convgen: infer: --host-memory '%s' must be MiB, 1 to 2^40\n", v), false;
        else if (strcmp(o, "--host-memory") == 0)
            a->o.host_memory_limit = (size_t)x << 20;
        else if (strcmp(o, "--mode") == 0) {
            static const char *const modes[] = {"auto", "device", "host"};
            a->o.mode = -1;
            for (int m = 0; m < 3; ++m)
                if (strcmp(v, modes[m]) == 0)
                    a->o.mode = m;
            if (a->o.mode < 0)
                return fprintf(stderr, "convgen: infer: --mode '%s' must be auto, device or host\n", v), false;
        } else if (strcmp(o, "--effort") == 0) {
            static const char *const words[] = {"measure", "estimate", "exhaustive"};
            int e = 0;
            while (e < 3 && strcmp(v, words[e]) != 0)
                ++e;
            if (e == 3)
                return fprintf(stderr, "convgen: infer: --effort '%s' must be measure, estimate or exhaustive\n", v),
                       false;
            a->o.effort = e; /* CONVGEN_EFFORT_MEASURE, _ESTIMATE, _EXHAUSTIVE in that order */
        } else if (strcmp(o, "--warmup") == 0 && !cg_parse_integer(v, 0, 64, &x))
            return fprintf(stderr, "convgen: infer: --warmup '%s' must be 0..64\n", v), false;
        else if (strcmp(o, "--warmup") == 0)
            a->warmup = (int)x;
        else if (strcmp(o, "--runs") == 0 && !cg_parse_integer(v, 1, 64, &x))
            return fprintf(stderr, "convgen: infer: --runs '%s' must be 1..64\n", v), false;
        else if (strcmp(o, "--runs") == 0)
            a->runs = (int)x;
        else if (strcmp(o, "--volume") == 0 || strcmp(o, "--m") == 0)
            continue;
        else if (strcmp(o, "--in") == 0)
            a->in = v;
        else if (strcmp(o, "--out") == 0)
            a->out = v;
        else if (strcmp(o, "--weights") == 0)
            a->weights = v;
        else
            return fprintf(stderr, "convgen: infer: unknown option '%s' ('convgen infer --help')\n", o), false;
    }
    if (!a->net || a->volume_rank < 2 || a->runs < 1)
        return fprintf(stderr, "convgen: infer: needs a network file and --volume DxHxW (runs >= 1)\n"), false;
    memcpy(a->o.fragment, a->m, sizeof a->m);
    memcpy(a->o.volume, a->volume, sizeof a->volume); /* the patch is chosen for it */
    return true;
}

/* Every convolution's weights from the file, in layer order: w, then its bias. */
static bool load_weights(convgen_net *exe, const cg_net *net, const char *path)
{
    int64_t total = 0;
    for (int i = 0; i < net->count; ++i)
        total += cg_net_weight_count(net, i) ? cg_net_weight_count(net, i) + net->layers[i].k : 0;
    float *all = malloc(sizeof *all * (size_t)total), *at = all;
    bool ok = all && read_floats(path, all, total);
    for (int i = 0; ok && i < net->count; ++i) {
        int64_t count = cg_net_weight_count(net, i);
        if (!count)
            continue;
        ok = convgen_net_set_weights(exe, i, at, at + count) == CONVGEN_SUCCESS;
        at += count + net->layers[i].k;
    }
    free(all);
    return ok;
}

/* The runs' median seconds; false where a run failed. */
static bool time_runs(convgen_net *exe, const infer_args *a, const float *x, float *y, double *median)
{
    double t[64];
    int runs = a->runs; /* 1..64 (parse) */
    for (int r = -a->warmup; r < runs; ++r) { /* runs below 0: the warm-up */
        double start = cg_now_s();
        if (convgen_net_infer(exe, x, a->volume, y, NULL) != CONVGEN_SUCCESS)
            return fprintf(stderr, "convgen: infer: %s\n", convgen_last_error()), false;
        if (r >= 0)
            t[r] = cg_now_s() - start;
    }
    *median = cg_median(t, runs);
    return true;
}

int cli_infer(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage();
    infer_args a;
    cg_net net;
    if (!parse(argc, argv, &a))
        return 2;
    char *text = cg_read_file(a.net, 1u << 20, NULL); /* a network file: a few dozen lines */
    if (!text || cg_net_parse(text, &net) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: infer: %s: %s%s\n", a.net, text ? "" : "cannot read it: ",
                text ? convgen_last_error() : cg_read_error(errno));
        free(text);
        return 2;
    }
    if (a.volume_rank != net.rank || (a.m_rank && a.m_rank != net.rank)) {
        fprintf(stderr, "convgen: infer: --volume%s must have the network's rank, %d\n", a.m_rank ? " and --m" : "",
                net.rank);
        free(text);
        return 2;
    }
    convgen_context *ctx;
    convgen_net *exe = NULL;
    if (cli_open_context(NULL, false, true, 0, &ctx) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: infer: %s\n", convgen_last_error());
        free(text);
        return 1;
    }
    if (convgen_net_create(ctx, text, &a.o, &exe) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen: infer: %s\n", convgen_last_error());
        free(text);
        convgen_context_destroy(ctx);
        return 1;
    }
    free(text);
    int64_t fov[3], in_n = net.c, out_n = net.layers[net.count - 1].k, voxels = 1;
    cg_net_field_of_view(&net, fov);
    for (int d = 0; d < a.volume_rank; ++d) {
        in_n *= a.volume[d];
        voxels *= a.volume[d] - fov[3 - a.volume_rank + d] + 1;
    }
    out_n *= voxels;
    float *x = malloc(sizeof *x * (size_t)in_n), *y = malloc(sizeof *y * (size_t)(out_n > 0 ? out_n : 1));
    int rc = x && y ? 0 : 1;
    if (rc)
        fprintf(stderr, "convgen: infer: out of host memory for the volume and its output\n");
    if (rc == 0 && a.explain) {
        char *plan;
        if (convgen_net_explain(exe, &plan) == CONVGEN_SUCCESS)
            printf("%s: %s", a.net, plan), free(plan);
    }
    uint64_t state = 12345;
    if (rc == 0 && a.in)
        rc = read_floats(a.in, x, in_n) ? 0 : 1;
    else if (rc == 0)
        cg_fill_random(x, in_n, &state);
    if (rc == 0 && a.weights)
        rc = load_weights(exe, &net, a.weights) ? 0 : 1;
    double median = 0;
    if (rc == 0)
        rc = time_runs(exe, &a, x, y, &median) ? 0 : 1;
    if (rc == 0)
        printf("%s on %s: %lld output voxels in %.4f s (median of %d): %.4g voxels/s\n", a.net,
               convgen_context_device_name(ctx), (long long)voxels, median, a.runs, (double)voxels / median);
    if (rc == 0 && a.profile) {
        char *steps;
        convgen_status ps = convgen_net_profile(exe, &steps);
        if (ps == CONVGEN_SUCCESS)
            printf("%s: %s", a.net, steps), free(steps);
        else /* a host-mode plan has no steps to time alone: said, and the run stands */
            fprintf(stderr, "convgen: infer: --profile: %s\n", convgen_last_error());
        rc = ps == CONVGEN_SUCCESS || ps == CONVGEN_ERROR_NOT_SUPPORTED ? 0 : 1;
    }
    if (rc == 0 && a.out) {
        FILE *f = fopen(a.out, "wb");
        rc = f && fwrite(y, sizeof *y, (size_t)out_n, f) == (size_t)out_n ? 0 : 1;
        if (f)
            fclose(f);
        if (rc)
            fprintf(stderr, "convgen: infer: cannot write %s\n", a.out);
    }
    free(x), free(y);
    convgen_net_destroy(exe);
    convgen_context_destroy(ctx);
    return rc;
}
