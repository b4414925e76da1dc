/* Problem kinds: what the planner, the plan cache, wisdom and the headers ask of a problem,
 * whatever it is (FFTW 3's problem_adt, kernel/ifftw.h). A kind names itself, writes the bytes
 * that decide its problems' programs, and prints a problem for people. A problem travels as a
 * cg_problem_ref: its kind and itself.
 *
 * The kinds now: the convolution layer (cg_conv_kind, problem.h) and the batched FFT
 * (cg_fft_kind, fft_problem.h). A new one (pooling, a network) is its problem's file with its
 * kind, and one line in the registry of kinds (generate.c). */
#ifndef CG_PROBLEM_KIND_H
#define CG_PROBLEM_KIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CG_KEY_MAX 1024

/* The bytes that decide a program, written field by field. Past its room `len` keeps counting:
 * a key too long to hold is unusable (cg_key_fits), never cut short into another's. */
typedef struct cg_key {
    unsigned char bytes[CG_KEY_MAX];
    size_t len;
} cg_key;

static inline void cg_key_put(cg_key *k, const void *v, size_t n)
{
    if (k->len + n <= sizeof k->bytes)
        memcpy(k->bytes + k->len, v, n);
    k->len += n;
}

static inline void cg_key_put_i64(cg_key *k, int64_t v) { cg_key_put(k, &v, sizeof v); }

static inline void cg_key_put_dims(cg_key *k, const int64_t *v, int n)
{
    for (int i = 0; i < n; ++i)
        cg_key_put_i64(k, v[i]);
}

static inline bool cg_key_fits(const cg_key *k) { return k->len <= sizeof k->bytes; }

typedef struct cg_problem_kind {
    const char *name; /* "conv", "fft": unique, the first bytes of every key of the kind */
    /* Appends every field that decides a program of the problem, derived ones too, in a
     * fixed order: two problems of the kind write the same bytes exactly when they are equal. */
    void (*hash)(const void *problem, cg_key *key);
    /* The problem in one line for people: the headers' "layer:", messages. */
    void (*describe)(const void *problem, char *buf, size_t size);
} cg_problem_kind;

typedef struct cg_problem_ref {
    const cg_problem_kind *kind;
    const void *problem;
} cg_problem_ref;

/* Appends the kind's name (with its NUL) then the problem's hash: problems of two kinds never
 * write the same bytes. */
static inline void cg_problem_key(cg_problem_ref p, cg_key *key)
{
    cg_key_put(key, p.kind->name, strlen(p.kind->name) + 1);
    p.kind->hash(p.problem, key);
}

/* Whether two problems are the same one: the same kind and the same hash bytes. */
static inline bool cg_problem_same(cg_problem_ref a, cg_problem_ref b)
{
    cg_key ka, kb;
    ka.len = kb.len = 0;
    cg_problem_key(a, &ka);
    cg_problem_key(b, &kb);
    return ka.len == kb.len && cg_key_fits(&ka) && memcmp(ka.bytes, kb.bytes, ka.len) == 0;
}

#endif
