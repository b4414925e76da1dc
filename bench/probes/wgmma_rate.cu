/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 58"), built by hand on a GPU machine:
 *   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o wr bench/probes/wgmma_rate.cu && ./wr [STEPS]
 *
 * The question: how fast are Hopper's asynchronous warpgroup mma (wgmma, TF32 operands, fp32
 * sums) against the mma.sync the cluster kernel uses (tf32x3_products.cu: 263 TFLOP/s at 1xTF32
 * on an H200, so 3xTF32's products at ~1.3x the FFMA peak)? wgmma reads B (and A, or A from
 * registers) from shared memory by descriptor, so its operands cost the warps no register reads
 * and no instructions: the cluster kernel's products and loaders might then overlap, which the
 * mma.sync products do not (call 5). One block an SM of 1 or 2 warpgroups, each issuing m64n64k8
 * (or m64n32k8, the cluster kernel's 32 tiles an element) wgmma over STEPS K steps in commit
 * groups of 8, accumulators in registers (N / 2 a thread); A (64 x 8) and B (8 x N) from shared
 * memory, K-major without swizzle (8 x 16-byte core matrices), or A from registers (4 a thread:
 * where 3xTF32's lo halves would be made). The operands are zeros: the rate is the point, not the
 * values (the tensor cores' rate does not depend on them). Output: TF32 TFLOP/s (2 an FMA),
 * 3xTF32's (a third), and that against the fp32 FMA peak at the clock the device reports. */
#include <stdint.h>

#include "probe.h"

enum { GROUP = 8 }; /* wgmma a commit group */

/* A matrix descriptor of shared memory at `at` (bytes): K-major, no swizzle; lead: the bytes
 * between core matrices along K, stride: between core matrices along M or N. */
static __device__ __forceinline__ uint64_t descriptor(unsigned at, unsigned lead, unsigned stride)
{
    return (uint64_t)((at & 0x3ffff) >> 4) | (uint64_t)((lead & 0x3ffff) >> 4) << 16 |
           (uint64_t)((stride & 0x3ffff) >> 4) << 32;
}

/* The 32 sums a thread of m64n64k8: as asm operands, and their places in the instruction. */
#define D32(d)                                                                                                         \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),        \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),         \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),        \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
#define D32_LIST                                                                                                       \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                                          \
    "%16, %17, %18, %19, %20, %21, %22, "                                                                              \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31}, "

#define D16(d)                                                                                                         \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),        \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
#define D16_LIST "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "

/* d += a b, m64nNk8 (N = 2 x d's length), TF32: A and B by descriptor (ss), or A from registers (rs). */
static __device__ __forceinline__ void wgmma_ss(float (&d)[16], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 " D16_LIST "%16, %17, 1, 1, 1;"
                 : D16(d)
                 : "l"(a), "l"(b));
}
static __device__ __forceinline__ void wgmma_rs(float (&d)[16], const unsigned (&a)[4], uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 " D16_LIST "{%16, %17, %18, %19}, %20, 1, 1, 1;"
                 : D16(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}
static __device__ __forceinline__ void wgmma_ss(float (&d)[32], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " D32_LIST "%32, %33, 1, 1, 1;"
                 : D32(d)
                 : "l"(a), "l"(b));
}
static __device__ __forceinline__ void wgmma_rs(float (&d)[32], const unsigned (&a)[4], uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 " D32_LIST "{%32, %33, %34, %35}, %36, 1, 1, 1;"
                 : D32(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <int N, int WARPGROUPS, bool A_REGS>
__global__ void __launch_bounds__(128 * WARPGROUPS, 1) rate(float *out, int steps)
{
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    for (int i = threadIdx.x; i < 2 * (64 * 8 + 8 * 64); i += blockDim.x)
        smem[i] = 0.0f;
    __syncthreads();
    const unsigned base = (unsigned)__cvta_generic_to_shared(smem);
    /* A: 64 x 8 TF32 = 8 core matrices of 8 rows x 16 bytes down M, 2 along K: lead 128 bytes
     * (the next 4 of K), stride 256 (the next 8 rows); B: 8 x N likewise down N */
    const uint64_t a = descriptor(base, 128, 256), b = descriptor(base + 64 * 8 * 4, 128, 256);
    const unsigned a_regs[4] = {0u, 0u, 0u, 0u};
    float d[N / 2];
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
        d[i] = 0.0f;
    for (int s = 0; s < steps; s += GROUP) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int k = 0; k < GROUP; ++k) {
            if (A_REGS)
                wgmma_rs(d, a_regs, b);
            else
                wgmma_ss(d, a, b);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory"); /* one group in flight behind */
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    float total = 0;
#pragma unroll
    for (int i = 0; i < N / 2; ++i)
        total += d[i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

template <int N, int WARPGROUPS, bool A_REGS> static void run(int sms, double peak, int steps, float *out)
{
    const int bytes = 2 * (64 * 8 + 8 * 64) * (int)sizeof(float);
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, rate<N, WARPGROUPS, A_REGS>));
    const float ms =
        median_ms([&] { rate<N, WARPGROUPS, A_REGS><<<sms, 128 * WARPGROUPS, bytes>>>(out, steps); }, 3, 21);
    const double flops = 2.0 * 64 * N * 8 * (double)steps * WARPGROUPS * sms, tflops = flops / (ms * 1e-3) / 1e12;
    printf("| m64n%dk8 | %d | %-9s | %3d regs | %8.3f ms | %7.1f | %7.1f | %5.2fx |\n", N, WARPGROUPS,
           A_REGS ? "registers" : "shared", fa.numRegs, ms, tflops, tflops / 3, tflops / 3 / peak);
}

int main(int argc, char **argv)
{
    const int steps = argc > 1 ? atoi(argv[1]) / GROUP * GROUP : 1 << 16;
    cudaDeviceProp p;
    double mhz;
    const double peak = probe_fma_peak(&p, &mhz);
    printf("%s, %d SMs at %.0f MHz: fp32 FMA peak %.1f TFLOP/s; %d wgmma TF32 a warpgroup\n\n", p.name,
           p.multiProcessorCount, mhz, peak, steps);
    float *out;
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * 256 * sizeof *out));
    printf("| shape | warpgroups | A from | registers | median | TF32 TFLOP/s | 3xTF32 TFLOP/s | 3xTF32 / FFMA peak |\n"
           "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |\n");
    const int sms = p.multiProcessorCount;
    run<64, 1, false>(sms, peak, steps, out);
    run<64, 2, false>(sms, peak, steps, out);
    run<64, 1, true>(sms, peak, steps, out);
    run<64, 2, true>(sms, peak, steps, out);
    run<32, 2, false>(sms, peak, steps, out); /* the cluster kernel's shape: 32 tiles an element */
    run<32, 2, true>(sms, peak, steps, out);
    CK(cudaFree(out));
    return 0;
}
