/* AUTO (tune.h): the candidates are each registered planner's variants for the layer and pass
 * (cg_planner.variants: its tiles, Fourier bases, GEMMs at the effort asked), or the planner
 * alone, with a row saying why, where it does not apply. Each is
 * generated offline first, which says whether it applies and what the cost model thinks of it;
 * then, unless wisdom knows the answer (for a caller who fixed knobs: a choice they allow, made
 * among every candidate they allow: wisdom_choice) or there is nothing to time on:
 *   1. every candidate's kernels are compiled at once, on every core (the caches keep them);
 *   2. each candidate is planned and run once on the same random inputs, its output poisoned
 *      first and compared with the first candidate's (direct, where it applies: the plainest),
 *      a disagreeing one dropped and reported;
 *   3. the survivors are timed as the bench times them: CUDA events around each run, median of
 *      several after warm-up runs, each run queued behind a spin kernel so the host's launch
 *      latency stays out, the inputs rotating among copies so that a small layer's data is not
 *      in L2 when it comes round again; the fastest is kept.
 * The winner goes into wisdom ($CONVGEN_WISDOM too), unless the caller fixed a knob: then it is
 * the fastest of what was allowed, not the layer's answer. */
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cost_model.h"
#include "jit.h"
#include "plan.h"
#include "reference.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "wisdom.h"

#define MAX_CANDIDATES CG_MAX_CANDIDATES
/* Strict fp32: the bench's bound against float64. A candidate whose fp32 sums drift past it is
 * dropped (U1's 3-D Winograd accgrad, 65536 tiles summed per element: 1.7e-4). */
#define STRICT_TOLERANCE 1e-4
#define TF32_TOLERANCE 2e-2 /* TF32 GEMMs: relative error near 1e-3, more on long sums */
#define REFERENCE_POINTS 256 /* of the float64 reference, checking the first output */
#define WARMUP_RUNS 3
#define MAX_RUNS 21
#define SPIN_NS 50000ull    /* the spin before each timed run: longer than any launch's host time */
#define MAX_SETS 512
#define SET_ALIGN_FLOATS 64 /* each copy 256-byte aligned, as cudaMalloc's are */

typedef struct candidate {
    convgen_candidate pub;
    cg_generated gen; /* its offline generation (kernel sources), while tuning */
} candidate;

typedef struct tuner {
    convgen_context *ctx;
    const convgen_conv_desc *desc;
    cg_problem problem;
    convgen_pass pass;
    convgen_plan_options base; /* the caller's, without the callback */
    const convgen_plan_options *caller;
    int effort;
    candidate *c; /* MAX_CANDIDATES of them, allocated when wisdom does not know the answer */
    int count, done;
    bool fixes;        /* the caller fixed some tuning: the winner is not the layer's answer */
    bool unsure;       /* a candidate dropped out for a reason that may pass (memory, CUDA): no wisdom */
} tuner;

static void progress(tuner *t)
{
    ++t->done;
    if (t->caller && t->caller->progress)
        t->caller->progress(t->done, t->count, t->caller->progress_user);
}

static void set_note(candidate *c, convgen_status s, const char *text)
{
    c->pub.status = s;
    snprintf(c->pub.note, sizeof c->pub.note, "%s", text);
}

/* ---- the candidates ---- */

/* A candidate of `algo` with the caller's options and the knobs `tuning` fixes. */
static void add(tuner *t, convgen_algo algo, const cg_tuning *tuning)
{
    if (t->count == MAX_CANDIDATES)
        return;
    candidate *c = &t->c[t->count++];
    memset(c, 0, sizeof *c);
    c->pub.algo = algo;
    c->pub.options = t->base;
    plan_options_take_knobs(&c->pub.options, tuning);
    c->pub.estimate_ms = c->pub.ms = c->pub.difference = -1;
}

static void list_candidates(tuner *t)
{
    cg_tuning fixed, tunings[MAX_CANDIDATES];
    convgen_algo algos[MAX_CANDIDATES];
    bool valid = plan_tuning_of(&t->base, &fixed) == CONVGEN_SUCCESS;
    /* an invalid tuning: each planner alone, each candidate saying why */
    int n = cg_candidates_list(&t->problem, t->pass, t->effort, valid ? &fixed : NULL, algos, tunings, MAX_CANDIDATES);
    for (int i = 0; i < n; ++i)
        add(t, algos[i], &tunings[i]);
}

/* Whether the caller's options fix a knob of some planner: then AUTO's winner is the fastest of
 * the candidates the caller allows, not the layer's answer, and wisdom does not take it. */
static bool fixes_variants(const convgen_plan_options *o)
{
    cg_tuning fixed;
    char variant[CG_VARIANT_MAX];
    if (plan_tuning_of(o, &fixed) != CONVGEN_SUCCESS)
        return true;
    for (int i = 0; i < cg_planner_count(); ++i) {
        cg_variant_print(cg_planner_at(i), &fixed, CONVGEN_MAX_RANK, variant, sizeof variant);
        if (variant[0])
            return true;
    }
    return false;
}

/* Generates every candidate offline: whether it applies, and the cost model's time. */
static void generate_candidates(tuner *t)
{
    cg_target target = plan_target_of(t->ctx);
    cg_rates rates = cg_rates_for(t->ctx->sm_count, t->ctx->memory_bytes_per_s);
    for (int i = 0; i < t->count; ++i) {
        candidate *c = &t->c[i];
        cg_tuning tuning;
        convgen_status s = plan_tuning_of(&c->pub.options, &tuning);
        if (s == CONVGEN_SUCCESS)
            s = cg_generate_tuned(&t->problem, t->pass, c->pub.algo, &target, &tuning, &c->gen);
        if (s != CONVGEN_SUCCESS) {
            set_note(c, s == CONVGEN_ERROR_INVALID_VALUE ? CONVGEN_ERROR_NOT_SUPPORTED : s, convgen_last_error());
            continue;
        }
        c->pub.estimate_ms = cg_estimate_ms(&c->gen, &rates);
        c->pub.workspace_bytes = (size_t)c->gen.workspace_bytes;
    }
}

static void free_generated(tuner *t)
{
    for (int i = 0; i < t->count; ++i)
        cg_generated_free(&t->c[i].gen);
}

/* ---- compiling every candidate's kernels at once ---- */

/* Compiles (or finds in the caches) every kernel of the candidates that apply, all at once; a
 * candidate whose kernel fails drops out with the compiler's message. */
static convgen_status compile_candidates(tuner *t)
{
    jit_job *jobs = calloc(MAX_CANDIDATES * CG_MAX_KERNELS, sizeof *jobs);
    int *owner = calloc(MAX_CANDIDATES * CG_MAX_KERNELS, sizeof *owner), n = 0;
    if (!jobs || !owner) {
        free(jobs), free(owner);
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory compiling the candidates");
    }
    for (int i = 0; i < t->count; ++i)
        for (int k = 0; t->c[i].pub.status == CONVGEN_SUCCESS && k < t->c[i].gen.kernel_count; ++k, ++n) {
            jobs[n].source = t->c[i].gen.kernels[k].source, jobs[n].name = t->c[i].gen.kernels[k].name;
            owner[n] = i;
        }
    jit_get_all(jobs, n, t->ctx->arch, t->ctx->disk);
    for (int i = 0; i < n; ++i) {
        if (jobs[i].status != CONVGEN_SUCCESS && t->c[owner[i]].pub.status == CONVGEN_SUCCESS)
            set_note(&t->c[owner[i]], jobs[i].status, jobs[i].message ? jobs[i].message : "compiling failed");
        jit_job_free(&jobs[i]);
    }
    free(jobs);
    free(owner);
    return CONVGEN_SUCCESS;
}

/* ---- running and timing on the device ---- */

typedef struct bench_buffers {
    CUdeviceptr ptr[3]; /* in0, in1, out: `sets` copies each, `stride` floats apart */
    int64_t elems[3], stride[3];
    int sets, next;     /* the copy the next run uses */
    float *reference, *got; /* the first candidate's output, the current one's (host) */
    float *host_in[2];      /* the inputs, for the float64 reference check of the first output */
    bool have_reference;
    CUevent events[2];
    int event_count;
    CUfunction spin;    /* NULL: runs are timed with their launch latency */
} bench_buffers;

static convgen_status cuda(const cg_driver *drv, CUresult r, const char *what)
{
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(drv, r, what);
}

/* The bench's spin kernel (templates/bench_spin.cu); NULL where it cannot be had. */
static CUfunction load_spin(convgen_context *ctx)
{
    const char *name = "convgen_tune_spin";
    tmpl_value *v = tmpl_map();
    char *src = NULL;
    cache_kernel k = {0};
    convgen_kernel_origin origin;
    CUfunction fn = NULL;
    tmpl_set_str(v, "kernel_name", name);
    if (cg_render_template("bench_spin.cu", v, &src) != CONVGEN_SUCCESS ||
        jit_get(src, name, ctx->arch, ctx->disk, &k, &origin) != CONVGEN_SUCCESS ||
        ctx_load_function(ctx, &k, src, name, &fn) != CONVGEN_SUCCESS)
        cg_warn("auto: no spin kernel (%s): small candidates are timed with their launch latency", convgen_last_error());
    tmpl_unref(v);
    cache_kernel_free(&k);
    free(src);
    return fn;
}

/* Copies of the operands enough that 4x the L2 passes between two uses of one, as the bench
 * has them (a layer of 2x the L2 or more needs one). */
static int sets_for(const convgen_context *ctx, const int64_t elems[3])
{
    double l2 = ctx->l2_bytes > 0 ? ctx->l2_bytes : 50 << 20;
    double bytes = 4.0 * (double)(elems[0] + elems[1] + elems[2]);
    if (bytes >= 2 * l2)
        return 1;
    double sets = ceil(4 * l2 / fmax(bytes, 1.0));
    return sets > MAX_SETS ? MAX_SETS : (int)sets;
}

/* Random inputs in [-1, 1) on the device (every copy the same), output buffers, host copies,
 * events and the spin kernel. The caller has made the context current. */
static convgen_status open_bench(tuner *t, bench_buffers *b)
{
    const cg_driver *drv = t->ctx->drv;
    memset(b, 0, sizeof *b);
    cg_problem_operand_elems(&t->problem, t->pass, b->elems);
    b->sets = sets_for(t->ctx, b->elems);
    for (int i = 0; i < 3; ++i)
        b->stride[i] = (b->elems[i] + SET_ALIGN_FLOATS - 1) / SET_ALIGN_FLOATS * SET_ALIGN_FLOATS;
    b->reference = malloc((size_t)b->elems[2] * sizeof(float));
    b->got = malloc((size_t)b->elems[2] * sizeof(float));
    for (int i = 0; i < 2; ++i)
        b->host_in[i] = malloc((size_t)b->elems[i] * sizeof(float));
    if (!b->host_in[0] || !b->host_in[1] || !b->reference || !b->got)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the tuner's host buffers");
    uint64_t state = 0x9E3779B97F4A7C15ull;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < 3 && s == CONVGEN_SUCCESS; ++i) {
        s = cuda(drv, drv->MemAlloc(&b->ptr[i], (size_t)(b->stride[i] * b->sets) * 4), "cuMemAlloc (the tuner's operands)");
        if (i < 2)
            cg_fill_random(b->host_in[i], b->elems[i], &state);
        for (int c = 0; i < 2 && c < b->sets && s == CONVGEN_SUCCESS; ++c)
            s = cuda(drv, drv->MemcpyHtoD(b->ptr[i] + (size_t)(c * b->stride[i]) * 4, b->host_in[i],
                                          (size_t)b->elems[i] * 4), "cuMemcpyHtoD");
    }
    for (int i = 0; i < 2 && s == CONVGEN_SUCCESS; ++i, ++b->event_count)
        s = cuda(drv, drv->EventCreate(&b->events[i], CU_EVENT_DEFAULT), "cuEventCreate");
    if (s == CONVGEN_SUCCESS)
        b->spin = load_spin(t->ctx);
    return s;
}

static void close_bench(tuner *t, bench_buffers *b)
{
    const cg_driver *drv = t->ctx->drv;
    for (int i = 0; i < 3; ++i)
        if (b->ptr[i])
            drv->MemFree(b->ptr[i]);
    for (int i = 0; i < b->event_count; ++i)
        drv->EventDestroy(b->events[i]);
    free(b->reference);
    free(b->got);
    free(b->host_in[0]);
    free(b->host_in[1]);
}

/* One run on copy `set` of the operands. */
static convgen_status execute(const tuner *t, convgen_plan *plan, bench_buffers *b, int set, CUdeviceptr ws,
                              size_t ws_bytes)
{
    const float *in[3];
    for (int i = 0; i < 3; ++i)
        in[i] = (const float *)(b->ptr[i] + (size_t)(set * b->stride[i]) * 4);
    /* A bias times the same as any k floats: w's first (w has at least k). */
    if (t->problem.epilogue & CG_EPILOGUE_BIAS)
        return convgen_execute_bias(plan, in[0], in[1], in[1], (float *)in[2], (void *)ws, ws_bytes, NULL);
    return convgen_execute(plan, in[0], in[1], (float *)in[2], (void *)ws, ws_bytes, NULL);
}

static convgen_status spin(const cg_driver *drv, const bench_buffers *b)
{
    unsigned long long ns = SPIN_NS;
    void *args[] = {&ns};
    return b->spin ? cuda(drv, drv->LaunchKernel(b->spin, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "the spin kernel")
                   : CONVGEN_SUCCESS;
}

static double relative_difference(const float *got, const float *ref, int64_t n)
{
    double d2 = 0, r2 = 0;
    for (int64_t i = 0; i < n; ++i) {
        double d = (double)got[i] - ref[i];
        d2 += d * d;
        r2 += (double)ref[i] * ref[i];
    }
    return isnan(d2) ? INFINITY : r2 > 0 ? sqrt(d2 / r2) : sqrt(d2);
}

/* One run on poisoned output, compared with the first candidate's. */
static convgen_status check_output(tuner *t, candidate *c, convgen_plan *plan, bench_buffers *b, CUdeviceptr ws,
                                   size_t ws_bytes)
{
    const cg_driver *drv = t->ctx->drv;
    size_t bytes = (size_t)b->elems[2] * 4;
    convgen_status s = cuda(drv, drv->MemsetD8(b->ptr[2], 0xFF, bytes), "cuMemsetD8 (poisoning the output)");
    if (s == CONVGEN_SUCCESS)
        s = execute(t, plan, b, 0, ws, ws_bytes);
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->CtxSynchronize(), "running the candidate");
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->MemcpyDtoH(b->got, b->ptr[2], bytes), "cuMemcpyDtoH");
    if (s != CONVGEN_SUCCESS)
        return s;
    double tolerance = t->base.allow_tf32 ? TF32_TOLERANCE : STRICT_TOLERANCE;
    /* The reference is the first output that agrees with the float64 reference on sampled
     * points; the others are compared with all of it. */
    if (!b->have_reference) {
        double error = cg_sampled_error(&t->problem, t->pass, b->host_in[0], b->host_in[1], b->host_in[1], b->got,
                                        REFERENCE_POINTS, 1);
        if (!(error <= tolerance))
            return cg_fail(CONVGEN_ERROR_INTERNAL, "its output differs from the float64 reference by %.3g on %d "
                           "sampled points (> %g): dropped", error, REFERENCE_POINTS, tolerance);
        memcpy(b->reference, b->got, bytes);
        b->have_reference = true;
    }
    c->pub.difference = relative_difference(b->got, b->reference, b->elems[2]);
    if (!(c->pub.difference <= tolerance))
        return cg_fail(CONVGEN_ERROR_INTERNAL, "its output differs from the first candidate's by %.3g (> %g): dropped",
                       c->pub.difference, tolerance);
    return CONVGEN_SUCCESS;
}

/* One run between two events, behind the spin; its milliseconds. */
static convgen_status timed_run(tuner *t, convgen_plan *plan, bench_buffers *b, CUdeviceptr ws, size_t ws_bytes,
                                double *ms)
{
    const cg_driver *drv = t->ctx->drv;
    int set = b->next;
    b->next = (b->next + 1) % b->sets;
    float elapsed = 0;
    convgen_status s = spin(drv, b);
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->EventRecord(b->events[0], NULL), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = execute(t, plan, b, set, ws, ws_bytes);
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->EventRecord(b->events[1], NULL), "cuEventRecord");
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->EventSynchronize(b->events[1]), "running the candidate");
    if (s == CONVGEN_SUCCESS)
        s = cuda(drv, drv->EventElapsedTime(&elapsed, b->events[0], b->events[1]), "cuEventElapsedTime");
    *ms = elapsed;
    return s;
}

/* The median of runs after warm-up runs: 21 for a candidate under a millisecond, where a
 * microsecond of noise matters, fewer for slower ones. */
static convgen_status time_runs(tuner *t, convgen_plan *plan, bench_buffers *b, CUdeviceptr ws, size_t ws_bytes,
                                double *ms)
{
    double times[MAX_RUNS] = {0};
    convgen_status s = CONVGEN_SUCCESS;
    *ms = -1;
    for (int r = 0; r < WARMUP_RUNS && s == CONVGEN_SUCCESS; ++r)
        s = timed_run(t, plan, b, ws, ws_bytes, &times[0]);
    int runs = times[0] < 1 ? MAX_RUNS : times[0] < 10 ? 7 : 3;
    if (t->effort == CONVGEN_EFFORT_EXHAUSTIVE && runs < 7)
        runs = 7;
    for (int r = 0; r < runs && s == CONVGEN_SUCCESS; ++r)
        s = timed_run(t, plan, b, ws, ws_bytes, &times[r]);
    if (s != CONVGEN_SUCCESS)
        return s;
    *ms = cg_median(times, runs);
    return s;
}

/* Plans, checks and times one candidate; *plan is left to the caller where it succeeded. */
static convgen_status try_candidate(tuner *t, candidate *c, bench_buffers *b, convgen_plan **plan)
{
    const cg_driver *drv = t->ctx->drv;
    convgen_status s = plan_conv_algo(t->ctx, t->desc, t->pass, c->pub.algo, &c->pub.options, plan);
    if (s != CONVGEN_SUCCESS)
        return s;
    size_t ws_bytes = 0;
    CUdeviceptr ws = 0;
    convgen_plan_workspace_size(*plan, &ws_bytes);
    c->pub.workspace_bytes = ws_bytes;
    if (ws_bytes && drv->MemAlloc(&ws, ws_bytes) != CUDA_SUCCESS)
        s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "no device memory for its %zu-byte workspace", ws_bytes);
    if (s == CONVGEN_SUCCESS)
        s = check_output(t, c, *plan, b, ws, ws_bytes);
    if (s == CONVGEN_SUCCESS)
        s = time_runs(t, *plan, b, ws, ws_bytes, &c->pub.ms);
    if (ws)
        drv->MemFree(ws);
    if (s != CONVGEN_SUCCESS) {
        convgen_plan_destroy(*plan);
        *plan = NULL;
    }
    return s;
}

/* Effort MEASURE leaves untimed (and uncompiled) the candidates the cost model rates more than
 * PRUNE_FACTOR times slower than its fastest: the 111 measured winners of the shipped wisdom
 * (bench/wisdom/, every layer and pass of bench/layers.txt) all lie within 1.9 times of their
 * layer's best estimate, and on a large 3-D layer one run of a hopeless candidate (direct on a
 * network's patch) takes a second. EXHAUSTIVE times them all. */
#define PRUNE_FACTOR 4.0

static void prune(tuner *t)
{
    double best = -1;
    for (int i = 0; i < t->count; ++i)
        if (t->c[i].pub.status == CONVGEN_SUCCESS && t->c[i].pub.estimate_ms >= 0 &&
            (best < 0 || t->c[i].pub.estimate_ms < best))
            best = t->c[i].pub.estimate_ms;
    for (int i = 0; i < t->count && best > 0; ++i) {
        candidate *c = &t->c[i];
        if (c->pub.status != CONVGEN_SUCCESS || c->pub.estimate_ms <= PRUNE_FACTOR * best)
            continue;
        char why[160];
        snprintf(why, sizeof why, "not timed: the cost model rates it %.1fx slower than the fastest candidate (effort "
                 "exhaustive times it)", c->pub.estimate_ms / best);
        set_note(c, CONVGEN_ERROR_NOT_SUPPORTED, why);
    }
}

/* A planner may list a knob's sweep at effort MEASURE too (winograd's tensor-core GEMM at every
 * tile), for the cost model to choose among: of the candidates of one algorithm whose knobs differ
 * only in their tile (each named), those it rates more than TILE_FACTOR times slower than the
 * best of them are not timed. On the H100's bench set (28 2-D layers, every pass, every tile
 * timed) the measured best tile of the tensor-core GEMM lay within 1.18x of the best estimate on
 * all 69 layer-passes it plans (bench/results/nvidia-h100-80gb-hbm3-2026-12-05-tune.csv). */
#define TILE_FACTOR 1.2

static bool has_tile(const cg_tuning *t)
{
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        if (t->winograd_m[d])
            return true;
    return false;
}

static bool same_but_tile(const cg_tuning *a, const cg_tuning *b)
{
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        if (a->fourier_size[d] != b->fourier_size[d])
            return false;
    return a->gemm == b->gemm && a->weights == b->weights && a->tf32 == b->tf32 &&
           a->workspace_limit == b->workspace_limit;
}

static void prune_tiles(tuner *t)
{
    cg_tuning knobs[MAX_CANDIDATES];
    for (int i = 0; i < t->count; ++i)
        if (plan_tuning_of(&t->c[i].pub.options, &knobs[i]) != CONVGEN_SUCCESS)
            knobs[i] = (cg_tuning){0}; /* has no tile: left alone */
    for (int i = 0; i < t->count; ++i) {
        candidate *c = &t->c[i];
        if (c->pub.status != CONVGEN_SUCCESS || c->pub.estimate_ms < 0 || !has_tile(&knobs[i]))
            continue;
        double best = c->pub.estimate_ms;
        for (int j = 0; j < t->count; ++j)
            if (t->c[j].pub.algo == c->pub.algo && t->c[j].pub.estimate_ms >= 0 && has_tile(&knobs[j]) &&
                same_but_tile(&knobs[i], &knobs[j]) && t->c[j].pub.estimate_ms < best)
                best = t->c[j].pub.estimate_ms;
        if (c->pub.estimate_ms <= TILE_FACTOR * best)
            continue;
        char why[160];
        snprintf(why, sizeof why, "not timed: the cost model rates it %.2fx slower than its best tile (effort "
                 "exhaustive times it)", c->pub.estimate_ms / best);
        set_note(c, CONVGEN_ERROR_NOT_SUPPORTED, why);
    }
}

/* Times every candidate that applies (at effort MEASURE, those the cost model does not rule
 * out) and keeps the fastest plan. */
static convgen_status measure(tuner *t, int *winner, convgen_plan **best)
{
    convgen_context *ctx = t->ctx;
    if (t->effort == CONVGEN_EFFORT_MEASURE) {
        prune(t);
        prune_tiles(t);
    }
    convgen_status s = compile_candidates(t);
    if (s != CONVGEN_SUCCESS)
        return s;
    CUresult r = ctx->drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(ctx->drv, r, "cuCtxPushCurrent");
    bench_buffers b;
    s = open_bench(t, &b);
    for (int i = 0; i < t->count && s == CONVGEN_SUCCESS; ++i) {
        candidate *c = &t->c[i];
        convgen_plan *plan = NULL;
        if (c->pub.status == CONVGEN_SUCCESS) {
            convgen_status cs = try_candidate(t, c, &b, &plan);
            if (cs != CONVGEN_SUCCESS) {
                set_note(c, cs, convgen_last_error());
                c->pub.ms = -1;
            }
            t->unsure |= cs == CONVGEN_ERROR_CUDA || cs == CONVGEN_ERROR_OUT_OF_MEMORY;
            /* A kernel that faulted leaves the context unusable (sticky errors): stop there. */
            if (cs == CONVGEN_ERROR_CUDA && ctx->drv->CtxSynchronize() != CUDA_SUCCESS)
                s = cg_fail(CONVGEN_ERROR_CUDA, "auto: candidate %s failed and left the CUDA context unusable (%s): "
                            "no choice is made", convgen_algo_name(c->pub.algo), c->pub.note);
        }
        if (plan && (*winner < 0 || c->pub.ms < t->c[*winner].pub.ms)) {
            convgen_plan_destroy(*best);
            *best = plan, *winner = i;
        } else {
            convgen_plan_destroy(plan);
        }
        progress(t);
    }
    close_bench(t, &b);
    CUcontext popped;
    ctx->drv->CtxPopCurrent(&popped);
    if (s == CONVGEN_SUCCESS && *winner < 0)
        s = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "auto: no candidate ran for this layer and pass (convgen tune lists why)");
    return s;
}

/* Plans the candidates in the cost model's order until one plans. */
static convgen_status estimate(tuner *t, int *winner, convgen_plan **best)
{
    int order[MAX_CANDIDATES], n = 0;
    for (int i = 0; i < t->count; ++i, progress(t))
        if (t->c[i].pub.status == CONVGEN_SUCCESS)
            order[n++] = i;
    for (int a = 1; a < n; ++a) /* insertion sort by estimate: n is small */
        for (int b = a; b > 0 && t->c[order[b]].pub.estimate_ms < t->c[order[b - 1]].pub.estimate_ms; --b) {
            int x = order[b];
            order[b] = order[b - 1], order[b - 1] = x;
        }
    convgen_status s = CONVGEN_ERROR_NOT_SUPPORTED;
    for (int k = 0; k < n && s != CONVGEN_SUCCESS; ++k) {
        candidate *c = &t->c[order[k]];
        s = plan_conv_algo(t->ctx, t->desc, t->pass, c->pub.algo, &c->pub.options, best);
        if (s != CONVGEN_SUCCESS)
            set_note(c, s, convgen_last_error());
        else
            *winner = order[k];
    }
    return s == CONVGEN_SUCCESS ? s : cg_fail(s, "auto: no candidate plans for this layer and pass (convgen tune lists why)");
}

/* ---- wisdom ---- */

static wisdom_key key_of(const tuner *t, bool any_gpu)
{
    wisdom_key k = {.layer = t->problem, .pass = t->pass, .tf32 = t->base.allow_tf32 != 0,
                    .workspace_limit = t->base.workspace_limit > INT64_MAX ? INT64_MAX : t->base.workspace_limit};
    /* Every algorithm applies an epilogue as it stores y at the same cost: the layer's choice
     * without one holds with one, and wisdom files know no epilogue. */
    k.layer.epilogue = 0;
    wisdom_gpu_name(k.gpu, sizeof k.gpu, any_gpu ? "" : t->ctx->device_name);
    snprintf(k.arch, sizeof k.arch, "%s", t->ctx->arch);
    snprintf(k.version, sizeof k.version, "%s", CONVGEN_VERSION_STRING);
    return k;
}

/* The first knob the caller fixed (`asked`) that wisdom's choice (`chosen`) has otherwise, or
 * NULL. A choice that names no weights has them BEFORE, its planner's default. */
static const char *knob_differing(const cg_tuning *asked, const cg_tuning *chosen)
{
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d) {
        if (asked->fourier_size[d] && asked->fourier_size[d] != chosen->fourier_size[d])
            return "fourier_size";
        if (asked->winograd_m[d] && asked->winograd_m[d] != chosen->winograd_m[d])
            return "winograd_m";
    }
    if (asked->gemm && asked->gemm != chosen->gemm)
        return "gemm";
    if (asked->weights && asked->weights != (chosen->weights ? chosen->weights : CONVGEN_WEIGHTS_BEFORE))
        return "weights";
    return NULL;
}

/* Takes a wisdom entry's choice into plan options o where the caller's options allow it: each knob
 * the caller fixed that the entry's planner reads (o printed as that planner's variant and read
 * back) has the same value in the entry's variant. The knobs the variant does not give are left
 * to the planner; the caller's weights (BEFORE) are kept. NOT_SUPPORTED, naming the knob, where
 * the caller asked for another. */
static convgen_status take_variant(convgen_plan_options *o, const wisdom_entry *e)
{
    const cg_planner *pl = cg_planner_of(e->algo);
    const int rank = e->key.layer.rank;
    cg_tuning chosen = {0}, fixed, asked = {0};
    char variant[CG_VARIANT_MAX];
    convgen_status s = pl ? cg_variant_parse(pl, e->variant, rank, &chosen)
                          : cg_fail(CONVGEN_ERROR_INVALID_VALUE, "algo = %d is not a known algorithm", (int)e->algo);
    if (s == CONVGEN_SUCCESS)
        s = plan_tuning_of(o, &fixed);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_variant_print(pl, &fixed, rank, variant, sizeof variant);
    if ((s = cg_variant_parse(pl, variant, rank, &asked)) != CONVGEN_SUCCESS)
        return s;
    const char *knob = knob_differing(&asked, &chosen);
    if (knob)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "wisdom's choice, %s \"%s\", has another options->%s than the "
                       "caller's \"%s\"", convgen_algo_name(e->algo), e->variant, knob, variant);
    const int weights = o->weights;
    plan_options_take_knobs(o, &chosen);
    if (weights == CONVGEN_WEIGHTS_BEFORE)
        o->weights = weights; /* the caller's, kept */
    return CONVGEN_SUCCESS;
}

/* A variant as its planner prints it, the weights' default (BEFORE) as unnamed. */
static void print_variant(const cg_planner *pl, cg_tuning v, int rank, char *buf, size_t size)
{
    if (v.weights == CONVGEN_WEIGHTS_BEFORE)
        v.weights = 0;
    cg_variant_print(pl, &v, rank, buf, size);
}

/* Whether every candidate the caller's fixed knobs allow was a candidate of a tuning at `effort`
 * with nothing fixed, the set wisdom's choice won in: each applicable planner's variants, as
 * printed. Where one was not (a tile or GEMM that tuning would not have timed), wisdom's choice
 * says nothing of it. */
static bool allowed_were_candidates(const tuner *t, int effort)
{
    cg_tuning fixed, none = {0}, allowed[MAX_CANDIDATES], all[MAX_CANDIDATES];
    if (plan_tuning_of(&t->base, &fixed) != CONVGEN_SUCCESS)
        return false;
    for (int i = 0; i < cg_planner_count(); ++i) {
        const cg_planner *p = cg_planner_at(i);
        if (!p->variants || p->applicable(&t->problem, t->pass) != CONVGEN_SUCCESS)
            continue;
        int na = p->variants(&t->problem, t->pass, effort, &fixed, allowed, MAX_CANDIDATES),
            nall = p->variants(&t->problem, t->pass, effort, &none, all, MAX_CANDIDATES);
        for (int a = 0; a < na; ++a) {
            char want[CG_VARIANT_MAX], have[CG_VARIANT_MAX];
            bool found = false;
            print_variant(p, allowed[a], t->problem.rank, want, sizeof want);
            for (int b = 0; b < nall && !found; ++b) {
                print_variant(p, all[b], t->problem.rank, have, sizeof have);
                found = strcmp(want, have) == 0;
            }
            if (!found)
                return false;
        }
    }
    return true;
}

/* Wisdom's choice for the layer where it answers what the caller asked: its knobs as the caller
 * fixed them (take_variant), and every candidate those allow among the ones it won over. */
static convgen_status wisdom_choice(const tuner *t, int effort, wisdom_entry *e, convgen_plan_options *o)
{
    wisdom_key key = key_of(t, t->ctx->offline);
    if (!wisdom_lookup(&key, effort, e)) {
        char layer[256];
        cg_problem_describe(&t->problem, layer, sizeof layer);
        cg_debug("auto: no wisdom for %s %s on \"%s\" %s: tuning", convgen_pass_name(t->pass), layer, key.gpu, key.arch);
        return CONVGEN_ERROR_NOT_SUPPORTED;
    }
    *o = t->base;
    convgen_status s = take_variant(o, e);
    if (s == CONVGEN_SUCCESS && t->fixes && !allowed_were_candidates(t, e->effort))
        s = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the caller's fixed knobs allow candidates that wisdom's choice, %s "
                    "\"%s\", was not measured against", convgen_algo_name(e->algo), e->variant);
    if (s == CONVGEN_ERROR_NOT_SUPPORTED)
        cg_debug("auto: %s: tuning among the candidates the caller allows", convgen_last_error());
    return s;
}

static convgen_status from_wisdom(tuner *t, int effort, convgen_plan **out, tune_report *report)
{
    wisdom_entry e;
    convgen_plan_options o;
    convgen_status s = wisdom_choice(t, effort, &e, &o);
    if (s == CONVGEN_ERROR_NOT_SUPPORTED) /* no entry, or not one for what the caller fixed */
        return s;
    if (s == CONVGEN_SUCCESS)
        s = plan_conv_algo(t->ctx, t->desc, t->pass, e.algo, &o, out);
    if (s != CONVGEN_SUCCESS) {
        cg_warn("auto: wisdom's choice, %s, failed (%s): tuning again", convgen_algo_name(e.algo),
                convgen_last_error());
        return s;
    }
    bool estimated = e.effort == CONVGEN_EFFORT_ESTIMATE; /* the cost model's, remembered */
    report->choice = (convgen_choice){.algo = e.algo, .options = o, .effort = e.effort, .ms = estimated ? -1 : e.ms,
                                      .chosen_by = estimated ? CONVGEN_CHOSEN_BY_ESTIMATE : CONVGEN_CHOSEN_BY_WISDOM,
                                      .winner = -1};
    return CONVGEN_SUCCESS;
}

/* The winner into wisdom: measured, also into $CONVGEN_WISDOM; estimated, provisionally (in
 * this process only, under any measured entry), so the cost model ranks a shape once. */
static void remember(tuner *t, const candidate *c, bool measured)
{
    wisdom_entry e = {.key = key_of(t, t->ctx->offline && !measured), .effort = t->effort, .algo = c->pub.algo,
                      .ms = measured ? c->pub.ms : 0, .provisional = !measured};
    cg_tuning tuning;
    if (plan_tuning_of(&c->pub.options, &tuning) != CONVGEN_SUCCESS)
        return;
    cg_variant_print(cg_planner_of(c->pub.algo), &tuning, t->problem.rank, e.variant, sizeof e.variant);
    if (measured) /* what it won among, so that a later convgen with other candidates tunes again */
        e.candidates = cg_candidates_hash(&e.key.layer, e.key.pass, e.effort, e.key.tf32, e.key.workspace_limit);
    if (wisdom_add(&e) == CONVGEN_SUCCESS && measured)
        wisdom_save_env();
}

/* ---- AUTO ---- */

static convgen_status report_of(tuner *t, int winner, convgen_chosen_by by, tune_report *report)
{
    report->candidates = malloc(sizeof *report->candidates * (size_t)t->count);
    if (!report->candidates)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the tuning report");
    for (int i = 0; i < t->count; ++i)
        report->candidates[i] = t->c[i].pub;
    const candidate *w = &t->c[winner];
    report->choice = (convgen_choice){.algo = w->pub.algo, .options = w->pub.options, .chosen_by = by,
                                      .effort = t->effort, .ms = w->pub.ms, .candidate_count = t->count,
                                      .winner = winner};
    return CONVGEN_SUCCESS;
}

convgen_status tune_auto(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                         const convgen_plan_options *options, convgen_plan **out, tune_report *report)
{
    memset(report, 0, sizeof *report);
    tuner tv = {.ctx = ctx, .desc = desc, .pass = pass, .caller = options}, *t = &tv;
    if (options)
        t->base = *options;
    t->base.progress = NULL, t->base.progress_user = NULL;
    t->effort = t->base.effort;
    convgen_status s = cg_problem_init(&t->problem, desc);
    if (s == CONVGEN_SUCCESS)
        s = cg_epilogue_check(&t->problem, pass);
    if (s == CONVGEN_SUCCESS) {
        wisdom_load_env();
        t->fixes = fixes_variants(&t->base);
        bool timed = !ctx->offline && t->effort != CONVGEN_EFFORT_ESTIMATE;
        if (from_wisdom(t, timed ? t->effort : CONVGEN_EFFORT_ESTIMATE, out, report) == CONVGEN_SUCCESS)
            return CONVGEN_SUCCESS; /* nothing allocated: a tuned shape plans in microseconds */
        if (!(t->c = calloc(MAX_CANDIDATES, sizeof *t->c)))
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the tuner's candidates");
        list_candidates(t);
        generate_candidates(t);
        int winner = -1;
        if (!timed)
            t->effort = CONVGEN_EFFORT_ESTIMATE;
        s = timed ? measure(t, &winner, out) : estimate(t, &winner, out);
        free_generated(t);
        if (s == CONVGEN_SUCCESS)
            s = report_of(t, winner, timed ? CONVGEN_CHOSEN_BY_MEASUREMENT : CONVGEN_CHOSEN_BY_ESTIMATE, report);
        /* a winner among the candidates a caller's fixed knobs allow is not the layer's answer */
        if (s == CONVGEN_SUCCESS && !t->fixes && !t->unsure)
            remember(t, &t->c[winner], timed);
        if (s != CONVGEN_SUCCESS) {
            convgen_plan_destroy(*out);
            *out = NULL;
        }
    }
    free(t->c);
    return s;
}

/* ---- choosing without planning (build-time kernel sets) ---- */

convgen_status tune_choose(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                           const convgen_plan_options *options, convgen_algo *algo, convgen_plan_options *chosen,
                           convgen_chosen_by *by)
{
    tuner tv = {.ctx = ctx, .desc = desc, .pass = pass, .effort = CONVGEN_EFFORT_ESTIMATE}, *t = &tv;
    if (options)
        t->base = *options;
    t->base.progress = NULL, t->base.progress_user = NULL;
    convgen_status s = cg_problem_init(&t->problem, desc);
    if (s == CONVGEN_SUCCESS)
        s = cg_epilogue_check(&t->problem, pass);
    if (s != CONVGEN_SUCCESS)
        return s;
    wisdom_load_env();
    wisdom_entry e;
    t->fixes = fixes_variants(&t->base);
    if (wisdom_choice(t, CONVGEN_EFFORT_MEASURE, &e, chosen) == CONVGEN_SUCCESS) {
        *algo = e.algo, *by = CONVGEN_CHOSEN_BY_WISDOM;
        return CONVGEN_SUCCESS;
    }
    *chosen = t->base;
    if (!(t->c = calloc(MAX_CANDIDATES, sizeof *t->c)))
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the tuner's candidates");
    list_candidates(t);
    generate_candidates(t);
    free_generated(t);
    int best = -1;
    for (int i = 0; i < t->count; ++i)
        if (t->c[i].pub.status == CONVGEN_SUCCESS && (best < 0 || t->c[i].pub.estimate_ms < t->c[best].pub.estimate_ms))
            best = i;
    if (best >= 0)
        *algo = t->c[best].pub.algo, *chosen = t->c[best].pub.options, *by = CONVGEN_CHOSEN_BY_ESTIMATE;
    else
        s = cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "auto: no algorithm covers this layer and pass");
    free(t->c);
    return s;
}

/* The algorithm's name, then its planner's variant string of the options' knobs. */
void tune_describe(convgen_algo algo, const convgen_plan_options *o, int rank, char *buf, size_t size)
{
    const cg_planner *pl = cg_planner_of(algo);
    char variant[CG_VARIANT_MAX] = "";
    cg_tuning tuning;
    if (pl && plan_tuning_of(o, &tuning) == CONVGEN_SUCCESS)
        cg_variant_print(pl, &tuning, rank, variant, sizeof variant);
    snprintf(buf, size, "%s%s%s", convgen_algo_name(algo), variant[0] ? " " : "", variant);
}

/* ---- the public entry: one algorithm's plan, or AUTO's ---- */

convgen_status convgen_plan_conv(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                 convgen_algo algo, convgen_plan **out)
{
    return convgen_plan_conv_ex(ctx, desc, pass, algo, NULL, out);
}

convgen_status convgen_plan_conv_ex(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                    convgen_algo algo, const convgen_plan_options *options, convgen_plan **out)
{
    if (algo != CONVGEN_ALGO_AUTO)
        return plan_conv_algo(ctx, desc, pass, algo, options, out);
    cg_tuning checked;
    convgen_status s = plan_request(options, out, &checked);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (!ctx)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "ctx is NULL");
    tune_report report;
    s = tune_auto(ctx, desc, pass, options, out, &report);
    if (s == CONVGEN_SUCCESS)
        plan_set_choice(*out, &report.choice, report.candidates);
    return s;
}
