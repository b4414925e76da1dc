/* A probe, built by hand on a GPU machine:
 *   gcc -O2 bench/probes/cublaslt_products.c -I$CUDA/include -L$CUDA/lib64 -lcublasLt -lcublas -lcudart
 *   ./a.out M N K BATCH   (default 3200 256 256 64)
 * cuBLAS SgemmStridedBatched vs cublasLt's heuristic algorithms on winograd's V3 fprop
 * products (F(6,3): 64 elements, M = 3200 tiles, N = K = 256, sum over C = 256), fp32. */
#include <cublas_v2.h>
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#define CK(x) do { int e_ = (int)(x); if (e_) { printf("%s failed %d (line %d)\n", #x, e_, __LINE__); exit(1); } } while (0)
static int cmp(const void *a, const void *b) { float x = *(const float *)a, y = *(const float *)b; return (x > y) - (x < y); }
int main(int argc, char **argv)
{
    long M = argc > 1 ? atol(argv[1]) : 3200, N = argc > 2 ? atol(argv[2]) : 256, K = argc > 3 ? atol(argv[3]) : 256;
    int B = argc > 4 ? atoi(argv[4]) : 64;
    float *a, *b, *c;
    CK(cudaMalloc((void **)&a, 4 * M * K * B)); CK(cudaMalloc((void **)&b, 4 * N * K * B)); CK(cudaMalloc((void **)&c, 4 * M * N * B));
    cudaMemset(a, 0, 4 * M * K * B); cudaMemset(b, 0, 4 * N * K * B);
    cublasHandle_t h; CK(cublasCreate(&h));
    float one = 1, zero = 0;
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    double flops = 2.0 * M * N * K * B;
    float t[31];
    for (int r = 0; r < 31; ++r) {
        cudaEventRecord(e0, 0);
        CK(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, M, N, K, &one, a, M, M * K, b, N, N * K, &zero, c, M, M * N, B));
        cudaEventRecord(e1, 0); cudaEventSynchronize(e1); cudaEventElapsedTime(&t[r], e0, e1);
    }
    qsort(t, 31, 4, cmp);
    printf("cublasSgemmStridedBatched M %ld N %ld K %ld batch %d: %.4f ms, %.1f TF/s\n", M, N, K, B, t[15], flops / t[15] / 1e9);
    cublasLtHandle_t lt; CK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op; CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t tn = CUBLAS_OP_N, tt = CUBLAS_OP_T;
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &tn, sizeof tn));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tt, sizeof tt));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M)); CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, N, K, N));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, M, N, M));
    long long sa = M * K, sb = N * K, sc = M * N;
    cublasLtMatrixLayout_t ls[3] = {la, lb, lc}; long long st[3] = {sa, sb, sc};
    for (int i = 0; i < 3; ++i) {
        CK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &B, sizeof B));
        CK(cublasLtMatrixLayoutSetAttribute(ls[i], CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &st[i], sizeof st[i]));
    }
    size_t ws_size = 64 << 20; void *ws; CK(cudaMalloc(&ws, ws_size));
    cublasLtMatmulPreference_t pref; CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_size, sizeof ws_size));
    cublasLtMatmulHeuristicResult_t res[32]; int n = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 32, res, &n));
    float best = 1e9;
    for (int i = 0; i < n; ++i) {
        for (int r = 0; r < 21; ++r) {
            cudaEventRecord(e0, 0);
            int s = cublasLtMatmul(lt, op, &one, a, la, b, lb, &zero, c, lc, c, lc, &res[i].algo, ws, ws_size, 0);
            cudaEventRecord(e1, 0); cudaEventSynchronize(e1); cudaEventElapsedTime(&t[r], e0, e1);
            if (s) { t[r] = 1e9; }
        }
        qsort(t, 21, 4, cmp);
        if (t[10] < best) best = t[10];
        printf("  lt algo %2d: %.4f ms %.1f TF/s (workspace %zu)\n", i, t[10], flops / t[10] / 1e9, res[i].workspaceSize);
    }
    printf("cublasLt best of %d: %.4f ms, %.1f TF/s\n", n, best, flops / best / 1e9);
    return 0;
}
