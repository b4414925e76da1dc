/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 59"), built by hand on a GPU machine:
 *   nvcc -O3 -gencode arch=compute_90a,code=sm_90a -o wc bench/probes/wgmma_chain.cu && ./wc
 *
 * The question: how many independent sums must a warpgroup keep in flight for wgmma TF32 (A from
 * registers, B by descriptor) to reach its rate? The cluster kernel's wgmma products (the patch
 * bench/probes/winograd_wgmma.patch) ran each sum's three wgmma in a chain, one or two sums in
 * flight, and reached 19% of the tensor cores. One block an SM of WG warpgroups; each loops over
 * STEPS rounds of: J sums, each TERMS wgmma (the 3xTF32 terms, on the sum's own accumulator), issued
 * term by term across the sums (the J independent first), one commit group, then a wait for it
 * (wait 0: nothing in flight across rounds, as in the patch's waits) or for the one before it
 * (wait 1). Operands are zeros: the rate is the point. Output: the round's cycles, and TF32
 * TFLOP/s against wgmma_rate.cu's peaks (~480 at m64n64k8). m64n32k8 is the cluster kernel's 32 tiles
 * an element; m64n128k8 the shape of 64 tiles an element block (its A the tiles, B 128 outputs). */
#include <stdint.h>

#include "probe.h"

/* A descriptor of shared memory at `at` (bytes): K-major, no swizzle, 128 bytes between core
 * matrices along K, 256 along M or N. */
static __device__ __forceinline__ uint64_t descriptor(unsigned at)
{
    return (uint64_t)((at & 0x3ffff) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

static __device__ __forceinline__ void wgmma_rs(float (&d)[16], const unsigned (&a)[4], uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, {%16, %17, %18, %19}, %20, 1, 1, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

static __device__ __forceinline__ void wgmma_rs(float (&d)[64], const unsigned (&a)[4], uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, {%64, %65, %66, %67}, %68, 1, 1, 1;"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b));
}

template <int N, int J, int TERMS, int WAIT>
__global__ void __launch_bounds__(256, 1) chain(float *out, int steps)
{
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    for (int i = threadIdx.x; i < 8 * N; i += blockDim.x)
        smem[i] = 0.0f;
    __syncthreads();
    const uint64_t b = descriptor((unsigned)__cvta_generic_to_shared(smem));
    const unsigned a[4] = {0u, 0u, 0u, 0u};
    float d[J][N / 2];
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int i = 0; i < N / 2; ++i)
            d[j][i] = 0.0f;
    for (int s = 0; s < steps; ++s) {
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int t = 0; t < TERMS; ++t)
#pragma unroll
            for (int j = 0; j < J; ++j)
                wgmma_rs(d[j], a, b);
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        if (WAIT == 0)
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
        else
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    float total = 0;
#pragma unroll
    for (int j = 0; j < J; ++j)
#pragma unroll
        for (int i = 0; i < N / 2; ++i)
            total += d[j][i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = total;
}

template <int N, int J, int TERMS, int WAIT>
static void run(int sms, int warpgroups, double mhz, int steps, float *out)
{
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, chain<N, J, TERMS, WAIT>));
    const float ms = median_ms([&] { chain<N, J, TERMS, WAIT><<<sms, 128 * warpgroups, 8 * N * 4>>>(out, steps); }, 3, 11);
    const double flops = 2.0 * 64 * N * 8 * TERMS * J * (double)steps * warpgroups * sms;
    printf("| m64n%dk8 | %d | %d | %d | %d | %3d | %7.1f | %7.1f |\n", N, warpgroups, J, TERMS, WAIT, fa.numRegs,
           ms * 1e-3 * mhz * 1e6 / steps, flops / (ms * 1e-3) / 1e12);
}

int main(int argc, char **argv)
{
    const int steps = argc > 1 ? atoi(argv[1]) : 1 << 14;
    cudaDeviceProp p;
    double mhz;
    probe_fma_peak(&p, &mhz);
    printf("%s, %d SMs at %.0f MHz; %d rounds\n\n", p.name, p.multiProcessorCount, mhz, steps);
    float *out;
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * 256 * sizeof *out));
    printf("| shape | warpgroups | sums J | terms | wait | registers | cycles a round | TF32 TFLOP/s |\n"
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    const int sms = p.multiProcessorCount;
    for (int wgs = 1; wgs <= 2; ++wgs) {
        run<32, 1, 1, 0>(sms, wgs, mhz, steps, out); /* one wgmma's latency */
        run<32, 1, 3, 0>(sms, wgs, mhz, steps, out); /* a sum's three in a chain: the patch's first form */
        run<32, 1, 3, 1>(sms, wgs, mhz, steps, out);
        run<32, 2, 3, 1>(sms, wgs, mhz, steps, out);
        run<32, 4, 3, 0>(sms, wgs, mhz, steps, out);
        run<32, 4, 3, 1>(sms, wgs, mhz, steps, out);
        run<32, 8, 3, 0>(sms, wgs, mhz, steps, out); /* a warpgroup's 8 sums a chunk, interleaved */
        run<32, 8, 3, 1>(sms, wgs, mhz, steps, out);
        run<128, 1, 3, 0>(sms, wgs, mhz, steps, out);
        run<128, 1, 3, 1>(sms, wgs, mhz, steps, out);
        run<128, 2, 3, 1>(sms, wgs, mhz, steps, out);
    }
    CK(cudaFree(out));
    return 0;
}
