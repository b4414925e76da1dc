/* The winograd-fused algorithm (issue 6, the fused kernels): winograd's passes with nothing
 * transformed in global memory but the weights' transforms (generator/winograd/winograd.c has the
 * non-fused program and the pieces both share).
 *
 * fprop and bprop: on sm_90, where it pays (cluster_blocks), a cluster of blocks shares each tile's
 * transform elements by rows, with warps that only load and transform beside warps that only
 * multiply (cluster_kernel, templates/winograd/winograd_fused_cluster.cu). Otherwise:
 * one kernel per block of FUSED_TILES tiles x FUSED_OUTPUTS output channels (FUSED_FEW_OUTPUTS where
 * the pass has no more),
 * looping over the data's channels in chunks of FUSED_CHANNELS: the chunk's raw tiles and the
 * weights' transforms (made once, phase 0, as in winograd) arrive in shared memory by cp.async, in
 * one of two buffers, while the previous chunk's transforms and products run, the tiles are
 * transformed there, and each thread
 * accumulates one element's 8 x 8 block of products in registers; at the end the products go
 * through shared memory and AT into the output (fprop's y with the layer's epilogue, bias and
 * ReLU, applied there, after the sums have left the registers). bprop is
 * fprop of dy with the kernel flipped at pad r - 1 - pad; its weights' transform reads w's
 * planes as [k][c] so that the kernel sums over k from the same [e][channel][output] layout.
 *
 * accgrad: F(r, m) as in winograd, one kernel per block of ACCGRAD_OUTPUTS output channels x
 * ACCGRAD_CHANNELS input channels of dw, looping over the batch's tiles in chunks of
 * ACCGRAD_TILES: the chunk's tiles of x and of dy arrive by cp.async in one of two stages while the
 * previous chunk's transforms and products run, go through BT and G in shared memory, and each
 * thread accumulates one element's 8 x 8 block of (k, c) products; at the end AT gives
 * the r x r taps. Where those blocks are too few to fill the GPU, the tiles are split into runs
 * (blockIdx.z, choose_splits) whose partial dw go to the workspace and a second kernel sums them
 * in a fixed order, so the result does not depend on scheduling.
 *
 * A 3-D layer runs the same kernels over its planes' 2-D tiles, with its depth taps summed
 * directly, as more channels: F(1, r0) along the depth (F(r0, 1) for accgrad), whose transforms
 * are the identity and ones (winograd_transform.c). fprop and bprop sum over (depth tap, channel)
 * pairs, each tap's tiles read from the input slice it reaches; accgrad's channels are (channel,
 * depth tap) pairs, dw's planes in its [k][c][depth][h][w] order. As in 2-D, nothing transformed
 * crosses DRAM but the weights' transforms.
 *
 * The one-block kernels: 8 threads per element (4 in fprop's and bprop's blocks of 16 outputs), up
 * to 36 elements (alpha up to 6: F(4,3), F(2,5)), up to 288 threads.
 * Nine warps leave a thread 168 registers (a quarter of the register file per scheduler, three
 * warps on one of them), enough for the 64 sums; at 512 threads (alpha 8) the 128 registers a
 * thread may have spill them. */
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"
#include "winograd_plan.h"

enum { CLUSTER_TILES = 32, CLUSTER_MIN_CHANNELS = 64 };
enum { FUSED_TILES = 16, FUSED_OUTPUTS = 32, FUSED_CHANNELS = 8, FUSED_MAX_ELEMENTS = 36,
       FUSED_MAX_ALPHA = 6 /* 8 threads per element: 288 threads, whose 168 registers hold the 64 sums */,
       FUSED_FEW_OUTPUTS = 16 /* the outputs a block where the pass has no more: 4 threads an element */ };
enum { ACCGRAD_OUTPUTS = 32, ACCGRAD_CHANNELS = 16, ACCGRAD_TILES = 8,
       ACCGRAD_MIN_RUN = 2 * ACCGRAD_TILES, /* the fewest tiles a split's run sums: both stages used */
       ACCGRAD_MAX_ROUNDS = 4, /* the most rounds of blocks choose_splits considers */
       ACCGRAD_REGISTERS = 168, /* a thread's, NVRTC's report at alpha 4 to 6: the 64 sums, their operands */
       SUM_THREADS = 256 };
/* The fewest registers a thread of the one-block kernels takes (NVRTC, sm_80 and sm_90: fprop and
 * bprop 119-145, accgrad 154-168): where registers allow the most blocks an SM. */
enum { FUSED_FEWEST_REGISTERS = 119 };

/* How the cluster kernel splits a tile of alpha x alpha transform elements: `rows` of its rows a
 * block, one product warp an element summing 32 tiles x `outputs` of them (8 tiles x outputs / 8
 * a lane), beside `loaders` warps that bring and transform `channels` channels of every chunk,
 * one warp a channel or loaders / channels warps each (each bringing its share of the channel's
 * rows, then transforming that share of its columns and of its rows); a cluster is alpha / rows
 * blocks, a chunk channels x cluster channels, passed through `stages` stages.
 * - Alpha 6 (F(4x4, 3x3), F(2x2, 5x5)): two rows, clusters of 3, 12 product warps of 64 outputs
 *   and 4 loaders of a channel each (one a scheduler), chunks of 12, 3 stages.
 * - Alpha 8 (F(6x6, 3x3), F(4x4, 5x5)): one row, clusters of 8 (the portable most), 8 product
 *   warps and 4 loaders (384 threads, 168 registers a thread). Where the outputs come in blocks of
 *   128 without more padding than blocks of 64 would add: 128 outputs a warp (16 x 8 sums a lane)
 *   and chunks of 8, a channel a block, its 4 loaders two rows each, 4 stages (under the end's
 *   shared memory): the same products a chunk as with 64 outputs and chunks of 16, for half the
 *   tiles loaded and transformed, which bound that form (bench/NOTES.md, "Issue 30, session
 *   56"), where its clusters still fill the GPU once and its end's shared memory fits (F(7x7,
 *   2x2)'s rows of 7 do not). Otherwise 64 outputs a warp, chunks of 16, two loaders a channel, 3
 *   stages. Two rows a block would be 16 product warps, 640 threads with the loaders, whose 96
 *   registers a thread spill the 64 sums (NOTES, 6e). */
typedef struct cluster_shape {
    int rows, loaders, channels, outputs, stages;
} cluster_shape;

/* The target's multiprocessors (an H100's or H200's 132 where it does not say). */
static int target_sms(const cg_target *t) { return t && t->sm_count > 0 ? t->sm_count : 132; }

/* The blocks of a cluster kernel's launch: clusters of `blocks`, each CLUSTER_TILES tiles x
 * `outputs` of out_ch. */
static int64_t launch_blocks(const wino_spec *s, int64_t out_ch, int outputs, int blocks)
{
    return wino_div_up(s->columns, CLUSTER_TILES) * wino_div_up(out_ch, outputs) * blocks;
}

/* A chunk's channels, a block's share of them in each block of the cluster. */
static int cluster_channels(const wino_spec *s, cluster_shape sh)
{
    return sh.channels * (s->tf[1].alpha / sh.rows);
}

/* The cluster kernel's products on the tensor cores in 3xTF32 (each operand split into two TF32
 * values, three products summed in fp32: fp32's accuracy, bench/NOTES.md "Issue 30, session 57")
 * where a chunk is whole mma K steps of 8 channels: alpha 8's forms, 64 and 128 outputs a warp.
 * The weights come laid out as the mma's B fragments (u_fragments), and a loaded value of them or
 * of the tiles is its own hi half: no spill at 128 outputs, where splitting float4s of u's [c][k]
 * runs needed 169 registers. Alpha 6's chunks of 12 are no whole K steps: FFMA. */
static bool cluster_tensor(const wino_spec *s, cluster_shape sh)
{
    return cluster_channels(s, sh) % 8 == 0;
}

/* A stage's floats a channel: its elements' CLUSTER_TILES tiles, and for the tensor products 8
 * more, which put a lane's float2 of tiles 2 g and 2 g + 1 for channel t = 0 .. 3 8 t banks on:
 * the 16 lanes of a half warp in distinct banks. */
static int64_t stage_pitch(const wino_spec *s, cluster_shape sh)
{
    return (int64_t)sh.rows * s->tf[2].alpha * CLUSTER_TILES + (cluster_tensor(s, sh) ? 8 : 0);
}

/* The floats of a raw point's slot: its tasks (32 tiles a channel) and room for its pad (raw_runs). */
static int raw_point_stride(cluster_shape sh) { return 32 * sh.channels + 32; }

/* The cluster kernel's shared memory a block, in floats: two buffers of raw tiles and a ring of
 * stages (transformed tiles and weights' transforms) while the products run; then the products
 * and the rows the peers send, over them. */
static int64_t cluster_shared_floats(const wino_spec *s, cluster_shape sh, int cluster)
{
    const int64_t alpha1 = s->tf[2].alpha, elements = sh.rows * alpha1, pairs = (int64_t)CLUSTER_TILES * sh.outputs,
                  channels = cluster_channels(s, sh);
    int64_t raw = (int64_t)s->tf[1].alpha * alpha1 * raw_point_stride(sh),
            staging = 2 * raw + sh.stages * channels * (stage_pitch(s, sh) + elements * sh.outputs),
            reduce = elements * pairs + (int64_t)cluster * sh.rows * s->tf[2].m * wino_div_up(pairs, cluster);
    return staging > reduce ? staging : reduce;
}

static cluster_shape cluster_shape_of(const wino_spec *s, const cg_target *t, int64_t out_ch)
{
    if (s->tf[1].alpha != 8)
        return (cluster_shape){2, 4, 4, 64, 3};
    const cluster_shape wide = {1, 4, 1, 128, 4}, narrow = {1, 4, 2, 64, 3};
    const int blocks = s->tf[1].alpha; /* a cluster's */
    return wino_div_up(out_ch, 128) * 2 == wino_div_up(out_ch, 64) &&
                   launch_blocks(s, out_ch, 128, blocks) >= target_sms(t) &&
                   4 * cluster_shared_floats(s, wide, blocks) <= cg_target_shared_per_block(t) /* F(7x7, 2x2): 240 KB */
               ? wide
               : narrow;
}

static convgen_status fused_applicable(const cg_problem *p, convgen_pass pass)
{
    convgen_status st = wino_applicable(p, pass);
    if (st != CONVGEN_SUCCESS)
        return st;
    if (p->rank < 2)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: rank %d: 2-D and 3-D layers only", p->rank);
    for (int d = p->rank - 2; d < p->rank; ++d) /* the plane's; a 3-D kernel's depth up to WINO_MAX_KERNEL */
        if (p->kernel[d] < 2 || p->kernel[d] > FUSED_MAX_ALPHA - 1)
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: kernel[%d] = %lld: kernels 2 to %d across "
                           "the plane", d, (long long)p->kernel[d], FUSED_MAX_ALPHA - 1);
    return CONVGEN_SUCCESS;
}

/* The volumes a fused kernel reads and writes: `channels` of size[0] x size[1] x size[2] per
 * image in, and `outputs` of out_size's out (accgrad: dy's, beside x's); a 2-D layer's depth
 * (dimension 0 of the spec and the op) is 1. */
typedef struct fused_planes {
    int64_t channels, outputs;
    const int64_t *size, *out_size;
} fused_planes;

/* The transform elements of a tile's plane, each one 8 threads' (a 3-D layer's depth taps are
 * summed, not transformed). */
static int64_t plane_elements(const wino_spec *s) { return (int64_t)s->tf[1].alpha * s->tf[2].alpha; }

/* The context keys every fused kernel has: its header, name, planes, tiles and both dimensions'
 * transform programs (the op's matrices, e.g. BT and AT: bt0, bt1, at0, at1); for a 3-D layer
 * (`volume`) its depths, depth taps and the slice its tiles start from (`offset_z`). */
static tmpl_value *common_context(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                                  const char *what, fused_planes planes, bool *failed)
{
    int64_t plane_tiles = s->tiles[1] * s->tiles[2], tile_count = s->tiles[0] * plane_tiles;
    tmpl_value *ctx = tmpl_map();
    tmpl_set_int(ctx, "channels", planes.channels);
    tmpl_set_int(ctx, "outputs", planes.outputs);
    tmpl_set_int(ctx, "height", planes.size[1]);
    tmpl_set_int(ctx, "width", planes.size[2]);
    tmpl_set_int(ctx, "out_height", planes.out_size[1]);
    tmpl_set_int(ctx, "out_width", planes.out_size[2]);
    tmpl_set_bool(ctx, "volume", s->first == 0);
    tmpl_set_int(ctx, "depth", planes.size[0]);
    tmpl_set_int(ctx, "out_depth", planes.out_size[0]);
    tmpl_set_int(ctx, "depth_taps", s->kernel[0]);
    tmpl_set_int(ctx, "offset_z", op->offset[0]);
    tmpl_map_set(ctx, "header", wino_header_lines(s, k, op, what));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", k->block[0]);
    tmpl_set_int(ctx, "elements", plane_elements(s));
    tmpl_set_int(ctx, "columns", s->columns);
    tmpl_set_int(ctx, "tiles", tile_count);
    tmpl_set_int(ctx, "plane_tiles", plane_tiles);
    tmpl_set_int(ctx, "tiles1", s->tiles[2]);
    /* tiles are checked against the column count before these divisions */
    *failed |= !wino_set_div(ctx, "tiles_div", tile_count, s->columns - 1) |
               !wino_set_div(ctx, "plane_tiles_div", plane_tiles, tile_count - 1) |
               !wino_set_div(ctx, "tiles1_div", s->tiles[2], plane_tiles - 1);
    for (int d = 0; d < 2; ++d) { /* the plane's dimensions, 1 and 2 of the spec */
        const wino_transform *tf = &s->tf[d + 1];
        char key[16];
        const cg_wino_stage *matrices;
        for (int i = 0, count = wino_op_matrices(op, &matrices); i < count; ++i) {
            int inputs, outputs;
            snprintf(key, sizeof key, "%s%d", matrices[i] == CG_WINO_AT ? "at" : matrices[i] == CG_WINO_G ? "g" : "bt", d);
            tmpl_map_set(ctx, key, wino_matrix_program(tf, matrices[i], &inputs, &outputs));
        }
        /* F(m, r) of the dimension: alpha = m + r - 1 (accgrad's F(r, m): m the taps, r dy's tile) */
        snprintf(key, sizeof key, "alpha%d", d);
        tmpl_set_int(ctx, key, tf->alpha);
        snprintf(key, sizeof key, "m%d", d);
        tmpl_set_int(ctx, key, tf->m);
        snprintf(key, sizeof key, "r%d", d);
        tmpl_set_int(ctx, key, tf->r);
        snprintf(key, sizeof key, "step%d", d);
        tmpl_set_int(ctx, key, op->step[d + 1]);
        snprintf(key, sizeof key, "offset%d", d);
        tmpl_set_int(ctx, key, op->offset[d + 1]);
    }
    return ctx;
}

/* Appends a kernel step doing op in `phase`, named `name`. */
static cg_kernel *add_kernel(const cg_wino_op *op, int phase, const char *name, cg_generated *out)
{
    cg_kernel *k = wino_add_kernel_step(&(cg_kernel_op){.kind = CG_OP_WINOGRAD, .wino = *op}, phase, out);
    snprintf(k->name, sizeof k->name, "%s", name);
    return k;
}

/* Refuses a kernel whose shared memory passes the target's per-block limit (the H100's 227 KiB
 * unless it says). */
static convgen_status check_shared(const cg_target *t, const cg_kernel *k)
{
    int64_t limit = cg_target_shared_per_block(t);
    return k->shared_bytes <= limit ? CONVGEN_SUCCESS
                                    : cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: %s needs %u bytes of "
                                              "shared memory per block; the target allows %lld", k->name,
                                              k->shared_bytes, (long long)limit);
}

static convgen_status render(tmpl_value *ctx, bool failed, const char *template, cg_kernel *k)
{
    if (failed) { /* cg_value_magic said why */
        tmpl_unref(ctx);
        return CONVGEN_ERROR_INTERNAL;
    }
    return cg_render_kernel(template, ctx, &k->source);
}

/* How many blocks of `threads` threads at `registers` registers each and `shared` bytes a
 * multiprocessor holds at once: by registers (64 K, allotted to a warp in units of 256), by its
 * shared memory (with the driver's reserve a block) and by threads (2048). At least one. */
static int64_t blocks_per_sm(const cg_target *t, int64_t threads, int64_t shared, int registers)
{
    const int64_t warps = wino_div_up(threads, 32), per_warp = wino_div_up(32 * registers, 256) * 256;
    int64_t n = 65536 / per_warp / warps,
            by_shared = cg_target_shared_per_sm(t) / (shared + CG_SHARED_RESERVED_PER_BLOCK);
    if (by_shared < n)
        n = by_shared;
    if (2048 / threads < n)
        n = 2048 / threads;
    return n > 1 ? n : 1;
}

/* How many buffers of raw tiles (and raw weights) a one-block kernel has, `one` or `two` bytes of
 * shared memory with one or two: two, so that the next chunk's loads fly during this chunk's
 * transforms and products, where they fit the target's block and cost no block an SM at the
 * fewest registers the kernels take (where registers would allow the most). On an sm_86 (99 KiB
 * a block) alpha 6's do not fit; an A100's alpha-4 blocks of 32 outputs would go from three an SM
 * to two. */
static int raw_buffers(const cg_target *t, int64_t threads, int64_t one, int64_t two)
{
    return two <= cg_target_shared_per_block(t) &&
                   blocks_per_sm(t, threads, two, FUSED_FEWEST_REGISTERS) >=
                       blocks_per_sm(t, threads, one, FUSED_FEWEST_REGISTERS)
               ? 2
               : 1;
}

/* ---- fprop and bprop ---- */

/* The floats a cp.async of the weights' transforms carries: 16 bytes where a row of U
 * ([e][c][k]) keeps them aligned, else 4. */
static int weights_vec(const cg_wino_op *f) { return f->rows % 4 == 0 ? 4 : 1; }

/* A forward kernel's blocking: tiles x outputs a block (or a cluster), the channels' chunk. */
typedef struct fused_blocking {
    int tiles, outputs, channels;
} fused_blocking;

static tmpl_value *forward_context(const wino_spec *s, const cg_kernel *k, const cg_wino_op *f, fused_blocking b,
                                   bool *failed)
{
    bool bprop = s->pass == CONVGEN_BPROP;
    tmpl_value *ctx = common_context(s, k, f, bprop ? "the fused kernel: dy's tiles, the products, dx"
                                                        : "the fused kernel: x's tiles, the products, y",
                                     (fused_planes){f->channels, f->rows, f->size, f->out_size}, failed);
    /* the sum's chunks: a depth tap's channels in chunks of c_block, the depth taps outermost */
    int64_t slice_chunks = wino_div_up(f->channels, b.channels), chunks = slice_chunks * s->kernel[0];
    tmpl_set_int(ctx, "slice_chunks", slice_chunks);
    tmpl_set_int(ctx, "chunks", chunks);
    *failed |= !wino_set_div(ctx, "slice_div", slice_chunks, chunks);
    tmpl_set_int(ctx, "tile_block", b.tiles);
    tmpl_set_int(ctx, "k_block", b.outputs);
    tmpl_set_int(ctx, "c_block", b.channels);
    tmpl_set_str(ctx, "data", bprop ? "dy" : "x");
    tmpl_set_bool(ctx, "out_checked", f->out_size[1] % s->m[1] != 0 || f->out_size[2] % s->m[2] != 0);
    tmpl_set_int(ctx, "u_buffer", f->weights / 4);
    tmpl_map_set(ctx, "epi", cg_value_epilogue(s->epilogue, k->epilogue));
    tmpl_set_int(ctx, "tasks", b.tiles * b.channels); /* the chunk's tiles: (channel, tile) pairs */
    tmpl_set_int(ctx, "vec", weights_vec(f));
    tmpl_set_int(ctx, "w_vec", 1); /* the raw weights' (block_kernel's, inside) */
    return ctx;
}

/* The one-block kernel's blocking for `rows` output channels: FUSED_TILES tiles x FUSED_OUTPUTS
 * outputs a block, or FUSED_FEW_OUTPUTS where the pass has no more (a block of 32 would idle half
 * its threads: on an H200 S57, 16 outputs, ran 31% faster so at F(4x4, 3x3), fprop 18.4 us against
 * 26.7; with 64 or 32 outputs 16 a block ran no faster: bench/NOTES.md, "Issue 30, session 67"). */
static fused_blocking one_block_blocking(int64_t rows)
{
    return (fused_blocking){FUSED_TILES, rows <= FUSED_FEW_OUTPUTS ? FUSED_FEW_OUTPUTS : FUSED_OUTPUTS, FUSED_CHANNELS};
}

/* A weights' plane slice: the r x r taps of one depth tap. */
static int64_t plane_taps(const wino_spec *s) { return (int64_t)s->tf[1].r * s->tf[2].r; }

/* The floats a cp.async of the raw weights carries (weights inside, one-block kernel, 2-D): 16 bytes
 * where the chunk's weights lie in w as lines that start 16-byte aligned (the kernel checks w's own
 * alignment, else copies 4 bytes). bprop reads w as [c][k]: a line is each data channel's block of
 * outputs' taps, aligned where outputs x taps is a multiple of 4. fprop's line is each output's run
 * of the chunk's channels, aligned where channels x taps is; the weights' transform then reads its
 * pairs across those lines (4-way bank conflicts on its 9 loads a pair), which costs less than the
 * 4-byte copies did: 18 a thread a chunk on S27, each with its own pair and tap division, against
 * 4.5 (the copies' issue a third of a chunk's 512 FMAs a thread; S27 fprop's fused kernel took 21.2
 * us against bprop's 16.5 on an H100, bench/NOTES.md "Issue 30, session 73": not yet measured so). */
static int raw_weights_vec(const wino_spec *s, const cg_wino_op *f)
{
    /* fprop's lines: each output's run of the chunk's channels, w[k][c0 ..][taps], 16-byte aligned
       where c x taps is a multiple of 4 (the chunk's channels, 8, make c0 x taps one) */
    const int64_t line_stride = f->weights_transposed ? f->rows : f->channels;
    return f->weights_inside && s->first != 0 && (line_stride * plane_taps(s)) % 4 == 0 ? 4 : 1;
}

/* The one-block kernel: FUSED_TILES tiles x FUSED_OUTPUTS output channels a block, all the tile's
 * transform elements, 8 threads an element (any target). Where the weights' transforms are made
 * inside (f->weights_inside), each chunk's weights arrive as loaded and are transformed beside the
 * tiles, into one buffer: both are made between the same two barriers. */
static convgen_status block_kernel(wino_spec *s, const cg_target *t, cg_wino_op *f, const char *name,
                                   cg_generated *out)
{
    const fused_blocking b = one_block_blocking(f->rows);
    const int per_element = (b.outputs / 8) * (b.tiles / 8); /* threads an element, 8 x 8 sums each */
    f->row_block = b.outputs, f->tile_block = b.tiles;
    cg_kernel *k = add_kernel(f, 1, name, out);
    k->epilogue = s->epilogue != 0; /* the one kernel that writes y, all of it */
    k->grid[0] = (unsigned)wino_div_up(s->columns, b.tiles);
    k->grid[1] = (unsigned)wino_div_up(f->rows, b.outputs);
    k->block[0] = (unsigned)(per_element * plane_elements(s));
    /* the larger of one chunk's tiles transformed beside the weights' transforms (two buffers of
     * them, or one and the weights as loaded) with the raw tiles' buffers, and the products */
    const int64_t products = 4 * plane_elements(s) * b.tiles * b.outputs;
    int64_t bytes[2];
    for (int n = 1; n <= 2; ++n) {
        int64_t weights = f->weights_inside ? plane_elements(s) * b.outputs + n * plane_taps(s) * b.outputs
                                            : 2 * plane_elements(s) * b.outputs,
                chunk = 4 * b.channels * (plane_elements(s) * b.tiles + weights + n * b.tiles * plane_elements(s));
        bytes[n - 1] = chunk > products ? chunk : products;
    }
    const int buffers = raw_buffers(t, k->block[0], bytes[0], bytes[1]);
    k->shared_bytes = (unsigned)bytes[buffers - 1];
    convgen_status st = check_shared(t, k);
    if (st != CONVGEN_SUCCESS)
        return st;
    bool failed = false;
    tmpl_value *ctx = forward_context(s, k, f, b, &failed);
    tmpl_set_int(ctx, "per_element", per_element);
    tmpl_set_int(ctx, "e_shift", per_element == 8 ? 3 : 2);
    tmpl_set_int(ctx, "k_shift", b.outputs == 32 ? 2 : 1); /* log2(outputs / 8) */
    tmpl_set_bool(ctx, "inside", f->weights_inside);
    tmpl_set_bool(ctx, "weights_flip", f->weights_flip);
    tmpl_set_bool(ctx, "weights_transposed", f->weights_transposed);
    tmpl_set_int(ctx, "taps", plane_taps(s));
    tmpl_set_int(ctx, "pairs", b.channels * b.outputs);
    tmpl_set_int(ctx, "stages", buffers);
    tmpl_set_int(ctx, "w_vec", raw_weights_vec(s, f));
    return render(ctx, failed, "winograd/winograd_fused.cu", k);
}

/* The weights' transforms' workspace bytes: U for data_ch x out_ch of every element, blocked
 * for the cluster kernel where `cluster` ([e][k / outputs][c][outputs], the channels padded to its
 * chunks: cluster_shape). */
static int64_t weights_bytes(const wino_spec *s, const cg_target *t, int64_t data_ch, int64_t out_ch, bool cluster)
{
    const cluster_shape sh = cluster_shape_of(s, t, out_ch);
    cg_wino_op blocked = {.u_rows = cluster ? sh.outputs : 0, .u_channels = cluster_channels(s, sh)};
    return wino_u_floats(&blocked, data_ch, out_ch) * s->elements * 4;
}

/* The cluster kernel (sm_90): a cluster of blocks per CLUSTER_TILES tiles x 64 or 128 outputs,
 * block r owning the transform elements of the tile's rows r rows .. (cluster_shape), one warp an
 * element, 8 x 8 or 16 x 8 sums a lane (openCNN's lane layout), more warps bringing and
 * transforming the tiles; the blocks' rows meet through distributed shared memory before the last
 * AT (templates/winograd/winograd_fused_cluster.cu). It splits the tile's elements so that a block
 * keeps its sums in registers, one block a multiprocessor. The planner gives it
 * the square tiles of alpha 6 and 8 (F(4x4, 3x3), F(2x2, 5x5); F(6x6, 3x3), F(4x4, 5x5), and the
 * untimed F(5x5, 4x4), F(7x7, 2x2), which only it takes: 64 elements are too many for the
 * one-block kernel), where its shared memory fits the target's. Its blocks, or 0 for the
 * one-block kernel: before sm_90, for other tiles (F(2x2, 3x3)'s clusters of 2 are untimed: S13's
 * bprop, which the shipped wisdom runs on winograd-fused at m = 2, keeps the kernel it was timed
 * with), for fewer than CLUSTER_MIN_CHANNELS output or data channels (a block of 64 outputs would
 * idle, and the loaders' pipeline would barely start; it also keeps the chunks, at least 4, past
 * the stages the product warps fill before their loop), and where the clusters do not fill the
 * GPU once (on an H200 R4 ran no faster: 0.204 ms against 0.2025; bench/NOTES.md). Any output
 * count works: the weights' transforms are blocked for it (u_rows), their outputs padded to
 * the shape's blocks. */
static int cluster_blocks(const wino_spec *s, const cg_target *t, int64_t channels, int64_t rows)
{
    const cluster_shape sh = cluster_shape_of(s, t, rows);
    int alpha0 = s->tf[1].alpha, blocks = alpha0 / sh.rows;
    int most = !t || t->max_cluster == 0 ? 8 : t->max_cluster; /* 0: the portable 8; 1: none */
    int sms = target_sms(t);
    if ((alpha0 != 6 && alpha0 != 8) || s->tf[2].alpha != alpha0 || blocks > most || rows < CLUSTER_MIN_CHANNELS ||
        channels < CLUSTER_MIN_CHANNELS ||
        weights_bytes(s, t, channels, rows, true) / 4 > INT32_MAX /* the weights' transforms' 32-bit indices, padding
                                                                  and all */ ||
        4 * cluster_shared_floats(s, sh, blocks) > cg_target_shared_per_block(t))
        return 0;
    return launch_blocks(s, rows, sh.outputs, blocks) >= sms ? blocks : 0;
}

/* The loader warps' copies of one row of their channel's CLUSTER_TILES tiles: runs of neighbouring
 * columns, a power of two of them (widest first), of 32 / columns tiles each, so that a warp's
 * 4-byte copies read neighbouring addresses rather than one point each of 32 tiles 16 bytes apart
 * (on an H200 the loaders alone took 2,479 cycles a chunk against 3,170: bench/NOTES.md). Column
 * j of a run from column `first` lies 32 / columns (j - first) floats past its plain place (its
 * pad, under 32), which puts a copy's 32 points in 32 banks; a point's slot is raw_point_stride
 * floats, 32 more than its tasks. Returns the runs, their first columns and widths. */
static int raw_runs(int alpha, int first[], int columns[])
{
    int runs = 0;
    for (int at = 0, width = 32; at < alpha; at += width) {
        while (width > alpha - at)
            width /= 2;
        first[runs] = at, columns[runs++] = width;
    }
    return runs;
}

/* The template's copies (each run's, every 32 / columns tiles) and each column's pad. */
static void set_raw_copies(tmpl_value *ctx, int alpha)
{
    int first[8], columns[8];
    tmpl_value *copies = tmpl_list(), *pads = tmpl_list();
    for (int r = 0, runs = raw_runs(alpha, first, columns); r < runs; ++r) {
        for (int base = 0; base < CLUSTER_TILES; base += 32 / columns[r]) {
            tmpl_value *c = tmpl_map();
            tmpl_set_int(c, "first", first[r]);
            tmpl_set_int(c, "columns", columns[r]);
            tmpl_set_int(c, "base", base);
            tmpl_set_int(c, "tiles", 32 / columns[r]);
            tmpl_list_push(copies, c);
        }
        for (int j = 0; j < columns[r]; ++j)
            tmpl_list_push(pads, tmpl_int(32 / columns[r] * j));
    }
    tmpl_map_set(ctx, "copies", copies);
    tmpl_map_set(ctx, "col_pad", pads);
}

static convgen_status cluster_kernel(wino_spec *s, const cg_target *t, cg_wino_op *f, int cluster, const char *name,
                                     cg_generated *out)
{
    const cluster_shape sh = cluster_shape_of(s, t, f->rows);
    const fused_blocking b = {CLUSTER_TILES, sh.outputs, cluster_channels(s, sh)};
    const int64_t alpha1 = s->tf[2].alpha, elements = sh.rows * alpha1, pairs = (int64_t)b.tiles * b.outputs,
                  per_owner = wino_div_up(pairs, cluster);
    f->row_block = b.outputs;
    f->cluster = cluster;
    cg_kernel *k = add_kernel(f, 1, name, out);
    k->epilogue = s->epilogue != 0;
    k->grid[0] = (unsigned)(cluster * wino_div_up(s->columns, b.tiles));
    k->grid[1] = (unsigned)wino_div_up(f->rows, b.outputs);
    k->block[0] = (unsigned)(32 * (elements + sh.loaders));
    int64_t raw = (int64_t)s->tf[1].alpha * alpha1 * raw_point_stride(sh), vs = b.channels * stage_pitch(s, sh),
            us = b.channels * elements * b.outputs;
    k->shared_bytes = (unsigned)(4 * cluster_shared_floats(s, sh, cluster));
    convgen_status st = check_shared(t, k);
    if (st != CONVGEN_SUCCESS)
        return st;
    int split = sh.loaders / sh.channels;
    if (split > 1 && (sh.rows != 1 || alpha1 % split != 0 || s->tf[1].alpha % split != 0 ||
                      (alpha1 & (alpha1 - 1)) != 0)) /* the template's split form */
        return cg_fail(CONVGEN_ERROR_INTERNAL, "winograd-fused: a channel's %d loaders split a tile only for a row a "
                       "block and one run of columns whose count they divide (alpha %lld)", split, (long long)alpha1);
    bool failed = false;
    tmpl_value *ctx = forward_context(s, k, f, b, &failed);
    tmpl_set_int(ctx, "cluster", cluster);
    tmpl_set_int(ctx, "rows", sh.rows);
    tmpl_set_int(ctx, "cta_elements", elements);
    tmpl_set_int(ctx, "loaders", sh.loaders);
    tmpl_set_int(ctx, "stages", sh.stages);
    tmpl_set_int(ctx, "raw_floats", raw);
    tmpl_set_int(ctx, "vs_floats", vs);
    tmpl_set_int(ctx, "vs_pitch", stage_pitch(s, sh));
    tmpl_set_bool(ctx, "tensor", cluster_tensor(s, sh));
    tmpl_set_int(ctx, "us_floats", us);
    tmpl_set_int(ctx, "pairs", pairs);
    tmpl_set_int(ctx, "per_owner", per_owner);
    /* a loader thread's task (its warp's channel of the block's share, its lane's tile) and copies
     * in each chunk */
    int loader_threads = 32 * sh.loaders;
    tmpl_set_int(ctx, "loader_threads", loader_threads);
    tmpl_set_int(ctx, "point_stride", raw_point_stride(sh));
    /* split warps a channel: each brings copy_rows of its tiles' rows, and its columns' pad grows
     * by pad_step a column (one run of columns: raw_runs) */
    tmpl_set_int(ctx, "split", split);
    tmpl_set_int(ctx, "copy_rows", s->tf[1].alpha / split);
    tmpl_set_int(ctx, "pad_step", 32 / (int)alpha1);
    tmpl_set_int(ctx, "c_share", b.channels / cluster);
    /* u blocked (f->u_rows = k_block): an element's floats, and those of a block of outputs; a
     * lane's sums in the FFMA products: k_block / 8 outputs (4 at every 32nd) x 8 tiles */
    tmpl_set_int(ctx, "lane_outputs", b.outputs / 8);
    tmpl_set_int(ctx, "u_channels", f->u_channels);
    tmpl_set_int(ctx, "u_element", wino_u_floats(f, f->channels, f->rows));
    tmpl_set_int(ctx, "u_run", wino_u_channels(f, f->channels) * f->u_rows);
    set_raw_copies(ctx, (int)alpha1);
    /* a row of a tile's outputs as vector stores where y's rows keep them aligned (a 4 x 4 tile's
     * rows 16 bytes apart: a warp's stores were a quarter of each sector, 5% of V3's time): one
     * float4 (m 4) or float2 (m 2), three float2 (m 6, the last ones of the plane's last tiles
     * left out where they pass y's width) */
    int m1 = s->tf[2].m, vec = m1 == 4 ? 4 : m1 % 2 == 0 ? 2 : 0;
    tmpl_set_int(ctx, "row_vector", vec && f->out_size[2] % vec == 0 ? vec : 0);
    return render(ctx, failed, "winograd/winograd_fused_cluster.cu", k);
}

/* The headers' plan: how the products are summed, by the cluster kernel (`cluster` blocks) or the
 * one-block kernel (0). */
static void forward_plan(wino_spec *s, const cg_target *t, int64_t out_ch, int cluster, bool inside)
{
    snprintf(s->plan[0], sizeof s->plan[0], "in one kernel (G w G^T made");
    const cluster_shape sh = cluster_shape_of(s, t, out_ch);
    if (cluster)
        snprintf(s->plan[1], sizeof s->plan[1],
                 "once before it): clusters of %d blocks, %d tiles x %d output channels, the channels in chunks of "
                 "%d%s; block r the %lld transform elements of %s, %lld tiles%s", cluster, CLUSTER_TILES,
                 sh.outputs, cluster_channels(s, sh), s->first == 0 ? " per depth tap" : "",
                 (long long)sh.rows * s->tf[2].alpha, sh.rows > 1 ? "rows 2 r .." : "row r", (long long)s->columns,
                 cluster_tensor(s, sh) ? "; the products in 3xTF32 on the tensor cores" : "");
    else
        snprintf(s->plan[1], sizeof s->plan[1],
                 "%s): blocks of %d tiles x %d output channels, the channels in chunks of %d%s, %lld transform "
                 "elements, %lld tiles", inside ? "inside it, each block its chunks'" : "once before it", FUSED_TILES,
                 one_block_blocking(out_ch).outputs, FUSED_CHANNELS, s->first == 0 ? " per depth tap" : "",
                 (long long)plane_elements(s), (long long)s->columns);
}

/* fprop, y = AT [sum over c of U V] A, and bprop, fprop of dy with w flipped at pad r - 1 - pad
 * and the sum over k: the weights' transforms once (phase 0, [e][channel summed][output]), then
 * the fused kernel, on a cluster where the target has them; or, with `inside`, the one-block
 * kernel alone, making them itself. */
static convgen_status forward_generate(const cg_problem *p, wino_spec *s, const cg_target *t, bool inside,
                                       cg_generated *out)
{
    bool bprop = s->pass == CONVGEN_BPROP;
    const int64_t data_ch = bprop ? p->k : p->c, out_ch = bprop ? p->c : p->k;
    const int64_t *data_size = bprop ? s->out : s->in, *out_size = bprop ? s->in : s->out;
    const int64_t flipped[] = {s->kernel[0] - 1 - s->pad[0], s->kernel[1] - 1 - s->pad[1], s->kernel[2] - 1 - s->pad[2]};
    const int cluster = cluster_blocks(s, t, data_ch, out_ch);
    if (!cluster && plane_elements(s) > FUSED_MAX_ELEMENTS)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: F(%dx%d, %lldx%lld) has %lld transform elements: "
                       "only the cluster kernel takes more than %d, and it needs sm_90 (clusters of 8 blocks), at "
                       "least %d data and output channels, clusters that fill the GPU, its shared memory and 32-bit "
                       "indices of the weights' transforms", s->m[1], s->m[2], (long long)s->kernel[1],
                       (long long)s->kernel[2], (long long)plane_elements(s), FUSED_MAX_ELEMENTS, CLUSTER_MIN_CHANNELS);
    if (inside && cluster)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: weights=inside: this layer takes the cluster "
                       "kernel (sm_90, %lld data and %lld output channels), which reads the weights' transforms made "
                       "before it", (long long)data_ch, (long long)out_ch);
    forward_plan(s, t, out_ch, cluster, inside);
    if (wino_div_up(out_ch, FUSED_OUTPUTS) > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: %s = %lld needs more than 65535 blocks of %d",
                       bprop ? "c" : "k", (long long)out_ch, FUSED_OUTPUTS);

    /* U [e][data channel][output channel], e = (depth tap, plane element): bprop reads w's [k][c]
     * planes as [c][k]. The cluster kernel's blocked, a chunk of a block's weights one bulk copy. */
    const int64_t one[] = {1, 1, 1}, none[] = {0, 0, 0};
    cg_wino_op w = bprop ? wino_tiles_op(s, CG_WINO_G, p->c, p->k, s->kernel, one, none, none, WINO_U)
                         : wino_tiles_op(s, CG_WINO_G, p->k, p->c, s->kernel, one, none, none, WINO_U);
    w.flip = bprop != p->flip;
    w.planes_transposed = bprop;
    if (cluster) {
        const cluster_shape sh = cluster_shape_of(s, t, out_ch);
        w.u_rows = sh.outputs, w.u_channels = cluster_channels(s, sh);
        w.u_fragments = cluster_tensor(s, sh); /* a lane's float4 one mma operand */
    }
    s->workspace = inside ? 0 : wino_align_up(weights_bytes(s, t, data_ch, out_ch, cluster != 0));
    out->workspace_bytes = s->workspace;
    out->chunks = 1;
    convgen_status st = inside ? CONVGEN_SUCCESS
                               : wino_add_transform(s, &w, 1, 0, "transform_w",
                                                    bprop ? "the transforms of w, flipped, summed over k"
                                                          : "the transforms of w", out);
    if (st != CONVGEN_SUCCESS)
        return st;

    const int64_t m[] = {1, s->m[1], s->m[2]}, volume = out_size[0] * out_size[1] * out_size[2];
    cg_wino_op f = wino_tiles_op(s, CG_WINO_BT, p->n, data_ch, data_size, s->tiles, m, bprop ? flipped : s->pad, WINO_V);
    f.stage = CG_WINO_FUSED;
    f.rows = out_ch, f.weights = s->buffer[WINO_U], f.outer_stride = out_ch * volume, f.row_stride = volume;
    f.u_rows = w.u_rows, f.u_channels = w.u_channels, f.u_fragments = w.u_fragments;
    f.out_size[0] = out_size[0], f.out_size[1] = out_size[1], f.out_size[2] = out_size[2];
    f.weights_inside = inside, f.weights_flip = w.flip, f.weights_transposed = w.planes_transposed;
    char name[64];
    snprintf(name, sizeof name, "convgen_winograd_fused_%s", convgen_pass_name(s->pass));
    return cluster ? cluster_kernel(s, t, &f, cluster, name, out) : block_kernel(s, t, &f, name, out);
}

/* ---- accgrad ---- */

/* How many runs the tiles split into. A block takes about as long as its run's chunks and one
 * more (its first chunk's loads, which nothing hides, and the end's AT and stores; H200: S13, S16
 * and S27 at 8-9 chunks a block ran 31-33 us whatever their 44 to 128 blocks), and the GPU holds
 * `slots` blocks at once; so the split of the fewest rounds x (chunks + 1) wins, the fewer runs on
 * a tie (less partial dw to write and add). Each run but the last is a whole number of chunks,
 * ACCGRAD_MIN_RUN tiles or more, and all runs' partial dw (run_bytes each) fit the workspace
 * limit (one run needs none). The model's "+ 1" and the one block an SM at alpha 6 are from
 * session 68's ncu (bench/NOTES.md, "Issue 30, session 68"); its choices are not yet timed. */
static void choose_splits(const wino_spec *s, int64_t blocks, int64_t slots, int64_t run_bytes, int64_t limit,
                          int64_t *splits, int64_t *run)
{
    int64_t most = wino_div_up(s->columns, ACCGRAD_MIN_RUN); /* the last run may be shorter */
    if (limit > 0 && limit / run_bytes < most)
        most = limit / run_bytes; /* under 2: one run */
    if (wino_div_up(ACCGRAD_MAX_ROUNDS * slots, blocks) < most)
        most = wino_div_up(ACCGRAD_MAX_ROUNDS * slots, blocks);
    if (most > 65535)
        most = 65535; /* grid.z */
    *splits = 1, *run = s->columns;
    int64_t best = wino_div_up(blocks, slots) * (wino_div_up(s->columns, ACCGRAD_TILES) + 1);
    for (int64_t n = 2; n <= most; ++n) {
        const int64_t chunks = wino_div_up(wino_div_up(s->columns, n), ACCGRAD_TILES),
                      runs = wino_div_up(s->columns, chunks * ACCGRAD_TILES),
                      cost = wino_div_up(blocks * runs, slots) * (chunks + 1);
        if (cost < best)
            best = cost, *splits = runs, *run = chunks * ACCGRAD_TILES;
    }
}

/* accgrad's channels: x's channels, each with its depth taps (one for a 2-D layer), so that dw's
 * planes of an output channel are the sums' in order. */
static int64_t accgrad_channels(const cg_problem *p, const wino_spec *s) { return p->c * s->kernel[0]; }

/* One stage of the accgrad kernel's raw tiles, in floats: a chunk's x tiles and dy tiles as loaded. */
static int64_t accgrad_raw_stage(const wino_spec *s)
{
    return ACCGRAD_TILES * (plane_elements(s) * ACCGRAD_CHANNELS + s->tf[1].r * s->tf[2].r * ACCGRAD_OUTPUTS);
}

static tmpl_value *accgrad_context(const cg_problem *p, const wino_spec *s, const cg_kernel *k, const cg_wino_op *op,
                                   int stages, bool *failed)
{
    tmpl_value *ctx = common_context(s, k, op, op->splits > 1 ? "the fused kernel: x's and dy's tiles, the "
                                                                   "products, a run's partial dw"
                                                                 : "the fused kernel: x's and dy's tiles, the products, dw",
                                     (fused_planes){accgrad_channels(p, s), p->k, s->in, s->out}, failed);
    tmpl_set_int(ctx, "x_channels", p->c);
    *failed |= !wino_set_div(ctx, "taps_div", s->kernel[0], accgrad_channels(p, s) + ACCGRAD_CHANNELS);
    tmpl_set_int(ctx, "k_block", ACCGRAD_OUTPUTS);
    tmpl_set_int(ctx, "c_block", ACCGRAD_CHANNELS);
    tmpl_set_int(ctx, "t_block", ACCGRAD_TILES);
    tmpl_set_int(ctx, "x_tasks", ACCGRAD_TILES * ACCGRAD_CHANNELS);
    tmpl_set_int(ctx, "dy_tasks", ACCGRAD_TILES * ACCGRAD_OUTPUTS);
    tmpl_set_int(ctx, "stages", stages);
    tmpl_set_int(ctx, "raw_stage", accgrad_raw_stage(s));
    tmpl_set_bool(ctx, "flip", op->flip);
    tmpl_set_int(ctx, "splits", op->splits);
    tmpl_set_int(ctx, "run", op->split_columns);
    tmpl_set_int(ctx, "partial", op->partial);
    tmpl_set_int(ctx, "buffer", op->buffer / 4);
    return ctx;
}

static tmpl_value *sum_context(const wino_spec *s, const cg_kernel *k, const cg_wino_op *op)
{
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", wino_header_lines(s, k, op, "dw, the sum of the runs' partial results"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "out", "dw");
    tmpl_set_str(ctx, "index_type", "unsigned"); /* partial is 32-bit (accgrad_generate) */
    tmpl_set_int(ctx, "threads", SUM_THREADS);
    tmpl_set_int(ctx, "splits", op->splits);
    tmpl_set_int(ctx, "out_elems", op->partial);
    tmpl_map_set(ctx, "epi", cg_value_epilogue(0, false)); /* dw: no epilogue */
    return ctx;
}

/* The accgrad kernel's shared memory with `stages` buffers of raw tiles: the larger of one chunk's
 * tiles transformed plus those buffers, and the products (one float of padding per element). */
static int64_t accgrad_shared_bytes(const wino_spec *s, int stages)
{
    const int64_t chunk = 4 * (ACCGRAD_TILES * plane_elements(s) * (ACCGRAD_OUTPUTS + ACCGRAD_CHANNELS) +
                               stages * accgrad_raw_stage(s)),
                  products = 4 * plane_elements(s) * (ACCGRAD_OUTPUTS * ACCGRAD_CHANNELS + 1);
    return chunk > products ? chunk : products;
}

/* dw = AT [sum over the tiles of D V] A of F(r, m): the fused kernel over blocks of (k, c) and
 * runs of tiles, then, for more than one run, the sum of the runs' results. */
static convgen_status accgrad_generate(const cg_problem *p, wino_spec *s, const cg_target *t, const cg_tuning *tune,
                                       cg_generated *out)
{
    const int64_t m[] = {1, s->m[1], s->m[2]}, taps = s->kernel[0] * s->kernel[1] * s->kernel[2],
                  threads = 8 * plane_elements(s);
    const int stages = raw_buffers(t, threads, accgrad_shared_bytes(s, 1), accgrad_shared_bytes(s, 2));
    const int64_t shared = accgrad_shared_bytes(s, stages);
    int64_t blocks = wino_div_up(p->k, ACCGRAD_OUTPUTS) * wino_div_up(accgrad_channels(p, s), ACCGRAD_CHANNELS), splits,
            run, partial;
    if (!cg_mul64(p->k * p->c, taps, &partial) || partial > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: k x c x taps = %lld x %lld x %lld passes the "
                       "kernels' 32-bit indices", (long long)p->k, (long long)p->c, (long long)taps);
    const int64_t resident = blocks_per_sm(t, threads, shared, ACCGRAD_REGISTERS);
    choose_splits(s, blocks, resident * target_sms(t), 4 * partial, tune ? tune->workspace_limit : 0, &splits, &run);
    s->workspace = 4 * partial * (splits > 1 ? splits : 0); /* at most the limit, or 4 x 65535 x partial */
    s->sm_count = t->sm_count;
    snprintf(s->plan[0], sizeof s->plan[0], "in one kernel over the tiles:");
    snprintf(s->plan[1], sizeof s->plan[1],
             "blocks of %d output x %d input channels%s, the tiles in chunks of %d, %lld transform elements, %lld "
             "tiles in %lld run%s of %lld (sized for %d multiprocessors, %lld block%s each), %s buffer%s of raw tiles",
             ACCGRAD_OUTPUTS, ACCGRAD_CHANNELS, s->first == 0 ? " (channel, depth tap)" : "", ACCGRAD_TILES,
             (long long)plane_elements(s), (long long)s->columns, (long long)splits, splits > 1 ? "s" : "",
             (long long)run, target_sms(t), (long long)resident, resident > 1 ? "s" : "", stages > 1 ? "two" : "one",
             stages > 1 ? "s" : "");
    out->workspace_bytes = s->workspace;
    out->chunks = 1;

    cg_wino_op f = wino_tiles_op(s, CG_WINO_BT, p->n, p->c, s->in, s->tiles, m, s->pad, WINO_V);
    f.stage = CG_WINO_FUSED_ACCGRAD;
    int64_t pairs = accgrad_channels(p, s);
    f.row_block = ACCGRAD_OUTPUTS, f.channel_scale = (double)(wino_div_up(pairs, ACCGRAD_CHANNELS) * ACCGRAD_CHANNELS) / (double)pairs;
    f.buffer = 0;
    f.rows = p->k, f.out_size[0] = s->out[0], f.out_size[1] = s->out[1], f.out_size[2] = s->out[2];
    f.outer_stride = taps, f.row_stride = p->c * taps;
    f.splits = splits, f.split_columns = run, f.partial = partial;
    f.flip = p->flip;
    cg_kernel *k = add_kernel(&f, 1, "convgen_winograd_fused_accgrad", out);
    k->grid[0] = (unsigned)wino_div_up(accgrad_channels(p, s), ACCGRAD_CHANNELS);
    k->grid[1] = (unsigned)wino_div_up(p->k, ACCGRAD_OUTPUTS);
    k->grid[2] = (unsigned)splits;
    k->block[0] = (unsigned)threads;
    k->shared_bytes = (unsigned)shared;
    if (k->grid[1] > 65535 || k->grid[2] > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: k = %lld needs more than 65535 blocks of %d",
                       (long long)p->k, ACCGRAD_OUTPUTS);
    if (accgrad_channels(p, s) + ACCGRAD_CHANNELS > INT32_MAX)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: c = %lld passes the kernel's 32-bit channel "
                       "indices", (long long)p->c);
    convgen_status st = check_shared(t, k);
    if (st != CONVGEN_SUCCESS)
        return st;
    bool failed = false;
    st = render(accgrad_context(p, s, k, &f, stages, &failed), failed, "winograd/winograd_fused_accgrad.cu", k);
    if (st != CONVGEN_SUCCESS || splits == 1)
        return st;

    /* the partial results at byte 0 of the workspace, where split_reduce.cu reads them */
    cg_wino_op sum = {.stage = CG_WINO_SUM, .buffer = 0, .splits = splits, .partial = partial};
    for (int d = 0; d < CG_WINO_DIMS; ++d)
        sum.m[d] = s->tf[d].m, sum.r[d] = s->tf[d].r;
    k = add_kernel(&sum, 2, "convgen_winograd_fused_accgrad_sum", out);
    k->grid[0] = (unsigned)wino_div_up(partial, SUM_THREADS);
    k->block[0] = SUM_THREADS;
    return render(sum_context(s, k, &sum), false, "split_reduce.cu", k);
}

/* The sizes the fused kernels take in 32 bits: the batch's tiles, the weights' transform's
 * threads (one per depth tap, channel and output), and a plane's points with the tiles past its
 * edge. Unlike winograd, there are no V and M buffers: U [e][c][k] alone, at byte 0. */
static bool fused_sizes(const cg_problem *p, wino_spec *s)
{
    s->batch = p->n, s->chunks = 1;
    int64_t threads, in_plane, out_plane;
    return cg_mul64(p->n, s->tiles[0] * s->tiles[1] * s->tiles[2], &s->columns) &&
           s->columns <= INT32_MAX - CLUSTER_TILES /* >= FUSED_TILES */ && cg_mul64(p->c, p->k, &s->matrix[WINO_U]) &&
           cg_mul64(s->matrix[WINO_U], s->tf[0].alpha, &threads) && threads <= INT32_MAX &&
           cg_mul64(s->in[1] + WINO_MAX_ALPHA, s->in[2] + WINO_MAX_ALPHA, &in_plane) && in_plane <= INT32_MAX / 2 &&
           cg_mul64(s->out[1] + WINO_MAX_ALPHA, s->out[2] + WINO_MAX_ALPHA, &out_plane) && out_plane <= INT32_MAX / 2;
}

/* The tiles: the caller's, else those of the fewest transform elements within alpha
 * FUSED_MAX_ALPHA, except that fprop and bprop take alpha 8 across the plane where it needs no more
 * transform elements than those, the cluster kernel takes the layer with it and its weights'
 * transforms fit the workspace limit:
 * - F(4x4, 5x5) for a 5 x 5 kernel (on an H200 F2 ran 1.98x faster so than at F(2x2, 5x5) with
 *   64 outputs a block, 2.8x with 128);
 * - F(6x6, 3x3) for a 3 x 3 one where the blocks take 128 outputs and fill the GPU at least twice
 *   (V3 1.092 ms against F(4x4, 3x3)'s 1.367, L5 bprop 0.860 against 0.921 at as many transform
 *   elements, Z3 0.530 against 0.708; R3's and U3's 144 blocks, 1.1 waves of clusters of 8, ran
 *   18% and 15% slower; with 64 outputs a block V3 ran 1.347 against 1.388 and L5 bprop 12%
 *   slower: bench/NOTES.md, "Issue 30, session 56").
 * A 3-D layer's tiles are one slice deep here, so its errors are the plane's (F(6x6, 3x3): 6e-6 on
 * Z3), not those of three dimensions' transforms that keep winograd's within WINO_MAX_VOLUME_ALPHA. */
static convgen_status fused_tiles(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                                  wino_spec *s)
{
    convgen_status st = wino_choose_tiles(p, pass, tune, FUSED_MAX_ALPHA, s);
    const int plane = p->rank - 2;
    const int64_t r = p->kernel[plane];
    if (st != CONVGEN_SUCCESS || pass == CONVGEN_ACCGRAD || p->kernel[plane + 1] != r || (r != 3 && r != 5) ||
        (tune && (tune->winograd_m[plane] || tune->winograd_m[plane + 1])) || !fused_sizes(p, s))
        return st;
    cg_tuning eight = tune ? *tune : (cg_tuning){0};
    eight.winograd_m[plane] = eight.winograd_m[plane + 1] = (int)(9 - r); /* alpha 8 */
    wino_spec wide;
    bool bprop = pass == CONVGEN_BPROP;
    int64_t data_ch = bprop ? p->k : p->c, out_ch = bprop ? p->c : p->k;
    if (wino_choose_tiles(p, pass, &eight, 8, &wide) != CONVGEN_SUCCESS || !fused_sizes(p, &wide) ||
        wide.columns * plane_elements(&wide) > s->columns * plane_elements(s) ||
        !cluster_blocks(&wide, t, data_ch, out_ch))
        return CONVGEN_SUCCESS;
    const cluster_shape sh = cluster_shape_of(&wide, t, out_ch);
    if (r == 3 && (sh.outputs != 128 || launch_blocks(&wide, out_ch, sh.outputs, wide.tf[1].alpha / sh.rows) <
                                            2 * (int64_t)target_sms(t)))
        return CONVGEN_SUCCESS;
    int64_t workspace = wino_align_up(weights_bytes(&wide, t, data_ch, out_ch, true));
    if (!tune || !tune->workspace_limit || workspace <= tune->workspace_limit)
        *s = wide;
    return CONVGEN_SUCCESS;
}

static convgen_status fused_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                     const cg_tuning *tune, cg_generated *out)
{
    /* a 3-D layer's tiles one slice deep: F(1, r0) along the depth, its taps summed as channels */
    cg_tuning slices = tune ? *tune : (cg_tuning){0};
    if (p->rank == 3) {
        if (slices.winograd_m[0] > 1)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->winograd_m[0] = %d: winograd-fused sums a 3-D "
                           "layer's depth taps directly, its tiles one slice deep (winograd_m[0] 0 or 1)",
                           slices.winograd_m[0]);
        slices.winograd_m[0] = 1;
        tune = &slices;
    }
    wino_spec s;
    convgen_status st = fused_tiles(p, pass, t, tune, &s);
    if (st != CONVGEN_SUCCESS)
        return st;
    /* a fixed tile or fused_tiles' 8 x 8 only: the other defaults stay within; 8 x 8 tiles in fprop
     * and bprop on the cluster kernel, if forward_generate finds it takes the layer */
    bool cluster_only = pass != CONVGEN_ACCGRAD && s.tf[1].alpha == 8 && s.tf[2].alpha == 8;
    if (plane_elements(&s) > FUSED_MAX_ELEMENTS && !cluster_only)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: F(%dx%d, %lldx%lld) has %lld transform elements; "
                       "the fused kernels take up to %d (64, 8 x 8, on the cluster kernel in fprop and bprop)",
                       s.m[1], s.m[2], (long long)s.kernel[1], (long long)s.kernel[2], (long long)plane_elements(&s),
                       FUSED_MAX_ELEMENTS);
    /* The batch in one go: the workspace holds the weights' transforms, or accgrad's partial dw. */
    if (!fused_sizes(p, &s))
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: this layer's planes or tiles pass the kernels' "
                                                    "32-bit indices");
    s.algo = "winograd-fused";
    const bool inside = tune && tune->weights == CONVGEN_WEIGHTS_INSIDE;
    if (inside && pass == CONVGEN_ACCGRAD)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "winograd-fused: weights=inside: fprop and bprop only (accgrad's "
                       "second operand is dy, not the weights)");
    return pass == CONVGEN_ACCGRAD ? accgrad_generate(p, &s, t, tune, out) : forward_generate(p, &s, t, inside, out);
}

/* Whether a 2-D fprop's or bprop's tile of the fewest transform elements leaves the GPU idle: its
 * one-block kernel's blocks fewer than an H100's or H200's multiprocessors (the variants know no
 * target). There F(2x2, r), at more blocks of less work each, ran faster on an H200 (S27 fprop 19.8
 * us against 24.8 at F(4x4, 3x3)'s 98 blocks, bprop 19.4 against 24.7, S13 29.1 / 28.1 against
 * 35.8 / 33.4 at 72 blocks; S16 at 128 blocks: fprop 30.8 against 35.3, bprop 38.8 against 35.9):
 * AUTO times it too at effort measure (bench/NOTES.md, "Issue 30, session 67"). */
static bool idle_at_chosen_tile(const cg_problem *p, convgen_pass pass, const cg_tuning *fixed)
{
    wino_spec s;
    if (p->rank != 2 || pass == CONVGEN_ACCGRAD || fixed->winograd_m[0] || fixed->winograd_m[1] ||
        wino_choose_tiles(p, pass, fixed, FUSED_MAX_ALPHA, &s) != CONVGEN_SUCCESS || !fused_sizes(p, &s) ||
        (s.m[1] <= 2 && s.m[2] <= 2))
        return false;
    const int64_t out_ch = pass == CONVGEN_BPROP ? p->c : p->k;
    return wino_div_up(s.columns, FUSED_TILES) * wino_div_up(out_ch, one_block_blocking(out_ch).outputs) < CG_DEFAULT_SMS;
}

/* Its tiles as winograd's (the GEMM is its own kernel's); a 3-D layer's across its plane only, at
 * EXHAUSTIVE every m from 2 with m + r - 1 <= FUSED_MAX_ALPHA for the plane's larger kernel extent
 * r, the depth left to fused_generate (one slice deep); at effort measure, F(2x2, r) beside the
 * chosen tile where that leaves the GPU idle (idle_at_chosen_tile). fprop and bprop: each tile of
 * the one-block kernel (or the chosen one) again with the weights' transforms made inside (where the caller left
 * that open), after those made before, so that a tie keeps what can be prepared. */
static int fused_variants(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed, cg_tuning *out,
                          int max)
{
    int n = p->rank == 3 ? wino_tile_variants(p, effort, fixed, false, 1, FUSED_MAX_ALPHA, out, max)
                         : wino_variants(p, effort, fixed, false, out, max);
    if (effort == CONVGEN_EFFORT_MEASURE && n == 1 && n < max && idle_at_chosen_tile(p, pass, fixed)) {
        out[n] = out[0];
        out[n].winograd_m[0] = out[n].winograd_m[1] = 2;
        ++n;
    }
    if (pass == CONVGEN_ACCGRAD || fixed->weights)
        return n;
    const int plane = p->rank - 2;
    for (int i = 0, before = n; i < before && n < max; ++i) {
        bool one_block = true; /* a tile past alpha FUSED_MAX_ALPHA is the cluster kernel's, which refuses it */
        for (int d = plane; d < p->rank; ++d)
            one_block &= out[i].winograd_m[d] + p->kernel[d] - 1 <= FUSED_MAX_ALPHA;
        if (one_block) {
            out[n] = out[i];
            out[n++].weights = CONVGEN_WEIGHTS_INSIDE;
        }
    }
    return n;
}

static const cg_knob fused_knobs[] = {
    {"m", cg_tile_print, cg_tile_parse},
    {"weights", cg_weights_print, cg_weights_parse},
    {NULL, NULL, NULL},
};

const cg_planner cg_winograd_fused_planner = {
    .algo = CONVGEN_ALGO_WINOGRAD_FUSED,
    .name = "winograd-fused",
    .applicable = fused_applicable,
    .generate = fused_generate,
    .knobs = fused_knobs,
    .variants = fused_variants,
};
