/* The direct algorithm: convolution as an implicit GEMM (Chetlur et al., "cuDNN: Efficient
 * Primitives for Deep Learning", section 4). The im2col operand exists only tile by tile in
 * shared memory; every shape constant is baked into the source and every index is split into
 * its coordinates by magic-number division (magic.h).
 *
 * Each pass is one GEMM, out[rows][cols] = A[rows][red] * B[red][cols]:
 *   fprop    rows = (n, o...)  red = (c, f...)  cols = k    A = im2col(x)   B = w
 *   bprop    rows = (n, i...)  red = (k, f...)  cols = c    A = col2im(dy)  B = w as [k f][c]
 *   accgrad  rows = (c, f...)  red = (n, o...)  cols = k    A = im2col(x)   B = dy
 * (accgrad computes dw transposed so that lanes, which run along rows, store along dw's
 * contiguous axis.) When the output tiles alone cannot fill the GPU, the reduction is split
 * over blocks (blockIdx.z) into workspace slices that a second kernel adds: deterministic,
 * unlike atomics, and the output needs no zeroing.
 *
 * A strided bprop runs per stride phase (the transposed convolution's decomposition): the
 * input pixels i with (i + pad) % stride = q are reached only by the taps f = q + stride*j,
 * from o = (i + pad - f) / stride. Each phase is a GEMM of its own over those pixels and taps,
 * on blockIdx.z beside the splits, so no tap that misses the stride grid is computed and no
 * gather divides by the stride: rows = (n, u...) with i = r + stride*u, red = (k, j...).
 *
 * A bprop with few input channels (C <= 4, rank 1 or 2) is better done as no GEMM at all:
 * direct-window (direct_window.c), a planner of its own, slides each thread's pixels over a
 * window of dy in shared memory instead. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "direct_tc.h"
#include "generate.h"
#include "values.h"
#include "templates.h"
#include "template/tmpl.h"
#include "util.h"

enum { THREADS = 256, BLOCK_RED = 8, SMEM_PAD = 4 };
#define DIRECT_EFFICIENCY 0.45 /* of the FMA rate, on layers 64 or more wide (the cost model's) */
/* Split reductions stop where their workspace would pass this. */
#define MAX_SPLIT_WORKSPACE (256ll << 20)

typedef struct direct_spec {
    int64_t rows, cols, red; /* of one stride phase where phases > 1 */
    int phases;              /* strided bprop: the stride phases, one GEMM each (blockIdx.z) */
    int block_rows, block_cols;
    int rows_apart; /* lanes along rows: a thread's rows are this far apart */
    int splits, steps, steps_per_split;
    int64_t out_elems;
    int sm_count;
    bool wide_index; /* some tensor has 2^32 or more elements: 64-bit addressing */
} direct_spec;

/* The stride phases share grid.z with the splits of the reduction (choose_spec). */
#define MAX_GRID_Z 65535

/* Whether bprop runs per stride phase: some stride is above 1, no strided dimension is dilated
 * (a dilated tap would step across phases), and the phases fit grid.z; otherwise bprop gathers
 * dy for every tap and keeps those on the stride grid. */
static bool bprop_phased(const cg_problem *p, convgen_pass pass)
{
    int64_t phases = 1;
    for (int d = 0; d < p->rank; ++d) {
        if (p->stride[d] > 1 && p->dilation[d] > 1)
            return false;
        phases *= p->stride[d]; /* stays below 2^63 while below MAX_GRID_Z before each step */
        if (phases > MAX_GRID_Z)
            return false;
    }
    return pass == CONVGEN_BPROP && phases > 1;
}

/* Per dimension of a phased bprop: the input pixels of a phase (at most; i = r + stride*u) and
 * the taps of a phase (at most; f = q + stride*j). A stride of 1 leaves in and kernel whole. */
static int64_t phase_pixels(const cg_problem *p, int d) { return (p->in[d] + p->stride[d] - 1) / p->stride[d]; }
static int64_t phase_taps(const cg_problem *p, int d) { return (p->kernel[d] + p->stride[d] - 1) / p->stride[d]; }

static void gemm_view(const cg_problem *p, convgen_pass pass, direct_spec *s)
{
    int64_t op = cg_problem_out_pixels(p), ip = cg_problem_in_pixels(p), kp = cg_problem_kernel_pixels(p);
    s->phases = 1;
    if (bprop_phased(p, pass)) {
        ip = kp = 1;
        for (int d = 0; d < p->rank; ++d) {
            ip *= phase_pixels(p, d), kp *= phase_taps(p, d);
            s->phases *= (int)p->stride[d];
        }
    }
    switch (pass) {
    case CONVGEN_FPROP: s->rows = p->n * op; s->red = p->c * kp; s->cols = p->k; break;
    case CONVGEN_BPROP: s->rows = p->n * ip; s->red = p->k * kp; s->cols = p->c; break;
    case CONVGEN_ACCGRAD: s->rows = p->c * kp; s->red = p->n * op; s->cols = p->k; break;
    }
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static convgen_status direct_applicable(const cg_problem *p, convgen_pass pass)
{
    direct_spec s;
    gemm_view(p, pass, &s);
    /* Indices are 32-bit in the kernel; the padded GEMM extents must stay below 2^31 so the
     * magic divisions are exact (magic.h) and signed coordinates cannot wrap. */
    const int64_t limit = INT32_MAX - 256;
    const char *axis = s.rows > limit ? "rows" : s.cols > limit ? "columns" : s.red > limit ? "reduction" : NULL;
    if (axis)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct: GEMM %s exceed 2^31 for this layer", axis);
    for (int d = 0; d < p->rank; ++d)
        if (p->in[d] + p->pad_before[d] + p->pad_after[d] >= (1ll << 30))
            return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct: padded in[%d] must be < 2^30", d);
    /* Column tiles go on grid.y, which stops at 65535 blocks of at least 64 columns. */
    if ((s.cols + 63) / 64 > 65535)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct: %lld GEMM columns need more than 65535 column tiles",
                       (long long)s.cols);
    return CONVGEN_SUCCESS;
}

/* A block tile's side along a GEMM extent: 128 from `wide` on, 64 below or where 128-wide tiles
 * would pad the extent by more than a fifth over 64-wide ones (G1's accgrad: 147 rows are 256
 * in tiles of 128, 192 in tiles of 64). */
static int tile_side(int64_t extent, int64_t wide)
{
    int64_t padded128 = round_up(extent, 128), padded64 = round_up(extent, 64);
    return extent >= wide && 5 * padded128 <= 6 * padded64 ? 128 : 64;
}

/* Tiles and splits. The tile follows the GEMM's shape; the split fills the GPU with at least
 * two blocks per multiprocessor when the output tiles alone would not. */
static void choose_spec(const cg_problem *p, convgen_pass pass, const cg_target *t, direct_spec *s)
{
    memset(s, 0, sizeof *s);
    gemm_view(p, pass, s);
    /* Lanes run along rows; a thread owns 4 or 8 columns. A GEMM with few columns (bprop of a
     * layer with C = 3, a layer with K = 1) gets a narrow tile with more lanes along rows, so
     * the columns past the GEMM's edge do not waste most of every FMA. */
    if (s->cols <= 16) {
        s->block_cols = s->cols <= 4 ? 4 : s->cols <= 8 ? 8 : 16;
        s->rows_apart = THREADS * 4 / s->block_cols;
        s->block_rows = THREADS;
    } else {
        s->rows_apart = 16;
        s->block_rows = tile_side(s->rows, 128);
        s->block_cols = tile_side(s->cols, 65);
    }
    s->steps = (int)((s->red + BLOCK_RED - 1) / BLOCK_RED);
    int64_t elems[3];
    cg_problem_operand_elems(p, pass, elems);
    s->out_elems = elems[2];
    s->wide_index = elems[0] >= UINT32_MAX || elems[1] >= UINT32_MAX || elems[2] >= UINT32_MAX;

    int64_t tiles = ((s->rows + s->block_rows - 1) / s->block_rows) * ((s->cols + s->block_cols - 1) / s->block_cols) *
                    s->phases;
    s->sm_count = t->sm_count;
    int64_t want = 2ll * t->sm_count;
    int64_t splits = tiles >= want ? 1 : (want + tiles - 1) / tiles;
    if (splits > s->steps / 8)   /* each split keeps at least 8 steps of work */
        splits = s->steps / 8;
    if (splits > MAX_GRID_Z / s->phases)
        splits = MAX_GRID_Z / s->phases;
    while (splits > 1 && splits * s->out_elems * 4 > MAX_SPLIT_WORKSPACE)
        --splits;
    if (splits < 1)
        splits = 1;
    s->steps_per_split = (int)((s->steps + splits - 1) / splits);
    s->splits = (s->steps + s->steps_per_split - 1) / s->steps_per_split; /* no empty split */
}

/* ---- the template context ---- */

/* Sets ctx[key] to a value built from magic constants; false where one could not be derived
 * (the builder returned NULL and cg_value_magic said why: a bug, not a shape). */
static bool set_derived(tmpl_value *ctx, const char *key, tmpl_value *v)
{
    tmpl_map_set(ctx, key, v);
    return v != NULL;
}

/* ctx[key] = cg_value_digits(...); false where a magic constant could not be derived. */
static bool put_digits(tmpl_value *ctx, const char *key, const char *index, int64_t max_index, int count,
                       const int64_t *sizes, const char *const *names, const char *rest)
{
    return set_derived(ctx, key, cg_value_digits(index, max_index, count, sizes, names, rest));
}

static const char *const o_names[] = {"o0", "o1", "o2"}, *const i_names[] = {"i0", "i1", "i2"},
                         *const f_names[] = {"f0", "f1", "f2"}, *const u_names[] = {"u0", "u1", "u2"},
                         *const j_names[] = {"j0", "j1", "j2"}, *const q_names[] = {"q0", "q1", "q2"};

/* ctx's "dims": the spatial dimensions, innermost first, and "strided": those of stride above 1.
 * False where a magic constant could not be derived. */
static bool set_dims(tmpl_value *ctx, const cg_problem *p)
{
    tmpl_value *list = tmpl_list(), *strided = tmpl_list();
    bool derived = true;
    int64_t in_stride = 1, out_stride = 1, kernel_stride = 1;
    for (int d = p->rank - 1; d >= 0; --d) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "i", d);
        tmpl_set_int(v, "in", p->in[d]);
        tmpl_set_int(v, "out", p->out[d]);
        tmpl_set_int(v, "kmax", p->kernel[d] - 1);
        tmpl_set_int(v, "stride", p->stride[d]);
        tmpl_set_int(v, "pad", p->pad_before[d]);
        tmpl_set_int(v, "dil", p->dilation[d]);
        tmpl_set_bool(v, "flip", p->flip);
        tmpl_set_int(v, "in_stride", in_stride);
        tmpl_set_int(v, "out_stride", out_stride);
        /* bprop divides t = i + pad - tap*dilation <= in - 1 + pad by the stride. */
        derived &= set_derived(v, "stride_div",
                               cg_value_magic((uint32_t)p->stride[d], p->in[d] - 1 + p->pad_before[d]));
        /* A phased bprop's phase q starts at the input pixel r = (q - pad) mod stride, which is
         * (q + shift) % stride with shift = -pad mod stride, and reads o = u + off - j with
         * off = (r + pad - q) / stride: ceil(pad / stride) where q + shift stays below the
         * stride, one less where it wraps. */
        tmpl_set_int(v, "kernel", p->kernel[d]);
        tmpl_set_int(v, "kernel_stride", kernel_stride);
        tmpl_set_int(v, "shift", (p->stride[d] - p->pad_before[d] % p->stride[d]) % p->stride[d]);
        tmpl_set_int(v, "off_base", (p->pad_before[d] + p->stride[d] - 1) / p->stride[d]);
        in_stride *= p->in[d];
        out_stride *= p->out[d];
        kernel_stride *= p->kernel[d];
        if (p->stride[d] > 1)
            tmpl_list_push(strided, tmpl_ref(v));
        tmpl_list_push(list, v);
    }
    tmpl_map_set(ctx, "dims", list);
    tmpl_map_set(ctx, "strided", strided);
    return derived;
}

/* The gathers' decompositions for one pass; max indices are the padded GEMM extents. False
 * where a magic constant could not be derived. */
static bool set_digits(tmpl_value *ctx, const cg_problem *p, convgen_pass pass, const direct_spec *s)
{
    int64_t rows_max = round_up(s->rows, s->block_rows) - 1;
    int64_t red_max = (int64_t)s->steps * BLOCK_RED - 1;
    int64_t ip = cg_problem_in_pixels(p), op = cg_problem_out_pixels(p), kp = cg_problem_kernel_pixels(p);
    const char *pix[] = {"opix", "ipix", "fpix"};
    bool derived = true;
    switch (pass) {
    case CONVGEN_FPROP:
        derived &= put_digits(ctx, "row_digits", "row", rows_max, p->rank, p->out, o_names, "n");
        derived &= put_digits(ctx, "red_digits", "red", red_max, p->rank, p->kernel, f_names, "c");
        derived &= put_digits(ctx, "out_digits", "row", rows_max, 1, &op, &pix[0], "n");
        break;
    case CONVGEN_BPROP:
        if (s->phases > 1) {
            int64_t pixels[CONVGEN_MAX_RANK], taps[CONVGEN_MAX_RANK];
            for (int d = 0; d < p->rank; ++d)
                pixels[d] = phase_pixels(p, d), taps[d] = phase_taps(p, d);
            derived &= put_digits(ctx, "row_digits", "row", rows_max, p->rank, pixels, u_names, "n");
            derived &= put_digits(ctx, "red_digits", "red", red_max, p->rank, taps, j_names, "k");
            /* blockIdx.z = (split, q...) over the strided dimensions. */
            int64_t strides[CONVGEN_MAX_RANK];
            const char *names[CONVGEN_MAX_RANK];
            int count = 0;
            for (int d = 0; d < p->rank; ++d)
                if (p->stride[d] > 1)
                    strides[count] = p->stride[d], names[count++] = q_names[d];
            derived &= put_digits(ctx, "phase_digits", "z", (int64_t)s->phases * s->splits - 1, count, strides, names,
                                  "split");
            break;
        }
        derived &= put_digits(ctx, "row_digits", "row", rows_max, p->rank, p->in, i_names, "n");
        derived &= put_digits(ctx, "red_digits", "red", red_max, p->rank, p->kernel, f_names, "k");
        derived &= put_digits(ctx, "red_split_digits", "red", red_max, 1, &kp, &pix[2], "k");
        derived &= put_digits(ctx, "out_digits", "row", rows_max, 1, &ip, &pix[1], "n");
        break;
    case CONVGEN_ACCGRAD:
        derived &= put_digits(ctx, "row_digits", "row", rows_max, p->rank, p->kernel, f_names, "c");
        derived &= put_digits(ctx, "red_digits", "red", red_max, p->rank, p->out, o_names, "n");
        derived &= put_digits(ctx, "red_split_digits", "red", red_max, 1, &op, &pix[0], "n");
        break;
    }
    return derived;
}

/* One tile loader. A free-fast loader puts consecutive lanes on consecutive rows (or
 * columns); a reduction-fast one on consecutive reduction indices, for operands that are
 * contiguous along the reduction (w, dy in accgrad, x in accgrad). */
static tmpl_value *loader(const char *name, const char *what, int block_free, bool free_fast,
                          const char *free0, int64_t free_size, const char *call)
{
    tmpl_value *v = tmpl_map();
    char strided[48], lane[16], guard[48] = "";
    int fast = free_fast ? block_free : BLOCK_RED;
    int elements = block_free * BLOCK_RED; /* a narrow tile has fewer elements than threads */
    tmpl_set_str(v, "name", name);
    tmpl_set_str(v, "what", what);
    tmpl_set_int(v, "count", elements >= THREADS ? elements / THREADS : 1);
    tmpl_set_int(v, "fast_mask", fast - 1);
    tmpl_set_int(v, "fast_log2", cg_log2_up(fast));
    snprintf(strided, sizeof strided, "%s_slow + %du * e", name, THREADS / fast);
    snprintf(lane, sizeof lane, "%s_fast", name);
    if (elements < THREADS)
        snprintf(guard, sizeof guard, "%s_slow < %du", name, elements / fast);
    tmpl_set_str(v, "guard", guard); /* which threads load, in a narrow tile */
    tmpl_set_str(v, "red_local", free_fast ? strided : lane);
    tmpl_set_str(v, "free_local", free_fast ? lane : strided);
    tmpl_set_str(v, "free0", free0);
    tmpl_set_int(v, "free_size", free_size);
    tmpl_set_str(v, "call", call);
    return v;
}

static const char *const operand_names[3][3] = {
    [CONVGEN_FPROP] = {"x", "w", "y"},
    [CONVGEN_BPROP] = {"dy", "w", "dx"},
    [CONVGEN_ACCGRAD] = {"x", "dy", "dw"},
};

static void set_loaders(tmpl_value *ctx, convgen_pass pass, const direct_spec *s)
{
    const char *const *ops = operand_names[pass], *phase = s->phases > 1 ? ", ph" : "";
    char call_a[64], call_b[64], what_a[128], what_b[128];
    snprintf(call_a, sizeof call_a, "load_a(%s, free, red%s)", ops[0], phase);
    snprintf(call_b, sizeof call_b, "load_b(%s, red, free%s)", ops[1], phase);
    bool a_free_fast = pass != CONVGEN_ACCGRAD;
    snprintf(what_a, sizeof what_a, "A loads %s: lanes along %s.", ops[0], a_free_fast ? "rows" : "the reduction");
    snprintf(what_b, sizeof what_b, "B loads %s: lanes along the reduction.", ops[1]);
    tmpl_value *list = tmpl_list();
    tmpl_list_push(list, loader("a", what_a, s->block_rows, a_free_fast, "row0", s->rows, call_a));
    tmpl_list_push(list, loader("b", what_b, s->block_cols, false, "col0", s->cols, call_b));
    tmpl_map_set(ctx, "loaders", list);
}

static int shared_bytes(const direct_spec *s)
{
    return BLOCK_RED * (s->block_rows + SMEM_PAD + s->block_cols + SMEM_PAD) * 4;
}

static void launch_geometry(const direct_spec *s, cg_kernel *k)
{
    k->grid[0] = (unsigned)((s->rows + s->block_rows - 1) / s->block_rows);
    k->grid[1] = (unsigned)((s->cols + s->block_cols - 1) / s->block_cols);
    k->grid[2] = (unsigned)(s->splits * s->phases);
    k->block[0] = THREADS;
    k->block[1] = k->block[2] = 1;
}

/* The header comment: what the file is and how it was derived. */
static tmpl_value *header_lines(const cg_problem *p, convgen_pass pass, const direct_spec *s, const cg_kernel *k,
                                const char *what)
{
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: direct convolution (implicit GEMM), %s: %s", CG_GENERATOR_VERSION,
                  convgen_pass_name(pass), what);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "GEMM%s: out[%lld rows][%lld cols] = A[rows][%lld] * B[%lld][cols]",
                  s->phases > 1 ? " per stride phase" : "", (long long)s->rows, (long long)s->cols,
                  (long long)s->red, (long long)s->red);
    if (s->phases > 1)
        cg_value_line(h, "stride phases: %d on blockIdx.z beside the splits (phase q: the input pixels i with "
                      "(i + pad) %% stride = q, the taps f = q + stride*j)", s->phases);
    cg_value_line(h, "FLOPs: %.6g (2*n*c*k*prod(kernel)*prod(out))", cg_problem_flops(p));
    cg_value_line(h,
                  "tiles: block %dx%dx%d, thread %dx%d, split reduction %d x %d steps (sized for %d multiprocessors)",
                  s->block_rows, s->block_cols, BLOCK_RED, s->block_rows / s->rows_apart,
                  s->block_cols * s->rows_apart / THREADS, s->splits, s->steps_per_split, s->sm_count);
    cg_value_line(h, "launch: grid (%u, %u, %u), block (%u, 1, 1), %d bytes of static shared memory", k->grid[0],
                  k->grid[1], k->grid[2], k->block[0], shared_bytes(s));
    cg_value_line(h, "workspace: %lld bytes", (long long)(s->splits > 1 ? s->splits * s->out_elems * 4 : 0));
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/direct/direct.cu or generator/direct/direct.c instead.");
    return h;
}

/* The GEMM kernel's template context into *out; CONVGEN_ERROR_INTERNAL (and *out NULL) where a
 * magic constant could not be derived, which cg_value_magic said. */
static convgen_status gemm_context(const cg_problem *p, convgen_pass pass, const direct_spec *s, const cg_kernel *k,
                                   tmpl_value **out)
{
    static const char *const gathers[] = {"direct/direct_fprop.cuh", "direct/direct_bprop.cuh", "direct/direct_accgrad.cuh"};
    const char *const *ops = operand_names[pass];
    tmpl_value *ctx = tmpl_map();
    char text[96];
    const char *split = s->phases > 1 ? "ph.split" : "blockIdx.z"; /* which slice of a split reduction */
    tmpl_map_set(ctx, "header", header_lines(p, pass, s, k, "the GEMM"));
    tmpl_set_str(ctx, "gather", s->phases > 1 ? "direct/direct_bprop_phased.cuh" : gathers[pass]);
    tmpl_set_int(ctx, "phases", s->phases);
    tmpl_set_str(ctx, "split", split);
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "in0", ops[0]);
    tmpl_set_str(ctx, "in1", ops[1]);
    tmpl_set_str(ctx, "out", ops[2]);
    tmpl_set_str(ctx, "index_type", s->wide_index ? "unsigned long long" : "unsigned");
    tmpl_set_int(ctx, "threads", THREADS);
    tmpl_set_int(ctx, "pad", SMEM_PAD);
    tmpl_set_int(ctx, "block_rows", s->block_rows);
    tmpl_set_int(ctx, "block_cols", s->block_cols);
    tmpl_set_int(ctx, "block_red", BLOCK_RED);
    tmpl_set_int(ctx, "thread_rows", s->block_rows / s->rows_apart);
    tmpl_set_int(ctx, "thread_cols", s->block_cols * s->rows_apart / THREADS);
    tmpl_set_int(ctx, "rows_apart", s->rows_apart);
    tmpl_set_int(ctx, "rows_apart_log2", cg_log2_up(s->rows_apart));
    tmpl_set_int(ctx, "rows", s->rows);
    tmpl_set_int(ctx, "cols", s->cols);
    tmpl_set_int(ctx, "red_size", s->red);
    tmpl_set_int(ctx, "steps", s->steps);
    tmpl_set_int(ctx, "steps_per_split", s->steps_per_split);
    tmpl_set_int(ctx, "splits", s->splits);
    tmpl_set_int(ctx, "out_elems", s->out_elems);
    if (s->splits > 1)
        snprintf(text, sizeof text, "%s * %du", split, s->steps_per_split);
    else
        snprintf(text, sizeof text, "0u");
    tmpl_set_str(ctx, "step_begin", text);
    if (s->splits > 1)
        snprintf(text, sizeof text, "min(step_begin + %du, %du)", s->steps_per_split, s->steps);
    else
        snprintf(text, sizeof text, "%du", s->steps);
    tmpl_set_str(ctx, "step_end", text);
    tmpl_set_int(ctx, "n_size", p->n);
    tmpl_set_int(ctx, "c_size", p->c);
    tmpl_set_int(ctx, "k_size", p->k);
    tmpl_set_int(ctx, "in_pixels", cg_problem_in_pixels(p));
    tmpl_set_int(ctx, "out_pixels", cg_problem_out_pixels(p));
    tmpl_set_int(ctx, "kernel_pixels", cg_problem_kernel_pixels(p));
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, s->splits == 1));
    bool derived = set_dims(ctx, p);
    derived &= set_digits(ctx, p, pass, s);
    set_loaders(ctx, pass, s);
    if (!derived) {
        tmpl_unref(ctx);
        *out = NULL;
        return CONVGEN_ERROR_INTERNAL;
    }
    *out = ctx;
    return CONVGEN_SUCCESS;
}

/* The split sum's context into *out; CONVGEN_ERROR_INTERNAL (and *out NULL) where the magic
 * division by the output's pixels could not be derived, which cg_value_magic said. */
static convgen_status reduce_context(const cg_problem *p, convgen_pass pass, const direct_spec *s, const cg_kernel *k,
                                     tmpl_value **out)
{
    *out = NULL;
    tmpl_value *div = NULL; /* the channel of y's element i is i / out_pixels % k */
    if ((p->epilogue & CG_EPILOGUE_BIAS) && s->wide_index)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "direct: a bias on a split reduction of 2^32 outputs or more");
    if ((p->epilogue & CG_EPILOGUE_BIAS) && !(div = cg_value_magic((uint32_t)cg_problem_out_pixels(p), s->out_elems - 1)))
        return CONVGEN_ERROR_INTERNAL;
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header_lines(p, pass, s, k, "the sum of the split reduction's slices"));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_str(ctx, "out", operand_names[pass][2]);
    tmpl_set_str(ctx, "index_type", s->wide_index ? "unsigned long long" : "unsigned");
    tmpl_set_int(ctx, "threads", THREADS);
    tmpl_set_int(ctx, "splits", s->splits);
    tmpl_set_int(ctx, "out_elems", s->out_elems);
    tmpl_map_set(ctx, "epi", cg_value_epilogue(p->epilogue, true));
    if (div) {
        tmpl_map_set(ctx, "pixels_div", div);
        tmpl_set_int(ctx, "k_size", p->k);
    }
    *out = ctx;
    return CONVGEN_SUCCESS;
}

static convgen_status direct_generate(const cg_problem *p, convgen_pass pass, const cg_target *t,
                                      const cg_tuning *tune, cg_generated *out)
{
    int form = tune ? tune->gemm : CONVGEN_GEMM_CHOSEN;
    if (form == CONVGEN_GEMM_TENSOR) /* else its FMA kernel: cuBLAS's GEMM is the other planners' */
        return cg_direct_tc_generate(p, pass, t, tune, out);
    direct_spec s;
    choose_spec(p, pass, t, &s);
    cg_kernel *gemm = &out->kernels[0];
    snprintf(gemm->name, sizeof gemm->name, "convgen_direct_%s", convgen_pass_name(pass));
    launch_geometry(&s, gemm);
    out->kernel_count = 1;
    gemm->epilogue = p->epilogue != 0; /* unless a split sum follows */
    tmpl_value *ctx;
    convgen_status st = gemm_context(p, pass, &s, gemm, &ctx);
    if (st == CONVGEN_SUCCESS)
        st = cg_render_kernel("direct/direct.cu", ctx, &gemm->source);
    if (st != CONVGEN_SUCCESS || s.splits == 1)
        return st;

    cg_kernel *sum = &out->kernels[1];
    snprintf(sum->name, sizeof sum->name, "convgen_direct_%s_sum_splits", convgen_pass_name(pass));
    cg_direct_sum_launch(sum, s.out_elems, THREADS);
    out->kernel_count = 2;
    out->workspace_bytes = s.splits * s.out_elems * 4;
    gemm->epilogue = false, sum->epilogue = p->epilogue != 0;
    st = reduce_context(p, pass, &s, sum, &ctx);
    return st == CONVGEN_SUCCESS ? cg_render_kernel("split_reduce.cu", ctx, &sum->source) : st;
}

/* The kernels reach 20-36 TFLOP/s of the H100's 64 on wide layers (bench/NOTES.md), less where
 * the implicit GEMM is narrow: under 64 output channels (fprop), input channels (bprop), or
 * output channels or filter taps c x prod(kernel) (accgrad) leave lanes idle. The tensor form
 * (direct_tc.c) as measured on the H200 (bench/NOTES.md, session 70), its launches apart: fprop and
 * bprop 26-42% of the FMA rate on the S layers (65% on R1, where Winograd wins anyway), accgrad
 * 46-63% (78% on R1), half that at 16 output channels. */
#define DIRECT_TC_EFFICIENCY 0.3
#define DIRECT_TC_ACCGRAD_EFFICIENCY 0.55
/* sm_90's wgmma form (B's pieces made first), as a share of the FMA peak (H100, bench/NOTES.md,
 * session 77): R1 1.39, V1 1.23, R4 1.08, S16 0.74, S13 0.56; 0.8 rates the small layers, where
 * the algorithms are closest, without pruning the large ones (candidates rated far slower than
 * the fastest are not timed) */
#define DIRECT_WGMMA_EFFICIENCY 0.8
static double direct_fma_efficiency(const cg_generated *g)
{
    const cg_problem *p = &g->problem;
    convgen_pass pass = g->pass;
    double taps = (double)p->c * (double)cg_problem_kernel_pixels(p);
    double width = pass == CONVGEN_FPROP ? (double)p->k : pass == CONVGEN_BPROP ? (double)p->c : fmin((double)p->k, taps);
    if (g->kernel_count > 1 && g->kernels[0].weights_only)
        return DIRECT_WGMMA_EFFICIENCY;
    if (g->kernel_count > 0 && strncmp(g->kernels[0].name, "convgen_direct_tc_", 18) == 0)
        return pass == CONVGEN_ACCGRAD ? DIRECT_TC_ACCGRAD_EFFICIENCY * fmin(1.0, width / 32.0) : DIRECT_TC_EFFICIENCY;
    return DIRECT_EFFICIENCY * fmin(1.0, width / 64.0);
}

/* AUTO's candidates: the FMA kernel, and the tensor cores' where that form takes the layer and
 * pass (judged for the H100's shared memory; a target without TF32 mma, or with less shared
 * memory than a chunk needs, refuses it when generated, and AUTO drops the candidate). A GEMM the
 * caller fixed for the other planners (cuBLAS's, generated, or the tensor cores' where this form
 * does not apply) leaves direct's own: its FMA kernel. */
static int direct_variants(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed, cg_tuning *out,
                           int max)
{
    (void)effort;
    direct_tc_spec s;
    bool tensor = cg_direct_tc_spec(p, pass, NULL, fixed->workspace_limit, &s) == CONVGEN_SUCCESS;
    if (max < 1)
        return 0;
    out[0] = *fixed;
    if (fixed->gemm != CONVGEN_GEMM_TENSOR || !tensor) /* its FMA kernel, whose variant string is "" */
        out[0].gemm = CONVGEN_GEMM_CHOSEN;
    if (fixed->gemm || !tensor || max < 2)
        return 1;
    out[1] = *fixed;
    out[1].gemm = CONVGEN_GEMM_TENSOR;
    return 2;
}

static const cg_knob direct_knobs[] = {{"gemm", cg_tensor_print, cg_tensor_parse}, {NULL, NULL, NULL}};

const cg_planner cg_direct_planner = {
    .algo = CONVGEN_ALGO_DIRECT,
    .name = "direct",
    .applicable = direct_applicable,
    .generate = direct_generate,
    .knobs = direct_knobs,
    .variants = direct_variants,
    .fma_efficiency = direct_fma_efficiency,
};
