/* A probe for issue 30 (bench/NOTES.md, "Issue 30 next"), built by hand on a GPU machine:
 *   nvcc -O3 -arch=sm_90 -o wl bench/probes/winograd_loaders.cu && ./wl [REPS]
 * and for where a loader's time goes:
 *   ncu --clock-control none --metrics smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,\
 *       smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct,smsp__warp_issue_stalled_barrier_per_warp_active.pct ./wl 1
 *
 * The question: how fast can the cluster kernel's 4 loader warps (templates/winograd/
 * winograd_fused_cluster.cu) bring a chunk of 8 channels x 32 tiles of V3's input (32 x 256 x
 * 56 x 56, F(4x4, 3x3), pad 1) into shared memory and transform block 0's two rows of it, against
 * the ~1,900 cycles the 12 product warps take for the chunk's products at the probe's 80%? The
 * kernel measured 1.63 ms with barrier stalls of 31%: its product warps wait for these warps.
 *
 * One block of 4 warps an SM, nothing else on it, the whole input once a rep (196 blocks of 32
 * tiles x 32 chunks), copies two chunks ahead as in the kernel. Modes (a bit each):
 *   POINTS: each tile's 36 points by 4-byte cp.async, zeros outside the plane by the ignore-src
 *           predicate from a 36-bit mask worked out once (the kernel's way, [point][task]);
 *   ROWS:   the rows of the region the block's tiles cover, by 16-byte cp.async: the 32 tiles are
 *           at most 4 runs along tile rows, a run of len tiles needs 6 rows of len + 2 aligned
 *           16-byte pieces ([channel][row][piece]); zeros outside the plane by piece;
 *   BT:     each task's 2 rows of BT d B from the layout of POINTS (or of ROWS) into the stage.
 * Output: cycles a chunk an SM (SM clock as the device reports it) for each mode, beside the
 * ~1,900-cycle budget. A checksum of the stages keeps the compiler from dropping the work. */
#include "probe.h"

enum { N = 32, C = 256, H = 56, W = 56, TILES_X = 14, TILES_Y = 14, TILES = N * TILES_X * TILES_Y };
enum { TB = 32, CB = 8, TASKS = TB * CB, THREADS = 128, CHUNKS = C / CB, BLOCKS = TILES / TB };
enum { PIECES = 40, LINE = 4 * PIECES }; /* ROWS: at most 32 + 2 x 4 pieces a row, 4 floats each */
enum { POINTS = 1, ROWS = 2, BT = 4, COALESCED = 8, STREAM = 16, WEIGHTS = 32 };
enum { SLOT = TASKS + 32 /* COALESCED: a point's tasks and room for its pad */,
       RAW = SLOT * 36 /* floats: POINTS' buffer needs TASKS * 36; ROWS' CB * 6 * LINE = 7680 */,
       STAGE = CB * 12 * TB, K = 256, UK = 64, US = CB * 12 * UK /* a stage of the block's weights */ };
/* COALESCED: a warp's copy covers one channel's row i of 8 tiles x columns 0-3 (32 floats
 * in a row of the plane, 5 sectors) or of 16 tiles x columns 4-5, instead of one point of 32
 * tiles (16 sectors); point (i, j) at [6 i + j][task] + pad(j) in slots of SLOT floats, the pads
 * keeping the writes free of bank conflicts (a quarter warp's 4 columns in 4 bank octets). (The
 * figures in bench/NOTES.md were taken with slots of TASKS floats, where a pad ran into the next
 * point's slot: the same copies and bytes, some landing on the wrong point.) */
__device__ __forceinline__ int pad(int j) { return j < 4 ? 8 * j : 16 * (j - 4); }

__device__ __forceinline__ void copy_if(void *dst, const void *src, unsigned bytes, bool full)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    if (bytes == 16)
        asm volatile("{\n .reg .pred skip;\n setp.eq.u32 skip, %2, 0;\n cp.async.cg.shared.global [%0], [%1], 16, skip;\n}\n"
                     ::"r"(to), "l"(src), "r"((unsigned)full));
    else
        asm volatile("{\n .reg .pred skip;\n setp.eq.u32 skip, %2, 0;\n cp.async.ca.shared.global [%0], [%1], 4, skip;\n}\n"
                     ::"r"(to), "l"(src), "r"((unsigned)full));
}

/* BT of F(4, 3) (points 0, 1, -1, 1/2, -1/2, inf), as the generator's program has it. */
__device__ __forceinline__ void bt6(const float in[6], float v[6])
{
    const float p0 = -0.25f * in[2] + in[4], p1 = -0.25f * in[1] + in[3], p4 = -in[2] + in[4],
                p5 = -0.5f * in[1] + 0.5f * in[3];
    v[0] = 0.25f * in[0] - 1.25f * in[2] + in[4];
    v[1] = p0 + p1, v[2] = p0 - p1, v[3] = p4 + p5, v[4] = p4 - p5;
    v[5] = 0.25f * in[1] - 1.25f * in[3] + in[5];
}

/* Rows 0 and 1 of BT d B of the tile d into dst[e TB], e = 6 i + j. */
__device__ __forceinline__ void transform(const float d[6][6], float *dst)
{
    float t0[6], t1[6];
#pragma unroll
    for (int j = 0; j < 6; ++j) {
        const float in[6] = {d[0][j], d[1][j], d[2][j], d[3][j], d[4][j], d[5][j]};
        float v[6];
        bt6(in, v);
        t0[j] = v[0], t1[j] = v[1];
    }
    float v[6];
    bt6(t0, v);
#pragma unroll
    for (int j = 0; j < 6; ++j)
        dst[j * TB] = v[j];
    bt6(t1, v);
#pragma unroll
    for (int j = 0; j < 6; ++j)
        dst[(6 + j) * TB] = v[j];
}

struct run_table { /* ROWS: the block's runs of tiles along tile rows, and each tile's place */
    int count, first_piece[4], n[4], ty[4], tx0[4], len[4];
    int column[TB]; /* tile i's first column in its run's line: 4 (its piece) + 3 */
};

__device__ void make_runs(int tile0, run_table *r)
{
    r->count = 0;
    int piece = 0;
    for (int i = 0; i < TB; ++i) {
        const int t = tile0 + i, n = t / (TILES_X * TILES_Y), rest = t % (TILES_X * TILES_Y);
        const int ty = rest / TILES_X, tx = rest % TILES_X;
        const int k = r->count - 1;
        if (k < 0 || r->n[k] != n || r->ty[k] != ty) {
            if (k >= 0)
                piece += r->len[k] + 2;
            r->first_piece[r->count] = piece, r->n[r->count] = n, r->ty[r->count] = ty, r->tx0[r->count] = tx;
            r->len[r->count++] = 0;
        }
        const int m = r->count - 1;
        r->column[i] = 4 * (r->first_piece[m] + r->len[m]) + 3;
        ++r->len[m];
    }
}

template <int MODE>
__global__ void __launch_bounds__(THREADS, 4) loaders(const float *__restrict__ x, const float *__restrict__ u, float *__restrict__ out, int reps)
{
    extern __shared__ float4 smem4[];
    float *raw = (float *)smem4;          /* 2 buffers of RAW floats */
    float *stages = raw + 2 * RAW;         /* 3 of STAGE */
    float *wst = stages + 3 * STAGE;       /* 3 of US: WEIGHTS' */
    __shared__ run_table runs;
    const int lt = threadIdx.x;
    float check = 0;
    for (int rep = 0; rep < reps; ++rep)
        for (int b = blockIdx.x; b < BLOCKS; b += gridDim.x) {
            const int tile0 = b * TB;
            /* POINTS: this thread's tile lt % TB, its corner and mask, as the kernel has them */
            const int t = tile0 + lt % TB, n = t / (TILES_X * TILES_Y), rest = t % (TILES_X * TILES_Y);
            const int y0 = 4 * (rest / TILES_X) - 1, x0 = 4 * (rest % TILES_X) - 1;
            unsigned long long inside = 0;
#pragma unroll
            for (int i = 0; i < 6; ++i)
#pragma unroll
                for (int j = 0; j < 6; ++j)
                    inside |= (unsigned long long)((unsigned)(y0 + i) < H && (unsigned)(x0 + j) < W) << (6 * i + j);
            const float *corner = x + (size_t)(n * C + lt / TB) * H * W + y0 * W + x0;
            /* COALESCED: copy m (0-3: 8 tiles x columns 0-3, 4-5: 16 tiles x columns 4-5) of this
             * lane: its tile, column, corner at channel 0 and which of its 6 rows are inside */
            const int lane = lt & 31, warp = lt >> 5;
            int ccorner[6], cdst[6]; /* offsets: of the corner in x at channel 0, of the point in raw */
            unsigned crows[6];
#pragma unroll
            for (int m = 0; m < 6; ++m) {
                const int tile = m < 4 ? 8 * m + lane / 4 : 16 * (m - 4) + lane / 2, j = m < 4 ? lane % 4 : 4 + lane % 2;
                const int tt = tile0 + tile, tn = tt / (TILES_X * TILES_Y), tr = tt % (TILES_X * TILES_Y);
                const int ty = 4 * (tr / TILES_X) - 1, tx = 4 * (tr % TILES_X) - 1 + j;
                unsigned rows = 0;
#pragma unroll
                for (int i = 0; i < 6; ++i)
                    rows |= (unsigned)((unsigned)(ty + i) < H && (unsigned)tx < W) << i;
                crows[m] = rows, cdst[m] = j * SLOT + pad(j) + tile;
                ccorner[m] = tn * C * H * W + ty * W + tx;
            }
            int uoff[US / 4 / THREADS]; /* WEIGHTS: this thread's copies' offsets in u at channel 0 */
#pragma unroll
            for (int r = 0; r < US / 4 / THREADS; ++r) {
                const int i = lt + r * THREADS, kv = i % (UK / 4), ce = i / (UK / 4), cl = ce / 12, el = ce % 12;
                uoff[r] = ((12 * (b % 3) + el) * C + cl) * K + UK * (b % 4) + 4 * kv;
            }
            if (MODE & ROWS) {
                __syncthreads();
                if (lt == 0)
                    make_runs(tile0, &runs);
                __syncthreads();
            }
            auto fetch = [&](int q, float *dst) {
                const int c0 = q * CB;
                if (MODE & POINTS)
#pragma unroll
                    for (int r = 0; r < TASKS / THREADS; ++r) {
                        const float *src = corner + (size_t)(c0 + r * (THREADS / TB)) * H * W;
                        float *d = dst + lt + r * THREADS;
#pragma unroll
                        for (int k = 0; k < 36; ++k)
                            copy_if(d + k * TASKS, src + (k / 6) * W + k % 6, 4, (inside >> k) & 1);
                    }
                if (MODE & COALESCED)
#pragma unroll
                    for (int cc = 0; cc < CB / 4; ++cc) {
                        const int c = warp * (CB / 4) + cc;
#pragma unroll
                        for (int i = 0; i < 6; ++i)
#pragma unroll
                            for (int m = 0; m < 6; ++m)
                                copy_if(dst + cdst[m] + 6 * i * SLOT + c * TB,
                                        x + (ccorner[m] + (c0 + c) * H * W + i * W), 4, (crows[m] >> i) & 1);
                    }
                if (MODE & STREAM) /* the same bytes, contiguous: 16-byte copies at the best case */
#pragma unroll
                    for (int r = 0; r < TASKS * 36 / 4 / THREADS; ++r) {
                        const size_t at = ((size_t)(b * CHUNKS + q) * TASKS * 36) % ((size_t)N * C * H * W - TASKS * 36);
                        copy_if(dst + 4 * (lt + r * THREADS), x + at + 4 * (lt + r * THREADS), 16, true);
                    }
                if (MODE & WEIGHTS) /* the block's 12 elements x 8 channels x 64 outputs, as the kernel's */
#pragma unroll
                    for (int r = 0; r < US / 4 / THREADS; ++r)
                        copy_if(wst + (q % 3) * US + 4 * (lt + r * THREADS), u + (uoff[r] + c0 * K), 16, true);
                if (MODE & ROWS) {
                    const int lines = runs.count; /* (channel, row, piece) over the runs' pieces */
                    for (int k = 0; k < lines; ++k) {
                        const int pieces = runs.len[k] + 2, first = runs.first_piece[k];
                        for (int i = lt; i < CB * 6 * pieces; i += THREADS) {
                            const int c = i / (6 * pieces), row = (i / pieces) % 6, p = i % pieces;
                            const int y = 4 * runs.ty[k] - 1 + row, xs = 4 * (runs.tx0[k] - 1 + p);
                            const bool in = (unsigned)y < H && (unsigned)xs < W;
                            const float *src = x + ((size_t)(runs.n[k] * C + c0 + c) * H + (in ? y : 0)) * W + (in ? xs : 0);
                            copy_if(dst + (c * 6 + row) * LINE + 4 * (first + p), src, 16, in);
                        }
                    }
                }
                asm volatile("cp.async.commit_group;\n" ::);
            };
            if (MODE & (POINTS | ROWS | COALESCED | STREAM | WEIGHTS)) {
                fetch(0, raw);
                fetch(1, raw + RAW);
            }
            for (int q = 0; q < CHUNKS; ++q) {
                if (MODE & (POINTS | ROWS | COALESCED | STREAM | WEIGHTS))
                    asm volatile("cp.async.wait_group 1;\n" ::);
                __syncthreads();
                const float *tiles = raw + (q & 1) * RAW;
                float *stage = stages + (q % 3) * STAGE;
                if (MODE & BT)
                    for (int p = lt; p < TASKS; p += THREADS) {
                        float d[6][6];
                        if (MODE & ROWS) {
                            const float *line = tiles + (p / TB) * 6 * LINE + runs.column[p % TB];
#pragma unroll
                            for (int i = 0; i < 6; ++i)
#pragma unroll
                                for (int j = 0; j < 6; ++j)
                                    d[i][j] = line[i * LINE + j];
                        } else {
#pragma unroll
                            for (int k = 0; k < 36; ++k)
                                d[k / 6][k % 6] = tiles[MODE & COALESCED ? k * SLOT + pad(k % 6) + p : k * TASKS + p];
                        }
                        transform(d, stage + (p / TB) * 12 * TB + p % TB);
                    }
                __syncthreads();
                if ((MODE & (POINTS | ROWS | COALESCED | STREAM | WEIGHTS)) && q + 2 < CHUNKS)
                    fetch(q + 2, raw + (q & 1) * RAW);
                else if (MODE & (POINTS | ROWS | COALESCED | STREAM | WEIGHTS))
                    asm volatile("cp.async.commit_group;\n" ::); /* keeps wait_group 1's count */
                check += stage[lt];
            }
            asm volatile("cp.async.wait_all;\n" ::);
        }
    out[blockIdx.x * THREADS + threadIdx.x] = check;
}

template <int MODE>
static void run(const char *what, int sms, double clock_hz, int reps, const float *x, const float *u, float *out)
{
    const size_t bytes = (2 * RAW + 3 * STAGE + 3 * US) * sizeof(float);
    CK(cudaFuncSetAttribute(loaders<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, loaders<MODE>));
    const float median = median_ms([&] { loaders<MODE><<<sms, THREADS, bytes>>>(x, u, out, reps); }, 2, 11);
    const double chunks_per_sm = (double)BLOCKS * CHUNKS * reps / sms; /* ~ the busiest SM's */
    const double cycles = median * 1e-3 * clock_hz / chunks_per_sm;
    printf("| %-28s | %3d regs, %2d B stack | %8.3f ms | %7.0f cycles | %5.2f of 1,900 |\n", what, fa.numRegs,
           (int)fa.localSizeBytes, median, cycles, cycles / 1900);
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 4;
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    int clock_khz = 0;
    CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
    const size_t floats = (size_t)N * C * H * W;
    const size_t u_floats = (size_t)36 * C * K;
    float *host = (float *)malloc(floats * sizeof *host), *x, *u, *out;
    for (size_t i = 0; i < floats; ++i)
        host[i] = (float)((i * 7) % 5) - 2;
    CK(cudaMalloc((void **)&x, floats * sizeof *x));
    CK(cudaMalloc((void **)&u, u_floats * sizeof *u));
    CK(cudaMemcpy(u, host, u_floats * sizeof *u, cudaMemcpyHostToDevice));
    CK(cudaMalloc((void **)&out, (size_t)p.multiProcessorCount * THREADS * sizeof *out));
    CK(cudaMemcpy(x, host, floats * sizeof *x, cudaMemcpyHostToDevice));
    printf("%s, %d SMs at %.0f MHz; V3's input (%d x %d x %d x %d), %d blocks of %d tiles x %d chunks, %d rep(s); one "
           "block of %d threads an SM\n\n", p.name, p.multiProcessorCount, clock_khz / 1e3, N, C, H, W, BLOCKS, TB,
           CHUNKS, reps, THREADS);
    printf("| mode | registers | median | a chunk an SM | of the products' budget |\n| --- | ---: | ---: | ---: | ---: |\n");
    const int sms = p.multiProcessorCount;
    const double hz = clock_khz * 1e3;
    run<POINTS>("points (4 B copies)", sms, hz, reps, x, u, out);
    run<ROWS>("rows (16 B copies)", sms, hz, reps, x, u, out);
    run<BT>("BT from points' layout", sms, hz, reps, x, u, out);
    run<BT | ROWS>("rows + BT from rows' layout", sms, hz, reps, x, u, out);
    run<BT | POINTS>("points + BT (the kernel's)", sms, hz, reps, x, u, out);
    run<COALESCED>("coalesced points", sms, hz, reps, x, u, out);
    run<COALESCED | BT>("coalesced points + BT", sms, hz, reps, x, u, out);
    run<STREAM>("stream (16 B, contiguous)", sms, hz, reps, x, u, out);
    run<WEIGHTS>("weights U alone (16 B)", sms, hz, reps, x, u, out);
    run<POINTS | BT | WEIGHTS>("points + BT + U (the kernel)", sms, hz, reps, x, u, out);
    run<COALESCED | BT | WEIGHTS>("coalesced + BT + U", sms, hz, reps, x, u, out);
    run<STREAM | WEIGHTS>("stream + U (bytes' floor)", sms, hz, reps, x, u, out);
    CK(cudaFree(x));
    CK(cudaFree(u));
    CK(cudaFree(out));
    free(host);
    return 0;
}
