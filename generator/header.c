/* What every emitted kernel's header says about where it came from: the layer, the pass, its
 * step of the program, its FLOPs and bytes, and the command that emits it again. Written here
 * once, from the data cg_generate_tuned was given, so no planner writes its own copy (genfft's
 * codelets open with their own command line the same way). */
#include "header.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost_model.h"
#include "op_kinds.h"
#include "util.h"

/* Whether the target's limits are the generator's defaults (an H100's, what `convgen emit`
 * assumes without --arch): only then may the command leave --arch out. */
static bool default_target(const cg_target *t)
{
    return cg_target_shared_per_block(t) == 227 * 1024 && cg_target_shared_per_sm(t) == 228 * 1024 &&
           (t->max_cluster == 0 || t->max_cluster == 8);
}

void cg_emit_command(const cg_problem *p, convgen_pass pass, convgen_algo algo, const cg_target *t,
                     const cg_tuning *tune, int kernel, char *buf, size_t size)
{
    cg_buf b = {0};
    char dims[64], layer[1024];
    cg_buf_printf(&b, "convgen emit --algo %s", convgen_algo_name(algo));
    /* The knobs' values as the variant strings write them, which the CLI's options read too:
     * sizes fixed along some dimensions, 0 along those left to the planner ("--tile 0x4") */
    static const struct {
        const char *option;
        void (*print)(const cg_tuning *t, int rank, char *buf, size_t size);
    } knobs[] = {{"--fourier", cg_fourier_print}, {"--tile", cg_tile_print}, {"--gemm", cg_gemm_print},
                 {"--weights", cg_weights_print}};
    for (size_t i = 0; tune && i < sizeof knobs / sizeof knobs[0]; ++i) {
        knobs[i].print(tune, p->rank, dims, sizeof dims);
        if (dims[0])
            cg_buf_printf(&b, " %s %s", knobs[i].option, dims);
    }
    if (tune && tune->tf32)
        cg_buf_puts(&b, " --tf32");
    if (tune && tune->workspace_limit > 0)
        cg_buf_printf(&b, " --workspace-limit %lld", (long long)tune->workspace_limit);
    if (t->sm_count > 0 && t->sm_count != CG_DEFAULT_SMS)
        cg_buf_printf(&b, " --sms %d", t->sm_count);
    if (!default_target(t) && t->arch[0])
        cg_buf_printf(&b, " --arch %s", t->arch);
    cg_problem_describe(p, layer, sizeof layer);
    cg_buf_printf(&b, " --pass %s", convgen_pass_name(pass));
    if (kernel >= 0)
        cg_buf_printf(&b, " --kernel %d", kernel);
    cg_buf_printf(&b, " %s", layer);
    snprintf(buf, size, "%s", b.data ? b.data : "");
    cg_buf_free(&b);
}

/* The header lines of kernel i: "layer:", "pass:", "FLOPs:", "emitted by:". */
static void identity_lines(const cg_generated *g, int i, const cg_target *t, const cg_tuning *tune, cg_buf *b)
{
    char layer[1024], command[2048];
    cg_conv_kind.describe(&g->problem, layer, sizeof layer);
    cg_buf_printf(b, " * layer: %s (n c k input kernel pad stride)\n", layer);
    double flops = 0, bytes = 0;
    const char *what = "implicit GEMM";
    int step = -1;
    for (int s = 0; s < g->step_count; ++s)
        if (g->steps[s].kind == CG_STEP_KERNEL && g->steps[s].kernel == i)
            step = s;
    if (step >= 0) {
        cg_work w = cg_step_work(&g->steps[step], t->sm_count);
        flops = w.flops, bytes = w.bytes;
        what = cg_op_describe(&g->steps[step].op);
        cg_buf_printf(b, " * pass: %s, kernel %d of %d, step %d of %d: %s\n", convgen_pass_name(g->pass), i + 1,
                      g->kernel_count, step + 1, g->step_count, what);
    } else {
        /* a program of kernels only (direct): the first computes the pass (after one that lays the
           weights out, if any), a second sums its splits */
        const int computes = g->kernel_count > 1 && g->kernels[0].weights_only ? 1 : 0;
        what = g->kernels[i].what ? g->kernels[i].what
               : i == computes    ? "implicit GEMM"
                                  : "sum of the split reduction's partial results";
        flops = i == computes ? cg_problem_flops(&g->problem) : (double)g->workspace_bytes / 4;
        cg_buf_printf(b, " * pass: %s, kernel %d of %d: %s\n", convgen_pass_name(g->pass), i + 1, g->kernel_count, what);
    }
    cg_buf_printf(b, " * FLOPs: %.4g", flops);
    if (bytes > 0)
        cg_buf_printf(b, ", %.4g bytes read and written", bytes);
    cg_buf_printf(b, " (the pass as a convolution: %.4g = 2 n c k prod(kernel) prod(out))\n", cg_problem_flops(&g->problem));
    cg_emit_command(&g->problem, g->pass, g->algo, t, tune, i, command, sizeof command);
    cg_buf_printf(b, " * emitted by: %s\n", command);
}

void cg_fft_emit_command(const cg_fft_problem *p, int kernel, char *buf, size_t size)
{
    static const char *const types[] = {"c2c", "r2c", "c2r"};
    char type[16];
    snprintf(type, sizeof type, "%s%s", types[p->type],
             p->type != CONVGEN_FFT_C2C ? "" : p->sign < 0 ? "-forward" : "-inverse");
    cg_buf b = {0};
    cg_buf_printf(&b, "convgen emit --algo fft --type %s --rank %d --n %d --batch %lld --channels %lld", type, p->rank,
                  p->n, (long long)p->batch, (long long)p->channels);
    if (p->rank == 3)
        cg_buf_printf(&b, " --window %dx%dx%d --offset %dx%dx%d --pitch %lld --plane-pitch %lld", p->d, p->h, p->w,
                      p->oz, p->oy, p->ox, (long long)p->pitch, (long long)p->plane_pitch);
    else if (p->rank == 2)
        cg_buf_printf(&b, " --window %dx%d --offset %dx%d --pitch %lld", p->h, p->w, p->oy, p->ox, (long long)p->pitch);
    else
        cg_buf_printf(&b, " --window %d --offset %d", p->w, p->ox);
    cg_buf_printf(&b, " --real-stride %lldx%lld --spectrum-stride %lldx%lld", (long long)p->real_stride[0],
                  (long long)p->real_stride[1], (long long)p->spectrum_stride[0], (long long)p->spectrum_stride[1]);
    if (p->rank >= 2)
        cg_buf_printf(&b, " --layout %s", p->transposed ? "transposed" : "natural");
    cg_buf_printf(&b, " --order %s --scale %.9g", p->natural ? "natural" : "reversed", (double)p->scale);
    if (kernel >= 0)
        cg_buf_printf(&b, " --kernel %d", kernel);
    snprintf(buf, size, "%s", b.data ? b.data : "");
    cg_buf_free(&b);
}

/* `lines` after the title line of a kernel's header comment (or as a comment of their own). */
static convgen_status insert_lines(cg_kernel *k, const char *lines)
{
    char *src = k->source;
    const char *title = strncmp(src, "/*\n", 3) == 0 ? strchr(src + 3, '\n') : NULL;
    size_t at = title ? (size_t)(title + 1 - src) : 0;
    cg_buf b = {0};
    cg_buf_append(&b, src, at);
    cg_buf_puts(&b, title ? "" : "/*\n");
    cg_buf_puts(&b, lines);
    cg_buf_puts(&b, title ? "" : " */\n");
    cg_buf_puts(&b, src + at);
    char *stamped = cg_buf_take(&b);
    if (!stamped)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory writing kernel %s's header", k->name);
    free(src);
    k->source = stamped;
    return CONVGEN_SUCCESS;
}

convgen_status cg_stamp_fft_headers(cg_generated *g, const cg_fft_problem *p)
{
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < g->kernel_count && s == CONVGEN_SUCCESS; ++i) {
        char command[1024], line[1100];
        cg_fft_emit_command(p, i, command, sizeof command);
        snprintf(line, sizeof line, " * emitted by: %s\n", command);
        s = g->kernels[i].source ? insert_lines(&g->kernels[i], line) : s;
    }
    return s;
}

convgen_status cg_stamp_headers(cg_generated *g, const cg_target *t, const cg_tuning *tune)
{
    convgen_status s = CONVGEN_SUCCESS;
    for (int i = 0; i < g->kernel_count && s == CONVGEN_SUCCESS; ++i) {
        if (!g->kernels[i].source)
            continue;
        cg_buf b = {0};
        identity_lines(g, i, t, tune, &b);
        s = b.oom ? cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory writing kernel %d's header", i)
                  : insert_lines(&g->kernels[i], b.data);
        cg_buf_free(&b);
    }
    return s;
}
