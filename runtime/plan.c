/* Plans: one layer and pass, its generated kernels compiled (or found in a cache) and loaded. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "fft/fft_problem.h"
#include "generate.h"
#include "net/pool_problem.h"
#include "jit.h"
#include "lib_steps.h"
#include "plan.h"
#include "plan_cache.h"
#include "problem.h"
#include "util.h"

struct convgen_plan {
    convgen_context *ctx;
    const cg_problem_kind *kind; /* its problem's: cg_conv_kind (convgen_execute), cg_fft_kind
                                    (convgen_execute_fft) or cg_pool_kind (convgen_execute_pool) */
    plan_program *prog;      /* the generated program and its loaded kernels, shared (plan_cache.c) */
    const cg_generated *gen; /* prog's */
    convgen_kernel_info info[CG_MAX_KERNELS];
    lib_steps *lib;          /* prog's library calls; NULL offline or without */
    int64_t workspace_bytes; /* prog's */
    convgen_choice choice;   /* how the algorithm was chosen (AUTO) */
    convgen_candidate *candidates; /* choice.candidate_count of them */
};

/* A plan's kind in words, and the call that runs it: for the messages that send a caller there. */
static const char *kind_words(const convgen_plan *plan)
{
    return plan->kind == &cg_fft_kind ? "an FFT" : plan->kind == &cg_pool_kind ? "a pooling" : "a convolution";
}

static const char *kind_runner(const convgen_plan *plan)
{
    return plan->kind == &cg_fft_kind    ? "convgen_execute_fft"
           : plan->kind == &cg_pool_kind ? "convgen_execute_pool"
                                         : "convgen_execute";
}

/* Fails unless the plan is of `kind`, naming the call that runs it. */
static convgen_status check_kind(const convgen_plan *plan, const cg_problem_kind *kind)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (plan->kind != kind)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is %s plan: run it with %s", kind_words(plan), kind_runner(plan));
    return CONVGEN_SUCCESS;
}

static void fill_info(convgen_kernel_info *info, const cg_kernel *k, const cache_kernel *c, convgen_kernel_origin origin)
{
    info->name = k->name;
    memcpy(info->grid, k->grid, sizeof info->grid);
    memcpy(info->block, k->block, sizeof info->block);
    info->registers = c->registers;
    info->shared_bytes = c->shared_bytes;
    info->dynamic_shared_bytes = (int)k->shared_bytes;
    info->stack_bytes = c->stack_bytes;
    info->spill_store_bytes = c->spill_store_bytes;
    info->spill_load_bytes = c->spill_load_bytes;
    info->compile_ms = c->compile_ms;
    info->origin = origin;
}

static convgen_status allow_shared_memory(convgen_context *ctx, CUfunction fn, unsigned bytes);

/* Compiles (or finds in the kernel caches) a new program's kernels, all at once, then loads
 * them in order. */
static convgen_status load_kernels(convgen_context *ctx, plan_program *prog)
{
    int n = prog->gen.kernel_count;
    jit_job jobs[CG_MAX_KERNELS] = {0};
    for (int i = 0; i < n; ++i)
        jobs[i].source = prog->gen.kernels[i].source, jobs[i].name = prog->gen.kernels[i].name;
    jit_get_all(jobs, n, ctx->arch, ctx->disk);
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < n; ++i) {
        const cg_kernel *k = &prog->gen.kernels[i];
        if (s == CONVGEN_SUCCESS && jobs[i].status != CONVGEN_SUCCESS)
            s = jit_job_fail(&jobs[i]);
        if (s == CONVGEN_SUCCESS) {
            fill_info(&prog->info[i], k, &jobs[i].compiled, jobs[i].origin);
            s = ctx_load_function(ctx, &jobs[i].compiled, k->source, k->name, &prog->fn[i]);
        }
        if (s == CONVGEN_SUCCESS)
            s = allow_shared_memory(ctx, prog->fn[i], k->shared_bytes);
        jit_job_free(&jobs[i]);
    }
    return s;
}

/* Sets up a new program's library calls, whose work area follows gen's buffers. Offline, cuFFT
 * and cuBLAS cannot plan: the program keeps its kernels and cannot execute anyway. */
static convgen_status setup_library_steps(convgen_context *ctx, plan_program *prog)
{
    prog->workspace_bytes = prog->gen.workspace_bytes;
    if (prog->gen.step_count == 0 || ctx->offline)
        return CONVGEN_SUCCESS;
    int64_t work_offset = (prog->gen.workspace_bytes + 255) / 256 * 256, work = 0;
    CUresult r = ctx->drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(ctx->drv, r, "cuCtxPushCurrent");
    convgen_status s = lib_steps_create(ctx, &prog->gen, work_offset, &prog->lib, &work);
    CUcontext popped;
    ctx->drv->CtxPopCurrent(&popped);
    if (s == CONVGEN_SUCCESS && work > 0)
        prog->workspace_bytes = work_offset + work;
    return s;
}

/* What a program is generated from: a spec (a problem of some kind) for a target. */
typedef struct program_source {
    cg_spec spec;
    cg_target target;
} program_source;

/* The plan's program: from the context's memory cache, else generated, compiled and loaded
 * (and cached). A plan from the cache reports its kernels as memory-cache hits. */
static convgen_status obtain_program(convgen_plan *plan, const program_source *src)
{
    convgen_context *ctx = plan->ctx;
    plan_key key;
    plan_key_of(&key, &src->spec, &src->target);
    plan_program *prog = plan_cache_find(ctx, &key);
    bool hit = prog != NULL;
    if (!prog) {
        if (!(prog = calloc(1, sizeof *prog)))
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a plan's program");
        prog->refs = 1;
        convgen_status s = cg_generate_spec(&src->spec, &src->target, &prog->gen);
        if (s == CONVGEN_SUCCESS)
            s = load_kernels(ctx, prog);
        if (s == CONVGEN_SUCCESS)
            s = setup_library_steps(ctx, prog);
        if (s != CONVGEN_SUCCESS) {
            plan_program_release(ctx, prog);
            return s;
        }
        plan_cache_insert(ctx, prog, &key);
    }
    plan->prog = prog;
    plan->gen = &prog->gen;
    plan->lib = prog->lib;
    plan->workspace_bytes = prog->workspace_bytes;
    memcpy(plan->info, prog->info, sizeof plan->info);
    for (int i = 0; hit && i < prog->gen.kernel_count; ++i)
        plan->info[i].origin = CONVGEN_FROM_MEMORY_CACHE;
    return CONVGEN_SUCCESS;
}

/* Dynamic shared memory beyond 48 KiB must be asked for, per function. */
static convgen_status allow_shared_memory(convgen_context *ctx, CUfunction fn, unsigned bytes)
{
    if (ctx->offline || bytes <= 48 * 1024)
        return CONVGEN_SUCCESS;
    const cg_driver *drv = ctx->drv;
    CUresult r = drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "cuCtxPushCurrent");
    r = drv->FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
    CUcontext popped;
    drv->CtxPopCurrent(&popped);
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(drv, r, "cuFuncSetAttribute (dynamic shared memory)");
}

/* A new plan on ctx, counted by the context until it is destroyed. */
static convgen_status plan_new(convgen_context *ctx, convgen_plan **out, convgen_plan **plan)
{
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    *out = NULL;
    if (!ctx)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "ctx is NULL");
    if (!(*plan = calloc(1, sizeof **plan)))
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a plan");
    (*plan)->ctx = ctx;
    ctx_count_plan(ctx, +1);
    return CONVGEN_SUCCESS;
}


/* Obtains the program (s: how the problem's validation went), sets up the library steps and
 * hands the plan out, or frees it. */
static convgen_status plan_finish(convgen_plan *plan, convgen_status s, const program_source *src,
                                  size_t workspace_limit, convgen_plan **out, int64_t *needed)
{
    *needed = 0;
    plan->kind = src->spec.problem.kind;
    if (s == CONVGEN_SUCCESS)
        s = obtain_program(plan, src);
    if (plan->gen)
        *needed = plan->workspace_bytes;
    if (s == CONVGEN_SUCCESS && workspace_limit && (uint64_t)plan->workspace_bytes > workspace_limit)
        s = cg_fail(CONVGEN_ERROR_WORKSPACE_LIMIT, "the %s plan needs %lld bytes of workspace, options->workspace_limit is %zu",
                    convgen_algo_name(plan->gen->algo), (long long)plan->workspace_bytes, workspace_limit);
    if (s != CONVGEN_SUCCESS) {
        convgen_plan_destroy(plan);
        return s;
    }
    *out = plan;
    return CONVGEN_SUCCESS;
}

convgen_status plan_tuning_of(const convgen_plan_options *o, cg_tuning *t)
{
    memset(t, 0, sizeof *t);
    if (!o)
        return CONVGEN_SUCCESS;
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d) {
        if (o->fourier_size[d] < 0)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld must be >= 0 (0: chosen)", d,
                           (long long)o->fourier_size[d]);
        t->fourier_size[d] = o->fourier_size[d];
        if (o->winograd_m[d] < 0 || o->winograd_m[d] > 12)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->winograd_m[%d] = %d must be in [0, 12] (0: chosen)", d,
                           o->winograd_m[d]);
        t->winograd_m[d] = o->winograd_m[d];
    }
    if (o->gemm < CONVGEN_GEMM_CHOSEN || o->gemm > CONVGEN_GEMM_TENSOR)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "options->gemm = %d is not CONVGEN_GEMM_CHOSEN, _CUBLAS, _GENERATED or _TENSOR", o->gemm);
    t->gemm = o->gemm;
    if (o->weights < CONVGEN_WEIGHTS_CHOSEN || o->weights > CONVGEN_WEIGHTS_INSIDE)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "options->weights = %d is not CONVGEN_WEIGHTS_CHOSEN, _BEFORE or _INSIDE", o->weights);
    t->weights = o->weights;
    if (o->effort < CONVGEN_EFFORT_MEASURE || o->effort > CONVGEN_EFFORT_EXHAUSTIVE)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "options->effort = %d is not CONVGEN_EFFORT_MEASURE, _ESTIMATE or _EXHAUSTIVE", o->effort);
    t->tf32 = o->allow_tf32 != 0;
    t->workspace_limit = o->workspace_limit > INT64_MAX ? INT64_MAX : (int64_t)o->workspace_limit;
    return CONVGEN_SUCCESS;
}

void plan_options_take_knobs(convgen_plan_options *o, const cg_tuning *t)
{
    memcpy(o->fourier_size, t->fourier_size, sizeof o->fourier_size);
    memcpy(o->winograd_m, t->winograd_m, sizeof o->winograd_m);
    o->gemm = t->gemm;
    o->weights = t->weights;
}

cg_target plan_target_of(const convgen_context *ctx)
{
    cg_target t = {ctx->sm_count, ctx->shared_per_block, ctx->shared_per_sm, ctx->l2_bytes, ctx->max_cluster, ""};
    snprintf(t.arch, sizeof t.arch, "%s", ctx->arch);
    return t;
}

static convgen_status plan_conv_once(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                     convgen_algo algo, const cg_tuning *tune, size_t limit, convgen_plan **out,
                                     int64_t *needed)
{
    convgen_plan *plan;
    convgen_status s = plan_new(ctx, out, &plan);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_problem p;
    program_source src = {{cg_conv_ref(&p), pass, algo, tune}, plan_target_of(ctx)};
    s = cg_problem_init(&p, desc);
    if (s == CONVGEN_SUCCESS && (pass < CONVGEN_FPROP || pass > CONVGEN_ACCGRAD))
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "pass = %d is not FPROP, BPROP or ACCGRAD", (int)pass);
    return plan_finish(plan, s, &src, limit, out, needed);
}

void plan_set_choice(convgen_plan *plan, const convgen_choice *choice, convgen_candidate *candidates)
{
    plan->choice = *choice;
    plan->choice.options.progress = NULL, plan->choice.options.progress_user = NULL;
    plan->candidates = candidates;
}

convgen_status plan_request(const convgen_plan_options *options, convgen_plan **out, cg_tuning *tune)
{
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    *out = NULL;
    return plan_tuning_of(options, tune);
}

convgen_status plan_conv_algo(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                              convgen_algo algo, const convgen_plan_options *options, convgen_plan **out)
{
    cg_tuning tune;
    convgen_status s = plan_request(options, out, &tune);
    if (s != CONVGEN_SUCCESS)
        return s;
    size_t limit = options ? options->workspace_limit : 0;
    int64_t needed = 0;
    s = plan_conv_once(ctx, desc, pass, algo, &tune, limit, out, &needed);
    /* The FFT planners size sub-batches with cufft's cuFFT work area estimated (generator/fftconv/program.c,
     * choose_batch). Where the real one made the plan too large, it tries again with its budget
     * cut by the excess (twice: each try corrects the estimate), then with the smallest
     * sub-batches, whose need is the least there is. */
    const cg_planner *planner = cg_planner_of(algo);
    bool batches = planner && (planner->flags & CG_PLANNER_SUB_BATCHES);
    for (int retry = 0; batches && retry < 3 && s == CONVGEN_ERROR_WORKSPACE_LIMIT; ++retry) {
        int64_t excess = needed - (int64_t)limit;
        tune.workspace_limit = retry < 2 && tune.workspace_limit > excess ? tune.workspace_limit - excess : 1;
        s = plan_conv_once(ctx, desc, pass, algo, &tune, limit, out, &needed);
        if (tune.workspace_limit == 1)
            break;
    }
    if (s == CONVGEN_ERROR_WORKSPACE_LIMIT)
        cg_fail(s, "the %s plan needs %s%lld bytes of workspace, options->workspace_limit is %zu",
                convgen_algo_name(algo), batches ? "at least " : "", (long long)needed, limit);
    if (s == CONVGEN_SUCCESS) { /* the caller's choice */
        (*out)->choice = (convgen_choice){.algo = algo, .chosen_by = CONVGEN_CHOSEN_BY_CALLER, .ms = -1, .winner = -1};
        if (options)
            (*out)->choice.options = *options;
        (*out)->choice.options.progress = NULL, (*out)->choice.options.progress_user = NULL;
    }
    return s;
}

/* A plan of a kind with one planner (the batched FFT, pooling), its problem already checked
 * into `problem` with status `checked`: the arguments checked first, as for every plan. */
static convgen_status plan_of_kind(convgen_context *ctx, cg_problem_ref problem, convgen_status checked,
                                   convgen_plan **out)
{
    convgen_plan *plan;
    convgen_status s = plan_new(ctx, out, &plan);
    if (s != CONVGEN_SUCCESS)
        return s;
    program_source src = {{.problem = problem}, plan_target_of(ctx)};
    int64_t needed;
    return plan_finish(plan, checked, &src, 0, out, &needed);
}

convgen_status convgen_plan_fft(convgen_context *ctx, const convgen_fft_desc *desc, convgen_plan **out)
{
    cg_fft_problem p;
    convgen_status s = cg_fft_problem_init(&p, desc);
    return plan_of_kind(ctx, cg_fft_ref(&p), s, out);
}

convgen_status convgen_plan_pool(convgen_context *ctx, const convgen_pool_desc *desc, convgen_plan **out)
{
    cg_pool_problem p;
    convgen_status s = cg_pool_problem_init(&p, desc);
    return plan_of_kind(ctx, cg_pool_ref(&p), s, out);
}

convgen_status convgen_pool_output(const convgen_pool_desc *desc, int64_t *batch, int64_t out[CONVGEN_MAX_RANK])
{
    if (!batch || !out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", batch ? "out" : "batch");
    cg_pool_problem p;
    convgen_status s = cg_pool_problem_init(&p, desc);
    if (s != CONVGEN_SUCCESS)
        return s;
    *batch = p.mode == CONVGEN_POOL_FRAGMENTS ? p.n * p.fragments : p.n;
    for (int i = 0; i < p.rank; ++i)
        out[i] = p.out[3 - p.rank + i];
    return CONVGEN_SUCCESS;
}

void convgen_plan_destroy(convgen_plan *plan)
{
    if (!plan)
        return;
    convgen_context *ctx = plan->ctx;
    ctx_count_plan(ctx, -1);
    free(plan->candidates);
    plan_program_release(ctx, plan->prog); /* the program may stay cached; its modules belong to the context */
    free(plan);
}

convgen_status convgen_plan_workspace_size(const convgen_plan *plan, size_t *bytes)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (!bytes)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "bytes is NULL");
    *bytes = (size_t)plan->workspace_bytes;
    return CONVGEN_SUCCESS;
}

int convgen_plan_kernel_count(const convgen_plan *plan) { return plan ? plan->gen->kernel_count : 0; }

const char *convgen_plan_source(const convgen_plan *plan, int i)
{
    return plan && i >= 0 && i < plan->gen->kernel_count ? plan->gen->kernels[i].source : NULL;
}

convgen_status convgen_plan_kernel_info(const convgen_plan *plan, int i, convgen_kernel_info *info)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (i < 0 || i >= plan->gen->kernel_count)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "kernel index %d must be in 0..%d", i, plan->gen->kernel_count - 1);
    if (!info)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "info is NULL");
    *info = plan->info[i];
    return CONVGEN_SUCCESS;
}

convgen_status convgen_plan_choice(const convgen_plan *plan, convgen_choice *choice)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (!choice)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "choice is NULL");
    if (plan->kind != &cg_conv_kind)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is %s plan: it has no algorithm choice", kind_words(plan));
    *choice = plan->choice;
    return CONVGEN_SUCCESS;
}

convgen_status convgen_plan_candidate(const convgen_plan *plan, int i, convgen_candidate *candidate)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (i < 0 || i >= plan->choice.candidate_count)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "candidate index %d must be in 0..%d", i,
                       plan->choice.candidate_count - 1);
    if (!candidate)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "candidate is NULL");
    *candidate = plan->candidates[i];
    return CONVGEN_SUCCESS;
}

/* Library steps want aligned buffers: the workspace on 256 bytes (cuFFT and cuBLAS), an operand
 * that cuFFT reads in place on 8. Checked before anything is queued. */
static convgen_status check_alignment(const convgen_plan *plan, const void *in0, const void *in1, const void *ws)
{
    const cg_generated *g = plan->gen;
    bool library = false; /* a cuFFT or cuBLAS call among the steps, not kernels alone */
    for (int i = 0; i < g->step_count; ++i)
        library |= g->steps[i].kind != CG_STEP_KERNEL;
    if (g->step_count && plan->workspace_bytes && (uintptr_t)ws % 256 != 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "workspace = %p must be 256-byte aligned for the %s plan's %s", ws,
                       convgen_algo_name(g->algo), library ? "cuFFT and cuBLAS calls" : "kernels' copies of it");
    if (cg_program_prepares_weights(g) && g->step_count == 0 && (uintptr_t)ws % 16 != 0) /* direct's wgmma pieces */
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "workspace = %p must be 16-byte aligned for the %s plan's 16-byte "
                       "copies of the weights' pieces", ws, convgen_algo_name(g->algo));
    for (int i = 0; i < g->step_count; ++i) {
        int r = g->steps[i].kind == CG_STEP_FFT ? g->steps[i].fft.real_operand : -1;
        const void *ptr = r == 1 ? in1 : in0;
        if (r >= 0 && (uintptr_t)ptr % 8 != 0)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in%d = %p must be 8-byte aligned: the %s plan has cuFFT read it "
                           "in place", r, ptr, convgen_algo_name(g->algo));
    }
    return CONVGEN_SUCCESS;
}

/* The workspace the caller gives: at least what the plan needs, and there where it needs any. */
static convgen_status check_workspace(const convgen_plan *plan, const void *ws, size_t ws_bytes)
{
    size_t need = (size_t)plan->workspace_bytes;
    if (ws_bytes < need)
        return cg_fail(CONVGEN_ERROR_INSUFFICIENT_WORKSPACE, "workspace_bytes = %zu, the plan needs %zu", ws_bytes, need);
    if (need && !ws)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "workspace is NULL, the plan needs %zu bytes", need);
    return CONVGEN_SUCCESS;
}

static convgen_status check_operands(const convgen_plan *plan, const float *in0, const float *in1, const float *out,
                                     const void *ws, size_t ws_bytes)
{
    static const char *const names[3][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}, {"x", "dy", "dw"}};
    const char *const *n = names[plan->gen->pass];
    const void *ptrs[3] = {in0, in1, out};
    for (int i = 0; i < 3; ++i)
        if (!ptrs[i])
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s (%s) is NULL", i == 2 ? "out" : i ? "in1" : "in0", n[i]);
    convgen_status s = check_workspace(plan, ws, ws_bytes);
    return s != CONVGEN_SUCCESS ? s : check_alignment(plan, in0, in1, ws);
}

/* One launch call's kernels in order on one stream. A kernel follows the one launched before it as
 * its programmatic dependent (cg_kernel.dependent) only where that one is a kernel of this call
 * that lets it launch knowingly: one that waits first has waited for its own predecessor by then,
 * so only it may still run; one that waits last (a data transform beside the weights') may run
 * beside its predecessor still, so the next waits first or launches plainly. Every such kernel
 * waits somewhere, so none ends before the one launched before it, and a kernel that waits first
 * has everything before it done. The first kernel of a call, and every one after a library's
 * step, launches plainly, after all the stream's earlier work. */
typedef struct launcher {
    convgen_plan *plan;
    convgen_stream stream;
    cg_dependent before; /* the kernel launched last in this call; NONE: none, or a library's step */
} launcher;

static convgen_status launch_kernel(launcher *l, int i, void **args)
{
    const cg_kernel *k = &l->plan->gen->kernels[i];
    const cg_driver *drv = l->plan->ctx->drv;
    const bool knows = l->before != CG_DEPENDENT_NONE && !(l->before == CG_DEPENDENT_WAITS_LAST &&
                                                            k->dependent == CG_DEPENDENT_WAITS_LAST);
    const bool dependent = k->dependent != CG_DEPENDENT_NONE && knows && drv->LaunchKernelEx &&
                           l->plan->ctx->max_cluster > 1; /* sm_90 on */
    l->before = k->dependent;
    CUresult r;
    if (dependent) {
        CUlaunchAttribute attr = {.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION};
        attr.value.programmaticStreamSerializationAllowed = 1;
        const CUlaunchConfig config = {k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2],
                                       k->shared_bytes, (CUstream)l->stream, &attr, 1};
        r = drv->LaunchKernelEx(&config, l->plan->prog->fn[i], args, NULL);
    } else {
        r = drv->LaunchKernel(l->plan->prog->fn[i], k->grid[0], k->grid[1], k->grid[2], k->block[0], k->block[1],
                              k->block[2], k->shared_bytes, (CUstream)l->stream, args, NULL);
    }
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(drv, r, dependent ? "cuLaunchKernelEx" : "cuLaunchKernel");
}

/* A kernel step's four pointers, from the plan's (args: &in0, &in1, &out, &workspace, &bias),
 * and the bias as it is. */
static convgen_status launch_step_kernel(launcher *l, const cg_step *st, void **args)
{
    void *ptr[4], *bound[5];
    bound[4] = args[4];
    for (int a = 0; a < 4; ++a) {
        const cg_arg *arg = &st->args[a];
        char *base = arg->base == CG_ARG_SAME ? *(char **)args[a]
                     : arg->base == CG_ARG_NULL ? NULL
                                                : *(char **)args[arg->base - CG_ARG_IN0];
        ptr[a] = base && arg->base != CG_ARG_SAME ? base + arg->offset : base;
        bound[a] = &ptr[a];
    }
    return launch_kernel(l, st->kernel, bound);
}

/* The steps of one phase, on the operands of one chunk. */
static convgen_status run_phase(launcher *l, int phase, int64_t chunk, const float *in0, const float *in1,
                                const float *bias, float *out, void *workspace)
{
    const cg_generated *g = l->plan->gen;
    void *args[5] = {&in0, &in1, &out, &workspace, &bias};
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < g->step_count && s == CONVGEN_SUCCESS; ++i) {
        const cg_step *st = &g->steps[i];
        if (st->phase != phase)
            continue;
        if (st->kind == CG_STEP_KERNEL) {
            s = launch_step_kernel(l, st, args);
        } else {
            s = lib_steps_run(l->plan->lib, g, i, in0, in1, workspace, st->kind == CG_STEP_GEMM && chunk > 0, l->stream);
            l->before = CG_DEPENDENT_NONE;
        }
    }
    return s;
}

/* Which phases a launch runs: all of them, only the weights' (phase 0), or all but those. */
typedef enum { ALL_PHASES, WEIGHTS_ONLY, AFTER_WEIGHTS } phases;

/* Phase 0, phase 1 on every chunk of the operands, phase 2 (those of `which`). in1 is NULL
 * after prepared weights: no step of phases 1 and 2 reads it then. */
static convgen_status run_steps(launcher *l, const float *in0, const float *in1, const float *bias, float *out,
                                void *workspace, phases which)
{
    const cg_generated *g = l->plan->gen;
    convgen_status s = which != AFTER_WEIGHTS ? run_phase(l, 0, 0, in0, in1, bias, out, workspace) : CONVGEN_SUCCESS;
    if (which == WEIGHTS_ONLY)
        return s;
    for (int64_t c = 0; c < g->chunks && s == CONVGEN_SUCCESS; ++c)
        s = run_phase(l, 1, c, in0 + c * g->chunk_elems[0], in1 ? in1 + c * g->chunk_elems[1] : NULL, bias,
                      out + c * g->chunk_elems[2], workspace);
    return s == CONVGEN_SUCCESS ? run_phase(l, 2, 0, in0, in1, bias, out, workspace) : s;
}

/* A program of kernels only (direct): each in order, of those `which` runs (a first that only lays
 * the weights out is its weights' phase, cg_kernel.weights_only). */
static convgen_status run_kernels(launcher *l, void **args, phases which)
{
    const cg_generated *g = l->plan->gen;
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < g->kernel_count && s == CONVGEN_SUCCESS; ++i)
        if (which == ALL_PHASES || (which == WEIGHTS_ONLY) == g->kernels[i].weights_only)
            s = launch_kernel(l, i, args);
    return s;
}

/* Runs the plan's steps (the phases of `which`), or its kernels in order, on `stream`; every
 * kernel gets the same four pointers and the bias (cuLaunchKernel reads only the parameters a
 * kernel declares: those that add no bias take four). */
static convgen_status launch(convgen_plan *plan, const float *in0, const float *in1, const float *bias, float *out,
                             void *workspace, convgen_stream stream, phases which)
{
    convgen_context *ctx = plan->ctx;
    if (ctx->offline)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "the plan's context is offline (arch %s): it cannot execute", ctx->arch);
    const cg_driver *drv = ctx->drv;
    CUresult r = drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "cuCtxPushCurrent");
    void *args[5] = {&in0, &in1, &out, &workspace, &bias};
    convgen_status s = CONVGEN_SUCCESS;
    const cg_generated *g = plan->gen;
    launcher l = {plan, stream, CG_DEPENDENT_NONE};
    if (g->step_count == 0)
        s = run_kernels(&l, args, which);
    else
        s = run_steps(&l, in0, in1, bias, out, workspace, which);
    CUcontext popped;
    drv->CtxPopCurrent(&popped);
    return s;
}

/* Whether the call's bias matches the layer's epilogue: given exactly where it has a bias. */
static convgen_status check_bias(const convgen_plan *plan, const float *bias, bool given, const char *call)
{
    bool wanted = plan->gen->problem.epilogue & CG_EPILOGUE_BIAS;
    if (wanted && !given)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "epilogue: the layer adds a bias; run it with %s_bias", call);
    if (!wanted && given)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "bias: the layer's epilogue has no CONVGEN_EPILOGUE_BIAS; run it "
                       "with %s", call);
    return given && !bias ? cg_fail(CONVGEN_ERROR_INVALID_VALUE, "bias is NULL") : CONVGEN_SUCCESS;
}

static convgen_status execute(convgen_plan *plan, const float *in0, const float *in1, const float *bias, bool biased,
                              float *out, void *workspace, size_t workspace_bytes, convgen_stream stream)
{
    convgen_status s = check_kind(plan, &cg_conv_kind);
    if (s == CONVGEN_SUCCESS)
        s = check_bias(plan, bias, biased, "convgen_execute");
    if (s == CONVGEN_SUCCESS)
        s = check_operands(plan, in0, in1, out, workspace, workspace_bytes);
    return s != CONVGEN_SUCCESS ? s : launch(plan, in0, in1, bias, out, workspace, stream, ALL_PHASES);
}

convgen_status convgen_execute(convgen_plan *plan, const float *in0, const float *in1, float *out,
                               void *workspace, size_t workspace_bytes, convgen_stream stream)
{
    return execute(plan, in0, in1, NULL, false, out, workspace, workspace_bytes, stream);
}

convgen_status convgen_execute_bias(convgen_plan *plan, const float *x, const float *w, const float *bias, float *y,
                                    void *workspace, size_t workspace_bytes, convgen_stream stream)
{
    return execute(plan, x, w, bias, true, y, workspace, workspace_bytes, stream);
}

int convgen_plan_prepares_weights(const convgen_plan *plan)
{
    return plan && plan->kind == &cg_conv_kind && cg_program_prepares_weights(plan->gen);
}

/* A plan that has weights to prepare, and a workspace for them. */
static convgen_status check_prepared(const convgen_plan *plan, const void *workspace, size_t workspace_bytes)
{
    if (!plan)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan is NULL");
    if (plan->kind != &cg_conv_kind)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan: %s plan has no weight transforms to prepare; run it with %s",
                       kind_words(plan), kind_runner(plan));
    if (!convgen_plan_prepares_weights(plan))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "plan: the %s %s plan has no weight transforms to prepare; run it "
                       "with convgen_execute", convgen_algo_name(plan->gen->algo), convgen_pass_name(plan->gen->pass));
    return check_workspace(plan, workspace, workspace_bytes); /* the spectra's: never empty */
}

convgen_status convgen_prepare_weights(convgen_plan *plan, const float *w, void *workspace, size_t workspace_bytes,
                                       convgen_stream stream)
{
    convgen_status s = check_prepared(plan, workspace, workspace_bytes);
    if (s == CONVGEN_SUCCESS && !w)
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "w is NULL");
    if (s == CONVGEN_SUCCESS)
        s = check_alignment(plan, NULL, w, workspace);
    /* in0 and out are not touched by the weights' steps */
    return s != CONVGEN_SUCCESS ? s : launch(plan, NULL, w, NULL, NULL, workspace, stream, WEIGHTS_ONLY);
}

static convgen_status execute_prepared(convgen_plan *plan, const float *in0, const float *bias, bool biased,
                                       float *out, void *workspace, size_t workspace_bytes, convgen_stream stream)
{
    convgen_status s = check_prepared(plan, workspace, workspace_bytes);
    if (s == CONVGEN_SUCCESS)
        s = check_bias(plan, bias, biased, "convgen_execute_prepared");
    if (s == CONVGEN_SUCCESS && (!in0 || !out))
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", in0 ? "out" : "in0");
    if (s == CONVGEN_SUCCESS)
        s = check_alignment(plan, in0, NULL, workspace);
    return s != CONVGEN_SUCCESS ? s : launch(plan, in0, NULL, bias, out, workspace, stream, AFTER_WEIGHTS);
}

convgen_status convgen_execute_prepared(convgen_plan *plan, const float *in0, float *out, void *workspace,
                                        size_t workspace_bytes, convgen_stream stream)
{
    return execute_prepared(plan, in0, NULL, false, out, workspace, workspace_bytes, stream);
}

convgen_status convgen_execute_prepared_bias(convgen_plan *plan, const float *x, const float *bias, float *y,
                                             void *workspace, size_t workspace_bytes, convgen_stream stream)
{
    return execute_prepared(plan, x, bias, true, y, workspace, workspace_bytes, stream);
}

convgen_status convgen_execute_fft(convgen_plan *plan, const void *in, void *out, void *workspace,
                                   size_t workspace_bytes, convgen_stream stream)
{
    convgen_status s = check_kind(plan, &cg_fft_kind);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (!in)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in is NULL");
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "out is NULL");
    if (in == out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "out = in: FFT plans are out of place");
    s = check_workspace(plan, workspace, workspace_bytes);
    return s != CONVGEN_SUCCESS ? s : launch(plan, (const float *)in, NULL, NULL, (float *)out, workspace, stream, ALL_PHASES);
}

convgen_status convgen_execute_pool(convgen_plan *plan, const float *x, float *y, convgen_stream stream)
{
    convgen_status s = check_kind(plan, &cg_pool_kind);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (!x || !y)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", x ? "y" : "x");
    if (x == y)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "y = x: pooling plans are out of place");
    return launch(plan, x, NULL, NULL, y, NULL, stream, ALL_PHASES);
}

/* Hands kernel i's source of a generated set to the caller (*source), then frees the set. */
static convgen_status take_source(cg_generated *gen, int i, char **source)
{
    convgen_status s = CONVGEN_SUCCESS;
    if (i < 0 || i >= gen->kernel_count)
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "kernel index %d must be in 0..%d", i, gen->kernel_count - 1);
    else
        *source = gen->kernels[i].source, gen->kernels[i].source = NULL;
    cg_generated_free(gen);
    return s;
}

convgen_status convgen_emit(const convgen_conv_desc *desc, convgen_pass pass, convgen_algo algo, int i, char **source)
{
    if (!source)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "source is NULL");
    *source = NULL;
    if (algo == CONVGEN_ALGO_AUTO)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "algo = AUTO: emitting needs a context to choose in; plan the layer "
                       "and read convgen_plan_source");
    cg_problem p;
    cg_generated gen;
    convgen_status s = cg_problem_init(&p, desc);
    if (s != CONVGEN_SUCCESS ||
        (s = cg_generate_spec(&(cg_spec){cg_conv_ref(&p), pass, algo, NULL}, NULL, &gen)) != CONVGEN_SUCCESS)
        return s;
    return take_source(&gen, i, source);
}

/* Kernel i's source of a problem of a kind with one planner, checked with status `checked`. */
static convgen_status emit_of_kind(cg_problem_ref problem, convgen_status checked, int i, char **source)
{
    if (!source)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "source is NULL");
    *source = NULL;
    cg_generated gen;
    if (checked != CONVGEN_SUCCESS)
        return checked;
    convgen_status s = cg_generate_spec(&(cg_spec){.problem = problem}, NULL, &gen);
    return s != CONVGEN_SUCCESS ? s : take_source(&gen, i, source);
}

convgen_status convgen_emit_fft(const convgen_fft_desc *desc, int i, char **source)
{
    cg_fft_problem p;
    convgen_status s = cg_fft_problem_init(&p, desc);
    return emit_of_kind(cg_fft_ref(&p), s, i, source);
}

convgen_status convgen_emit_pool(const convgen_pool_desc *desc, char **source)
{
    cg_pool_problem p;
    convgen_status s = cg_pool_problem_init(&p, desc);
    return emit_of_kind(cg_pool_ref(&p), s, 0, source);
}
