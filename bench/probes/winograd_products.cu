/* A probe for issue 30 (bench/NOTES.md, "Issue 30: design notes before building", step 1),
 * built by hand on a GPU machine:
 *   nvcc -O3 -arch=sm_90 -o wp bench/probes/winograd_products.cu && ./wp [CHUNKS]
 * and for the shared-memory wavefronts a request costs:
 *   ncu --metrics l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,\
 *       smsp__inst_executed_op_shared_ld.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active ./wp 64
 *
 * The question: what rate can a fused Winograd kernel's products reach at all, with their
 * operands already in shared memory? Each warp owns Winograd elements; per element a block
 * computes TILES transformed tiles x OUTS output maps, summed over channels 8 at a time: per
 * channel each lane reads two float4 of tiles and two of maps (LDS.128) and does an 8x8 outer
 * product (64 FFMA), a barrier between chunks of 8 channels (as a kernel that stages operands
 * has). Two lane layouts:
 *   32 lanes an element (openCNN's fused F(2x2,3x3)): 32 tiles x 64 maps; a lane's tiles are
 *     float4s (l % 2) + 2 (l / 16) and that + 4, its maps (l % 16) / 2 and that + 8, so a quarter
 *     warp reads 2 distinct tile float4s and 4 distinct map float4s (broadcasts);
 *   8 lanes an element (today's winograd-fused): 16 tiles x 32 maps, four elements a warp.
 * Configurations of 8, 12, 16 and 18 warps a block, one block an SM (the 64 sums a lane and
 * the operands hold ~100 registers). Output: TFLOP/s of the products (2 flops an FFMA) and the
 * share of the fp32 FMA peak at the SM clock the device reports. Sums go to memory so that
 * nothing is dropped; the operands are small integers in float so they stay exact. */
#include "probe.h"

enum { CHANNELS = 8 }; /* a chunk: channels between barriers */

/* LPE lanes an element: 32 (one element a warp, 32 tiles x 64 maps) or 8 (four a warp, 16 x 32). */
template <int WARPS, int LPE>
__global__ void __launch_bounds__(WARPS * 32, 1) products(const float *src, float *out, int chunks)
{
    constexpr int EPW = 32 / LPE;                 /* elements a warp */
    constexpr int E = WARPS * EPW;                /* elements a block */
    constexpr int TILES = LPE == 32 ? 32 : 16, OUTS = LPE == 32 ? 64 : 32;
    extern __shared__ float4 smem[];
    float4 *tiles = smem;                          /* [E][CHANNELS][TILES / 4] */
    float4 *maps = smem + E * CHANNELS * TILES / 4; /* [E][CHANNELS][OUTS / 4] */
    const int count = E * CHANNELS * (TILES + OUTS) / 4;
    for (int i = threadIdx.x; i < count; i += blockDim.x)
        smem[i] = reinterpret_cast<const float4 *>(src)[i];
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int e = warp * EPW + lane / LPE, l = lane % LPE;
    int t0, t1, k0, k1;
    if (LPE == 32) {
        t0 = (l % 2) + 2 * (l / 16), t1 = t0 + 4;
        k0 = (l % 16) / 2, k1 = k0 + 8;
    } else {
        t0 = (l >> 2) & 1, t1 = t0 + 2;
        k0 = l & 3, k1 = k0 + 4;
    }
    const float4 *a = tiles + e * CHANNELS * TILES / 4, *b = maps + e * CHANNELS * OUTS / 4;
    float sum[8][8] = {};
    for (int chunk = 0; chunk < chunks; ++chunk) {
#pragma unroll
        for (int c = 0; c < CHANNELS; ++c) {
            const float4 x0 = a[c * TILES / 4 + t0], x1 = a[c * TILES / 4 + t1];
            const float4 y0 = b[c * OUTS / 4 + k0], y1 = b[c * OUTS / 4 + k1];
            const float x[8] = {x0.x, x0.y, x0.z, x0.w, x1.x, x1.y, x1.z, x1.w};
            const float y[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j)
                    sum[i][j] = fmaf(x[i], y[j], sum[i][j]);
        }
        __syncthreads(); /* a staged kernel's barrier; also makes the reads above re-issue */
    }
    float total = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            total += sum[i][j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

template <int WARPS, int LPE>
static void run(int sms, double peak, int chunks, const float *src, float *out)
{
    constexpr int E = WARPS * (32 / LPE), TILES = LPE == 32 ? 32 : 16, OUTS = LPE == 32 ? 64 : 32;
    const size_t bytes = (size_t)E * CHANNELS * (TILES + OUTS) * sizeof(float);
    CK(cudaFuncSetAttribute(products<WARPS, LPE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, products<WARPS, LPE>));
    const float median = median_ms([&] { products<WARPS, LPE><<<sms, WARPS * 32, bytes>>>(src, out, chunks); }, 3, 21);
    double flops = 2.0 * 64 * 32 * WARPS * CHANNELS * (double)chunks * sms; /* 64 FFMA a lane a channel */
    double tflops = flops / (median * 1e-3) / 1e12;
    printf("| %2d warps | %2d lanes an element (%2d tiles x %2d maps) | %3d regs, %2d B stack | %6.1f KB smem | %8.3f ms | %6.2f TFLOP/s | %5.1f%% |\n",
           WARPS, LPE, TILES, OUTS, fa.numRegs, (int)fa.localSizeBytes, bytes / 1024.0, median, tflops,
           100 * tflops / peak);
}

int main(int argc, char **argv)
{
    int chunks = argc > 1 ? atoi(argv[1]) : 4096;
    cudaDeviceProp p;
    double mhz;
    const double peak = probe_fma_peak(&p, &mhz);
    printf("%s, %d SMs at %.0f MHz: fp32 FMA peak %.1f TFLOP/s; %d chunks of %d channels a block\n\n", p.name,
           p.multiProcessorCount, mhz, peak, chunks, CHANNELS);
    const size_t floats = 18 * 4 * CHANNELS * 96; /* the largest block's operands */
    float *host = (float *)malloc(floats * sizeof *host), *src, *out;
    for (size_t i = 0; i < floats; ++i)
        host[i] = (float)((i * 7) % 5) - 2; /* small integers: the sums stay exact */
    CK(cudaMalloc((void **)&src, floats * sizeof *src));
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * 18 * 32 * sizeof *out));
    CK(cudaMemcpy(src, host, floats * sizeof *src, cudaMemcpyHostToDevice));
    printf("| warps | layout | registers | smem | median | products | of the peak |\n| --- | --- | ---: | ---: | ---: | ---: | ---: |\n");
    const int sms = p.multiProcessorCount;
    run<8, 32>(sms, peak, chunks, src, out);
    run<12, 32>(sms, peak, chunks, src, out);
    run<16, 32>(sms, peak, chunks, src, out);
    run<18, 32>(sms, peak, chunks, src, out);
    run<8, 8>(sms, peak, chunks, src, out);
    run<9, 8>(sms, peak, chunks, src, out);
    run<12, 8>(sms, peak, chunks, src, out);
    run<16, 8>(sms, peak, chunks, src, out);
    CK(cudaFree(src));
    CK(cudaFree(out));
    free(host);
    return 0;
}
