/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 57"), built by hand on a GPU machine:
 *   nvcc -O3 -arch=sm_90 -o tp bench/probes/tf32x3_products.cu && ./tp [CHUNKS]
 *
 * The question: at what rate can the cluster kernel's products run on the tensor cores with
 * mma.sync (m16n8k8, TF32), its operands in shared memory laid out as the mma's fragments (as
 * bench/probes/winograd_cluster_fragments.patch lays them out), against the FFMA peak? A block
 * an SM of WARPS warps, each a Winograd element's 32 tiles x 128 outputs (16 x 8 sums a lane,
 * as the kernel's), summed over chunks of 8 channels (one K step) with a barrier between chunks;
 * the operands read from shared memory every chunk. Modes:
 *   1xTF32: one mma a product (TF32's accuracy: the bound of the rate);
 *   3xTF32: a_lo b_hi + a_hi b_lo + a_hi b_hi, each operand's lo made from it in the loop (three
 *           instructions a value: the patch's product loop);
 *   3xTF32, lo stored: the lo halves loaded beside the values (the producers' work, NOTES' next
 *           step 1): loads and mma only.
 * Output: the products' rate in fp32 FLOP/s (2 an FMA of the 32 x 128 x 8 a warp and chunk),
 * against the fp32 FMA peak at the clock the device reports. The operands are small integers in
 * float, so every mode's sums are exact and the same. */
#include "probe.h"

enum { TILES = 32, OUTS = 128, CHANNELS = 8, MTILES = OUTS / 16, NTILES = TILES / 8 };

/* MODE 1: 1xTF32; 3: 3xTF32, lo made in the loop; 4: 3xTF32, lo loaded. Shared memory per warp: A
 * fragments [m-tile][lane][4] (and their lo after), B pairs [n-tile][lane][2] (and their lo). */
template <int WARPS, int MODE>
__global__ void __launch_bounds__(WARPS * 32, 1) products(const float *src, float *out, int chunks)
{
    constexpr int A = MTILES * 32 * 4, B = NTILES * 32 * 2, PER_WARP = 2 * (A + B);
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    for (int i = threadIdx.x; i < WARPS * PER_WARP; i += blockDim.x)
        smem[i] = src[i % 4096];
    __syncthreads();
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float4 *a = (const float4 *)(smem + warp * PER_WARP) + lane;
    const float2 *b = (const float2 *)(smem + warp * PER_WARP + 2 * A) + lane;
    float acc[MTILES][NTILES][4] = {};
    for (int chunk = 0; chunk < chunks; ++chunk) {
        unsigned b_hi[NTILES][2], b_lo[NTILES][2];
#pragma unroll
        for (int j = 0; j < NTILES; ++j) {
            const float2 v = b[j * 32];
            b_hi[j][0] = __float_as_uint(v.x), b_hi[j][1] = __float_as_uint(v.y);
            if (MODE == 4) {
                const float2 l = b[NTILES * 32 + j * 32];
                b_lo[j][0] = __float_as_uint(l.x), b_lo[j][1] = __float_as_uint(l.y);
            } else {
                b_lo[j][0] = lo_of(v.x), b_lo[j][1] = lo_of(v.y);
            }
        }
#pragma unroll
        for (int i = 0; i < MTILES; ++i) {
            const float4 v = a[i * 32];
            const unsigned a_hi[4] = {__float_as_uint(v.x), __float_as_uint(v.y), __float_as_uint(v.z), __float_as_uint(v.w)};
            unsigned a_lo[4];
            if (MODE == 4) {
                const float4 l = a[MTILES * 32 + i * 32];
                a_lo[0] = __float_as_uint(l.x), a_lo[1] = __float_as_uint(l.y), a_lo[2] = __float_as_uint(l.z),
                a_lo[3] = __float_as_uint(l.w);
            } else {
                a_lo[0] = lo_of(v.x), a_lo[1] = lo_of(v.y), a_lo[2] = lo_of(v.z), a_lo[3] = lo_of(v.w);
            }
            if (MODE != 1) {
#pragma unroll
                for (int j = 0; j < NTILES; ++j)
                    mma(acc[i][j], a_lo, b_hi[j]);
#pragma unroll
                for (int j = 0; j < NTILES; ++j)
                    mma(acc[i][j], a_hi, b_lo[j]);
            }
#pragma unroll
            for (int j = 0; j < NTILES; ++j)
                mma(acc[i][j], a_hi, b_hi[j]);
        }
        __syncthreads(); /* a staged kernel's barrier; also makes the loads above re-issue */
    }
    float total = 0;
#pragma unroll
    for (int i = 0; i < MTILES; ++i)
#pragma unroll
        for (int j = 0; j < NTILES; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                total += acc[i][j][r];
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

template <int WARPS, int MODE>
static void run(int sms, double peak, int chunks, const float *src, float *out)
{
    const size_t bytes = (size_t)WARPS * 2 * (MTILES * 32 * 4 + NTILES * 32 * 2) * sizeof(float);
    CK(cudaFuncSetAttribute(products<WARPS, MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, products<WARPS, MODE>));
    const float median = median_ms([&] { products<WARPS, MODE><<<sms, WARPS * 32, bytes>>>(src, out, chunks); }, 3, 21);
    const double flops = 2.0 * TILES * OUTS * CHANNELS * WARPS * (double)chunks * sms, tflops = flops / (median * 1e-3) / 1e12;
    const char *mode = MODE == 1 ? "1xTF32" : MODE == 3 ? "3xTF32, lo made" : "3xTF32, lo stored";
    printf("| %2d warps | %-17s | %3d regs, %2d B stack | %8.3f ms | %7.2f TFLOP/s | %6.1f%% |\n", WARPS, mode,
           fa.numRegs, (int)fa.localSizeBytes, median, tflops, 100 * tflops / peak);
}

int main(int argc, char **argv)
{
    const int chunks = argc > 1 ? atoi(argv[1]) : 4096;
    cudaDeviceProp p;
    double mhz;
    const double peak = probe_fma_peak(&p, &mhz);
    printf("%s, %d SMs at %.0f MHz: fp32 FMA peak %.1f TFLOP/s; %d chunks of %d channels a block\n\n", p.name,
           p.multiProcessorCount, mhz, peak, chunks, CHANNELS);
    float *host = (float *)malloc(4096 * sizeof *host), *src, *out;
    for (int i = 0; i < 4096; ++i)
        host[i] = (float)((i * 7) % 5) - 2; /* small integers: lo is 0 and the sums stay exact */
    CK(cudaMalloc((void **)&src, 4096 * sizeof *src));
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * 16 * 32 * sizeof *out));
    CK(cudaMemcpy(src, host, 4096 * sizeof *src, cudaMemcpyHostToDevice));
    printf("| warps | products | registers | median | rate (fp32 FLOP/s) | of the FFMA peak |\n"
           "| --- | --- | ---: | ---: | ---: | ---: |\n");
    const int sms = p.multiProcessorCount;
    run<8, 1>(sms, peak, chunks, src, out);
    run<8, 3>(sms, peak, chunks, src, out);
    run<8, 4>(sms, peak, chunks, src, out);
    run<12, 3>(sms, peak, chunks, src, out);
    run<12, 4>(sms, peak, chunks, src, out);
    CK(cudaFree(src));
    CK(cudaFree(out));
    free(host);
    return 0;
}
