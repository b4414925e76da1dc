/* A batched SGEMM in 3xTF32 on the tensor cores (mma.sync m16n8k8), against cuBLAS's SGEMM on the
 * same operands: does the non-fused `winograd`'s products step, 0.54-0.59 ms of V3's 0.78 at
 * cuBLAS's 45 TFLOP/s, run at the 3xTF32 rate the tensor probes measured (1.2-1.4x the FFMA
 * peak), and at what error against float64?
 *
 * C = op(A) op(B) column-major per batch entry, as the generated GEMM's steps describe them:
 *   fprop/bprop (V3: 64 elements of 3200 x 256 x 256): op(A) = A stored [k][m] (runs along m),
 *   op(B) = B^T stored [k][n] (runs along n) -- "outer" operands;
 *   accgrad (V3: 64 of 256 x 256 x 3200): both stored [row][k] (runs along the sum) -- "inner".
 * The block's tiles come through STAGES cp.async stages; a warp sums WM x WN of C as m16n8k8
 * fragments. Each loaded float is its own hi half (the tensor cores read its TF32 bits) and its
 * lo half is made in registers; lo hi + hi lo + hi hi, the small terms first.
 * The fragments' rows and columns are permuted so that every operand comes in 16-byte (outer) or
 * 8-byte (inner) shared loads: within a K step of 8 the mma's k index t is the stored 2 t and
 * t + 4 is 2 t + 1; an outer A's float4 at m 4 g .. 4 g + 3 holds rows g and g + 8 of two
 * m-tiles, an outer B's float4 at n 4 g .. 4 g + 3 column g of four n-tiles. The stage pitches
 * (4 or 8 floats past a multiple of 32) keep each quarter (outer) or half (inner) warp on
 * distinct banks. An outer A's sums store as float4 runs along m.
 * Measured (H200, bench/results/nvidia-h200-2026-12-04-wino-gemm-wgmma.md): V3's products at best
 * 0.547 ms, 0.73x the FFMA peak, against cuBLAS's 0.599 (0.67x): mma.sync keeps the SMSP's other
 * instructions (the lo halves, the loads) from issuing beside it, so they add to its time, as
 * tensor_overlap.cu found. gemm_wgmma.cu is the way on.
 *
 * Build: nvcc -O3 -arch=sm_90 -lcublas -o gt bench/probes/gemm_tf32x3.cu && ./gt */
#include <cublas_v2.h>

#include <math.h>

#include "probe.h"
#include "gemm_probe.h"

static __device__ __forceinline__ void copy16(void *dst, const float *src, bool inside)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"((unsigned)__cvta_generic_to_shared(dst)),
                 "l"(src), "r"(inside ? 16 : 0));
}


template <int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB, bool AO, bool BO>
struct Gemm {
    static constexpr int WARPS = (BM / WM) * (BN / WN), THREADS = 32 * WARPS;
    static constexpr int AP = AO ? BM + 4 : BK + 8, BP = BO ? BN + 4 : BK + 8; // stage pitches
    static constexpr int A_FLOATS = AO ? BK * AP : BM * AP, B_FLOATS = BO ? BK * BP : BN * BP;
    static constexpr int STAGE = A_FLOATS + B_FLOATS;
    static constexpr int SHARED = STAGES * STAGE * 4;
    static constexpr int MT = WM / 16, NT = WN / 8;
};

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB, bool AO, bool BO>
__global__ void __launch_bounds__(Gemm<BM, BN, BK, WM, WN, STAGES, MINB, AO, BO>::THREADS, MINB)
gemm_tf32x3(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c, Shape sh)
{
    using G = Gemm<BM, BN, BK, WM, WN, STAGES, MINB, AO, BO>;
    extern __shared__ float4 smem4[];
    float *smem = (float *)smem4;
    const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5, g = lane >> 2, t = lane & 3u;
    const unsigned wm0 = warp % (BM / WM) * WM, wn0 = warp / (BM / WM) * WN;
    const unsigned m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
    a += blockIdx.z * sh.sa;
    b += blockIdx.z * sh.sb;
    c += blockIdx.z * sh.sc;

    auto load = [&](int kt, int st) {
        float *as = smem + st * G::STAGE, *bs = as + G::A_FLOATS;
        const int k0 = kt * BK;
        if (AO) {
            for (int i = tid; i < BK * BM / 4; i += G::THREADS) {
                const int kr = i / (BM / 4), mc = i % (BM / 4) * 4;
                const bool in = k0 + kr < sh.k && (int)m0 + mc < sh.m;
                copy16(as + kr * G::AP + mc, in ? a + (long long)(k0 + kr) * sh.lda + m0 + mc : a, in);
            }
        } else {
            for (int i = tid; i < BM * BK / 4; i += G::THREADS) {
                const int mr = i / (BK / 4), kc = i % (BK / 4) * 4;
                const bool in = k0 + kc < sh.k && (int)m0 + mr < sh.m;
                copy16(as + mr * G::AP + kc, in ? a + (long long)(m0 + mr) * sh.lda + k0 + kc : a, in);
            }
        }
        if (BO) {
            for (int i = tid; i < BK * BN / 4; i += G::THREADS) {
                const int kr = i / (BN / 4), nc = i % (BN / 4) * 4;
                const bool in = k0 + kr < sh.k && (int)n0 + nc < sh.n;
                copy16(bs + kr * G::BP + nc, in ? b + (long long)(k0 + kr) * sh.ldb + n0 + nc : b, in);
            }
        } else {
            for (int i = tid; i < BN * BK / 4; i += G::THREADS) {
                const int nr = i / (BK / 4), kc = i % (BK / 4) * 4;
                const bool in = k0 + kc < sh.k && (int)n0 + nr < sh.n;
                copy16(bs + nr * G::BP + kc, in ? b + (long long)(n0 + nr) * sh.ldb + k0 + kc : b, in);
            }
        }
    };

    float acc[G::MT][G::NT][4];
#pragma unroll
    for (int i = 0; i < G::MT; ++i)
#pragma unroll
        for (int j = 0; j < G::NT; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[i][j][r] = 0.0f;

    const int kts = (sh.k + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < kts)
            load(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int kt = 0; kt < kts; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads(); // stage kt % STAGES in; stage (kt - 1) % STAGES read by every warp
        if (kt + STAGES - 1 < kts)
            load(kt + STAGES - 1, (kt + STAGES - 1) % STAGES);
        asm volatile("cp.async.commit_group;\n" ::);
        const float *as = smem + kt % STAGES * G::STAGE, *bs = as + G::A_FLOATS;
#pragma unroll
        for (int s = 0; s < BK / 8; ++s) {
            const int kk = 8 * s;
            unsigned ah[G::MT][4], al[G::MT][4], bh[G::NT][2], bl[G::NT][2];
            if (AO) {
#pragma unroll
                for (int p = 0; p < G::MT / 2; ++p) {
                    const float4 x = *(const float4 *)(as + (kk + 2 * t) * G::AP + wm0 + 32 * p + 4 * g);
                    const float4 y = *(const float4 *)(as + (kk + 2 * t + 1) * G::AP + wm0 + 32 * p + 4 * g);
                    const float v[2][4] = {{x.x, x.y, y.x, y.y}, {x.z, x.w, y.z, y.w}};
#pragma unroll
                    for (int h = 0; h < 2; ++h)
#pragma unroll
                        for (int r = 0; r < 4; ++r)
                            ah[2 * p + h][r] = __float_as_uint(v[h][r]), al[2 * p + h][r] = lo_of(v[h][r]);
                }
            } else {
#pragma unroll
                for (int i = 0; i < G::MT; ++i) {
                    const float2 x = *(const float2 *)(as + (wm0 + 16 * i + g) * G::AP + kk + 2 * t);
                    const float2 y = *(const float2 *)(as + (wm0 + 16 * i + g + 8) * G::AP + kk + 2 * t);
                    const float v[4] = {x.x, y.x, x.y, y.y};
#pragma unroll
                    for (int r = 0; r < 4; ++r)
                        ah[i][r] = __float_as_uint(v[r]), al[i][r] = lo_of(v[r]);
                }
            }
            if (BO) {
#pragma unroll
                for (int q = 0; q < G::NT / 4; ++q) {
                    const float4 x = *(const float4 *)(bs + (kk + 2 * t) * G::BP + wn0 + 32 * q + 4 * g);
                    const float4 y = *(const float4 *)(bs + (kk + 2 * t + 1) * G::BP + wn0 + 32 * q + 4 * g);
                    const float v0[4] = {x.x, x.y, x.z, x.w}, v1[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        bh[4 * q + j][0] = __float_as_uint(v0[j]), bl[4 * q + j][0] = lo_of(v0[j]);
                        bh[4 * q + j][1] = __float_as_uint(v1[j]), bl[4 * q + j][1] = lo_of(v1[j]);
                    }
                }
            } else {
#pragma unroll
                for (int j = 0; j < G::NT; ++j) {
                    const float2 x = *(const float2 *)(bs + (wn0 + 8 * j + g) * G::BP + kk + 2 * t);
                    bh[j][0] = __float_as_uint(x.x), bl[j][0] = lo_of(x.x);
                    bh[j][1] = __float_as_uint(x.y), bl[j][1] = lo_of(x.y);
                }
            }
#pragma unroll
            for (int i = 0; i < G::MT; ++i)
#pragma unroll
                for (int j = 0; j < G::NT; ++j)
                    mma(acc[i][j], al[i], bh[j]);
#pragma unroll
            for (int i = 0; i < G::MT; ++i)
#pragma unroll
                for (int j = 0; j < G::NT; ++j)
                    mma(acc[i][j], ah[i], bl[j]);
#pragma unroll
            for (int i = 0; i < G::MT; ++i)
#pragma unroll
                for (int j = 0; j < G::NT; ++j)
                    mma(acc[i][j], ah[i], bh[j]);
        }
    }
    asm volatile("cp.async.wait_all;\n" ::);

    // C[n][m]: acc[i][j] rows g, g + 8 of m-tile i, columns 2 t, 2 t + 1 of n-tile j
#pragma unroll
    for (int j = 0; j < G::NT; ++j)
#pragma unroll
        for (int cc = 0; cc < 2; ++cc) {
            const unsigned n = n0 + wn0 + (BO ? 32 * (j / 4) + 4 * (2 * t + cc) + j % 4 : 8 * j + 2 * t + cc);
            if (n >= (unsigned)sh.n)
                continue;
            float *col = c + (long long)n * sh.ldc;
            if (AO) {
#pragma unroll
                for (int p = 0; p < G::MT / 2; ++p) {
                    const unsigned m = m0 + wm0 + 32 * p + 4 * g;
                    if (m < (unsigned)sh.m)
                        *(float4 *)(col + m) = make_float4(acc[2 * p][j][cc], acc[2 * p][j][cc + 2],
                                                           acc[2 * p + 1][j][cc], acc[2 * p + 1][j][cc + 2]);
                }
            } else {
#pragma unroll
                for (int i = 0; i < G::MT; ++i)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const unsigned m = m0 + wm0 + 16 * i + g + 8 * h;
                        if (m < (unsigned)sh.m)
                            col[m] = acc[i][j][cc + 2 * h];
                    }
            }
        }
}

template <int BM, int BN, int BK, int WM, int WN, int STAGES, int MINB, bool AO, bool BO>
static void run(const char *name, const Shape &s, const float *da, const float *db, float *dc,
                const std::vector<float> &ha, const std::vector<float> &hb, double peak)
{
    using G = Gemm<BM, BN, BK, WM, WN, STAGES, MINB, AO, BO>;
    auto kern = gemm_tf32x3<BM, BN, BK, WM, WN, STAGES, MINB, AO, BO>;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, G::SHARED));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kern));
    dim3 grid((s.m + BM - 1) / BM, (s.n + BN - 1) / BN, s.batch);
    CK(cudaMemset(dc, 0xff, sizeof(float) * s.sc * s.batch)); // poisoned: NaN where nothing is written
    float ms = median_ms([&] { kern<<<grid, G::THREADS, G::SHARED>>>(da, db, dc, s); }, 3, 21);
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
    printf("%-34s %4d regs %3d KB smem: %8.4f ms, %6.1f TFLOP/s (%.2fx FFMA peak), err/sum|ab| %.2e, rel %.2e%s\n",
           name, fa.numRegs, G::SHARED / 1024, ms, flop / ms / 1e9, flop / ms / 1e9 / peak, ra, r,
           nans ? " UNWRITTEN (NaN) SUMS" : "");
    if (fa.localSizeBytes)
        printf("  local memory %zu bytes\n", (size_t)fa.localSizeBytes);
}

static void cublas_run(cublasHandle_t h, const char *name, const Shape &s, const float *da, const float *db, float *dc,
                       const std::vector<float> &ha, const std::vector<float> &hb, double peak, bool tf32)
{
    const float one = 1, zero = 0;
    cublasOperation_t ta = s.a_outer ? CUBLAS_OP_N : CUBLAS_OP_T, tb = s.b_outer ? CUBLAS_OP_T : CUBLAS_OP_N;
    CK(cudaMemset(dc, 0xff, sizeof(float) * s.sc * s.batch));
    float ms = median_ms(
        [&] {
            cublasGemmStridedBatchedEx(h, ta, tb, s.m, s.n, s.k, &one, da, CUDA_R_32F, (int)s.lda, s.sa, db, CUDA_R_32F,
                                       (int)s.ldb, s.sb, &zero, dc, CUDA_R_32F, (int)s.ldc, s.sc, s.batch,
                                       tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
        },
        3, 21);
    std::vector<float> hc((size_t)s.sc * s.batch);
    CK(cudaMemcpy(hc.data(), dc, sizeof(float) * hc.size(), cudaMemcpyDeviceToHost));
    double ra, r;
    sample_error(ha, hb, hc, s, &ra, &r);
    double flop = 2.0 * s.m * s.n * s.k * s.batch;
    printf("%-34s                 : %8.4f ms, %6.1f TFLOP/s (%.2fx FFMA peak), err/sum|ab| %.2e, rel %.2e\n", name,
           ms, flop / ms / 1e9, flop / ms / 1e9 / peak, ra, r);
}

int main()
{
    cudaDeviceProp prop;
    double mhz, peak = probe_fma_peak(&prop, &mhz);
    printf("%s, %d SMs, %.0f MHz: FFMA peak %.1f TFLOP/s\n", prop.name, prop.multiProcessorCount, mhz, peak);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS)
        return 1;
    // V3 F(6x6, 3x3): 64 elements, 3200 tiles, 256 x 256 channels; L5 F(5x5)? 13x13 at alpha 7 x 7:
    // its own shape below (128 images x 9 tiles = 1152, 49 elements, 384 x 384)
    const Shape shapes[] = {
        {3200, 256, 256, 64, true, true, 3200, 256, 3200, 3200LL * 256, 256LL * 256, 3200LL * 256},
        {1152, 384, 384, 49, true, true, 1152, 384, 1152, 1152LL * 384, 384LL * 384, 1152LL * 384},
        {256, 256, 3200, 64, false, false, 3200, 3200, 256, 3200LL * 256, 3200LL * 256, 256LL * 256},
    };
    const char *names[] = {"V3 fprop products", "L5-like fprop products", "V3 accgrad products (no split)"};
    for (int q = 0; q < 3; ++q) {
        const Shape &s = shapes[q];
        const std::vector<float> ha = probe_random((size_t)s.sa * s.batch, 7 + q), hb = probe_random((size_t)s.sb * s.batch, 77 + q);
        float *da = probe_upload(ha), *db = probe_upload(hb), *dc;
        CK(cudaMalloc(&dc, sizeof(float) * s.sc * s.batch));
        printf("\n%s: %d x %d x %d, %d of them\n", names[q], s.m, s.n, s.k, s.batch);
        cublas_run(h, "cuBLAS SGEMM", s, da, db, dc, ha, hb, peak, false);
        cublas_run(h, "cuBLAS TF32 (1x, not fp32)", s, da, db, dc, ha, hb, peak, true);
        if (s.a_outer) {
            run<128, 128, 32, 64, 32, 3, 2, true, true>("128x128 k32 w64x32 st3 2/SM", s, da, db, dc, ha, hb, peak);
            run<128, 128, 32, 64, 32, 4, 1, true, true>("128x128 k32 w64x32 st4 1/SM", s, da, db, dc, ha, hb, peak);
            run<128, 128, 16, 64, 32, 4, 2, true, true>("128x128 k16 w64x32 st4 2/SM", s, da, db, dc, ha, hb, peak);
            run<128, 256, 16, 64, 64, 4, 1, true, true>("128x256 k16 w64x64 st4 1/SM", s, da, db, dc, ha, hb, peak);
            run<128, 128, 32, 64, 64, 3, 2, true, true>("128x128 k32 w64x64 st3 2/SM", s, da, db, dc, ha, hb, peak);
            run<64, 128, 32, 32, 32, 4, 2, true, true>("64x128 k32 w32x32 st4 2/SM", s, da, db, dc, ha, hb, peak);
        } else {
            run<128, 128, 32, 64, 32, 3, 2, false, false>("128x128 k32 w64x32 st3 2/SM", s, da, db, dc, ha, hb, peak);
            run<128, 128, 32, 64, 32, 4, 1, false, false>("128x128 k32 w64x32 st4 1/SM", s, da, db, dc, ha, hb, peak);
            run<64, 64, 32, 32, 32, 4, 3, false, false>("64x64 k32 w32x32 st4 3/SM", s, da, db, dc, ha, hb, peak);
        }
        CK(cudaFree(da));
        CK(cudaFree(db));
        CK(cudaFree(dc));
    }
    cublasDestroy(h);
    return 0;
}
