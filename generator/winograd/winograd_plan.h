/* The winograd planners' shared pieces (generator/winograd/winograd.c, used by winograd_fused.c too): the
 * layer seen in 3-D, its tiles and their exact transforms, the workspace buffers, the transform
 * steps and the kernels' header comment. Internal to the generator; the planners are the public
 * side (generate.c). */
#ifndef CG_WINOGRAD_PLAN_H
#define CG_WINOGRAD_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "gemm_tc.h"
#include "generate.h"
#include "template/tmpl.h"
#include "winograd_transform.h"

enum {
    WINO_MAX_KERNEL = 7,        /* F(2, 7) has alpha 8; larger kernels are the FFT algorithms' */
    WINO_MAX_DEFAULT_ALPHA = 8, /* the default tiles' bound, for fp32 errors near 1e-6 */
    WINO_MAX_VOLUME_ALPHA = 6,  /* a 3-D layer's: F(4, 3) in each of three dimensions */
    WINO_TC_RUN = 2048,         /* the most one run of the tensor GEMM sums: accgrad's tiles, fprop's channels */
    WINO_TC_MIN_RUN = 256,      /* the fewest it cuts a run to for more blocks (16 steps of the sum) */
    WINO_TC_MAX_SUMMED = 4096,  /* the most products (elements x runs) the output transform adds a tile */
};

/* The workspace buffers of the transforms, each [e][rows][columns]: the weights' (accgrad: dy's)
 * U, the data's V, and their products M. */
enum { WINO_U = 0, WINO_V = 1, WINO_M = 2 };

/* The layer in 3-D, depth first (a 2-D layer as 1 x h x w, a 1-D one as 1 x 1 x n, with F(1, 1)
 * along the dimensions it lacks), and the program's choices. */
typedef struct wino_spec {
    const char *algo;      /* "winograd" or "winograd-fused", for the headers */
    char plan[2][256];     /* the header's two lines on how the products are summed */
    convgen_pass pass;
    int first;             /* the first dimension the headers name: 0 for a 3-D layer, else 1 */
    int64_t in[CG_WINO_DIMS], kernel[CG_WINO_DIMS], out[CG_WINO_DIMS], pad[CG_WINO_DIMS];
    int m[CG_WINO_DIMS];             /* fprop, bprop: output tile; accgrad: dy tile */
    wino_transform tf[CG_WINO_DIMS]; /* per dimension: F(m, r), accgrad F(r, m) */
    int64_t tiles[CG_WINO_DIMS];     /* tiles per volume along each dimension */
    int64_t elements;                /* alpha0 alpha1 alpha2: the GEMMs of a product */
    int64_t batch, chunks; /* images per sub-batch, and their number */
    int64_t columns;       /* batch x tiles: the GEMMs' tile dimension */
    int64_t buffer[3];     /* byte offsets of WINO_U, WINO_V and WINO_M */
    int64_t matrix[3];     /* floats per element in each: one element's matrix */
    int64_t workspace;
    int sm_count;          /* the multiprocessors a split was sized for (the header's --sms); 0: none */
    bool generated_gemm;   /* the products by convgen's GEMM (gemm.c) rather than cuBLAS */
    bool tensor_gemm;      /* ... by its tensor-core form (gemm_tc.c, sm_90), generated_gemm's layout */
    cg_tc_pieces pieces[2]; /* U and V in that kernel's pieces, where the tensor GEMM reads them so */
    bool dy_rows;           /* accgrad on it: dy's tiles op(A) (k its rows), x's op(B) (set_pieces) */
    int64_t splits;         /* on it: the runs its sum is cut into, M one a run (tensor_splits) */
    const cg_target *target; /* what the kernels are for (the tensor-core GEMM's shared memory) */
    unsigned epilogue;     /* fprop: the layer's CG_EPILOGUE_* bits, which the kernel storing y applies */
} wino_spec;

int64_t wino_align_up(int64_t bytes); /* to the workspace buffers' 256-byte boundary */
int64_t wino_div_up(int64_t a, int64_t b);

/* Stride 1, dilation 1, kernels up to WINO_MAX_KERNEL; the message names the field. */
convgen_status wino_applicable(const cg_problem *p, convgen_pass pass);
/* The problem in 3-D, the tiles (options->winograd_m, else the fewest transform elements with
 * alpha <= max_alpha) and their transforms. */
convgen_status wino_choose_tiles(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, int max_alpha,
                                 wino_spec *s);
/* AUTO's candidates of winograd and winograd-fused (cg_planner.variants): at EXHAUSTIVE, unless
 * the caller fixed a tile, F(m, r) for every m from 2 with m + r - 1 <= WINO_MAX_DEFAULT_ALPHA
 * (3-D layers: WINO_MAX_VOLUME_ALPHA) for the largest kernel extent r (m along each dimension the kernel spans); else the caller's
 * tile or the default one. Each by both GEMMs where `by_gemm` and the caller fixed neither the
 * GEMM nor TF32. */
int wino_variants(const cg_problem *p, int effort, const cg_tuning *fixed, bool by_gemm, cg_tuning *out, int max);
/* The same over the problem's dimensions from `first` on (the others' tiles left as fixed), m + r -
 * 1 <= max_alpha for their largest kernel extent r. */
int wino_tile_variants(const cg_problem *p, int effort, const cg_tuning *fixed, bool by_gemm, int first,
                       int max_alpha, cg_tuning *out, int max);
/* The buffers U (or D), V and M for sub-batches of `batch` images; false where a size passes the
 * kernels' 32-bit indices or cuBLAS's 32-bit sizes. */
bool wino_size_buffers(const cg_problem *p, int64_t batch, wino_spec *s);

/* The weights' transforms blocked (cg_wino_op's u_rows): `channels` padded to a multiple of
 * u_channels. */
static inline int64_t wino_u_channels(const cg_wino_op *op, int64_t channels)
{
    return wino_div_up(channels, op->u_channels) * op->u_channels;
}
/* The floats of one element of the weights' transforms of `channels` x `rows`, plain or blocked,
 * and where (channel c, row r) lies in it. */
static inline int64_t wino_u_floats(const cg_wino_op *op, int64_t channels, int64_t rows)
{
    return op->u_rows ? wino_u_channels(op, channels) * wino_div_up(rows, op->u_rows) * op->u_rows : channels * rows;
}
/* The position of row r (an output, the mma's N) and channel c (its K) of 8 channels x u_rows in
 * the tensor cores' B fragments (m16n8k8), two n-tiles a lane's float4: n-tiles 2 p and 2 p + 1
 * (p = r / 16), lane 4 g + t, value v of b0 b1 of n-tile 2 p, then of 2 p + 1 = (output g,
 * channel t), (g, t + 4), (g + 8, t), (g + 8, t + 4) of the 16. */
static inline int64_t wino_u_fragment(int64_t r, int64_t c)
{
    const int64_t p = r / 16, g = r % 8, h = r % 16 / 8, t = c % 4, v = 2 * h + c / 4;
    return (p * 32 + 4 * g + t) * 4 + v;
}
static inline int64_t wino_u_at(const cg_wino_op *op, int64_t channels, int64_t rows, int64_t c, int64_t r)
{
    if (!op->u_rows)
        return c * rows + r;
    const int64_t run = r / op->u_rows * wino_u_channels(op, channels);
    return op->u_fragments ? (run + c / 8 * 8) * op->u_rows + wino_u_fragment(r % op->u_rows, c % 8)
                           : (run + c) * op->u_rows + r % op->u_rows;
}

/* The positions of one element of op's transforms in the tensor GEMM's pieces (op->pieces.rows >
 * 0): (outer, tile) the rows and the channels the sum, or the other way round (op->channel_rows). */
static inline int64_t wino_pieces_positions(const cg_wino_op *op)
{
    const int64_t columns = op->outer * op->tiles[0] * op->tiles[1] * op->tiles[2];
    return op->channel_rows ? cg_tc_positions(op->pieces, op->channels, columns)
                            : cg_tc_positions(op->pieces, columns, op->channels);
}

/* The floats they take: twice the positions where each piece carries its lo halves. */
static inline int64_t wino_pieces_floats(const cg_wino_op *op)
{
    return wino_pieces_positions(op) * (op->pieces.lo ? 2 : 1);
}

/* The matrix of a transform (`matrix` CG_WINO_BT, CG_WINO_G or CG_WINO_AT) of t: its rows, *rows x
 * *cols. */
static inline const cg_q (*wino_matrix_rows(const wino_transform *t, cg_wino_stage matrix, int *rows,
                                            int *cols))[WINO_MAX_ALPHA]
{
    *rows = matrix == CG_WINO_AT ? t->m : t->alpha;
    *cols = matrix == CG_WINO_G ? t->r : t->alpha;
    return matrix == CG_WINO_AT ? t->at : matrix == CG_WINO_G ? t->g : t->bt;
}

/* The 1-D transform `matrix` (CG_WINO_BT, CG_WINO_G or CG_WINO_AT) of t as straight-line
 * statements on in[] with temporaries p0, p1, ...; *inputs and *outputs: its columns and rows. */
tmpl_value *wino_matrix_program(const wino_transform *t, cg_wino_stage matrix, int *inputs, int *outputs);
/* The matrices op applies, in order: its own (BT, G or AT), the fused kernels' several (BT and AT;
 * accgrad's BT, G and AT), none for SUM. Their count; *matrices points at them. */
int wino_op_matrices(const cg_wino_op *op, const cg_wino_stage **matrices);
/* The kernel header: what it is, the layer, the plan, each dimension's matrices, launch and
 * workspace. */
tmpl_value *wino_header_lines(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                              const char *what);
/* The pass's operands: data, weights (accgrad: dy) and result, as the headers name them. */
const char *const *wino_operand_names(convgen_pass pass);
/* Sets key to the magic division by d over [0, max_dividend]; false if it could not be made. */
bool wino_set_div(tmpl_value *ctx, const char *key, int64_t d, int64_t max_dividend);
/* "BT of F(4,3): alpha 6, points ... (20 additions, 8 multiplications)" into buf. */
void wino_describe_matrix(const wino_transform *t, cg_wino_stage matrix, char *buf, size_t size);
/* The plane's dimensions (1 and 2 of op) as a kernel template's 0 and 1: their transform
 * programs of op's matrix (prog0, prog1), its columns and rows (span0, span1, outs0, outs1) and
 * descriptions (describe0, describe1). */
void wino_plane_keys(tmpl_value *ctx, const wino_spec *s, const cg_wino_op *op);
/* The nonzero terms of `matrix` of t as template values: row by row ([[{slice, negative, unit,
 * magnitude}]]), or column by column ([[{row, ...}]]) where `by_column`. */
tmpl_value *wino_depth_terms(const wino_transform *t, cg_wino_stage matrix, bool by_column);
/* Whether op's transform kernel is winograd_volume.cu's: the tiles of a 3-D layer's data
 * volumes (BT, or G for accgrad's dy), more than one tile a volume. */
bool wino_volume_tiles(const wino_spec *s, const cg_wino_op *op);
/* Fills kernel k (named, its step appended) with winograd_volume.cu's transform of op's tiles;
 * `what` says what they are, for the header. */
convgen_status wino_volume_tiles_kernel(const wino_spec *s, const cg_wino_op *op, const char *what, cg_kernel *k);

/* The tiles of volumes of `size` through matrix CG_WINO_BT or CG_WINO_G of the spec's transforms,
 * tile t of each dimension from t * step - offset, into the spec's buffer `buffer` (WINO_U or
 * WINO_V). */
cg_wino_op wino_tiles_op(const wino_spec *s, cg_wino_stage matrix, int64_t outer, int64_t channels,
                         const int64_t size[CG_WINO_DIMS], const int64_t tiles[CG_WINO_DIMS],
                         const int64_t step[CG_WINO_DIMS], const int64_t offset[CG_WINO_DIMS], int buffer);
/* Appends a kernel step running op in `phase` (0: before the sub-batches, 1: each, 2: after them);
 * its kernel, launched as one thread until the caller says, is the caller's to name and fill. */
cg_kernel *wino_add_kernel_step(const cg_kernel_op *op, int phase, cg_generated *out);
/* Appends a transform kernel step doing op (CG_WINO_BT, CG_WINO_G or CG_WINO_AT) in `phase` on
 * operand in0 or in1 (`operand`; the output for AT), named convgen_winograd_<pass>_<part>. */
convgen_status wino_add_transform(const wino_spec *s, const cg_wino_op *op, int operand,
                                  int phase, const char *part, const char *what, cg_generated *out);

#endif
