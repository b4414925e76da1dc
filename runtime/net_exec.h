/* The network executor's state, shared by its two modes: net.c (planning, the device mode's
 * patch pipeline, explain) and net_host.c (the host mode: a patch's tensors in pinned host
 * memory, the network in segments run a chunk at a time). */
#ifndef CG_NET_EXEC_H
#define CG_NET_EXEC_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "convgen.h"
#include "net/net.h"
#include "util.h"

typedef struct pipe_slot {
    float *host_in, *host_out;      /* pinned: a patch's packed input and its output (host mode: its
                                       final tensor or dense patch), staged while another computes */
    CUdeviceptr dev_in, dev_out;
    CUevent uploaded, computed, downloaded;
    bool used;                      /* something went through it: its events were recorded */
} pipe_slot;

/* How a network's patch was chosen. */
typedef enum {
    CG_NET_PATCH_GIVEN = 0, /* convgen_net_options.fragment */
    CG_NET_PATCH_MODELED,   /* the cost model's best (effort estimate, or an offline context) */
    CG_NET_PATCH_MEASURED,  /* the cost model's best few, timed */
    CG_NET_PATCH_WISDOM,    /* an earlier measurement's */
} cg_net_patch_by;

/* A patch the measured choice timed: its final fragments, mode, and the volume's seconds (no
 * volume: a million output voxels') measured and by the cost model. */
enum { CG_NET_MAX_CANDIDATES = 8 };
typedef struct cg_net_candidate {
    int64_t m[3];
    convgen_net_mode mode;
    double measured, modeled; /* measured < 0: it did not run (the error is in why) */
    char why[96];
} cg_net_candidate;

struct convgen_net {
    convgen_context *ctx;
    cg_net net;
    cg_net_patch patch;
    size_t memory_limit;
    int effort;
    convgen_net_mode mode;                       /* as chosen: DEVICE or HOST */
    convgen_plan *layer[CG_NET_MAX_LAYERS];      /* device mode: a convolution's, or a pooling's fragments */
    convgen_plan *interleave[CG_NET_MAX_LAYERS]; /* the poolings', undone, the last one first */
    int interleaves;
    CUdeviceptr w[CG_NET_MAX_LAYERS], bias[CG_NET_MAX_LAYERS];
    CUdeviceptr buf[2], workspace;
    size_t buf_bytes, workspace_bytes, weight_bytes;
    /* Two slots of the pipeline: while one patch (host mode: one chunk) computes, the next
     * one's input goes up and the previous one's output comes down, each in a device buffer of
     * its own, on streams of their own; events order them. */
    pipe_slot slot[2];
    size_t in_bytes, out_bytes; /* a slot's input and output buffers */
    CUstream up, down;
    /* Host mode. */
    size_t host_limit;
    double bw_up, bw_down;      /* host <-> device bytes/s, pinned */
    cg_net_segment seg[CG_NET_MAX_LAYERS + 1];
    int segments;
    convgen_plan *chunk_plan[CG_NET_MAX_LAYERS + 1][2][CG_NET_MAX_LAYERS]; /* [segment][a full chunk, the last][layer - first] */
    float *tensor[2];           /* pinned: the patch's tensors, ping-ponged between segments */
    size_t tensor_bytes;
    size_t stage_in_bytes, stage_out_bytes; /* a slot's host_in and host_out */
    /* Two patches in flight: the last segment's chunks go through pair[0][k] (slot k's input
     * buffer, an output of their own), the next patch's first segment's through pair[1][k] (an
     * input of their own, slot k's output buffer), so that each has two slots to alternate. */
    pipe_slot pair[2][2];
    size_t pair_out_bytes, pair_in_bytes;
    /* How the patch was chosen (net_create.c), for explain. */
    cg_net_patch_by patch_by;
    int64_t volume[3];          /* the options', depth first (0: not given) */
    int tried;                  /* MEASURED: the candidates timed, fastest first */
    cg_net_candidate candidate[CG_NET_MAX_CANDIDATES];
};

/* A layer's extents as a descriptor takes them: the last `rank` of depth, height, width. */
static inline void cg_net_spatial(int rank, const int64_t ext[3], int64_t out[CONVGEN_MAX_RANK])
{
    for (int d = 0; d < rank; ++d)
        out[d] = ext[3 - rank + d];
}

static inline convgen_status cg_net_cuda(const convgen_net *n, CUresult r, const char *what)
{
    return r == CUDA_SUCCESS ? CONVGEN_SUCCESS : cg_cuda_fail(n->ctx->drv, r, what);
}

/* net.c: layer i's convolution plan for `batch` entries and k maps of its input shape `in`
 * (the epilogue its line says), its workspace within the limit (n->workspace_bytes grows to
 * it); a pooling's plan of `mode` for batch x c of extent ext. */
convgen_status cg_net_plan_conv(convgen_net *n, int i, int64_t batch, int64_t k, const cg_net_tensor *in,
                                size_t workspace_limit, convgen_plan **plan);
convgen_status cg_net_plan_pool(convgen_net *n, int i, convgen_pool_mode mode, int64_t batch, int64_t c,
                                const int64_t ext[3], convgen_plan **plan);
/* x [C][in] at `origin` into the packed patch [C][patch.in], zeros past the volume's edge;
 * the dense patch [K][patch.out] into y [K][out] at `origin`, the part inside out. */
void cg_net_pack_input(const convgen_net *n, const float *x, const int64_t in[3], const int64_t origin[3], float *dst);
void cg_net_place_output(const convgen_net *n, const float *src, float *y, const int64_t out[3],
                         const int64_t origin[3]);
/* What goes on in a pipeline slot between its input's copy up and the next item's: the
 * compute (on the caller's stream) and the copies down (on n->down). */
typedef struct slot_steps {
    convgen_status (*compute)(convgen_net *n, const pipe_slot *p, convgen_stream stream, void *arg);
    convgen_status (*download)(convgen_net *n, const pipe_slot *p, void *arg);
    void *arg;
} slot_steps;

/* `height` rows of `width` bytes between host memory, `host_pitch` bytes apart, and device
 * memory, `dev_pitch` apart: one copy where both are packed, else one 2-D copy (a row per
 * loop past the driver's 2 GiB pitch), on `stream`; up: host to device. */
convgen_status cg_net_copy_rows(const convgen_net *n, bool up, void *host, size_t host_pitch, CUdeviceptr dev,
                                size_t dev_pitch, size_t width, size_t height, CUstream stream);

/* A slot's input: `height` rows of `width` bytes of host memory, `pitch` bytes apart (one row:
 * a contiguous input), packed on the device. Where the previous item through the other slot
 * already holds the first `kept` bytes of each row (a depth chunk's rows that its predecessor
 * read too), they are copied on the device from `kept_from`, `kept_pitch` bytes apart, and
 * only the rest of each row comes up. */
typedef struct slot_input {
    const float *src;
    size_t width, height, pitch;
    CUdeviceptr kept_from;
    size_t kept, kept_pitch;
} slot_input;

/* The input `in` through slot p: up on n->up once the slot's last item computed (dev_in
 * free), compute on `stream` once up and once the slot's last output came down (dev_out free),
 * down on n->down once computed; the slot's events record each. Returns without waiting. */
convgen_status cg_net_through_slot(convgen_net *n, pipe_slot *p, const slot_input *in, const slot_steps *steps,
                                   convgen_stream stream);
/* Where patch t of a volume of `tiles` patches a dimension starts in its dense output `out`:
 * every patch.out, the last of a dimension moved back to end at the output's edge; at 0 where
 * the patch is larger than the volume (its one patch runs past the edge). */
void cg_net_patch_origin(const convgen_net *n, int64_t t, const int64_t tiles[3], const int64_t out[3], int64_t at[3]);
/* A convolution plan's algorithm and time into `how`; its milliseconds, < 0 where none is known. */
double cg_net_layer_ms(const convgen_plan *plan, char *how, size_t size);

/* net.c (which net_create.c uses): the patch of final fragments m in `mode` (DEVICE or HOST), its plans (the host mode's
 * segments too); its buffers (and random weights where none were set); their release, after
 * which cg_net_allocate may run again. */
convgen_status cg_net_plan_patch(convgen_net *n, const int64_t m[3], convgen_net_mode mode);
convgen_status cg_net_allocate(convgen_net *n);
void cg_net_free(convgen_net *n);
/* The host <-> device bandwidths (cg_net_host_measure), the context made current. */
convgen_status cg_net_measure_bus(convgen_net *n);

/* ---- net_host.c ---- */

/* What n plans under (generator/net/net.h): a chunk's or a device-mode patch's tensors in the
 * device's half of the memory limit less the weights, the host's limit, the measured bus. */
cg_net_budget cg_net_budget_of(const convgen_net *n);
/* Patch p's segments for the host mode (cg_net_segments) under n's budget. */
double cg_net_host_segments(const convgen_net *n, const cg_net_patch *p, cg_net_segment *seg, int *segments);
/* Plans every segment's chunks (n->patch, n->seg set), each convolution's workspace within
 * what the buffers and weights leave. */
convgen_status cg_net_host_plan(convgen_net *n);
void cg_net_host_release(convgen_net *n);
/* The pinned tensors and the pair's buffers (after the slots', which the pair shares); the
 * slots' and activations' device sizes (n->in_bytes, out_bytes, buf_bytes) are set by
 * cg_net_host_plan. */
convgen_status cg_net_host_allocate(convgen_net *n);
void cg_net_host_free(convgen_net *n);
/* The host <-> device bandwidths (n->bw_up, bw_down), measured with pinned copies. */
convgen_status cg_net_host_measure(convgen_net *n);
/* Every patch of the volume x [C][ext] into y [K][out], `tiles` patches a dimension: while one
 * patch's segments run on the device, a host thread places the one before and packs the one
 * after, each in a slot's staging buffers. Returns when y holds them. The context is current. */
convgen_status cg_net_host_infer(convgen_net *n, const float *x, const int64_t ext[3], float *y, const int64_t out[3],
                                 const int64_t tiles[3], convgen_stream stream);
void cg_net_host_explain(const convgen_net *n, cg_buf *b);
/* Each segment of a patch timed alone through the pipeline, and the last beside the next
 * patch's first, `runs` times (at most CG_NET_PROFILE_RUNS), beside the cost model's: into b. */
enum { CG_NET_PROFILE_RUNS = 5 };
convgen_status cg_net_host_profile(convgen_net *n, int runs, cg_buf *b);

#endif
