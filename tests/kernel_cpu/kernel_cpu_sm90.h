/* sm_90's asynchronous operations on the CPU, for the runner of emitted kernels (kernel_cpu.c):
 * mbarriers, bulk copies (the copy engine's, counted on an mbarrier), st.async and wgmma (the
 * tensor cores' warpgroup products, TF32 from shared memory by descriptor into fp32 sums in
 * registers). What
 * they compute is what the GPU does; when they happen is at one extreme or the other of what the
 * GPU may do, chosen by the launch's order (kernel_cpu.h) so that each order pairs the latest
 * reads with the earliest writes of one kind:
 *   in order, a bulk copy lands as late as it may (when its mbarrier's phase could complete by
 *   nothing else), so that a read before the wait sees the poison, and a wgmma runs as early (once
 *   the last thread of its warpgroup has issued it), so that operands stored after it show;
 *   reversed, a copy lands at issue and a wgmma runs as late as it may (at the first wait_group
 *   that covers it, once every other fiber has had one more turn), so that a copy over what a
 *   wgmma has still to read shows.
 * Addresses are shared::cta or shared::cluster (kernel_cpu_thread.h): a cluster's blocks run at
 * once (kernel_cpu.c), and an arrival or a copy may reach a peer's mbarrier. */
#ifndef KCPU_SM90_H
#define KCPU_SM90_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel_cpu_thread.h"

/* What the runner gives: its blocks' shared memory, the order of this launch, and the calls that
 * touch its fibers. */
typedef struct kcpu_sm90_host {
    char *(*arena_of)(unsigned rank); /* the shared memory of the cluster's block `rank` */
    unsigned dynamic_bytes; /* the launch's dynamic shared memory (wgmma's operands lie in it) */
    bool reversed;          /* the launch's order: copies land at issue, wgmma runs at its wait */
    kcpu_thread *(*self)(void);
    void (*spin)(void);     /* lets the other fibers run; no progress */
    void (*progress)(void); /* an event: a sweep of the block with none is a deadlock */
    uint64_t (*sweeps)(void); /* the sweeps of the block's fibers so far */
    void (*fail)(const char *what);
} kcpu_sm90_host;

/* Before each block or cluster (the arenas freshly poisoned): nothing in flight. */
void kcpu_sm90_begin_block(const kcpu_sm90_host *host);
/* After a block or cluster that ran to its end: NULL, or what it left in flight (a GPU's block
 * may not end with bulk copies or wgmma groups outstanding). */
const char *kcpu_sm90_end_block(void);

/* mbarrier.init: `count` arrivals a phase, phase 0. */
void kcpu_sm90_mbar_init(unsigned at, unsigned count);
/* mbarrier.arrive (tx_bytes 0) and mbarrier.arrive.expect_tx (first expects tx_bytes more). */
void kcpu_sm90_mbar_arrive(unsigned at, unsigned tx_bytes);
/* mbarrier.try_wait.parity: whether the phase of that parity has completed; where it has not, the
 * other fibers run before it returns (the caller's loop asks again). */
bool kcpu_sm90_mbar_try_wait(unsigned at, unsigned parity);
/* cp.async.bulk from global to shared memory, its bytes counted on the mbarrier at `bar`. */
void kcpu_sm90_bulk_copy(unsigned to, const void *from, unsigned bytes, unsigned bar);
/* st.async: 4 bytes into a cluster block's shared memory, counted on the mbarrier at `bar` (of
 * the same block); lands as a bulk copy does. */
void kcpu_sm90_st_async(unsigned to, uint32_t bits, unsigned bar);

/* wgmma.mma_async m64nNk8 .f32.tf32.tf32 by one thread of its warpgroup: d, the thread's N / 2
 * sums (pointers: they are read and written when the group runs); a and b, the operands'
 * descriptors (K-major, no swizzle), or where a_regs is not NULL, A from registers: the thread's
 * four (pointers, read when the group runs, so that a kernel that writes them before the wait
 * shows), rows 16 w + g and + 8 by columns t and t + 4 of warp w's lane 4 g + t, as mma.sync's
 * m16n8k8; d = a b + (scale_d ? d : 0), a and b times scale_a, scale_b. */
void kcpu_sm90_wgmma(unsigned n, uint64_t a, const unsigned *const *a_regs, uint64_t b, bool scale_d, int scale_a,
                     int scale_b, float *const *d);
void kcpu_sm90_wgmma_commit(void);
/* wgmma.wait_group: every group of the thread's warpgroup but the `newest` latest has run. */
void kcpu_sm90_wgmma_wait(unsigned newest);

#endif
