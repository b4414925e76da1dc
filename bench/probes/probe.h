/* What the probes under bench/probes share (each built by hand with nvcc on a GPU machine): a
 * CUDA call checked, and a launch timed by CUDA events as the median of its runs after warm-up. */
#pragma once
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

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

/* Device 0's properties (*p) and SM clock in MHz, as it reports them, and its fp32 FMA peak at
 * that clock in TFLOP/s (128 fp32 lanes an SM, 2 FLOP an FMA), which the probes' rates are
 * shares of. */
static double probe_fma_peak(cudaDeviceProp *p, double *mhz)
{
    CK(cudaGetDeviceProperties(p, 0));
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    *mhz = clock_khz / 1e3;
    return 2.0 * 128 * p->multiProcessorCount * *mhz * 1e6 / 1e12;
}

/* TF32 on the tensor cores, as the cluster kernel does it: x's lo half for 3xTF32 (x itself its hi:
 * the tensor cores read only its TF32 bits), and d += a b by mma.sync m16n8k8, volatile so that
 * the mma keep their written order. */
static __device__ __forceinline__ unsigned lo_of(float x)
{
    return __float_as_uint(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u)) + 0x1000u;
}

static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/* n values uniform in [-1, 1) from a linear congruential sequence seeded with `seed`: random data,
 * never zeros, so that a sum left unwritten or a value read from the wrong place shows. */
static std::vector<float> probe_random(size_t n, unsigned seed)
{
    std::vector<float> x(n);
    for (auto &v : x)
        seed = seed * 1664525u + 1013904223u, v = (seed >> 8) * (2.0f / 16777216.0f) - 1.0f;
    return x;
}

/* A device copy of x. */
static float *probe_upload(const std::vector<float> &x)
{
    float *d;
    CK(cudaMalloc(&d, sizeof(float) * x.size()));
    CK(cudaMemcpy(d, x.data(), sizeof(float) * x.size(), cudaMemcpyHostToDevice));
    return d;
}
