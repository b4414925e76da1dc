/* The CUDA driver, loaded at run time. libconvgen never links libcuda.so.1, so it loads and
 * renders and compiles on machines with no NVIDIA driver; only execution needs one. */
#ifndef CG_DRIVER_H
#define CG_DRIVER_H

#include <cuda.h>

#include "convgen.h"

typedef struct cg_driver {
    CUresult (*Init)(unsigned);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*DeviceGetCount)(int *);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*DeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult (*DevicePrimaryCtxRelease)(CUdevice);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);
    CUresult (*GetErrorString)(CUresult, const char **);
    CUresult (*FuncSetAttribute)(CUfunction, CUfunction_attribute, int);
    /* For the verifier (verify.c), which needs device memory of its own. */
    CUresult (*MemAlloc)(CUdeviceptr *, size_t);
    CUresult (*MemFree)(CUdeviceptr);
    CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
    CUresult (*MemGetInfo)(size_t *, size_t *);
    CUresult (*MemAllocHost)(void **, size_t); /* pinned: asynchronous copies overlap compute */
    CUresult (*MemFreeHost)(void *);
    CUresult (*MemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
    CUresult (*MemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
    CUresult (*Memcpy2DAsync)(const CUDA_MEMCPY2D *, CUstream); /* the host mode's rows of depth */
    CUresult (*MemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream); /* and those it keeps */
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamWaitEvent)(CUstream, CUevent, unsigned);
    CUresult (*CtxSynchronize)(void);
    /* For the tuner (tune.c), which times candidates. */
    CUresult (*EventCreate)(CUevent *, unsigned);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventSynchronize)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*EventDestroy)(CUevent);
    /* Optional (CUDA 12.0 drivers on): NULL where the driver lacks it. Launches a kernel as the
     * programmatic dependent of the one before it in the stream (plan.c). */
    CUresult (*LaunchKernelEx)(const CUlaunchConfig *, CUfunction, void **, void **);
} cg_driver;

/* The loaded driver (loaded and initialized once per process), or NULL with
 * CONVGEN_ERROR_NO_DEVICE and the reason in convgen_last_error(). */
const cg_driver *cg_driver_get(convgen_status *status);

/* Fails with CONVGEN_ERROR_CUDA naming the call and the driver's message. */
convgen_status cg_cuda_fail(const cg_driver *drv, CUresult r, const char *call);

#endif
