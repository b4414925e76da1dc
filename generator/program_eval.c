/* A plan's step program on the CPU: cg_program_describe lists it for readers, and
 * cg_program_evaluate runs it, for CI (no GPU there). The evaluation checks
 * what the planner decided (placements, buffer offsets, GEMM parameters, phases and chunks)
 * against the CPU reference; the kernels' CUDA itself is checked on the GPU. A kernel step runs
 * as its op kind says (op_kinds.h); the library steps are here. The transforms are separable
 * naive DFTs in double precision (cpu_dft.h), written in fp32 like cuFFT's. */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_dft.h"
#include "gemm.h"
#include "generate.h"
#include "op_kinds.h"
#include "reference.h"
#include "util.h"

/* cuFFT's R2C (dense images in, half spectra out) or C2R (the reverse, unnormalized). */
static bool run_fft(const cg_fft_step *f, cg_op_buffers *m)
{
    int64_t points = 1, half[CONVGEN_MAX_RANK], bins = 1;
    for (int d = 0; d < f->rank; ++d) {
        points *= f->n[d];
        half[d] = d == f->rank - 1 ? f->n[d] / 2 + 1 : f->n[d];
        bins *= half[d];
    }
    const float *real_in = f->real_operand >= 0 ? m->in[f->real_operand] : (const float *)(m->ws + f->real_offset);
    float *real_out = (float *)(m->ws + f->real_offset);
    float complex *spectra = (float complex *)(m->ws + f->spectrum_offset);
    double complex *a = malloc(sizeof *a * (size_t)points);
    bool ok = a != NULL;
    for (int64_t g = 0; ok && g < f->batch; ++g) {
        int64_t idx[CONVGEN_MAX_RANK] = {0};
        if (!f->inverse) {
            for (int64_t i = 0; i < points; ++i)
                a[i] = real_in[g * points + i];
            for (int d = 0; d < f->rank; ++d)
                ok &= cg_dft_axis(a, f->n, f->rank, d, -1);
            do
                spectra[g * bins + cg_index_flat(idx, half, f->rank)] = (float complex)a[cg_index_flat(idx, f->n, f->rank)];
            while (cg_index_next(idx, half, f->rank));
            continue;
        }
        /* The full spectrum from the half: X[k] = conj(X[-k]) for the missing bins. */
        do {
            int64_t mirror[CONVGEN_MAX_RANK];
            bool stored;
            cg_dft_hermitian_source(idx, f->n, half, f->rank, mirror, &stored);
            double complex v = spectra[g * bins + cg_index_flat(mirror, half, f->rank)];
            a[cg_index_flat(idx, f->n, f->rank)] = stored ? v : conj(v);
        } while (cg_index_next(idx, f->n, f->rank));
        for (int d = 0; d < f->rank; ++d)
            ok &= cg_dft_axis(a, f->n, f->rank, d, +1);
        for (int64_t i = 0; i < points; ++i)
            real_out[g * points + i] = (float)creal(a[i]);
    }
    free(a);
    return ok;
}

/* A kernel step's buffers after its bindings. */
static cg_op_buffers bind(const cg_step *st, const cg_op_buffers *m)
{
    char *own[4] = {(char *)m->in[0], (char *)m->in[1], (char *)m->out, m->ws}, *ptr[4];
    for (int a = 0; a < 4; ++a) {
        const cg_arg *arg = &st->args[a];
        ptr[a] = arg->base == CG_ARG_SAME ? own[a] : arg->base == CG_ARG_NULL ? NULL : own[arg->base - CG_ARG_IN0] + arg->offset;
    }
    return (cg_op_buffers){.in = {(const float *)ptr[0], (const float *)ptr[1]}, .out = (float *)ptr[2], .ws = ptr[3]};
}

/* A kernel step by its op kind; a failure's message names the step. */
static convgen_status run_kernel(const cg_generated *g, int i, const cg_op_buffers *m)
{
    const cg_step *st = &g->steps[i];
    const cg_op_class *c = cg_op_class_of(st->op.kind);
    if (!c)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "step %d: kernel %s has no op to evaluate on the CPU", i,
                       g->kernels[st->kernel].name);
    cg_op_buffers b = bind(st, m);
    convgen_status s = c->evaluate(&st->op, &b);
    if (s == CONVGEN_SUCCESS)
        return s;
    char why[512];
    snprintf(why, sizeof why, "%s", convgen_last_error());
    return cg_fail(s, "step %d: %s", i, why);
}

/* The layer's epilogue on what a step that applies it wrote: the y of the chunk at m->out. */
static void run_epilogue(const cg_generated *g, const float *bias, const cg_op_buffers *m)
{
    const cg_problem *p = &g->problem;
    int64_t elems = g->chunks > 1 && g->chunk_elems[2] ? g->chunk_elems[2] : cg_problem_y_elems(p);
    for (int64_t i = 0; i < elems; ++i)
        m->out[i] = (float)ref_epilogue(p, bias, i, m->out[i]);
}

/* Kernel step i by `runner`, on the buffers its bindings give. */
static convgen_status run_kernel_itself(const cg_generated *g, int i, const cg_op_buffers *m, const float *bias,
                                        const cg_kernel_runner *runner)
{
    const cg_step *st = &g->steps[i];
    cg_op_buffers b = bind(st, m);
    convgen_status s = runner->run(runner->user, &g->kernels[st->kernel], b.in[0], b.in[1], b.out, b.ws, bias);
    if (s == CONVGEN_SUCCESS)
        return s;
    char why[1024];
    snprintf(why, sizeof why, "%s", convgen_last_error());
    return cg_fail(s, "step %d: %s", i, why);
}

static convgen_status run_phase(const cg_generated *g, int phase, bool later_chunk, const float *bias,
                                cg_op_buffers *m, const cg_kernel_runner *runner)
{
    for (int i = 0; i < g->step_count; ++i) {
        const cg_step *st = &g->steps[i];
        convgen_status s = CONVGEN_SUCCESS;
        if (st->phase != phase)
            continue;
        if (st->kind == CG_STEP_FFT && !run_fft(&st->fft, m))
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a DFT on the CPU");
        else if (st->kind == CG_STEP_GEMM)
            cg_gemm_evaluate(&st->gemm, m->ws, st->gemm.accumulate && later_chunk);
        else if (st->kind == CG_STEP_KERNEL && runner)
            s = run_kernel_itself(g, i, m, bias, runner);
        else if (st->kind == CG_STEP_KERNEL)
            s = run_kernel(g, i, m);
        if (s != CONVGEN_SUCCESS)
            return s;
        if (st->kind == CG_STEP_KERNEL && g->kernels[st->kernel].epilogue && !runner)
            run_epilogue(g, bias, m);
    }
    return CONVGEN_SUCCESS;
}

/* Phases 1 (per chunk) and 2 on a workspace that phase 0 has filled. in1 may be NULL where no
 * step of those phases reads it. */
static convgen_status run_chunks(const cg_generated *g, const float *in0, const float *in1, const float *bias,
                                 float *out, char *ws, const cg_kernel_runner *runner)
{
    convgen_status s = CONVGEN_SUCCESS;
    for (int64_t c = 0; c < g->chunks && s == CONVGEN_SUCCESS; ++c) {
        cg_op_buffers chunk = {.in = {in0 + c * g->chunk_elems[0], in1 ? in1 + c * g->chunk_elems[1] : NULL},
                         .out = out + c * g->chunk_elems[2], .ws = ws};
        s = run_phase(g, 1, c > 0, bias, &chunk, runner);
    }
    cg_op_buffers m = {.in = {in0, in1}, .out = out, .ws = ws};
    return s == CONVGEN_SUCCESS ? run_phase(g, 2, false, bias, &m, runner) : s;
}

/* A workspace poisoned with NaN, so that a buffer read before it is written shows. */
static char *poisoned_workspace(const cg_generated *g)
{
    char *ws = malloc((size_t)g->workspace_bytes + 16);
    if (ws)
        memset(ws, 0xFF, (size_t)g->workspace_bytes + 16);
    else
        cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a %lld-byte workspace", (long long)g->workspace_bytes);
    return ws;
}

convgen_status cg_program_run(const cg_generated *g, const float *in0, const float *in1, const float *bias, float *out,
                              const cg_kernel_runner *runner)
{
    if (g->step_count == 0 && !runner)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the plan has no step program");
    cg_op_buffers m = {.in = {in0, in1}, .out = out, .ws = poisoned_workspace(g)};
    if (!m.ws)
        return CONVGEN_ERROR_OUT_OF_MEMORY;
    convgen_status s = CONVGEN_SUCCESS;
    if (g->step_count == 0) /* kernels only: each on the four operands, in order */
        for (int i = 0; i < g->kernel_count && s == CONVGEN_SUCCESS; ++i)
            s = runner->run(runner->user, &g->kernels[i], in0, in1, out, m.ws, bias);
    else if ((s = run_phase(g, 0, false, bias, &m, runner)) == CONVGEN_SUCCESS)
        s = run_chunks(g, in0, in1, bias, out, m.ws, runner);
    free(m.ws);
    return s;
}

convgen_status cg_program_evaluate(const cg_generated *g, const float *in0, const float *in1, const float *bias,
                                   float *out)
{
    return cg_program_run(g, in0, in1, bias, out, NULL);
}

convgen_status cg_program_evaluate_prepared(const cg_generated *g, const float *w, const float *bias, int count,
                                            const float *const *in0s, float *const *outs)
{
    if (!cg_program_prepares_weights(g))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the %s %s program has no weights to prepare",
                       convgen_algo_name(g->algo), convgen_pass_name(g->pass));
    if (g->step_count == 0) /* kernels only: their sources say what they compute, not their ops */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the plan has no step program");
    cg_op_buffers m = {.in = {NULL, w}, .out = NULL, .ws = poisoned_workspace(g)};
    if (!m.ws)
        return CONVGEN_ERROR_OUT_OF_MEMORY;
    convgen_status s = run_phase(g, 0, false, bias, &m, NULL);
    for (int i = 0; i < count && s == CONVGEN_SUCCESS; ++i)
        s = run_chunks(g, in0s[i], NULL, bias, outs[i], m.ws, NULL);
    free(m.ws);
    return s;
}


static void describe_step(const cg_generated *g, const cg_step *st, cg_buf *b)
{
    if (st->kind == CG_STEP_KERNEL) {
        const cg_kernel *k = &g->kernels[st->kernel];
        cg_buf_printf(b, " *     kernel %d: %s, grid (%u, %u, %u), block (%u, %u, %u)\n", st->kernel, k->name, k->grid[0],
                      k->grid[1], k->grid[2], k->block[0], k->block[1], k->block[2]);
        return;
    }
    if (st->kind == CG_STEP_FFT) {
        const cg_fft_step *f = &st->fft;
        char real[48];
        if (f->real_operand >= 0)
            snprintf(real, sizeof real, "in%d in place", f->real_operand);
        else
            snprintf(real, sizeof real, "at byte %lld", (long long)f->real_offset);
        cg_buf_printf(b, " *     cuFFT %s, %lld images of ", f->inverse ? "C2R" : "R2C", (long long)f->batch);
        for (int d = 0; d < f->rank; ++d)
            cg_buf_printf(b, "%s%lld", d ? "x" : "", (long long)f->n[d]);
        cg_buf_printf(b, ": real %s, spectra at byte %lld\n", real, (long long)f->spectrum_offset);
        return;
    }
    const cg_gemm_step *m = &st->gemm;
    cg_buf_printf(b,
                  " *     cuBLAS %s x %lld %s: C = op%c(A) op%c(B), m %lld n %lld k %lld;\n"
                  " *       A at byte %lld (lda %lld, stride %lld), B at %lld (ldb %lld, stride %lld),\n"
                  " *       C at %lld (ldc %lld, stride %lld)%s\n",
                  m->real ? "SGEMM" : "CGEMM", (long long)m->batch, m->real ? "transform elements" : "bins", m->transa,
                  m->transb, (long long)m->m, (long long)m->n, (long long)m->k,
                  (long long)m->a_offset, (long long)m->lda, (long long)m->a_stride, (long long)m->b_offset,
                  (long long)m->ldb, (long long)m->b_stride, (long long)m->c_offset, (long long)m->ldc,
                  (long long)m->c_stride, m->accumulate ? ", summed over the sub-batches" : "");
}

char *cg_program_describe(const cg_generated *g)
{
    cg_buf b = {0};
    bool library_fft = false;
    for (int i = 0; i < g->step_count; ++i)
        library_fft |= g->steps[i].kind == CG_STEP_FFT;
    cg_buf_printf(&b, "/*\n * The %s plan's program, %s: the steps the runtime runs, in order (N: as is, T: transpose, C: conjugate\n"
                      " * transpose). Workspace: %lld bytes%s.\n",
                  convgen_algo_name(g->algo), convgen_pass_name(g->pass), (long long)g->workspace_bytes,
                  library_fft ? " of buffers; on a device, cuFFT's work area follows" : "");
    if (g->chunks > 1)
        cg_buf_printf(&b, " * %lld sub-batches: in0, in1 and out advance by %lld, %lld and %lld floats each.\n",
                      (long long)g->chunks, (long long)g->chunk_elems[0], (long long)g->chunk_elems[1],
                      (long long)g->chunk_elems[2]);
    for (int phase = 0; phase < 3; ++phase) {
        bool any = false;
        for (int i = 0; i < g->step_count; ++i)
            any |= g->steps[i].phase == phase;
        if (!any)
            continue;
        const char *names[3] = {cg_program_prepares_weights(g) ? "first, once: the weights' transforms (alone in "
                                                                 "convgen_prepare_weights)"
                                                               : "first, once",
                                g->chunks > 1 ? "per sub-batch" : "then", "last, once"};
        cg_buf_printf(&b, " *   %s:\n", names[phase]);
        for (int i = 0; i < g->step_count; ++i)
            if (g->steps[i].phase == phase)
                describe_step(g, &g->steps[i], &b);
    }
    cg_buf_puts(&b, " */\n");
    return cg_buf_take(&b);
}
