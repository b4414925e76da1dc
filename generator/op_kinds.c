/* The op kinds' table (op_kinds.h): one line per kind, its class in its family's file. */
#include "op_kinds.h"

static const cg_op_class *const classes[CG_OP_KINDS] = {
    [CG_OP_PAD] = &cg_op_pad,
    [CG_OP_CLIP] = &cg_op_clip,
    [CG_OP_TRANSPOSE] = &cg_op_transpose,
    [CG_OP_FFT] = &cg_op_fft,
    [CG_OP_FUSED] = &cg_op_fused,
    [CG_OP_WINOGRAD] = &cg_op_winograd,
    [CG_OP_GEMM] = &cg_op_gemm,
};

const cg_op_class *cg_op_class_of(cg_op_kind kind)
{
    return kind > CG_OP_OTHER && kind < CG_OP_KINDS ? classes[kind] : NULL;
}

cg_work cg_op_work(const cg_kernel_op *op, int sm_count)
{
    const cg_op_class *c = cg_op_class_of(op->kind);
    return c ? c->work(op, sm_count) : (cg_work){.efficiency = 1, .bandwidth_efficiency = CG_BANDWIDTH_EFFICIENCY};
}

const char *cg_op_describe(const cg_kernel_op *op)
{
    const cg_op_class *c = cg_op_class_of(op->kind);
    return c ? c->describe(op) : "implicit GEMM";
}
