/* A cost model of generated programs, for planning without a GPU (AUTO at effort ESTIMATE, and
 * offline): each step's FLOPs and bytes, from what its op describes, over the GPU's FMA rate
 * and memory bandwidth at an efficiency measured for its kind of step, plus a launch cost. It
 * ranks algorithms; it does not predict times to better than a factor of two. */
#ifndef CG_COST_MODEL_H
#define CG_COST_MODEL_H

#include "generate.h"

/* The GPU's ceilings. */
typedef struct cg_rates {
    double flops;       /* fp32 FLOP/s with every lane doing an FMA */
    double bytes;       /* device memory bytes/s, read plus written */
    double launch_s;    /* seconds a kernel launch or library call costs beyond its work */
} cg_rates;

/* An H100 SXM's, as the bench measured them (bench/NOTES.md: 64 TFLOP/s, 3.0 TB/s), scaled to
 * `sm_count` multiprocessors (0: 132); the bandwidth from `peak_bytes_per_s` where the device
 * said it (0: unknown), at CG_COPY_OF_PEAK. */
cg_rates cg_rates_for(int sm_count, double peak_bytes_per_s);

/* The bench's device-to-device copy against the peak bandwidth: an H100 SXM's 3.0 TB/s of 3.35
 * (so its estimates are as before), an H200's 4.24 of 4.92 (0.86;
 * bench/results/nvidia-h200-2026-12-04-wino-pdl.md, calls 6-8). */
#define CG_COPY_OF_PEAK 0.895

/* What a step does, as the model counts it: its FLOPs at `efficiency` of the FMA rate, its bytes
 * read and written at `bandwidth_efficiency` of the bandwidth (kernel headers say the counts).
 * A kernel step's comes from its op kind (cg_op_class.work), a library call's from its sizes. */
typedef struct cg_work {
    double flops, efficiency, bytes, bandwidth_efficiency;
} cg_work;

/* The efficiencies the bench measured on the H100 that several kinds of step share: cuBLAS's
 * SGEMM and CGEMM about 45 TFLOP/s on full waves (convgen's generated GEMM and FFTs about the
 * same), copies, transposes and transforms 70% of the copy bandwidth (bench/NOTES.md). */
#define CG_GEMM_EFFICIENCY 0.72
/* convgen's GEMM on the tensor cores in 3xTF32 (gemm_tc.c), of the FFMA peak: 1.0 on V3's
 * element GEMMs on an H200 (bench/NOTES.md, "Issue 30, session 60"). */
#define CG_GEMM_TC_EFFICIENCY 1.0
/* convgen's complex GEMM on the tensor cores (gemm_complex_tc.cu: mma.sync in 3xTF32), of the FFMA
 * peak: fitted to the H100's exhaustive tune of the 2-D set (bench/NOTES.md, "Issue 30, session
 * 83"), where the passes with it against those with the FMA GEMM put it at 0.87-1.06 (L3 0.96, L4
 * 0.99, S32 0.96, R4 1.06, V3 0.87). */
#define CG_GEMM_COMPLEX_TC_EFFICIENCY 0.95
#define CG_BANDWIDTH_EFFICIENCY 0.7

/* The product of v's rank entries, in double (the counts of points and bins). */
static inline double cg_product(const int64_t *v, int rank)
{
    double x = 1;
    for (int i = 0; i < rank; ++i)
        x *= (double)v[i];
    return x;
}

/* Step st's work on a GPU of `sm_count` multiprocessors (0: 132). */
cg_work cg_step_work(const cg_step *st, int sm_count);

/* Estimated milliseconds of one run of a generated program: over its steps, max(FLOPs /
 * (efficiency x FMA rate), bytes / (efficiency x bandwidth)) plus a launch, phase 1's once per
 * chunk (a program without steps: its kernels from the layer's FLOPs). */
double cg_estimate_ms(const cg_generated *g, const cg_rates *rates);

#endif
