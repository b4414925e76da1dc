/* CUDA on the CPU, for tests: included before an emitted kernel's source (rewritten by
 * kernel_cpu.c: its __shared__ arrays and asm statements made into the calls below), so that the
 * host's C++ compiler builds the kernel into a shared object whose one function is the kernel,
 * run once per GPU thread by kernel_cpu.c's fibers. It covers what the templates use, no more:
 * the vector types, __ldg and friends, barriers and shuffles (the runner's), shared memory (an
 * arena poisoned with NaN before every block), cp.async copies (landed at the wait that covers
 * them, the latest moment a GPU may), and sm_90's mbarriers, bulk copies, wgmma, clusters and
 * mma.sync (the runner's). Nothing here is timed: it checks what the kernels compute.
 *
 * Why by hand: no packaged tool runs CUDA C++ on a CPU (hipCPU and CuPBoP are not in Debian), and
 * the emitted kernels need only this small subset. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_cpu_thread.h"

/* Set by the runner (dlsym) before the kernel runs: the fiber's thread, and the runner's calls. */
extern "C" {
kcpu_thread *kcpu_self;
const kcpu_api *kcpu_calls;
}

#define __global__
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __cluster_dims__(...)

#define threadIdx (kcpu_self->thread_idx)
#define blockIdx (kcpu_self->block_idx)
#define blockDim (kcpu_self->block_dim)
#define gridDim (kcpu_self->grid_dim)

typedef kcpu_uint3 uint3;
struct __attribute__((aligned(8))) float2 { float x, y; };
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
struct __attribute__((aligned(16))) uint4 { unsigned x, y, z, w; };
static inline float2 make_float2(float x, float y) { return float2{x, y}; }
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

template <class T> static inline T __ldg(const T *p) { return *p; }
template <class T> static inline void __stcs(T *p, T v) { *p = v; }

static inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
static inline int __float_as_int(float f) { int i; memcpy(&i, &f, 4); return i; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((uint64_t)a * b) >> 32); }

/* CUDA's integer min and max: mixed signedness compares as unsigned, as C's conversions do. */
static inline int min(int a, int b) { return a < b ? a : b; }
static inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned min(int a, unsigned b) { return min((unsigned)a, b); }
static inline unsigned min(unsigned a, int b) { return min(a, (unsigned)b); }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
static inline unsigned max(int a, unsigned b) { return max((unsigned)a, b); }
static inline unsigned max(unsigned a, int b) { return max(a, (unsigned)b); }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

/* sin(pi x) and cos(pi x), rounded once from double (CUDA's are within 1-2 ulp). */
static inline void sincospif(float x, float *s, float *c)
{
    *s = (float)sin(M_PI * (double)x);
    *c = (float)cos(M_PI * (double)x);
}

static inline void __syncthreads(void) { kcpu_calls->syncthreads(); }
static inline void __syncwarp(unsigned mask = 0xffffffffu) { kcpu_calls->syncwarp(mask); }

template <class T> static inline T __shfl_sync(unsigned mask, T v, int from, int width = 32)
{
    static_assert(sizeof(T) <= 8, "__shfl_sync of more than 8 bytes");
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    unsigned lane = kcpu_self->lane, w = (unsigned)width;
    bits = kcpu_calls->exchange(mask, bits, (lane & ~(w - 1u)) + ((unsigned)from & (w - 1u)));
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* ---- shared memory: each block's arena (kcpu_self->arena; the blocks of a cluster run at once,
 * each with its own), the dynamic part first, then each kernel's __shared__ arrays, each at an
 * offset placed at its first use (kcpu_rewrite makes each a static offset and a reference into
 * the running thread's arena; none is at namespace scope, which would run before the runner is
 * set). The runner poisons what a block uses (0xFF bytes: NaN) before it starts, so a read of
 * what the block never wrote shows. */
static inline void *kcpu_dynamic_shared(void) { return kcpu_self->arena; }
static inline size_t kcpu_static_shared(size_t bytes) { return kcpu_calls->static_shared(bytes); }

static inline size_t __cvta_generic_to_shared(const void *p)
{
    const char *c = (const char *)p, *arena = kcpu_self->arena;
    if (c < arena || c >= arena + KCPU_ARENA_BYTES)
        kcpu_calls->fail("__cvta_generic_to_shared of an address outside the block's shared memory");
    return (size_t)(c - arena);
}

/* ---- cp.async: issued copies wait in the thread's list until a wait covers their group (or,
 * in a reversed run, land at once: a write over what others still read then shows) ---- */
static inline void kcpu_land(kcpu_copy c)
{
    memcpy(c.to, c.from, c.from_bytes);
    memset(c.to + c.from_bytes, 0, c.bytes - c.from_bytes);
}

static inline void kcpu_copy_async(unsigned to, const void *from, unsigned bytes, unsigned from_bytes)
{
    kcpu_thread *t = kcpu_self;
    if ((size_t)to + bytes > KCPU_ARENA_BYTES || (to & (bytes - 1u)) || ((uintptr_t)from & (bytes - 1u)))
        kcpu_calls->fail("cp.async: a destination outside shared memory, or an address not aligned to its size");
    kcpu_copy c = {t->arena + to, (const char *)from, bytes, from_bytes < bytes ? from_bytes : bytes, t->committed};
    if (t->copies_land_at_issue) {
        kcpu_land(c);
        return;
    }
    if (t->copy_count == t->copy_cap) {
        unsigned cap = t->copy_cap ? 2 * t->copy_cap : 64;
        kcpu_copy *grown = (kcpu_copy *)realloc(t->copies, cap * sizeof *grown);
        if (!grown) {
            kcpu_calls->fail("out of memory for cp.async copies");
            return;
        }
        t->copies = grown, t->copy_cap = cap;
    }
    t->copies[t->copy_count++] = c;
}

static inline void kcpu_commit(void) { ++kcpu_self->committed; }

/* cp.async.wait_group n: every committed group but the n newest has landed. */
static inline void kcpu_wait(unsigned n)
{
    kcpu_thread *t = kcpu_self;
    unsigned kept = 0;
    for (unsigned i = 0; i < t->copy_count; ++i) {
        kcpu_copy c = t->copies[i];
        if (c.group + n < t->committed) {
            kcpu_land(c);
        } else {
            t->copies[kept++] = c;
        }
    }
    t->copy_count = kept;
}

/* ---- sm_90's mbarriers, bulk copies and wgmma: the runner's (kernel_cpu_sm90.h). The fences
 * around them (fence.proxy.async, fence.mbarrier_init, wgmma.fence) are nothing here: the CPU's
 * one memory is coherent, and the runner orders what the fences order on a GPU. ---- */
static inline void kcpu_mbar_init(unsigned at, unsigned count) { kcpu_calls->mbar_init(at, count); }
static inline void kcpu_mbar_arrive(unsigned at, unsigned tx_bytes) { kcpu_calls->mbar_arrive(at, tx_bytes); }
static inline bool kcpu_mbar_try_wait(unsigned at, unsigned parity) { return kcpu_calls->mbar_try_wait(at, parity); }
static inline void kcpu_bulk_copy(unsigned to, const void *from, unsigned bytes, unsigned bar)
{
    kcpu_calls->bulk_copy(to, from, bytes, bar);
}
static inline void kcpu_wgmma(unsigned n, unsigned long long a, const unsigned *const *a_regs, unsigned long long b,
                              bool scale_d, int scale_a, int scale_b, float *const *d)
{
    kcpu_calls->wgmma(n, a, a_regs, b, scale_d, scale_a, scale_b, d);
}
static inline void kcpu_wgmma_commit(void) { kcpu_calls->wgmma_commit(); }
static inline void kcpu_wgmma_wait(unsigned newest) { kcpu_calls->wgmma_wait(newest); }
static inline void kcpu_st_async(unsigned to, float v, unsigned bar) { kcpu_calls->st_async(to, __float_as_uint(v), bar); }

/* ---- sm_90's clusters: the blocks of one run at once (kernel_cpu.c), along x ---- */
static inline unsigned kcpu_cluster_rank(void) { return kcpu_self->rank; }
static inline unsigned kcpu_cluster_id_x(void) { return kcpu_self->block_idx.x / kcpu_self->cluster_size; }
static inline void kcpu_cluster_sync(void) { kcpu_calls->cluster_sync(); }
static inline void kcpu_named_barrier(unsigned id, unsigned count) { kcpu_calls->named_barrier(id, count); }

/* mapa: a generic address of this block's shared memory as block rank's */
template <class T> static inline T kcpu_mapa(T p, unsigned rank)
{
    const char *c = (const char *)p;
    if (rank >= kcpu_self->cluster_size)
        kcpu_calls->fail("mapa: a rank outside the cluster");
    return (T)(kcpu_calls->arena_of(rank) + __cvta_generic_to_shared(c));
}

/* mapa.shared::cluster: a shared::cta address of this block as block rank's shared::cluster one */
static inline unsigned kcpu_mapa_cluster(unsigned at, unsigned rank)
{
    if (rank >= kcpu_self->cluster_size || at >= KCPU_ARENA_BYTES)
        kcpu_calls->fail("mapa.shared::cluster: a rank outside the cluster, or an address outside shared memory");
    return (rank + 1u) << KCPU_RANK_SHIFT | at;
}

/* mma.sync m16n8k8 .f32.tf32.tf32.f32 (d = a b + c) by the warp: lane 4 g + t holds a's rows g and
 * g + 8 at columns t and t + 4 (a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)), b's
 * rows t and t + 4 at column g, c's and d's rows g and g + 8 at columns 2 t and 2 t + 1 (c0 (g,
 * 2 t), c1 (g, 2 t + 1), c2 (g + 8, 2 t), c3 (g + 8, 2 t + 1)); a and b truncated to TF32, as the
 * tensor cores read them. */
static inline float kcpu_tf32(uint32_t bits) { return __uint_as_float(bits & 0xffffe000u); }
static inline void kcpu_mma_tf32(float &d0, float &d1, float &d2, float &d3, uint32_t a0, uint32_t a1, uint32_t a2,
                                 uint32_t a3, uint32_t b0, uint32_t b1, float c0, float c1, float c2, float c3)
{
    struct operands {
        uint32_t a[4], b[2];
    } mine = {{a0, a1, a2, a3}, {b0, b1}}, all[32];
    kcpu_calls->warp_gather(0xffffffffu, &mine, sizeof mine, all);
    const unsigned g = kcpu_self->lane >> 2, t = kcpu_self->lane & 3u;
    const float c[4] = {c0, c1, c2, c3};
    float d[4];
    for (unsigned i = 0; i < 4; ++i) {
        const unsigned row = g, col = 2u * t + (i & 1u), half = i >> 1; /* row + 8 half */
        float sum = 0.0f;
        for (unsigned k = 0; k < 8; ++k) {
            const float a = kcpu_tf32(all[4u * row + k % 4u].a[2u * (k / 4u) + half]);
            const float b = kcpu_tf32(all[4u * col + k % 4u].b[k / 4u]);
            sum = fmaf(a, b, sum);
        }
        d[i] = c[i] + sum;
    }
    d0 = d[0], d1 = d[1], d2 = d[2], d3 = d[3];
}

/* __trap(): the launch fails, as on a GPU. */
static inline void __trap(void) { kcpu_calls->fail("__trap()"); }

/* An asm statement the CPU cannot run: fails when it is reached (code under `#if
 * __CUDA_ARCH__ >= 900` never is). */
static inline void kcpu_unsupported(const char *ptx) { kcpu_calls->fail(ptx); }
