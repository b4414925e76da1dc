/* From a problem to CUDA source: the registry of algorithm planners and what they produce.
 *
 * Each algorithm is one planner module (direct.c, later fft.c, winograd.c, ...) with the same
 * small interface: is the problem applicable, and generate its kernels (choose the spec, size
 * the workspace, render). Nothing outside this registry switches on an algorithm. */
#ifndef CG_GENERATE_H
#define CG_GENERATE_H

#include <stdint.h>

#include "convgen.h"
#include "problem.h"

#define CG_GENERATOR_VERSION CONVGEN_VERSION_STRING
#define CG_MAX_KERNELS 4
#define CG_KERNEL_NAME_MAX 64

/* What the generator may know of the target without a GPU: tuning inputs only. */
typedef struct cg_target {
    int sm_count; /* multiprocessors, to size split reductions; 0 means 132 (H100 SXM) */
    int shared_per_block; /* bytes of shared memory a block may opt in to; 0: the H100's 227 KiB */
    int shared_per_sm;    /* bytes of shared memory per multiprocessor; 0: the H100's 228 KiB */
    int l2_bytes;         /* bytes of L2 cache; 0: the H100's 50 MiB */
} cg_target;

/* The shared-memory limits of an architecture ("sm_80"), for contexts without a device;
 * false for one this table does not know (the caller keeps the H100's). */
bool cg_target_shared_limits(const char *arch, int *per_block, int *per_sm);

/* One emitted kernel: its source and how to launch it. Every convgen kernel takes the same
 * four pointers (in0, in1, out, workspace) in the order of convgen_execute. */
typedef struct cg_kernel {
    char name[CG_KERNEL_NAME_MAX];
    char *source;
    unsigned grid[3], block[3];
    unsigned shared_bytes; /* dynamic shared memory per block (0 for most kernels) */
} cg_kernel;

/* The kernels of one layer and pass, run in order on one stream. */
typedef struct cg_generated {
    convgen_algo algo;
    convgen_pass pass;
    cg_problem problem;
    int kernel_count;
    cg_kernel kernels[CG_MAX_KERNELS];
    int64_t workspace_bytes;
} cg_generated;

typedef struct cg_planner {
    convgen_algo algo;
    const char *name;
    /* CONVGEN_SUCCESS, or CONVGEN_ERROR_NOT_SUPPORTED with a message saying why. */
    convgen_status (*applicable)(const cg_problem *p, convgen_pass pass);
    convgen_status (*generate)(const cg_problem *p, convgen_pass pass, const cg_target *t,
                               cg_generated *out);
} cg_planner;

/* The registered planners, in registry order: i from 0 to cg_planner_count() - 1. */
int cg_planner_count(void);
const cg_planner *cg_planner_at(int i);

/* The planner of an algorithm, or NULL; by name too ("direct"). */
const cg_planner *cg_planner_of(convgen_algo algo);
const cg_planner *cg_planner_named(const char *name);

/* Generates the kernels of a validated problem. `target` may be NULL (defaults). */
convgen_status cg_generate(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                           const cg_target *target, cg_generated *out);
void cg_generated_free(cg_generated *g);

/* The layer as a line of bench/layers.txt plus what that format cannot say, for headers:
 * "128 64 64 64x64 9x9 0 1" or "... pad 1+2x0+1 dilation 2x2 convolution". */
void cg_problem_describe(const cg_problem *p, char *buf, size_t size);

#endif
