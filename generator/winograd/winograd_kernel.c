/* The pieces every Winograd kernel's generator shares (winograd.c, winograd_volume.c,
 * winograd_fused.c): the header comment, the matrices as programs and terms, magic divisions,
 * the workspace's alignment and the kernel steps. */
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "util.h"
#include "values.h"
#include "winograd_plan.h"
#include "winograd_program.h"

enum { ALIGN = 256 /* workspace buffers start on this boundary, as cuBLAS wants */ };

int64_t wino_align_up(int64_t bytes) { return (bytes + ALIGN - 1) / ALIGN * ALIGN; }
int64_t wino_div_up(int64_t a, int64_t b) { return (a + b - 1) / b; }

static const char *const operand_names[3][3] = {{"x", "w", "y"}, {"dy", "w", "dx"}, {"x", "dy", "dw"}};

const char *const *wino_operand_names(convgen_pass pass) { return operand_names[pass]; }

/* The 1-D transform of a dimension: its matrix as straight-line statements. */
tmpl_value *wino_matrix_program(const wino_transform *t, cg_wino_stage matrix, int *inputs, int *outputs)
{
    wino_program prog;
    const cg_q(*rows)[WINO_MAX_ALPHA] = wino_matrix_rows(t, matrix, outputs, inputs);
    wino_program_build(rows, *outputs, *inputs, &prog);
    return wino_program_value(&prog, "in", "p");
}

/* "BT of F(4,3): alpha 6, points 0, 1, -1, 1/2, -1/2, inf (20 additions, 8 multiplications)". */
void wino_describe_matrix(const wino_transform *t, cg_wino_stage matrix, char *buf, size_t size)
{
    char f[160];
    wino_program prog;
    int nr, nc;
    const cg_q(*rows)[WINO_MAX_ALPHA] = wino_matrix_rows(t, matrix, &nr, &nc);
    wino_program_build(rows, nr, nc, &prog);
    wino_describe(t, f, sizeof f);
    snprintf(buf, size, "%s of %s (%d additions, %d multiplications)",
             matrix == CG_WINO_AT ? "AT" : matrix == CG_WINO_G ? "G" : "BT", f, prog.adds, prog.multiplies);
}

int wino_op_matrices(const cg_wino_op *op, const cg_wino_stage **matrices)
{
    static const cg_wino_stage forward[] = {CG_WINO_BT, CG_WINO_AT}, three[] = {CG_WINO_BT, CG_WINO_G, CG_WINO_AT};
    if (op->stage == CG_WINO_FUSED_ACCGRAD || (op->stage == CG_WINO_FUSED && op->weights_inside))
        return *matrices = three, 3;
    *matrices = op->stage == CG_WINO_FUSED ? forward : &op->stage;
    return op->stage == CG_WINO_FUSED ? 2 : op->stage == CG_WINO_SUM ? 0 : 1;
}

/* One line per row of a matrix, for the header: "  [ 1 0 -21/4 ... ]". */
static void matrix_lines(tmpl_value *h, const wino_transform *t, cg_wino_stage matrix)
{
    int nr, nc;
    const cg_q(*rows)[WINO_MAX_ALPHA] = wino_matrix_rows(t, matrix, &nr, &nc);
    for (int i = 0; i < nr; ++i) {
        char line[512];
        int used = snprintf(line, sizeof line, "  [");
        for (int j = 0; j < nc && used > 0 && (size_t)used < sizeof line; ++j)
            used += rows[i][j].den == 1
                        ? snprintf(line + used, sizeof line - (size_t)used, " %lld", (long long)rows[i][j].num)
                        : snprintf(line + used, sizeof line - (size_t)used, " %lld/%lld", (long long)rows[i][j].num,
                                   (long long)rows[i][j].den);
        cg_value_line(h, "%s ]", line);
    }
}

tmpl_value *wino_header_lines(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                              const char *what)
{
    char text[200];
    tmpl_value *h = tmpl_list();
    bool fused = strcmp(s->algo, "winograd") != 0;
    bool fused_kernel = op->stage == CG_WINO_FUSED || op->stage == CG_WINO_FUSED_ACCGRAD;
    bool volume = wino_volume_tiles(s, op);
    const char *template = op->stage == CG_WINO_FUSED && op->cluster ? "winograd/winograd_fused_cluster.cu"
                           : op->stage == CG_WINO_FUSED           ? "winograd/winograd_fused.cu"
                           : op->stage == CG_WINO_FUSED_ACCGRAD ? "winograd/winograd_fused_accgrad.cu"
                           : op->stage == CG_WINO_SUM           ? "split_reduce.cu"
                           : volume                             ? "winograd/winograd_volume.cu"
                                                                : "winograd/winograd.cu";
    cg_value_line(h, "convgen %s: %s%s algorithm, %s: %s", CG_GENERATOR_VERSION, s->algo, fused ? "" : " (non-fused)",
                  convgen_pass_name(s->pass), what);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "plan: %s = AT [ sum of (G %s G^T) . (BT %s B) ] A per tile, the sum %s", operand_names[s->pass][2],
                  s->pass == CONVGEN_ACCGRAD ? "dy" : "w", s->pass == CONVGEN_BPROP ? "dy" : "x", s->plan[0]);
    cg_value_line(h, "  %s", s->plan[1]);
    if (s->chunks > 1)
        cg_value_line(h, "sub-batches: %lld of %lld images (the workspace limit)", (long long)s->chunks,
                      (long long)s->batch);
    const cg_wino_stage *matrices;
    int count = wino_op_matrices(op, &matrices);
    for (int d = s->first; d < CG_WINO_DIMS; ++d)
        for (int i = 0; i < count; ++i) {
            wino_describe_matrix(&s->tf[d], matrices[i], text, sizeof text);
            cg_value_line(h, "dimension %d: %lld tiles, %s:", d - s->first, (long long)op->tiles[d], text);
            matrix_lines(h, &s->tf[d], matrices[i]);
        }
    if (op->cluster)
        cg_value_line(h, "launch: grid (%u, %u, %u) in clusters of %d along x, block (%u, 1, 1), %u bytes of dynamic "
                         "shared memory", k->grid[0], k->grid[1], k->grid[2], op->cluster, k->block[0], k->shared_bytes);
    else
        cg_value_line(h, "launch: grid (%u, %u, %u), block (%u, 1, 1)%s", k->grid[0], k->grid[1], k->grid[2],
                      k->block[0], fused_kernel || op->stage == CG_WINO_SUM ? ""
                      : volume ? ": one block per brick (whole rows of tiles at one tile along the depth, of one volume)"
                               : ": one thread per tile");
    if (!fused)
        cg_value_line(h, "workspace: %lld bytes (the transforms at bytes %lld, %lld and %lld)", (long long)s->workspace,
                      (long long)s->buffer[0], (long long)s->buffer[1], (long long)s->buffer[2]);
    if (!fused && op->splits > 1)
        cg_value_line(h, "  the products in %lld runs of the sum, %lld floats apart, added here", (long long)op->splits,
                      (long long)op->partial);
    if (!fused && op->pieces.rows)
        cg_value_line(h, "  these transforms in the tensor-core GEMM's pieces: [e][row / %lld][sum / 16][wgmma's core "
                      "matrices of %lld rows x 16 of the sum]%s, the rows %s, the sum %s", (long long)op->pieces.rows,
                      (long long)op->pieces.rows, op->pieces.lo ? ", each piece followed by its lo halves (3xTF32)" : "",
                      op->channel_rows ? "the channels" : op->stage == CG_WINO_G ? "the pass's output channels" : "(image, tile)",
                      op->channel_rows ? "over (image, tile)" : "over the channels");
    if (fused && op->u_fragments)
        cg_value_line(h, "workspace: %lld bytes (the weights' transforms, blocked: [e][output / %lld][channel / 8][the "
                      "mma's B fragments of 8 channels x %lld])", (long long)s->workspace, (long long)op->u_rows,
                      (long long)op->u_rows);
    else if (fused && op->u_rows)
        cg_value_line(h, "workspace: %lld bytes (the weights' transforms, blocked: [e][output / %lld][channel][%lld])",
                      (long long)s->workspace, (long long)op->u_rows, (long long)op->u_rows);
    else if (fused)
        cg_value_line(h, "workspace: %lld bytes (%s)", (long long)s->workspace,
                      s->pass != CONVGEN_ACCGRAD ? "the weights' transforms" : s->workspace ? "the runs' partial dw"
                                                                                           : "none: one run of tiles");
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/%s or generator/winograd/winograd%s.c instead.", template,
                  fused ? "_fused" : volume ? "_volume" : "");
    return h;
}

/* Sets key to the magic division by d over [0, max_dividend]; false if it could not be made. */
bool wino_set_div(tmpl_value *ctx, const char *key, int64_t d, int64_t max_dividend)
{
    tmpl_value *v = cg_value_magic((uint32_t)d, max_dividend);
    tmpl_map_set(ctx, key, v);
    return v != NULL;
}

/* The terms of `matrix` along the depth of op, row by row ([[{slice, negative, unit, magnitude}]],
 * `by_column` false: the tile kernels combine a volume tile's slices by one row) or column by
 * column ([[{row, ...}]], `by_column` true: the output kernel adds each element slice, as it
 * comes, into every output plane whose row of AT uses it). */
tmpl_value *wino_depth_terms(const wino_transform *t, cg_wino_stage matrix, bool by_column)
{
    int nr, nc;
    const cg_q(*rows)[WINO_MAX_ALPHA] = wino_matrix_rows(t, matrix, &nr, &nc);
    tmpl_value *list = tmpl_list();
    for (int i = 0; i < (by_column ? nc : nr); ++i) {
        tmpl_value *terms = tmpl_list();
        for (int j = 0; j < (by_column ? nr : nc); ++j) {
            cg_q c = by_column ? rows[j][i] : rows[i][j];
            if (c.num == 0)
                continue;
            tmpl_value *term = wino_coef_value(c);
            tmpl_set_int(term, by_column ? "row" : "slice", j);
            tmpl_list_push(terms, term);
        }
        tmpl_list_push(list, terms);
    }
    return list;
}

cg_kernel *wino_add_kernel_step(const cg_kernel_op *op, int phase, cg_generated *out)
{
    cg_step *st = &out->steps[out->step_count++];
    *st = (cg_step){.kind = CG_STEP_KERNEL, .phase = phase, .kernel = out->kernel_count++, .op = *op};
    cg_kernel *k = &out->kernels[st->kernel];
    k->grid[0] = k->grid[1] = k->grid[2] = 1;
    k->block[0] = k->block[1] = k->block[2] = 1;
    return k;
}

void wino_plane_keys(tmpl_value *ctx, const wino_spec *s, const cg_wino_op *op)
{
    for (int d = 1; d < CG_WINO_DIMS; ++d) {
        int inputs, outputs;
        char key[16], describe[200];
        snprintf(key, sizeof key, "prog%d", d - 1);
        tmpl_map_set(ctx, key, wino_matrix_program(&s->tf[d], op->stage, &inputs, &outputs));
        snprintf(key, sizeof key, "span%d", d - 1);
        tmpl_set_int(ctx, key, inputs);
        snprintf(key, sizeof key, "outs%d", d - 1);
        tmpl_set_int(ctx, key, outputs);
        wino_describe_matrix(&s->tf[d], op->stage, describe, sizeof describe);
        snprintf(key, sizeof key, "describe%d", d - 1);
        tmpl_set_str(ctx, key, describe);
    }
}

bool wino_volume_tiles(const wino_spec *s, const cg_wino_op *op)
{
    return s->first == 0 && (op->stage == CG_WINO_BT || op->stage == CG_WINO_G) &&
           op->tiles[0] * op->tiles[1] * op->tiles[2] > 1;
}
