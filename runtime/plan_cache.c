/* The plans' memory cache (plan_cache.h): per context, behind the context's lock, an array of
 * slots (a key's hash, the program) that a lookup scans without touching the programs, which
 * are large and scattered; at most MAX_IDLE programs that no plan holds (the least recently
 * used go first), so tuning a hundred candidates does not keep a hundred programs. */
#include "plan_cache.h"

#include "cache.h"
#include "lib_steps.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAX_IDLE 64 /* unless plan_cache_limit says otherwise */

static void put_target(plan_key *k, const cg_target *t)
{
    const int64_t v[5] = {t->sm_count, t->shared_per_block, t->shared_per_sm, t->l2_bytes, t->max_cluster};
    cg_key_put_dims(k, v, 5);
    cg_key_put(k, t->arch, strlen(t->arch) + 1);
}

/* Templates from $CONVGEN_TEMPLATE_DIR make other programs than the embedded ones. */
static void put_template_dir(plan_key *k)
{
    const char *dir = getenv("CONVGEN_TEMPLATE_DIR");
    if (dir && *dir)
        cg_key_put(k, dir, strlen(dir) + 1);
}

void plan_key_of(plan_key *k, const cg_spec *spec, const cg_target *target)
{
    static const cg_tuning chosen; /* all zeros: what a spec without tuning leaves to its planner */
    const cg_tuning *t = spec->tune ? spec->tune : &chosen;
    k->len = 0;
    cg_problem_key(spec->problem, k);
    const int64_t head[2] = {spec->pass, spec->algo};
    cg_key_put_dims(k, head, 2);
    cg_key_put_dims(k, t->fourier_size, CONVGEN_MAX_RANK);
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        cg_key_put_i64(k, t->winograd_m[d]);
    const int64_t tail[4] = {t->gemm, t->weights, t->tf32, t->workspace_limit};
    cg_key_put_dims(k, tail, 4);
    put_target(k, target);
    put_template_dir(k);
}

static bool same(const plan_program *p, const plan_key *k)
{
    return p->key_len == k->len && memcmp(p->key, k->bytes, k->len) == 0;
}

static uint64_t hash_of(const plan_key *k) { return XXH3_64bits(k->bytes, k->len); }

static void free_program(plan_program *p)
{
    lib_steps_destroy(p->lib); /* no CUDA call: its cuFFT plans belong to the context */
    cg_generated_free(&p->gen); /* its modules too */
    free(p);
}

/* The slot of a key, or -1 (the caller holds the lock). */
static int slot_of(const convgen_context *ctx, const plan_key *key, uint64_t hash)
{
    for (int i = 0; i < ctx->slot_count; ++i)
        if (ctx->slots[i].hash == hash && same(ctx->slots[i].program, key))
            return i;
    return -1;
}

static void remove_slot(convgen_context *ctx, int i) { ctx->slots[i] = ctx->slots[--ctx->slot_count]; }

plan_program *plan_cache_find(convgen_context *ctx, const plan_key *key)
{
    if (!cg_key_fits(key))
        return NULL;
    uint64_t generation = cache_mem_generation(), hash = hash_of(key);
    plan_program *found = NULL, *stale = NULL;
    pthread_mutex_lock(&ctx->lock);
    int i = slot_of(ctx, key, hash);
    if (i >= 0 && ctx->slots[i].program->generation != generation) { /* the kernel cache was cleared since */
        plan_program *p = ctx->slots[i].program;
        remove_slot(ctx, i);
        stale = --p->refs == 0 ? p : NULL;
    } else if (i >= 0) {
        found = ctx->slots[i].program;
        ++found->refs;
        found->last_use = ++ctx->program_clock;
    }
    pthread_mutex_unlock(&ctx->lock);
    if (stale)
        free_program(stale);
    return found;
}

/* Removes the least recently used program no plan holds, if more than the limit are idle; the
 * caller frees it outside the lock. */
static plan_program *evict_one(convgen_context *ctx)
{
    int idle = 0, oldest = -1;
    for (int i = 0; i < ctx->slot_count; ++i) {
        const plan_program *p = ctx->slots[i].program;
        if (p->refs == 1) {
            ++idle;
            if (oldest < 0 || p->last_use < ctx->slots[oldest].program->last_use)
                oldest = i;
        }
    }
    if (idle <= (ctx->idle_programs > 0 ? ctx->idle_programs : MAX_IDLE))
        return NULL;
    plan_program *p = ctx->slots[oldest].program;
    remove_slot(ctx, oldest);
    return p;
}

void plan_cache_insert(convgen_context *ctx, plan_program *p, const plan_key *key)
{
    if (!cg_key_fits(key))
        return;
    memcpy(p->key, key->bytes, key->len);
    p->key_len = key->len;
    p->generation = cache_mem_generation();
    uint64_t hash = hash_of(key);
    plan_program *evicted = NULL;
    pthread_mutex_lock(&ctx->lock);
    if (slot_of(ctx, key, hash) < 0) {
        if (ctx->slot_count == ctx->slot_cap) {
            int cap = ctx->slot_cap ? 2 * ctx->slot_cap : 64;
            plan_slot *grown = realloc(ctx->slots, sizeof *grown * (size_t)cap);
            if (grown)
                ctx->slots = grown, ctx->slot_cap = cap;
        }
        if (ctx->slot_count < ctx->slot_cap) { /* else, out of memory: the program is just not cached */
            ++p->refs;
            p->last_use = ++ctx->program_clock;
            ctx->slots[ctx->slot_count++] = (plan_slot){hash, p};
            evicted = evict_one(ctx);
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    if (evicted)
        free_program(evicted);
}

void plan_program_release(convgen_context *ctx, plan_program *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&ctx->lock);
    int refs = --p->refs;
    /* One reference left is the cache's (a program not cached has one holder): idle now, so the
     * idle ones may be too many. */
    plan_program *evicted = refs == 1 ? evict_one(ctx) : NULL;
    pthread_mutex_unlock(&ctx->lock);
    if (evicted)
        free_program(evicted);
    if (refs == 0)
        free_program(p);
}

void plan_cache_limit(convgen_context *ctx, int idle)
{
    pthread_mutex_lock(&ctx->lock);
    ctx->idle_programs = idle;
    pthread_mutex_unlock(&ctx->lock);
}

int plan_cache_count(convgen_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    int n = ctx->slot_count;
    pthread_mutex_unlock(&ctx->lock);
    return n;
}

void plan_cache_clear(convgen_context *ctx)
{
    pthread_mutex_lock(&ctx->lock);
    plan_slot *slots = ctx->slots;
    int count = ctx->slot_count;
    ctx->slots = NULL, ctx->slot_count = ctx->slot_cap = 0;
    pthread_mutex_unlock(&ctx->lock);
    for (int i = 0; i < count; ++i)
        if (--slots[i].program->refs == 0) /* a plan still alive keeps its program; destroying a
                                              context under live plans is an error (convgen.h) */
            free_program(slots[i].program);
    free(slots);
}
