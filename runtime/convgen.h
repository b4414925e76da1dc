/*
 * convgen — fully specialized CUDA convolution kernels, generated per layer shape.
 *
 * One header, C11. The shape of the API follows cuDNN/cuFFT/FFTW: opaque handles, a status
 * returned by every call, workspace queried before execution, execution on a stream, the
 * caller owning every device buffer.
 *
 *   convgen_context *ctx;   convgen_context_create(NULL, &ctx);            // device 0
 *   convgen_conv_desc d = { .rank = 2, .n = 128, .c = 64, .k = 64,
 *                           .in = {64, 64}, .kernel = {9, 9} };
 *   convgen_plan *p;        convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &p);
 *   convgen_execute(p, x, w, y, ws, ws_bytes, stream);                    // as often as needed
 *   convgen_plan_destroy(p); convgen_context_destroy(ctx);
 *
 * Nothing here needs a GPU except convgen_execute: a context created with a target
 * architecture and no device renders and compiles kernels on any machine.
 */
#ifndef CONVGEN_H
#define CONVGEN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library exports these functions only; everything else in it is hidden. */
#if defined(__GNUC__)
#define CONVGEN_API __attribute__((visibility("default")))
#else
#define CONVGEN_API
#endif

#define CONVGEN_VERSION_STRING "0.1.0"
#define CONVGEN_MAX_RANK 3

typedef enum convgen_status {
    CONVGEN_SUCCESS = 0,
    CONVGEN_ERROR_INVALID_VALUE,      /* a bad argument; convgen_last_error() names the field */
    CONVGEN_ERROR_NOT_SUPPORTED,      /* valid problem, but this algorithm does not cover it */
    CONVGEN_ERROR_OUT_OF_MEMORY,      /* host allocation failed */
    CONVGEN_ERROR_NO_DEVICE,          /* no CUDA driver or device, or an offline context */
    CONVGEN_ERROR_CUDA,               /* a CUDA driver call failed */
    CONVGEN_ERROR_COMPILE,            /* NVRTC rejected a kernel; see convgen_last_compile_log() */
    CONVGEN_ERROR_TEMPLATE,           /* a template failed to render (name:line:col in message) */
    CONVGEN_ERROR_IO,                 /* a file could not be read or written */
    CONVGEN_ERROR_INSUFFICIENT_WORKSPACE, /* execute got less workspace than the plan needs */
    CONVGEN_ERROR_INTERNAL,           /* a bug in convgen: please report it */
    CONVGEN_ERROR_WORKSPACE_LIMIT     /* the plan would need more workspace than the options allow */
} convgen_status;

/* A fixed sentence for a status. */
CONVGEN_API const char *convgen_status_string(convgen_status status);
/* The message of the last failed call on this thread ("kernel[1] = 0 must be >= 1"). */
CONVGEN_API const char *convgen_last_error(void);
/* NVRTC's log of the last failed compilation on this thread ("" if none). */
CONVGEN_API const char *convgen_last_compile_log(void);

/* Log messages (warnings, and debug lines when CONVGEN_LOG=debug). The default handler writes
 * warnings to stderr; a NULL callback silences the library. */
typedef enum { CONVGEN_LOG_WARNING = 1, CONVGEN_LOG_DEBUG = 2 } convgen_log_level;
typedef void (*convgen_log_fn)(convgen_log_level level, const char *message, void *user);
CONVGEN_API void convgen_set_log_callback(convgen_log_fn fn, void *user);

/* ---- problems ---------------------------------------------------------------------------- */

typedef enum { CONVGEN_FPROP = 0, CONVGEN_BPROP = 1, CONVGEN_ACCGRAD = 2 } convgen_pass;
typedef enum { CONVGEN_CROSS_CORRELATION = 0, CONVGEN_CONVOLUTION = 1 } convgen_mode;

/* A convolution layer: fp32, NCHW (NCDHW, NCW) packed tensors.
 *   x  [n][c][in...]      w  [k][c][kernel...]      y  [n][k][out...]
 * Spatial sizes are listed outermost first (D, H, W). A stride or dilation of 0 means 1, so a
 * designated initializer may leave them out. Output sizes follow cuDNN:
 *   out = (in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride + 1. */
typedef struct convgen_conv_desc {
    int rank;                              /* spatial rank, 1..3 */
    int64_t n, c, k;                       /* batch, input channels, output channels */
    int64_t in[CONVGEN_MAX_RANK];
    int64_t kernel[CONVGEN_MAX_RANK];
    int64_t pad_before[CONVGEN_MAX_RANK];
    int64_t pad_after[CONVGEN_MAX_RANK];
    int64_t stride[CONVGEN_MAX_RANK];
    int64_t dilation[CONVGEN_MAX_RANK];
    convgen_mode mode;
    /* What fprop's last store adds to y, CONVGEN_EPILOGUE_* bits (0: nothing): the bias of y's
     * channel (a float per output channel, given to convgen_execute_bias), then ReLU. Every
     * algorithm applies it as it writes y, never in a pass of its own. fprop only: a bprop or
     * accgrad plan of a layer with an epilogue is refused. */
    unsigned epilogue;
} convgen_conv_desc;

/* convgen_conv_desc.epilogue: y = max(conv + bias[k], 0) with both. */
enum { CONVGEN_EPILOGUE_BIAS = 1u << 0, CONVGEN_EPILOGUE_RELU = 1u << 1 };

/* Checks every field and writes the output sizes (rank entries). */
CONVGEN_API convgen_status convgen_output_size(const convgen_conv_desc *desc, int64_t out[CONVGEN_MAX_RANK]);

/* DIRECT: implicit GEMM, any layer. CUFFT: FFT convolution through cuFFT and cuBLAS (stride 1;
 * the fbfft paper's library design, and a fallback for the generated FFT algorithms); where an
 * input needs no padding cuFFT reads it in place, and then it must be 8-byte aligned. FFT: the
 * same with convgen's own FFTs (stride 1, transforms up to 256 points a side; in 3-D, 64), which
 * zero-pad and clip through their windows instead of separate kernels. */
typedef enum {
    CONVGEN_ALGO_DIRECT = 0,
    CONVGEN_ALGO_CUFFT = 1,
    CONVGEN_ALGO_FFT = 2,
    CONVGEN_ALGO_FFT_TILED = 3, /* overlap-save tiles of convgen's FFTs (rank 3: cuFFT's past 64
                                   points a side); accgrad in parts (rank 3: tiles along dy) */
    CONVGEN_ALGO_FFT_FUSED = 4, /* fft-tiled's tiles in one kernel each; fprop and bprop, rank 2 */
    CONVGEN_ALGO_WINOGRAD = 5,  /* F(m x m, r x r) minimal filtering, non-fused: transforms around a
                                   batched SGEMM (cuBLAS's or convgen's) per transform element;
                                   stride 1, rank 1 to 3, kernels up to 7 */
    CONVGEN_ALGO_WINOGRAD_FUSED = 6, /* the same in one kernel per block of tiles (accgrad: of dw),
                                       the products in registers; rank 2, kernels 2 to 5 */
    CONVGEN_ALGO_AUTO = 7, /* the planner picks among the others and their main tuning parameters:
                              from wisdom, by timing them on the device, or by a cost model
                              (convgen_plan_options.effort; convgen_plan_choice says which won) */
    CONVGEN_ALGO_DIRECT_WINDOW = 8 /* layers with few input channels (C <= 4, rank 1 to 3) without
                                      a GEMM: fprop with each thread's block of outputs slid over
                                      the taps; bprop (no dilation, stride 1 along depth) by
                                      sliding windows of dy */
} convgen_algo;
CONVGEN_API const char *convgen_algo_name(convgen_algo algo);
CONVGEN_API const char *convgen_pass_name(convgen_pass pass);

/* ---- contexts ----------------------------------------------------------------------------- */

typedef struct convgen_context convgen_context;
typedef struct convgen_plan convgen_plan;
/* Same type as cudaStream_t / CUstream; NULL is the legacy default stream. */
typedef struct CUstream_st *convgen_stream;

typedef struct convgen_context_options {
    int device;            /* CUDA device ordinal; ignored when offline */
    int offline;           /* 1: no device; render and compile for `arch` only */
    const char *arch;      /* "sm_90"; NULL: the device's own (required when offline) */
    const char *cache_dir; /* NULL: $CONVGEN_CACHE_DIR, $XDG_CACHE_HOME/convgen, ~/.cache/convgen */
    int disk_cache;        /* 0: default (on unless CONVGEN_CACHE_DIR is "off"); -1: off */
    int sm_count;          /* multiprocessors to plan for; 0: the device's count (offline: 132, an
                              H100). Fewer than the device has suits a GPU shared with others;
                              plans stay correct on any count */
} convgen_context_options;

/* NULL options: device 0, its architecture, the default cache. A device context's `arch`, if
 * given, must be the device's own. Destroy a context only after all its plans. */
CONVGEN_API convgen_status convgen_context_create(const convgen_context_options *options, convgen_context **ctx);
CONVGEN_API void convgen_context_destroy(convgen_context *ctx);
/* The target architecture ("sm_90") and, for a device context, the device's name. */
CONVGEN_API const char *convgen_context_arch(const convgen_context *ctx);
CONVGEN_API const char *convgen_context_device_name(const convgen_context *ctx);

/* ---- plans -------------------------------------------------------------------------------- */

/* Renders, compiles (or finds in the cache) and loads the kernels for one layer and pass. */
CONVGEN_API convgen_status convgen_plan_conv(convgen_context *ctx, const convgen_conv_desc *desc,
                                 convgen_pass pass, convgen_algo algo, convgen_plan **plan);
CONVGEN_API void convgen_plan_destroy(convgen_plan *plan);

/* What a caller may fix instead of the planner. Zero-initialized options are the defaults. */
typedef struct convgen_plan_options {
    /* Bytes of workspace the plan may need; 0: no limit. Planners that can need less do (sub-
     * batches; winograd-fused accgrad, fewer runs of tiles); a plan needing more fails with
     * CONVGEN_ERROR_WORKSPACE_LIMIT and says how much it needs. */
    size_t workspace_limit;
    /* CUFFT, FFT, FFT_TILED and WINOGRAD: the GEMMs (cuBLAS) may use TF32 tensor cores
     * (faster; relative error near 1e-3 instead of 1e-6). 0: strict fp32. */
    int allow_tf32;
    /* CUFFT: the transform size per spatial dimension, at least out + dilated kernel - 1 of the
     * pass's correlation; 0: the smallest 2^a 3^b 5^c 7^d that holds it. */
    int64_t fourier_size[CONVGEN_MAX_RANK];
    /* WINOGRAD: the output tile m of F(m, r) per spatial dimension (fprop, bprop), or the tile
     * of dy (accgrad, which computes F(r, m)); m + r - 1 <= 12. 0: chosen, the m with the fewest
     * transform elements for the layer among m + r - 1 <= 8 (e.g. F(6,3) for 28 or 56 outputs;
     * rank 3: m + r - 1 <= 6, e.g. F(4,3)). */
    int winograd_m[CONVGEN_MAX_RANK];
    /* DIRECT: CONVGEN_GEMM_TENSOR runs fprop, and bprop of stride 1, of up to 32 taps, and
     * accgrad of up to 9, as an implicit GEMM on the tensor cores (sm_80 on; mma.sync in 3xTF32,
     * fp32's accuracy; where a chunk of taps overruns the GPU's shared memory, refused); any other
     * value, its FMA kernel (any layer, every pass). AUTO times both.
     * WINOGRAD, FFT and FFT_TILED: what sums the products, per transform element (Winograd's
     * SGEMMs) or per frequency bin (the FFT algorithms' CGEMMs): CONVGEN_GEMM_CUBLAS (cuBLAS),
     * CONVGEN_GEMM_GENERATED (convgen's own batched GEMM kernel reading the transforms' layout;
     * strict fp32 only: with allow_tf32 cuBLAS's; fft-tiled's accgrad always cuBLAS's),
     * CONVGEN_GEMM_TENSOR (winograd's, every pass, on sm_90 only: convgen's GEMM on the tensor
     * cores in 3xTF32, fp32's accuracy, its operands laid out for it by the transforms, fprop's
     * and bprop's weights with their lo halves, which doubles their transforms' workspace (not
     * where a workspace limit holds the plan only without them); over a
     * 3-D layer's bricks of tiles fprop's and bprop's where the tiles and channels are multiples of
     * 4, and not accgrad's; convgen's generated GEMM where it does not take the step or its
     * operands do not fit the workspace limit; elsewhere as CHOSEN; fft's: its generated GEMM on
     * the tensor cores, mma.sync in 3xTF32 on sm_80 on, elsewhere the generated one), or
     * CONVGEN_GEMM_CHOSEN (0):
     * winograd, on sm_90 the tensor cores' for fprop and bprop with 64 outputs and sums or more
     * (128 over 3-D bricks) and for accgrad with 32 channels or more a side, else the generated
     * one for fprop and bprop with 33 to 64 output channels (3-D layers: to 127, summing over more
     * than 32) over at least 1000 tiles, where each measured faster (H100, H200), cuBLAS's
     * otherwise; fft, the generated one (it reads the FFT kernels' spectra as they lie, so the
     * plan has no transposes); fft-tiled, cuBLAS's. AUTO times all of them for WINOGRAD (the
     * tensor cores' where the GPU has them) and cuBLAS's and the generated one for FFT (not yet
     * the tensor cores': bench/NOTES.md, "Issue 30, session 81"). */
    int gemm;
    /* AUTO: how the algorithm is chosen, a convgen_effort. MEASURE (0) and EXHAUSTIVE plan the
     * candidates, time them on the device, check each one's output against the first's and keep
     * the fastest, unless wisdom already holds the choice; ESTIMATE times nothing and ranks the
     * candidates by a cost model of their FLOPs, bytes and launches (also what an offline
     * context does at any effort when wisdom has no entry). */
    int effort;
    /* AUTO: called after each candidate is tried (done of total), e.g. for a progress bar. */
    void (*progress)(int done, int total, void *user);
    void *progress_user;
    /* WINOGRAD_FUSED, fprop and bprop: where the weights' transforms G w G^T are made, a
     * convgen_weights. BEFORE: by a kernel of their own before the fused kernel, into the
     * workspace, which is what convgen_prepare_weights runs once per update of w. INSIDE: by the
     * fused kernel itself, each block those of the channels it sums, from w: one launch and no
     * workspace, for small layers where a launch is a good share of the time; each block repeats
     * the work, so large layers lose, and nothing is left to prepare. Not on the cluster kernel
     * (sm_90, 64 channels or more a side), which fails with INSIDE. CHOSEN (0): BEFORE. AUTO times
     * both where INSIDE applies, so an AUTO plan may have no weights to prepare: a caller that
     * prepares weights sets BEFORE, and AUTO then takes wisdom's choice where it has weights to
     * prepare and otherwise chooses among the candidates that have (or asks
     * convgen_plan_prepares_weights), as for any knob a caller fixes (README, "Choosing the
     * algorithm"). */
    int weights;
} convgen_plan_options;

/* convgen_plan_options.weights */
typedef enum { CONVGEN_WEIGHTS_CHOSEN = 0, CONVGEN_WEIGHTS_BEFORE = 1, CONVGEN_WEIGHTS_INSIDE = 2 } convgen_weights;

/* convgen_plan_options.gemm */
enum { CONVGEN_GEMM_CHOSEN = 0, CONVGEN_GEMM_CUBLAS = 1, CONVGEN_GEMM_GENERATED = 2, CONVGEN_GEMM_TENSOR = 3 };

/* convgen_plan_options.effort. MEASURE times each algorithm with its default tuning (winograd:
 * both GEMMs; fft: also the smallest 2^a 3^b basis where its own has a factor 5 or 7);
 * EXHAUSTIVE also every Winograd tile F(m, r) with m + r - 1 <= 8 and fft on the next power of
 * two (each larger basis at most 1.5 times its own). */
typedef enum { CONVGEN_EFFORT_MEASURE = 0, CONVGEN_EFFORT_ESTIMATE = 1, CONVGEN_EFFORT_EXHAUSTIVE = 2 } convgen_effort;

/* convgen_plan_conv with options (NULL: the defaults). */
CONVGEN_API convgen_status convgen_plan_conv_ex(convgen_context *ctx, const convgen_conv_desc *desc,
                                                convgen_pass pass, convgen_algo algo,
                                                const convgen_plan_options *options, convgen_plan **plan);

/* Bytes of device workspace that convgen_execute needs (0 is common). CUFFT plans on a device
 * include the work area of cuFFT and cuBLAS (at least 32 MiB, which cuBLAS recommends on
 * Hopper); offline, where cuFFT cannot plan, they count only their own buffers. Plans with
 * library steps (CUFFT) want a 256-byte aligned workspace, as cudaMalloc gives. */
CONVGEN_API convgen_status convgen_plan_workspace_size(const convgen_plan *plan, size_t *bytes);

/* Runs the plan on `stream`. Operands by pass:
 *   FPROP:   in0 = x,  in1 = w,  out = y
 *   BPROP:   in0 = dy, in1 = w,  out = dx
 *   ACCGRAD: in0 = x,  in1 = dy, out = dw
 * `out` is overwritten (not accumulated). Returns CONVGEN_ERROR_NO_DEVICE on an offline
 * context. Errors of the kernels themselves surface on the stream, as with any launch. The
 * plan's first kernel starts after all earlier work on the stream, as a plain launch would; on
 * sm_90 its later kernels may start as programmatic dependents of each other (never of a caller's
 * kernel). The stream's next work follows the last of them (a kernel the caller launches as a
 * programmatic dependent waits for it with cudaGridDependencySynchronize, as after any kernel). */
CONVGEN_API convgen_status convgen_execute(convgen_plan *plan, const float *in0, const float *in1, float *out,
                               void *workspace, size_t workspace_bytes, convgen_stream stream);

/* convgen_execute for a layer whose epilogue has CONVGEN_EPILOGUE_BIAS: `bias` holds k floats,
 * one per output channel (convgen_execute refuses such a plan; this one, a plan without). */
CONVGEN_API convgen_status convgen_execute_bias(convgen_plan *plan, const float *x, const float *w, const float *bias,
                                                float *y, void *workspace, size_t workspace_bytes,
                                                convgen_stream stream);

/* Weights transformed once per update instead of once per execution (the FFT and Winograd
 * algorithms' fprop and bprop, whose first steps transform w into the workspace, and direct's
 * tensor-core form on sm_90 where its products are wgmma's (rank 1 and 2, up to 9 taps, the
 * pieces within any workspace limit), whose first kernel lays w out there for them):
 *
 *   convgen_prepare_weights(p, w, ws, ws_bytes, stream);          // after each change of w
 *   convgen_execute_prepared(p, x, y, ws, ws_bytes, stream);      // as often as needed
 *
 * convgen_prepare_weights runs only the plan's weight transforms, into `workspace`;
 * convgen_execute_prepared runs the rest on in0 with those spectra and never reads w, so the
 * workspace must be the one prepared, not used for anything else in between, and prepared
 * again after w changes. convgen_plan_prepares_weights says whether a plan has weights to
 * prepare (0 for direct's other forms and for accgrad, whose second operand is not the weights;
 * ask it rather than assume);
 * the two calls refuse a plan that has none. */
CONVGEN_API int convgen_plan_prepares_weights(const convgen_plan *plan);
CONVGEN_API convgen_status convgen_prepare_weights(convgen_plan *plan, const float *w, void *workspace,
                                                   size_t workspace_bytes, convgen_stream stream);
CONVGEN_API convgen_status convgen_execute_prepared(convgen_plan *plan, const float *in0, float *out, void *workspace,
                                                    size_t workspace_bytes, convgen_stream stream);
/* The same for a layer with a bias (convgen_execute_bias's `bias`). */
CONVGEN_API convgen_status convgen_execute_prepared_bias(convgen_plan *plan, const float *x, const float *bias, float *y,
                                                         void *workspace, size_t workspace_bytes,
                                                         convgen_stream stream);

typedef enum {
    CONVGEN_FROM_NVRTC = 0, CONVGEN_FROM_DISK_CACHE, CONVGEN_FROM_MEMORY_CACHE,
    CONVGEN_FROM_KERNEL_SET /* compiled ahead of time: the library's set (configure --kernel-set) or a
                               registered one (convgen_kernel_set_register) */
} convgen_kernel_origin;

typedef struct convgen_kernel_info {
    const char *name;          /* entry point */
    unsigned grid[3], block[3];
    int registers;             /* per thread */
    int shared_bytes;          /* static shared memory per block */
    int dynamic_shared_bytes;  /* dynamic shared memory per block, given at launch */
    int stack_bytes;           /* stack frame: 0 for every kernel convgen emits */
    int spill_store_bytes, spill_load_bytes;
    double compile_ms;         /* NVRTC time when it was compiled (also for cache hits) */
    convgen_kernel_origin origin;
} convgen_kernel_info;

CONVGEN_API int convgen_plan_kernel_count(const convgen_plan *plan);
/* The emitted CUDA source of kernel i (owned by the plan), or NULL if i is out of range. */
CONVGEN_API const char *convgen_plan_source(const convgen_plan *plan, int i);
CONVGEN_API convgen_status convgen_plan_kernel_info(const convgen_plan *plan, int i, convgen_kernel_info *info);

/* ---- what AUTO chose, and why ----------------------------------------------------------- */

typedef enum {
    CONVGEN_CHOSEN_BY_CALLER = 0, /* the plan was made for one algorithm, not AUTO */
    CONVGEN_CHOSEN_BY_MEASUREMENT,/* AUTO timed the candidates on the device */
    CONVGEN_CHOSEN_BY_WISDOM,     /* AUTO found the choice in wisdom: nothing timed */
    CONVGEN_CHOSEN_BY_ESTIMATE    /* AUTO ranked the candidates by the cost model */
} convgen_chosen_by;

/* One algorithm and tuning AUTO considered. */
typedef struct convgen_candidate {
    convgen_algo algo;
    /* The tuning it fixes (fourier_size, winograd_m, gemm; 0: the algorithm's own
     * choice) and the plan's workspace_limit and allow_tf32; no callback. */
    convgen_plan_options options;
    /* SUCCESS: it ran (or, estimated, it would plan). Else why it dropped out: NOT_SUPPORTED
     * (the algorithm does not cover the layer), WORKSPACE_LIMIT, COMPILE, CUDA, or INTERNAL
     * when its output disagreed with the first candidate's; `note` says more. */
    convgen_status status;
    double estimate_ms;     /* the cost model's time; < 0 where it could not plan */
    double ms;              /* median measured time; < 0: not timed */
    double difference;      /* ||out - first's out|| / ||first's out||; < 0: not compared */
    size_t workspace_bytes;
    char note[160];
} convgen_candidate;

/* How the plan's algorithm was chosen. For AUTO, `algo` and `options` are the winner's; the
 * candidates are listed (convgen_plan_candidate) when they were measured or estimated here. */
typedef struct convgen_choice {
    convgen_algo algo;
    convgen_plan_options options;
    convgen_chosen_by chosen_by;
    int effort;             /* convgen_effort AUTO ran at (or the wisdom entry was made at) */
    double ms;              /* the winner's median time (measured now or recorded in wisdom); < 0: none */
    int candidate_count, winner;
} convgen_choice;

CONVGEN_API convgen_status convgen_plan_choice(const convgen_plan *plan, convgen_choice *choice);
CONVGEN_API convgen_status convgen_plan_candidate(const convgen_plan *plan, int i, convgen_candidate *candidate);

/* ---- wisdom ------------------------------------------------------------------------------- */

/* AUTO's choices, kept per (GPU name, architecture, convgen version, layer, pass, workspace
 * limit, TF32) in the process and in text files like FFTW's wisdom: one line a choice, ending
 * with a line that counts them and checksums the file. Each choice is an algorithm and its
 * planner's variant string ("m=6x6 gemm=cublas") and, from format 4 on, a hash of the candidates
 * it was measured among: a choice of this version made among other candidates than this
 * convgen lists for the layer (before a planner gained one that might beat it) is stale: no
 * answer (AUTO tunes the layer again), not counted, not exported, replaced by any entry of its
 * key. Formats 1 (knobs as fields, the oldest read) to 4 are read; a file
 * is written in the oldest that holds its entries. A file that is damaged, truncated or not
 * convgen wisdom of such a format is reported and ignored as a whole; entries of other GPUs,
 * architectures or versions are kept (to merge and export) but never used here.
 *
 * $CONVGEN_WISDOM names a file read at the first AUTO plan of the process and rewritten
 * (merged with what it holds then, atomically) after each plan that measured, so a second
 * process plans a tuned shape without timing anything. */
CONVGEN_API convgen_status convgen_wisdom_import(const char *path);      /* merges into the process's */
CONVGEN_API convgen_status convgen_wisdom_import_string(const char *text);
CONVGEN_API convgen_status convgen_wisdom_export(const char *path);      /* atomically: temp file, rename */
CONVGEN_API convgen_status convgen_wisdom_export_string(char **text);    /* malloc'ed */
CONVGEN_API void convgen_wisdom_forget(void);                           /* drops the process's wisdom */
CONVGEN_API int convgen_wisdom_count(void); /* entries held (not a stale one: measured among other
                                               candidates than this convgen lists) */

/* ---- kernel sets -------------------------------------------------------------------------- */

/* Kernels compiled ahead of time and shipped inside a program, so that its plans of the layers
 * it lists need no NVRTC (and, from the set's wisdom, AUTO times nothing).
 *
 *   convgen generate --set LAYERS --arch sm_90 --out DIR --embed my_set.c [--set-name NAME]
 *
 * writes my_set.c, which needs only this header and defines `const convgen_kernel_set NAME`
 * (default: the file's base name, here my_set), and my_set.c.bin, its cubins, which my_set.c
 * includes by absolute path when it is compiled (GCC or Clang, ELF). The program compiles
 * my_set.c with its sources and registers the set before planning:
 *
 *   extern const convgen_kernel_set my_set;
 *   convgen_kernel_set_register(&my_set);
 *
 * A kernel is found by its cache key (its emitted source, architecture, NVRTC options and
 * version), so a set serves exactly the kernels this library would compile, on a device or
 * offline context of their architecture, and none that an upgrade changed (those are compiled
 * as usual). Lookups go: memory cache, the library's own set (configure --kernel-set), the
 * registered sets in the order registered, the disk cache, NVRTC; convgen_kernel_info.origin
 * says CONVGEN_FROM_KERNEL_SET. $CONVGEN_KERNEL_SET=off ignores every set. */
#define CONVGEN_KERNEL_SET_MAGIC 0x736b6763u /* "cgks" */
#define CONVGEN_KERNEL_SET_VERSION 1u

/* One compiled kernel of a set. */
typedef struct convgen_set_kernel {
    uint64_t key_hi, key_lo;    /* its cache key */
    const char *arch;           /* "sm_90" */
    const unsigned char *cubin; /* NVRTC's cubin for arch, cubin_size bytes */
    size_t cubin_size;
    int registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes; /* compile report */
    double compile_ms;
} convgen_set_kernel;

typedef struct convgen_kernel_set {
    uint32_t magic;                    /* CONVGEN_KERNEL_SET_MAGIC */
    uint32_t version;                  /* CONVGEN_KERNEL_SET_VERSION of the convgen that wrote it */
    size_t count;
    const convgen_set_kernel *kernels; /* count of them, sorted by (key_hi, key_lo), no key twice */
    const char *wisdom;                /* the wisdom its algorithms were chosen by; NULL or "": none */
} convgen_kernel_set;

/* Adds a set to those the library consults. Checks the set and every kernel (magic, version,
 * NULL pointers, sizes, cubins that are not ELF, keys out of order, damaged wisdom) and names
 * the bad field; a refused set is not used at all. The set's wisdom is imported like the
 * library's set's: under any wisdom imported or measured (it only fills keys nothing else
 * holds); over an entry of the library's set (or of a set registered before) tuned with no
 * more effort; never exported. Sets are consulted for kernels in the order they were
 * registered, the library's own first. The set must stay valid until the
 * process exits (a generated set is static data). Thread-safe; registering a set again does
 * nothing. */
CONVGEN_API convgen_status convgen_kernel_set_register(const convgen_kernel_set *set);

/* Renders the source of kernel i of a plan without compiling anything; *source is malloc'ed. */
CONVGEN_API convgen_status convgen_emit(const convgen_conv_desc *desc, convgen_pass pass, convgen_algo algo,
                            int i, char **source);

/* ---- batched FFTs ------------------------------------------------------------------------ */

/* Generated warp-shuffle FFTs (fbfft), on their own or as the pieces of FFT convolutions.
 *
 *   convgen_fft_desc f = { .rank = 2, .n = 32, .type = CONVGEN_FFT_R2C, .batch = 128, .channels = 64,
 *                          .window = {27, 27} };      // a 27x27 image zero-padded to 32x32
 *   convgen_plan *p;  convgen_plan_fft(ctx, &f, &p);
 *   convgen_execute_fft(p, x, spectra, ws, ws_bytes, stream);
 *
 * Real data is fp32, spectra and C2C signals are interleaved complex fp32 (cufftComplex,
 * float2). R2C writes the Hermitian half: n/2 + 1 bins along the last dimension. */
typedef enum { CONVGEN_FFT_C2C = 0, CONVGEN_FFT_R2C = 1, CONVGEN_FFT_C2R = 2 } convgen_fft_type;
typedef enum { CONVGEN_FFT_FORWARD = -1, CONVGEN_FFT_INVERSE = 1 } convgen_fft_direction;
/* Rank 2 spectra: NATURAL is [n][n/2+1] (cuFFT's; C2C [n][n]); TRANSPOSED is fbfft's [n/2+1][n]
 * (C2C [n][n] with the axes swapped), the column frequency outermost, which is what the column
 * transforms produce without a transpose. Rank 3 spectra are n planes of a rank 2 spectrum in
 * either layout, [kz][ky][kx] in NATURAL (cuFFT's [n][n][n/2+1]); the depth axis is natural. */
typedef enum { CONVGEN_FFT_LAYOUT_NATURAL = 0, CONVGEN_FFT_LAYOUT_TRANSPOSED = 1 } convgen_fft_layout;
/* Order of the bins along the full-length (n-bin) spectrum axis: rank 1 C2C's only axis, rank 2's
 * (and rank 3's planes') column (outer) axis. DIGIT_REVERSED is where a decimation-in-frequency forward transform
 * leaves them and where the matching inverse takes them, so forward -> pointwise product ->
 * inverse never reorders. R2C/C2R rank 1 and the row (inner) axis of rank 2, including C2C's,
 * are always natural. */
typedef enum { CONVGEN_FFT_ORDER_NATURAL = 0, CONVGEN_FFT_ORDER_DIGIT_REVERSED = 1 } convgen_fft_order;

typedef struct convgen_fft_desc {
    int rank;                        /* 1, 2 or 3 */
    int n;                           /* every dimension: 2^a 3^b 5^c 7^d, 2..256 (rank 3: ..64) */
    convgen_fft_type type;
    convgen_fft_direction direction; /* C2C only; R2C is forward and C2R inverse (0 = implied) */
    int64_t batch;                   /* transforms = batch * channels */
    int64_t channels;                /* 0 means 1 */
    /* The signal side (R2C input, C2R output; C2C: the forward's input, the inverse's output),
     * dimensions outermost first: a window of window[d] elements that sits at offset[d] of the
     * n (x n) signal. Forward transforms read only the window (clipped loads; the rest of the
     * signal is zero, never stored), inverse transforms write only the window (clipped stores).
     * 0 means n. pitch: elements between rows of the signal array (rank 2 and 3; 0: the row's
     * window); plane_pitch: elements between planes (rank 3; 0: the plane's window rows * pitch).
     * A rank 3 window smaller than n prunes the transform (ZNNi): the forward runs its 1-D
     * transforms only where a window plane, row or column is nonzero, the inverse only where
     * their outputs are kept. */
    int window[3], offset[3];
    int64_t pitch, plane_pitch;
    /* Elements between consecutive batch entries and channels: real floats for a real signal,
     * complex values for spectra and C2C signals. 0: packed (channels * one transform, one transform). */
    int64_t real_stride[2];
    int64_t spectrum_stride[2];
    convgen_fft_layout layout;       /* rank 2, and rank 3's planes */
    convgen_fft_order order;
    float scale;                     /* outputs are multiplied by it; 0 means 1 (unscaled, like cuFFT) */
} convgen_fft_desc;

/* Renders, compiles (or finds in the cache) and loads the kernels of a batched FFT. The plan is
 * destroyed, inspected and sized like a convolution plan (convgen_plan_destroy,
 * convgen_plan_source, convgen_plan_kernel_info, convgen_plan_workspace_size). */
CONVGEN_API convgen_status convgen_plan_fft(convgen_context *ctx, const convgen_fft_desc *desc, convgen_plan **plan);
/* in: real (R2C) or complex data; out: complex (R2C, C2C) or real (C2R). out must not overlap in. */
CONVGEN_API convgen_status convgen_execute_fft(convgen_plan *plan, const void *in, void *out, void *workspace,
                                               size_t workspace_bytes, convgen_stream stream);
/* Renders the source of kernel i of an FFT plan without compiling; *source is malloc'ed. */
CONVGEN_API convgen_status convgen_emit_fft(const convgen_fft_desc *desc, int i, char **source);

/* ---- pooling ----------------------------------------------------------------------------- */

/* Max pooling and max-pooling fragments (ZNNi, section V), rank 2 and 3, generated per shape.
 * The window is also the stride, p per dimension (1 leaves a dimension alone); no padding.
 *   x  [n][c][in...]  packed, like a convolution's.
 *   MAX:       y [n][c][out...], out = in / p (rounded down, as cuDNN's pooling).
 *   FRAGMENTS: the max pooling at each of the p_1 p_2 (p_3) offsets o of the window, the
 *              fragments outermost as batch entries of the next layer:
 *              y [f][n][c][out...], f = (o_1 p_2 + o_2) p_3 + o_3 (offsets outermost first),
 *              out = (in - p + 1) / p, so that every fragment has the same size; in + 1 a
 *              multiple of p drops no input (what sliding-window inference needs).
 *   INTERLEAVE: FRAGMENTS' layout undone, the fragments of n entries back into dense volumes
 *              (a network's last fragments into its dense output, one pooling at a time):
 *              x [f][n][c][in...] -> y [n][c][out...], out = in p, y at o + p j (per
 *              dimension) = x[f(o)][n][c][j]. No maxima: a copy.
 * Maxima by fmaxf: a NaN input loses to any number (cuDNN's CUDNN_NOT_PROPAGATE_NAN). */
typedef enum { CONVGEN_POOL_MAX = 0, CONVGEN_POOL_FRAGMENTS = 1, CONVGEN_POOL_INTERLEAVE = 2 } convgen_pool_mode;
typedef struct convgen_pool_desc {
    convgen_pool_mode mode;
    int rank;                        /* 2 or 3 */
    int64_t n, c;                    /* batch, channels */
    int64_t in[CONVGEN_MAX_RANK];    /* outermost first (D, H, W) */
    int window[CONVGEN_MAX_RANK];    /* p per dimension, 1..8; at most 64 elements in all */
} convgen_pool_desc;

/* Checks every field; writes y's batch entries (n; FRAGMENTS: times the fragments) and extents
 * (rank entries). */
CONVGEN_API convgen_status convgen_pool_output(const convgen_pool_desc *desc, int64_t *batch,
                                               int64_t out[CONVGEN_MAX_RANK]);
/* A pooling plan: destroyed, inspected and sized like the others (it needs no workspace). */
CONVGEN_API convgen_status convgen_plan_pool(convgen_context *ctx, const convgen_pool_desc *desc, convgen_plan **plan);
/* x and y as above. y must not overlap x: y == x is refused, a partial overlap is the caller's to avoid. */
CONVGEN_API convgen_status convgen_execute_pool(convgen_plan *plan, const float *x, float *y, convgen_stream stream);
/* Renders the pooling kernel's source without compiling; *source is malloc'ed. */
CONVGEN_API convgen_status convgen_emit_pool(const convgen_pool_desc *desc, char **source);

/* ---- networks: whole-volume sliding-window inference (ZNNi) -------------------------------- */

/* A 3-D (or 2-D) ConvNet of valid stride-1 convolutions (bias, optional ReLU) and max poolings,
 * from a network file's text (bench/nets/n337.net):
 *     input C                 conv K DxHxW [relu]          pool DxHxW
 * applied densely to a volume: an output at every voxel whose field of view lies inside it.
 * The volume is cut into overlapping patches (overlap = field of view - 1, as overlap-save);
 * each patch runs through the network with max-pooling fragments in place of pooling, every
 * convolution a convgen plan with its bias and ReLU as the epilogue, and the final fragments
 * are interleaved back into the patch's dense output on the GPU. Weights default to random
 * (convgen_net_random_weights) until set. */
typedef struct convgen_net convgen_net;

/* Where a patch's tensors live.
 *   DEVICE: on the GPU, the whole patch at once; patches stream through two slots.
 *   HOST:   in pinned host memory (ZNNi section VII-A, "GPU + host RAM"): the network runs in
 *           segments of consecutive layers, each on the GPU a chunk at a time (some of its batch
 *           entries, or one entry's slice of output maps) while the next chunk goes up and the
 *           last one comes down on streams of their own. Patches far larger than the GPU's
 *           memory, so far less overlap between patches, at the price of the copies.
 *   AUTO:   whichever the cost model rates faster (HOST where no patch fits the device). */
typedef enum { CONVGEN_NET_AUTO = 0, CONVGEN_NET_DEVICE = 1, CONVGEN_NET_HOST = 2 } convgen_net_mode;

typedef struct convgen_net_options {
    /* Each final fragment's extent m per dimension (outermost first): a patch's dense output is
     * m times the product of the pooling windows. All 0: chosen per dimension by the cost model
     * (`volume`): in device mode among the patches whose tensors take at most half of
     * memory_limit, in host mode among those whose segments' chunks fit it. Given, under AUTO it
     * runs in device mode where its tensors fit, else in host mode. */
    int64_t fragment[CONVGEN_MAX_RANK];
    /* Device bytes the network may use (the weights and the largest layer's workspace; in
     * device mode two activation buffers of the patch's largest tensor and two slots of its
     * input and output, in host mode a chunk's); 0: 90% of the device's free memory. */
    size_t memory_limit;
    /* How each convolution's algorithm is chosen, a convgen_effort (as convgen_plan_options),
     * and the patch where `fragment` is not given: a patch measured before, from wisdom (per GPU,
     * network, volume, limits and mode; convgen_wisdom_export writes it; offline: any GPU of the
     * architecture), at any effort; else at MEASURE on a GPU the cost model's best patches within
     * 1.3x of its best (at most 3, each mode's best first; EXHAUSTIVE: within 2x, at most 8) each
     * run over a volume of one patch and of two and timed, the fastest for `volume` kept as
     * wisdom; at ESTIMATE (or offline) the cost model's. */
    int effort;
    /* The extents of the volumes it will run on, outermost first (0: not known). With them, a
     * chosen fragment extent is the one of least time for such a volume by the cost model: all
     * its patches counted, overlaps and last patches included, and a patch larger than the
     * volume (its one patch runs past the edge) among the candidates. Each must be at least the
     * network's field of view. */
    int64_t volume[CONVGEN_MAX_RANK];
    /* Where a patch's layers keep their tensors (convgen_net_mode); AUTO: the mode the cost model
     * says is faster for the memory limit. */
    int mode;
    /* HOST: pinned host bytes the patch's tensors may take (two of the largest); 0: a quarter of
     * the machine's memory. */
    size_t host_memory_limit;
} convgen_net_options;

CONVGEN_API convgen_status convgen_net_create(convgen_context *ctx, const char *text, const convgen_net_options *options,
                                              convgen_net **net);
CONVGEN_API void convgen_net_destroy(convgen_net *net);
/* Convolution layer `layer` (its line's index among the layers, from 0)'s weights, host
 * arrays: w [K][C][kernel...] and bias [K]. */
CONVGEN_API convgen_status convgen_net_set_weights(convgen_net *net, int layer, const float *w, const float *bias);
/* Every convolution's weights uniform in [-a, a], a = sqrt(6 / (C prod(kernel))) (He's, for
 * ReLU), its biases in a tenth of that, reproducible from `seed`: activations keep their scale
 * through the layers. */
CONVGEN_API convgen_status convgen_net_random_weights(convgen_net *net, uint64_t seed);
/* The dense output of a host volume x [C][in...] into host y [K_last][in - field of view + 1],
 * patch by patch on `stream`; returns when y is written. Each dimension of in must be at least
 * the field of view; where it is smaller than the patch's input (convgen_net_patch), its one
 * patch runs past the volume's edge (zeros there) and only y is written. One call at a time per
 * net: its staging is its own. */
CONVGEN_API convgen_status convgen_net_infer(convgen_net *net, const float *x, const int64_t in[CONVGEN_MAX_RANK],
                                             float *y, convgen_stream stream);
/* The patch the network runs: its input and dense output extents (rank entries each), and its
 * final fragments'. */
CONVGEN_API convgen_status convgen_net_patch(const convgen_net *net, int64_t in[CONVGEN_MAX_RANK],
                                             int64_t out[CONVGEN_MAX_RANK], int64_t fragment[CONVGEN_MAX_RANK]);
/* The plan in words (malloc'ed): field of view, patch and how it was chosen (the candidates timed
 * and their seconds, measured and modeled), each layer's tensor, algorithm, bytes and
 * time (measured where its effort timed it, else the cost model's), the memory in all, and the
 * output voxels per second those times predict. */
CONVGEN_API convgen_status convgen_net_explain(const convgen_net *net, char **text);
/* Times each step of one patch alone: in device mode every convolution, pooling and
 * interleaving between CUDA events, beside each convolution's algorithm and its measured or
 * estimated time; in host mode each segment through the pipeline (wall clock, its chunks' copies
 * and compute overlapping), and the last beside the next patch's first, beside the cost model's
 * time and what bounds it. The median of 5 runs on what the buffers hold (the times do not
 * depend on it); *text is malloc'ed. Where a patch's time goes, for tuning. */
CONVGEN_API convgen_status convgen_net_profile(convgen_net *net, char **text);

#ifdef __cplusplus
}
#endif
#endif
