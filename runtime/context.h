/* Contexts: one device (or none, offline), its target architecture, the disk cache, and the
 * modules loaded on the device. */
#ifndef CG_CONTEXT_H
#define CG_CONTEXT_H

#include <pthread.h>

#include "cache.h"
#include "convgen.h"
#include "driver.h"

/* A cached program and its key's hash, which a lookup compares first (plan_cache.c). */
typedef struct plan_slot {
    uint64_t hash;
    struct plan_program *program;
} plan_slot;

typedef struct loaded_module {
    cache_key key;
    CUmodule module;
    struct loaded_module *next;
} loaded_module;

struct convgen_context {
    int offline;
    const cg_driver *drv;    /* NULL when offline */
    CUdevice device;
    CUcontext primary;
    int sm_count;
    int shared_per_block, shared_per_sm; /* bytes: the device's, or the arch's when offline */
    int l2_bytes;                        /* the device's L2; 0 offline (the generator's default) */
    double memory_bytes_per_s;           /* the device's peak bandwidth, the share of sm_count's; 0 offline */
    char arch[16];
    int max_cluster;         /* blocks per thread-block cluster the plans may use (1: none) */
    char device_name[256];
    cache_disk *disk;        /* NULL when disk caching is off */
    pthread_mutex_t lock;    /* guards `modules` and `plans` */
    int plans;               /* live plans, to warn about destroying a context under them */
    loaded_module *modules;  /* loaded once per context, unloaded at destroy */
    struct plan_slot *slots;       /* the plans' memory cache (plan_cache.c), also under `lock` */
    int slot_count, slot_cap;
    uint64_t program_clock;
    int idle_programs;             /* the most it keeps that no plan holds (0: 64) */
    /* What the plans' library steps share (lib_steps.c): a cuBLAS handle and cuFFT plans, made
     * on first use, since each costs milliseconds to tens of milliseconds. Guarded by lib_lock,
     * also held while a library call is enqueued: a handle's stream and work area (in the
     * executing plan's workspace) are set per call. */
    struct cublasContext *blas;
    struct fft_entry *fft_plans;
    pthread_mutex_t lib_lock;
};

/* Counts a plan in (+1) or out (-1). */
void ctx_count_plan(convgen_context *ctx, int delta);

/* Loads (once per context) the module of a cubin and finds kernel `name` in it. */
convgen_status ctx_load_function(convgen_context *ctx, const cache_kernel *k, const char *source,
                                 const char *name, CUfunction *fn);

#endif
