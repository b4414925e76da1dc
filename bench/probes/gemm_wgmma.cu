/* A batched SGEMM in 3xTF32 by wgmma (sm_90a), the fprop/bprop form of `winograd`'s products step:
 * C (column-major, [n][m]) = op(A) op(B), op(A) = A stored [k][m] (the tiles V, runs along m), op(B)
 * stored [k][n] (the weights U, runs along n), against cuBLAS's SGEMM (bench/NOTES.md, "Issue 30,
 * session 60"). gemm_tf32x3.cu's mma.sync kernel ran V3's products at 0.73x the FFMA peak (cuBLAS
 * 0.67x): mma.sync holds up the other instructions of its SMSP, so the lo halves and the loads add
 * to the mma's time. wgmma is asynchronous: does a GEMM by it reach the 2.3-2.4x of the FFMA peak
 * that wgmma_chain.cu measured for 3xTF32?
 *
 * Two kernels, both with A and B from shared memory (SS: no register operand of a wgmma, so no
 * register of an operand is overwritten while a wgmma in flight reads it, which an A from
 * registers waited for one step behind did: wrong sums in call 2), each operand in wgmma's
 * K-major core matrices (8 rows x 16 bytes, 4 k), hi (the value: the tensor cores read its TF32
 * bits) and lo (tf32_lo) side by side, 3 wgmma a k step of 8 (lo hi, hi lo, hi hi), the first
 * step's first not adding to D (so that no instruction of its own zeroes the sums, which made
 * ptxas serialize every wgmma):
 * - gemm_wgmma: 2 warpgroups, each 64 rows (m) x BN (n, wgmma's N); the sum in steps of BK through
 *   STAGES cp.async stages of the raw tiles as stored, which all 256 threads turn into the core
 *   matrices each step (a transpose, hi and lo), then two barriers. 0.43 ms on V3: the skeleton
 *   alone (no wgmma) took 0.30.
 * - gemm_ws: warp-specialized, the operands laid out in core-matrix order by their producer (the
 *   Winograd transforms would write them so), a block's step one contiguous piece a bulk copy.
 *   0.28 ms on V3 (1.43x the FFMA peak, 2.1x cuBLAS's SGEMM).
 *
 * Build: nvcc -O3 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -lcublas -o gw
 *        bench/probes/gemm_wgmma.cu && ./gw */
#include <cublas_v2.h>
#include <stdint.h>

#include <math.h>

#include "probe.h"
#include "gemm_probe.h"

static __device__ __forceinline__ void copy16(void *dst, const float *src, bool inside)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(inside ? 16 : 0));
}

/* K-major, no swizzle: core matrices of 8 rows (n) x 16 bytes (4 k), the next 4 k 128 bytes on,
 * the next 8 rows 256 bytes on. */
static __device__ __forceinline__ uint64_t descriptor(const float *p)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(p);
    return (uint64_t)((at & 0x3ffff) >> 4) | (uint64_t)(128 >> 4) << 16 | (uint64_t)(256 >> 4) << 32;
}

static __device__ __forceinline__ void wgmma_ss(float (&d)[64], uint64_t a, uint64_t b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
                 : "l"(a), "l"(b), "r"(add));
}

static __device__ __forceinline__ void wgmma_ss(float (&d)[96], uint64_t a, uint64_t b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n192k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95])
                 : "l"(a), "l"(b), "r"(add));
}

static __device__ __forceinline__ void wgmma_ss(float (&d)[128], uint64_t a, uint64_t b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
                 : "l"(a), "l"(b), "r"(add));
}

/* Keeps the compiler from moving a read or write of x across a wgmma fence or wait (x a sum the
 * tensor cores write), at no instruction's cost. */
static __device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }


template <int BN, int BK, int STAGES> struct Wg {
    static constexpr int BM = 128, THREADS = 256, AP = BM + 4, BP = BN + 4;
    static constexpr int STAGE = BK * AP + BK * BP;     // raw floats a stage
    static constexpr int CA = BK * BM, CB = BK * BN;     // a converted operand's floats (hi or lo)
    static constexpr int CONV = 2 * (CA + CB);           // a converted step: A hi, A lo, B hi, B lo
    static constexpr int SHARED = (2 * CONV + STAGES * STAGE) * 4;
};

/* Rows (m or n) `rows` x BK of a raw stage ([k][row], pitch `pitch`) into wgmma's K-major core
 * matrices, hi and lo (`lo_at` floats on): per k8 step s, [row / 8][h][row % 8][4 k] (8 s + 4 h ..),
 * a step's rows * 8 floats. Where `pair` (A), smem row 16 w + g holds m 16 w + 2 g and 16 w + 8 + g
 * holds m 16 w + 2 g + 1, so that each thread's sums of rows g and g + 8 are neighbours in C. */
template <int ROWS, int BK, int THREADS, bool PAIR>
static __device__ __forceinline__ void convert(const float *raw, int pitch, float *dst, int lo_at, unsigned tid)
{
#pragma unroll
    for (int i = tid; i < BK / 4 * ROWS; i += THREADS) {
        const int rho = i % ROWS, q = i / ROWS, s = q / 2, h = q % 2; // q: the 4 k 4 q ..
        const int row = PAIR ? (rho & ~15) + 2 * (rho & 7) + (rho >> 3 & 1) : rho;
        const float *src = raw + 4 * q * pitch + row;
        const float v[4] = {src[0], src[pitch], src[2 * pitch], src[3 * pitch]};
        float *d = dst + s * ROWS * 8 + rho / 8 * 64 + h * 32 + rho % 8 * 4;
        *(float4 *)d = make_float4(v[0], v[1], v[2], v[3]);
        *(uint4 *)(d + lo_at) = make_uint4(lo_of(v[0]), lo_of(v[1]), lo_of(v[2]), lo_of(v[3]));
    }
}

template <int BN, int BK, int STAGES, int TERMS>
__global__ void __launch_bounds__(256, 1)
gemm_wgmma(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, Shape sh)
{
    using G = Wg<BN, BK, STAGES>;
    extern __shared__ float4 smem4[];
    float *conv = (float *)smem4, *raw = conv + 2 * G::CONV;
    const unsigned tid = threadIdx.x, warp = tid >> 5, wg = warp >> 2, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
    const unsigned m0 = blockIdx.x * G::BM, n0 = blockIdx.y * BN;
    a += blockIdx.z * sh.sa;
    b += blockIdx.z * sh.sb;
    c += blockIdx.z * sh.sc;

    auto load = [&](int kt, int st) {
        float *as = raw + st * G::STAGE, *bs = as + BK * G::AP;
        const int k0 = kt * BK;
#pragma unroll
        for (int i = tid; i < BK * G::BM / 4; i += G::THREADS) {
            const int kr = i / (G::BM / 4), mc = i % (G::BM / 4) * 4;
            const bool in = k0 + kr < sh.k && (int)m0 + mc < sh.m;
            copy16(as + kr * G::AP + mc, in ? a + (long long)(k0 + kr) * sh.lda + m0 + mc : a, in);
        }
#pragma unroll
        for (int i = tid; i < BK * BN / 4; i += G::THREADS) {
            const int kr = i / (BN / 4), nc = i % (BN / 4) * 4;
            const bool in = k0 + kr < sh.k && (int)n0 + nc < sh.n;
            copy16(bs + kr * G::BP + nc, in ? b + (long long)(k0 + kr) * sh.ldb + n0 + nc : b, in);
        }
    };

    float acc[BN / 2]; // set by the first wgmma (its D not added: add 0), not by instructions of
                       // its own, which would make ptxas serialize every wgmma
    const int kts = (sh.k + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kts)
            load(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int kt = 0; kt < kts; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads(); // stage kt in; the wgmma of step kt - 2 done in both warpgroups (conv[kt & 1] free)
        if (kt + STAGES - 1 < kts)
            load(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        asm volatile("cp.async.commit_group;\n" ::);
        const float *as = raw + kt % STAGES * G::STAGE, *bs = as + BK * G::AP;
        float *ca = conv + (kt & 1) * G::CONV, *cb = ca + 2 * G::CA;
        convert<G::BM, BK, G::THREADS, true>(as, G::AP, ca, G::CA, tid);
        convert<BN, BK, G::THREADS, false>(bs, G::BP, cb, G::CB, tid);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int s = 0; s < BK / 8; ++s) {
            const uint64_t ah = descriptor(ca + s * G::BM * 8 + wg * 512), al = descriptor(ca + G::CA + s * G::BM * 8 + wg * 512);
            const uint64_t bh = descriptor(cb + s * BN * 8), bl = descriptor(cb + G::CB + s * BN * 8);
            if (TERMS == 3) {
                wgmma_ss(acc, al, bh, kt | s);
                wgmma_ss(acc, ah, bl, 1);
            }
            if (TERMS > 0) // 0: the skeleton alone, timed (no sums)
                wgmma_ss(acc, ah, bh, TERMS == 3 || kt | s);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < BN / 2; ++i)
        fence_operand(acc[i]);
    asm volatile("cp.async.wait_all;\n" ::);
    store_pairs<BN>(c, acc, m0 + 16 * warp + 2 * g, n0, t, sh); // rows g, g + 8 at m 2 g, 2 g + 1
}

static void report(const char *name, int regs, int shared, float ms, const Shape &s, double peak, float *dc,
                   const std::vector<float> &ha, const std::vector<float> &hb)
{
    std::vector<float> hc((size_t)s.sc * s.batch);
    CK(cudaMemcpy(hc.data(), dc, sizeof(float) * hc.size(), cudaMemcpyDeviceToHost));
    size_t nans = 0;
    for (int e = 0; e < s.batch; ++e)
        for (int j = 0; j < s.n; ++j)
            for (int i = 0; i < s.m; ++i)
                nans += isnan(hc[e * s.sc + (long long)j * s.ldc + i]);
    double ra, r;
    sample_error(ha, hb, hc, s, &ra, &r);
    double flop = 2.0 * s.m * s.n * s.k * s.batch;
    printf("%-30s %4d regs %3d KB: %8.4f ms, %6.1f TFLOP/s (%.2fx FFMA peak), err/sum|ab| %.2e, rel %.2e%s\n", name,
           regs, shared / 1024, ms, flop / ms / 1e9, flop / ms / 1e9 / peak, ra, r,
           nans ? " UNWRITTEN (NaN) SUMS" : "");
}

/* Times kern (one of the GEMMs) on the shape, C poisoned before, and reports it. */
template <class Kernel>
static void time_report(const char *name, Kernel kern, dim3 grid, int threads, int shared, const Shape &s,
                        const float *da, const float *db, float *dc, const std::vector<float> &ha,
                        const std::vector<float> &hb, double peak)
{
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    CK(cudaMemset(dc, 0xff, sizeof(float) * s.sc * s.batch));
    float ms = median_ms([&] { kern<<<grid, threads, shared>>>(da, db, dc, s); }, 3, 21);
    report(name, fa.numRegs, shared, ms, s, peak, dc, ha, hb);
    if (fa.localSizeBytes)
        printf("  local memory %zu bytes\n", (size_t)fa.localSizeBytes);
}

template <int BN, int BK, int STAGES, int TERMS>
static void run(const char *name, const Shape &s, const float *da, const float *db, float *dc,
                const std::vector<float> &ha, const std::vector<float> &hb, double peak)
{
    using G = Wg<BN, BK, STAGES>;
    dim3 grid((s.m + G::BM - 1) / G::BM, (s.n + BN - 1) / BN, s.batch);
    time_report(name, gemm_wgmma<BN, BK, STAGES, TERMS>, grid, G::THREADS, G::SHARED, s, da, db, dc, ha, hb, peak);
}

/* The warp-specialized form (gemm_ws): the operands come laid out by their producers (the
 * Winograd transforms would write them so) in wgmma's K-major core-matrix order, a block's step
 * (BK x its rows) one contiguous piece, [BK / 8][rows / 8][2][8][4]; A's rows paired as above. A
 * block of 3 warpgroups: in warpgroup 0, warp 0 brings each step's two pieces by bulk copies (one
 * thread, counted on loaded[s]) as soon as its stage is free, and warps 1-3 make their lo halves
 * beside them (ready[s]); warpgroups 1 and 2 sum 64 rows x BN each by wgmma from the stage and
 * hand it back (empty[s]) once their group is done. (Call 4 had warpgroup 0 issue a step's copies
 * and wait for them before converting: no copy ahead, 0.34 ms on V3.) */
static __device__ __forceinline__ unsigned sa(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void bar_init(uint64_t *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(sa(b)), "r"(count) : "memory");
}
static __device__ __forceinline__ void bar_arrive(uint64_t *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(sa(b)) : "memory");
}
static __device__ __forceinline__ void bar_expect(uint64_t *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(b)), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void bar_wait(uint64_t *b, unsigned parity)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(sa(b)), "r"(parity) : "memory");
    while (!done);
}
static __device__ __forceinline__ void bulk(void *dst, const void *src, unsigned bytes, uint64_t *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(sa(dst)),
                 "l"(src), "r"(bytes), "r"(sa(b)) : "memory");
}

template <int BN, int BK, int STAGES> struct Ws {
    static constexpr int BM = 128, THREADS = 384;
    static constexpr int CA = BK * BM, CB = BK * BN, STAGE = 2 * (CA + CB); // floats: A hi, A lo, B hi, B lo
    static constexpr int SHARED = STAGES * STAGE * 4 + 3 * STAGES * 8;
};

template <int BN, int BK, int STAGES, int TERMS = 3, bool CONVERT = true>
__global__ void __launch_bounds__(384, 1)
gemm_ws(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, Shape sh)
{
    using G = Ws<BN, BK, STAGES>;
    extern __shared__ float4 smem4[];
    float *stages = (float *)smem4;
    uint64_t *loaded = (uint64_t *)(stages + STAGES * G::STAGE), *ready = loaded + STAGES, *empty = ready + STAGES;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
    const int kts = (sh.k + BK - 1) / BK, mbs = (sh.m + G::BM - 1) / G::BM, nbs = (sh.n + BN - 1) / BN;
    const float *a_piece = a + ((long long)blockIdx.z * mbs + blockIdx.x) * kts * G::CA;
    const float *b_piece = b + ((long long)blockIdx.z * nbs + blockIdx.y) * kts * G::CB;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s)
            bar_init(&loaded[s], 1), bar_init(&ready[s], 3), bar_init(&empty[s], 2);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) { // the copier: each step's two pieces as soon as their stage is free
        if (lane == 0)
            for (int kt = 0; kt < kts; ++kt) {
                const int s = kt % STAGES;
                float *st = stages + s * G::STAGE;
                if (kt >= STAGES)
                    bar_wait(&empty[s], (kt / STAGES - 1) & 1);
                bar_expect(&loaded[s], (G::CA + G::CB) * 4);
                bulk(st, a_piece + (long long)kt * G::CA, G::CA * 4, &loaded[s]);
                bulk(st + 2 * G::CA, b_piece + (long long)kt * G::CB, G::CB * 4, &loaded[s]);
            }
        return;
    }
    if (warp < 4) { // the converters: the lo halves beside the his, A's then B's, a float4 at a time
        const unsigned ct = tid - 32u;
        for (int kt = 0; kt < kts; ++kt) {
            const int s = kt % STAGES;
            float *st = stages + s * G::STAGE;
            bar_wait(&loaded[s], (kt / STAGES) & 1);
#pragma unroll
            for (int i = ct; CONVERT && i < G::CA / 4; i += 96) {
                const float4 v = ((const float4 *)st)[i];
                ((uint4 *)(st + G::CA))[i] = make_uint4(lo_of(v.x), lo_of(v.y), lo_of(v.z), lo_of(v.w));
            }
#pragma unroll
            for (int i = ct; CONVERT && i < G::CB / 4; i += 96) {
                const float4 v = ((const float4 *)(st + 2 * G::CA))[i];
                ((uint4 *)(st + 2 * G::CA + G::CB))[i] = make_uint4(lo_of(v.x), lo_of(v.y), lo_of(v.z), lo_of(v.w));
            }
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncwarp();
            if (lane == 0)
                bar_arrive(&ready[s]);
        }
        return;
    }
    const unsigned cw = warp - 4, wg = cw >> 2; // consumer warp 0..7, warpgroup 0..1
    float acc[BN / 2];
    for (int kt = 0; kt < kts; ++kt) {
        const int s = kt % STAGES;
        const float *st = stages + s * G::STAGE;
        bar_wait(&ready[s], (kt / STAGES) & 1);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int q = 0; q < BK / 8; ++q) {
            const uint64_t ah = descriptor(st + q * G::BM * 8 + wg * 512), al = descriptor(st + G::CA + q * G::BM * 8 + wg * 512);
            const uint64_t bh = descriptor(st + 2 * G::CA + q * BN * 8), bl = descriptor(st + 2 * G::CA + G::CB + q * BN * 8);
            if (TERMS == 3) {
                wgmma_ss(acc, al, bh, kt | q);
                wgmma_ss(acc, ah, bl, 1);
            }
            wgmma_ss(acc, ah, bh, TERMS == 3 || kt | q);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
        if (kt > 0 && (tid & 127u) == 0) // step kt - 1's group done: its stage back to the copier
            bar_arrive(&empty[(kt - 1) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < BN / 2; ++i)
        fence_operand(acc[i]);
    store_pairs<BN>(c + blockIdx.z * sh.sc, acc, blockIdx.x * G::BM + 16 * cw + 2 * g, blockIdx.y * BN, t, sh);
}

/* The operands as gemm_ws reads them, from op(A) [k][m] and op(B) [k][n] (a = true: A, its rows
 * paired), zeros past the matrix. */
static std::vector<float> blocked(const std::vector<float> &x, int rows, int k, int batch, long long ld, long long stride,
                                  int br, int bk, bool pair)
{
    const int rbs = (rows + br - 1) / br, kts = (k + bk - 1) / bk;
    std::vector<float> out((size_t)batch * rbs * kts * br * bk, 0.0f);
    for (int e = 0; e < batch; ++e)
        for (int rb = 0; rb < rbs; ++rb)
            for (int kt = 0; kt < kts; ++kt) {
                float *piece = &out[(((size_t)e * rbs + rb) * kts + kt) * br * bk];
                for (int q = 0; q < bk / 8; ++q)
                    for (int rho = 0; rho < br; ++rho)
                        for (int h = 0; h < 2; ++h)
                            for (int kq = 0; kq < 4; ++kq) {
                                const int row = rb * br + (pair ? (rho & ~15) + 2 * (rho & 7) + (rho >> 3 & 1) : rho);
                                const int kk = kt * bk + 8 * q + 4 * h + kq;
                                piece[q * br * 8 + rho / 8 * 64 + h * 32 + rho % 8 * 4 + kq] =
                                    row < rows && kk < k ? x[e * stride + kk * ld + row] : 0.0f;
                            }
            }
    return out;
}

template <int BN, int BK, int STAGES, int TERMS = 3, bool CONVERT = true>
static void run_ws(const char *name, const Shape &s, float *dc, const std::vector<float> &ha, const std::vector<float> &hb,
                   double peak)
{
    using G = Ws<BN, BK, STAGES>;
    std::vector<float> ab = blocked(ha, s.m, s.k, s.batch, s.lda, s.sa, G::BM, BK, true);
    std::vector<float> bb = blocked(hb, s.n, s.k, s.batch, s.ldb, s.sb, BN, BK, false);
    float *da = probe_upload(ab), *db = probe_upload(bb);
    dim3 grid((s.m + G::BM - 1) / G::BM, (s.n + BN - 1) / BN, s.batch);
    time_report(name, gemm_ws<BN, BK, STAGES, TERMS, CONVERT>, grid, G::THREADS, G::SHARED, s, da, db, dc, ha, hb, peak);
    CK(cudaFree(da));
    CK(cudaFree(db));
}

/* gemm_ws on the operands as stored (gemm_wsr): no producer lays them out. The copier warp brings
 * each step's BK rows of op(A) ([k][m]) and op(B) ([k][n]) by one bulk copy a row (lane r row r)
 * into raw stages as in gemm_wgmma; the three converter warps turn them into the core matrices,
 * hi and lo (a transpose: four LDS.32 of a row's neighbours, two STS.128), zeros for k past the
 * sum. Needs m, n, lda, ldb multiples of 4 (16-byte rows). */
template <int BN, int BK, int STAGES> struct Wsr {
    static constexpr int BM = 128, THREADS = 384, AP = BM + 4, BP = BN + 4;
    static constexpr int RAW = BK * AP + BK * BP, CA = BK * BM, CB = BK * BN;
    static constexpr int STAGE = RAW + 2 * (CA + CB); // floats: converted A hi, lo, B hi, lo, then raw A, B
    static constexpr int SHARED = STAGES * STAGE * 4 + 3 * STAGES * 8;
};

/* Rows (m or n) x BK of a raw stage ([k][row], pitch `pitch`) into the core matrices at dst (hi)
 * and dst + lo_at (lo), as convert() above; `valid`: the step's rows of k that exist. */
template <int ROWS, int BK, bool PAIR>
static __device__ __forceinline__ void convert_rows(const float *raw, int pitch, float *dst, int lo_at, unsigned ct,
                                                    int valid)
{
#pragma unroll 4
    for (int i = ct; i < BK / 4 * ROWS; i += 96) {
        const int rho = i % ROWS, q = i / ROWS, s = q / 2, h = q % 2;
        const int row = PAIR ? (rho & ~15) + 2 * (rho & 7) + (rho >> 3 & 1) : rho;
        const float *src = raw + 4 * q * pitch + row;
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j)
            v[j] = 4 * q + j < valid ? src[j * pitch] : 0.0f;
        float *d = dst + s * ROWS * 8 + rho / 8 * 64 + h * 32 + rho % 8 * 4;
        *(float4 *)d = make_float4(v[0], v[1], v[2], v[3]);
        *(uint4 *)(d + lo_at) = make_uint4(lo_of(v[0]), lo_of(v[1]), lo_of(v[2]), lo_of(v[3]));
    }
}

template <int BN, int BK, int STAGES>
__global__ void __launch_bounds__(384, 1)
gemm_wsr(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, Shape sh)
{
    using G = Wsr<BN, BK, STAGES>;
    extern __shared__ float4 smem4[];
    float *stages = (float *)smem4;
    uint64_t *loaded = (uint64_t *)(stages + STAGES * G::STAGE), *ready = loaded + STAGES, *empty = ready + STAGES;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
    const unsigned m0 = blockIdx.x * G::BM, n0 = blockIdx.y * BN;
    const int kts = (sh.k + BK - 1) / BK;
    a += blockIdx.z * sh.sa + m0;
    b += blockIdx.z * sh.sb + n0;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s)
            bar_init(&loaded[s], 1), bar_init(&ready[s], 3), bar_init(&empty[s], 2);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (warp == 0) { // the copier: lane r brings row r of each step, a bulk copy of each operand
        const unsigned a_bytes = 4u * min(G::BM, sh.m - (int)m0), b_bytes = 4u * min(BN, sh.n - (int)n0);
        for (int kt = 0; kt < kts; ++kt) {
            const int s = kt % STAGES, valid = min(BK, sh.k - kt * BK);
            float *raw = stages + s * G::STAGE + 2 * (G::CA + G::CB);
            if (kt >= STAGES)
                bar_wait(&empty[s], (kt / STAGES - 1) & 1);
            if (lane == 0)
                bar_expect(&loaded[s], valid * (a_bytes + b_bytes));
            __syncwarp();
            if ((int)lane < valid) {
                const long long k = (long long)kt * BK + lane;
                bulk(raw + lane * G::AP, a + k * sh.lda, a_bytes, &loaded[s]);
                bulk(raw + BK * G::AP + lane * G::BP, b + k * sh.ldb, b_bytes, &loaded[s]);
            }
        }
        return;
    }
    if (warp < 4) { // the converters
        const unsigned ct = tid - 32u;
        for (int kt = 0; kt < kts; ++kt) {
            const int s = kt % STAGES, valid = min(BK, sh.k - kt * BK);
            float *st = stages + s * G::STAGE, *raw = st + 2 * (G::CA + G::CB);
            bar_wait(&loaded[s], (kt / STAGES) & 1);
            convert_rows<G::BM, BK, true>(raw, G::AP, st, G::CA, ct, valid);
            convert_rows<BN, BK, false>(raw + BK * G::AP, G::BP, st + 2 * G::CA, G::CB, ct, valid);
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            __syncwarp();
            if (lane == 0)
                bar_arrive(&ready[s]);
        }
        return;
    }
    const unsigned cw = warp - 4, wg = cw >> 2;
    float acc[BN / 2];
    for (int kt = 0; kt < kts; ++kt) {
        const int s = kt % STAGES;
        const float *st = stages + s * G::STAGE;
        bar_wait(&ready[s], (kt / STAGES) & 1);
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
        asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
        for (int q = 0; q < BK / 8; ++q) {
            const uint64_t ah = descriptor(st + q * G::BM * 8 + wg * 512), al = descriptor(st + G::CA + q * G::BM * 8 + wg * 512);
            const uint64_t bh = descriptor(st + 2 * G::CA + q * BN * 8), bl = descriptor(st + 2 * G::CA + G::CB + q * BN * 8);
            wgmma_ss(acc, al, bh, kt | q);
            wgmma_ss(acc, ah, bl, 1);
            wgmma_ss(acc, ah, bh, 1);
        }
        asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
            fence_operand(acc[i]);
        if (kt > 0 && (tid & 127u) == 0)
            bar_arrive(&empty[(kt - 1) % STAGES]);
    }
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int i = 0; i < BN / 2; ++i)
        fence_operand(acc[i]);
    store_pairs<BN>(c + blockIdx.z * sh.sc, acc, m0 + 16 * cw + 2 * g, n0, t, sh);
}

template <int BN, int BK, int STAGES>
static void run_wsr(const char *name, const Shape &s, const float *da, const float *db, float *dc,
                    const std::vector<float> &ha, const std::vector<float> &hb, double peak)
{
    using G = Wsr<BN, BK, STAGES>;
    dim3 grid((s.m + G::BM - 1) / G::BM, (s.n + BN - 1) / BN, s.batch);
    time_report(name, gemm_wsr<BN, BK, STAGES>, grid, G::THREADS, G::SHARED, s, da, db, dc, ha, hb, peak);
}

int main()
{
    cudaDeviceProp prop;
    double mhz, peak = probe_fma_peak(&prop, &mhz);
    printf("%s, %d SMs, %.0f MHz: FFMA peak %.1f TFLOP/s\n", prop.name, prop.multiProcessorCount, mhz, peak);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    const Shape shapes[] = {
        {3200, 256, 256, 64, true, true, 3200, 256, 3200, 3200LL * 256, 256LL * 256, 3200LL * 256},
        {1152, 384, 384, 49, true, true, 1152, 384, 1152, 1152LL * 384, 384LL * 384, 1152LL * 384},
        {800, 512, 512, 64, true, true, 800, 512, 800, 800LL * 512, 512LL * 512, 800LL * 512},
    };
    const char *names[] = {"V3 fprop products (F(6x6))", "L5-like (49 x 1152 x 384 x 384)", "V4-like (64 x 800 x 512 x 512)"};
    for (int q = 0; q < 3; ++q) {
        const Shape &s = shapes[q];
        const std::vector<float> ha = probe_random((size_t)s.sa * s.batch, 7 + q), hb = probe_random((size_t)s.sb * s.batch, 77 + q);
        float *da = probe_upload(ha), *db = probe_upload(hb), *dc;
        CK(cudaMalloc(&dc, sizeof(float) * s.sc * s.batch));
        printf("\n%s: %d x %d x %d, %d of them\n", names[q], s.m, s.n, s.k, s.batch);
        const float one = 1, zero = 0;
        CK(cudaMemset(dc, 0xff, sizeof(float) * s.sc * s.batch));
        float ms = median_ms([&] {
            cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, s.m, s.n, s.k, &one, da, (int)s.lda, s.sa, db,
                                      (int)s.ldb, s.sb, &zero, dc, (int)s.ldc, s.sc, s.batch);
        }, 3, 21);
        report("cuBLAS SGEMM", 0, 0, ms, s, peak, dc, ha, hb);
        if (s.n % 256 == 0) {
            run_ws<256, 16, 4>("ws n256 k16 st4", s, dc, ha, hb, peak);
            run_wsr<256, 16, 3>("wsr n256 k16 st3 (as stored)", s, da, db, dc, ha, hb, peak);
            run_wsr<256, 8, 6>("wsr n256 k8 st6 (as stored)", s, da, db, dc, ha, hb, peak);
            run_ws<256, 32, 2>("ws n256 k32 st2", s, dc, ha, hb, peak);
            run_ws<256, 8, 8>("ws n256 k8 st8", s, dc, ha, hb, peak);
            run_ws<256, 16, 4, 1>("ws n256 k16 st4, 1xTF32 (not fp32)", s, dc, ha, hb, peak);
            run_ws<256, 16, 4, 3, false>("ws n256 k16 st4, no lo (wrong)", s, dc, ha, hb, peak);
            run<256, 16, 4, 3>("n256 k16 st4", s, da, db, dc, ha, hb, peak);
            run<256, 16, 3, 3>("n256 k16 st3", s, da, db, dc, ha, hb, peak);
            run<256, 16, 4, 1>("n256 k16 st4, 1xTF32 (not fp32)", s, da, db, dc, ha, hb, peak);
            run<256, 16, 4, 0>("n256 k16 st4, no wgmma (skeleton)", s, da, db, dc, ha, hb, peak);
        }
        if (s.n % 192 == 0) {
            run_ws<192, 16, 4>("ws n192 k16 st4", s, dc, ha, hb, peak);
            run_wsr<192, 16, 3>("wsr n192 k16 st3 (as stored)", s, da, db, dc, ha, hb, peak);
            run<192, 16, 4, 3>("n192 k16 st4", s, da, db, dc, ha, hb, peak);
        }
        run_ws<128, 16, 6>("ws n128 k16 st6", s, dc, ha, hb, peak);
        run<128, 32, 2, 3>("n128 k32 st2", s, da, db, dc, ha, hb, peak);
        run<128, 16, 4, 3>("n128 k16 st4", s, da, db, dc, ha, hb, peak);
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
    }
    cublasDestroy(h);
    return 0;
}
