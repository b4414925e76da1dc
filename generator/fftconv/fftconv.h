/* FFT convolution's shared pieces, under the four planners (cufft.c, fft.c, fft_tiled.c,
 * fft_fused.c): where a pass's operands sit in the Fourier basis (layout.c), the step program
 * (program.c), and the tiles of fft-tiled that fft-fused builds on (fft_tiled.c). Internal to
 * the generator; the planners are the public side (generate.c). */
#ifndef CG_FFT_CONV_H
#define CG_FFT_CONV_H

#include <stdbool.h>
#include <stdint.h>

#include "tiling.h"
#include "generate.h"
#include "template/tmpl.h"

enum {
    THREADS = 256,
    MAX_GRID_Y = 65535,
    /* Workspace buffers start on this boundary (cuFFT and cuBLAS want 256-byte alignment). */
    ALIGN = 256,
    MAX_CANDIDATES = 64,
    TILE = 32,     /* transposes: 32 x 32 complex tiles ... */
    TILE_ROWS = 8, /* ... moved by 32 x 8 threads */
};

/* Per spatial dimension: the correlation, the Fourier size, and how each operand sits in it. */
typedef struct lib_dim {
    fft_conv_dim c;
    int64_t tiles, tile_step;  /* tiled: overlap-save tiles along this dimension; else 1, 0 */
    fft_parts parts;           /* fft-tiled's accgrad: the blocks along this dimension */
    int64_t size;        /* B */
    int64_t spectrum;    /* bins along this dimension: B, or B / 2 + 1 for the last */
} lib_dim;

typedef cg_placement placement;

typedef struct lib_spec {
    int rank;
    lib_dim d[CONVGEN_MAX_RANK];
    int64_t points, bins;           /* prod(B), and bins per spectrum */
    int64_t images[3];              /* S, K, O: per chunk where sliced */
    int64_t batch;                  /* images of the batch per chunk (ZNNi's sub-batching) */
    int64_t chunks;                 /* n / batch */
    const char *names[3];           /* the operands: "x", "w", "y", ... */
    bool identity[2];               /* S, K: the operand is its own padded image (no pad kernel) */
    bool generated;                 /* the fft algorithm: convgen's FFT kernels instead of cuFFT */
    bool tiled;                     /* fft-tiled: overlap-save tiles of the signal and the output */
    bool parts;                     /* fft-tiled's accgrad: convolution in parts */
    bool fused;                     /* fft-fused: one kernel per tile after the weights' R2C */
    bool generated_gemm;            /* the products by convgen's complex GEMM kernel, not cuBLAS */
    bool tensor_gemm;               /* that kernel's tensor-core form (gemm_complex_tc.cu) */
    int64_t tiles;                  /* tiled: tiles per image, the product of the dimensions' */
    /* Padded images per image of S, K and O: overlap-save tiles (S, O); parts' blocks (S, K)
     * and shifts (O); 1 where untiled. */
    int64_t role_tiles[3];
    int64_t groups[3][2];           /* each operand's images as [batch-like][channel-like] */
    int64_t fft_work_offset;        /* generated: the FFT kernels' own workspace, at the end */
    /* Byte offsets into the workspace: the padded real images (S, K and O in turn), the
     * natural-layout spectra (the same; none with the generated GEMM), and the three spectra
     * the products read and write (frequency-major for cuBLAS, [image][bin] for convgen's). */
    int64_t real_offset, natural_offset, spectrum_offset[3], workspace;
    int64_t estimate; /* the workspace with cuFFT's work area estimated */
} lib_spec;

/* The operands of each pass: S, K and O (the table at the top of program.c). */
extern const char *const fc_operand_names[3][3];

static inline int64_t fc_align_up(int64_t v) { return (v + ALIGN - 1) / ALIGN * ALIGN; }

/* ---- layout.c: where the operands sit ---- */

/* An empty spec of convgen's FFTs (`generated`) or cuFFT's, every operand one tile an image. */
void fc_spec_init(lib_spec *s, bool generated);
/* The pass's correlation along each dimension (fft_conv_dims); `algo` prefixes the message. */
convgen_status fc_correlation_dims(const cg_problem *p, convgen_pass pass, const char *algo, lib_spec *s);
/* cufft and fft: the correlation and the smallest transform holding all of it (or the caller's). */
convgen_status fc_whole_basis(const cg_problem *p, convgen_pass pass, const cg_tuning *tune, lib_spec *s);
/* The placement of S (role 0), K (role 1) or the output O (role 2, which reads from it). */
placement fc_place(const lib_spec *s, convgen_pass pass, int role, int d);
/* The placement of x (role 0) or dy (role 1) in accgrad's blocks (convolution in parts). */
placement fc_place_part(const lib_spec *s, int role, int d);
/* An operand placed by a plain shift as a window [at, at + len) of the padded image along one
 * dimension, holding source indices [src, src + len); false for anything else. */
bool fc_window_of(const placement *pl, int64_t *at, int64_t *len, int64_t *src);
/* Whether operand `role` is a plain shift that a generated R2C reads through its window. */
bool fc_windowed(const lib_spec *s, convgen_pass pass, int role);
/* Convolution in parts: the next shift after d (the last dimension fastest), false after the
 * last; and the template's list of the shifts for the summing clip. */
bool fc_next_shift(const lib_spec *s, int64_t *d);
tmpl_value *fc_shifts_value(const lib_spec *s);
/* The generated FFT algorithms take stride 1, rank 1 to 3 (fft-fused checks its own rank). */
convgen_status fc_fft_applicable(const cg_problem *p, convgen_pass pass);

/* ---- program.c: the step program ---- */

/* The program of a spec whose basis the planner chose: sub-batches, buffers, the forward
 * transforms, the products and the inverse, each step rendered. */
convgen_status fc_program(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                          lib_spec *s, cg_generated *out);
/* The chunks slice the batch: x, y, dy and dx advance by a chunk's images, w and dw do not. */
void fc_set_chunks(const cg_problem *p, convgen_pass pass, const lib_spec *s, cg_generated *out);
/* Pad (where needed), R2C and, but for fft-fused and the generated GEMM, the transpose to
 * frequency-major: operand `role` (0 or 1) in `phase`. */
convgen_status fc_forward_steps(const cg_problem *p, convgen_pass pass, const cg_target *t, lib_spec *s, int role,
                                int phase, cg_generated *out);
/* Appends a step of `phase`; a kernel step gets the next kernel slot. */
cg_step *fc_add_step(cg_generated *out, cg_step_kind kind, int phase);
/* The header comment of a kernel of the program. */
tmpl_value *fc_header_lines(const cg_problem *p, convgen_pass pass, const lib_spec *s, const cg_kernel *k,
                            const char *what, const char *template_name);
/* The per-bin products of a pass: one strided-batched CGEMM over the bins. */
cg_step fc_gemm_step(const cg_problem *p, convgen_pass pass, const lib_spec *s);
/* Convolution in parts: one GEMM step per shift between blocks. */
void fc_parts_gemm_steps(const cg_problem *p, const lib_spec *s, cg_generated *out);

/* ---- fft_tiled.c: fft-tiled's bases, which fft-fused shares ---- */

/* Overlap-save tiles (fprop, bprop) of at most max_n points unless the kernel's extent is more. */
convgen_status fc_tile_basis(const cg_problem *p, const cg_tuning *tune, int64_t max_n, lib_spec *s);
/* Convolution in parts' blocks (accgrad). */
convgen_status fc_parts_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s);

/* ---- op_pad.c: where a pad op reads its operand, which the fused op shares ---- */

/* Tile t's index along each dimension (the last fastest). */
void fc_pad_tile_index(const cg_pad_op *op, int64_t t, int64_t *tile);
/* Padded position q of tile `tile` of an image of the operand (its dims placements, tile t
 * shifted by t * tile_step): the operand's element there, or 0. */
float fc_pad_value(const cg_pad_op *op, const float *image, const int64_t *tile, const int64_t *q);
/* The operand's points per image: the product of its placements' counts. */
int64_t fc_pad_operand_points(const cg_pad_op *op);

#endif
