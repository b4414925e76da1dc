/* Max pooling and max-pooling fragments (ZNNi, section V) as the generator sees them: a
 * convgen_pool_desc checked field by field, rank 2 held as rank 3 with a depth of 1, and the
 * output's shape derived in 64-bit arithmetic. */
#ifndef CG_POOL_PROBLEM_H
#define CG_POOL_PROBLEM_H

#include <stdint.h>

#include "convgen.h"
#include "problem_kind.h"

enum {
    CG_POOL_MAX_WINDOW = 8,     /* p per dimension */
    CG_POOL_MAX_ELEMENTS = 64,  /* a window's elements, each an unrolled load */
};

typedef struct cg_pool_problem {
    convgen_pool_mode mode;
    int rank;                 /* as asked: 2 or 3 */
    int64_t n, c;
    int64_t in[3], out[3];    /* depth, height, width (rank 2: depth 1) */
    int window[3];            /* p per dimension (rank 2: 1 along the depth) */
    int fragments;            /* FRAGMENTS and INTERLEAVE: p_1 p_2 p_3 offsets; MAX: 1 */
    int64_t in_volume, out_volume; /* elements of one (n, c) entry's volume, input and output */
    int64_t volumes;          /* output volumes: fragments * n * c (INTERLEAVE: n * c) */
} cg_pool_problem;

/* Checks every field; the message of a failure names it ("window[1] = 9 must be 1..8"). */
convgen_status cg_pool_problem_init(cg_pool_problem *p, const convgen_pool_desc *d);

/* Extents as the caller wrote them: v's last `rank` entries, "95x95x95" (rank 2: "64x48"). */
void cg_pool_dims_text(const cg_pool_problem *p, const int64_t v[3], char *buf, size_t size);

/* "max pooling 2x2x2 of 1 x 80 x 48x48x48 -> 24x24x24" for headers and the CLI. */
void cg_pool_problem_describe(const cg_pool_problem *p, char *buf, size_t size);

/* Pooling as a problem kind ("pool"). */
extern const cg_problem_kind cg_pool_kind;
static inline cg_problem_ref cg_pool_ref(const cg_pool_problem *p) { return (cg_problem_ref){&cg_pool_kind, p}; }

#endif
