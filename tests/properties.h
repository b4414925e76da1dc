/* Properties of an operator that need no reference (FFTW's libbench2/verify-lib.c checks
 * linearity and shifts the same way instead of trusting a reference): linearity in an operand,
 * and equivariance under a shift of the image along one dimension. Written over a generic
 * operator, out = run(in0, in1) on tensors [outer][spatial...], so that a convolution's step
 * program and, later, pooling (one operand: no in1) use the same checks.
 *
 * What they catch that a comparison with the float64 reference may not: a mistake the
 * reference shares (it is the same reading of pad, stride, dilation and flip that the test
 * trusts); an output that depends on the data other than linearly (an accumulation into a
 * buffer nobody zeroed, a constant written into the padding, a sub-batch that reads its
 * neighbour's data); and an error at a few positions (a tile seam, a window's last element, a
 * placement's limit off by one), which the shift moves against the layer's fixed geometry and
 * which a norm-wise relative error over the whole output can dilute below its bound. They miss
 * what is linear and position-independent, such as a wrong overall scale: the reference's
 * comparison is for that. */
#ifndef TEST_PROPERTIES_H
#define TEST_PROPERTIES_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"

/* A tensor [outer][size[0]]...[size[rank - 1]], row-major. */
typedef struct prop_tensor {
    int rank;
    int64_t outer, size[CONVGEN_MAX_RANK];
} prop_tensor;

/* An operator under test. in[1].outer == 0: it has no second operand (run gets NULL). */
typedef struct prop_op {
    char name[160];   /* for messages: the planner, layer and pass */
    prop_tensor in[2], out;
    double terms;     /* the products summed into one output element, for the tolerance */
    convgen_status (*run)(const void *user, const float *in0, const float *in1, float *out);
    const void *user;
} prop_op;

/* One dimension of a sliding window: output o reads input positions o * stride - pad + f *
 * dilation for taps f < kernel, of an input of `in` positions (outside: zeros) into `out`. */
typedef struct prop_window {
    int64_t in, out, kernel, stride, pad, dilation;
} prop_window;

/* Whether output o of the window reads any input position in [lo, hi). */
bool prop_window_reads(const prop_window *w, int64_t o, int64_t lo, int64_t hi);

/* Linearity in operand `operand` (0 or 1), the other one fixed: out(a x1 + b x2) = a out(x1) +
 * b out(x2) for every element, with a + b != 1 so that an affine term shows too. Returns the
 * worst difference relative to the tolerance's scale. */
double prop_check_linear(const prop_op *op, int operand, uint64_t seed);

/* A shift along dimension `dim` of the spatial sizes: operand j's positions move up by shift[j]
 * (0: not shifted), the first shift[j] becoming zeros and the last shift[j] dropping out.
 * The statement: the output moves up by out_shift (0: stays) at every element whose position
 * i >= out_shift along `dim` satisfies compared(window, i), i.e. whose inputs did not include a
 * dropped element (NULL: every element, which holds where `zero_dropped` zeroes the elements
 * that drop before the first run). Fails unless some elements compared; *compared_count and
 * *excluded count them. Returns the worst difference relative to the tolerance's scale. */
typedef bool (*prop_compared_fn)(const prop_window *w, int64_t i);
double prop_check_shift(const prop_op *op, int dim, const int64_t shift[2], int64_t out_shift,
                        prop_compared_fn compared, const prop_window *window, bool zero_dropped,
                        uint64_t seed, int64_t *compared_count, int64_t *excluded);

/* The tolerance of both checks, relative to the root mean square of the compared outputs:
 * PROP_TOLERANCE * sqrt(terms). */
#define PROP_TOLERANCE 1e-5

#endif
