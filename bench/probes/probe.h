/* What the probes under bench/probes share (each built by hand with nvcc on a GPU machine): a
 * CUDA call checked, and a launch timed by CUDA events as the median of its runs after warm-up. */
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            printf("%s failed: %s (line %d)\n", #x, cudaGetErrorString(e_), __LINE__);                \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static int probe_cmp(const void *p, const void *q)
{
    float x = *(const float *)p, y = *(const float *)q;
    return (x > y) - (x < y);
}

/* The median of `runs` (at most 64) timings of launch() in ms, after `warmups` untimed ones. */
template <class Launch> static float median_ms(Launch launch, int warmups, int runs)
{
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    float ms[64];
    for (int r = -warmups; r < runs; ++r) {
        CK(cudaEventRecord(e0));
        launch();
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        if (r >= 0)
            CK(cudaEventElapsedTime(&ms[r], e0, e1));
    }
    CK(cudaGetLastError());
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    qsort(ms, runs, sizeof *ms, probe_cmp);
    return ms[runs / 2];
}
