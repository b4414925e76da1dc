#include "verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "problem.h"
#include "reference.h"
#include "tune.h"
#include "util.h"

#define CHEAP_REFERENCE 4e8
#define DEFAULT_SAMPLES 4096

static void compare(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *bias,
                    const float *got, int64_t samples, uint64_t *state, cg_verify_result *r)
{
    r->checked = samples == 0 || samples >= r->elems ? r->elems : samples;
    r->sampled = r->checked < r->elems;
    r->rel_error = ref_compare(p, pass, in0, in1, bias, got, r->elems, r->checked, state, &r->max_abs_error);
    for (int64_t i = 0; i < r->elems; ++i)
        r->unwritten += isnan(got[i]);
}

typedef struct device_buffers {
    CUdeviceptr ptr[5]; /* in0, in1, out, workspace, the bias */
    size_t bytes[5];
    bool current; /* the context was made current: close_buffers pops it */
} device_buffers;

/* Makes the context current and allocates the buffers (none for 0 bytes; the bias's only for a
 * layer with one, from host_bias), those from index `poison` to the workspace filled with NaN;
 * close_buffers frees them and pops the context. */
static convgen_status open_buffers(convgen_context *ctx, const int64_t elems[3], size_t ws, int poison,
                                   const cg_problem *p, const float *host_bias, device_buffers *b)
{
    const cg_driver *drv = ctx->drv;
    size_t bias_bytes = p->epilogue & CG_EPILOGUE_BIAS ? (size_t)p->k * 4 : 0;
    *b = (device_buffers){.bytes = {(size_t)elems[0] * 4, (size_t)elems[1] * 4, (size_t)elems[2] * 4, ws, bias_bytes}};
    CUresult r = drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "cuCtxPushCurrent");
    b->current = true;
    for (int i = 0; i < 5 && r == CUDA_SUCCESS; ++i)
        if (b->bytes[i] && (r = drv->MemAlloc(&b->ptr[i], b->bytes[i])) == CUDA_SUCCESS && i >= poison && i < 4)
            r = drv->MemsetD8(b->ptr[i], 0xFF, b->bytes[i]);
    if (r == CUDA_SUCCESS && bias_bytes)
        r = drv->MemcpyHtoD(b->ptr[4], host_bias, bias_bytes);
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(drv, r, "preparing device buffers");
}

static void close_buffers(convgen_context *ctx, device_buffers *b)
{
    for (int i = 0; i < 5; ++i)
        if (b->ptr[i])
            ctx->drv->MemFree(b->ptr[i]);
    CUcontext popped;
    if (b->current)
        ctx->drv->CtxPopCurrent(&popped);
}

/* The plan run once on the host's tensors, the output `out_shift` floats past its allocation's
 * start (0: as cudaMalloc aligns it; 1: 4-byte aligned only, for kernels that store vectors only
 * where the output lets them). */
static convgen_status run_on_device(convgen_context *ctx, convgen_plan *plan, const cg_problem *p,
                                    const int64_t elems[3], size_t ws, int out_shift, float *const host[4])
{
    const cg_driver *drv = ctx->drv;
    device_buffers b;
    const int64_t room[3] = {elems[0], elems[1], elems[2] + out_shift};
    convgen_status s = open_buffers(ctx, room, ws, 2, p, host[3], &b); /* output and workspace poisoned */
    const CUdeviceptr out = b.ptr[2] + 4 * (CUdeviceptr)out_shift;
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < 2 && s == CONVGEN_SUCCESS && r == CUDA_SUCCESS; ++i)
        r = drv->MemcpyHtoD(b.ptr[i], host[i], b.bytes[i]);
    if (r != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "copying the inputs");
    if (s == CONVGEN_SUCCESS && b.ptr[4])
        s = convgen_execute_bias(plan, (const float *)b.ptr[0], (const float *)b.ptr[1], (const float *)b.ptr[4],
                                 (float *)out, (void *)b.ptr[3], ws, NULL);
    else if (s == CONVGEN_SUCCESS)
        s = convgen_execute(plan, (const float *)b.ptr[0], (const float *)b.ptr[1], (float *)out, (void *)b.ptr[3], ws,
                            NULL);
    if (s == CONVGEN_SUCCESS && (r = drv->CtxSynchronize()) != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "running the plan");
    if (s == CONVGEN_SUCCESS && (r = drv->MemcpyDtoH(host[2], out, (size_t)elems[2] * 4)) != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "copying the output back");
    close_buffers(ctx, &b);
    return s;
}

double cg_verify_bound(const cg_problem *p, convgen_pass pass)
{
    const double unit_roundoff = 0x1p-24;
    double bound = 4 * unit_roundoff * sqrt(cg_problem_reduction_length(p, pass));
    return bound > 1e-5 ? bound : 1e-5;
}

/* What the plan ran, for people: its algorithm and tuning, and for AUTO how it was chosen. */
static void describe_plan(const convgen_plan *plan, int rank, char *buf, size_t size)
{
    static const char *const how[] = {"", ", measured", ", from wisdom", ", by the cost model"};
    convgen_choice ch;
    if (convgen_plan_choice(plan, &ch) != CONVGEN_SUCCESS) {
        snprintf(buf, size, "?");
        return;
    }
    char what[128];
    tune_describe(ch.algo, &ch.options, rank, what, sizeof what);
    snprintf(buf, size, "%s%s%s", ch.chosen_by == CONVGEN_CHOSEN_BY_CALLER ? "" : "auto chose ", what,
             how[ch.chosen_by]);
}

/* What both checks start with: the arguments, the problem, the plan, its operands' sizes and
 * its workspace. */
static convgen_status begin_check(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                  convgen_algo algo, const convgen_plan_options *options, cg_verify_result *result,
                                  cg_problem *p, convgen_plan **plan, int64_t elems[3], size_t *ws)
{
    if (!ctx || !result)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", ctx ? "result" : "ctx");
    if (ctx->offline)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "checking needs a GPU; the context is offline");
    memset(result, 0, sizeof *result);
    convgen_status s = cg_problem_init(p, desc);
    if (s == CONVGEN_SUCCESS)
        s = convgen_plan_conv_ex(ctx, desc, pass, algo, options, plan);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_problem_operand_elems(p, pass, elems);
    result->bound = cg_verify_bound(p, pass);
    describe_plan(*plan, p->rank, result->ran, sizeof result->ran);
    *ws = 0;
    convgen_plan_workspace_size(*plan, ws);
    return CONVGEN_SUCCESS;
}

convgen_status cg_verify(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                         convgen_algo algo, const convgen_plan_options *options, unsigned seed, int64_t samples,
                         cg_verify_result *result)
{
    return cg_verify_shifted(ctx, desc, pass, algo, options, seed, samples, 0, result);
}

convgen_status cg_verify_shifted(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                 convgen_algo algo, const convgen_plan_options *options, unsigned seed,
                                 int64_t samples, int out_shift, cg_verify_result *result)
{
    if (out_shift < 0 || out_shift > 3)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "out_shift = %d: 0 to 3 floats", out_shift);
    cg_problem p;
    convgen_plan *plan;
    int64_t elems[3];
    size_t ws;
    convgen_status s = begin_check(ctx, desc, pass, algo, options, result, &p, &plan, elems, &ws);
    if (s != CONVGEN_SUCCESS)
        return s;
    float *host[4];
    for (int i = 0; i < 3; ++i)
        host[i] = malloc((size_t)elems[i] * sizeof(float));
    host[3] = malloc((size_t)p.k * sizeof(float)); /* the bias, where the layer has one */
    uint64_t state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 1 | 1);
    if (!host[0] || !host[1] || !host[2] || !host[3]) {
        s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of host memory for the check's tensors");
    } else {
        cg_fill_random(host[0], elems[0], &state);
        cg_fill_random(host[1], elems[1], &state);
        cg_fill_random(host[3], p.k, &state);
        s = run_on_device(ctx, plan, &p, elems, ws, out_shift, host);
    }
    if (s == CONVGEN_SUCCESS) {
        result->elems = elems[2];
        if (samples < 0)
            samples = (double)elems[2] * cg_problem_reduction_length(&p, pass) <= CHEAP_REFERENCE ? 0 : DEFAULT_SAMPLES;
        compare(&p, pass, host[0], host[1], host[3], host[2], samples, &state, result);
    }
    for (int i = 0; i < 4; ++i)
        free(host[i]);
    convgen_plan_destroy(plan);
    return s;
}

/* The prepared path on the device: w prepared into the workspace, its device copy then poisoned
 * (a later read of it shows as NaN), and each of two inputs run against the prepared spectra,
 * its output poisoned before. */
static convgen_status prepared_on_device(convgen_context *ctx, convgen_plan *plan, const cg_problem *p,
                                         const int64_t elems[3], size_t ws, const float *w, const float *bias,
                                         const float *const xs[2], float *const outs[2])
{
    const cg_driver *drv = ctx->drv;
    device_buffers b;
    convgen_status s = open_buffers(ctx, elems, ws, 3, p, bias, &b); /* the workspace poisoned; the output before each run */
    CUresult r = CUDA_SUCCESS;
    if (s == CONVGEN_SUCCESS && (r = drv->MemcpyHtoD(b.ptr[1], w, b.bytes[1])) != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "copying the weights");
    if (s == CONVGEN_SUCCESS)
        s = convgen_prepare_weights(plan, (const float *)b.ptr[1], (void *)b.ptr[3], ws, NULL);
    if (s == CONVGEN_SUCCESS && ((r = drv->CtxSynchronize()) != CUDA_SUCCESS ||
                                 (r = drv->MemsetD8(b.ptr[1], 0xFF, b.bytes[1])) != CUDA_SUCCESS))
        s = cg_cuda_fail(drv, r, "preparing the weights");
    for (int run = 0; run < 2 && s == CONVGEN_SUCCESS; ++run) {
        if ((r = drv->MemcpyHtoD(b.ptr[0], xs[run], b.bytes[0])) != CUDA_SUCCESS ||
            (r = drv->MemsetD8(b.ptr[2], 0xFF, b.bytes[2])) != CUDA_SUCCESS) {
            s = cg_cuda_fail(drv, r, "preparing device buffers");
            break;
        }
        s = b.ptr[4] ? convgen_execute_prepared_bias(plan, (const float *)b.ptr[0], (const float *)b.ptr[4],
                                                     (float *)b.ptr[2], (void *)b.ptr[3], ws, NULL)
                     : convgen_execute_prepared(plan, (const float *)b.ptr[0], (float *)b.ptr[2], (void *)b.ptr[3], ws,
                                                NULL);
        if (s == CONVGEN_SUCCESS && (r = drv->CtxSynchronize()) != CUDA_SUCCESS)
            s = cg_cuda_fail(drv, r, "running the plan on prepared weights");
        if (s == CONVGEN_SUCCESS && (r = drv->MemcpyDtoH(outs[run], b.ptr[2], b.bytes[2])) != CUDA_SUCCESS)
            s = cg_cuda_fail(drv, r, "copying the output back");
    }
    close_buffers(ctx, &b);
    return s;
}

convgen_status cg_verify_prepared(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                                  convgen_algo algo, const convgen_plan_options *options, unsigned seed,
                                  cg_verify_result *result)
{
    cg_problem p;
    convgen_plan *plan;
    int64_t elems[3];
    size_t ws;
    convgen_status s = begin_check(ctx, desc, pass, algo, options, result, &p, &plan, elems, &ws);
    if (s != CONVGEN_SUCCESS)
        return s;
    float *w = malloc((size_t)elems[1] * sizeof(float)), *bias = malloc((size_t)p.k * sizeof(float)), *xs[2], *outs[2];
    for (int i = 0; i < 2; ++i) {
        xs[i] = malloc((size_t)elems[0] * sizeof(float));
        outs[i] = malloc((size_t)elems[2] * sizeof(float));
    }
    uint64_t state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 1 | 1);
    if (!w || !bias || !xs[0] || !xs[1] || !outs[0] || !outs[1]) {
        s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of host memory for the check's tensors");
    } else {
        cg_fill_random(w, elems[1], &state);
        cg_fill_random(xs[0], elems[0], &state);
        cg_fill_random(xs[1], elems[0], &state);
        cg_fill_random(bias, p.k, &state);
        s = prepared_on_device(ctx, plan, &p, elems, ws, w, bias, (const float *const *)xs, outs);
    }
    for (int run = 0; run < 2 && s == CONVGEN_SUCCESS; ++run) { /* the worse of the two runs */
        cg_verify_result r = {.elems = elems[2]};
        int64_t samples = (double)elems[2] * cg_problem_reduction_length(&p, pass) <= CHEAP_REFERENCE ? 0
                                                                                                        : DEFAULT_SAMPLES;
        compare(&p, pass, xs[run], w, bias, outs[run], samples, &state, &r);
        if (run == 0 || !(r.rel_error <= result->rel_error))
            result->rel_error = r.rel_error;
        result->max_abs_error = r.max_abs_error > result->max_abs_error ? r.max_abs_error : result->max_abs_error;
        result->elems = r.elems, result->checked = r.checked, result->sampled = r.sampled;
        result->unwritten += r.unwritten;
    }
    free(w);
    free(bias);
    for (int i = 0; i < 2; ++i)
        free(xs[i]), free(outs[i]);
    convgen_plan_destroy(plan);
    return s;
}
