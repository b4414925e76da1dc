/* Which registered planner takes which case: the suites that walk the registry (test_compile,
 * test_conv_program, test_headers, test_gpu_conv) try every planner on every layer and pass they
 * hold, and this table says which of those cases a planner refuses and why. A refusal the table
 * does not expect fails the suite, and so does a case it expects refused that a planner now
 * takes: the table stays true, and a new planner is tested wherever it applies from the day it
 * is registered (FFTW's tests/hook.c verifies every plan the planner tries, the same way). */
#ifndef TEST_PLANNER_CASES_H
#define TEST_PLANNER_CASES_H

#include <stdbool.h>

#include "generate.h"

/* A refusal the suites expect: the planners named in `algos` (registered names, separated by
 * spaces) refuse the passes of `passes` (bits 1 << pass; 0: every pass) of the layers where
 * `when` holds (NULL: every layer), with a message that contains `reason`. */
typedef struct planner_refusal {
    const char *algos;
    unsigned passes;
    bool (*when)(const cg_problem *p);
    const char *reason;
} planner_refusal;

/* The first entry that expects planner `algo` to refuse (p, pass) with `message` (NULL: with
 * any message), or NULL: the planner must take the case. */
const planner_refusal *planner_refusal_of(const char *algo, const cg_problem *p, convgen_pass pass,
                                          const char *message);

/* How cg_generate_tuned's status `s` for the planner on (p, pass) squares with the table: true
 * where the planner took the case (the caller goes on to check what it made); false where it
 * refused as an entry expects; anything else fails the running test, naming the case (`what`:
 * the layer) and the planner's message: a refusal no entry expects, a case an entry expects
 * refused that the planner took, a status other than NOT_SUPPORTED. */
bool planner_takes(const cg_planner *planner, const cg_problem *p, convgen_pass pass, convgen_status s,
                   const char *what);

/* Cases and refusals one suite saw, for its closing line: "N cases, N taken, N refused as the
 * table expects". */
typedef struct planner_tally {
    int cases, taken, refused;
} planner_tally;
void planner_tally_add(planner_tally *t, bool taken);

#endif
