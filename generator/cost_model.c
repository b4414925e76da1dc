/* The cost model (cost_model.h). Each step costs max(FLOPs / (efficiency x FMA rate), bytes /
 * (efficiency x bandwidth)) plus a launch; phase-1 steps count once per chunk. The efficiencies
 * are what the bench measured on the H100 for each kind of step (bench/NOTES.md):
 *   - programs of kernels without steps (direct's, direct-window's) at the share of the FMA rate
 *     their planner says they reach (cg_planner.fma_efficiency);
 *   - cuBLAS's SGEMM and CGEMM about 45 TFLOP/s on full waves, convgen's generated GEMM about
 *     the same; fewer blocks than the GPU holds leave multiprocessors idle, unless the sum is
 *     long enough for cuBLAS to split it (split-K; the generated GEMM does not);
 *   - the fused Winograd kernels about 30% of the GEMMs' rate (measured over the bench set by
 *     convgen tune: bench/results/...-tune.csv), fft-fused's less (its weights' reads from L2);
 *   - copies, transposes, transforms and cuFFT 60-80% of the copy bandwidth. */
#include "cost_model.h"

#include <math.h>

#define GEMM_EFFICIENCY 0.72
#define WINOGRAD_FUSED_EFFICIENCY 0.21 /* fprop and bprop; accgrad's reaches less */
#define WINOGRAD_FUSED_ACCGRAD_EFFICIENCY 0.19
#define SPLIT_K_DEPTH 512 /* the sum length per split cuBLAS needs before splitting pays */
#define FFT_FUSED_EFFICIENCY 0.12
#define FFT_FUSED_L2_RATE 1.8 /* the weights' spectra from L2, against the copy bandwidth */
#define BANDWIDTH_EFFICIENCY 0.7
#define CUFFT_BANDWIDTH_EFFICIENCY 0.65

cg_rates cg_rates_for(int sm_count)
{
    double scale = (sm_count > 0 ? sm_count : 132) / 132.0;
    return (cg_rates){.flops = 64e12 * scale, .bytes = 3.0e12 * scale, .launch_s = 3e-6};
}

typedef struct work {
    double flops, efficiency, bytes, bandwidth_efficiency;
} work;

static double seconds(work w, const cg_rates *r)
{
    double compute = w.flops > 0 ? w.flops / (w.efficiency * r->flops) : 0;
    double memory = w.bytes / (w.bandwidth_efficiency * r->bytes);
    return fmax(compute, memory) + r->launch_s;
}

/* Blocks of 128 x 128 (two per multiprocessor) over the GPU: the share of the last wave's
 * slots filled, as an efficiency. */
static double wave_efficiency(double blocks, int sm_count)
{
    double slots = 2.0 * (sm_count > 0 ? sm_count : 132);
    double waves = ceil(blocks / slots);
    return waves > 0 ? blocks / (waves * slots) : 1;
}

static work gemm_work(const cg_gemm_step *g, int sm_count, bool split_k)
{
    double mul = g->real ? 2.0 : 8.0, elem = g->real ? 4.0 : 8.0;
    double batch = (double)g->batch, m = (double)g->m, n = (double)g->n, k = (double)g->k;
    double blocks = ceil(m / 128) * ceil(n / 128) * batch, slots = 2.0 * (sm_count > 0 ? sm_count : 132);
    if (split_k && blocks < slots)
        blocks *= fmax(1.0, fmin(ceil(slots / blocks), floor(k / SPLIT_K_DEPTH)));
    return (work){.flops = mul * m * n * k * batch,
                  .efficiency = GEMM_EFFICIENCY * wave_efficiency(blocks, sm_count),
                  .bytes = (m * k + k * n + m * n * (g->accumulate ? 2 : 1)) * batch * elem,
                  .bandwidth_efficiency = BANDWIDTH_EFFICIENCY};
}

static double product(const int64_t *v, int rank)
{
    double x = 1;
    for (int i = 0; i < rank; ++i)
        x *= (double)v[i];
    return x;
}

static work fft_work(const cg_fft_problem *f)
{
    double real = (double)f->h * f->w, bins = (double)(f->rank == 2 ? f->n : 1) * f->half;
    double points = (double)(f->rank == 2 ? f->n : 1) * f->n;
    return (work){.flops = 5.0 * points * log2(points) * (double)f->count, .efficiency = GEMM_EFFICIENCY,
                  .bytes = (real * 4 + bins * 8) * (double)f->count, .bandwidth_efficiency = BANDWIDTH_EFFICIENCY};
}

static work winograd_work(const cg_wino_op *w)
{
    double alpha = (double)(w->m[0] + w->r[0] - 1) * (w->m[1] + w->r[1] - 1);
    double tiles = (double)w->tiles[0] * w->tiles[1], planes = (double)w->outer * w->channels;
    double plane = (double)w->size[0] * w->size[1], outputs = (double)w->out_size[0] * w->out_size[1];
    work k = {.efficiency = WINOGRAD_FUSED_EFFICIENCY, .bandwidth_efficiency = BANDWIDTH_EFFICIENCY};
    switch (w->matrix) {
    case 'B': case 'G': /* planes in, transforms out */
        k.bytes = 4 * planes * (plane + alpha * tiles);
        break;
    case 'A': /* transforms in, outputs out */
        k.bytes = 4 * (double)w->rows * w->outer * tiles * (alpha + (double)w->m[0] * w->m[1]);
        break;
    case 'F': /* tiles in, products summed over the channels, outputs out */
        k.flops = 2 * alpha * tiles * planes * (double)w->rows;
        k.bytes = 4 * (planes * plane + (double)w->rows * w->outer * outputs + alpha * w->channels * w->rows);
        break;
    case 'D': /* both operands' tiles in, products summed over the images' tiles */
        k.efficiency = WINOGRAD_FUSED_ACCGRAD_EFFICIENCY;
        k.flops = 2 * alpha * tiles * planes * (double)w->rows;
        k.bytes = 4 * (planes * plane + (double)w->rows * w->outer * outputs) + 4.0 * w->splits * w->partial;
        break;
    default: /* 'S': partial results summed */
        k.bytes = 4.0 * (double)(w->splits + 1) * w->partial;
    }
    return k;
}

/* fft-fused: per tile and image, the products and, for each group of (at most 16) output
 * channels, the input channels' register FFTs (5 N log2 N FLOPs a complex transform of N points,
 * two real rows a transform) and the outputs' inverse; each block reads the weights' spectra of
 * its output channels for its one tile, 8 bytes a complex multiply-add, from L2 (measured at about
 * 1.8 times the copy rate: L3 fprop's 25 GB in 4.5 ms). */
static work fft_fused_work(const cg_kernel_op *op)
{
    double points = product(op->size, op->rank), bins = points / 2 + points / op->size[op->rank - 1];
    double tiles = (double)op->images * op->tiles, groups = ceil(op->outputs / 16.0);
    double transform = 5.0 * points * log2(points) / 2;
    double macs = bins * tiles * op->channels * op->outputs;
    return (work){.flops = 8.0 * macs + transform * tiles * (op->channels * groups + op->outputs),
                  .efficiency = FFT_FUSED_EFFICIENCY, .bytes = 8.0 * macs,
                  .bandwidth_efficiency = FFT_FUSED_L2_RATE};
}

static work kernel_work(const cg_kernel_op *op, int sm_count)
{
    work w = {.efficiency = 1, .bandwidth_efficiency = BANDWIDTH_EFFICIENCY};
    switch (op->kind) {
    case CG_OP_PAD:
    case CG_OP_CLIP: /* padded images written (or read) once, the operand read (or written) */
        w.bytes = 8 * product(op->size, op->rank) * (double)op->images * (op->tiles > 0 ? op->tiles : 1);
        return w;
    case CG_OP_TRANSPOSE:
        w.bytes = 16.0 * (double)op->rows * op->cols;
        return w;
    case CG_OP_FFT:
        return fft_work(&op->fft);
    case CG_OP_FUSED:
        return fft_fused_work(op);
    case CG_OP_WINOGRAD:
        return winograd_work(&op->wino);
    case CG_OP_GEMM: {
        cg_gemm_step g = op->gemm;
        return gemm_work(&g, sm_count, false);
    }
    default:
        return w; /* costed by the caller (kernels_seconds) */
    }
}

static work library_work(const cg_step *st, int sm_count)
{
    if (st->kind == CG_STEP_GEMM)
        return gemm_work(&st->gemm, sm_count, true);
    const cg_fft_step *f = &st->fft;
    double points = product(f->n, f->rank), bins = points / (double)f->n[f->rank - 1] * (double)(f->n[f->rank - 1] / 2 + 1);
    return (work){.flops = 2.5 * points * log2(points) * (double)f->batch, .efficiency = GEMM_EFFICIENCY,
                  .bytes = (points * 4 + bins * 8) * (double)f->batch, .bandwidth_efficiency = CUFFT_BANDWIDTH_EFFICIENCY};
}

/* A program of kernels without steps: the pass's FLOPs at the share of the FMA rate its planner
 * says its kernels reach on this layer, and a launch per kernel. */
static double kernels_seconds(const cg_generated *g, const cg_rates *r)
{
    const cg_planner *pl = cg_planner_of(g->algo);
    double efficiency = pl && pl->fma_efficiency ? pl->fma_efficiency(&g->problem, g->pass) : 1;
    return cg_problem_flops(&g->problem) / (efficiency * r->flops) + g->kernel_count * r->launch_s;
}

void cg_step_work(const cg_step *st, int sm_count, double *flops, double *bytes)
{
    work w = st->kind == CG_STEP_KERNEL ? kernel_work(&st->op, sm_count) : library_work(st, sm_count);
    *flops = w.flops;
    *bytes = w.bytes;
}

double cg_estimate_ms(const cg_generated *g, const cg_rates *rates)
{
    if (g->step_count == 0)
        return 1e3 * kernels_seconds(g, rates);
    int sm = (int)lround(rates->flops / 64e12 * 132);
    double chunks = g->chunks > 0 ? (double)g->chunks : 1, total = 0;
    for (int i = 0; i < g->step_count; ++i) {
        const cg_step *st = &g->steps[i];
        work w = st->kind == CG_STEP_KERNEL ? kernel_work(&st->op, sm) : library_work(st, sm);
        total += seconds(w, rates) * (st->phase == 1 ? chunks : 1);
    }
    return 1e3 * total;
}
