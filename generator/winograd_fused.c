/* The winograd-fused algorithm (issue 6, the fused kernel): winograd's fprop in one kernel per
 * block of tiles (generator/winograd.c has the non-fused program and the pieces both share).
 * Each block takes FUSED_TILES tiles x FUSED_OUTPUTS output channels and loops over the input
 * channels in chunks of FUSED_CHANNELS: the chunk's tiles are transformed into shared memory,
 * the weights' transforms (made once, phase 0, as in winograd) loaded beside them, and each
 * thread accumulates one element's 8 x 8 block of products in registers; at the end the
 * products go through shared memory and AT into y. The data's and the products' transforms
 * never reach global memory, at the price of reading the weights' transforms once per block of
 * tiles. 8 threads per element, up to 36 elements (alpha up to 6: F(4,3), F(2,5)), up to 288
 * threads; at 512 threads (alpha 8) the 128 registers a thread may have spill the 64 sums. */
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "templates.h"
#include "tmpl.h"
#include "util.h"
#include "winograd_plan.h"

enum { FUSED_TILES = 16, FUSED_OUTPUTS = 32, FUSED_CHANNELS = 8, FUSED_MAX_ELEMENTS = 36,
       FUSED_MAX_ALPHA = 6 /* 8 threads per element: 288 threads, whose 224 registers hold the 64 sums */ };


static convgen_status fused_applicable(const cg_problem *p, convgen_pass pass)
{
    convgen_status st = wino_applicable(p, pass);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (pass != CONVGEN_FPROP)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: fprop only (bprop and accgrad: winograd)");
    if (p->rank != 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: rank %d: 2-D layers only", p->rank);
    for (int d = 0; d < 2; ++d)
        if (p->kernel[d] < 2 || p->kernel[d] > FUSED_MAX_ALPHA - 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: kernel[%d] = %lld: kernels 2 to %d", d,
                           (long long)p->kernel[d], FUSED_MAX_ALPHA - 1);
    return CONVGEN_SUCCESS;
}

static tmpl_value *fused_context(const cg_problem *p, const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                                 bool *failed)
{
    int64_t tile_count = s->tiles[0] * s->tiles[1];
    tmpl_value *ctx = tmpl_map(), *h = wino_header_lines(p, s, k, op, "the fused kernel: x's tiles, the products, y");
    tmpl_map_set(ctx, "header", h);
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", k->block[0]);
    tmpl_set_int(ctx, "tile_block", FUSED_TILES);
    tmpl_set_int(ctx, "k_block", FUSED_OUTPUTS);
    tmpl_set_int(ctx, "k_shift", 2); /* log2(FUSED_OUTPUTS / 8) */
    tmpl_set_int(ctx, "c_block", FUSED_CHANNELS);
    tmpl_set_int(ctx, "elements", s->elements);
    tmpl_set_int(ctx, "columns", s->columns);
    tmpl_set_int(ctx, "tiles", tile_count);
    tmpl_set_int(ctx, "tiles1", s->tiles[1]);
    tmpl_set_int(ctx, "channels", p->c);
    tmpl_set_int(ctx, "outputs", p->k);
    tmpl_set_int(ctx, "height", s->in[0]);
    tmpl_set_int(ctx, "width", s->in[1]);
    tmpl_set_int(ctx, "out_height", s->out[0]);
    tmpl_set_int(ctx, "out_width", s->out[1]);
    tmpl_set_bool(ctx, "out_checked", s->out[0] % s->m[0] != 0 || s->out[1] % s->m[1] != 0);
    tmpl_set_int(ctx, "u_buffer", op->weights / 4);
    const char *names[2][2] = {{"bt0", "bt1"}, {"at0", "at1"}};
    for (int d = 0; d < 2; ++d) {
        char key[16];
        int inputs, outputs;
        tmpl_map_set(ctx, names[0][d], wino_matrix_program(&s->tf[d], 'B', &inputs, &outputs));
        snprintf(key, sizeof key, "alpha%d", d);
        tmpl_set_int(ctx, key, outputs);
        tmpl_map_set(ctx, names[1][d], wino_matrix_program(&s->tf[d], 'A', &inputs, &outputs));
        snprintf(key, sizeof key, "m%d", d);
        tmpl_set_int(ctx, key, outputs);
        snprintf(key, sizeof key, "step%d", d);
        tmpl_set_int(ctx, key, s->m[d]);
        snprintf(key, sizeof key, "offset%d", d);
        tmpl_set_int(ctx, key, s->pad[d]);
    }
    /* tiles are checked against the column count before these divisions */
    *failed |= !wino_set_div(ctx, "tiles_div", tile_count, s->columns - 1) | !wino_set_div(ctx, "tiles1_div", s->tiles[1], tile_count - 1);
    return ctx;
}

static convgen_status fused_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                     const cg_tuning *tune, cg_generated *out)
{
    (void)t;
    wino_spec s;
    convgen_status st = wino_choose_tiles(p, pass, tune, FUSED_MAX_ALPHA, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (s.elements > FUSED_MAX_ELEMENTS) /* a fixed tile only: the default stays within */
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: F(%dx%d, %lldx%lld) has %lld transform elements; "
                       "the fused kernel takes up to %d", s.m[0], s.m[1], (long long)s.kernel[0],
                       (long long)s.kernel[1], (long long)s.elements, FUSED_MAX_ELEMENTS);
    /* The batch in one go; the workspace holds only the weights' transforms [e][c][k]. */
    if (!wino_size_buffers(p, p->n, &s))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: this layer's planes or tiles pass the kernels' "
                                                    "32-bit indices");
    s.workspace = wino_align_up(s.matrix[WINO_U] * s.elements * 4);
    s.algo = "winograd-fused";
    snprintf(s.plan[0], sizeof s.plan[0], "in one kernel (G w G^T made");
    snprintf(s.plan[1], sizeof s.plan[1],
             "once before it): blocks of %d tiles x %d output channels, the channels in chunks of %d, %lld transform "
             "elements, %lld tiles", FUSED_TILES, FUSED_OUTPUTS, FUSED_CHANNELS, (long long)s.elements,
             (long long)s.columns);
    out->workspace_bytes = s.workspace;
    out->chunks = 1;
    const int64_t one[2] = {1, 1}, none[2] = {0, 0};
    cg_wino_op w = wino_tiles_op(&s, 'G', p->k, p->c, s.kernel, one, none, none, WINO_U);
    w.flip = p->flip;
    st = wino_add_transform(p, &s, &w, 1, 0, "transform_w", "the transforms of w", out);
    if (st != CONVGEN_SUCCESS)
        return st;

    const int64_t m[2] = {s.m[0], s.m[1]}, plane = s.out[0] * s.out[1];
    cg_wino_op f = wino_tiles_op(&s, 'B', p->n, p->c, s.in, s.tiles, m, s.pad, WINO_V);
    f.matrix = 'F';
    f.rows = p->k, f.weights = s.buffer[WINO_U], f.outer_stride = p->k * plane, f.row_stride = plane;
    f.out_size[0] = s.out[0], f.out_size[1] = s.out[1];
    cg_step *step = &out->steps[out->step_count++];
    memset(step, 0, sizeof *step);
    step->kind = CG_STEP_KERNEL;
    step->phase = 1;
    step->kernel = out->kernel_count++;
    step->op.kind = CG_OP_WINOGRAD;
    step->op.wino = f;
    cg_kernel *k = &out->kernels[step->kernel];
    snprintf(k->name, sizeof k->name, "convgen_winograd_fused_fprop");
    k->grid[0] = (unsigned)wino_div_up(s.columns, FUSED_TILES);
    k->grid[1] = (unsigned)wino_div_up(p->k, FUSED_OUTPUTS);
    k->grid[2] = 1;
    k->block[0] = (unsigned)(8 * s.elements);
    k->block[1] = k->block[2] = 1;
    /* the larger of one chunk's transforms and the products */
    k->shared_bytes = (unsigned)(4 * s.elements * FUSED_TILES * FUSED_OUTPUTS);
    if (k->grid[1] > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: k = %lld needs more than 65535 blocks of %d",
                       (long long)p->k, FUSED_OUTPUTS);
    bool failed = false;
    tmpl_value *ctx = fused_context(p, &s, k, &f, &failed);
    st = failed          ? CONVGEN_ERROR_INTERNAL
         : tmpl_ok(ctx) ? cg_render_template("winograd_fused.cu", ctx, &k->source)
                        : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory building a winograd-fused context");
    tmpl_unref(ctx);
    return st;
}

const cg_planner cg_winograd_fused_planner = {
    .algo = CONVGEN_ALGO_WINOGRAD_FUSED,
    .name = "winograd-fused",
    .applicable = fused_applicable,
    .generate = fused_generate,
};
