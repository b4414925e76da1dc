/* The kinds of kernel op a step program holds (cg_kernel_op, generate.h), one table: for each,
 * how the CPU runs it (program_eval.c, for CI), what it costs (the cost model, the headers'
 * FLOPs and bytes) and a few words of what it computes (the headers' step line). Each kind is
 * one cg_op_class defined in the file of the family that builds it; a new op is that file and
 * one line of op_kinds.c (FFTW's solvers registered by table, dft/conf.c). */
#ifndef CG_OP_KINDS_H
#define CG_OP_KINDS_H

#include "cost_model.h"
#include "generate.h"

/* What a kernel step's op reads and writes: the step's operands after its bindings, and the
 * workspace. */
typedef struct cg_op_buffers {
    const float *in[2];
    float *out;
    char *ws;
} cg_op_buffers;

typedef struct cg_op_class {
    cg_op_kind kind;
    const char *name; /* "pad", "winograd" */
    /* Runs op on the CPU as its kernel would on the GPU, in double precision where it sums or
     * transforms and fp32 where the kernel stores; a failure's message says why. */
    convgen_status (*evaluate)(const cg_kernel_op *op, const cg_op_buffers *b);
    /* Its FLOPs and bytes and the efficiencies the bench measured for its kind. */
    cg_work (*work)(const cg_kernel_op *op, int sm_count);
    /* What it computes, in a few words ("transpose the spectra"). */
    const char *(*describe)(const cg_kernel_op *op);
} cg_op_class;

/* The class of an op kind, NULL for OTHER (a kernel only its source describes). */
const cg_op_class *cg_op_class_of(cg_op_kind kind);

/* An op's work: its class's, or for OTHER a launch and nothing else. */
cg_work cg_op_work(const cg_kernel_op *op, int sm_count);
/* An op's description: its class's, or for OTHER "implicit GEMM" (direct's kernels). */
const char *cg_op_describe(const cg_kernel_op *op);

/* The classes, each in its family's file. */
extern const cg_op_class cg_op_pad, cg_op_clip, cg_op_transpose, cg_op_fused; /* fftconv/op_pad.c, op_transpose.c, op_fused.c */
extern const cg_op_class cg_op_fft;      /* fft/fft_op.c */
extern const cg_op_class cg_op_winograd; /* winograd/winograd_op.c */
extern const cg_op_class cg_op_gemm;     /* gemm.c */

#endif
