#include "lib_steps.h"

#include <cublas_v2.h>
#include <cufft.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct lib_steps {
    convgen_context *ctx;          /* its cuBLAS handle and cuFFT plans */
    int64_t work_offset;
    cufftHandle fft[CG_MAX_STEPS]; /* by step index; owned by the context */
};

/* A cuFFT plan of the context, for every step with the same transform. */
typedef struct fft_entry {
    cg_fft_step shape; /* rank, n, batch and inverse count; the offsets do not */
    cufftHandle handle;
    size_t work;
    struct fft_entry *next;
} fft_entry;


static bool same_transform(const cg_fft_step *a, const cg_fft_step *b)
{
    if (a->rank != b->rank || a->batch != b->batch || a->inverse != b->inverse)
        return false;
    for (int d = 0; d < a->rank; ++d)
        if (a->n[d] != b->n[d])
            return false;
    return true;
}

/* cuFFT has no message function; these are its documented results. */
static const char *cufft_message(cufftResult r)
{
    switch (r) {
    case CUFFT_INVALID_PLAN: return "invalid plan";
    case CUFFT_ALLOC_FAILED: return "allocation failed";
    case CUFFT_INVALID_VALUE: return "invalid value";
    case CUFFT_INTERNAL_ERROR: return "internal error";
    case CUFFT_EXEC_FAILED: return "execution failed";
    case CUFFT_SETUP_FAILED: return "setup failed (no device?)";
    case CUFFT_INVALID_SIZE: return "invalid size";
    case CUFFT_NOT_SUPPORTED: return "not supported";
    default: return "error";
    }
}

static convgen_status fft_fail(cufftResult r, const char *call)
{
    return cg_fail(CONVGEN_ERROR_CUDA, "%s: cuFFT error %d (%s)", call, (int)r, cufft_message(r));
}

static convgen_status blas_fail(cublasStatus_t r, const char *call)
{
    return cg_fail(CONVGEN_ERROR_CUDA, "%s: %s", call, cublasGetStatusString(r));
}

/* Dense real images and dense half spectra, image after image. */
static convgen_status make_fft(const cg_fft_step *f, cufftHandle *h, size_t *work)
{
    long long n[CONVGEN_MAX_RANK];
    for (int d = 0; d < f->rank; ++d)
        n[d] = f->n[d];
    cufftResult r = cufftCreate(h);
    if (r != CUFFT_SUCCESS)
        return fft_fail(r, "cufftCreate");
    const char *call = "cufftSetAutoAllocation";
    if ((r = cufftSetAutoAllocation(*h, 0)) == CUFFT_SUCCESS) {
        call = "cufftMakePlanMany64";
        r = cufftMakePlanMany64(*h, f->rank, n, NULL, 1, 0, NULL, 1, 0, f->inverse ? CUFFT_C2R : CUFFT_R2C, f->batch,
                                work);
    }
    if (r == CUFFT_SUCCESS)
        return CONVGEN_SUCCESS;
    cufftDestroy(*h);
    return fft_fail(r, call);
}

/* cuBLAS's work area in the plan's workspace, the size its documentation recommends for Hopper:
 * with a handle's own default area, two plans on two streams would share one. */
enum { BLAS_WORKSPACE = 32 << 20 };

/* The context's cuBLAS handle, made by the first plan with a GEMM (lib_lock held). */
static convgen_status context_blas(convgen_context *ctx)
{
    if (ctx->blas)
        return CONVGEN_SUCCESS;
    cublasHandle_t h;
    cublasStatus_t r = cublasCreate(&h);
    if (r != CUBLAS_STATUS_SUCCESS)
        return blas_fail(r, "cublasCreate");
    ctx->blas = h;
    return CONVGEN_SUCCESS;
}

/* The context's plan for transform f, made on first use (lib_lock held). */
static convgen_status context_fft(convgen_context *ctx, const cg_fft_step *f, cufftHandle *h, size_t *work)
{
    for (fft_entry *e = ctx->fft_plans; e; e = e->next)
        if (same_transform(&e->shape, f)) {
            *h = e->handle, *work = e->work;
            return CONVGEN_SUCCESS;
        }
    fft_entry *e = calloc(1, sizeof *e);
    if (!e)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a cuFFT plan");
    e->shape = *f;
    convgen_status s = make_fft(f, &e->handle, &e->work);
    if (s != CONVGEN_SUCCESS) {
        free(e);
        return s;
    }
    e->next = ctx->fft_plans;
    ctx->fft_plans = e;
    *h = e->handle, *work = e->work;
    return CONVGEN_SUCCESS;
}

void lib_steps_release_context(convgen_context *ctx)
{
    if (ctx->blas)
        cublasDestroy(ctx->blas);
    ctx->blas = NULL;
    for (fft_entry *e = ctx->fft_plans, *next; e; e = next) {
        next = e->next;
        cufftDestroy(e->handle);
        free(e);
    }
    ctx->fft_plans = NULL;
}

convgen_status lib_steps_create(convgen_context *ctx, const cg_generated *gen, int64_t work_offset, lib_steps **out,
                                int64_t *work_bytes)
{
    lib_steps *ls = calloc(1, sizeof *ls);
    *out = NULL;
    *work_bytes = 0;
    if (!ls)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a plan's library steps");
    ls->ctx = ctx;
    ls->work_offset = work_offset;
    convgen_status s = CONVGEN_SUCCESS;
    pthread_mutex_lock(&ctx->lib_lock);
    for (int i = 0; i < gen->step_count && s == CONVGEN_SUCCESS; ++i) {
        size_t work = 0;
        if (gen->steps[i].kind == CG_STEP_FFT)
            s = context_fft(ctx, &gen->steps[i].fft, &ls->fft[i], &work);
        else if (gen->steps[i].kind == CG_STEP_GEMM && (s = context_blas(ctx)) == CONVGEN_SUCCESS)
            work = BLAS_WORKSPACE;
        /* The steps run one after another on one stream: one work area serves them all. */
        if ((int64_t)work > *work_bytes)
            *work_bytes = (int64_t)work;
    }
    pthread_mutex_unlock(&ctx->lib_lock);
    if (s != CONVGEN_SUCCESS) {
        lib_steps_destroy(ls);
        return s;
    }
    *out = ls;
    return CONVGEN_SUCCESS;
}

void lib_steps_destroy(lib_steps *ls) { free(ls); /* the cuFFT plans stay with the context; NULL: nothing */ }

static convgen_status run_fft(lib_steps *ls, int i, const cg_fft_step *f, const void *const operands[2], char *ws,
                              convgen_stream stream)
{
    cufftHandle h = ls->fft[i];
    cufftComplex *spectrum = (cufftComplex *)(ws + f->spectrum_offset);
    cufftReal *real = (cufftReal *)(f->real_operand >= 0 ? operands[f->real_operand] : ws + f->real_offset);
    pthread_mutex_lock(&ls->ctx->lib_lock); /* the handle's stream and work area are set per call */
    cufftResult r = cufftSetStream(h, (cudaStream_t)stream);
    if (r == CUFFT_SUCCESS)
        r = cufftSetWorkArea(h, ws + ls->work_offset);
    /* An out-of-place R2C leaves its input alone, so it may read the caller's operand. */
    if (r == CUFFT_SUCCESS)
        r = f->inverse ? cufftExecC2R(h, spectrum, real) : cufftExecR2C(h, real, spectrum);
    pthread_mutex_unlock(&ls->ctx->lib_lock);
    return r == CUFFT_SUCCESS ? CONVGEN_SUCCESS : fft_fail(r, f->inverse ? "cufftExecC2R" : "cufftExecR2C");
}

static cublasOperation_t op(char t) { return t == 'C' ? CUBLAS_OP_C : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

static convgen_status run_gemm(lib_steps *ls, const cg_gemm_step *g, char *ws, bool add, convgen_stream stream,
                               bool tf32)
{
    const cuComplex one = {1.0f, 0.0f}, zero = {0.0f, 0.0f};
    const float one_r = 1.0f, zero_r = 0.0f;
    const void *alpha = g->real ? (const void *)&one_r : (const void *)&one;
    const void *beta = g->accumulate && add ? alpha : g->real ? (const void *)&zero_r : (const void *)&zero;
    const cudaDataType type = g->real ? CUDA_R_32F : CUDA_C_32F;
    cublasHandle_t h = ls->ctx->blas;
    pthread_mutex_lock(&ls->ctx->lib_lock);
    /* cublasSetStream resets the handle's work area: the plan's own is set after it. */
    cublasStatus_t r = cublasSetStream(h, (cudaStream_t)stream);
    if (r == CUBLAS_STATUS_SUCCESS)
        r = cublasSetWorkspace(h, ws + ls->work_offset, BLAS_WORKSPACE);
    /* Sizes and batch counts were checked to fit int by the generator. The compute type says
     * strict fp32 or TF32 whatever the handle's math mode. */
    if (r == CUBLAS_STATUS_SUCCESS)
        r = cublasGemmStridedBatchedEx(h, op(g->transa), op(g->transb), (int)g->m, (int)g->n, (int)g->k, alpha,
                                       ws + g->a_offset, type, (int)g->lda, g->a_stride, ws + g->b_offset, type,
                                       (int)g->ldb, g->b_stride, beta, ws + g->c_offset, type, (int)g->ldc,
                                       g->c_stride, (int)g->batch,
                                       tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    pthread_mutex_unlock(&ls->ctx->lib_lock);
    return r == CUBLAS_STATUS_SUCCESS ? CONVGEN_SUCCESS : blas_fail(r, "cublasGemmStridedBatchedEx");
}

convgen_status lib_steps_run(lib_steps *ls, const cg_generated *gen, int i, const void *in0, const void *in1,
                             void *workspace, bool accumulate, convgen_stream stream)
{
    const cg_step *st = &gen->steps[i];
    const void *const operands[2] = {in0, in1};
    if (st->kind == CG_STEP_FFT)
        return run_fft(ls, i, &st->fft, operands, workspace, stream);
    if (st->kind == CG_STEP_GEMM)
        return run_gemm(ls, &st->gemm, workspace, accumulate, stream, gen->tf32);
    return cg_fail(CONVGEN_ERROR_INTERNAL, "step %d is not a library step", i);
}
