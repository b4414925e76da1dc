#include "context.h"
#include "plan_cache.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "jit.h"
#include "lib_steps.h"
#include "util.h"

static convgen_status open_device(convgen_context *ctx, int ordinal, int sm_count)
{
    convgen_status s;
    const cg_driver *drv = cg_driver_get(&s);
    if (!drv)
        return s;
    int count = 0;
    CUresult r = drv->DeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0)
        return cg_fail(CONVGEN_ERROR_NO_DEVICE, "no CUDA device is present");
    if (ordinal < 0 || ordinal >= count)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "device = %d must be in 0..%d", ordinal, count - 1);
    int major = 0, minor = 0;
    if ((r = drv->DeviceGet(&ctx->device, ordinal)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&ctx->sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&ctx->shared_per_block, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                     ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&ctx->shared_per_sm, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                                     ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetAttribute(&ctx->l2_bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, ctx->device)) != CUDA_SUCCESS ||
        (r = drv->DeviceGetName(ctx->device_name, sizeof ctx->device_name, ctx->device)) != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "querying the device");
    /* The peak bandwidth (double data rate over the bus), for the cost model; a driver that does
     * not say leaves 0, the model's own (an H100's) */
    int clock_khz = 0, bus_bits = 0;
    if (drv->DeviceGetAttribute(&clock_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, ctx->device) == CUDA_SUCCESS &&
        drv->DeviceGetAttribute(&bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, ctx->device) == CUDA_SUCCESS)
        ctx->memory_bytes_per_s = 2.0 * 1e3 * clock_khz * (bus_bits / 8);
    if (sm_count > 0 && ctx->sm_count > 0) { /* the caller plans for part of the GPU */
        ctx->memory_bytes_per_s *= (double)sm_count / ctx->sm_count;
        ctx->sm_count = sm_count;
    }
    /* The primary context is the one the CUDA runtime uses, so pointers from cudaMalloc and
     * streams from cudaStreamCreate work with our launches. */
    if ((r = drv->DevicePrimaryCtxRetain(&ctx->primary, ctx->device)) != CUDA_SUCCESS)
        return cg_cuda_fail(drv, r, "cuDevicePrimaryCtxRetain");
    ctx->drv = drv;
    snprintf(ctx->arch, sizeof ctx->arch, "sm_%d%d", major, minor);
    return CONVGEN_SUCCESS;
}

convgen_status convgen_context_create(const convgen_context_options *options, convgen_context **out)
{
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "ctx is NULL");
    *out = NULL;
    convgen_context_options defaults = {0};
    const convgen_context_options *o = options ? options : &defaults;
    if (o->offline && !o->arch)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "arch is NULL: an offline context needs a target architecture");
    if (o->arch && jit_check_arch(o->arch) != CONVGEN_SUCCESS)
        return CONVGEN_ERROR_INVALID_VALUE;
    if (o->sm_count < 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "sm_count = %d must be 0 (the device's) or positive", o->sm_count);
    convgen_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a context");
    ctx->offline = o->offline;
    ctx->sm_count = o->sm_count > 0 ? o->sm_count : 132;
    snprintf(ctx->device_name, sizeof ctx->device_name, "offline");
    convgen_status s = o->offline ? CONVGEN_SUCCESS : open_device(ctx, o->device, o->sm_count);
    if (s != CONVGEN_SUCCESS) {
        free(ctx);
        return s;
    }
    if (o->arch && !o->offline && strcmp(o->arch, ctx->arch) != 0) {
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "arch = '%s' is not device %d's architecture %s", o->arch, o->device,
                    ctx->arch);
        ctx->drv->DevicePrimaryCtxRelease(ctx->device);
        free(ctx);
        return s;
    }
    if (o->arch)
        snprintf(ctx->arch, sizeof ctx->arch, "%s", o->arch);
    if (ctx->offline) /* unknown architectures keep 0: the generator's defaults, an H100's */
        cg_target_shared_limits(ctx->arch, &ctx->shared_per_block, &ctx->shared_per_sm);
    ctx->max_cluster = cg_target_max_cluster(ctx->arch);
    if (o->disk_cache >= 0)
        ctx->disk = cache_disk_open(o->cache_dir);
    pthread_mutex_init(&ctx->lock, NULL);
    pthread_mutex_init(&ctx->lib_lock, NULL);
    *out = ctx;
    return CONVGEN_SUCCESS;
}

void convgen_context_destroy(convgen_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->plans)
        cg_warn("convgen_context_destroy: %d plan(s) of this context are still alive; destroy them first", ctx->plans);
    plan_cache_clear(ctx);
    CUcontext popped;
    bool pushed = ctx->drv && ctx->drv->CtxPushCurrent(ctx->primary) == CUDA_SUCCESS;
    for (loaded_module *m = ctx->modules, *next; m; m = next) {
        next = m->next;
        if (pushed)
            ctx->drv->ModuleUnload(m->module);
        free(m);
    }
    if (pushed)
        lib_steps_release_context(ctx);
    if (pushed)
        ctx->drv->CtxPopCurrent(&popped);
    if (ctx->drv)
        ctx->drv->DevicePrimaryCtxRelease(ctx->device);
    cache_disk_close(ctx->disk);
    pthread_mutex_destroy(&ctx->lock);
    pthread_mutex_destroy(&ctx->lib_lock);
    free(ctx);
}

const char *convgen_context_arch(const convgen_context *ctx) { return ctx ? ctx->arch : ""; }
const char *convgen_context_device_name(const convgen_context *ctx) { return ctx ? ctx->device_name : ""; }

static convgen_status load_module(convgen_context *ctx, const cache_kernel *k, cache_key key, CUmodule *module)
{
    for (loaded_module *m = ctx->modules; m; m = m->next)
        if (m->key.hi == key.hi && m->key.lo == key.lo) {
            *module = m->module;
            return CONVGEN_SUCCESS;
        }
    loaded_module *m = calloc(1, sizeof *m);
    if (!m)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a module");
    CUresult r = ctx->drv->ModuleLoadData(&m->module, k->cubin);
    if (r != CUDA_SUCCESS) {
        free(m);
        return cg_cuda_fail(ctx->drv, r, "cuModuleLoadData");
    }
    m->key = key;
    m->next = ctx->modules;
    ctx->modules = m;
    *module = m->module;
    return CONVGEN_SUCCESS;
}

void ctx_count_plan(convgen_context *ctx, int delta)
{
    pthread_mutex_lock(&ctx->lock);
    ctx->plans += delta;
    pthread_mutex_unlock(&ctx->lock);
}

convgen_status ctx_load_function(convgen_context *ctx, const cache_kernel *k, const char *source,
                                 const char *name, CUfunction *fn)
{
    if (ctx->offline)
        return CONVGEN_SUCCESS;
    /* The same source (hence the same cubin) loads once per context. */
    cache_key key = cache_key_of(source, ctx->arch, "", 0, 0);
    pthread_mutex_lock(&ctx->lock);
    CUresult r = ctx->drv->CtxPushCurrent(ctx->primary);
    convgen_status s = r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(ctx->drv, r, "cuCtxPushCurrent");
    CUmodule module = NULL;
    if (s == CONVGEN_SUCCESS) {
        s = load_module(ctx, k, key, &module);
        if (s == CONVGEN_SUCCESS && (r = ctx->drv->ModuleGetFunction(fn, module, name)) != CUDA_SUCCESS)
            s = cg_cuda_fail(ctx->drv, r, "cuModuleGetFunction");
        CUcontext popped;
        ctx->drv->CtxPopCurrent(&popped);
    }
    pthread_mutex_unlock(&ctx->lock);
    return s;
}
