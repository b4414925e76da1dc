/* The cost model (cost_model.h). Each step costs max(FLOPs / (efficiency x FMA rate), bytes /
 * (efficiency x bandwidth)) plus a launch; phase-1 steps count once per chunk. A kernel step's
 * FLOPs, bytes and efficiencies are its op kind's (op_kinds.h: each kind's file says what the
 * bench measured for it), a library call's are here. The efficiencies are what the bench
 * measured on the H100 (bench/NOTES.md):
 *   - programs of kernels without steps (direct's, direct-window's) at the share of the FMA rate
 *     their planner says they reach (cg_planner.fma_efficiency);
 *   - cuBLAS's SGEMM and CGEMM about 45 TFLOP/s on full waves (gemm_op.c); fewer blocks than the
 *     GPU holds leave multiprocessors idle, unless the sum is long enough for cuBLAS to split it;
 *   - cuFFT 65% of the copy bandwidth. */
#include "cost_model.h"

#include <math.h>

#include "gemm.h"
#include "op_kinds.h"

#define CUFFT_BANDWIDTH_EFFICIENCY 0.65

cg_rates cg_rates_for(int sm_count, double peak_bytes_per_s)
{
    double scale = (sm_count > 0 ? sm_count : 132) / 132.0;
    return (cg_rates){.flops = 64e12 * scale,
                      .bytes = peak_bytes_per_s > 0 ? CG_COPY_OF_PEAK * peak_bytes_per_s : 3.0e12 * scale,
                      .launch_s = 3e-6};
}

static double seconds(cg_work w, const cg_rates *r)
{
    double compute = w.flops > 0 ? w.flops / (w.efficiency * r->flops) : 0;
    double memory = w.bytes / (w.bandwidth_efficiency * r->bytes);
    return fmax(compute, memory) + r->launch_s;
}

/* cuFFT's R2C or C2R: 2.5 N log2 N FLOPs a real transform of N points; the images and the half
 * spectra read and written once. */
static cg_work cufft_work(const cg_fft_step *f)
{
    double points = cg_product(f->n, f->rank), bins = points / (double)f->n[f->rank - 1] * (double)(f->n[f->rank - 1] / 2 + 1);
    return (cg_work){.flops = 2.5 * points * log2(points) * (double)f->batch, .efficiency = CG_GEMM_EFFICIENCY,
                     .bytes = (points * 4 + bins * 8) * (double)f->batch, .bandwidth_efficiency = CUFFT_BANDWIDTH_EFFICIENCY};
}

/* A program of kernels without steps: the pass's FLOPs at the share of the FMA rate its planner
 * says its kernels reach on this layer, but no less than its operands read and its result
 * written once at the copy bandwidth (a layer of one input channel and 80 outputs writes far
 * more than it computes), and a launch per kernel. */
static double kernels_seconds(const cg_generated *g, const cg_rates *r)
{
    const cg_planner *pl = cg_planner_of(g->algo);
    double efficiency = pl && pl->fma_efficiency ? pl->fma_efficiency(g) : 1;
    int64_t elems[3];
    cg_problem_operand_elems(&g->problem, g->pass, elems);
    double bytes = 4.0 * ((double)elems[0] + (double)elems[1] + (double)elems[2]);
    return fmax(cg_problem_flops(&g->problem) / (efficiency * r->flops), bytes / (CG_BANDWIDTH_EFFICIENCY * r->bytes)) +
           g->kernel_count * r->launch_s;
}

cg_work cg_step_work(const cg_step *st, int sm_count)
{
    if (st->kind == CG_STEP_KERNEL)
        return cg_op_work(&st->op, sm_count);
    return st->kind == CG_STEP_GEMM ? cg_gemm_work(&st->gemm, sm_count, true) : cufft_work(&st->fft);
}

double cg_estimate_ms(const cg_generated *g, const cg_rates *rates)
{
    if (g->step_count == 0)
        return 1e3 * kernels_seconds(g, rates);
    int sm = (int)lround(rates->flops / 64e12 * 132);
    double chunks = g->chunks > 0 ? (double)g->chunks : 1, total = 0;
    for (int i = 0; i < g->step_count; ++i)
        total += seconds(cg_step_work(&g->steps[i], sm), rates) * (g->steps[i].phase == 1 ? chunks : 1);
    return 1e3 * total;
}
