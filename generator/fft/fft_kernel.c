/* The 1-D C2C kernel (templates/fft/fft1d.cu) from an fft_plan, with the shared warp context of
 * fft_warp.c, and the entry points of the batched FFT family: cg_generate_fft and its plan. */
#include "fft_kernel.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft_warp.h"
#include "header.h"
#include "values.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"

enum { WARPS = 4 };

static tmpl_value *header_lines(const cg_fft_problem *pr, const fft_plan *p, const cg_kernel *k, bool exchange)
{
    char plan[160];
    fft_plan_describe(p, plan, sizeof plan);
    tmpl_value *h = cg_fft_header_open(pr);
    cg_value_line(h, "plan: radices %s, %s", plan, pr->sign < 0 ? "decimation in frequency" : "decimation in time");
    cg_value_line(h, "signal: %s, strides {%lld, %lld} (batch, channel)",
                  pr->sign < 0 ? "input, read with clipped loads (the rest of the signal is zero)"
                               : "output, written with clipped stores",
                  (long long)pr->real_stride[0], (long long)pr->real_stride[1]);
    cg_value_line(h, "spectrum: %s order%s, strides {%lld, %lld}", pr->natural ? "natural" : "digit-reversed",
                  exchange ? ", through shared memory so global accesses stay coalesced" : "",
                  (long long)pr->spectrum_stride[0], (long long)pr->spectrum_stride[1]);
    cg_value_line(h, "twiddles: %s", p->twiddle_reason);
    cg_value_line(h, "mapping: the most lanes dividing n that fit a warp and keep at least %d registers per lane "
                  "(fewer lane stages: fewer shuffles)",
                  fft_min_registers(p->n));
    if (pr->scale != 1.0f)
        cg_value_line(h, "scale: outputs multiplied by %.9g", (double)pr->scale);
    cg_value_line(h, "FLOPs: %.6g (5 n log2 n per transform)", 5.0 * pr->n * log2(pr->n) * (double)pr->count);
    cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1): %d warps, %d transform%s per warp", k->grid[0],
                  k->block[0], WARPS, p->per_warp, p->per_warp > 1 ? "s" : "");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/fft/fft1d.cu or generator/fft/fft_kernel.c instead.");
    return h;
}

static tmpl_value *context(const cg_fft_problem *pr, const fft_plan *p, const cg_kernel *k)
{
    tmpl_value *ctx = tmpl_map();
    /* Natural order scatters each lane's spectrum values: X[k] of neighbouring lanes lands
     * 8 * regs bytes apart. From 8 registers (64 B) each store touches a cache line per two
     * lanes; measured on the H100 at 128 MiB, n = 256 ran at 64% of copy bandwidth with direct
     * stores and 93% through shared memory (n = 243: 61% -> 80%), while the exchange cost
     * 5-11 points at n = 12, 49 and 100 and nothing elsewhere. */
    bool exchange = pr->natural && p->regs >= 8;
    tmpl_map_set(ctx, "header", header_lines(pr, p, k, exchange));
    tmpl_set_str(ctx, "kernel_name", k->name);
    cg_fft_warp_context(ctx, p, pr->sign);
    tmpl_set_int(ctx, "warps", WARPS);
    tmpl_set_int(ctx, "threads", WARPS * FFT_WARP);
    cg_fft_side_context(ctx, pr, pr->count + (int64_t)WARPS * p->per_warp + FFT_WARP, 0);
    tmpl_map_set(ctx, "xregs", cg_fft_window_registers(p, pr->ox, pr->w));
    /* The spectrum side is the forward transform's output and the inverse's input. */
    tmpl_map_set(ctx, "loads", cg_fft_register_indices(p, pr->natural));
    tmpl_map_set(ctx, "stores", cg_fft_register_indices(p, pr->natural));
    tmpl_set_bool(ctx, "exchange", exchange);
    int size = p->per_warp * p->n;
    tmpl_set_int(ctx, "exchange_size", size + size / 16 + 1);
    tmpl_set_bool(ctx, "packed_spectrum",
                  pr->spectrum_stride[1] == pr->n && pr->spectrum_stride[0] == pr->n * pr->channels);
    tmpl_map_set(ctx, "n_div", cg_value_magic((uint32_t)p->n, size + FFT_WARP));
    return ctx;
}

convgen_status cg_fft_c2c_kernel(const cg_fft_problem *pr, cg_kernel *out)
{
    fft_plan p;
    char err[128];
    memset(out, 0, sizeof *out);
    if (pr->type != CONVGEN_FFT_C2C || pr->rank != 1)
        return cg_fail(CONVGEN_ERROR_INTERNAL, "the 1-D C2C kernel got a rank %d, type %d problem", pr->rank,
                       (int)pr->type);
    if (!fft_plan_make(pr->n, pr->natural, &p, err, sizeof err))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s", err);
    int64_t per_block = (int64_t)WARPS * p.per_warp, blocks = (pr->count + per_block - 1) / per_block;
    snprintf(out->name, sizeof out->name, "convgen_fft%d_%s", pr->n, pr->sign < 0 ? "forward" : "inverse");
    out->grid[0] = (unsigned)blocks;
    out->grid[1] = out->grid[2] = 1;
    out->block[0] = WARPS * FFT_WARP;
    out->block[1] = out->block[2] = 1;
    tmpl_value *ctx = context(pr, &p, out);
    return cg_render_kernel("fft/fft1d.cu", ctx, &out->source);
}

convgen_status cg_generate_fft(const cg_fft_problem *p, const cg_target *target, cg_generated *out)
{
    memset(out, 0, sizeof *out);
    convgen_status s;
    if (p->type == CONVGEN_FFT_C2C && p->rank == 1) {
        s = cg_fft_c2c_kernel(p, &out->kernels[0]);
        out->kernel_count = s == CONVGEN_SUCCESS;
    } else if (p->rank == 3) {
        s = cg_fft_cube_applies(p, target) ? cg_fft_cube_kernel(p, target, out) : cg_fft_volume_kernels(p, target, out);
    } else {
        s = cg_fft_real_kernels(p, target, out);
    }
    if (s != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}
