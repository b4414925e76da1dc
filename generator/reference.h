/* The CPU reference: convolution in float64, the three passes, rank 1-3, with padding,
 * stride, dilation and the convolution/cross-correlation mode. Naive loops on purpose:
 * it is the definition every kernel is checked against, so it must be obviously right.
 *
 *   fprop:   y[n][k][o]  = sum_{c,f} x[n][c][o*stride - pad_before + F(f)*dilation] * w[k][c][f]
 *   bprop:   dx[n][c][i] = sum_{k,f,o : o*stride - pad_before + F(f)*dilation = i} dy[n][k][o] * w[k][c][f]
 *   accgrad: dw[k][c][f] = sum_{n,o} dy[n][k][o] * x[n][c][o*stride - pad_before + F(f)*dilation]
 * per spatial dimension, with F(f) = f for cross-correlation and kernel-1-f for convolution;
 * taps that fall outside the input read zero. */
#ifndef CG_REFERENCE_H
#define CG_REFERENCE_H

#include <stdint.h>

#include "problem.h"

/* Operands as in convgen_execute (in0, in1); writes every element of `out`
 * (cg_problem_operand_elems(p, pass, ...)[2] doubles). */
void ref_conv(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1,
              double *out);

/* One element of the output (flat index in the output tensor's layout): for checking large
 * layers on a sample of points. */
double ref_conv_at(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1,
                   int64_t index);

/* The layer's epilogue (p->epilogue: bias, then ReLU) on v, fprop's output at flat index
 * `index`; bias holds k floats (unread without CG_EPILOGUE_BIAS). ref_conv and ref_conv_at
 * leave it out; ref_apply_epilogue applies it to a whole fprop output. */
double ref_epilogue(const cg_problem *p, const float *bias, int64_t index, double v);
void ref_apply_epilogue(const cg_problem *p, const float *bias, double *y);

/* ||got - ref|| / ||ref|| over n elements (0 if both are zero; +inf if any got is NaN). */
double ref_relative_error(const float *got, const double *ref, int64_t n);

/* got (`elems` output elements) against the reference at `checked` of them: all in order where
 * checked is elems, else random ones drawn from *state. Returns ||got - ref|| / ||ref|| over them
 * (NaN: infinite) and raises *max_abs to the largest |got - ref| (NaN: infinite). fprop's
 * reference includes the layer's epilogue with `bias`. */
double ref_compare(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *bias,
                   const float *got, int64_t elems, int64_t checked, uint64_t *state, double *max_abs);

/* Reproducible pseudo-random numbers (xorshift64*) from a state, and floats uniform in [-1, 1)
 * from them: the checks' and the tuner's inputs. */
uint64_t cg_next_random(uint64_t *state);
void cg_fill_random(float *v, int64_t n, uint64_t *state);

/* ||got - ref|| / ||ref|| over `samples` random output points of the float64 reference (NaN
 * counts as infinite error): a cheap check of a whole output. */
double cg_sampled_error(const cg_problem *p, convgen_pass pass, const float *in0, const float *in1, const float *bias,
                        const float *got, int64_t samples, uint64_t seed);

#endif
