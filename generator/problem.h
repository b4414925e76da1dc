/* The convolution problem as the generator sees it: a validated convgen_conv_desc with the
 * defaults filled in and the output sizes computed (cuDNN's rule). */
#ifndef CG_PROBLEM_H
#define CG_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "problem_kind.h"

typedef struct cg_problem {
    int rank;
    int64_t n, c, k;
    int64_t in[CONVGEN_MAX_RANK], kernel[CONVGEN_MAX_RANK], out[CONVGEN_MAX_RANK];
    int64_t pad_before[CONVGEN_MAX_RANK], pad_after[CONVGEN_MAX_RANK];
    int64_t stride[CONVGEN_MAX_RANK], dilation[CONVGEN_MAX_RANK];
    bool flip; /* convolution (kernel flipped) rather than cross-correlation */
    unsigned epilogue; /* CG_EPILOGUE_* bits: what fprop's store adds to y */
} cg_problem;

/* convgen_conv_desc.epilogue's bits: the bias of y's channel, then ReLU. */
enum { CG_EPILOGUE_BIAS = CONVGEN_EPILOGUE_BIAS, CG_EPILOGUE_RELU = CONVGEN_EPILOGUE_RELU,
       CG_EPILOGUE_ALL = CG_EPILOGUE_BIAS | CG_EPILOGUE_RELU };

/* CONVGEN_SUCCESS, or INVALID_VALUE naming the epilogue where the pass is not fprop. */
convgen_status cg_epilogue_check(const cg_problem *p, convgen_pass pass);

/* The convolution layer as a problem kind ("conv"): its hash writes rank, n, c, k, flip and
 * every spatial field up to rank (out too); its describe is cg_problem_describe. */
extern const cg_problem_kind cg_conv_kind;
static inline cg_problem_ref cg_conv_ref(const cg_problem *p) { return (cg_problem_ref){&cg_conv_kind, p}; }

/* Validates every field with 64-bit overflow-checked arithmetic. On failure returns
 * CONVGEN_ERROR_INVALID_VALUE and convgen_last_error() names the field and value
 * ("dilation[1] = -2 must be >= 1 (0 means 1)"). Entries past `rank` are ignored. */
convgen_status cg_problem_init(cg_problem *p, const convgen_conv_desc *desc);

/* Element counts of the tensors: x [n][c][in], w [k][c][kernel], y [n][k][out]. They fit in
 * int64 once cg_problem_init succeeded. */
int64_t cg_problem_x_elems(const cg_problem *p);
int64_t cg_problem_w_elems(const cg_problem *p);
int64_t cg_problem_y_elems(const cg_problem *p);
/* Products of the spatial sizes. */
int64_t cg_problem_in_pixels(const cg_problem *p);
int64_t cg_problem_kernel_pixels(const cg_problem *p);
int64_t cg_problem_out_pixels(const cg_problem *p);

/* Element counts of a pass's operands, in the order of convgen_execute (in0, in1, out). */
void cg_problem_operand_elems(const cg_problem *p, convgen_pass pass, int64_t elems[3]);

/* Multiply-adds per output element of a pass, as the direct reference computes it: c or k
 * times the kernel's pixels (fprop, bprop), n times the output's (accgrad). */
double cg_problem_reduction_length(const cg_problem *p, convgen_pass pass);

/* Time-domain FLOPs of one pass: 2 * n * c * k * prod(kernel) * prod(out). */
double cg_problem_flops(const cg_problem *p);

/* Sizes joined by 'x', outermost first: "64x64". */
void cg_dims_text(const int64_t *v, int rank, char *buf, size_t size);

/* The layer as a line of bench/layers.txt plus what that format cannot say, as the CLI's
 * options, for headers: "128 64 64 64x64 9x9 0 1" or "... --stride 2x1 --dilation 2x2
 * --convolution --bias --relu". */
void cg_problem_describe(const cg_problem *p, char *buf, size_t size);

#endif
