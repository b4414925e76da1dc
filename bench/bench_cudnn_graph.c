/* cuDNN's graph (backend) API as a second yardstick beside the legacy Find. Every cudnn call is
 * checked; a failure to build the graph makes the pass legacy-only (the caller notes why), a
 * configuration that does not finalize, needs more workspace or fails to run is skipped. */
#include "bench_cudnn_graph.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Enumeration stops after this long per pass (plans of runtime-compiled engines take seconds to
 * finalize); the configurations finalized by then are ranked. */
#define GRAPH_BUDGET_S 60.0
/* Ranking runs per configuration (median), after one warm-up run. */
#define RANK_RUNS 3
#define MAX_CONFIGS 256
#define UID_X 1
#define UID_W 2
#define UID_Y 3

typedef struct graph_config {
    cudnnBackendDescriptor_t plan;
    bool tf32_class;
    double rank_ms;
    char name[128];
} graph_config;

struct bench_graph {
    cudnnHandle_t handle;
    void *workspace;
    size_t workspace_bytes;
    convgen_pass pass;
    bench_buffers *b;
    cudnnBackendDescriptor_t tensor[3], conv, op, graph; /* tensor[uid - 1] */
    cudnnBackendDescriptor_t *packs;                     /* one variant pack per buffer set */
    graph_config config[MAX_CONFIGS];
    int count, max_configs, tried, rejected, over_workspace, failed, duplicates;
    char (*seen)[128]; /* names of every configuration met, for de-duplication */
    int seen_count;
    int best[2]; /* [tf32]: index of the class's best, -1 before bench_graph_best */
    int current; /* the configuration graph_run runs */
    double started;
    bool out_of_time; /* enumeration stopped at GRAPH_BUDGET_S */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* A cudnn status: true on success. Else why = "graph API: <what>: <cuDNN's message>" (the first
 * failure) where the failure ends the graph API's part; where it only skips one engine
 * configuration (why NULL: expected for engines that do not support the pass),
 * CONVGEN_BENCH_GRAPH_LOG=1 prints it. */
static bool ok(cudnnStatus_t s, const char *what, char *why, size_t why_size)
{
    static int log = -1;
    if (s == CUDNN_STATUS_SUCCESS)
        return true;
    if (log < 0)
        log = getenv("CONVGEN_BENCH_GRAPH_LOG") != NULL;
    if (why && why_size && !*why)
        snprintf(why, why_size, "graph API: %s: %s", what, cudnnGetErrorString(s));
    else if (!why && log)
        fprintf(stderr, "convgen-bench: cuDNN graph API: %s: %s\n", what, cudnnGetErrorString(s));
    return false;
}

static bool set_attr(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                     int64_t count, const void *value, const char *what, char *why, size_t why_size)
{
    return ok(cudnnBackendSetAttribute(d, name, type, count, value), what, why, why_size);
}

static bool create(cudnnBackendDescriptorType_t type, cudnnBackendDescriptor_t *d, const char *what, char *why,
                   size_t why_size)
{
    *d = NULL;
    return ok(cudnnBackendCreateDescriptor(type, d), what, why, why_size);
}

static void destroy(cudnnBackendDescriptor_t d)
{
    if (d)
        cudnnBackendDestroyDescriptor(d);
}

/* ---- the operation graph ---- */

/* A packed fp32 tensor of dims (a, b, spatial...) with a unique id. */
static bool make_tensor(int64_t uid, int64_t a, int64_t b, const int64_t *spatial, int rank,
                        cudnnBackendDescriptor_t *t, char *why, size_t why_size)
{
    int64_t dims[CONVGEN_MAX_RANK + 2] = {a, b}, strides[CONVGEN_MAX_RANK + 2], align = 16;
    int nd = rank + 2;
    for (int i = 0; i < rank; ++i)
        dims[2 + i] = spatial[i];
    strides[nd - 1] = 1;
    for (int i = nd - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * dims[i + 1];
    cudnnDataType_t type = CUDNN_DATA_FLOAT;
    return create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, t, "create a tensor descriptor", why, why_size) &&
           set_attr(*t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type, "tensor data type", why,
                    why_size) &&
           set_attr(*t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, nd, dims, "tensor dimensions", why, why_size) &&
           set_attr(*t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, nd, strides, "tensor strides", why, why_size) &&
           set_attr(*t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, "tensor unique id", why, why_size) &&
           set_attr(*t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, "tensor byte alignment", why,
                    why_size) &&
           ok(cudnnBackendFinalize(*t), "finalize a tensor descriptor", why, why_size);
}

static bool make_conv(const convgen_conv_desc *d, cudnnBackendDescriptor_t *conv, char *why, size_t why_size)
{
    int64_t pre[CONVGEN_MAX_RANK], post[CONVGEN_MAX_RANK], stride[CONVGEN_MAX_RANK], dil[CONVGEN_MAX_RANK];
    int64_t rank = d->rank;
    for (int i = 0; i < d->rank; ++i) {
        pre[i] = d->pad_before[i];
        post[i] = d->pad_after[i];
        stride[i] = d->stride[i] ? d->stride[i] : 1;
        dil[i] = d->dilation[i] ? d->dilation[i] : 1;
    }
    cudnnDataType_t comp = CUDNN_DATA_FLOAT;
    cudnnConvolutionMode_t mode = d->mode == CONVGEN_CONVOLUTION ? CUDNN_CONVOLUTION : CUDNN_CROSS_CORRELATION;
    return create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, conv, "create the convolution descriptor", why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, "convolution compute type",
                    why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, "convolution mode",
                    why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &rank, "convolution spatial dims",
                    why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, rank, pre, "convolution pre-paddings",
                    why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, rank, post,
                    "convolution post-paddings", why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, rank, stride, "convolution strides",
                    why, why_size) &&
           set_attr(*conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, rank, dil, "convolution dilations", why,
                    why_size) &&
           ok(cudnnBackendFinalize(*conv), "finalize the convolution descriptor", why, why_size);
}

/* The pass's operation: its descriptor type and the attributes of its three tensors, in the
 * order x, w, y, then alpha, beta and the convolution. */
static void op_attributes(convgen_pass pass, cudnnBackendDescriptorType_t *type, cudnnBackendAttributeName_t a[6])
{
    static const cudnnBackendAttributeName_t names[3][6] = {
        {CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC},
        {CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA, CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC}};
    static const cudnnBackendDescriptorType_t types[3] = {
        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR};
    *type = types[pass];
    memcpy(a, names[pass], sizeof names[pass]);
}

static bool make_graph(bench_graph *g, const convgen_conv_desc *d, char *why, size_t why_size)
{
    int64_t out[CONVGEN_MAX_RANK];
    convgen_output_size(d, out);
    if (!make_tensor(UID_X, d->n, d->c, d->in, d->rank, &g->tensor[0], why, why_size) ||
        !make_tensor(UID_W, d->k, d->c, d->kernel, d->rank, &g->tensor[1], why, why_size) ||
        !make_tensor(UID_Y, d->n, d->k, out, d->rank, &g->tensor[2], why, why_size) ||
        !make_conv(d, &g->conv, why, why_size))
        return false;
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t a[6];
    op_attributes(g->pass, &type, a);
    float alpha = 1.0f, beta = 0.0f;
    return create(type, &g->op, "create the convolution operation", why, why_size) &&
           set_attr(g->op, a[0], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[0], "operation x", why, why_size) &&
           set_attr(g->op, a[1], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[1], "operation w", why, why_size) &&
           set_attr(g->op, a[2], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->tensor[2], "operation y", why, why_size) &&
           set_attr(g->op, a[3], CUDNN_TYPE_FLOAT, 1, &alpha, "operation alpha", why, why_size) &&
           set_attr(g->op, a[4], CUDNN_TYPE_FLOAT, 1, &beta, "operation beta", why, why_size) &&
           set_attr(g->op, a[5], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->conv, "operation convolution", why, why_size) &&
           ok(cudnnBackendFinalize(g->op), "finalize the convolution operation", why, why_size) &&
           create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &g->graph, "create the operation graph", why, why_size) &&
           set_attr(g->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &g->handle,
                    "operation graph handle", why, why_size) &&
           set_attr(g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &g->op,
                    "operation graph ops", why, why_size) &&
           ok(cudnnBackendFinalize(g->graph), "finalize the operation graph", why, why_size);
}

/* The device pointers of x, w, y for one buffer set: which operand is which depends on the pass
 * (convgen_execute's order: fprop x, w -> y; bprop dy, w -> dx; accgrad x, dy -> dw). */
static void operands(const bench_graph *g, int set, float *out, void *ptr[3])
{
    const bench_buffers *b = g->b;
    float *y = g->pass == CONVGEN_FPROP ? out : g->pass == CONVGEN_BPROP ? b->in0[set] : b->in1[set];
    float *x = g->pass == CONVGEN_BPROP ? out : b->in0[set];
    float *w = g->pass == CONVGEN_ACCGRAD ? out : b->in1[set];
    ptr[0] = x, ptr[1] = w, ptr[2] = y;
}

static bool make_pack(bench_graph *g, int set, float *out, cudnnBackendDescriptor_t *pack, char *why, size_t why_size)
{
    int64_t uids[3] = {UID_X, UID_W, UID_Y};
    void *ptr[3];
    operands(g, set, out, ptr);
    return create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, pack, "create a variant pack", why, why_size) &&
           set_attr(*pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids, "variant pack ids", why,
                    why_size) &&
           set_attr(*pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, ptr, "variant pack pointers",
                    why, why_size) &&
           set_attr(*pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &g->workspace,
                    "variant pack workspace", why, why_size) &&
           ok(cudnnBackendFinalize(*pack), "finalize a variant pack", why, why_size);
}

/* ---- engine configurations ---- */

static const char *knob_name(int type)
{
    static const char *const names[] = {"SPLIT_K",
                                        "SWIZZLE",
                                        "TILE_SIZE",
                                        "USE_TEX",
                                        "EDGE",
                                        "KBLOCK",
                                        "LDGA",
                                        "LDGB",
                                        "CHUNK_K",
                                        "SPLIT_H",
                                        "WINO_TILE",
                                        "MULTIPLY",
                                        "SPLIT_K_BUF",
                                        "TILEK",
                                        "STAGES",
                                        "REDUCTION_MODE",
                                        "CTA_SPLIT_K_MODE",
                                        "SPLIT_K_SLC",
                                        "IDX_MODE",
                                        "SLICED",
                                        "SPLIT_RS",
                                        "SINGLEBUFFER",
                                        "LDGC",
                                        "SPECFILT",
                                        "KERNEL_CFG",
                                        "WORKSPACE",
                                        "TILE_CGA",
                                        "TILE_CGA_M",
                                        "TILE_CGA_N",
                                        "BLOCK_SIZE",
                                        "OCCUPANCY",
                                        "ARRAY_SIZE_PER_THREAD",
                                        "NUM_C_PER_BLOCK",
                                        "SPLIT_COLS",
                                        "TILE_ROWS",
                                        "TILE_COLS",
                                        "LOAD_SIZE",
                                        "CTA_COUNT",
                                        "STREAM_K",
                                        "SPLIT_P_SLC",
                                        "TILE_M",
                                        "TILE_N",
                                        "WARP_SPEC_CFG",
                                        "SWAP_AB"};
    return type >= 0 && type < (int)(sizeof names / sizeof names[0]) ? names[type] : NULL;
}

/* The configuration's name ("eng12 tc TILE_SIZE=3,STAGES=4") and class, read from its engine's
 * global index and numerical notes and its knob choices. */
static bool describe(cudnnBackendDescriptor_t cfg, char *name, size_t size, bool *tf32_class)
{
    cudnnBackendDescriptor_t engine = NULL, knobs[CUDNN_KNOB_TYPE_COUNTS] = {0};
    int64_t n = 0, index = -1, nknobs = 0;
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    bool good =
        create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine, "create an engine descriptor", NULL, 0) &&
        ok(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &engine),
           "read a config's engine", NULL, 0) &&
        ok(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index),
           "read an engine's global index", NULL, 0) &&
        ok(cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                    CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &n, notes),
           "read an engine's numerical notes", NULL, 0);
    *tf32_class = false;
    for (int64_t i = 0; good && i < n && i < CUDNN_NUMERICAL_NOTE_TYPE_COUNT; ++i)
        *tf32_class |= notes[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
                       notes[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS ||
                       notes[i] == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION;
    int len = snprintf(name, size, "eng%lld%s", (long long)index, *tf32_class ? " tc" : "");
    for (int i = 0; good && i < CUDNN_KNOB_TYPE_COUNTS; ++i)
        good = create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, &knobs[i], "create a knob choice", NULL, 0);
    if (good && ok(cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                            CUDNN_KNOB_TYPE_COUNTS, &nknobs, knobs),
                   "read a config's knob choices", NULL, 0)) {
        for (int64_t i = 0; i < nknobs && i < CUDNN_KNOB_TYPE_COUNTS && len < (int)size; ++i) {
            cudnnBackendKnobType_t type;
            int64_t value = 0;
            if (!ok(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n,
                                             &type),
                    "read a knob type", NULL, 0) ||
                !ok(cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n,
                                             &value),
                    "read a knob value", NULL, 0))
                continue;
            const char *kn = knob_name((int)type);
            len +=
                kn ? snprintf(name + len, size - (size_t)len, "%s%s=%lld", i ? "," : " ", kn, (long long)value)
                   : snprintf(name + len, size - (size_t)len, "%sK%d=%lld", i ? "," : " ", (int)type, (long long)value);
        }
    }
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i)
        destroy(knobs[i]);
    destroy(engine);
    return good;
}

static bool graph_run(void *state, int set)
{
    bench_graph *g = state;
    cudnnStatus_t s = cudnnBackendExecute(g->handle, g->config[g->current].plan, g->packs[set]);
    if (s != CUDNN_STATUS_SUCCESS)
        fprintf(stderr, "convgen-bench: cuDNN graph API: execute %s: %s\n", g->config[g->current].name,
                cudnnGetErrorString(s));
    return s == CUDNN_STATUS_SUCCESS;
}

static bool seen_before(bench_graph *g, const char *name)
{
    for (int i = 0; i < g->seen_count; ++i)
        if (strcmp(g->seen[i], name) == 0)
            return true;
    if (g->seen_count < 2 * MAX_CONFIGS)
        snprintf(g->seen[g->seen_count++], sizeof g->seen[0], "%s", name);
    return false;
}

/* Tries one engine configuration (taking it: destroyed here); false when enumeration should
 * stop (the cap or the time budget reached). */
static bool add_config(bench_graph *g, cudnnBackendDescriptor_t cfg)
{
    graph_config c = {.rank_ms = -1};
    bool described = describe(cfg, c.name, sizeof c.name, &c.tf32_class);
    if (described && seen_before(g, c.name)) {
        ++g->duplicates;
        destroy(cfg);
        return true;
    }
    ++g->tried;
    int64_t ws = 0, n = 0;
    bool good =
        described && create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &c.plan, "create an execution plan", NULL, 0) &&
        ok(cudnnBackendSetAttribute(c.plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &g->handle),
           "set a plan's handle", NULL, 0) &&
        ok(cudnnBackendSetAttribute(c.plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                    &cfg),
           "set a plan's engine config", NULL, 0) &&
        ok(cudnnBackendFinalize(c.plan), "finalize an execution plan", NULL, 0) &&
        ok(cudnnBackendGetAttribute(c.plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws),
           "read a plan's workspace size", NULL, 0);
    destroy(cfg);
    if (!good)
        ++g->rejected;
    else if (ws < 0 || (uint64_t)ws > g->workspace_bytes)
        ++g->over_workspace, good = false;
    if (good) {
        g->config[g->count] = c;
        g->current = g->count;
        c.rank_ms = bench_median_ms(graph_run, g, g->b->sets, 1, RANK_RUNS);
        g->config[g->count].rank_ms = c.rank_ms;
        if (c.rank_ms > 0)
            ++g->count;
        else
            ++g->failed, good = false;
        cudaGetLastError(); /* a failed run leaves no sticky error behind for the next one */
    }
    if (!good)
        destroy(c.plan);
    g->out_of_time = now_s() - g->started >= GRAPH_BUDGET_S;
    return g->tried < g->max_configs && g->count < MAX_CONFIGS && !g->out_of_time;
}

/* The engine configurations one heuristics mode returns, from result `from` on, at most `limit`
 * tried; the index reached, or -1 when enumeration must stop. */
static int64_t add_heuristics(bench_graph *g, cudnnBackendHeurMode_t mode, int64_t from, int limit)
{
    cudnnBackendDescriptor_t heur = NULL;
    int64_t count = 0, i = from;
    bool more = true;
    if (create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur, "create an engine heuristics descriptor", NULL, 0) &&
        ok(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                    &g->graph),
           "set the heuristics' graph", NULL, 0) &&
        ok(cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode),
           "set the heuristics' mode", NULL, 0) &&
        ok(cudnnBackendFinalize(heur), "finalize the heuristics", NULL, 0) &&
        ok(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                    NULL),
           "count the heuristics' results", NULL, 0) &&
        count > from) {
        cudnnBackendDescriptor_t *cfg = calloc((size_t)count, sizeof *cfg);
        int64_t made = 0, got = 0;
        while (cfg && made < count &&
               create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[made], "create an engine config", NULL, 0))
            ++made;
        if (cfg && made == count &&
            ok(cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got,
                                        cfg),
               "read the heuristics' results", NULL, 0)) {
            int tried = g->tried;
            for (; i < got && i < count && more && g->tried - tried < limit; ++i) {
                more = add_config(g, cfg[i]);
                cfg[i] = NULL;
            }
        }
        for (int64_t j = 0; j < made; ++j)
            destroy(cfg[j]);
        free(cfg);
    }
    destroy(heur);
    return more ? i : -1;
}

/* Every engine of the graph by global index, each with its default knobs; false when
 * enumeration must stop. */
static bool add_engines(bench_graph *g)
{
    int64_t count = 0, n = 0;
    if (!ok(cudnnBackendGetAttribute(g->graph, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, CUDNN_TYPE_INT64, 1, &n,
                                     &count),
            "read the graph's engine count", NULL, 0))
        return true;
    bool more = true;
    for (int64_t i = 0; i < count && more; ++i) {
        cudnnBackendDescriptor_t engine = NULL, cfg = NULL;
        if (create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine, "create an engine descriptor", NULL, 0) &&
            ok(cudnnBackendSetAttribute(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                        &g->graph),
               "set an engine's graph", NULL, 0) &&
            ok(cudnnBackendSetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &i),
               "set an engine's global index", NULL, 0) &&
            /* finalizing fails where the engine does not support the graph */
            ok(cudnnBackendFinalize(engine), "finalize an engine", NULL, 0) &&
            create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg, "create an engine config", NULL, 0) &&
            ok(cudnnBackendSetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine),
               "set a config's engine", NULL, 0) &&
            ok(cudnnBackendFinalize(cfg), "finalize an engine config", NULL, 0)) {
            more = add_config(g, cfg);
            cfg = NULL;
        }
        destroy(cfg);
        destroy(engine);
    }
    return more;
}

bench_graph *bench_graph_create(cudnnHandle_t handle, void *workspace, size_t workspace_bytes,
                                const convgen_conv_desc *d, convgen_pass pass, bench_buffers *b, int max_configs,
                                char *why, size_t why_size)
{
    *why = '\0';
    bench_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->packs = calloc((size_t)b->sets, sizeof *g->packs)) ||
        !(g->seen = calloc(2 * MAX_CONFIGS, sizeof *g->seen))) {
        snprintf(why, why_size, "graph API: out of memory");
        bench_graph_destroy(g);
        return NULL;
    }
    *g = (bench_graph){.handle = handle,
                       .workspace = workspace,
                       .workspace_bytes = workspace_bytes,
                       .pass = pass,
                       .b = b,
                       .packs = g->packs,
                       .seen = g->seen,
                       .max_configs = max_configs < MAX_CONFIGS ? max_configs : MAX_CONFIGS,
                       .best = {-1, -1},
                       .started = now_s()};
    bool good = make_graph(g, d, why, why_size);
    for (int s = 0; good && s < b->sets; ++s)
        good = make_pack(g, s, b->out[s], &g->packs[s], why, why_size);
    /* Half the cap for heuristics A's first picks, then FALLBACK's and every engine's defaults,
     * then the rest of A's: a long list from A must not crowd out the other engines. */
    int64_t a = good ? add_heuristics(g, CUDNN_HEUR_MODE_A, 0, g->max_configs / 2) : -1;
    if (a >= 0 && add_heuristics(g, CUDNN_HEUR_MODE_FALLBACK, 0, g->max_configs / 4) >= 0 && add_engines(g))
        add_heuristics(g, CUDNN_HEUR_MODE_A, a, g->max_configs);
    if (good && g->count == 0) {
        snprintf(why, why_size,
                 "graph API: no engine configuration ran (%d tried, %d not finalized, %d over the "
                 "workspace limit, %d failed to run)",
                 g->tried, g->rejected, g->over_workspace, g->failed);
        good = false;
    }
    if (!good) {
        bench_graph_destroy(g);
        return NULL;
    }
    return g;
}

void bench_graph_destroy(bench_graph *g)
{
    if (!g)
        return;
    for (int i = 0; i < g->count; ++i)
        destroy(g->config[i].plan);
    for (int s = 0; g->packs && g->b && s < g->b->sets; ++s)
        destroy(g->packs[s]);
    destroy(g->graph);
    destroy(g->op);
    destroy(g->conv);
    for (int i = 0; i < 3; ++i)
        destroy(g->tensor[i]);
    free(g->packs);
    free(g->seen);
    free(g);
}

bool bench_graph_best(bench_graph *g, bool tf32, int runs, double *ms, char *name, size_t name_size, char *why,
                      size_t why_size)
{
    int top[2] = {-1, -1};
    for (int i = 0; i < g->count; ++i) {
        if (!tf32 && g->config[i].tf32_class)
            continue;
        if (top[0] < 0 || g->config[i].rank_ms < g->config[top[0]].rank_ms)
            top[1] = top[0], top[0] = i;
        else if (top[1] < 0 || g->config[i].rank_ms < g->config[top[1]].rank_ms)
            top[1] = i;
    }
    g->best[tf32] = -1;
    *ms = -1;
    for (int t = 0; t < 2 && top[t] >= 0; ++t) {
        g->current = top[t];
        double m = bench_median_ms(graph_run, g, g->b->sets, 3, runs);
        if (m > 0 && (*ms < 0 || m < *ms))
            *ms = m, g->best[tf32] = top[t];
    }
    if (g->best[tf32] < 0) {
        snprintf(why, why_size, "graph API: %s",
                 top[0] >= 0 ? "the timed runs failed"
                 : tf32      ? "no engine configuration ran"
                             : "no strict fp32 engine configuration ran");
        return false;
    }
    snprintf(name, name_size, "%s", g->config[g->best[tf32]].name);
    return true;
}

bool bench_graph_write(bench_graph *g, bool tf32, float *out)
{
    char why[160] = "";
    cudnnBackendDescriptor_t pack = NULL;
    if (g->best[tf32] < 0)
        return false;
    g->current = g->best[tf32];
    bool good = make_pack(g, 0, out, &pack, why, sizeof why);
    if (good) {
        cudnnBackendDescriptor_t saved = g->packs[0];
        g->packs[0] = pack;
        good = graph_run(g, 0) && bench_cuda_ok(cudaDeviceSynchronize(), "cuDNN graph API check run");
        g->packs[0] = saved;
    } else {
        fprintf(stderr, "convgen-bench: %s\n", why);
    }
    destroy(pack);
    return good;
}

void bench_graph_summary(const bench_graph *g, char *text, size_t size)
{
    int strict = 0;
    for (int i = 0; i < g->count; ++i)
        strict += !g->config[i].tf32_class;
    snprintf(text, size,
             "%d configs ran (%d strict fp32) of %d tried; %d not finalized, %d over the workspace, "
             "%d failed, %d duplicates%s",
             g->count, strict, g->tried, g->rejected, g->over_workspace, g->failed, g->duplicates,
             g->out_of_time ? "; stopped at the time budget" : "");
}
