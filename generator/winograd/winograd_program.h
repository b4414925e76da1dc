/* Straight-line code for one transform matrix of a Winograd algorithm (y = M x, M exact
 * rationals): the statements a kernel emits for AT, G or BT. Terms with a zero coefficient
 * vanish, coefficients of +-1 become additions and subtractions, and rows that mirror each other
 * (points +a and -a give rows whose even columns agree and odd columns are negated) share their
 * work: with s = (u + v) / 2 and d = (u - v) / 2, u.x = s.x + d.x and v.x = s.x - d.x, which
 * halves the terms of both. The program is data: the template lays it out, the tests run it. */
#ifndef CG_WINOGRAD_PROGRAM_H
#define CG_WINOGRAD_PROGRAM_H

#include <stdbool.h>

#include "rational.h"
#include "template/tmpl.h"
#include "winograd_transform.h"

#define WINO_MAX_STMTS (3 * WINO_MAX_ALPHA)

/* An operand: input x[i] for i < inputs, else temporary t[i - inputs]. */
typedef struct wino_term {
    int operand;
    cg_q coef; /* never 0 */
} wino_term;

/* t[target] = sum of coef * operand over the terms. */
typedef struct wino_stmt {
    int target, term_count;
    wino_term terms[2 * WINO_MAX_ALPHA];
} wino_stmt;

typedef struct wino_program {
    int inputs, outputs, temps, stmt_count;
    wino_stmt stmts[WINO_MAX_STMTS];
    int output_temp[WINO_MAX_ALPHA]; /* y[i] = t[output_temp[i]] */
    int multiplies, adds;            /* by non-unit constants; additions and subtractions */
} wino_program;

/* The program of y = M x for M rows x cols (row-major in a WINO_MAX_ALPHA-wide array). */
void wino_program_build(const cg_q m[][WINO_MAX_ALPHA], int rows, int cols, wino_program *p);

/* Runs the program exactly: false if a value overflowed. */
bool wino_program_run(const wino_program *p, const cg_q *x, cg_q *y);

/* A coefficient as templates/winograd/winograd.cuh's terms take it: {negative, unit, magnitude}. */
tmpl_value *wino_coef_value(cg_q c);

/* The program as templates/winograd/winograd.cuh's wino_program() lays it out: {stmts: [{name, terms:
 * [{operand, negative, unit, magnitude}]}], outputs: [temporary names]}, inputs named
 * input[i] and temporaries temp_prefix followed by their index. */
tmpl_value *wino_program_value(const wino_program *p, const char *input, const char *temp_prefix);

#endif
