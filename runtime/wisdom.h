/* Wisdom: AUTO's choices, kept in the process and in text files (convgen.h says what the public
 * calls do; this is what the tuner uses). Thread-safe. */
#ifndef CG_WISDOM_H
#define CG_WISDOM_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "generate.h"
#include "net/net.h"
#include "problem.h"

/* Where a choice was measured, for which layer and pass, under which limits. */
typedef struct wisdom_key {
    char gpu[256];     /* the device's name; "" matches any GPU of the architecture (offline) */
    char arch[16];
    char version[16];  /* convgen's */
    cg_problem layer;
    convgen_pass pass;
    uint64_t workspace_limit;
    int tf32;
} wisdom_key;

/* What won: an algorithm and the variant of it, in its planner's words. */
typedef struct wisdom_entry {
    wisdom_key key;
    int effort;             /* convgen_effort it was tuned at */
    convgen_algo algo;
    char variant[CG_VARIANT_MAX]; /* the knobs it fixes: "m=6x6 gemm=cublas", "" for none (cg_variant_print) */
    double ms;              /* its median time then */
    uint64_t candidates;    /* what it won among (cg_candidates_hash at its effort); 0: not known
                               (a file of format 3 or older): trusted as it is */
    bool provisional;       /* the kernel set's, or the cost model's (effort estimate): yields to
                               any other entry and is never exported */
} wisdom_entry;

/* A device's name as a key holds it: the file quotes it, so a quote or newline becomes '_'. */
void wisdom_gpu_name(char *dst, size_t size, const char *name);

/* The entry for `key` tuned at `effort` or more (EXHAUSTIVE > MEASURE), if any, and not stale: one
 * whose candidates this convgen lists otherwise is as good as none (and yields to any other). */
bool wisdom_lookup(const wisdom_key *key, int effort, wisdom_entry *out);

/* Adds an entry, replacing one of the same key tuned at no more effort, or a stale one (which
 * replaces none). */
convgen_status wisdom_add(const wisdom_entry *e);

/* A network's patch, measured (convgen_net_create at effort measure or exhaustive): where, for
 * which network and volume, under which limits. */
typedef struct wisdom_net_key {
    char gpu[256], arch[16], version[16];
    char net[CG_NET_TEXT_MAX];    /* cg_net_text */
    int64_t volume[3];            /* depth first (rank 2: a depth of 0); 0: not given */
    uint64_t memory_limit, host_limit; /* bytes, as the options resolved them; matched within 1/32 */
    int mode;                     /* the convgen_net_mode asked */
} wisdom_net_key;

typedef struct wisdom_net_entry {
    wisdom_net_key key;
    int effort;                   /* MEASURE or EXHAUSTIVE */
    int64_t fragment[3];          /* the winner's final fragments, depth first */
    int mode;                     /* where it ran: DEVICE or HOST */
    double seconds;               /* its measured seconds for the volume (no volume: a million output voxels) */
} wisdom_net_entry;

/* The entry for `key` measured at `effort` or more, if any; adds one, replacing that of its key
 * (the limits within 1/32) measured with no more effort. */
bool wisdom_net_lookup(const wisdom_net_key *key, int effort, wisdom_net_entry *out);
convgen_status wisdom_net_add(const wisdom_net_entry *e);

/* Whether `text` is wisdom, parsed whole (a failure names `origin`); nothing is imported. */
convgen_status wisdom_check_text(const char *text, const char *origin);
/* Imports `text` as provisional entries (a kernel set's: they fill only keys nothing else holds
 * and are never exported), all or, if it is damaged, none. */
convgen_status wisdom_import_provisional(const char *text, const char *origin);

/* $CONVGEN_WISDOM: imported once per process (a damaged file is reported and ignored), and
 * rewritten after new choices (merged with the file's entries then). */
void wisdom_load_env(void);
void wisdom_save_env(void);

#endif
