/* What the CPU runner of emitted kernels (kernel_cpu.c, C) and the CUDA shim compiled with each
 * kernel (cuda_on_cpu.h, C++) share: a GPU thread's state, which the runner keeps per fiber, and
 * the runner's functions the shim calls for what crosses threads (barriers, shuffles, sm_90's
 * asynchronous operations). */
#ifndef KCPU_THREAD_H
#define KCPU_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Shared memory: each block of a cluster has an arena whose first part is a launch's dynamic
 * shared memory, then every kernel's __shared__ arrays. A shared::cta address is a byte of the
 * thread's own block's arena; a shared::cluster address (mapa's) is (rank + 1) << KCPU_RANK_SHIFT
 * plus the byte in block `rank`'s arena, or a shared::cta address (the thread's own block). */
enum { KCPU_ARENA_BYTES = 64 << 20, KCPU_DYNAMIC_BYTES = 256 << 10, KCPU_MAX_CLUSTER = 8, KCPU_RANK_SHIFT = 27 };

typedef struct kcpu_uint3 {
    unsigned x, y, z;
} kcpu_uint3;

/* A cp.async copy issued and not yet landed (cuda_on_cpu.h lands it at the wait that covers its
 * group: the latest moment the GPU may, so that a read before the wait sees the poison). */
typedef struct kcpu_copy {
    char *to;
    const char *from;
    unsigned bytes, from_bytes; /* from_bytes < bytes: the rest is zeros */
    unsigned group;             /* the commit_group count when it was issued */
} kcpu_copy;

typedef struct kcpu_thread {
    kcpu_uint3 thread_idx, block_idx, block_dim, grid_dim;
    unsigned lane, warp; /* of the linear thread index in the block */
    char *arena;         /* its block's shared memory */
    unsigned rank, cluster_size; /* its block's in the cluster (clusters lie along x) */
    bool copies_land_at_issue; /* the earliest moment (a reversed run), not the wait's */
    kcpu_copy *copies;   /* this thread's copies in flight, in issue order */
    unsigned copy_count, copy_cap, committed;
    unsigned wgmma_committed, wgmma_issued; /* wgmma groups committed; wgmma issued since */
} kcpu_thread;

/* The runner's side: each call may switch to another fiber before it returns. A failure (a
 * kernel doing what the CPU cannot, or what CUDA leaves undefined) ends the block's run; the
 * runner reports `what`. */
typedef struct kcpu_api {
    void (*syncthreads)(void);
    void (*syncwarp)(unsigned mask);
    /* Every lane of `mask` gives `value`; returns lane `from`'s (a lane of the warp). */
    uint64_t (*exchange)(unsigned mask, uint64_t value, unsigned from);
    void (*fail)(const char *what);
    /* A __shared__ array's place in every block's arena (a byte offset), poisoned before each block. */
    size_t (*static_shared)(size_t bytes);
    /* bar.sync id, count: `count` threads of the block arrive, then all go on */
    void (*named_barrier)(unsigned id, unsigned count);
    /* barrier.cluster.arrive and .wait: every thread of the cluster */
    void (*cluster_sync)(void);
    /* Every lane of `mask` gives `bytes` (at most 64) at mine; each gets all 32 lanes' at all
     * (lane l's at all + l * bytes; lanes outside the mask: zeros): mma.sync's operands. */
    void (*warp_gather)(unsigned mask, const void *mine, unsigned bytes, void *all);
    /* block `rank`'s arena (mapa) */
    char *(*arena_of)(unsigned rank);
    /* sm_90's mbarriers, bulk copies and wgmma (kernel_cpu_sm90.h): addresses are shared bytes */
    void (*mbar_init)(unsigned at, unsigned count);
    void (*mbar_arrive)(unsigned at, unsigned tx_bytes);
    bool (*mbar_try_wait)(unsigned at, unsigned parity);
    void (*bulk_copy)(unsigned to, const void *from, unsigned bytes, unsigned bar);
    void (*wgmma)(unsigned n, uint64_t a, const unsigned *const *a_regs, uint64_t b, bool scale_d, int scale_a,
                  int scale_b, float *const *d);
    void (*wgmma_commit)(void);
    void (*wgmma_wait)(unsigned newest);
    /* st.async of 4 bytes to a shared::cluster address, counted on the mbarrier at `bar` */
    void (*st_async)(unsigned to, uint32_t bits, unsigned bar);
} kcpu_api;

#ifdef __cplusplus
}
#endif

#endif
