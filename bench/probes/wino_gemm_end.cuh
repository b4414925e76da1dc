/* The device side of wino_gemm_end.cu (its header says what the probe is): the kernel, its
 * constants and helpers, apart so that tests/test_kernel_cpu.c runs the same kernel on the CPU
 * (kernel_cpu's sm_90 forms: mbarriers, bulk copies, wgmma, st.async, clusters) before a GPU does. */
#pragma once
#include <stdint.h>

constexpr int ROW = 8;              // elements a block: a row of the 8 x 8 grid
constexpr int BM = 64, BN = 64;     // tiles and outputs a work item
constexpr int A_FL = BM * 8, B_FL = BN * 8;                  // an element's step of V, of U (hi)
constexpr int STAGE_FL = ROW * (2 * A_FL + 2 * B_FL);         // V hi, V lo, U hi and lo: 64 KB
constexpr int STAGES = 2;
constexpr int Z_FL = 6 * BM * BN;                            // Z_i[q][tile][output] of 8 blocks' 8 tiles, m <= 6: 96 KB
constexpr int THREADS = 384;        // warps 0-7 sum, 8 copies, 9-11 convert
constexpr int CONVERTERS = 3;
constexpr size_t SHARED = sizeof(float) * (STAGES * STAGE_FL + Z_FL) + 8 * sizeof(uint64_t);

// The output transforms' AT (m x 8) of F(6, 3) and F(4, 5), points 0, 1, -1, 2, -2, 1/2, -1/2 and
// infinity: row p is each point to the p, the infinite point's column 1 in the last row alone
// (every value exact in fp32).
#define WGE_AT6                                                                                     \
    {{1, 1, 1, 1, 1, 1, 1, 0},           {0, 1, -1, 2, -2, 0.5f, -0.5f, 0},                         \
     {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},   {0, 1, -1, 8, -8, 0.125f, -0.125f, 0},                     \
     {0, 1, 1, 16, 16, 0.0625f, 0.0625f, 0}, {0, 1, -1, 32, -32, 0.03125f, -0.03125f, 1}}
#define WGE_AT4                                                                                     \
    {{1, 1, 1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0.5f, -0.5f, 0}, {0, 1, 1, 4, 4, 0.25f, 0.25f, 0},     \
     {0, 1, -1, 8, -8, 0.125f, -0.125f, 1}}
__constant__ float AT6[6][8] = WGE_AT6;
__constant__ float AT4[4][8] = WGE_AT4;
template <int M> static __device__ __forceinline__ float at_of(int p, int j) { return M == 6 ? AT6[p][j] : AT4[p][j]; }

struct Problem {
    unsigned tiles, outputs, steps, tblocks, nblocks, items;
    unsigned prefetch; // the steps ahead whose V and U the copier asks into L2 (0: none)
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
// A wait that never ends traps (a protocol fault fails the launch rather than hanging the run).
#define SPIN_LIMIT (1u << 22)
static __device__ __forceinline__ void bar_wait(uint64_t *b, unsigned parity)
{
    unsigned done, spins = 0;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem(b)), "r"(parity) : "memory");
        if (++spins == SPIN_LIMIT)
            __trap();
    } while (!done);
}
// The wait for a phase that arrivals from other blocks of the cluster complete (their writes seen).
static __device__ __forceinline__ void bar_wait_cluster(uint64_t *b, unsigned parity)
{
    unsigned done, spins = 0;
    do {
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(smem(b)), "r"(parity) : "memory");
        if (++spins == SPIN_LIMIT)
            __trap();
    } while (!done);
}
// An arrival on the mbarrier at b's place in block `cta` of the cluster, releasing this block's writes.
// An arrival on the mbarrier at b's place in block `cta` of the cluster; relaxed: the caller's one
// fence.acq_rel.cluster before its arrivals orders what they announce (a release arrival is a
// GPU-wide barrier of its own on sm_90, eight of them in a row on the cluster's critical path).
static __device__ __forceinline__ void bar_arrive_remote(uint64_t *b, unsigned cta)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem(b)), "r"(cta));
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}
// p's place in block `cta` of the cluster
static __device__ __forceinline__ unsigned remote_at(const void *p, unsigned cta)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem(p)), "r"(cta));
    return remote;
}
// Two floats into another block's shared memory at `at`, their 8 bytes counted on its mbarrier `bar`
// (both shared::cluster addresses); asynchronous: nothing waits for it here.
static __device__ __forceinline__ void send2(unsigned at, float a, float b, unsigned bar)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(at), "f"(a),
                 "f"(b), "r"(bar)
                 : "memory");
}
static __device__ __forceinline__ void bulk_copy(float *dst, const float *src, unsigned bytes, uint64_t *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem(dst)),
                 "l"(src), "r"(bytes), "r"(smem(b)) : "memory");
}
static __device__ __forceinline__ void prefetch_l2(const float *src, unsigned bytes)
{
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}
static __device__ __forceinline__ unsigned tf32_lo(float x)
{
    return __float_as_uint(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u)) + 0x1000u;
}
static __device__ __forceinline__ uint64_t descriptor(const float *p)
{
    return (uint64_t)((smem(p) & 0x3ffffu) >> 4) | (uint64_t)(128u >> 4) << 16 | (uint64_t)(256u >> 4) << 32;
}
// d (64 x 32: rows 16 w + g and + 8 by columns 8 j + 2 t and + 1 at d[4 j] .. d[4 j + 3]) += a b
static __device__ __forceinline__ void wgmma(float (&d)[16], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
                 "%12, %13, %14, %15}, %16, %17, 1, 1, 1;\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
                 : "l"(a), "l"(b));
}
// The same with d written, not read (scale-d 0): an item's first product, so that no sum of the item
// before is kept alive into this one (ptxas would hold all 128 across the end).
static __device__ __forceinline__ void wgmma_set(float (&d)[16], uint64_t a, uint64_t b)
{
    asm volatile("wgmma.mma_async.sync.aligned.m64n32k8.f32.tf32.tf32 {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, "
                 "%12, %13, %14, %15}, %16, %17, 0, 1, 1;\n"
                 : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3]), "=f"(d[4]), "=f"(d[5]), "=f"(d[6]), "=f"(d[7]),
                   "=f"(d[8]), "=f"(d[9]), "=f"(d[10]), "=f"(d[11]), "=f"(d[12]), "=f"(d[13]), "=f"(d[14]), "=f"(d[15])
                 : "l"(a), "l"(b));
}
static __device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }
static __device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 1, 256;" ::: "memory"); }

// Z_i[q][tile][output] as received: source block i, the receiving block's tile (0-7), any output,
// its column swizzled by the tile so that a warp's sends (tiles g = 0..7 by outputs 2 t) fall in
// distinct banks two wavefronts a warp (unswizzled all 8 tiles hit the same two banks); the
// receiver's reads, one tile a warp, stay conflict-free
static __device__ __forceinline__ unsigned z_at(unsigned i, unsigned q, unsigned tile, unsigned out, int m)
{
    return ((i * m + q) * ROW + tile) * BN + (out ^ ((tile & 3u) << 3));
}

// U's step in a stage: element el's hi and lo, interleaved as loaded ([el][hi, lo]) or, where the
// converters make the lo (UMADE), all hi then all lo.
template <int UMADE> static __device__ __forceinline__ unsigned u_hi(unsigned el) { return UMADE ? el * B_FL : el * 2 * B_FL; }
template <int UMADE> static __device__ __forceinline__ unsigned u_lo(unsigned el)
{
    return UMADE ? ROW * B_FL + el * B_FL : el * 2 * B_FL + B_FL;
}

// END: 1 the whole kernel; 0 the products alone (their sums kept alive by a store that never runs).
template <int M, int END, int UMADE>
__global__ void __cluster_dims__(8, 1, 1) // ROW (a literal: the CPU runner reads it) __launch_bounds__(THREADS, 1)
wino_gemm_end(const float *__restrict__ vp, const float *__restrict__ up, float *__restrict__ y, Problem P)
{
    extern __shared__ float4 shared4[];
    float *const stages = (float *)shared4;
    float *const zs = stages + STAGES * STAGE_FL;
    uint64_t *const loaded = (uint64_t *)(zs + Z_FL), *const ready = loaded + STAGES, *const empty = ready + STAGES;
    uint64_t *const rfull = empty + STAGES, *const rfree = rfull + 1;
    constexpr unsigned RECEIVED = 4u * ROW * M * ROW * BN; // bytes a block receives an item: 8 blocks' Z of its 8 tiles
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u;
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    const unsigned cluster = blockIdx.x / ROW, clusters = gridDim.x / ROW;
    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s)
            bar_init(&loaded[s], 1), bar_init(&ready[s], CONVERTERS), bar_init(&empty[s], 2);
        bar_init(rfull, 1), bar_init(rfree, ROW);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        if (END)
            bar_expect(rfull, RECEIVED); // the first item's
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
                    bar_expect(&loaded[s], 4u * ROW * (A_FL + (UMADE ? 1 : 2) * B_FL));
                    bulk_copy(st, vp + ((size_t)(tb * P.steps + q) * 64u + ROW * r) * A_FL, 4u * ROW * A_FL, &loaded[s]);
                    const size_t u_piece = (size_t)(nb * P.steps + q) * 64u + ROW * r;
                    if (P.prefetch) { // the step P.prefetch ahead, into L2
                        unsigned q2 = q + P.prefetch, item2 = item;
                        while (q2 >= P.steps)
                            q2 -= P.steps, item2 += clusters;
                        if (item2 < P.items) {
                            const unsigned tb2 = item2 / P.nblocks, nb2 = item2 % P.nblocks;
                            const size_t u2 = (size_t)(nb2 * P.steps + q2) * 64u + ROW * r;
                            prefetch_l2(vp + ((size_t)(tb2 * P.steps + q2) * 64u + ROW * r) * A_FL, 4u * ROW * A_FL);
                            prefetch_l2(up + u2 * (UMADE ? 1u : 2u) * B_FL, 4u * ROW * (UMADE ? 1 : 2) * B_FL);
                        }
                    }
                    if (UMADE)
                        bulk_copy(st + 2 * ROW * A_FL, up + u_piece * B_FL, 4u * ROW * B_FL, &loaded[s]);
                    else
                        bulk_copy(st + 2 * ROW * A_FL, up + u_piece * 2u * B_FL, 4u * ROW * 2 * B_FL, &loaded[s]);
                }
            }
        }
    } else if (warp > 8u) { // the converters: V's lo halves (and U's, UMADE)
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
                if (UMADE) {
                    float *const u = st + 2 * ROW * A_FL;
#pragma unroll 4
                    for (unsigned k = ct; k < ROW * B_FL / 4; k += 32u * CONVERTERS) {
                        const float4 v = ((const float4 *)u)[k];
                        ((uint4 *)(u + ROW * B_FL))[k] = make_uint4(tf32_lo(v.x), tf32_lo(v.y), tf32_lo(v.z), tf32_lo(v.w));
                    }
                }
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                __syncwarp();
                if (lane == 0u)
                    bar_arrive(&ready[s]);
            }
    } else { // the consumers: warpgroup wg sums outputs 32 wg .. 32 wg + 31 of the row's 8 elements
        const unsigned wg = warp >> 2, w = warp & 3u, g = lane >> 2, t = lane & 3u;
        unsigned i = 0, done = 0;
        for (unsigned item = cluster; item < P.items; item += clusters, ++done) {
            const unsigned tb = item / P.nblocks, nb = item % P.nblocks;
            float acc[ROW][16]; // an item's own: set by its first step's wgmma (scale-d 0), dead after its Z
            // Step q of the item: its stage's products, then step q - 1's stage back to the copier.
            auto step = [&](unsigned q, bool first) {
                const unsigned s = i % STAGES;
                const float *const st = stages + s * STAGE_FL;
                bar_wait(&ready[s], (i / STAGES) & 1u);
                if (!first)
#pragma unroll
                    for (int e = 0; e < ROW; ++e)
#pragma unroll
                        for (int x = 0; x < 16; ++x)
                            fence_operand(acc[e][x]);
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
                for (int e = 0; e < ROW; ++e) {
                    const uint64_t a_hi = descriptor(st + e * A_FL), a_lo = descriptor(st + ROW * A_FL + e * A_FL);
                    // this warpgroup's 32 outputs: 4 of the piece's 8-row core-matrix groups on
                    const uint64_t b_hi = descriptor(st + 2 * ROW * A_FL + u_hi<UMADE>(e) + 256u * wg),
                                   b_lo = descriptor(st + 2 * ROW * A_FL + u_lo<UMADE>(e) + 256u * wg);
                    if (first)
                        wgmma_set(acc[e], a_lo, b_hi);
                    else
                        wgmma(acc[e], a_lo, b_hi);
                    wgmma(acc[e], a_hi, b_lo);
                    wgmma(acc[e], a_hi, b_hi);
                }
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
#pragma unroll
                for (int e = 0; e < ROW; ++e)
#pragma unroll
                    for (int x = 0; x < 16; ++x)
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
            for (int e = 0; e < ROW; ++e)
#pragma unroll
                for (int x = 0; x < 16; ++x)
                    fence_operand(acc[e][x]);
            if ((tid & 127u) == 0u)
                bar_arrive(&empty[(i - 1u) % STAGES]);
            if (!END) { // keep the sums alive
                float sum = 0;
#pragma unroll
                for (int e = 0; e < ROW; ++e)
#pragma unroll
                    for (int x = 0; x < 16; ++x)
                        sum += acc[e][x];
                if (sum == 1234.5f)
                    y[tid] = sum;
                continue;
            }
            // Z_r = M_r A, each value sent to the block of its tile: not before every block has used
            // what this one sent it for the last item
            if (done > 0u)
                bar_wait_cluster(rfree, (done - 1u) & 1u);
            const unsigned zbase = smem(zs);
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const unsigned tile = 16u * w + g + 8u * h, to = tile / ROW; // 2 w + h
                const unsigned at = remote_at(zs, to) - zbase, bar = remote_at(rfull, to);
#pragma unroll
                for (int qq = 0; qq < M; ++qq)
#pragma unroll
                    for (int j = 0; j < 4; ++j) {
                        float z0 = 0, z1 = 0;
#pragma unroll
                        for (int e = 0; e < ROW; ++e)
                            z0 += at_of<M>(qq, e) * acc[e][4 * j + 2 * h], z1 += at_of<M>(qq, e) * acc[e][4 * j + 2 * h + 1];
                        const unsigned out = 32u * wg + 8u * j + 2u * t;
                        send2(zbase + at + 4u * z_at(r, qq, tile % ROW, out, M), z0, z1, bar);
                    }
            }
            bar_wait_cluster(rfull, done & 1u); // all 8 blocks' Z of this block's tiles
            // Y of 2 of the block's 8 tiles x 64 outputs a thread, a column q at a time; the buffer
            // freed for the next item's Z before the stores
            float yv[2][M * M];
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const unsigned out = tid & 63u, tl = (tid >> 6) + 4u * h;
#pragma unroll
                for (int qq = 0; qq < M; ++qq) {
                    float z[ROW];
#pragma unroll
                    for (int c = 0; c < ROW; ++c)
                        z[c] = zs[z_at(c, qq, tl, out, M)];
#pragma unroll
                    for (int p = 0; p < M; ++p) {
                        float v = 0;
#pragma unroll
                        for (int c = 0; c < ROW; ++c)
                            v += at_of<M>(p, c) * z[c];
                        yv[h][p * M + qq] = v;
                    }
                }
            }
            consumers_sync();
            if (tid == 0u) { // this block's Z read: the next item's may land, from every block
                bar_expect(rfull, RECEIVED);
                asm volatile("fence.acq_rel.cluster;" ::: "memory");
                for (unsigned c = 0; c < ROW; ++c)
                    bar_arrive_remote(rfree, c);
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const unsigned out = tid & 63u, tl = (tid >> 6) + 4u * h;
                const unsigned gt = tb * BM + ROW * r + tl, k = nb * BN + out;
                if (gt < P.tiles) {
                    float4 *const dst = (float4 *)(y + ((size_t)gt * P.outputs + k) * (M * M));
#pragma unroll
                    for (int x = 0; x < M * M / 4; ++x)
                        dst[x] = make_float4(yv[h][4 * x], yv[h][4 * x + 1], yv[h][4 * x + 2], yv[h][4 * x + 3]);
                }
            }
        }
        if (END && done > 0u) // no block leaves while another may still send to it or arrive on it
            bar_wait_cluster(rfree, (done - 1u) & 1u);
    }
}

