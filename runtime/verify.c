#include "verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "problem.h"
#include "reference.h"
#include "util.h"

#define CHEAP_REFERENCE 4e8
#define DEFAULT_SAMPLES 4096

static uint64_t next_random(uint64_t *s)
{
    /* xorshift64*: reproducible data from a seed, no library state. */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1Dull;
}

static void fill_random(float *v, int64_t n, uint64_t *state)
{
    for (int64_t i = 0; i < n; ++i)
        v[i] = (float)((double)(next_random(state) >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static void compare(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *got,
                    int64_t samples, uint64_t *state, cg_verify_result *r)
{
    double diff2 = 0, ref2 = 0;
    r->checked = samples == 0 || samples >= r->elems ? r->elems : samples;
    r->sampled = r->checked < r->elems;
    for (int64_t s = 0; s < r->checked; ++s) {
        int64_t i = r->sampled ? (int64_t)(next_random(state) % (uint64_t)r->elems) : s;
        double ref = ref_conv_at(p, pass, in0, in1, i), d = (double)got[i] - ref;
        if (isnan(d) || fabs(d) > r->max_abs_error)
            r->max_abs_error = isnan(d) ? INFINITY : fabs(d);
        diff2 += d * d;
        ref2 += ref * ref;
    }
    r->rel_error = isnan(diff2) ? INFINITY : ref2 > 0 ? sqrt(diff2 / ref2) : sqrt(diff2);
    for (int64_t i = 0; i < r->elems; ++i)
        r->unwritten += isnan(got[i]);
}

typedef struct device_buffers {
    CUdeviceptr ptr[4]; /* in0, in1, out, workspace */
} device_buffers;

static convgen_status run_on_device(convgen_context *ctx, convgen_plan *plan, const int64_t elems[3], size_t ws,
                                    float *const host[3])
{
    const cg_driver *drv = ctx->drv;
    device_buffers b = {{0}};
    size_t bytes[4] = {(size_t)elems[0] * 4, (size_t)elems[1] * 4, (size_t)elems[2] * 4, ws};
    CUcontext popped;
    CUresult r = drv->CtxPushCurrent(ctx->primary);
    if (r != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "cuCtxPushCurrent");
    for (int i = 0; i < 4 && r == CUDA_SUCCESS; ++i)
        if (bytes[i] && (r = drv->MemAlloc(&b.ptr[i], bytes[i])) == CUDA_SUCCESS && i >= 2)
            r = drv->MemsetD8(b.ptr[i], 0xFF, bytes[i]); /* NaN poison */
    for (int i = 0; i < 2 && r == CUDA_SUCCESS; ++i)
        r = drv->MemcpyHtoD(b.ptr[i], host[i], bytes[i]);
    convgen_status s = r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(drv, r, "preparing device buffers");
    if (s == CONVGEN_SUCCESS)
        s = convgen_execute(plan, (const float *)b.ptr[0], (const float *)b.ptr[1], (float *)b.ptr[2],
                            (void *)b.ptr[3], ws, NULL);
    if (s == CONVGEN_SUCCESS && (r = drv->CtxSynchronize()) != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "running the plan");
    if (s == CONVGEN_SUCCESS && (r = drv->MemcpyDtoH(host[2], b.ptr[2], bytes[2])) != CUDA_SUCCESS)
        s = cg_cuda_fail(drv, r, "copying the output back");
    for (int i = 0; i < 4; ++i)
        if (b.ptr[i])
            drv->MemFree(b.ptr[i]);
    drv->CtxPopCurrent(&popped);
    return s;
}

convgen_status cg_verify(convgen_context *ctx, const convgen_conv_desc *desc, convgen_pass pass,
                         convgen_algo algo, const convgen_plan_options *options, unsigned seed, int64_t samples,
                         cg_verify_result *result)
{
    if (!ctx || !result)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is NULL", ctx ? "result" : "ctx");
    if (ctx->offline)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "checking needs a GPU; the context is offline");
    memset(result, 0, sizeof *result);
    cg_problem p;
    convgen_status s = cg_problem_init(&p, desc);
    if (s != CONVGEN_SUCCESS)
        return s;
    convgen_plan *plan;
    if ((s = convgen_plan_conv_ex(ctx, desc, pass, algo, options, &plan)) != CONVGEN_SUCCESS)
        return s;
    int64_t elems[3];
    cg_problem_operand_elems(&p, pass, elems);
    size_t ws = 0;
    convgen_plan_workspace_size(plan, &ws);
    float *host[3];
    for (int i = 0; i < 3; ++i)
        host[i] = malloc((size_t)elems[i] * sizeof(float));
    uint64_t state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)seed << 1 | 1);
    if (!host[0] || !host[1] || !host[2]) {
        s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of host memory for the check's tensors");
    } else {
        fill_random(host[0], elems[0], &state);
        fill_random(host[1], elems[1], &state);
        s = run_on_device(ctx, plan, elems, ws, host);
    }
    if (s == CONVGEN_SUCCESS) {
        result->elems = elems[2];
        if (samples < 0)
            samples = (double)elems[2] * cg_problem_reduction_length(&p, pass) <= CHEAP_REFERENCE ? 0 : DEFAULT_SAMPLES;
        compare(&p, pass, host[0], host[1], host[2], samples, &state, result);
    }
    for (int i = 0; i < 3; ++i)
        free(host[i]);
    convgen_plan_destroy(plan);
    return s;
}
