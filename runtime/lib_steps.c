#include "lib_steps.h"

#include <cublas_v2.h>
#include <cufft.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct lib_steps {
    int64_t work_offset;
    cufftHandle fft[CG_MAX_STEPS]; /* by step index; 0 where none */
    bool has_fft[CG_MAX_STEPS];
    cublasHandle_t blas;
};

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

/* Dense real images in, frequency-major half spectra out (or back): bin b of image i at
 * b * batch + i, which is the transposition the GEMM wants, done by cuFFT's output stride. */
static convgen_status make_fft(const cg_fft_step *f, cufftHandle *h, size_t *work)
{
    long long n[CONVGEN_MAX_RANK], real_embed[CONVGEN_MAX_RANK], spectrum_embed[CONVGEN_MAX_RANK];
    long long points = 1;
    for (int d = 0; d < f->rank; ++d) {
        n[d] = real_embed[d] = spectrum_embed[d] = f->n[d];
        points *= n[d];
    }
    spectrum_embed[f->rank - 1] = f->n[f->rank - 1] / 2 + 1;
    cufftResult r = cufftCreate(h);
    if (r != CUFFT_SUCCESS)
        return fft_fail(r, "cufftCreate");
    if ((r = cufftSetAutoAllocation(*h, 0)) != CUFFT_SUCCESS)
        return fft_fail(r, "cufftSetAutoAllocation");
    long long batch = f->batch;
    if (f->inverse)
        r = cufftMakePlanMany64(*h, f->rank, n, spectrum_embed, batch, 1, real_embed, 1, points, CUFFT_C2R, batch, work);
    else
        r = cufftMakePlanMany64(*h, f->rank, n, real_embed, 1, points, spectrum_embed, batch, 1, CUFFT_R2C, batch, work);
    return r == CUFFT_SUCCESS ? CONVGEN_SUCCESS : fft_fail(r, "cufftMakePlanMany64");
}

convgen_status lib_steps_create(const cg_generated *gen, int64_t work_offset, lib_steps **out, int64_t *work_bytes)
{
    lib_steps *ls = calloc(1, sizeof *ls);
    *out = NULL;
    *work_bytes = 0;
    if (!ls)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a plan's library steps");
    ls->work_offset = work_offset;
    convgen_status s = CONVGEN_SUCCESS;
    bool gemm = false;
    for (int i = 0; i < gen->step_count && s == CONVGEN_SUCCESS; ++i) {
        if (gen->steps[i].kind == CG_STEP_FFT) {
            size_t work = 0;
            s = make_fft(&gen->steps[i].fft, &ls->fft[i], &work);
            ls->has_fft[i] = true; /* destroyed even when half made */
            if ((int64_t)work > *work_bytes)
                *work_bytes = (int64_t)work; /* the transforms run one after another: one area */
        }
        gemm |= gen->steps[i].kind == CG_STEP_GEMM;
    }
    if (s == CONVGEN_SUCCESS && gemm) {
        cublasStatus_t r = cublasCreate(&ls->blas);
        if (r != CUBLAS_STATUS_SUCCESS)
            ls->blas = NULL, s = blas_fail(r, "cublasCreate");
        /* Strict fp32 unless the plan allows TF32: the default math mode never uses it. */
        else if ((r = cublasSetMathMode(ls->blas, gen->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH)) !=
                 CUBLAS_STATUS_SUCCESS)
            s = blas_fail(r, "cublasSetMathMode");
    }
    if (s != CONVGEN_SUCCESS) {
        lib_steps_destroy(ls);
        return s;
    }
    *out = ls;
    return CONVGEN_SUCCESS;
}

void lib_steps_destroy(lib_steps *ls)
{
    if (!ls)
        return;
    for (int i = 0; i < CG_MAX_STEPS; ++i)
        if (ls->has_fft[i])
            cufftDestroy(ls->fft[i]);
    if (ls->blas)
        cublasDestroy(ls->blas);
    free(ls);
}

static convgen_status run_fft(lib_steps *ls, int i, const cg_fft_step *f, char *ws, convgen_stream stream)
{
    cufftHandle h = ls->fft[i];
    cufftResult r = cufftSetStream(h, (cudaStream_t)stream);
    if (r == CUFFT_SUCCESS)
        r = cufftSetWorkArea(h, ws + ls->work_offset);
    if (r != CUFFT_SUCCESS)
        return fft_fail(r, "cufftSetStream/cufftSetWorkArea");
    cufftReal *real = (cufftReal *)(ws + f->real_offset);
    cufftComplex *spectrum = (cufftComplex *)(ws + f->spectrum_offset);
    r = f->inverse ? cufftExecC2R(h, spectrum, real) : cufftExecR2C(h, real, spectrum);
    return r == CUFFT_SUCCESS ? CONVGEN_SUCCESS : fft_fail(r, f->inverse ? "cufftExecC2R" : "cufftExecR2C");
}

static cublasOperation_t op(char t) { return t == 'C' ? CUBLAS_OP_C : t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N; }

static convgen_status run_gemm(lib_steps *ls, const cg_gemm_step *g, char *ws, convgen_stream stream, bool tf32)
{
    cublasStatus_t r = cublasSetStream(ls->blas, (cudaStream_t)stream);
    if (r != CUBLAS_STATUS_SUCCESS)
        return blas_fail(r, "cublasSetStream");
    const cuComplex one = {1.0f, 0.0f}, zero = {0.0f, 0.0f};
    /* Sizes and batch counts were checked to fit int by the generator. */
    r = cublasGemmStridedBatchedEx(ls->blas, op(g->transa), op(g->transb), (int)g->m, (int)g->n, (int)g->k, &one,
                                   ws + g->a_offset, CUDA_C_32F, (int)g->lda, g->a_stride, ws + g->b_offset,
                                   CUDA_C_32F, (int)g->ldb, g->b_stride, &zero, ws + g->c_offset, CUDA_C_32F,
                                   (int)g->ldc, g->c_stride, (int)g->batch,
                                   tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    return r == CUBLAS_STATUS_SUCCESS ? CONVGEN_SUCCESS : blas_fail(r, "cublasGemmStridedBatchedEx");
}

convgen_status lib_steps_run(lib_steps *ls, const cg_generated *gen, int i, void *workspace, convgen_stream stream)
{
    const cg_step *st = &gen->steps[i];
    if (st->kind == CG_STEP_FFT)
        return run_fft(ls, i, &st->fft, workspace, stream);
    if (st->kind == CG_STEP_GEMM)
        return run_gemm(ls, &st->gemm, workspace, stream, gen->tf32);
    return cg_fail(CONVGEN_ERROR_INTERNAL, "step %d is not a library step", i);
}
