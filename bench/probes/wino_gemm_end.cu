/* Winograd's products with the output transform on their sums, for the layers whose V and M round
 * trips through DRAM bound them (V1, R1, S64, F2: bench/NOTES.md, "Issue 30, session 73"): does a
 * tensor GEMM that never writes M beat today's products and output transform?
 *
 * Today's non-fused `winograd` writes M (alpha^2 x tiles x outputs) from its tensor GEMM and reads it
 * back in the output transform: on V1 fprop that is 1.5 GB of the 3.8 GB it moves. Here a cluster of
 * 8 blocks takes 64 tiles x 64 outputs, block r the 8 elements of row r of the 8 x 8 grid (alpha 8:
 * F(6, 3) and F(4, 5)), so that the cluster holds every element of its tiles' sums:
 * - the products as gemm_tc.cu makes them (3xTF32 by wgmma m64n32k8, both operands from shared
 *   memory in core-matrix order; V's pieces [tile block][step][element][64 x 8] by one bulk copy a
 *   step, their lo halves made by 3 converter warps; U's [output block][step][element][hi, lo], or
 *   (UMADE) its hi halves alone, the converters making the lo); warpgroup w sums outputs 32 w ..
 *   32 w + 31 of all 8 elements, so that each thread holds a whole row of the grid for its sums;
 * - then Z_r[q] = sum_j M_rj AT[q][j] (the transform along the row) in registers, each value sent by
 *   st.async into the shared memory of the block whose 8 tiles it belongs to, counted there by an
 *   mbarrier's transaction bytes (no thread waits on a remote read); block r, once all 8 blocks'
 *   values have landed, makes Y[p][q] = sum_i AT[p][i] Z_i[q] for its 8 tiles from its own shared
 *   memory and stores it as y[tile][k][m m]; it then tells every block of the cluster (a remote
 *   mbarrier arrival) that its buffer may be written again.
 * The clusters are persistent (as many as fit at once), each taking work items (tile block, output
 * block) a cluster count apart, so that the copier runs on into the next item during the end; it
 * may also ask the step P.prefetch ahead into L2 (cp.async.bulk.prefetch.L2), so that its copies
 * into shared memory, two stages deep, wait on the L2 rather than DRAM.
 *
 * The first form (339641f: the exchange pulled by ld.shared::cluster, warpgroups splitting the
 * elements, m64n64k8, U's lo loaded) ran 1.8-3.1x slower than today's two kernels (NOTES). This
 * second form ran 1.3-3.1x slower on an H100 (session 74: V1 1.383 ms against 0.950, F2 0.511
 * against 0.393), so the generator has no fused end; NOTES, "Issue 30, session 74", says why.
 *
 * The kernel is in wino_gemm_end.cuh, which tests/test_kernel_cpu.c also runs on the CPU.
 *
 * Build: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -o wge \
 *        bench/probes/wino_gemm_end.cu && ./wge        (every shape below; or NAME TILES C K M) */
#include <math.h>
#include <string.h>

#include "probe.h"
#include "wino_gemm_end.cuh"

__global__ void fill(float *x, size_t n, unsigned seed, unsigned lo_every)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)(i * 2654435761u) ^ seed;
        h ^= h >> 15, h *= 2246822519u, h ^= h >> 13, h *= 3266489917u, h ^= h >> 16;
        x[i] = (h >> 8) * (2.0f / 16777216.0f) - 1.0f;
    }
}
// U's pieces: each element's step is 512 hi floats then their 512 lo halves
__global__ void make_lo(float *u, size_t pieces)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < pieces * B_FL; i += (size_t)gridDim.x * blockDim.x) {
        const size_t piece = i / B_FL, at = i % B_FL;
        u[piece * 2 * B_FL + B_FL + at] = __uint_as_float(tf32_lo(u[piece * 2 * B_FL + at]));
    }
}

// U's hi halves alone, [output block][step][element][512], for the UMADE kernels
__global__ void hi_only(const float *u, float *hi, size_t pieces)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < pieces * B_FL; i += (size_t)gridDim.x * blockDim.x)
        hi[i] = u[i / B_FL * 2 * B_FL + i % B_FL];
}

// A row (tile or output) and channel's offset in a 64 x 8 piece: K-major core matrices
static size_t piece_at(unsigned row, unsigned ch) { return (row / 8) * 64 + (ch / 4) * 32 + (row % 8) * 4 + ch % 4; }

// The kernel's output y[tile][k][m m] poisoned, one run, then its sampled error against float64,
// relative to the sum of |terms|; false (and said why) where an output was left unwritten.
template <int M>
static bool check(void (*kernel)(const float *, const float *, float *, Problem), unsigned clusters, const float *vp,
                  const float *u, float *y, const Problem &P, const std::vector<float> &hv, const std::vector<float> &hu,
                  const float (&at)[6][8], unsigned channels, double *worst)
{
    const size_t ny = (size_t)P.outputs * P.tiles * M * M;
    CK(cudaMemset(y, 0xff, ny * 4)); // NaN: what the kernel leaves unwritten shows
    kernel<<<ROW * clusters, THREADS, SHARED>>>(vp, u, y, P);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<float> hy(ny);
    CK(cudaMemcpy(hy.data(), y, ny * 4, cudaMemcpyDeviceToHost));
    *worst = 0;
    int nans = 0;
    unsigned seed = 7;
    for (int sample = 0; sample < 600; ++sample) {
        seed = seed * 1664525u + 1013904223u;
        const unsigned tile = (seed >> 4) % P.tiles;
        seed = seed * 1664525u + 1013904223u;
        const unsigned k = (seed >> 4) % P.outputs, tb = tile / BM, nb = k / BN;
        double mm[8][8], mag[8][8];
        for (int e = 0; e < 64; ++e) {
            double s = 0, a = 0;
            for (unsigned c = 0; c < channels; ++c) {
                const double v = hv[((size_t)(tb * P.steps + c / 8) * 64 + e) * A_FL + piece_at(tile % BM, c % 8)];
                const double w = hu[((size_t)(nb * P.steps + c / 8) * 64 + e) * 2 * B_FL + piece_at(k % BN, c % 8)];
                s += v * w, a += fabs(v * w);
            }
            mm[e / 8][e % 8] = s, mag[e / 8][e % 8] = a;
        }
        for (int p = 0; p < M; ++p)
            for (int qq = 0; qq < M; ++qq) {
                double want = 0, scale = 0;
                for (int i = 0; i < 8; ++i)
                    for (int j = 0; j < 8; ++j)
                        want += at[p][i] * mm[i][j] * at[qq][j], scale += fabs(at[p][i] * at[qq][j]) * mag[i][j];
                const float got = hy[((size_t)tile * P.outputs + k) * M * M + p * M + qq];
                if (got != got)
                    ++nans;
                else if (fabs(got - want) / scale > *worst)
                    *worst = fabs(got - want) / scale;
            }
    }
    if (nans)
        printf("  %d of %d sampled outputs unwritten (NaN)\n", nans, 600 * M * M);
    return nans == 0;
}

template <int M> static void run(const char *name, unsigned tiles, unsigned channels, unsigned outputs)
{
    Problem P;
    P.tiles = tiles, P.outputs = outputs, P.steps = channels / 8, P.tblocks = (tiles + BM - 1) / BM;
    P.nblocks = outputs / BN, P.items = P.tblocks * P.nblocks, P.prefetch = 0;
    const size_t nv = (size_t)P.tblocks * P.steps * 64 * A_FL, nu = (size_t)P.nblocks * P.steps * 64 * 2 * B_FL,
                 ny = (size_t)outputs * tiles * M * M;
    float *vp, *up, *uh, *y;
    CK(cudaMalloc(&vp, nv * 4));
    CK(cudaMalloc(&up, nu * 4));
    CK(cudaMalloc(&uh, nu * 2));
    CK(cudaMalloc(&y, ny * 4));
    fill<<<1024, 256>>>(vp, nv, 17u, 0);
    fill<<<1024, 256>>>(up, nu, 99u, 0);
    make_lo<<<1024, 256>>>(up, nu / (2 * B_FL));
    hi_only<<<1024, 256>>>(up, uh, nu / (2 * B_FL));
    std::vector<float> hv(nv), hu(nu);
    CK(cudaMemcpy(hv.data(), vp, nv * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hu.data(), up, nu * 4, cudaMemcpyDeviceToHost));

    // the output transform of F(M, 9 - M), as the kernel has it
    static const float at6[6][8] = WGE_AT6, at4[4][8] = WGE_AT4;
    float at[6][8] = {};
    memcpy(at, M == 6 ? (const float *)at6 : (const float *)at4, sizeof(float) * 8 * M);

    struct Variant {
        const char *what;
        void (*kernel)(const float *, const float *, float *, Problem);
        const float *u;
        bool end;
        unsigned prefetch;
    } variants[] = {{"whole, U's lo loaded", wino_gemm_end<M, 1, 0>, up, true, 0},
                    {"whole, U's lo made", wino_gemm_end<M, 1, 1>, uh, true, 0},
                    {"whole, U's lo made, L2 4 ahead", wino_gemm_end<M, 1, 1>, uh, true, 4},
                    {"products alone, U's lo loaded", wino_gemm_end<M, 0, 0>, up, false, 0},
                    {"products alone, U's lo made", wino_gemm_end<M, 0, 1>, uh, false, 0},
                    {"products alone, made, L2 4 ahead", wino_gemm_end<M, 0, 1>, uh, false, 4}};
    const double flop = 2.0 * tiles * channels * outputs * 64, bytes = 4.0 * (nv + ny);
    printf("%-4s tiles %6u c %4u k %4u F(%d, %d):\n", name, tiles, channels, outputs, M, 9 - M);
    for (const Variant &v : variants) {
        CK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SHARED));
        cudaLaunchConfig_t cfg = {};
        cfg.blockDim = dim3(THREADS), cfg.dynamicSmemBytes = SHARED, cfg.gridDim = dim3(ROW * P.items);
        int fit = 0;
        CK(cudaOccupancyMaxActiveClusters(&fit, v.kernel, &cfg));
        if (fit < 1) {
            printf("  %s: no cluster of %d blocks of %zu bytes fits\n", v.what, ROW, SHARED);
            continue;
        }
        const unsigned clusters = fit < (int)P.items ? (unsigned)fit : P.items;
        double worst = 0;
        P.prefetch = v.prefetch;
        if (v.end && !check<M>(v.kernel, clusters, vp, v.u, y, P, hv, hu, at, channels, &worst))
            continue;
        const float ms = median_ms([&] { v.kernel<<<ROW * clusters, THREADS, SHARED>>>(vp, v.u, y, P); }, 3, 21);
        if (v.end)
            printf("  %-32s %.4f ms (%.1f TFLOP/s, %.0f GB/s of V read + y written), %u clusters; error %.2e of sum "
                   "|terms|\n", v.what, ms, flop / ms / 1e9, bytes / ms / 1e6, clusters, worst);
        else
            printf("  %-32s %.4f ms\n", v.what, ms);
    }
    CK(cudaFree(vp));
    CK(cudaFree(up));
    CK(cudaFree(uh));
    CK(cudaFree(y));
}

static void run_shape(const char *name, unsigned tiles, unsigned c, unsigned k, int m)
{
    if (!tiles || !c || !k || c % 8 || k % BN || (m != 6 && m != 4)) {
        printf("%s: tiles from 1, channels a multiple of 8, outputs of 64 (neither 0), m 4 or 6\n", name);
        return;
    }
    if (m == 6)
        run<6>(name, tiles, c, k);
    else
        run<4>(name, tiles, c, k);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0); // each line out as it is made: a run cut short keeps what it printed
    cudaDeviceProp prop;
    double mhz;
    const double peak = probe_fma_peak(&prop, &mhz);
    printf("%s, %d SMs, %.0f MHz, fp32 FMA peak %.1f TFLOP/s; %zu bytes of shared memory a block\n", prop.name,
           prop.multiProcessorCount, mhz, peak, SHARED);
    if (argc == 6) {
        run_shape(argv[1], (unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), atoi(argv[5]));
        return 0;
    }
    // the bench layers this is for: tiles of F(6x6, 3x3) (F(4x4, 5x5) for F2), channels, outputs
    run_shape("V1", 32 * 38 * 38, 64, 64, 6);
    run_shape("F2", 64 * 14 * 14, 64, 128, 4);
    run_shape("R1", 32 * 10 * 10, 64, 64, 6);
    run_shape("S64", 64 * 11 * 11, 64, 64, 6);
    run_shape("V2", 32 * 19 * 19, 128, 128, 6);
    run_shape("V3", 32 * 10 * 10, 256, 256, 6);
    return 0;
}
