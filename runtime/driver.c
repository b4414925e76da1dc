#include "driver.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include "util.h"

static cg_driver driver;
static convgen_status load_status;
static char load_error[512];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Versioned names where cuda.h maps the plain ones to _v2. */
static const struct { const char *symbol; size_t offset; } symbols[] = {
#define SYM(field, name) {name, offsetof(cg_driver, field)}
    SYM(Init, "cuInit"),
    SYM(DriverGetVersion, "cuDriverGetVersion"),
    SYM(DeviceGetCount, "cuDeviceGetCount"),
    SYM(DeviceGet, "cuDeviceGet"),
    SYM(DeviceGetAttribute, "cuDeviceGetAttribute"),
    SYM(DeviceGetName, "cuDeviceGetName"),
    SYM(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    SYM(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    SYM(CtxPushCurrent, "cuCtxPushCurrent_v2"),
    SYM(CtxPopCurrent, "cuCtxPopCurrent_v2"),
    SYM(ModuleLoadData, "cuModuleLoadData"),
    SYM(ModuleUnload, "cuModuleUnload"),
    SYM(ModuleGetFunction, "cuModuleGetFunction"),
    SYM(LaunchKernel, "cuLaunchKernel"),
    SYM(GetErrorString, "cuGetErrorString"),
    SYM(FuncSetAttribute, "cuFuncSetAttribute"),
    SYM(MemAlloc, "cuMemAlloc_v2"),
    SYM(MemFree, "cuMemFree_v2"),
    SYM(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    SYM(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    SYM(MemsetD8, "cuMemsetD8_v2"),
    SYM(MemGetInfo, "cuMemGetInfo_v2"),
    SYM(MemAllocHost, "cuMemAllocHost_v2"),
    SYM(MemFreeHost, "cuMemFreeHost"),
    SYM(MemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2"),
    SYM(MemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2"),
    SYM(Memcpy2DAsync, "cuMemcpy2DAsync_v2"),
    SYM(MemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2"),
    SYM(StreamCreate, "cuStreamCreate"),
    SYM(StreamDestroy, "cuStreamDestroy_v2"),
    SYM(StreamWaitEvent, "cuStreamWaitEvent"),
    SYM(CtxSynchronize, "cuCtxSynchronize"),
    SYM(EventCreate, "cuEventCreate"),
    SYM(EventRecord, "cuEventRecord"),
    SYM(EventSynchronize, "cuEventSynchronize"),
    SYM(EventElapsedTime, "cuEventElapsedTime"), /* the first version: every driver has it */
    SYM(EventDestroy, "cuEventDestroy_v2"),
#undef SYM
};

static void load_driver(void)
{
    load_status = CONVGEN_ERROR_NO_DEVICE;
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(load_error, sizeof load_error, "no CUDA driver: cannot load libcuda.so.1 (%s)", dlerror());
        return;
    }
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
        void *fn = dlsym(lib, symbols[i].symbol);
        if (!fn) {
            snprintf(load_error, sizeof load_error, "the CUDA driver lacks %s: too old", symbols[i].symbol);
            return;
        }
        *(void **)((char *)&driver + symbols[i].offset) = fn;
    }
    /* cuLaunchKernelEx (programmatic dependent launch) came with CUDA 12.0 drivers: an older one
     * launches every kernel plainly. */
    *(void **)&driver.LaunchKernelEx = dlsym(lib, "cuLaunchKernelEx");
    CUresult r = driver.Init(0);
    if (r != CUDA_SUCCESS) {
        const char *msg = NULL;
        driver.GetErrorString(r, &msg);
        snprintf(load_error, sizeof load_error, "no CUDA device: cuInit failed (%s)", msg ? msg : "unknown error");
        return;
    }
    load_status = CONVGEN_SUCCESS; /* the library stays loaded for the life of the process */
}

const cg_driver *cg_driver_get(convgen_status *status)
{
    pthread_once(&once, load_driver);
    *status = load_status;
    if (load_status != CONVGEN_SUCCESS) {
        cg_fail(load_status, "%s", load_error);
        return NULL;
    }
    return &driver;
}

convgen_status cg_cuda_fail(const cg_driver *drv, CUresult r, const char *call)
{
    const char *msg = NULL;
    if (drv)
        drv->GetErrorString(r, &msg);
    return cg_fail(CONVGEN_ERROR_CUDA, "%s failed: %s (CUresult %d)", call, msg ? msg : "unknown error", (int)r);
}
