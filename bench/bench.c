/* convgen-bench: every convgen algorithm against cuDNN (strict fp32 and TF32) on the layers of
 * a layer file, three passes, in one run on one GPU; plus the device's ceilings and the JIT
 * figures. Prints a Markdown table and writes it with a CSV under --out. */
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <ftw.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "bench_report.h"
#include "cache.h"
#include "fft/fft_plan.h"
#include "generate.h"
#include "layer.h"
#include "layers_file.h"
#include "problem.h"
#include "reference.h"
#include "tune.h"
#include "wisdom.h"

typedef struct options {
    const char *layers_file, *out_dir;
    const char *algos; /* --algo: a comma-separated list of algorithms to run (NULL: every one) */
    const char *tile;  /* --tile: winograd's and winograd-fused's F(m, r), m per dimension (NULL: chosen) */
    const char *names[64];
    int name_count, runs;
    bool no_cudnn, fft, pool, net, tf32;
    int cube; /* --cube: the side of --net's volumes */
    int fft_rank, fft_n; /* --fft-rank, --fft-n: only these real FFT rows (0: all) */
    int graph_configs;   /* --cudnn-graph N: cuDNN graph API configurations tried per pass (0: none) */
} options;

static int usage(int rc)
{
    printf("usage: convgen bench [--layers FILE] [--out DIR] [--runs N] [--no-cudnn] [--cudnn-graph N] [--tf32]\n"
           "       [--algo NAME,...] [--tile MxN] [--fft [--fft-rank R] [--fft-n N]] [--pool] [--net [--cube N]]\n"
           "       [NAME...]\n"
           "Times every convgen algorithm that supports each layer against cuDNN's best algorithm\n"
           "(strict fp32 and TF32 allowed), three passes, each output checked against float64 (below).\n"
           "NAMEs pick layers of FILE (default: every 2-D layer of it; FILE\n"
           "defaults to $CONVGEN_LAYERS, else the installed layers.txt, else the source tree's\n"
           "bench/layers.txt, as for the other verbs). --out DIR writes bench.md and bench.csv\n"
           "there, creating DIR (and its parents) if needed. Runs: median of N\n"
           "(default 25, at least 20) after warm-up. --fft times the generated FFTs against cuFFT\n"
           "instead of the layers; --fft-rank and --fft-n keep only the R2C/C2R rows of that rank\n"
           "or size (any 2^a 3^b 5^c 7^d of 2..256; rank 3 from 16 to 64; the 1-D C2C table\n"
           "skipped), e.g. to profile one kernel. --pool times the\n"
           "generated max pooling and max-pooling fragments against cuDNN's pooling (the fragments:\n"
           "once per offset of the window, ZNNi's baseline) instead of the layers. --net runs ZNNi's\n"
           "networks (NAMEs: n337 n537 n726 n926 of bench/nets, default all) over random cubes of\n"
           "--cube N voxels a side (default 384) through convgen_net_infer, against ZNNi's cuDNN\n"
           "baseline and cuDNN's dense (dilated) form; whole volumes take 3 + runs / 10 runs. --tf32 adds rows\n"
           "\"<algorithm>, tf32\" for the FFT algorithms whose products are cuBLAS GEMMs, planned with\n"
           "allow_tf32 (TF32 tensor cores), to compare with cuDNN's TF32 column. --algo keeps\n"
           "only the convgen algorithms named (e.g. winograd,direct); cuDNN's rows stay. --tile MxN\n"
           "plans winograd and winograd-fused with the output tile m of F(m, r) per dimension (as\n"
           "convgen's --tile; 0: chosen), on the layers of that rank, their rows named with it\n"
           "(outside the algorithms' geomeans, which count the rows of each algorithm's own tiles).\n"
           "cuDNN's time is the faster of its legacy API (cudnnFind...AlgorithmEx) and its graph\n"
           "API (the engine configurations of heuristics modes A and FALLBACK and every engine by\n"
           "index, at most N a pass, default 64; --cudnn-graph 0: legacy only), in strict fp32 and\n"
           "with TF32 allowed. Every row's output is checked against the float64 reference at\n"
           "sampled points; a convgen row counts in the geomeans only within 1e-4 of it.\n");
    return rc;
}

/* An integer option's value, whole and in range (one parser with the convgen CLI's). */
static bool int_value(const char *option, const char *text, int64_t min, int64_t max, int *out)
{
    int64_t x;
    if (!cg_parse_integer(text, min, max, &x)) {
        fprintf(stderr, "convgen-bench: %s '%s' must be an integer from %lld to %lld\n", option, text, (long long)min,
                (long long)max);
        return false;
    }
    *out = (int)x;
    return true;
}

static bool parse(int argc, char **argv, options *o)
{
    *o = (options){.runs = 25, .graph_configs = 64, .cube = 384};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        if (strcmp(a, "--layers") == 0 && has_value)
            o->layers_file = argv[++i];
        else if (strcmp(a, "--out") == 0 && has_value)
            o->out_dir = argv[++i];
        else if (strcmp(a, "--runs") == 0 && has_value) {
            if (!int_value(a, argv[++i], 20, 100000, &o->runs))
                return false;
        } else if (strcmp(a, "--cudnn-graph") == 0 && has_value) {
            if (!int_value(a, argv[++i], 0, 256, &o->graph_configs))
                return false;
        }
        else if (strcmp(a, "--no-cudnn") == 0)
            o->no_cudnn = true;
        else if (strcmp(a, "--fft") == 0)
            o->fft = true;
        else if (strcmp(a, "--pool") == 0)
            o->pool = true;
        else if (strcmp(a, "--net") == 0)
            o->net = true;
        else if (strcmp(a, "--cube") == 0 && has_value) {
            if (!int_value(a, argv[++i], 16, 2048, &o->cube))
                return false;
        }
        else if (strcmp(a, "--tf32") == 0)
            o->tf32 = true;
        else if (strcmp(a, "--algo") == 0 && has_value)
            o->algos = argv[++i];
        else if (strcmp(a, "--tile") == 0 && has_value)
            o->tile = argv[++i];
        else if (strcmp(a, "--fft-rank") == 0 && has_value) {
            if (!int_value(a, argv[++i], 1, 3, &o->fft_rank))
                return false;
        } else if (strcmp(a, "--fft-n") == 0 && has_value) {
            if (!int_value(a, argv[++i], 2, 256, &o->fft_n))
                return false;
            if (!fft_size_supported(o->fft_n)) {
                fprintf(stderr, "convgen-bench: --fft-n %d: convgen's FFTs take 2^a 3^b 5^c 7^d points\n", o->fft_n);
                return false;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "convgen-bench: unknown option '%s', or one without its value ('--help' lists them)\n", a);
            return false;
        } else if (o->name_count == 64) {
            fprintf(stderr, "convgen-bench: more than 64 layer names\n");
            return false;
        }
        else
            o->names[o->name_count++] = a;
    }
    for (const char *at = o->algos; at && *at;) { /* every name must be an algorithm */
        size_t len = strcspn(at, ",");
        char name[32] = "";
        if (len < sizeof name)
            memcpy(name, at, len);
        if (!cg_planner_named(name) && strcmp(name, "auto") != 0) {
            fprintf(stderr, "convgen-bench: --algo: '%.*s' is no algorithm\n", (int)len, at);
            return false;
        }
        at += len + (at[len] == ',');
    }
    if (o->tile) { /* sizes for some rank; each layer takes it where its rank matches */
        cg_tuning t;
        int rank = 1;
        while (rank <= CONVGEN_MAX_RANK && cg_tile_parse(o->tile, rank, &t) != CONVGEN_SUCCESS)
            ++rank;
        if (rank > CONVGEN_MAX_RANK) {
            fprintf(stderr, "convgen-bench: --tile '%s': give m per dimension joined by 'x', from 0 (chosen) to 12, "
                            "not all 0 (e.g. 6x6)\n", o->tile);
            return false;
        }
    }
    o->layers_file = cli_layers_file_for(o->layers_file);
    if (o->fft + o->pool + o->net > 1) {
        fprintf(stderr, "convgen-bench: --fft, --pool and --net are three benches: ask for one at a time\n");
        return false;
    }
    if (o->net && (o->algos || o->no_cudnn)) {
        fprintf(stderr, "convgen-bench: --net runs whole networks against cuDNN: it takes no --algo or --no-cudnn\n");
        return false;
    }
    if (o->pool && (o->name_count || o->algos || o->no_cudnn)) {
        fprintf(stderr, "convgen-bench: --pool times its own layers against cuDNN: it takes no layer names, --algo "
                        "or --no-cudnn\n");
        return false;
    }
    if (o->fft_rank < 0 || o->fft_rank > 3 || o->fft_n < 0 || o->fft_n > 256) {
        fprintf(stderr, "convgen-bench: --fft-rank must be 1, 2 or 3 and --fft-n in 2..256 (%d, %d given)\n", o->fft_rank,
                o->fft_n);
        return false;
    }
    return true;
}

static bool selected(const options *o, const cg_layer *l)
{
    if (o->name_count == 0)
        return l->desc.rank == 2;
    for (int i = 0; i < o->name_count; ++i)
        if (strcmp(o->names[i], l->name) == 0)
            return true;
    return false;
}

/* Every NAME must be a layer of the file: a misspelt one would otherwise bench nothing and
 * print an empty table. */
static bool names_found(const options *o, const cg_layer *layers, int count)
{
    bool ok = true;
    for (int i = 0; i < o->name_count; ++i) {
        int j = 0;
        while (j < count && strcmp(layers[j].name, o->names[i]) != 0)
            ++j;
        if (j == count) {
            fprintf(stderr, "convgen-bench: no layer named '%s' in %s\n", o->names[i], o->layers_file);
            ok = false;
        }
    }
    return ok;
}

/* mkdir -p: every missing folder of `path`; false (after a message) if one cannot be made. */
static bool make_dirs(const char *path)
{
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
        fprintf(stderr, "convgen-bench: --out: path too long\n");
        return false;
    }
    for (char *at = dir + 1;; ++at) {
        bool end = *at == '\0';
        if (*at != '/' && !end)
            continue;
        *at = '\0';
        struct stat st;
        if (mkdir(dir, 0777) != 0 && !(errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode))) {
            fprintf(stderr, "convgen-bench: cannot create the folder %s: %s\n", dir,
                    strerror(errno == EEXIST ? ENOTDIR : errno));
            return false;
        }
        if (end)
            return true;
        *at = '/';
    }
}

/* ---- buffers ---- */

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static float next_uniform(void)
{
    rng ^= rng >> 12, rng ^= rng << 25, rng ^= rng >> 27;
    return (float)((double)((rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static bool fill_random(float *dev, int64_t n)
{
    float *host = malloc(sizeof *host * (size_t)n);
    if (!host)
        return false;
    for (int64_t i = 0; i < n; ++i)
        host[i] = next_uniform();
    bool ok = bench_cuda_ok(cudaMemcpy(dev, host, sizeof *host * (size_t)n, cudaMemcpyHostToDevice), "fill");
    free(host);
    return ok;
}

static void free_buffers(bench_buffers *b)
{
    for (int s = 0; s < BENCH_MAX_SETS; ++s) {
        cudaFree(b->in0[s]);
        cudaFree(b->in1[s]);
        cudaFree(b->out[s]);
    }
    cudaFree(b->workspace);
    memset(b, 0, sizeof *b);
}

/* Enough buffer sets that one run's data is out of L2 by the time it comes round again. */
static bool alloc_buffers(const cg_problem *p, convgen_pass pass, bench_buffers *b)
{
    memset(b, 0, sizeof *b);
    cg_problem_operand_elems(p, pass, b->elems);
    b->sets = bench_sets_for(4.0 * (double)(b->elems[0] + b->elems[1] + b->elems[2]));
    for (int s = 0; s < b->sets; ++s) {
        float **dst[3] = {&b->in0[s], &b->in1[s], &b->out[s]};
        for (int i = 0; i < 3; ++i)
            if (!bench_cuda_ok(cudaMalloc((void **)dst[i], 4 * (size_t)b->elems[i]), "tensor allocation") ||
                (i < 2 && !fill_random(*dst[i], b->elems[i]))) {
                free_buffers(b);
                return false;
            }
    }
    return true;
}

/* ---- convgen ---- */

typedef struct convgen_state {
    convgen_plan *plan;
    bench_buffers *b;
    bool prepared; /* the weights' spectra are in the workspace: run the rest only */
} convgen_state;

static bool convgen_once(void *state, int set)
{
    convgen_state *c = state;
    bench_buffers *b = c->b;
    convgen_status s =
        c->prepared
            ? convgen_execute_prepared(c->plan, b->in0[set], b->out[set], b->workspace, b->workspace_bytes, NULL)
            : convgen_execute(c->plan, b->in0[set], b->in1[set], b->out[set], b->workspace, b->workspace_bytes, NULL);
    if (s != CONVGEN_SUCCESS)
        fprintf(stderr, "convgen-bench: execute: %s\n", convgen_last_error());
    return s == CONVGEN_SUCCESS;
}

static double relative_error(const float *got_dev, const float *ref_dev, int64_t n)
{
    float *got = malloc(4 * (size_t)n), *ref = malloc(4 * (size_t)n);
    double d2 = 0, r2 = 0;
    if (got && ref && bench_cuda_ok(cudaMemcpy(got, got_dev, 4 * (size_t)n, cudaMemcpyDeviceToHost), "copy") &&
        bench_cuda_ok(cudaMemcpy(ref, ref_dev, 4 * (size_t)n, cudaMemcpyDeviceToHost), "copy")) {
        for (int64_t i = 0; i < n; ++i) {
            double d = (double)got[i] - ref[i];
            d2 += d * d;
            r2 += (double)ref[i] * ref[i];
        }
    } else {
        d2 = NAN;
    }
    free(got);
    free(ref);
    return isnan(d2) ? INFINITY : sqrt(d2 / (r2 > 0 ? r2 : 1));
}

/* ---- accuracy against the float64 reference ---- */

/* The CPU reference at random output points of buffer set 0, to measure every implementation's
 * error against float64 (the accuracy target compares convgen's FFT algorithms with
 * cuDNN's). Points get fewer where one costs a long reduction (accgrad of L1: 1.8M multiply-adds). */
#define REFERENCE_POINTS 4096
#define REFERENCE_BUDGET 2e9 /* multiply-adds per layer and pass */

typedef struct reference_points {
    int count;
    int64_t index[REFERENCE_POINTS];
    double value[REFERENCE_POINTS];
} reference_points;

static bool make_reference_points(const cg_problem *p, convgen_pass pass, const bench_buffers *b, reference_points *rp)
{
    double length = cg_problem_reduction_length(p, pass);
    rp->count = length * REFERENCE_POINTS > REFERENCE_BUDGET ? (int)(REFERENCE_BUDGET / length) : REFERENCE_POINTS;
    rp->count = rp->count < 16 ? 16 : rp->count;
    float *in[2] = {malloc(4 * (size_t)b->elems[0]), malloc(4 * (size_t)b->elems[1])};
    bool ok = in[0] && in[1] &&
              bench_cuda_ok(cudaMemcpy(in[0], b->in0[0], 4 * (size_t)b->elems[0], cudaMemcpyDeviceToHost), "copy") &&
              bench_cuda_ok(cudaMemcpy(in[1], b->in1[0], 4 * (size_t)b->elems[1], cudaMemcpyDeviceToHost), "copy");
    uint64_t state = 0x5DEECE66Dull;
    for (int i = 0; ok && i < rp->count; ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        rp->index[i] = (int64_t)((state >> 16) % (uint64_t)b->elems[2]);
        rp->value[i] = ref_conv_at(p, pass, in[0], in[1], rp->index[i]);
    }
    free(in[0]);
    free(in[1]);
    return ok;
}

/* ||got - ref|| / ||ref|| over the points, got read point by point from device memory. */
static double reference_error(const reference_points *rp, const float *got_dev)
{
    double d2 = 0, r2 = 0;
    for (int i = 0; i < rp->count; ++i) {
        float got;
        if (!bench_cuda_ok(cudaMemcpy(&got, got_dev + rp->index[i], 4, cudaMemcpyDeviceToHost), "copy"))
            return NAN;
        double d = (double)got - rp->value[i];
        d2 += d * d;
        r2 += rp->value[i] * rp->value[i];
    }
    return isnan(d2) ? INFINITY : sqrt(d2 / (r2 > 0 ? r2 : 1));
}

static double layer_flops(const cg_layer *l)
{
    cg_problem p;
    return cg_problem_init(&p, &l->desc) == CONVGEN_SUCCESS ? cg_problem_flops(&p) : NAN;
}

/* Times the plan (median of o->runs after warm-up) and checks a run of buffer set 0. */
static void time_and_check(convgen_state *c, const float *reference, const reference_points *rp, const options *o,
                           bench_row *row)
{
    bench_buffers *b = c->b;
    row->ms = bench_median_ms(convgen_once, c, b->sets, 3, o->runs);
    if (row->ms > 0 && convgen_once(c, 0) && bench_cuda_ok(cudaDeviceSynchronize(), "check run")) {
        if (reference)
            row->rel_error = relative_error(b->out[0], reference, b->elems[2]);
        if (rp)
            row->ref_error = reference_error(rp, b->out[0]);
    }
}

/* The same plan on weights prepared once (buffer set 0's, which the reference used; every set
 * then runs on them): the row "<algorithm>, w once", for users whose weights stay. */
static void run_prepared(convgen_state *c, const float *reference, const reference_points *rp, const options *o,
                         bench_row row, bench_report *r)
{
    snprintf(row.algo + strlen(row.algo), sizeof row.algo - strlen(row.algo), ", w once");
    row.ms = -1, row.rel_error = row.ref_error = NAN;
    bench_buffers *b = c->b;
    if (convgen_prepare_weights(c->plan, b->in1[0], b->workspace, b->workspace_bytes, NULL) == CONVGEN_SUCCESS) {
        c->prepared = true;
        time_and_check(c, reference, rp, o, &row);
        c->prepared = false;
    } else {
        snprintf(row.note, sizeof row.note, "%s", convgen_last_error());
    }
    bench_report_add(r, &row);
}

/* Whether the context's GPU runs mma.sync's TF32 (sm_80 on): where it does not, fft's gemm=tensor
 * plans its FMA GEMM, which a "tensor-core GEMM" row would misname. */
static bool has_mma_tf32(convgen_context *ctx)
{
    int cc = 0;
    return sscanf(convgen_context_arch(ctx), "sm_%d", &cc) == 1 && cc >= 80;
}

/* A row's plan options beside the algorithm's defaults. */
typedef enum { PLAIN, TF32, OTHER_GEMM, TENSOR_GEMM, WEIGHTS_INSIDE, AUTO } variant;

/* Plans, times and checks one algorithm; appends its row, and a row on prepared weights where
 * the plan has weights to prepare (its own GEMM's or the tensor cores': direct's wgmma form has
 * them). Variants: "<algorithm>, tf32", the plan's GEMMs on TF32
 * tensor cores (allow_tf32), against cuDNN's TF32 column; "<algorithm>, generated GEMM",
 * winograd's products by convgen's own GEMM, and "fft, cuBLAS GEMM", fft's by cuBLAS's
 * (options.gemm: each algorithm's other GEMM); "winograd, tensor-core GEMM", winograd's products in
 * 3xTF32 on the tensor cores (gemm=tensor, sm_90), "fft, tensor-core GEMM", fft's complex GEMM there
 * (mma.sync, sm_80 on), and "direct, tensor-core GEMM", direct's implicit GEMM there (fprop,
 * stride-1 bprop, accgrad of up to 9 taps); "winograd-fused, weights inside", its fprop
 * and bprop with the weights' transforms made inside the fused kernel (weights=inside: one launch,
 * nothing to prepare); "auto (<winner>)", algorithm AUTO (pl NULL), which times the candidates
 * while planning. */
static void run_convgen(convgen_context *ctx, const cg_layer *l, convgen_pass pass, const cg_planner *pl, variant v,
                        bench_buffers *b, const float *reference, const reference_points *rp, const options *o,
                        bench_report *r)
{
    bool tf32 = v == TF32;
    bench_row row = {.pass = pass, .impl = "convgen", .ms = -1, .rel_error = NAN, .ref_error = NAN,
                     .flops = layer_flops(l)};
    snprintf(row.layer, sizeof row.layer, "%s", l->name);
    int other = pl && pl->algo == CONVGEN_ALGO_FFT ? CONVGEN_GEMM_CUBLAS : CONVGEN_GEMM_GENERATED;
    /* --tile: the Winograd algorithms' F(m, r), on the layers of its rank */
    bool tiled = o->tile && pl && (pl->algo == CONVGEN_ALGO_WINOGRAD || pl->algo == CONVGEN_ALGO_WINOGRAD_FUSED);
    cg_tuning tile = {0};
    if (tiled && cg_tile_parse(o->tile, l->desc.rank, &tile) != CONVGEN_SUCCESS)
        return; /* another rank's layer */
    snprintf(row.algo, sizeof row.algo, "%s%s%s%s", pl ? pl->name : "auto", tiled ? ", m " : "", tiled ? o->tile : "",
             tf32                             ? ", tf32"
             : v == TENSOR_GEMM               ? ", tensor-core GEMM"
             : v == WEIGHTS_INSIDE            ? ", weights inside"
             : v != OTHER_GEMM                ? ""
             : other == CONVGEN_GEMM_CUBLAS   ? ", cuBLAS GEMM"
                                              : ", generated GEMM");
    convgen_state c = {.b = b};
    convgen_plan_options opt = {.allow_tf32 = tf32,
                                .gemm = v == OTHER_GEMM ? other : v == TENSOR_GEMM ? CONVGEN_GEMM_TENSOR : 0,
                                .weights = v == WEIGHTS_INSIDE ? CONVGEN_WEIGHTS_INSIDE : 0};
    memcpy(opt.winograd_m, tile.winograd_m, sizeof opt.winograd_m);
    convgen_status s = convgen_plan_conv_ex(ctx, &l->desc, pass, pl ? pl->algo : CONVGEN_ALGO_AUTO, &opt, &c.plan);
    size_t ws = 0;
    convgen_choice choice;
    if (s == CONVGEN_SUCCESS && v == AUTO && convgen_plan_choice(c.plan, &choice) == CONVGEN_SUCCESS) {
        static const char *const how[] = {"", ", measured", ", from wisdom", ", estimated"};
        char chosen[96];
        tune_describe(choice.algo, &choice.options, l->desc.rank, chosen, sizeof chosen);
        snprintf(row.note, sizeof row.note, "auto chose %s%s", chosen, how[choice.chosen_by]);
    }
    if (s == CONVGEN_SUCCESS) {
        bench_report_jit_plan(r, c.plan);
        convgen_plan_workspace_size(c.plan, &ws);
        if (ws && !bench_cuda_ok(cudaMalloc(&b->workspace, ws), "workspace"))
            s = CONVGEN_ERROR_INSUFFICIENT_WORKSPACE;
        b->workspace_bytes = ws;
    }
    if (s == CONVGEN_SUCCESS)
        time_and_check(&c, reference, rp, o, &row);
    else if (s != CONVGEN_ERROR_NOT_SUPPORTED)
        snprintf(row.note, sizeof row.note, "%s", convgen_last_error());
    if (s != CONVGEN_ERROR_NOT_SUPPORTED)
        bench_report_add(r, &row);
    if (s == CONVGEN_SUCCESS && (v == PLAIN || v == TENSOR_GEMM) && convgen_plan_prepares_weights(c.plan))
        run_prepared(&c, reference, rp, o, row, r);
    cudaFree(b->workspace);
    b->workspace = NULL;
    convgen_plan_destroy(c.plan);
}

/* The row of cuDNN's winner for one math mode, with each API's best beside it. */
static void add_cudnn_row(bench_report *r, const cg_layer *l, convgen_pass pass, bool tf32, const bench_cudnn_pick *pk)
{
    const bench_cudnn_best *w = pk->winner == 1 ? &pk->graph : &pk->legacy;
    bool ran = pk->winner >= 0;
    bench_row row = {.pass = pass, .ms = ran ? w->ms : -1, .rel_error = NAN, .ref_error = ran ? w->ref_error : NAN,
                     .flops = layer_flops(l), .legacy_ms = pk->legacy.ok ? pk->legacy.ms : -1,
                     .graph_ms = pk->graph.ok ? pk->graph.ms : -1, .legacy_error = pk->legacy.ref_error,
                     .graph_error = pk->graph.ref_error};
    snprintf(row.layer, sizeof row.layer, "%s", l->name);
    snprintf(row.impl, sizeof row.impl, "%s", tf32 ? "cudnn-tf32" : "cudnn-fp32");
    if (ran)
        snprintf(row.algo, sizeof row.algo, "%s: %s", pk->winner == 1 ? "graph" : "legacy", w->algo);
    else
        snprintf(row.algo, sizeof row.algo, "-");
    snprintf(row.legacy_algo, sizeof row.legacy_algo, "%s", pk->legacy.ok ? pk->legacy.algo : pk->legacy.why);
    snprintf(row.graph_algo, sizeof row.graph_algo, "%s", pk->graph.ok ? pk->graph.algo : pk->graph.why);
    snprintf(row.graph_configs, sizeof row.graph_configs, "%s", pk->graph_summary);
    if (!ran)
        snprintf(row.note, sizeof row.note, "legacy: %.80s; %.100s", pk->legacy.why, pk->graph.why);
    bench_report_add(r, &row);
}

static double points_error(void *state, const float *out)
{
    return reference_error(state, out);
}

/* The algorithms whose products are cuBLAS GEMMs, which allow_tf32 moves to tensor cores. */
static bool uses_library_gemms(convgen_algo algo)
{
    return algo == CONVGEN_ALGO_CUFFT || algo == CONVGEN_ALGO_FFT || algo == CONVGEN_ALGO_FFT_TILED;
}

static void bench_layer_pass(convgen_context *ctx, bench_cudnn *dnn, const cg_layer *l, convgen_pass pass,
                             const options *o, bench_report *r)
{
    cg_problem p;
    bench_buffers b;
    if (cg_problem_init(&p, &l->desc) != CONVGEN_SUCCESS || !alloc_buffers(&p, pass, &b)) {
        fprintf(stderr, "convgen-bench: %s %s: skipped (%s)\n", l->name, convgen_pass_name(pass), convgen_last_error());
        return;
    }
    float *reference = NULL;
    reference_points *rp = malloc(sizeof *rp);
    if (rp && !make_reference_points(&p, pass, &b, rp)) {
        free(rp);
        rp = NULL;
    }
    if (dnn) {
        bench_cudnn_pick picks[2];
        if (!bench_cuda_ok(cudaMalloc((void **)&reference, 4 * (size_t)b.elems[2]), "reference"))
            reference = NULL;
        bench_cudnn_pass(dnn, &l->desc, pass, &b, o->runs, o->graph_configs, rp ? points_error : NULL, rp, reference,
                         picks);
        add_cudnn_row(r, l, pass, false, &picks[0]);
        add_cudnn_row(r, l, pass, true, &picks[1]);
        if (picks[0].winner < 0) {
            cudaFree(reference);
            reference = NULL;
        }
    }
    for (int i = 0; i < cg_planner_count(); ++i) {
        const cg_planner *pl = cg_planner_at(i);
        if (!bench_algo_listed(o->algos, pl->name) || pl->applicable(&p, pass) != CONVGEN_SUCCESS)
            continue;
        run_convgen(ctx, l, pass, pl, PLAIN, &b, reference, rp, o, r);
        if (o->tf32 && uses_library_gemms(pl->algo)) /* winograd stays strict: its target is fp32 accuracy */
            run_convgen(ctx, l, pass, pl, TF32, &b, reference, rp, o, r);
        if (pl->algo == CONVGEN_ALGO_WINOGRAD || pl->algo == CONVGEN_ALGO_FFT)
            run_convgen(ctx, l, pass, pl, OTHER_GEMM, &b, reference, rp, o, r);
        if (pl->algo == CONVGEN_ALGO_WINOGRAD && strcmp(convgen_context_arch(ctx), "sm_90") == 0)
            run_convgen(ctx, l, pass, pl, TENSOR_GEMM, &b, reference, rp, o, r); /* gemm_tc.c: sm_90 only */
        if (pl->algo == CONVGEN_ALGO_DIRECT) /* direct_tc.c: mma.sync, sm_80 on (refused before) */
            run_convgen(ctx, l, pass, pl, TENSOR_GEMM, &b, reference, rp, o, r);
        if (pl->algo == CONVGEN_ALGO_FFT && has_mma_tf32(ctx)) /* gemm_complex_tc.c (before sm_80 fft's FMA GEMM) */
            run_convgen(ctx, l, pass, pl, TENSOR_GEMM, &b, reference, rp, o, r);
        if (pl->algo == CONVGEN_ALGO_WINOGRAD_FUSED && pass != CONVGEN_ACCGRAD) /* refused where the cluster kernel runs */
            run_convgen(ctx, l, pass, pl, WEIGHTS_INSIDE, &b, reference, rp, o, r);
    }
    if (bench_algo_listed(o->algos, "auto")) {
        run_convgen(ctx, l, pass, NULL, AUTO, &b, reference, rp, o, r);
        bench_report_auto_replan(r, ctx, l, pass);
    }
    cudaFree(reference);
    free(rp);
    free_buffers(&b);
    fprintf(stderr, "convgen-bench: %s %s done\n", l->name, convgen_pass_name(pass));
}

/* ---- the device line ---- */

static void describe_device(bench_report *r, convgen_context *ctx)
{
    struct cudaDeviceProp prop;
    int clock = 0, mem_clock = 0, driver = 0, nv_major = 0, nv_minor = 0, fft = 0;
    cudaGetDeviceProperties(&prop, 0);
    cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, 0);
    cudaDeviceGetAttribute(&mem_clock, cudaDevAttrMemoryClockRate, 0);
    cudaDriverGetVersion(&driver);
    nvrtcVersion(&nv_major, &nv_minor);
    cufftGetVersion(&fft);
    snprintf(r->device, sizeof r->device,
             "%s (%s), %d SMs, SM clock %d MHz, memory clock %d MHz, L2 %d MiB, CUDA driver %d.%d, cuDNN %s, "
             "cuFFT %d.%d.%d, NVRTC %d.%d",
             prop.name, convgen_context_arch(ctx), prop.multiProcessorCount, clock / 1000, mem_clock / 1000,
             prop.l2CacheSize >> 20, driver / 1000, driver % 1000 / 10, r->cudnn_version, fft / 1000, fft % 1000 / 100,
             fft % 100, nv_major, nv_minor);
    snprintf(r->gpu, sizeof r->gpu, "%s", prop.name);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

/* Removes the bench's private cache folder and the disk cache's subfolders in it. */
static void remove_cache_dir(const char *dir)
{
    if (nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "convgen-bench: could not remove %s\n", dir);
}

/* The layers against cuDNN (or, with --fft, the FFTs against cuFFT) in one context. */
static int run_benches(const options *o, convgen_context *ctx, const cg_layer *layers, int count)
{
    cache_mem_clear();
    bench_timing_init(ctx);
    bench_cudnn *dnn = o->no_cudnn || o->fft || o->pool || o->net ? NULL : bench_cudnn_create();
    bench_report *r = bench_report_create();
    snprintf(r->cudnn_version, sizeof r->cudnn_version, "%s",
             dnn || o->pool || o->net ? bench_cudnn_version() : "not used");
    describe_device(r, ctx);
    r->copy_gbs = bench_copy_bandwidth_gbs();
    r->fma_tflops = bench_fma_tflops(ctx);
    int rc = 0;
    if (o->fft) {
        bool filtered = o->fft_rank || o->fft_n;
        rc = filtered ? 0 : bench_fft(ctx, o->runs, r->copy_gbs, r->device, o->out_dir);
        rc |= bench_fft_real(ctx, o->runs, r->copy_gbs, r->device, o->out_dir, o->fft_rank, o->fft_n);
    } else if (o->pool) {
        rc = bench_pool(ctx, o->runs, r->copy_gbs, r->device, o->out_dir);
    } else if (o->net) {
        rc = bench_net(ctx, 3 + o->runs / 10, r->device, o->out_dir, o->names, o->name_count, o->cube);
    } else {
        for (int i = 0; i < count; ++i)
            if (selected(o, &layers[i]))
                for (int pass = 0; pass < 3; ++pass)
                    bench_layer_pass(ctx, dnn, &layers[i], (convgen_pass)pass, o, r);
        bench_report_jit_replan(r, ctx, layers, count, o->names, o->name_count, o->algos);
        bench_report_call_overhead(r, ctx);
        bench_report_print(r, stdout);
        rc = o->out_dir ? bench_report_write(r, o->out_dir) : 0;
    }
    bench_report_destroy(r);
    bench_cudnn_destroy(dnn);
    return rc;
}

static int run(const options *o)
{
    /* The JIT line times NVRTC and the caches: the library's kernel set, which holds the bench
     * layers' kernels, would answer first. Its wisdom stays: auto plans as a user's program
     * would, from the shipped choices (read now, before the set is turned off), and times
     * candidates only for layers they do not cover. */
    wisdom_load_env();
    setenv("CONVGEN_KERNEL_SET", "off", 1);
    cg_layer *layers;
    int count;
    if (cg_layer_read_file(o->layers_file, &layers, &count) != CONVGEN_SUCCESS) {
        fprintf(stderr, "convgen-bench: %s\n", convgen_last_error());
        return 1;
    }
    /* Before any GPU work: a wrong name or an unwritable --out must not cost a run. */
    if ((!o->fft && !o->pool && !o->net && !names_found(o, layers, count)) || (o->out_dir && !make_dirs(o->out_dir))) {
        free(layers);
        return 1;
    }
    /* A private disk cache: the first plan of each kernel is a cold NVRTC compile. */
    char cache_dir[] = "/tmp/convgen-bench-cache-XXXXXX";
    if (!mkdtemp(cache_dir)) {
        fprintf(stderr, "convgen-bench: cannot create %s\n", cache_dir);
        free(layers);
        return 1;
    }
    convgen_context_options co = {.cache_dir = cache_dir};
    convgen_context *ctx;
    convgen_status s = convgen_context_create(&co, &ctx);
    int rc = s == CONVGEN_ERROR_NO_DEVICE ? 77 : 1;
    if (s == CONVGEN_SUCCESS) {
        rc = run_benches(o, ctx, layers, count);
        convgen_context_destroy(ctx);
    } else {
        fprintf(stderr, "convgen-bench: %s\n", convgen_last_error());
    }
    free(layers);
    remove_cache_dir(cache_dir);
    return rc;
}

int main(int argc, char **argv)
{
    options o;
    for (int i = 1; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return usage(0);
    if (!parse(argc, argv, &o)) {
        fprintf(stderr, "convgen-bench: 'convgen bench --help' lists the options\n");
        return 2;
    }
    /* The driver's own PTX cache would make "cold" compiles warm. */
    setenv("CUDA_CACHE_DISABLE", "1", 1);
    return run(&o);
}
