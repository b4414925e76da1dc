/* From a problem to CUDA source: the registry of algorithm planners and what they produce.
 *
 * Each algorithm is one planner module in its family's folder (direct/direct.c,
 * direct/direct_window.c, fftconv/fft.c, winograd/winograd.c, ...) with the same small
 * interface: is the problem applicable, and generate its kernels (choose the spec, size the
 * workspace, render); its variants for AUTO and their text (knobs, variant strings: variant.c);
 * the facts about it others need (flags, its kernels' FMA rate, a name it formerly went by).
 * The registry (registry.c) lists them; nothing outside it switches on an algorithm. */
#ifndef CG_GENERATE_H
#define CG_GENERATE_H

#include <stdint.h>
#include <string.h>

#include "convgen.h"
#include "fft/fft_problem.h"
#include "problem.h"
#include "template/tmpl.h"

#define CG_GENERATOR_VERSION CONVGEN_VERSION_STRING
#define CG_MAX_KERNELS 12
#define CG_KERNEL_NAME_MAX 64
#define CG_DEFAULT_SMS 132 /* an H100 SXM's (and an H200's) multiprocessors */

/* What the generator may know of the target without a GPU: tuning inputs only. */
typedef struct cg_target {
    int sm_count; /* multiprocessors, to size split reductions; 0 means CG_DEFAULT_SMS */
    int shared_per_block; /* bytes of shared memory a block may opt in to; 0: the H100's 227 KiB */
    int shared_per_sm;    /* bytes of shared memory per multiprocessor; 0: the H100's 228 KiB */
    int l2_bytes;         /* bytes of L2 cache; 0: the H100's 50 MiB */
    int max_cluster;      /* blocks a thread-block cluster may have: 1 before sm_90 (no clusters);
                             0: the H100's portable 8 */
    char arch[16];        /* the architecture these limits are of ("sm_80"), for the headers'
                             re-emit command; "" where unknown */
} cg_target;

/* The target's shared memory per block (opt-in) and per multiprocessor, or the H100's where it
 * has none (the offline generator); and the hardware's share of each block's. */
enum { CG_SHARED_RESERVED_PER_BLOCK = 1024 };
static inline int64_t cg_target_shared_per_block(const cg_target *t)
{
    return t && t->shared_per_block > 0 ? t->shared_per_block : 227 * 1024;
}
static inline int64_t cg_target_shared_per_sm(const cg_target *t)
{
    return t && t->shared_per_sm > 0 ? t->shared_per_sm : 228 * 1024;
}
/* The target's L2, or the H100's 50 MiB where it has none. */
static inline int64_t cg_target_l2_bytes(const cg_target *t)
{
    return t && t->l2_bytes > 0 ? t->l2_bytes : 50ll * 1024 * 1024;
}

/* The shared-memory limits of an architecture ("sm_80"), for contexts without a device;
 * false for one this table does not know (the caller keeps the H100's). */
bool cg_target_shared_limits(const char *arch, int *per_block, int *per_sm);
/* The largest portable thread-block cluster of an architecture: 8 from sm_90, else 1 (none);
 * 0 (the generator's default) for a name it cannot read. */
int cg_target_max_cluster(const char *arch);
/* Whether the target runs mma.sync's TF32 (sm_80 on), also where it does not say (the H100's).
 * Here, not in generate.c, so that the planners that ask need no link back to it. */
static inline bool cg_target_mma_tf32(const cg_target *t)
{
    if (!t || !t->arch[0])
        return true;
    if (strncmp(t->arch, "sm_", 3) != 0)
        return false;
    int cc = 0;
    for (const char *c = t->arch + 3; *c >= '0' && *c <= '9' && cc < 1000; ++c)
        cc = 10 * cc + (*c - '0');
    return cc >= 80;
}
/* Whether the target has sm_90's bulk copies (cp.async.bulk, the TMA unit): they came with
 * thread-block clusters, so a target of clusters has them (0, unset: the H100's). Contexts and
 * the kernel-set generator set max_cluster from the arch (cg_target_max_cluster), so an sm_80
 * target says 1. */
static inline bool cg_target_bulk_copies(const cg_target *t) { return !t || t->max_cluster != 1; }
/* Whether the target is sm_90 itself (an H100's or H200's, also where it does not say): only there
 * is the warpgroup mma (wgmma), which a kernel that uses it is compiled for as sm_90a; such a
 * source has the line CG_SM90A_MARKER, by which the runtime knows (jit.c). */
static inline bool cg_target_wgmma(const cg_target *t)
{
    return !t || !t->arch[0] || strcmp(t->arch, "sm_90") == 0 || strcmp(t->arch, "sm_90a") == 0;
}
#define CG_SM90A_MARKER "#define CONVGEN_NEEDS_SM90A 1"

typedef enum { CG_DEPENDENT_NONE = 0, CG_DEPENDENT_WAITS_FIRST, CG_DEPENDENT_WAITS_LAST } cg_dependent;

/* One emitted kernel: its source and how to launch it. Every convgen kernel takes the same
 * four pointers (in0, in1, out, workspace) in the order of convgen_execute; one that applies a
 * bias takes it fifth. */
typedef struct cg_kernel {
    char name[CG_KERNEL_NAME_MAX];
    char *source;
    unsigned grid[3], block[3];
    unsigned shared_bytes; /* dynamic shared memory per block (0 for most kernels) */
    /* What a kernel of a program of kernels only (direct) computes, for its header; NULL: the
     * first is an implicit GEMM (the second, after one that is weights_only), a later one the sum
     * of its split reduction's partial results. */
    const char *what;
    /* It only lays the weights out in the workspace for the kernel after it (direct's wgmma form),
     * which then computes the pass from there, never reading in1: its header counts the floats it
     * writes, not the pass's FLOPs, and convgen_prepare_weights runs it alone (as a program's phase
     * 0), convgen_execute_prepared the kernels after it. Only a program's first kernel may be. */
    bool weights_only;
    /* It writes y and applies the layer's epilogue (bias, ReLU) to what it writes: the last
     * kernel of fprop's program, or of each sub-batch's, for a layer with an epilogue. */
    bool epilogue;
    /* How it meets the kernel launched before it in the stream (programmatic dependent launch, sm_90):
     * NONE, it is launched plainly, after the one before has finished; WAITS_FIRST, it waits for that
     * kernel (griddepcontrol.wait) before anything else, then lets the next launch; WAITS_LAST, it
     * reads and writes nothing the kernel before touches (a data transform after the weights'), so
     * it runs beside it, lets the next launch at once, and waits for it only before it ends. Any
     * wait makes a kernel end after the one before, so the next one's wait covers both. */
    cg_dependent dependent;
} cg_kernel;

/* A kernel's `dependent` and its template's key `dependent` ("", "first", "last"): NONE where
 * the target lacks griddepcontrol, which came with sm_90 as clusters did (cg_target_bulk_copies
 * says which targets). Inline, so that the planners calling it (winograd.c, gemm_tc.c) take no
 * link to generate.c, which reaches them through the registry (test_layers' import circles). */
static inline void cg_kernel_set_dependent(cg_kernel *k, tmpl_value *ctx, const cg_target *t, cg_dependent d)
{
    static const char *const keys[] = {"", "first", "last"};
    k->dependent = cg_target_bulk_copies(t) ? d : CG_DEPENDENT_NONE;
    tmpl_set_str(ctx, "dependent", keys[k->dependent]);
}

/* Choices a caller may fix instead of the planner (plan options, the tuner). */
typedef struct cg_tuning {
    int64_t fourier_size[CONVGEN_MAX_RANK]; /* FFT algorithms: the transform size; 0: chosen */
    int winograd_m[CONVGEN_MAX_RANK];       /* winograd: the tile F(m, r) per dimension; 0: chosen */
    int gemm;                               /* winograd: CONVGEN_GEMM_*; 0: chosen */
    int weights;                            /* winograd-fused: CONVGEN_WEIGHTS_*; 0: chosen */
    bool tf32;                              /* library GEMMs may use TF32 tensor cores */
    int64_t workspace_limit;                /* bytes; 0: none. Planners may sub-batch to stay under */
} cg_tuning;

/* Library calls between kernels (the cufft algorithm). Buffers are byte offsets into the
 * plan's workspace; the runtime adds the libraries' own work areas behind it. */
typedef enum { CG_STEP_KERNEL = 0, CG_STEP_FFT, CG_STEP_GEMM } cg_step_kind;

/* cuFFT over `batch` dense real images of n[0] x ... x n[rank - 1] points at real_offset (or,
 * for R2C, operand in0 or in1 itself) and their dense half spectra at spectrum_offset. */
typedef struct cg_fft_step {
    int rank;
    int64_t n[CONVGEN_MAX_RANK];
    int64_t batch;
    bool inverse;     /* C2R from the spectra, else R2C into them */
    int real_operand; /* R2C: 0 or 1 reads in0 or in1; -1: the workspace at real_offset */
    int64_t real_offset, spectrum_offset;
} cg_fft_step;

/* An operand of the tensor-core GEMM (gemm_tc.c) laid out by its producer in the kernel's pieces
 * rather than as a matrix: `rows` > 0 rows of op(A) (m) or op(B) (n) a block, each block's sum in
 * steps of CG_GEMM_TC_STEP, each (block, step) one contiguous piece in wgmma's K-major core-matrix
 * order, so that one bulk copy brings it and nothing transposes it on chip (cg_tc_at, cg_tc_floats
 * in gemm_tc.h). `paired`: A's order, row 2 g + h of 16 at 8 h + g, so that a lane's sums of rows g
 * and g + 8 are neighbours in C. `lo`: each piece followed by its lo halves for 3xTF32 (cg_tf32_lo),
 * made by the producer once rather than by the kernel's converters in every block that reads the
 * piece. rows 0: the operand as the step's ld describes it. */
typedef struct cg_tc_pieces {
    int64_t rows;
    bool paired;
    bool lo;
} cg_tc_pieces;

/* A column-major complex GEMM per bin, C = op(A) op(B), ops 'N' or 'C' (conjugate transpose),
 * `batch` of them `*_stride` complex elements apart; where `real`, a real one (SGEMM, ops 'N'
 * or 'T', strides in floats). */
typedef struct cg_gemm_step {
    bool real;
    char transa, transb;
    int64_t m, n, k;
    int64_t a_offset, lda, b_offset, ldb, c_offset, ldc;
    int64_t a_stride, b_stride, c_stride, batch;
    bool accumulate; /* chunks after the first add to C (a reduction over the sub-batches) */
    /* Elements between neighbours along every matrix's leading dimension (then ld counts
     * elements too): 0 or 1, adjacent (cuBLAS's layout); more, the batch entries interleaved
     * (stride 1, inc = batch), as the FFT kernels leave their spectra: [image][bin]. Only
     * convgen's GEMM kernel reads that. */
    int64_t inc;
    bool tensor; /* done by convgen's kernel on the tensor cores (gemm_tc.c), which the cost model rates */
    cg_tc_pieces a_pieces, b_pieces; /* op(A) and op(B) in that kernel's pieces (lda, ldb unused), or not */
    /* That kernel's split sum: the sum's steps of CG_GEMM_TC_STEP cut into `splits` runs of
     * cg_gemm_split_steps each (none empty), run s's products into C + s split_stride floats, for
     * the step's consumer to add (the Winograd output transform); split_stride = c_stride batch,
     * the runs' C one batch of batch x splits entries (which a zeroing step clears). 0 or 1: one
     * run. */
    int64_t splits, split_stride;
    cg_dependent dependent; /* how that kernel meets the kernel launched before it (cg_kernel's) */
} cg_gemm_step;

/* Where an operand's element sits in a padded image, per dimension: at base + step * index
 * (taken modulo the image's size, negated, when mirrored), for index < count; positions at or
 * beyond `limit` stay zero. */
typedef struct cg_placement {
    int64_t base, step, count, limit;
    bool mirror;
    /* Overlap-save tiles (fft-tiled): tile t of `tiles` holds the operand shifted by t *
     * tile_step, i.e. base - t * tile_step; the clip reads output o from tile o / tile_step at
     * o % tile_step. 1 and 0 for one image. */
    int64_t tiles, tile_step;
    /* Convolution in parts (fft-tiled's accgrad clip), where shifts > 0: output o is tap i = base
     * + step o, the sum over the shifts d in [0, shifts) whose lag i - d block lies in (-block,
     * block), each read at position (i - d block) mod the transform size of padded image
     * [shift][image] (shifts flattened over the dimensions, the last fastest). 0 otherwise. */
    int64_t shifts, block;
} cg_placement;

/* What a kernel step computes, as data, so that a program can be evaluated on the CPU and costed:
 * a kind and its payload. Each kind's evaluation, work and description are one cg_op_class
 * (op_kinds.h), in the file of the family that builds it. OTHER: only its source says. */
typedef enum { CG_OP_OTHER = 0, CG_OP_PAD, CG_OP_CLIP, CG_OP_TRANSPOSE, CG_OP_FFT, CG_OP_FUSED, CG_OP_WINOGRAD,
               CG_OP_GEMM, CG_OP_KINDS } cg_op_kind;

/* PAD: `images` images of operand in0 or in1 (`operand` 0 or 1) into padded images of size[0] x
 * ... floats at byte real_offset; CLIP (`operand` 2): back from there into out, scaled. */
typedef struct cg_pad_op {
    int operand, rank;
    int64_t images, real_offset, size[CONVGEN_MAX_RANK];
    /* Tiled: the padded images are [tile][images], tiles the product of the dimensions'. */
    int64_t tiles;
    cg_placement dims[CONVGEN_MAX_RANK];
    double scale;
} cg_pad_op;

/* TRANSPOSE: complex [rows][cols] at byte src into [cols][rows] at byte dst. */
typedef struct cg_transpose_op {
    int64_t rows, cols, src, dst;
} cg_transpose_op;

/* FUSED (fft-fused): for each of `images` images and `tiles` tiles, the tile of in0 (`input`: its
 * dims, size and tiles as a pad's, `channels` channels) transformed, multiplied bin by bin with
 * the weights' spectra at byte `spectra` (natural order, image o * w_out + i * w_in for output
 * channel o and input channel i; conjugated where `conjugate`), summed over the channels,
 * transformed back, scaled by input.scale and clipped into out (out_dims, tiled like a clip;
 * `outputs` channels). A block makes `per_block` output channels of a tile, transforming the
 * tile's input channels again for each such group (the cost model counts them). */
typedef struct cg_fused_op {
    cg_pad_op input;
    int64_t channels, outputs, per_block, spectra, w_out, w_in;
    bool conjugate;
    cg_placement out_dims[CONVGEN_MAX_RANK];
} cg_fused_op;

/* What a Winograd op does (the matrices are Lavin & Gray's): tiles of data through BT, tiles of
 * filters through G, transforms back through AT; the fused kernels; a sum of partial results. */
typedef enum { CG_WINO_BT, CG_WINO_G, CG_WINO_AT, CG_WINO_FUSED, CG_WINO_FUSED_ACCGRAD, CG_WINO_SUM } cg_wino_stage;

enum { CG_WINO_DIMS = 3 }; /* a Winograd op's dimensions: depth, height, width */

/* WINOGRAD (generator/winograd/winograd.c): a Winograd transform applied tile by tile to volumes
 * of CG_WINO_DIMS dimensions, depth first (a 2-D layer's planes as 1 x h x w, a 1-D layer's as
 * 1 x 1 x n). Along dimension d the matrix is one of F(m[d], r[d]) (wino_derive). Transforms run
 * over the element index e = (e0 alpha[1] + e1) alpha[2] + e2 outermost. */
typedef struct cg_wino_op {
    cg_wino_stage stage;
    int operand; /* BT, G: the planes are in0 or in1 (0 or 1) */
    int m[CG_WINO_DIMS], r[CG_WINO_DIMS];
    /* BT, G: volumes [outer][channels] of size[0] x size[1] x size[2] floats of in0 or in1 (the
     * op's `operand`); tile (t0, t1, t2) of tiles[0] x tiles[1] x tiles[2] starts at t_d step[d]
     * - offset[d] along each dimension d, spans the matrix's columns (alpha or r), reads zero
     * outside the volume and, where `flip`, reversed. With `planes_transposed` the volumes are
     * [channels][outer] instead (w's [k][c] read as channels k of outer c: fused bprop's
     * weights). Its transform goes to byte `buffer` of the workspace as [e][channel][outer][tile].
     * AT: transforms [e][rows][outer][tile] at byte `buffer`; tile (t0, t1, t2)'s m[0] x m[1] x
     * m[2] outputs go to the volume of size[] at t_d m[d], clipped, the volume of (row, outer) at
     * out + outer * outer_stride + row * row_stride, reversed where `flip`.
     * FUSED: the tiles of in0 as BT describes them, multiplied per element with the
     * weights' transforms [e][channel][row] at byte `weights` and summed over the channels, then
     * through AT into planes of out_size as AT describes them (`rows` output channels, one
     * plane per (row, outer)); nothing goes to the workspace.
     * FUSED_ACCGRAD (F(r, m)): the tiles of in0 as BT describes them (`channels` planes
     * per image, `outer` images) and those of in1 through G (`rows` planes per image of
     * out_size, the same tiles and steps, offset 0), multiplied per element and summed over the
     * images' tiles, split into `splits` runs of `split_columns` (image, tile) columns; each
     * run's sums through AT into r[1] x r[2] planes, the plane of (row, channel) at row *
     * row_stride + channel * outer_stride, reversed where `flip`: into out for one run, else
     * run s's into the workspace at byte buffer + s * 4 * `partial` floats.
     * SUM: the sum of `splits` partial results of `partial` floats each at byte `buffer` into
     * out. AT: where splits > 1, each product the sum of `splits` partial products `partial`
     * floats apart (the tensor GEMM's split sum). */
    int64_t outer, channels, rows, size[CG_WINO_DIMS], tiles[CG_WINO_DIMS], step[CG_WINO_DIMS], offset[CG_WINO_DIMS];
    int64_t buffer, outer_stride, row_stride;
    int64_t out_size[CG_WINO_DIMS], weights;
    int64_t splits, split_columns, partial;
    /* FUSED, FUSED_ACCGRAD: the rows (output channels) one block computes: the kernel's work is
     * the rows rounded up to it (a layer of 3 output channels does 32's work); FUSED_ACCGRAD's
     * blocks of (channel, depth tap) pairs pad its channels' work by channel_scale (>= 1). 0:
     * counted as they are. */
    int64_t row_block;
    double channel_scale;
    /* FUSED: the tiles one block takes (for the cost model); where `weights_inside`, the kernel
     * makes the weights' transforms itself, each block those of its chunks, from in1 as the
     * weights' G op reads it (w's planes [rows][channels], or [channels][rows] where
     * `weights_transposed`, each r[0] x r[1] x r[2], reversed where `weights_flip`), and reads
     * nothing at `weights`. */
    int64_t tile_block;
    bool weights_inside, weights_flip, weights_transposed;
    /* FUSED: the blocks of the cluster that shares a tile's elements (sm_90); 0: one block */
    int cluster;
    /* G of the weights (one tile a volume) and FUSED: where u_rows > 0, the weights' transforms lie
     * blocked for the cluster kernel, each element [row / u_rows][channel][row % u_rows] with the
     * rows (G: its outer) rounded up to a multiple of u_rows and the channels to one of u_channels,
     * the padding zeros, so that a chunk of u_channels channels of a block's u_rows rows is one run
     * of memory (one bulk copy); 0: [channel][row] (wino_u_floats, wino_u_at). u_fragments: each
     * 8 channels x u_rows of a run in the order of the tensor cores' B fragments instead
     * (wino_u_at), so that a lane's float4 of it is one mma operand. */
    int64_t u_rows, u_channels;
    bool u_fragments, flip, planes_transposed;
    /* BT, G: where pieces.rows > 0, each element's transforms in the tensor-core GEMM's pieces
     * (cg_tc_pieces) instead, the channel the sum and (outer, tile) the row (fprop's and bprop's
     * operands) or, where `channel_rows`, the channel the row and (outer, tile) the sum (accgrad's),
     * the padding zeros. */
    cg_tc_pieces pieces;
    bool channel_rows;
} cg_wino_op;

typedef struct cg_kernel_op {
    cg_op_kind kind;
    union {
        cg_pad_op pad;             /* PAD, CLIP */
        cg_transpose_op transpose; /* TRANSPOSE */
        /* FFT: a batched FFT of convgen's (R2C or C2R) from the step's in0 to its out. The CPU
         * evaluation keeps its spectra in natural order, whatever the kernel's layout: a program
         * only multiplies bin by bin between transforms of one layout. */
        cg_fft_problem fft;
        cg_fused_op fused;         /* FUSED */
        cg_wino_op wino;           /* WINOGRAD */
        cg_gemm_step gemm;         /* GEMM: a generated kernel doing what a GEMM step describes (gemm.c) */
    };
} cg_kernel_op;
/* What a kernel step passes as one of its four pointers: the plan's own (SAME), or a base plus
 * a byte offset. */
typedef enum { CG_ARG_SAME = 0, CG_ARG_IN0, CG_ARG_IN1, CG_ARG_OUT, CG_ARG_WORKSPACE, CG_ARG_NULL } cg_arg_base;
typedef struct cg_arg {
    cg_arg_base base;
    int64_t offset;
} cg_arg;

typedef struct cg_step {
    cg_step_kind kind;
    int phase;  /* 0: once before the chunks, 1: once per chunk, 2: once after them */
    int kernel; /* CG_STEP_KERNEL: its index */
    cg_kernel_op op; /* CG_STEP_KERNEL */
    cg_arg args[4]; /* CG_STEP_KERNEL: its (in0, in1, out, workspace) */
    cg_fft_step fft;
    cg_gemm_step gemm;
} cg_step;

#define CG_MAX_STEPS 16

/* The kernels of one layer and pass, run in order on one stream; or, when step_count > 0,
 * the steps in order. */
typedef struct cg_generated {
    convgen_algo algo;
    convgen_pass pass;
    cg_problem problem;
    int kernel_count;
    cg_kernel kernels[CG_MAX_KERNELS];
    int64_t workspace_bytes;
    int step_count;
    cg_step steps[CG_MAX_STEPS];
    bool tf32; /* the GEMM steps may use TF32 */
    /* Sub-batching: the phase-1 steps run `chunks` times, in0, in1 and out advancing by
     * chunk_elems[0..2] floats per chunk (0: not sliced). */
    int64_t chunks;
    int64_t chunk_elems[3];
} cg_generated;

/* One knob of a planner's variants: its key in the planner's variant strings and the text of
 * the cg_tuning field it fixes. */
typedef struct cg_knob {
    const char *key; /* "m", "fourier", "gemm"; NULL ends a planner's list */
    /* The field's value ("6x6", "cublas"), "" where the tuning leaves it to the planner. */
    void (*print)(const cg_tuning *t, int rank, char *buf, size_t size);
    /* Sets the field from a value; CONVGEN_ERROR_INVALID_VALUE with a message naming it. */
    convgen_status (*parse)(const char *value, int rank, cg_tuning *t);
} cg_knob;

/* The values of the cg_tuning fields that planners' knobs fix (variant.c), for their knob
 * lists: the Winograd tile m per dimension ("6x6", each 0 to 12, 0 along a kernel extent of 1),
 * the Fourier size per dimension ("128x128"), the GEMM ("cublas", "generated" or "tensor"), where
 * the weights' transforms are made ("before" or "inside"). */
void cg_tile_print(const cg_tuning *t, int rank, char *buf, size_t size);
convgen_status cg_tile_parse(const char *value, int rank, cg_tuning *t);
void cg_fourier_print(const cg_tuning *t, int rank, char *buf, size_t size);
convgen_status cg_fourier_parse(const char *value, int rank, cg_tuning *t);
void cg_gemm_print(const cg_tuning *t, int rank, char *buf, size_t size);
convgen_status cg_gemm_parse(const char *value, int rank, cg_tuning *t);
/* The same field for a planner whose one other form is the tensor cores' (direct): "tensor", or
 * nothing for any other value, which that planner takes as its default; so a caller's GEMM fixed
 * for the other planners leaves such a planner's variant strings, and its wisdom, as they are. */
void cg_tensor_print(const cg_tuning *t, int rank, char *buf, size_t size);
convgen_status cg_tensor_parse(const char *value, int rank, cg_tuning *t);
void cg_weights_print(const cg_tuning *t, int rank, char *buf, size_t size);
convgen_status cg_weights_parse(const char *value, int rank, cg_tuning *t);

/* cg_planner.flags */
enum {
    CG_PLANNER_SUB_BATCHES = 1 << 0, /* cuts the batch into sub-batches to stay under
                                        cg_tuning.workspace_limit, so a smaller budget can help */
};

typedef struct cg_planner {
    convgen_algo algo;
    const char *name;
    unsigned flags; /* CG_PLANNER_* */
    /* CONVGEN_SUCCESS, or CONVGEN_ERROR_NOT_SUPPORTED with a message saying why. */
    convgen_status (*applicable)(const cg_problem *p, convgen_pass pass);
    convgen_status (*generate)(const cg_problem *p, convgen_pass pass, const cg_target *t,
                               const cg_tuning *tune, cg_generated *out); /* tune may be NULL */
    /* The knobs its variants fix, in the order its variant strings give them, up to an entry
     * whose key is NULL; NULL: none (its variant string is always empty). */
    const cg_knob *knobs;
    /* AUTO's candidates of an applicable problem and pass at `effort` (a convgen_effort): each
     * the caller's `fixed` tuning with some of this planner's knobs set, at most `max` of them
     * into out; returns how many. NULL: `fixed` alone. */
    int (*variants)(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed, cg_tuning *out,
                    int max);
    /* Programs of kernels without steps (direct's): the share of the GPU's FMA rate the kernels
     * of program g (its layer and pass, and which form it took) reach, at which the cost model
     * charges the pass's FLOPs. NULL where the program's steps say their work. */
    double (*fma_efficiency)(const cg_generated *g);
    /* A name that wisdom of format 1 gave this planner's choice, before the planner had its own
     * (direct-window's was "direct", which chose it silently): read back from such a file, that
     * name means this planner wherever it applies in those passes (a mask of 1 << pass; its
     * fprop came later and was direct's GEMM then). NULL: none. */
    const char *formerly;
    unsigned formerly_passes;
} cg_planner;

/* The registered planners, in registry order: i from 0 to cg_planner_count() - 1. */
int cg_planner_count(void);
const cg_planner *cg_planner_at(int i);

/* The planner of an algorithm, or NULL; by name too ("direct"). */
const cg_planner *cg_planner_of(convgen_algo algo);
const cg_planner *cg_planner_named(const char *name);

/* The planner a name written by an older convgen means for this problem and pass: the one that
 * was `formerly` so named where it applies, else the one of that name; NULL if none. */
const cg_planner *cg_planner_formerly_named(const char *name, const cg_problem *p, convgen_pass pass);

/* ---- variants: a planner's knobs as text ---- */

#define CG_VARIANT_MAX 128

/* A planner's variant string of a tuning: "key=value" for each of its knobs that the tuning
 * sets, in its order, one space apart ("m=6x6 gemm=cublas", "fourier=128x128"); "" for none. */
void cg_variant_print(const cg_planner *pl, const cg_tuning *t, int rank, char *buf, size_t size);

/* Sets the knobs a variant string gives into t (its other fields stay), refusing what
 * cg_variant_print would not have written: an unknown key, a key twice, a bad value, another
 * order or spacing. CONVGEN_ERROR_INVALID_VALUE with a message naming what. */
convgen_status cg_variant_parse(const cg_planner *pl, const char *text, int rank, cg_tuning *t);

/* Appends to out (n of max used) the tuning t, or where `by_gemm` t with each GEMM fixed,
 * cuBLAS's then the generated one: the planners' variants lists. Returns the new count. */
int cg_variants_add(cg_tuning *out, int n, int max, const cg_tuning *t, bool by_gemm);

/* AUTO's candidates for a layer and pass at `effort` (registry.c): every planner's variants where it
 * applies, the planner alone (with `fixed`) where it does not or where fixed is NULL (the caller's
 * options invalid: each candidate then says why); at most max, each an algorithm and its tuning.
 * Returns their count. A list that reached max would lose the planners after the cut, and with
 * them candidates AUTO never times: test_tune's test_candidate_lists_leave_room sweeps layers of
 * every rank, kernel size, stride, pass, effort and math mode: the longest is 43 (a 2 x 2 kernel
 * on 49 x 49 at exhaustive), which the cap of 48 left little room above. */
enum { CG_MAX_CANDIDATES = 64 };
int cg_candidates_list(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed, convgen_algo *algos,
                       cg_tuning *tunings, int max);

/* XXH64 of that list with nothing fixed but TF32 and the workspace limit: each algorithm and its
 * variant string, in order; never 0. Wisdom keeps it beside a measured choice, so that a choice
 * made among other candidates than this convgen lists (an older convgen's, before a planner
 * gained the variant that would beat it) is tuned again rather than trusted (runtime/wisdom.c). */
uint64_t cg_candidates_hash(const cg_problem *p, convgen_pass pass, int effort, bool tf32, uint64_t workspace_limit);

/* Generates the kernels of a validated problem. `target` and `tune` may be NULL (defaults). */
convgen_status cg_generate(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                           const cg_target *target, cg_generated *out);
convgen_status cg_generate_tuned(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                                 const cg_target *target, const cg_tuning *tune, cg_generated *out);
void cg_generated_free(cg_generated *g);

/* The same as a plan of its own (convgen_plan_fft, convgen emit --algo fft): each kernel's header
 * also says the command that emits it again. FFT convolution's steps take the family's
 * cg_generate_fft (fft/fft_kernel.h), whose headers its own program stamps. */
convgen_status cg_generate_fft_plan(const cg_fft_problem *p, const cg_target *target, cg_generated *out);

/* A kernel spec: what a program is generated from. pass, algo and tune are a convolution's;
 * a problem of another kind leaves them 0 and NULL. */
typedef struct cg_spec {
    cg_problem_ref problem;
    convgen_pass pass;
    convgen_algo algo;
    const cg_tuning *tune; /* NULL: the planner chooses */
} cg_spec;

/* The registry of problem kinds: each kind's way from a spec to its program. The convolution
 * kind's goes through the algorithm planners above (cg_generate_tuned); the batched FFT's is
 * its one planner (cg_generate_fft_plan). A new kind adds one line to the table
 * in generate.c. */
typedef struct cg_kind_planner {
    const cg_problem_kind *kind;
    convgen_status (*generate)(const cg_spec *spec, const cg_target *target, cg_generated *out);
} cg_kind_planner;

int cg_kind_count(void);
const cg_kind_planner *cg_kind_at(int i);
const cg_kind_planner *cg_kind_planner_of(const cg_problem_kind *kind);

/* Generates the program of a spec through its problem kind's planner. `target` may be NULL. */
convgen_status cg_generate_spec(const cg_spec *spec, const cg_target *target, cg_generated *out);

/* The fft algorithm's own square Fourier size for the layer and pass (the smallest 7-smooth
 * size holding the circular correlation), 0 where fft does not apply; its variants try others. */
int64_t cg_fft_basis(const cg_problem *p, convgen_pass pass);

/* Runs a program of steps on the CPU as the runtime would on the GPU: the kernels by their ops,
 * the FFT steps as DFTs in double precision, the GEMMs by their parameters, phases and chunks
 * in order, every buffer in fp32 at its byte offset of a workspace of its own; the layer's
 * epilogue (bias: k floats, or NULL without CG_EPILOGUE_BIAS) after the kernel that applies
 * it. For CI, which has no GPU. CONVGEN_ERROR_NOT_SUPPORTED for a kernel its op does not
 * describe. */
convgen_status cg_program_evaluate(const cg_generated *g, const float *in0, const float *in1, const float *bias,
                                   float *out);

/* A kernel step's kernel run as itself, its CUDA rather than its op (tests/kernel_cpu: on the
 * CPU), on the operands the step binds and the bias. */
typedef struct cg_kernel_runner {
    convgen_status (*run)(void *user, const cg_kernel *k, const float *in0, const float *in1, float *out, void *ws,
                          const float *bias);
    void *user;
} cg_kernel_runner;

/* cg_program_evaluate with every kernel run by `runner`: the kernels apply the layer's epilogue
 * themselves, and a program of kernels only (direct) runs them in order on the four operands,
 * as the runtime launches it. */
convgen_status cg_program_run(const cg_generated *g, const float *in0, const float *in1, const float *bias, float *out,
                              const cg_kernel_runner *runner);

/* Whether the program's weights can be prepared once for many executions: it has steps before
 * the chunks (phase 0: the weights' transforms) and none after them reads in1 (the weights), so
 * convgen_execute_prepared can run phases 1 and 2 on a workspace that phase 0 filled. A program of
 * kernels only (direct) can where its first is weights_only: the kernels after it read the
 * workspace that one wrote, never in1. */
bool cg_program_prepares_weights(const cg_generated *g);

/* cg_program_evaluate's prepared path: phase 0 once with the weights w (in1), then phases 1 and
 * 2 for each of `count` inputs in0s[i] into outs[i], with in1 NULL and the same workspace. */
convgen_status cg_program_evaluate_prepared(const cg_generated *g, const float *w, const float *bias, int count,
                                            const float *const *in0s, float *const *outs);

/* The program as a comment block for readers (malloc'ed; NULL when out of memory). */
char *cg_program_describe(const cg_generated *g);

#endif
