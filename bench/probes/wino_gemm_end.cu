/* Winograd's products with the output transform on their sums, for the layers whose V and M round
 * trips through DRAM bound them (V1, R1, S64, F2: bench/NOTES.md, "Issue 30, session 73"): does a
 * tensor GEMM that never writes M beat today's products and output transform?
 *
 * Today's non-fused `winograd` writes M (alpha^2 x tiles x outputs) from its tensor GEMM and reads it
 * back in the output transform: on V1 fprop that is 1.5 GB of the 3.9 GB it moves. Here a cluster of
 * 8 blocks takes 64 tiles x 64 outputs, block r the 8 elements of row r of the 8 x 8 grid (alpha 8:
 * F(6, 3) and F(4, 5)), so that the cluster holds every element of its tiles' sums:
 * - the products as gemm_tc.cu makes them (3xTF32 by wgmma m64n64k8, both operands from shared
 *   memory in core-matrix order; V's pieces [tile block][step][element][64 x 8] by one bulk copy a
 *   step, its lo halves made by 3 converter warps; U's [output block][step][element][hi, lo]);
 *   warpgroup 0 sums elements 8 r .. 8 r + 3, warpgroup 1 the next 4;
 * - then Z_r[q] = sum_j M_rj AT[q][j] (the transform along the row, in the block), into its shared
 *   memory; an mbarrier of every block of the cluster (arrivals from all 8, release/acquire at
 *   cluster scope) says all Z are there; block r then reads every block's Z for its 8 tiles
 *   (distributed shared memory) and makes Y[p][q] = sum_i AT[p][i] Z_i[q], stored as y[k][tile][m m];
 *   a second cluster-wide mbarrier says the Z may be written again.
 * The clusters are persistent (as many as fit at once), each taking work items (tile block, output
 * block) a cluster count apart, so that the copier runs on into the next item during the end.
 *
 * Build: nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -Xptxas -v -o wge \
 *        bench/probes/wino_gemm_end.cu && ./wge        (every shape below; or NAME TILES C K M) */
#include <stdint.h>

#include <math.h>
#include <string.h>

#include "probe.h"

constexpr int ROW = 8;              // elements a block: a row of the 8 x 8 grid
constexpr int BM = 64, BN = 64;     // tiles and outputs a work item
constexpr int A_FL = BM * 8, B_FL = BN * 8;                  // an element's step of V, of U (hi)
constexpr int STAGE_FL = ROW * (2 * A_FL + 2 * B_FL);         // V hi, V lo, U hi and lo: 64 KB
constexpr int STAGES = 2;
constexpr int Z_FL = 6 * BM * BN;                            // Z[q][tile][output], m <= 6: 96 KB
constexpr int THREADS = 384;        // warps 0-7 sum, 8 copies, 9-11 convert
constexpr int CONVERTERS = 3;
constexpr size_t SHARED = sizeof(float) * (STAGES * STAGE_FL + Z_FL) + 8 * sizeof(uint64_t);

__constant__ float AT[6][8]; // the output transform's AT (m x 8), rows past m unused

struct Problem {
    unsigned tiles, steps, tblocks, nblocks, items;
};

static __device__ __forceinline__ unsigned smem(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
static __device__ __forceinline__ void bar_init(uint64_t *b, unsigned n)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem(b)), "r"(n) : "memory");
}
static __device__ __forceinline__ void bar_arrive(uint64_t *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(b)) : "memory");
}
static __device__ __forceinline__ void bar_expect(uint64_t *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(b)), "r"(bytes) : "memory");
}
static __device__ __forceinline__ void bar_wait(uint64_t *b, unsigned parity)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem(b)), "r"(parity) : "memory");
    while (!done);
}
// The wait for a phase that arrivals from other blocks of the cluster complete (their writes seen).
static __device__ __forceinline__ void bar_wait_cluster(uint64_t *b, unsigned parity)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem(b)), "r"(parity) : "memory");
    while (!done);
}
// An arrival on the mbarrier at b's place in block `cta` of the cluster, releasing this block's writes.
static __device__ __forceinline__ void bar_arrive_remote(uint64_t *b, unsigned cta)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem(b)), "r"(cta));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
// p's place in block `cta` of the cluster, and a float read there
static __device__ __forceinline__ unsigned remote_at(const void *p, unsigned cta)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem(p)), "r"(cta));
    return remote;
}
static __device__ __forceinline__ float load_remote(unsigned at)
{
    float v;
    asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(at) : "memory");
    return v;
}
static __device__ __forceinline__ void bulk_copy(float *dst, const float *src, unsigned bytes, uint64_t *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem(dst)),
                 "l"(src), "r"(bytes), "r"(smem(b)) : "memory");
}
static __device__ __forceinline__ unsigned tf32_lo(float x)
{
    return __float_as_uint(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u)) + 0x1000u;
}
static __device__ __forceinline__ uint64_t descriptor(const float *p)
{
    return (uint64_t)((smem(p) & 0x3ffffu) >> 4) | (uint64_t)(128u >> 4) << 16 | (uint64_t)(256u >> 4) << 32;
}
static __device__ __forceinline__ void wgmma(float (&d)[32], uint64_t a, uint64_t b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
                 "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "%32, %33, p, 1, 1;\n}\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                 : "l"(a), "l"(b), "r"(add));
}
// The same with d written, not read (scale-d 0): an item's first product, so that no sum of the item
// before is kept alive into this one (ptxas would hold all 128 across the end).
static __device__ __forceinline__ void wgmma_set(float (&d)[32], uint64_t a, uint64_t b)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, 0, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
                 "%12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
                 "%32, %33, p, 1, 1;\n}\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
                   "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15]),
                   "=f"(d[16]), "=f"(d[17]), "=f"(d[18]), "=f"(d[19]), "=f"(d[20]), "=f"(d[21]), "=f"(d[22]), "=f"(d[23]),
                   "=f"(d[24]), "=f"(d[25]), "=f"(d[26]), "=f"(d[27]), "=f"(d[28]), "=f"(d[29]), "=f"(d[30]), "=f"(d[31])
                 : "l"(a), "l"(b));
}
static __device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }
static __device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

// Z[q][tile][output] with the output's column swizzled by the tile (float2 stores of a half warp,
// tiles g = 0..3 by outputs 2 t, in distinct banks).
static __device__ __forceinline__ unsigned z_at(unsigned q, unsigned tile, unsigned out)
{
    return (q * BM + tile) * BN + (out ^ ((tile & 3u) << 3));
}

// END: 1 the whole kernel; 0 the products alone (their sums kept alive by a store that never runs).
template <int M, int END>
__global__ void __cluster_dims__(ROW, 1, 1) __launch_bounds__(THREADS, 1)
wino_gemm_end(const float *__restrict__ vp, const float *__restrict__ up, float *__restrict__ y, Problem P)
{
    extern __shared__ float4 shared4[];
    float *const stages = (float *)shared4;
    float *const zs = stages + STAGES * STAGE_FL;
    uint64_t *const loaded = (uint64_t *)(zs + Z_FL), *const ready = loaded + STAGES, *const empty = ready + STAGES;
    uint64_t *const zfull = empty + STAGES, *const zempty = zfull + 1;
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u;
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const unsigned cluster = blockIdx.x / ROW, clusters = gridDim.x / ROW;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s)
            bar_init(&loaded[s], 1), bar_init(&ready[s], CONVERTERS), bar_init(&empty[s], 2);
        bar_init(zfull, ROW), bar_init(zempty, ROW);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");

    if (warp == 8u) { // the copier
        if (lane == 0u) {
            unsigned i = 0;
            for (unsigned item = cluster; item < P.items; item += clusters) {
                const unsigned tb = item / P.nblocks, nb = item % P.nblocks;
                for (unsigned q = 0; q < P.steps; ++q, ++i) {
                    const unsigned s = i % STAGES;
                    float *const st = stages + s * STAGE_FL;
                    if (i >= STAGES)
                        bar_wait(&empty[s], (i / STAGES - 1u) & 1u);
                    bar_expect(&loaded[s], 4u * ROW * (A_FL + 2 * B_FL));
                    bulk_copy(st, vp + ((size_t)(tb * P.steps + q) * 64u + ROW * r) * A_FL, 4u * ROW * A_FL, &loaded[s]);
                    bulk_copy(st + 2 * ROW * A_FL, up + ((size_t)(nb * P.steps + q) * 64u + ROW * r) * 2u * B_FL,
                              4u * ROW * 2 * B_FL, &loaded[s]);
                }
            }
        }
    } else if (warp > 8u) { // the converters: V's lo halves
        const unsigned ct = tid - 288u;
        unsigned i = 0;
        for (unsigned item = cluster; item < P.items; item += clusters)
            for (unsigned q = 0; q < P.steps; ++q, ++i) {
                const unsigned s = i % STAGES;
                float *const st = stages + s * STAGE_FL;
                bar_wait(&loaded[s], (i / STAGES) & 1u);
#pragma unroll 4
                for (unsigned k = ct; k < ROW * A_FL / 4; k += 32u * CONVERTERS) {
                    const float4 v = ((const float4 *)st)[k];
                    ((uint4 *)(st + ROW * A_FL))[k] = make_uint4(tf32_lo(v.x), tf32_lo(v.y), tf32_lo(v.z), tf32_lo(v.w));
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                __syncwarp();
                if (lane == 0u)
                    bar_arrive(&ready[s]);
            }
    } else { // the consumers
        const unsigned wg = warp >> 2, w = warp & 3u, g = lane >> 2, t = lane & 3u;
        unsigned i = 0, done = 0;
        for (unsigned item = cluster; item < P.items; item += clusters, ++done) {
            const unsigned tb = item / P.nblocks, nb = item % P.nblocks;
            float acc[4][32]; // an item's own: set by its first step's wgmma (scale-d 0), dead after its Z
            // Step q of the item: its stage's products, then step q - 1's stage back to the copier.
            auto step = [&](unsigned q, bool first) {
                const unsigned s = i % STAGES;
                const float *const st = stages + s * STAGE_FL;
                bar_wait(&ready[s], (i / STAGES) & 1u);
                if (!first)
#pragma unroll
                    for (int e = 0; e < 4; ++e)
#pragma unroll
                        for (int x = 0; x < 32; ++x)
                            fence_operand(acc[e][x]);
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const unsigned el = 4u * wg + e;
                    const uint64_t a_hi = descriptor(st + el * A_FL), a_lo = descriptor(st + ROW * A_FL + el * A_FL);
                    const uint64_t b_hi = descriptor(st + 2 * ROW * A_FL + el * 2 * B_FL), b_lo = b_hi + ((4u * B_FL) >> 4);
                    if (first)
                        wgmma_set(acc[e], a_lo, b_hi);
                    else
                        wgmma(acc[e], a_lo, b_hi, 1);
                    wgmma(acc[e], a_hi, b_lo, 1);
                    wgmma(acc[e], a_hi, b_hi, 1);
                }
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
                for (int e = 0; e < 4; ++e)
#pragma unroll
                    for (int x = 0; x < 32; ++x)
                        fence_operand(acc[e][x]);
                if (q > 0u && (tid & 127u) == 0u)
                    bar_arrive(&empty[(i - 1u) % STAGES]);
                ++i;
            };
            step(0u, true);
#pragma unroll 1
            for (unsigned q = 1; q < P.steps; ++q)
                step(q, false);
            asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
            for (int e = 0; e < 4; ++e)
#pragma unroll
                for (int x = 0; x < 32; ++x)
                    fence_operand(acc[e][x]);
            if ((tid & 127u) == 0u)
                bar_arrive(&empty[(i - 1u) % STAGES]);
            if (!END) { // keep the sums alive
                float sum = 0;
#pragma unroll
                for (int e = 0; e < 4; ++e)
#pragma unroll
                    for (int x = 0; x < 32; ++x)
                        sum += acc[e][x];
                if (sum == 1234.5f)
                    y[tid] = sum;
                continue;
            }
            // Z_r's partial sums over this warpgroup's 4 elements, warpgroup 0 first, then 1 adds;
            // not before every block has read the last item's Z
            if (done > 0u)
                bar_wait_cluster(zempty, (done - 1u) & 1u);
#pragma unroll
            for (int pass = 0; pass < 2; ++pass) {
                if (pass == (int)wg) {
#pragma unroll
                    for (int qq = 0; qq < M; ++qq)
#pragma unroll
                        for (int j = 0; j < 8; ++j)
#pragma unroll
                            for (int h = 0; h < 2; ++h) {
                                float z0 = 0, z1 = 0;
#pragma unroll
                                for (int e = 0; e < 4; ++e) {
                                    const float a = AT[qq][4 * pass + e]; // pass == wg: a constant operand
                                    z0 += a * acc[e][4 * j + 2 * h], z1 += a * acc[e][4 * j + 2 * h + 1];
                                }
                                const unsigned tile = 16u * w + g + 8u * h, out = 8u * j + 2u * t;
                                float2 *const to = (float2 *)(zs + z_at(qq, tile, out));
                                if (pass == 1) {
                                    const float2 was = *to;
                                    z0 += was.x, z1 += was.y;
                                }
                                *to = make_float2(z0, z1);
                            }
                }
                consumers_sync();
            }
            if (tid == 0u) { // this block's Z is there: tell every block of the cluster
                asm volatile("fence.acq_rel.cluster;" ::: "memory");
                for (unsigned c = 0; c < ROW; ++c)
                    bar_arrive_remote(zfull, c);
            }
            bar_wait_cluster(zfull, done & 1u);
            // Y of 2 of block r's 8 tiles x 64 outputs a thread: sum_i AT[p][i] Z_i[q], a column q at a time
#pragma unroll 1
            for (unsigned h = 0; h < 2u; ++h) {
                const unsigned tl = tid & 7u, out = (tid >> 3) + 32u * h, tile = ROW * r + tl;
                unsigned zremote[ROW]; // every block's Z
#pragma unroll
                for (unsigned c = 0; c < ROW; ++c)
                    zremote[c] = remote_at(zs, c);
                float yv[M * M];
#pragma unroll
                for (int qq = 0; qq < M; ++qq) {
                    const unsigned at = 4u * z_at(qq, tile, out);
                    float z[8];
#pragma unroll
                    for (int c = 0; c < 8; ++c)
                        z[c] = load_remote(zremote[c] + at);
#pragma unroll
                    for (int p = 0; p < M; ++p) {
                        float v = 0;
#pragma unroll
                        for (int c = 0; c < 8; ++c)
                            v += AT[p][c] * z[c];
                        yv[p * M + qq] = v;
                    }
                }
                const unsigned gt = tb * BM + tile, k = nb * BN + out;
                if (gt < P.tiles) {
                    float4 *const to = (float4 *)(y + ((size_t)k * P.tiles + gt) * (M * M));
#pragma unroll
                    for (int x = 0; x < M * M / 4; ++x)
                        to[x] = make_float4(yv[4 * x], yv[4 * x + 1], yv[4 * x + 2], yv[4 * x + 3]);
                }
            }
            consumers_sync();
            if (tid == 0u) { // every read of the cluster's Z by this block done
                asm volatile("fence.acq_rel.cluster;" ::: "memory");
                for (unsigned c = 0; c < ROW; ++c)
                    bar_arrive_remote(zempty, c);
            }
        }
        if (END && done > 0u) // no block leaves while another may still read its Z
            bar_wait_cluster(zempty, (done - 1u) & 1u);
    }
}

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

// A row (tile or output) and channel's offset in a 64 x 8 piece: K-major core matrices
static size_t piece_at(unsigned row, unsigned ch) { return (row / 8) * 64 + (ch / 4) * 32 + (row % 8) * 4 + ch % 4; }

template <int M> static void run(const char *name, unsigned tiles, unsigned channels, unsigned outputs)
{
    Problem P;
    P.tiles = tiles, P.steps = channels / 8, P.tblocks = (tiles + BM - 1) / BM, P.nblocks = outputs / BN;
    P.items = P.tblocks * P.nblocks;
    const size_t nv = (size_t)P.tblocks * P.steps * 64 * A_FL, nu = (size_t)P.nblocks * P.steps * 64 * 2 * B_FL,
                 ny = (size_t)outputs * tiles * M * M;
    float *vp, *up, *y;
    CK(cudaMalloc(&vp, nv * 4));
    CK(cudaMalloc(&up, nu * 4));
    CK(cudaMalloc(&y, ny * 4));
    fill<<<1024, 256>>>(vp, nv, 17u, 0);
    fill<<<1024, 256>>>(up, nu, 99u, 0);
    make_lo<<<1024, 256>>>(up, nu / (2 * B_FL));
    CK(cudaMemset(y, 0xff, ny * 4)); // NaN: what the kernel leaves unwritten shows

    // the output transform of F(M, 9 - M): points 0, 1, -1, 2, -2, 1/2, -1/2 and infinity
    const double pts[7] = {0, 1, -1, 2, -2, 0.5, -0.5};
    float at[6][8] = {};
    for (int p = 0; p < M; ++p) {
        for (int j = 0; j < 7; ++j)
            at[p][j] = (float)pow(pts[j], p);
        at[p][7] = p == M - 1;
    }
    at[0][0] = 1;
    CK(cudaMemcpyToSymbol(AT, at, sizeof at));

    auto full = wino_gemm_end<M, 1>, products = wino_gemm_end<M, 0>;
    CK(cudaFuncSetAttribute(full, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SHARED));
    CK(cudaFuncSetAttribute(products, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)SHARED));
    cudaLaunchConfig_t cfg = {};
    cfg.blockDim = dim3(THREADS), cfg.dynamicSmemBytes = SHARED, cfg.gridDim = dim3(ROW * P.items);
    int fit = 0;
    CK(cudaOccupancyMaxActiveClusters(&fit, full, &cfg));
    const unsigned clusters = fit < (int)P.items ? (unsigned)fit : P.items;
    full<<<ROW * clusters, THREADS, SHARED>>>(vp, up, y, P);
    CK(cudaDeviceSynchronize());

    // the sampled error against float64, relative to the sum of |terms|
    std::vector<float> hv(nv), hu(nu), hy(ny);
    CK(cudaMemcpy(hv.data(), vp, nv * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hu.data(), up, nu * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), y, ny * 4, cudaMemcpyDeviceToHost));
    double worst = 0;
    int nans = 0;
    unsigned seed = 7;
    for (int sample = 0; sample < 600; ++sample) {
        seed = seed * 1664525u + 1013904223u;
        const unsigned tile = (seed >> 4) % tiles;
        seed = seed * 1664525u + 1013904223u;
        const unsigned k = (seed >> 4) % outputs, tb = tile / BM, nb = k / BN;
        double mm[8][8], mag[8][8];
        for (int e = 0; e < 64; ++e) {
            double s = 0, a = 0;
            for (unsigned c = 0; c < channels; ++c) {
                const double v = hv[((size_t)(tb * P.steps + c / 8) * 64 + e) * A_FL + piece_at(tile % BM, c % 8)];
                const double u = hu[((size_t)(nb * P.steps + c / 8) * 64 + e) * 2 * B_FL + piece_at(k % BN, c % 8)];
                s += v * u, a += fabs(v * u);
            }
            mm[e / 8][e % 8] = s, mag[e / 8][e % 8] = a;
        }
        for (int p = 0; p < M; ++p)
            for (int qq = 0; qq < M; ++qq) {
                double want = 0, scale = 0;
                for (int i = 0; i < 8; ++i)
                    for (int j = 0; j < 8; ++j)
                        want += at[p][i] * mm[i][j] * at[qq][j], scale += fabs(at[p][i] * at[qq][j]) * mag[i][j];
                const float got = hy[((size_t)k * tiles + tile) * M * M + p * M + qq];
                if (got != got)
                    ++nans;
                else if (fabs(got - want) / scale > worst)
                    worst = fabs(got - want) / scale;
            }
    }
    const float ms = median_ms([&] { full<<<ROW * clusters, THREADS, SHARED>>>(vp, up, y, P); }, 3, 21);
    const float ms_products = median_ms([&] { products<<<ROW * clusters, THREADS, SHARED>>>(vp, up, y, P); }, 3, 21);
    const double flop = 2.0 * tiles * channels * outputs * 64, bytes = 4.0 * (nv + ny);
    printf("%-4s tiles %6u c %4u k %4u F(%d): %d clusters; whole %.4f ms (%.1f TFLOP/s, %.0f GB/s of V read + y written), "
           "products alone %.4f ms; error %.2e of sum |terms|, %d NaN of %d sampled\n",
           name, tiles, channels, outputs, M, clusters, ms, flop / ms / 1e9, bytes / ms / 1e6, ms_products, worst,
           nans, 600 * M * M);
    CK(cudaFree(vp));
    CK(cudaFree(up));
    CK(cudaFree(y));
}

static void run_shape(const char *name, unsigned tiles, unsigned c, unsigned k, int m)
{
    if (c % 8 || k % BN || (m != 6 && m != 4)) {
        printf("%s: channels a multiple of 8, outputs of 64, m 4 or 6\n", name);
        return;
    }
    if (m == 6)
        run<6>(name, tiles, c, k);
    else
        run<4>(name, tiles, c, k);
}

int main(int argc, char **argv)
{
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
    run_shape("R1", 32 * 10 * 10, 64, 64, 6);
    run_shape("S64", 64 * 11 * 11, 64, 64, 6);
    run_shape("F2", 64 * 14 * 14, 64, 128, 4);
    run_shape("V2", 32 * 19 * 19, 128, 128, 6);
    run_shape("V1", 32 * 38 * 38, 64, 64, 6);
    run_shape("V3", 32 * 10 * 10, 256, 256, 6);
    return 0;
}
