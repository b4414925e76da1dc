/* The memory cache of plans: a context's plans of one layer, pass, algorithm, tuning and target
 * share one generated program and its loaded kernels. The first plan of a key generates,
 * compiles (or finds in the kernel caches) and loads them; every later one finds them here and
 * is made in microseconds, rendering nothing and hashing no source. */
#ifndef CG_PLAN_CACHE_H
#define CG_PLAN_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "generate.h"

/* A generated program with its loaded kernels, shared by the plans that hold it. */
typedef struct plan_program {
    cg_generated gen;
    CUfunction fn[CG_MAX_KERNELS];
    convgen_kernel_info info[CG_MAX_KERNELS];
    struct lib_steps *lib;   /* its library calls set up (cuFFT plans, the cuBLAS handle); NULL offline */
    int64_t workspace_bytes; /* gen's buffers and the libraries' work area */
    /* the cache's */
    unsigned char key[CG_KEY_MAX];
    size_t key_len;
    int refs;           /* plans holding it, plus one while cached */
    uint64_t last_use;
    uint64_t generation;  /* cache_mem_generation() when made: a clear since makes it stale */
} plan_program;

/* What decides a program, serialized: the problem (its kind's key), pass, algorithm, tuning
 * (zeros where the spec has none), target and the template folder ($CONVGEN_TEMPLATE_DIR). */
typedef cg_key plan_key;

void plan_key_of(plan_key *k, const cg_spec *spec, const cg_target *target);

/* The cached program of a key, held for the caller (release it), or NULL. */
plan_program *plan_cache_find(convgen_context *ctx, const plan_key *key);
/* Caches a program just made (held by the caller), unless one of its key got there first. */
void plan_cache_insert(convgen_context *ctx, plan_program *p, const plan_key *key);
/* Lets go of a program; the last holder frees it. */
void plan_program_release(convgen_context *ctx, plan_program *p);
/* The most programs no plan holds the context keeps (default 64), and how many it has now. */
void plan_cache_limit(convgen_context *ctx, int idle);
int plan_cache_count(convgen_context *ctx);
/* Drops every cached program (the context is going away). */
void plan_cache_clear(convgen_context *ctx);

#endif
