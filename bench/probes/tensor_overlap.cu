/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 58"), built by hand on a GPU machine:
 *   nvcc -O3 -arch=sm_90 -o to bench/probes/tensor_overlap.cu && ./to [CHUNKS]
 *
 * The question: why do the cluster kernel's tensor products and its loaders' chain add up instead
 * of overlapping (V3: 0.368 ms of loaders + 0.30 of products + 0.15 of end = 0.82 measured)? A
 * block an SM in the kernel's shape, 8 product warps beside 4 loader warps (one a scheduler), each
 * group looping over its chunks on its own, with no barrier between the groups: alone, a group
 * takes its own time; together, max of the two if they overlap, their sum if they do not.
 *   products: the kernel's loop (templates/winograd/winograd_fused_cluster.cu's, copied so that the
 *     probe builds alone), one warp's 32 tiles x 128 outputs over 8 channels a chunk, 3xTF32
 *     with lo made (96 mma.sync m16n8k8, ~120 instructions for the lo halves), the tiles as A
 *     (float2 loads, rows g and g + 8 side by side), the weights as B (a float4 two n-tiles);
 *     "regs": the same with every operand from one register group, no shared load.
 *   loaders: a chain like the kernel's loader warps' ~400 instructions a chunk: 64 shared loads
 *     (a lane's 8 x 8 raw tile), two passes of an 8-point combination (256 FFMA), 64 shared
 *     stores; "fma": the same arithmetic on registers, no shared memory.
 * Reading the rows: products + loaders near max(alone): they overlap, and the kernel loses it
 * elsewhere; near the sum with "fma" loaders too: the mma keep the loaders' instructions from
 * issuing (register reads, dispatch, the scheduler), not shared memory; near max with "fma" but
 * the sum with shared loaders: shared memory's bandwidth; "regs" products separate the products'
 * own shared loads from it. */
#include "probe.h"

enum { PRODUCT_WARPS = 8, LOADER_WARPS = 4, THREADS = 32 * (PRODUCT_WARPS + LOADER_WARPS) };
enum { K_BLOCK = 128, PITCH = 264 };                         /* the kernel's wide form and its stage pitch */
enum { X_FLOATS = 8 * PITCH, W_FLOATS = 8 * K_BLOCK };      /* a warp's stage: 8 channels of tiles, of weights */
enum { STAGES = 4, PRODUCT_FLOATS = STAGES * (X_FLOATS + W_FLOATS) };
enum { RAW_FLOATS = 2 * 64 * 32 }; /* a loader warp's two buffers of a lane's 8 x 8 tile, read and written in turn */
/* the loaders' room twice over, so that one block fills an SM's shared memory (177 KB) as the kernel's does */
enum { SHARED_FLOATS = PRODUCT_FLOATS + LOADER_WARPS * 2 * RAW_FLOATS };

/* Keeps the compiler from hoisting a value out of the chunk loop, at no instruction's cost. */
static __device__ __forceinline__ void launder(float &v) { asm volatile("" : "+f"(v)); }

/* PRODUCTS 1: operands from shared memory, as the kernel; 2: from registers. The product warps
 * share one stage ring (they only read it, so their reads are the kernel's, without its waits). */
template <int PRODUCTS>
static __device__ float products(const float *ring, int chunks)
{
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3u;
    float acc[2][K_BLOCK / 8][4] = {};
    const float2 *x_lane = (const float2 *)(ring + warp % 8 * 32 + t * PITCH + 2 * g);
    const float4 *w_lane = (const float4 *)(ring + STAGES * X_FLOATS) + lane;
    float4 w_reg = w_lane[0];
    float2 x_reg[4] = {x_lane[0], x_lane[2 * PITCH], x_lane[8], x_lane[2 * PITCH + 8]};
    for (int q = 0; q < chunks; ++q) {
        const int st = q % STAGES;
        const float2 *x2 = x_lane + st * (X_FLOATS / 2);
        const float4 *w4 = w_lane + st * (W_FLOATS / 4);
        unsigned x_hi[2][4], x_lo[2][4];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float2 xt, xu;
            if (PRODUCTS == 1)
                xt = x2[8 * i], xu = x2[2 * PITCH + 8 * i];
            else
                xt = x_reg[2 * i], xu = x_reg[2 * i + 1], launder(xt.x), launder(xt.y), launder(xu.x), launder(xu.y);
            const float x[4] = {xt.x, xt.y, xu.x, xu.y};
#pragma unroll
            for (int r = 0; r < 4; ++r)
                x_hi[i][r] = __float_as_uint(x[r]), x_lo[i][r] = lo_of(x[r]);
        }
#pragma unroll
        for (int p = 0; p < K_BLOCK / 16; ++p) {
            float4 w;
            if (PRODUCTS == 1)
                w = w4[p * 32];
            else
                w = w_reg, launder(w.x), launder(w.y), launder(w.z), launder(w.w);
            const unsigned w_hi[2][2] = {{__float_as_uint(w.x), __float_as_uint(w.y)}, {__float_as_uint(w.z), __float_as_uint(w.w)}};
            const unsigned w_lo[2][2] = {{lo_of(w.x), lo_of(w.y)}, {lo_of(w.z), lo_of(w.w)}};
#pragma unroll
            for (int n = 0; n < 4; ++n)
                mma(acc[n & 1][2 * p + (n >> 1)], x_lo[n & 1], w_hi[n >> 1]);
#pragma unroll
            for (int n = 0; n < 4; ++n)
                mma(acc[n & 1][2 * p + (n >> 1)], x_hi[n & 1], w_lo[n >> 1]);
#pragma unroll
            for (int n = 0; n < 4; ++n)
                mma(acc[n & 1][2 * p + (n >> 1)], x_hi[n & 1], w_hi[n >> 1]);
        }
    }
    float total = 0;
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < K_BLOCK / 8; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                total += acc[i][j][r];
    return total;
}

/* An 8-point combination of v in place, two FFMA a point (the loaders' BT is about as dense). */
static __device__ __forceinline__ void combine(float (&v)[8], int stride)
{
    float y[8];
#pragma unroll
    for (int j = 0; j < 8; ++j)
        y[j] = fmaf(v[(j + stride) & 7], 0.25f, fmaf(v[(j + 3 * stride) & 7], -1.25f, v[j]));
#pragma unroll
    for (int j = 0; j < 8; ++j)
        v[j] = y[j];
}

/* LOADERS 1: each chunk a lane's 8 x 8 tile from its warp's raw buffer (64 shared loads), its rows
 * then its columns combined (256 FFMA), stored to the other buffer (64 shared stores); 2: the
 * same arithmetic on registers only. */
template <int LOADERS>
static __device__ float loaders(float *raw, int chunks)
{
    const unsigned lane = threadIdx.x & 31u;
    float tile[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            tile[i][j] = raw[(i * 8 + j) * 32 + lane];
    for (int q = 0; q < chunks; ++q) {
        const float *src = raw + (q & 1) * (RAW_FLOATS / 2);
        float *dst = raw + (~q & 1) * (RAW_FLOATS / 2);
        if (LOADERS == 1) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    tile[i][j] = src[(i * 8 + j) * 32 + lane];
        } else {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    launder(tile[i][j]);
        }
#pragma unroll
        for (int i = 0; i < 8; ++i)
            combine(tile[i], 1);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
            float c[8];
#pragma unroll
            for (int i = 0; i < 8; ++i)
                c[i] = tile[i][j];
            combine(c, 2);
#pragma unroll
            for (int i = 0; i < 8; ++i)
                tile[i][j] = c[i];
        }
        if (LOADERS == 1) {
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    dst[(i * 8 + j) * 32 + lane] = tile[i][j];
            __syncwarp(); /* the lane's stores before the next chunk's loads of the other buffer */
        }
    }
    float total = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            total += tile[i][j];
    return total;
}

template <int PRODUCTS, int LOADERS>
__global__ void __launch_bounds__(THREADS, 1) overlap(const float *src, float *out, int chunks)
{
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    for (int i = threadIdx.x; i < SHARED_FLOATS; i += THREADS)
        smem[i] = src[i % 4096];
    __syncthreads();
    const unsigned warp = threadIdx.x >> 5;
    float total = 0;
    if (warp < PRODUCT_WARPS) {
        if (PRODUCTS)
            total = products<PRODUCTS>(smem, chunks);
    } else if (LOADERS) {
        total = loaders<LOADERS>(smem + PRODUCT_FLOATS + (warp - PRODUCT_WARPS) * RAW_FLOATS, chunks);
    }
    out[blockIdx.x * THREADS + threadIdx.x] = total;
}

template <int PRODUCTS, int LOADERS>
static float run(int sms, int chunks, const float *src, float *out)
{
    const int bytes = SHARED_FLOATS * (int)sizeof(float);
    CK(cudaFuncSetAttribute(overlap<PRODUCTS, LOADERS>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, overlap<PRODUCTS, LOADERS>));
    const float ms = median_ms([&] { overlap<PRODUCTS, LOADERS><<<sms, THREADS, bytes>>>(src, out, chunks); }, 3, 21);
    const char *p = PRODUCTS == 0 ? "-" : PRODUCTS == 1 ? "products" : "products, regs";
    const char *l = LOADERS == 0 ? "-" : LOADERS == 1 ? "loaders" : "loaders, fma";
    printf("| %-14s | %-12s | %3d regs, %2d B stack | %8.3f ms |\n", p, l, fa.numRegs, (int)fa.localSizeBytes, ms);
    return ms;
}

/* How far apart `both` lies from overlapping: 0 at max(p, l), 1 at p + l. */
static void overlap_line(const char *what, float p, float l, float both)
{
    const float lo = p > l ? p : l, hi = p + l;
    printf("- %s: alone %.3f and %.3f ms, together %.3f: %.2f of the way from overlapping to adding up\n", what, p, l,
           both, (both - lo) / (hi - lo));
}

int main(int argc, char **argv)
{
    const int chunks = argc > 1 ? atoi(argv[1]) : 2048;
    cudaDeviceProp p;
    double mhz;
    probe_fma_peak(&p, &mhz);
    printf("%s, %d SMs at %.0f MHz; one block an SM of %d product and %d loader warps, %d chunks\n\n", p.name,
           p.multiProcessorCount, mhz, PRODUCT_WARPS, LOADER_WARPS, chunks);
    float *host = (float *)malloc(4096 * sizeof *host), *src, *out;
    for (int i = 0; i < 4096; ++i)
        host[i] = (float)((i * 7) % 5) - 2;
    CK(cudaMalloc((void **)&src, 4096 * sizeof *src));
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * THREADS * sizeof *out));
    CK(cudaMemcpy(src, host, 4096 * sizeof *src, cudaMemcpyHostToDevice));
    const int sms = p.multiProcessorCount;
    printf("| product warps | loader warps | registers | median |\n| --- | --- | ---: | ---: |\n");
    const float P = run<1, 0>(sms, chunks, src, out), PR = run<2, 0>(sms, chunks, src, out);
    const float L = run<0, 1>(sms, chunks, src, out), LF = run<0, 2>(sms, chunks, src, out);
    const float PL = run<1, 1>(sms, chunks, src, out), PLF = run<1, 2>(sms, chunks, src, out);
    const float PRL = run<2, 1>(sms, chunks, src, out), PRLF = run<2, 2>(sms, chunks, src, out);
    printf("\n");
    overlap_line("products + loaders (the kernel's case)", P, L, PL);
    overlap_line("products + loaders without shared memory", P, LF, PLF);
    overlap_line("products from registers + loaders", PR, L, PRL);
    overlap_line("products from registers + loaders without shared memory", PR, LF, PRLF);
    CK(cudaFree(src));
    CK(cudaFree(out));
    free(host);
    return 0;
}
