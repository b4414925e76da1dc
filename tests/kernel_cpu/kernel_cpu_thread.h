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

/* Shared memory: an arena whose first part is a launch's dynamic shared memory, then every
 * kernel's __shared__ arrays. */
enum { KCPU_ARENA_BYTES = 64 << 20, KCPU_DYNAMIC_BYTES = 256 << 10 };

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
    /* A __shared__ array's place in the runner's arena (kcpu_arena), poisoned before each block. */
    void *(*static_shared)(size_t bytes);
    /* sm_90's mbarriers, bulk copies and wgmma (kernel_cpu_sm90.h): addresses are shared bytes */
    void (*mbar_init)(unsigned at, unsigned count);
    void (*mbar_arrive)(unsigned at, unsigned tx_bytes);
    bool (*mbar_try_wait)(unsigned at, unsigned parity);
    void (*bulk_copy)(unsigned to, const void *from, unsigned bytes, unsigned bar);
    void (*wgmma)(unsigned n, uint64_t a, uint64_t b, bool scale_d, int scale_a, int scale_b, float *const *d);
    void (*wgmma_commit)(void);
    void (*wgmma_wait)(unsigned newest);
} kcpu_api;

#ifdef __cplusplus
}
#endif

#endif
