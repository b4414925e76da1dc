#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

bool bench_cuda_ok(int err, const char *what)
{
    if (err == cudaSuccess)
        return true;
    fprintf(stderr, "convgen-bench: %s: %s\n", what, cudaGetErrorString((cudaError_t)err));
    return false;
}

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Events around each run: the time is the device's, launch gaps between runs excluded. */
double bench_median_ms(bench_run_fn run, void *state, int sets, int warmup, int runs)
{
    for (int i = 0; i < warmup; ++i)
        if (!run(state, i % sets))
            return -1;
    if (!bench_cuda_ok(cudaDeviceSynchronize(), "warm-up"))
        return -1;
    cudaEvent_t *ev = malloc(sizeof *ev * 2 * (size_t)runs);
    float *ms = malloc(sizeof *ms * (size_t)runs);
    bool ok = ev && ms;
    int created = 0;
    while (ok && created < 2 * runs && (ok = bench_cuda_ok(cudaEventCreate(&ev[created]), "cudaEventCreate")))
        ++created;
    for (int i = 0; ok && i < runs; ++i) {
        ok = bench_cuda_ok(cudaEventRecord(ev[2 * i], 0), "cudaEventRecord") && run(state, i % sets) &&
             bench_cuda_ok(cudaEventRecord(ev[2 * i + 1], 0), "cudaEventRecord");
    }
    ok = ok && bench_cuda_ok(cudaDeviceSynchronize(), "timed runs");
    for (int i = 0; ok && i < runs; ++i)
        ok = bench_cuda_ok(cudaEventElapsedTime(&ms[i], ev[2 * i], ev[2 * i + 1]), "cudaEventElapsedTime");
    double median = -1;
    if (ok) {
        qsort(ms, (size_t)runs, sizeof *ms, by_value);
        median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    }
    for (int i = 0; i < created; ++i)
        cudaEventDestroy(ev[i]);
    free(ev);
    free(ms);
    return median;
}
