/* A 3-D (or 2-D) ConvNet for sliding-window inference (ZNNi): convolutions (valid, stride 1,
 * with bias and, where the line says so, ReLU) and max poolings, read from a plain-text network
 * file. Its planning is arithmetic: the field of view, the patches that max-pooling fragments
 * (MPF) take without losing a voxel, each layer's tensor, and where each output voxel of the
 * fragments lands in the dense output. Rank 2 is held as rank 3 with a depth of 1. */
#ifndef CG_NET_H
#define CG_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convgen.h"

enum { CG_NET_MAX_LAYERS = 32 };

typedef enum { CG_NET_CONV = 0, CG_NET_POOL = 1 } cg_net_layer_kind;

typedef struct cg_net_layer {
    cg_net_layer_kind kind;
    int64_t k;    /* CONV: output maps */
    int size[3];  /* CONV: the kernel; POOL: the window (and stride); depth first */
    bool relu;    /* CONV: max(0, .) after the bias */
} cg_net_layer;

typedef struct cg_net {
    int rank;     /* 2 or 3 */
    int64_t c;    /* input channels */
    int count;
    cg_net_layer layers[CG_NET_MAX_LAYERS];
} cg_net;

/* Reads a network file's text:
 *     # comment (also after a line's words)
 *     input C                      input channels, the first line
 *     conv K DxHxW [relu]          K maps of a DxHxW kernel (HxW for rank 2), bias, then ReLU
 *     pool DxHxW                   max pooling, window = stride (1..8 a dimension, at most 64
 *                                  elements, as convgen_pool_desc)
 * Every line's rank must agree. Failures name the line ("line 3: ..."). */
convgen_status cg_net_parse(const char *text, cg_net *net);

/* The network as one line, "input 1; conv 80 2x2x2 relu; pool 2x2x2; ..." (rank 2: HxW), the
 * same for every text that parses to it, into buf; false where it does not fit `size`
 * (CG_NET_TEXT_MAX always does). With each "; " a newline, cg_net_parse reads it back. */
enum { CG_NET_TEXT_MAX = CG_NET_MAX_LAYERS * 32 + 16 };
bool cg_net_text(const cg_net *net, char *buf, size_t size);

/* The field of view per dimension: how far one output voxel sees, 1 + the sum over layers of
 * (size - 1) times the product of the pooling windows before it. */
void cg_net_field_of_view(const cg_net *net, int64_t fov[3]);

/* A layer's tensor in the MPF evaluation of one patch: batch entries (fragments of the patch),
 * channels, extent. shape[0] is the input; shape[i + 1] layer i's output. */
typedef struct cg_net_tensor {
    int64_t batch, c, ext[3];
} cg_net_tensor;

typedef struct cg_net_patch {
    int64_t in[3];     /* the input patch */
    int64_t out[3];    /* its dense output: in - field of view + 1 */
    int64_t m[3];      /* each final fragment's extent */
    int64_t stride[3]; /* the product of the pooling windows: out = m * stride */
    cg_net_tensor shape[CG_NET_MAX_LAYERS + 1];
} cg_net_patch;

/* The patch whose final fragments are m voxels a side: walking back from the output, a
 * convolution adds size - 1, a pooling of window p takes p s + p - 1 (so that every fragment of
 * its input has the same size and no voxel is dropped). Fails, naming the dimension, where an
 * extent passes 2^31, or the layer whose tensor passes 2^62 elements. */
convgen_status cg_net_patch_of(const cg_net *net, const int64_t m[3], cg_net_patch *patch);

/* Layer i's weights: K x C x kernel floats for a convolution (C: the maps that reach it), 0 for
 * a pooling or an i out of range. Its bias is K more. */
int64_t cg_net_weight_count(const cg_net *net, int i);

/* A patch's multiply-adds: every convolution's over all the patch's fragments. */
double cg_net_patch_macs(const cg_net *net, const cg_net_patch *patch);

/* Where the final fragments' voxel (batch entry b, position j) lands in the dense output of the
 * patch: b holds each pooling's fragment f (its window offset) with the last pooling's outermost,
 * as convgen_pool_desc's FRAGMENTS lay them out, and the dense position along a dimension is
 * o_1 + p_1 (o_2 + p_2 (... + p_L j)). Writes pos[3]; b must be below the final batch of a
 * patch cg_net_patch_of accepted (which bounds the batch). */
void cg_net_dense_position(const cg_net *net, int64_t b, const int64_t j[3], int64_t pos[3]);

/* Of the e elements from `origin` on, those inside [0, extent): what a patch past the volume's
 * edge copies or places in one dimension. */
static inline int64_t cg_net_inside(int64_t e, int64_t origin, int64_t extent)
{
    int64_t left = extent - origin;
    return left < 0 ? 0 : left < e ? left : e;
}

/* The final fragments of a patch, src [F][K][p->m] (F the final batch), into y [K][out] at
 * `origin`, each voxel at its dense position (cg_net_dense_position) where that lies inside
 * out (a patch past the volume's edge): the interleavings, done by the host. Fails only for
 * want of memory. */
convgen_status cg_net_place_fragments(const cg_net *net, const cg_net_patch *p, const float *src, float *y,
                                      const int64_t out[3], const int64_t origin[3]);

static inline int64_t cg_net_tensor_elems(const cg_net_tensor *t)
{
    return t->batch * t->c * t->ext[0] * t->ext[1] * t->ext[2];
}

/* A patch's dense output elements: the last layer's maps over patch->out. */
static inline int64_t cg_net_dense_elems(const cg_net *net, const cg_net_patch *p)
{
    return p->shape[net->count].c * p->out[0] * p->out[1] * p->out[2];
}

/* The largest of a patch's tensors, in elements (the interleavings keep the last one's count:
 * the dense output is never larger). */
static inline int64_t cg_net_largest_elems(const cg_net *net, const cg_net_patch *p)
{
    int64_t most = 0;
    for (int i = 0; i <= net->count; ++i)
        most = cg_net_tensor_elems(&p->shape[i]) > most ? cg_net_tensor_elems(&p->shape[i]) : most;
    return most;
}

/* What the host mode's last segment leaves a patch: the dense patch where it interleaves, else
 * the final fragments; staged for the larger of the two, in elements. */
static inline int64_t cg_net_stage_out_elems(const cg_net *net, const cg_net_patch *p)
{
    int64_t dense = cg_net_dense_elems(net, p), last = cg_net_tensor_elems(&p->shape[net->count]);
    return dense > last ? dense : last;
}

/* ---- net_segments.c: the network cost model and the host mode's planning ---- */

/* Layer i's seconds on patch p by the network cost model, on a GPU of `sm_count`
 * multiprocessors (0: 132); 0 for a pooling. */
double cg_net_layer_seconds(const cg_net *net, const cg_net_patch *p, int i, int sm_count);

/* What the host mode plans a patch for. */
typedef struct cg_net_budget {
    double device_bytes;     /* device mode: a patch's tensors fit in this (the rest is workspace) */
    double device_limit;     /* all segments' buffers together (cg_net_chunk_buffer_bytes) stay below
                                this: the device memory less the weights; the rest is workspace */
    double host_bytes;       /* the pinned host memory (cg_net_host_bytes) fits in this */
    double bus_up, bus_down; /* host <-> device bytes/s */
    int sm_count;
} cg_net_budget;

/* Host mode: layers [first, end) of a patch on the device, a chunk at a time. A chunk is nb of
 * the N batch entries of layer first's input; or, where one entry does not fit, one entry cut
 * one of two ways: kc of its output maps (a convolution's, then the poolings' after it; a
 * pooling's own maps where it comes first), or dq depth rows of the segment's last tensor, for
 * which it reads the rows of its input that those rows see (cg_net_slab_rows: overlap-save in
 * depth). The poolings inside multiply the batch by F; the chunk's output rows land at f N + b
 * (the fragments' layout). */
typedef struct cg_net_segment {
    int first, end;
    bool interleave;          /* also the interleavings: the output is the dense patch */
    int64_t batch;            /* N */
    int64_t nb, kc, dq;       /* a full chunk: nb entries; kc maps or dq rows when cut (else 0) */
    int64_t chunks;
    int64_t fragments;        /* F */
    /* A full chunk's bytes on the device: input, output, the largest tensor in between, and
     * the workspace its convolutions' fast algorithms want (one entry's: plans sub-batch). */
    double in_bytes, out_bytes, mid_bytes, ws_bytes;
    /* A patch's: bytes up and down, the convolutions' modeled seconds, the segment's. */
    double up, down, work, seconds;
} cg_net_segment;

/* What `count` segments' chunks hold on the device, in bytes: the two slots' input and output
 * buffers and the two activation buffers, each the largest of any segment's, and where two
 * patches are in flight (count > 1) the pair's own buffers, twice the last segment's output and
 * the first's input. */
double cg_net_chunk_buffer_bytes(const cg_net_segment *seg, int count);

/* The pinned host memory a patch of `count` segments takes, in bytes: two of the largest
 * tensor a segment boundary leaves (none for one segment), and each of two slots' patch input
 * and output (cg_net_stage_out_elems) staged. The tensors' own: cg_net_boundary_elems. */
int64_t cg_net_boundary_elems(const cg_net_patch *p, const cg_net_segment *seg, int count);
double cg_net_host_bytes(const cg_net *net, const cg_net_patch *p, const cg_net_segment *seg, int count);

/* What a full chunk of s counts (nb entries, kc maps or dq depth rows), and how many of those
 * the segment has (its N entries, its last tensor's maps or its depth). */
int64_t cg_net_chunk_size(const cg_net_segment *s);
int64_t cg_net_chunk_total(const cg_net_patch *p, const cg_net_segment *s);

/* A segment's time from its `chunks` chunks' total compute, copies up and copies down (any
 * unit): the slowest of the three, which overlap, and a chunk's share of the other two. */
double cg_net_pipeline_seconds(double work, double up, double down, int64_t chunks);

/* The depth rows of segment s's tensors first..end that a chunk computing rows [q0, q0 + dq) of
 * its last tensor reads and writes: from[t], rows[t] (t indexes p->shape). Walking back, a
 * convolution adds its kernel's depth - 1, a pooling of window p takes p rows a row and p - 1
 * more (so that each of its fragments has the rows), as cg_net_patch_of walks a patch. */
void cg_net_slab_rows(const cg_net *net, const cg_net_segment *s, int64_t q0, int64_t dq, int64_t from[],
                      int64_t rows[]);

/* A patch's seconds on the device from its `count` segments' work, copies up and copies down
 * (seconds) and chunks, as the host mode runs them: each segment a pipeline
 * (cg_net_pipeline_seconds), but the last one beside the next patch's first, as one pipeline of
 * both (the one mostly computing, the other mostly copying); and each chunk's launches. */
double cg_net_patch_seconds(int count, const double work[], const double up[], const double down[],
                            const int64_t chunks[]);

/* The host thread's seconds a patch beside the device: its input packed, its output placed. A
 * patch takes the longer of the two. */
double cg_net_host_work_seconds(const cg_net *net, const cg_net_patch *p);

/* Patch p's segments (each the longest run of layers one entry of which fits a share of the
 * device with its workspace, cut into as few chunks as fit; where not even one layer's entry
 * fits, each way to cut it, by maps or by depth rows through later layers, searched (bounded)
 * for the plan of least time; the interleavings in the last segment where it is one chunk of
 * everything, else the host places the final fragments) into out (may be NULL) and *count; the
 * seconds a patch takes by the cost model (cg_net_patch_seconds: per segment the slowest of its
 * convolutions together, its bytes up and its bytes down, plus a chunk's share of the other two,
 * the last segment together with the first; the host's
 * packing and placing where they take longer: a host thread does them beside the device),
 * INFINITY where some layer cannot be cut small enough or the tensors pass the host's budget. */
double cg_net_segments(const cg_net *net, const cg_net_patch *p, const cg_net_budget *b, cg_net_segment *out,
                       int *count);

/* A patch's device-mode tensors, in bytes: the two activation buffers (its largest tensor) and
 * two slots' input and dense output. The weights and the convolutions' workspace come on top. */
double cg_net_device_patch_bytes(const cg_net *net, const cg_net_patch *p);

/* The fragment extents (each 1..32, or for a known volume also the least that covers it in k
 * patches, k = 1..24; rank 2: a depth of 1) of least time per output voxel by the cost
 * model, for `volume` (0 a dimension: unknown, the patch's own outputs; a patch larger than
 * the volume runs past its edge), in host mode
 * (cg_net_segments under b) or device mode (cg_net_device_patch_bytes within b->device_bytes,
 * the rest for the workspace), the fewest patches first among equals; the `tries` in `tried`
 * already failed to plan. Its seconds a voxel, INFINITY where none fits. */
double cg_net_best_fragment(const cg_net *net, const cg_net_budget *b, bool host, const int64_t volume[3],
                            int64_t tried[][3], int tries, int64_t m[3]);

/* ---- net_eval.c: the CPU's evaluations, in float64 ---- */

/* Weights of every convolution layer i: w[i] [K][C][kd][kh][kw] and bias[i] [K] (NULL for a
 * pooling). */
typedef struct cg_net_weights {
    const double *w[CG_NET_MAX_LAYERS];
    const double *bias[CG_NET_MAX_LAYERS];
} cg_net_weights;

/* The dense output of a volume x [C][ext] by the definition, the network applied at every voxel
 * to its field of view: as the network without subsampling, its layers dilated by the product
 * of the pooling windows before them and its poolings of stride 1 (the "dilated convolution"
 * form). y [K_last][ext - field of view + 1]. */
convgen_status cg_net_eval_dense(const cg_net *net, const cg_net_weights *wt, const double *x, const int64_t ext[3],
                                 double *y);

/* The network as it was trained (max poolings of stride = window) on one field of view
 * x [C][fov]: its one output voxel, y [K_last]. What "applied at every location separately" means. */
convgen_status cg_net_eval_window(const cg_net *net, const cg_net_weights *wt, const double *x, double *y);

/* The same through max-pooling fragments, as the executor runs a patch: valid convolutions on
 * every batch entry, each pooling's fragments appended as batch entries (convgen_pool_desc's
 * FRAGMENTS layout), then every final voxel to its dense position (cg_net_dense_position).
 * x [C][patch->in], y [K_last][patch->out], the dense output of cg_net_eval_dense for that x. */
convgen_status cg_net_eval_fragments(const cg_net *net, const cg_net_weights *wt, const cg_net_patch *patch,
                                     const double *x, double *y);

#endif
