/* Rank 3 FFTs composed from lower ranks, as FFTW's rank-geq2 plans a rank N transform as child
 * problems: the rank 2 kernels of fft_real.c over the volume's planes, and a depth pass
 * (templates/fft/fft_depth.cu) of 1-D transforms along the depth axis, one column per thread
 * in registers (fft_regs.c), consecutive threads on consecutive columns so that every access
 * is coalesced with no transpose.
 *
 * Pruned as ZNNi (section III) describes: a forward transform of a d x h x w window zero-padded
 * to n^3 runs the plane stage on the d window planes only, and within each plane only the
 * window's rows (fft_real.c's pruning), then n * half depth columns that load only d points:
 * (h + half) d + n half 1-D transforms, against 3 n^2 for the whole cube (half ~ n/2 for real
 * data; packed real rows count two for one). The inverse runs all depth columns but writes only
 * the window's d planes, and the plane stage's row transforms only the window's rows.
 *
 * Order: forward = plane stage (signal -> the spectrum's first d planes, in place in the output),
 * then the depth pass (those planes -> all n, in place); inverse = depth pass (spectrum -> the
 * window's d planes in the workspace), then the plane stage (workspace -> signal). The spectrum
 * is n planes of the rank 2 spectrum in the requested layout and order; nothing is permuted. */
#include <stdio.h>
#include <string.h>

#include "fft_kernel.h"
#include "fft_regs.h"
#include "fft_warp.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum {
    DEPTH_THREADS = 128,
    /* A column of up to 32 points takes under 128 registers; 64 points need 128 for the data
     * alone, so those kernels run one block per multiprocessor's share of 255 registers. */
    DEPTH_SMALL_N = 32,
};

/* The plane stage: a rank 2 problem whose transforms are the window's planes of every (batch,
 * channel) entry. Forward: the signal's planes to the first d planes of each output spectrum.
 * Inverse: the depth pass's d planes per entry, dense in the workspace, to the signal. */
static void plane_problem(const cg_fft_problem *p, cg_fft_problem *q)
{
    int64_t plane_bins = cg_fft_plane_bins(p);
    *q = *p;
    q->rank = 2;
    q->d = 1, q->oz = 0, q->plane_pitch = 0;
    q->planes = p->d;
    q->plane_stage = true;
    q->count = p->count * p->d;
    q->plane_stride[0] = p->plane_pitch;
    q->plane_stride[1] = plane_bins;
    if (p->sign > 0) { /* from the workspace */
        q->spectrum_stride[1] = p->d * plane_bins;
        q->spectrum_stride[0] = p->channels * q->spectrum_stride[1];
        q->spectrum_elements = p->count * q->spectrum_stride[1];
    } else {
        q->scale = 1.0f; /* the depth pass, which runs last, scales */
    }
}

/* Where the depth pass reads and writes: (batch, channel) strides of each side. */
static tmpl_value *strides(int64_t batch, int64_t channel)
{
    tmpl_value *v = tmpl_map();
    tmpl_set_int(v, "batch", batch);
    tmpl_set_int(v, "channel", channel);
    tmpl_set_int(v, "plane", 0);
    return v;
}

static tmpl_value *load_list(const cg_fft_problem *p, tmpl_value **zeros)
{
    tmpl_value *loads = tmpl_list();
    *zeros = tmpl_list();
    /* Forward: window plane j holds signal plane oz + j; the rest of the depth axis is zero. */
    for (int z = 0; z < p->n; ++z) {
        bool in_window = p->sign > 0 || (z >= p->oz && z < p->oz + p->d);
        if (!in_window) {
            tmpl_list_push(*zeros, tmpl_int(z));
            continue;
        }
        tmpl_value *l = tmpl_map();
        tmpl_set_int(l, "reg", z);
        tmpl_set_int(l, "at", p->sign > 0 ? z : z - p->oz);
        tmpl_list_push(loads, l);
    }
    return loads;
}

static tmpl_value *store_list(const cg_fft_problem *p, const reg_fft *f)
{
    tmpl_value *stores = tmpl_list();
    int first = p->sign > 0 ? p->oz : 0, count = p->sign > 0 ? p->d : p->n;
    for (int j = 0; j < count; ++j) {
        tmpl_value *s = tmpl_map();
        tmpl_set_int(s, "reg", f->out[first + j]);
        tmpl_set_int(s, "at", j);
        tmpl_list_push(stores, s);
    }
    return stores;
}

static tmpl_value *depth_header(const cg_fft_problem *p, int64_t columns, const cg_kernel *k)
{
    char radices[64];
    cg_reg_fft_radices(p->n, radices, sizeof radices);
    cg_fft_problem own = *p;
    own.epilogue = 0; /* y's epilogue is the inverse plane stage's, which stores y */
    tmpl_value *h = cg_fft_header_open(&own);
    cg_value_line(h, "depth pass: %lld columns of %d points (%lld per volume), one per thread, radices %s in "
                     "registers, decimation in time",
                  (long long)columns, p->n, (long long)cg_fft_plane_bins(p), radices);
    if (p->sign < 0)
        cg_value_line(h, "forward: reads the %d window planes the plane stage left in the spectrum (signal planes "
                         "%d..%d; the other %d are zero and never loaded), writes all %d bins in place",
                      p->d, p->oz, p->oz + p->d - 1, p->n - p->d, p->n);
    else
        cg_value_line(h, "inverse: reads all %d bins, writes only signal planes %d..%d (the window) into the "
                         "workspace, unscaled, for the plane stage",
                      p->n, p->oz, p->oz + p->d - 1);
    if (p->sign < 0 && p->scale != 1.0f)
        cg_value_line(h, "scale: outputs multiplied by %.9g", (double)p->scale);
    if (p->sign < 0)
        cg_value_line(h, "order: blocks from the last volume back, which the plane stage wrote last: the first "
                         "blocks read it from the L2 cache");
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1)", k->grid[0], k->block[0]);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/fft/fft_depth.cu or generator/fft/fft_volume.c instead.");
    return h;
}

/* The depth kernel: forward in place in the output (in0 and out0 both the spectrum), inverse
 * from the spectrum (in0) to the workspace's d planes per entry (out0). */
static convgen_status depth_kernel(const cg_fft_problem *p, int64_t workspace_elements, cg_kernel *k)
{
    static const char *const types[] = {"c2c", "r2c", "c2r"};
    int64_t plane_bins = cg_fft_plane_bins(p), columns = p->count * plane_bins;
    reg_fft f;
    if (!cg_reg_fft(p->n, p->sign, &f))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "n = %d: no register FFT of that size", p->n);
    /* thread g < columns works column g: its volume by a multiply-and-shift, which 32 bits hold
     * for every g only up to a limit that depends on the divisor */
    tmpl_value *column_div = cg_value_magic((uint32_t)plane_bins, columns - 1);
    if (!column_div)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED,
                       "%lld volumes of n = %d: their %lld depth columns are past the depth pass's 32-bit index "
                       "division by %lld; plan fewer volumes at a time",
                       (long long)p->count, p->n, (long long)columns, (long long)plane_bins);
    snprintf(k->name, sizeof k->name, "convgen_%s3d%d_depth", types[p->type], p->n);
    k->grid[0] = (unsigned)((columns + DEPTH_THREADS - 1) / DEPTH_THREADS);
    k->grid[1] = k->grid[2] = 1;
    k->block[0] = DEPTH_THREADS;
    k->block[1] = k->block[2] = 1;
    k->shared_bytes = 0;

    tmpl_value *ctx = tmpl_map(), *zeros;
    tmpl_map_set(ctx, "header", depth_header(p, columns, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    cg_fft_side_context(ctx, p, p->count + 1, workspace_elements);
    tmpl_set_int(ctx, "threads", DEPTH_THREADS);
    tmpl_set_int(ctx, "min_blocks", p->n > DEPTH_SMALL_N ? 1 : 4);
    tmpl_set_int(ctx, "blocks", k->grid[0]);
    tmpl_set_bool(ctx, "reversed", p->sign < 0);
    tmpl_set_int(ctx, "n", p->n);
    tmpl_set_int(ctx, "columns", columns);
    tmpl_set_int(ctx, "plane_bins", plane_bins);
    tmpl_map_set(ctx, "column_div", column_div);
    tmpl_map_set(ctx, "src", strides(p->spectrum_stride[0], p->spectrum_stride[1]));
    tmpl_map_set(ctx, "dst", p->sign < 0 ? strides(p->spectrum_stride[0], p->spectrum_stride[1])
                                         : strides(p->channels * p->d * plane_bins, p->d * plane_bins));
    tmpl_map_set(ctx, "loads", load_list(p, &zeros));
    tmpl_map_set(ctx, "zeros", zeros);
    tmpl_map_set(ctx, "stores", store_list(p, &f));
    tmpl_map_set(ctx, "fft", cg_reg_fft_value(&f));
    if (p->sign > 0)
        tmpl_set_bool(ctx, "scaled_output", false); /* the plane stage scales */
    return cg_render_kernel("fft/fft_depth.cu", ctx, &k->source);
}

/* A kernel step on the plan's pointers, with some of them moved (base, byte offset); its op is
 * the stage's problem, for the CPU evaluation of programs (fft_op.c). */
static void kernel_step(cg_generated *out, int kernel, const cg_fft_problem *stage, const cg_arg args[4])
{
    cg_step *st = &out->steps[out->step_count++];
    memset(st, 0, sizeof *st);
    st->kind = CG_STEP_KERNEL;
    st->phase = 1;
    st->kernel = kernel;
    st->op = (cg_kernel_op){.kind = CG_OP_FFT, .fft = *stage};
    memcpy(st->args, args, sizeof st->args);
}

convgen_status cg_fft_volume_kernels(const cg_fft_problem *p, const cg_target *t, cg_generated *out)
{
    int64_t plane_bins = cg_fft_plane_bins(p), columns, planes, ws_planes = 0;
    if (!cg_mul64(p->count, plane_bins, &columns) || columns > (int64_t)UINT32_MAX - DEPTH_THREADS ||
        !cg_mul64(p->count, p->d, &planes) || planes > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED,
                       "%lld volumes of n = %d: at most 2^32 depth columns and 2^31 planes in one plan",
                       (long long)p->count, p->n);
    /* The inverse's depth pass leaves the window's planes in the workspace, 128-byte aligned
     * for the plane stage's own slots behind them. */
    if (p->sign > 0 && (!cg_mul64(planes, plane_bins, &ws_planes) || ws_planes > INT64_MAX / 8 - 16))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the workspace of the depth pass overflows 64 bits");
    int64_t ws_bytes = (ws_planes * 8 + 127) / 128 * 128;

    cg_fft_problem q;
    plane_problem(p, &q);
    cg_generated planes_gen;
    memset(&planes_gen, 0, sizeof planes_gen);
    convgen_status s = cg_fft_real_kernels(&q, t, &planes_gen);
    if (s != CONVGEN_SUCCESS) {
        cg_generated_free(&planes_gen);
        return s;
    }
    int plane_kernel = p->sign < 0 ? 0 : 1, depth = 1 - plane_kernel;
    out->kernels[plane_kernel] = planes_gen.kernels[0];
    planes_gen.kernels[0].source = NULL;
    int64_t plane_ws_bytes = planes_gen.workspace_bytes;
    cg_generated_free(&planes_gen);
    out->kernel_count = 2;
    if ((s = depth_kernel(p, ws_planes, &out->kernels[depth])) != CONVGEN_SUCCESS)
        return s;
    if (!cg_add64(ws_bytes, plane_ws_bytes, &out->workspace_bytes))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "the workspace overflows 64 bits");

    const cg_arg same = {CG_ARG_SAME, 0}, none = {CG_ARG_NULL, 0};
    const cg_arg plane_ws = {CG_ARG_WORKSPACE, ws_bytes}, depth_planes = {CG_ARG_WORKSPACE, 0};
    cg_fft_problem depth_stage = *p;
    depth_stage.depth_stage = true;
    out->chunks = 1;
    if (p->sign < 0) {
        kernel_step(out, plane_kernel, &q, (cg_arg[4]){same, none, same, plane_ws});
        kernel_step(out, depth, &depth_stage, (cg_arg[4]){{CG_ARG_OUT, 0}, none, same, none});
    } else {
        kernel_step(out, depth, &depth_stage, (cg_arg[4]){same, none, depth_planes, none});
        kernel_step(out, plane_kernel, &q, (cg_arg[4]){depth_planes, none, same, plane_ws});
    }
    return CONVGEN_SUCCESS;
}
