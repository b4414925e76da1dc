/* A probe, built by hand on a GPU machine against the built library:
 *   gcc -O2 -std=c11 bench/probes/sub_batches.c -Iruntime -I$CUDA/include -Lbuild -lconvgen \
 *       -L$CUDA/lib64 -lcudart -lm -Wl,-rpath,$PWD/build
 *   ./a.out ALGO PASS N C K HxW RxS PAD [fourier=AxB] [gemm=cublas|generated]
 * Plans the layer with workspace limits from the whole plan's need down to 1/64 of it, keeps
 * each distinct sub-batching the planner makes of them (winograd and the FFT algorithms halve
 * the images they transform at once to fit), and times each: CUDA events around each run, 3
 * warm-up runs, the median of 21. Question it answers: do sub-batches whose transforms fit in
 * L2 (50 MiB on the H100) beat the whole batch at once, which moves every transform through
 * DRAM? Each output is compared with the first plan's. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"

#define CK(x)                                                                                          \
    do {                                                                                               \
        int e_ = (int)(x);                                                                             \
        if (e_) {                                                                                      \
            printf("%s failed %d (line %d): %s\n", #x, e_, __LINE__, convgen_last_error());            \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

static int by_value(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

static float *random_buffer(size_t count, unsigned seed)
{
    float *h = malloc(count * sizeof *h), *d;
    for (size_t i = 0; i < count; ++i) {
        seed = seed * 1664525u + 1013904223u;
        h[i] = (float)(seed >> 8) / 16777216.0f - 0.5f;
    }
    CK(cudaMalloc((void **)&d, count * sizeof *d));
    CK(cudaMemcpy(d, h, count * sizeof *d, cudaMemcpyHostToDevice));
    free(h);
    return d;
}

static float time_plan(convgen_plan *p, const float *a, const float *b, float *out, void *ws, size_t bytes)
{
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float t[21];
    for (int r = 0; r < 3; ++r)
        CK(convgen_execute(p, a, b, out, ws, bytes, NULL));
    for (int r = 0; r < 21; ++r) {
        cudaEventRecord(e0, 0);
        CK(convgen_execute(p, a, b, out, ws, bytes, NULL));
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&t[r], e0, e1);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    qsort(t, 21, sizeof t[0], by_value);
    return t[10];
}

static double difference(const float *out, const float *first, size_t count)
{
    float *h = malloc(count * sizeof *h), *g = malloc(count * sizeof *g);
    CK(cudaMemcpy(h, out, count * sizeof *h, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(g, first, count * sizeof *g, cudaMemcpyDeviceToHost));
    double d = 0, n = 0;
    for (size_t i = 0; i < count; ++i) {
        d += ((double)h[i] - g[i]) * ((double)h[i] - g[i]);
        n += (double)g[i] * g[i];
    }
    free(h);
    free(g);
    return sqrt(d / n);
}

int main(int argc, char **argv)
{
    if (argc < 9) {
        printf("usage: %s ALGO PASS N C K HxW RxS PAD [fourier=AxB] [gemm=cublas|generated]\n", argv[0]);
        return 2;
    }
    int algo = -1; /* by the library's own names, whatever the enum's order */
    for (int i = 0; i < 64 && algo < 0; ++i)
        if (i != CONVGEN_ALGO_AUTO && strcmp(argv[1], convgen_algo_name((convgen_algo)i)) == 0)
            algo = i;
    convgen_pass pass = strcmp(argv[2], "bprop") == 0 ? CONVGEN_BPROP : strcmp(argv[2], "accgrad") == 0 ? CONVGEN_ACCGRAD : CONVGEN_FPROP;
    convgen_conv_desc d = {.rank = 2, .n = atoll(argv[3]), .c = atoll(argv[4]), .k = atoll(argv[5])};
    sscanf(argv[6], "%lldx%lld", (long long *)&d.in[0], (long long *)&d.in[1]);
    sscanf(argv[7], "%lldx%lld", (long long *)&d.kernel[0], (long long *)&d.kernel[1]);
    d.pad_before[0] = d.pad_before[1] = d.pad_after[0] = d.pad_after[1] = atoll(argv[8]);
    convgen_plan_options base = {0};
    for (int i = 9; i < argc; ++i) {
        if (strncmp(argv[i], "fourier=", 8) == 0)
            sscanf(argv[i] + 8, "%lldx%lld", (long long *)&base.fourier_size[0], (long long *)&base.fourier_size[1]);
        else if (strcmp(argv[i], "gemm=cublas") == 0)
            base.gemm = CONVGEN_GEMM_CUBLAS;
        else if (strcmp(argv[i], "gemm=generated") == 0)
            base.gemm = CONVGEN_GEMM_GENERATED;
    }
    if (algo < 0)
        return 2;
    int64_t out[CONVGEN_MAX_RANK];
    CK(convgen_output_size(&d, out));
    size_t xs = (size_t)(d.n * d.c * d.in[0] * d.in[1]), ws_ = (size_t)(d.k * d.c * d.kernel[0] * d.kernel[1]),
           ys = (size_t)(d.n * d.k * out[0] * out[1]);
    size_t sizes[3][3] = {{xs, ws_, ys}, {ys, ws_, xs}, {xs, ys, ws_}};
    float *a = random_buffer(sizes[pass][0], 1), *b = random_buffer(sizes[pass][1], 2);
    float *o, *first;
    CK(cudaMalloc((void **)&o, sizes[pass][2] * 4));
    CK(cudaMalloc((void **)&first, sizes[pass][2] * 4));
    convgen_context *ctx;
    CK(convgen_context_create(NULL, &ctx));
    size_t whole = 0, last = 0;
    void *ws = NULL;
    for (int frac = 64; frac >= 1; --frac) {
        convgen_plan_options o2 = base;
        o2.workspace_limit = whole ? whole * frac / 64 : 0;
        convgen_plan *p;
        if (whole && frac == 64)
            continue;
        if (convgen_plan_conv_ex(ctx, &d, pass, (convgen_algo)algo, &o2, &p) != CONVGEN_SUCCESS)
            continue;
        size_t bytes;
        CK(convgen_plan_workspace_size(p, &bytes));
        if (whole && bytes == last) {
            convgen_plan_destroy(p);
            continue;
        }
        if (!whole) {
            whole = bytes;
            CK(cudaMalloc(&ws, bytes ? bytes : 1));
            frac = 65;
        }
        last = bytes;
        float ms = time_plan(p, a, b, o, ws, bytes);
        double diff = 0;
        if (frac == 65)
            CK(cudaMemcpy(first, o, sizes[pass][2] * 4, cudaMemcpyDeviceToDevice));
        else
            diff = difference(o, first, sizes[pass][2]);
        printf("%s %s n%lld c%lld k%lld %lldx%lld: workspace %8.1f MiB  %.4f ms  difference %.1e\n", argv[1], argv[2],
               (long long)d.n, (long long)d.c, (long long)d.k, (long long)d.in[0], (long long)d.in[1],
               bytes / 1048576.0, ms, diff);
        fflush(stdout);
        convgen_plan_destroy(p);
    }
    convgen_context_destroy(ctx);
    return 0;
}
