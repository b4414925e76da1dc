/* The CPU runner of emitted kernels (kernel_cpu.h): compiles a kernel's rewritten source into a
 * shared object, then runs its grid block by block (a cluster's blocks at once: sm_90's
 * __cluster_dims__), every GPU thread a fiber (ucontext) on one OS thread. A fiber runs until it
 * must wait for others (a barrier, a shuffle, an mbarrier or wgmma group: kernel_cpu_sm90.c) and
 * yields; the scheduler resumes the fibers in turn, a sweep at a time. Each block of the running
 * cluster has an arena of shared memory, poisoned before it starts. A sweep in which no fiber
 * moved is a deadlock (a barrier some threads never reach, a shuffle a lane never joins): the
 * block's run fails, saying so. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "kernel_cpu.h"
#include "kernel_cpu_sm90.h"
#include "kernel_cpu_thread.h"
#include "util.h"

enum { MAX_THREADS = 1024, MAX_FIBERS = MAX_THREADS * KCPU_MAX_CLUSTER, STACK_BYTES = 256 << 10, MAX_SYNCS = 8,
       NAMED_BARRIERS = 16,
       DYNAMIC_BYTES = KCPU_DYNAMIC_BYTES, /* the arena's first part: a launch's dynamic shared memory */
       ARENA_BYTES = KCPU_ARENA_BYTES,     /* then every kernel's __shared__ arrays (cuda_on_cpu.h) */
       WATCHDOG_S = 300,            /* a kernel that loops without yielding ends the process */
       POISONED_STACK = 8 << 10 };/* the top of each fiber stack poisoned before it runs */

typedef struct module {
    uint64_t hash;
    void *handle;
    void (*kernel)(const float *, const float *, float *, void *, const float *);
    kcpu_thread **self;
    size_t statics_from, statics_to; /* its __shared__ arrays' part of the arena, once placed */
    unsigned cluster;                /* blocks a cluster (its __cluster_dims__ x; 1 without) */
} module;

/* A warp-wide sync in progress: the lanes of `mask` arrive with a value each; once all have,
 * each takes what it asked for and leaves; the last to leave frees it. Stricter than CUDA, which
 * leaves lanes that have exited out of the count: a mask naming one is reported as a deadlock
 * (no emitted kernel syncs a warp after some of its lanes return). */
typedef struct warp_sync {
    bool used, complete;
    unsigned mask, arrived, left;
    uint64_t value[32];
    unsigned char data[32][64]; /* warp_gather's */
} warp_sync;

typedef struct fiber {
    ucontext_t context;
    kcpu_thread thread;
    bool done;
    /* what it waits for, so that the scheduler resumes it only once that has come: a barrier's
     * generation to pass, or a warp sync to complete */
    const unsigned *barrier;
    unsigned generation;
    const warp_sync *sync;
} fiber;

/* A running block: its shared memory, threads not yet ended, barriers and warp syncs. */
typedef struct block_state {
    char *arena; /* ARENA_BYTES */
    unsigned live, barrier_arrived, barrier_generation;
    unsigned named_arrived[NAMED_BARRIERS], named_generation[NAMED_BARRIERS];
    warp_sync syncs[MAX_THREADS / 32][MAX_SYNCS];
} block_state;

struct kcpu_runner {
    char *cxx, *shim_dir, *work_dir;
    module *modules;
    int module_count;
    size_t arena_used;   /* DYNAMIC_BYTES, then the __shared__ arrays placed so far (in every arena) */
    module *module;      /* the running kernel's */
    kcpu_schedule schedule;
    unsigned launches;
    bool reversed;       /* this launch's order: blocks and threads last first, copies landing at issue */
    /* the running cluster (one block without clusters): fiber i is thread i % threads of block
     * i / threads */
    fiber *fibers;
    char *stacks;
    block_state blocks[KCPU_MAX_CLUSTER];
    unsigned cluster, threads, fiber_count, live, current, shared_bytes;
    unsigned cluster_arrived, cluster_generation; /* barrier.cluster's */
    ucontext_t scheduler;
    uint64_t events; /* arrivals, releases, exits: a sweep that adds none is a deadlock */
    uint64_t sweeps; /* over the running cluster's fibers */
    char failure[256];
};

/* The runner whose block is on the fibers (one at a time), and its launch's parameters: globals,
 * since makecontext passes a fiber's entry only ints, not pointers, portably. */
static kcpu_runner *running;

/* ---- what the shim calls ---- */

static void yield(void)
{
    fiber *f = &running->fibers[running->current];
    swapcontext(&f->context, &running->scheduler);
}

static void fail(const char *what)
{
    const kcpu_thread *t = &running->fibers[running->current].thread;
    if (!running->failure[0])
        snprintf(running->failure, sizeof running->failure, "thread (%u, %u, %u) of block (%u, %u, %u): %s",
                 t->thread_idx.x, t->thread_idx.y, t->thread_idx.z, t->block_idx.x, t->block_idx.y, t->block_idx.z, what);
    for (;;) /* the scheduler stops the block; this fiber is never resumed */
        yield();
}

static block_state *my_block(void) { return &running->blocks[running->fibers[running->current].thread.rank]; }

/* Releases a barrier whose `arrived` reached `expected` (0: none yet). */
static void release_if_full(unsigned *arrived, unsigned *generation, unsigned expected)
{
    if (*arrived > 0 && *arrived >= expected) {
        *arrived = 0;
        ++*generation;
        ++running->events;
    }
}

/* The barriers whose count is the threads still running, after one of block b's ended. */
static void release_barriers_if_full(kcpu_runner *r, block_state *b)
{
    release_if_full(&b->barrier_arrived, &b->barrier_generation, b->live);
    release_if_full(&r->cluster_arrived, &r->cluster_generation, r->live);
}

/* Arrives on the barrier (arrived, generation) and waits for it to pass `expected` arrivals. */
static void arrive_and_wait(unsigned *arrived, unsigned *generation, unsigned expected)
{
    kcpu_runner *r = running;
    unsigned was = *generation;
    ++*arrived;
    ++r->events;
    release_if_full(arrived, generation, expected);
    fiber *f = &r->fibers[r->current];
    f->barrier = generation, f->generation = was;
    while (*generation == was)
        yield();
    f->barrier = NULL;
}

static void syncthreads(void)
{
    block_state *b = my_block();
    arrive_and_wait(&b->barrier_arrived, &b->barrier_generation, b->live);
}

static void named_barrier(unsigned id, unsigned count)
{
    block_state *b = my_block();
    if (id >= NAMED_BARRIERS || count == 0 || count % 32 || count > running->threads)
        fail("bar.sync: a barrier past 15, or a count not a whole number of the block's warps");
    if (id == 0 && count != running->threads) /* barrier 0 is __syncthreads' */
        fail("bar.sync 0 with fewer than the block's threads");
    if (id == 0)
        syncthreads();
    else
        arrive_and_wait(&b->named_arrived[id], &b->named_generation[id], count);
}

static void cluster_sync(void)
{
    kcpu_runner *r = running;
    arrive_and_wait(&r->cluster_arrived, &r->cluster_generation, r->live);
}

static warp_sync *join_sync(unsigned warp, unsigned mask)
{
    warp_sync *free_slot = NULL;
    for (int i = 0; i < MAX_SYNCS; ++i) {
        warp_sync *s = &my_block()->syncs[warp][i];
        if (s->used && !s->complete && s->mask == mask)
            return s;
        if (!s->used && !free_slot)
            free_slot = s;
    }
    if (!free_slot)
        fail("more than 8 warp syncs of one warp in flight");
    /* (its values and data are read only for lanes that arrive, which write them first) */
    free_slot->used = true, free_slot->complete = false;
    free_slot->mask = mask, free_slot->arrived = free_slot->left = 0;
    return free_slot;
}

/* Joins the warp's sync of `mask` with value (and `bytes` of data) and waits for every lane of
 * it; the caller reads what it needs from the sync, then leaves it. */
static warp_sync *arrive_at_sync(unsigned mask, uint64_t value, const void *data, unsigned bytes)
{
    kcpu_thread *t = &running->fibers[running->current].thread;
    if (!(mask >> t->lane & 1u))
        fail("a shuffle or __syncwarp by a lane outside its mask");
    warp_sync *s = join_sync(t->warp, mask);
    s->value[t->lane] = value;
    if (bytes)
        memcpy(s->data[t->lane], data, bytes);
    s->arrived |= 1u << t->lane;
    ++running->events;
    if (s->arrived == mask)
        s->complete = true;
    fiber *f = &running->fibers[running->current];
    f->sync = s;
    while (!s->complete)
        yield();
    f->sync = NULL;
    return s;
}

static void leave_sync(warp_sync *s)
{
    s->left |= 1u << running->fibers[running->current].thread.lane;
    if (s->left == s->arrived)
        s->used = false;
    ++running->events;
}

static uint64_t exchange(unsigned mask, uint64_t value, unsigned from)
{
    warp_sync *s = arrive_at_sync(mask, value, NULL, 0);
    if (from >= 32 || !(s->arrived >> from & 1u))
        fail("a shuffle from a lane outside its mask");
    uint64_t v = s->value[from];
    leave_sync(s);
    return v;
}

static void warp_gather(unsigned mask, const void *mine, unsigned bytes, void *all)
{
    if (bytes > 64)
        fail("warp_gather of more than 64 bytes a lane");
    warp_sync *s = arrive_at_sync(mask, 0, mine, bytes);
    for (unsigned l = 0; l < 32; ++l)
        if (s->arrived >> l & 1u)
            memcpy((char *)all + l * bytes, s->data[l], bytes);
        else
            memset((char *)all + l * bytes, 0, bytes);
    leave_sync(s);
}

static void syncwarp(unsigned mask) { exchange(mask, 0, running->fibers[running->current].thread.lane); }

/* Places a __shared__ array of the running kernel (its first block, at its first use): its
 * offset in every block's arena. */
static size_t static_shared(size_t bytes)
{
    kcpu_runner *r = running;
    size_t at = (r->arena_used + 127) & ~(size_t)127;
    if (at + bytes > ARENA_BYTES)
        fail("the kernels' __shared__ arrays pass the CPU arena's 64 MiB");
    for (int b = 0; b < KCPU_MAX_CLUSTER; ++b)
        memset(r->blocks[b].arena + at, 0xFF, bytes);
    module *m = r->module;
    m->statics_from = m->statics_to > m->statics_from ? m->statics_from : at;
    m->statics_to = at + bytes;
    r->arena_used = at + bytes;
    return at;
}

static kcpu_thread *self(void) { return &running->fibers[running->current].thread; }
static void progress(void) { ++running->events; }
static uint64_t sweeps(void) { return running->sweeps; }

static char *arena_of(unsigned rank)
{
    if (rank >= running->cluster)
        fail("a block rank outside the cluster");
    return running->blocks[rank].arena;
}

static const kcpu_api calls = {syncthreads, syncwarp, exchange, fail, static_shared, named_barrier, cluster_sync,
                               warp_gather, arena_of, kcpu_sm90_mbar_init, kcpu_sm90_mbar_arrive,
                               kcpu_sm90_mbar_try_wait, kcpu_sm90_bulk_copy, kcpu_sm90_wgmma, kcpu_sm90_wgmma_commit,
                               kcpu_sm90_wgmma_wait, kcpu_sm90_st_async};

/* ---- modules ---- */

static convgen_status run_command(const char *command, const char *log_path, const char *what)
{
    if (system(command) == 0)
        return CONVGEN_SUCCESS;
    size_t size = 0;
    char *log = cg_read_file(log_path, 1 << 14, &size);
    convgen_status s = cg_fail(CONVGEN_ERROR_COMPILE, "kernel_cpu: %s failed: %.3000s", what, log ? log : "(no log)");
    free(log);
    return s;
}

convgen_status kcpu_create(const char *cxx, const char *shim_dir, kcpu_runner **out)
{
    *out = NULL;
    kcpu_runner *r = calloc(1, sizeof *r);
    char dir[] = "/tmp/convgen-kcpu-XXXXXX";
    if (!r || !mkdtemp(dir)) {
        free(r);
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "kernel_cpu: no memory or no temporary folder");
    }
    r->cxx = cg_strdup(cxx), r->shim_dir = cg_strdup(shim_dir), r->work_dir = cg_strdup(dir);
    r->fibers = calloc(MAX_FIBERS, sizeof *r->fibers);
    /* address space only: what a launch touches (NORESERVE) */
    r->stacks = mmap(NULL, (size_t)MAX_FIBERS * STACK_BYTES, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    r->stacks = r->stacks == MAP_FAILED ? NULL : r->stacks;
    bool arenas = true;
    for (int b = 0; b < KCPU_MAX_CLUSTER; ++b) {
        char *a = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        r->blocks[b].arena = a == MAP_FAILED ? NULL : a;
        arenas = arenas && r->blocks[b].arena;
    }
    r->arena_used = DYNAMIC_BYTES;
    for (int i = 0; r->stacks && i < MAX_FIBERS; ++i) /* a guard page under each stack */
        mprotect(r->stacks + (size_t)i * STACK_BYTES, 4096, PROT_NONE);
    if (!r->cxx || !r->shim_dir || !r->work_dir || !r->fibers || !r->stacks || !arenas) {
        kcpu_destroy(r);
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "kernel_cpu: out of memory for the fibers");
    }
    char command[1024], log[512];
    snprintf(log, sizeof log, "%s/probe.log", dir);
    snprintf(command, sizeof command, "%s --version > '%s' 2>&1", cxx, log);
    convgen_status s = run_command(command, log, "the C++ compiler");
    if (s != CONVGEN_SUCCESS) {
        kcpu_destroy(r);
        return s;
    }
    *out = r;
    return CONVGEN_SUCCESS;
}

void kcpu_destroy(kcpu_runner *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->module_count; ++i)
        dlclose(r->modules[i].handle);
    free(r->modules);
    if (r->work_dir) {
        char command[600];
        snprintf(command, sizeof command, "rm -rf '%s'", r->work_dir);
        if (system(command) != 0)
            cg_warn("kernel_cpu: could not remove %s", r->work_dir);
    }
    if (r->stacks)
        munmap(r->stacks, (size_t)MAX_FIBERS * STACK_BYTES);
    for (int b = 0; b < KCPU_MAX_CLUSTER; ++b)
        if (r->blocks[b].arena)
            munmap(r->blocks[b].arena, ARENA_BYTES);
    for (int i = 0; r->fibers && i < MAX_FIBERS; ++i)
        free(r->fibers[i].thread.copies);
    free(r->fibers), free(r->cxx), free(r->shim_dir), free(r->work_dir), free(r);
}

static uint64_t hash_of(const cg_kernel *k)
{
    return XXH64(k->source, strlen(k->source), 0) ^ XXH64(k->name, strlen(k->name), 1);
}

static module *cached(kcpu_runner *r, uint64_t hash)
{
    for (int i = 0; i < r->module_count; ++i)
        if (r->modules[i].hash == hash)
            return &r->modules[i];
    return NULL;
}

static void lib_path(const kcpu_runner *r, uint64_t hash, const char *ext, char *path, size_t size)
{
    snprintf(path, size, "%s/%016llx.%s", r->work_dir, (unsigned long long)hash, ext);
}

/* Writes and compiles kernel k's rewritten source into the work folder's HASH.so. */
static convgen_status compile_kernel(const kcpu_runner *r, const cg_kernel *k, uint64_t hash)
{
    char *source = kcpu_rewrite(k->source);
    if (!source)
        return CONVGEN_ERROR_NOT_SUPPORTED;
    char src[600], lib[600], log[600], command[2400];
    lib_path(r, hash, "cpp", src, sizeof src), lib_path(r, hash, "so", lib, sizeof lib);
    lib_path(r, hash, "log", log, sizeof log);
    FILE *f = fopen(src, "w");
    bool written = f && fputs(source, f) >= 0;
    written = f && fclose(f) == 0 && written;
    free(source);
    if (!written)
        return cg_fail(CONVGEN_ERROR_IO, "kernel_cpu: cannot write %s", src);
    /* -O1: the unrolled kernels compile in a fraction of a second, and run at native speed
     * between barriers */
    snprintf(command, sizeof command, "%s -std=c++17 -O1 -w -fPIC -fno-threadsafe-statics -shared -I'%s' -include cuda_on_cpu.h -o '%s' '%s' > '%s' 2>&1",
             r->cxx, r->shim_dir, lib, src, log);
    return run_command(command, log, k->name);
}

/* Loads HASH.so as the next module; its kernel is k's. */
static convgen_status load_module(kcpu_runner *r, const cg_kernel *k, uint64_t hash)
{
    module m = {.hash = hash}, *grown = realloc(r->modules, sizeof *grown * (size_t)(r->module_count + 1));
    if (!grown)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "kernel_cpu: out of memory");
    r->modules = grown;
    char lib[600];
    lib_path(r, hash, "so", lib, sizeof lib);
    m.handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!m.handle)
        return cg_fail(CONVGEN_ERROR_COMPILE, "kernel_cpu: dlopen %s: %s", lib, dlerror());
    *(void **)&m.kernel = dlsym(m.handle, k->name);
    m.self = dlsym(m.handle, "kcpu_self");
    const kcpu_api **table = dlsym(m.handle, "kcpu_calls");
    if (!m.kernel || !m.self || !table) {
        dlclose(m.handle);
        return cg_fail(CONVGEN_ERROR_COMPILE, "kernel_cpu: %s has no function %s", lib, k->name);
    }
    *table = &calls;
    /* __cluster_dims__(x, 1, 1): its clusters lie along x, as the templates' do */
    const char *dims = strstr(k->source, "__cluster_dims__(");
    unsigned x = 1, y = 1, z = 1;
    if (dims && (sscanf(dims, "__cluster_dims__(%u, %u, %u)", &x, &y, &z) != 3 || x < 1 || x > KCPU_MAX_CLUSTER ||
                 y != 1 || z != 1)) {
        dlclose(m.handle);
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "kernel_cpu: %s: clusters other than 1 to %d blocks along x",
                       k->name, KCPU_MAX_CLUSTER);
    }
    m.cluster = x;
    r->modules[r->module_count++] = m;
    return CONVGEN_SUCCESS;
}

typedef struct compile_job {
    const kcpu_runner *r;
    const cg_kernel *kernels;
    convgen_status *status;
    char (*message)[1024];
} compile_job;

/* Compiles kernel i unless it is compiled or an earlier one of the batch is the same. */
static void compile_one(void *user, int i)
{
    compile_job *j = user;
    uint64_t hash = hash_of(&j->kernels[i]);
    bool done = cached((kcpu_runner *)j->r, hash);
    for (int e = 0; e < i && !done; ++e)
        done = hash_of(&j->kernels[e]) == hash;
    j->status[i] = done ? CONVGEN_SUCCESS : compile_kernel(j->r, &j->kernels[i], hash);
    if (j->status[i] != CONVGEN_SUCCESS)
        snprintf(j->message[i], sizeof j->message[i], "%s", convgen_last_error());
}

convgen_status kcpu_prepare(kcpu_runner *r, const cg_kernel *kernels, int count)
{
    convgen_status *status = calloc((size_t)count + 1, sizeof *status);
    char (*message)[1024] = calloc((size_t)count + 1, sizeof *message);
    convgen_status s = status && message ? CONVGEN_SUCCESS : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "kernel_cpu: out of memory");
    if (s == CONVGEN_SUCCESS) /* the compiler runs are independent: as many at once as there are cores */
        cg_parallel_for(count, compile_one, &(compile_job){r, kernels, status, message});
    for (int i = 0; i < count && s == CONVGEN_SUCCESS; ++i) {
        uint64_t hash = hash_of(&kernels[i]);
        if (status[i] != CONVGEN_SUCCESS)
            s = cg_fail(status[i], "%s", message[i]);
        else if (!cached(r, hash))
            s = load_module(r, &kernels[i], hash);
    }
    free(status), free(message);
    return s;
}

static convgen_status module_of(kcpu_runner *r, const cg_kernel *k, module **out)
{
    convgen_status s = kcpu_prepare(r, k, 1);
    *out = s == CONVGEN_SUCCESS ? cached(r, hash_of(k)) : NULL;
    return s;
}

/* ---- blocks ---- */

static struct {
    module *m;
    const float *in0, *in1, *bias;
    float *out;
    void *ws;
} launch_args;

/* Whether the block left the dynamic shared memory past its `bytes` untouched (a write past the
 * launch's size is out of bounds on the GPU). */
static bool within_dynamic(const block_state *b, unsigned bytes)
{
    for (size_t i = bytes; i < DYNAMIC_BYTES; ++i)
        if ((unsigned char)b->arena[i] != 0xFF)
            return false;
    return true;
}

/* Poisons block b's shared memory: the dynamic part and the kernel's __shared__ arrays. */
static void poison_shared(const module *m, block_state *b)
{
    memset(b->arena, 0xFF, DYNAMIC_BYTES);
    if (m->statics_to > m->statics_from)
        memset(b->arena + m->statics_from, 0xFF, m->statics_to - m->statics_from);
}

/* Block `rank` has ended: it left nothing past its dynamic shared memory; in a cluster, its shared
 * memory is the poison again, so that a peer reading it after it ended (which the GPU leaves
 * undefined) sees NaN. */
static void end_block(kcpu_runner *r, unsigned rank)
{
    block_state *b = &r->blocks[rank];
    const kcpu_thread *t = &r->fibers[r->current].thread;
    if (!within_dynamic(b, r->shared_bytes) && !r->failure[0])
        snprintf(r->failure, sizeof r->failure, "block (%u, %u, %u) wrote shared memory past its %u dynamic bytes",
                 t->block_idx.x, t->block_idx.y, t->block_idx.z, r->shared_bytes);
    if (r->cluster > 1)
        poison_shared(r->module, b);
}

static void fiber_main(void)
{
    kcpu_runner *r = running;
    launch_args.m->kernel(launch_args.in0, launch_args.in1, launch_args.out, launch_args.ws, launch_args.bias);
    fiber *f = &r->fibers[r->current];
    block_state *b = &r->blocks[f->thread.rank];
    f->done = true;
    --b->live;
    --r->live;
    ++r->events;
    release_barriers_if_full(r, b);
    if (b->live == 0)
        end_block(r, f->thread.rank);
    /* returns to the scheduler through uc_link */
}

/* Fiber i of the cluster whose first block is `first`: thread i % threads of block i / threads. */
static void start_fiber(kcpu_runner *r, const cg_kernel *k, unsigned i, kcpu_uint3 first)
{
    fiber *f = &r->fibers[i];
    const unsigned rank = i / r->threads, t = i % r->threads;
    free(f->thread.copies);
    f->thread = (kcpu_thread){
        .thread_idx = {t % k->block[0], t / k->block[0] % k->block[1], t / (k->block[0] * k->block[1])},
        .block_idx = {first.x + rank, first.y, first.z},
        .block_dim = {k->block[0], k->block[1], k->block[2]},
        .grid_dim = {k->grid[0], k->grid[1], k->grid[2]},
        .lane = t % 32,
        .warp = t / 32,
        .arena = r->blocks[rank].arena,
        .rank = rank,
        .cluster_size = r->cluster,
        .copies_land_at_issue = r->reversed,
    };
    f->done = false;
    f->barrier = NULL, f->sync = NULL;
    /* the stack's top NaN: a local read before it is written shows (frames are under 1 KiB) */
    memset(r->stacks + (size_t)(i + 1) * STACK_BYTES - POISONED_STACK, 0xFF, POISONED_STACK);
    getcontext(&f->context);
    f->context.uc_stack.ss_sp = r->stacks + (size_t)i * STACK_BYTES;
    f->context.uc_stack.ss_size = STACK_BYTES;
    f->context.uc_link = &r->scheduler;
    makecontext(&f->context, fiber_main, 0);
}

/* Sets block b of the cluster up: its shared memory poisoned (the dynamic part and the kernel's
 * __shared__ arrays), its barriers and warp syncs clear. */
static void start_block(kcpu_runner *r, const module *m, block_state *b)
{
    poison_shared(m, b);
    b->live = r->threads;
    b->barrier_arrived = b->barrier_generation = 0;
    memset(b->named_arrived, 0, sizeof b->named_arrived);
    for (unsigned w = 0; w < MAX_THREADS / 32; ++w)
        for (unsigned i = 0; i < MAX_SYNCS; ++i)
            b->syncs[w][i].used = false;
}

/* Runs one cluster of r->cluster blocks (one block without clusters), the first at `first`, to
 * its end; false where it failed or deadlocked (r->failure says why). */
static bool run_cluster(kcpu_runner *r, const cg_kernel *k, module *m, kcpu_uint3 first)
{
    r->threads = k->block[0] * k->block[1] * k->block[2];
    r->shared_bytes = k->shared_bytes;
    r->fiber_count = r->live = r->cluster * r->threads;
    r->cluster_arrived = 0;
    for (unsigned b = 0; b < r->cluster; ++b)
        start_block(r, m, &r->blocks[b]);
    const kcpu_sm90_host sm90 = {arena_of, k->shared_bytes, r->reversed, self, yield, progress, sweeps, fail};
    kcpu_sm90_begin_block(&sm90);
    for (unsigned i = 0; i < r->fiber_count; ++i)
        start_fiber(r, k, i, first);
    while (r->live > 0 && !r->failure[0]) {
        uint64_t before = r->events;
        ++r->sweeps;
        for (unsigned n = 0; n < r->fiber_count && !r->failure[0]; ++n) {
            unsigned i = r->reversed ? r->fiber_count - 1 - n : n;
            const fiber *f = &r->fibers[i];
            if (f->done || (f->barrier && *f->barrier == f->generation) || (f->sync && !f->sync->complete))
                continue;
            r->current = i;
            *m->self = &r->fibers[i].thread;
            swapcontext(&r->scheduler, &r->fibers[i].context);
        }
        if (r->live > 0 && r->events == before && !r->failure[0])
            snprintf(r->failure, sizeof r->failure, "block (%u, %u, %u)%s: deadlock: %u of %u threads wait at a barrier "
                     "or a shuffle that the others never reach", first.x, first.y, first.z,
                     r->cluster > 1 ? " and its cluster" : "", r->live, r->fiber_count);
    }
    const char *in_flight = kcpu_sm90_end_block();
    if (!r->failure[0] && in_flight)
        snprintf(r->failure, sizeof r->failure, "block (%u, %u, %u): %s", first.x, first.y, first.z, in_flight);
    return !r->failure[0];
}

void kcpu_set_schedule(kcpu_runner *r, kcpu_schedule s) { r->schedule = s; }

convgen_status kcpu_launch(kcpu_runner *r, const cg_kernel *k, const float *in0, const float *in1, float *out,
                           void *ws, const float *bias)
{
    unsigned threads = k->block[0] * k->block[1] * k->block[2];
    if (threads == 0 || threads > MAX_THREADS)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "kernel_cpu: %s: %u threads a block", k->name, threads);
    if (k->shared_bytes > DYNAMIC_BYTES)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "kernel_cpu: %s: %u bytes of dynamic shared memory", k->name,
                       k->shared_bytes);
    module *m = NULL;
    convgen_status s = module_of(r, k, &m);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (k->grid[0] % m->cluster)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "kernel_cpu: %s: a grid of %u blocks along x in clusters of %u",
                       k->name, k->grid[0], m->cluster);
    /* a kernel without a bias declares four parameters; the fifth, in a register, goes unread,
     * as cuLaunchKernel's does (plan.c) */
    launch_args.m = m, launch_args.in0 = in0, launch_args.in1 = in1, launch_args.out = out, launch_args.ws = ws;
    launch_args.bias = bias;
    running = r;
    r->module = m;
    r->failure[0] = 0;
    r->reversed = r->schedule == KCPU_REVERSED || (r->schedule == KCPU_ALTERNATE && r->launches++ % 2);
    bool ok = true;
    r->cluster = m->cluster;
    alarm(WATCHDOG_S);
    for (unsigned n = 0, clusters = k->grid[0] * k->grid[1] * k->grid[2] / r->cluster; ok && n < clusters; ++n) {
        unsigned c = r->reversed ? clusters - 1 - n : n, b = c * r->cluster;
        ok = run_cluster(r, k, m, (kcpu_uint3){b % k->grid[0], b / k->grid[0] % k->grid[1], b / (k->grid[0] * k->grid[1])});
    }
    alarm(0);
    running = NULL;
    return ok ? CONVGEN_SUCCESS : cg_fail(CONVGEN_ERROR_CUDA, "kernel_cpu: %s: %s", k->name, r->failure);
}

static convgen_status launch_for_program(void *r, const cg_kernel *k, const float *in0, const float *in1, float *out,
                                         void *ws, const float *bias)
{
    return kcpu_launch(r, k, in0, in1, out, ws, bias);
}

cg_kernel_runner kcpu_program_runner(kcpu_runner *r) { return (cg_kernel_runner){launch_for_program, r}; }
