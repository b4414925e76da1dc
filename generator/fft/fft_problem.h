/* A batched FFT as the generator sees it: a convgen_fft_desc checked field by field, with its
 * defaults filled in and every extent and stride in 64-bit, overflow-checked arithmetic. */
#ifndef CG_FFT_PROBLEM_H
#define CG_FFT_PROBLEM_H

#include <stdbool.h>
#include <stdint.h>

#include "convgen.h"
#include "problem_kind.h"

typedef struct cg_fft_problem {
    convgen_fft_type type;
    int rank, n;
    int sign;                   /* -1 forward, +1 inverse */
    int64_t batch, channels, count; /* count = batch * channels transforms */
    int d, oz, h, oy, w, ox;    /* the signal window: planes (rank 3; else 1 and 0), rows (rank 2 and 3;
                                   else 1 and 0), columns */
    int64_t pitch;              /* signal elements between window rows */
    int64_t plane_pitch;        /* rank 3: signal elements between window planes */
    /* A rank 2 problem that is one stage of a rank 3 one (fft_volume.c) transforms `planes`
     * planes of each (batch, channel) entry, plane_stride[0] (signal side) and [1] (spectrum
     * side) apart: count = batch * channels * planes. 1 and {0, 0} otherwise. */
    int planes;
    int64_t plane_stride[2];
    bool plane_stage;           /* such a stage, whatever its planes */
    /* The depth pass of a rank 3 problem, as the op of its kernel step (fft_op.c evaluates the
     * stages one by one): forward, the window's d planes of each spectrum -> all n, in place;
     * inverse, all n -> the window's d planes, dense per (batch, channel) entry. */
    bool depth_stage;
    int64_t real_stride[2];     /* batch, channel of the signal side: floats (C2C: complex values) */
    int64_t spectrum_stride[2]; /* batch, channel: complex values */
    int half;                   /* bins along the last spectrum axis: n/2 + 1 (C2C: n) */
    bool transposed;            /* rank 2 spectrum (rank 3: each plane) [half][n] */
    bool natural;               /* bins along the full-length axis in natural order */
    float scale;
    int64_t real_elements, spectrum_elements; /* extents of the two sides, in elements */
    /* A C2R that stores fprop's y in FFT convolution (fftconv/program.c): the layer's epilogue
     * (CG_EPILOGUE_* bits) on each output as it is stored, the bias that of the transform's
     * channel (its entry's index along `channels`, y's k). Not in convgen_fft_desc: 0 there. */
    unsigned epilogue;
} cg_fft_problem;

/* Checks every field; the message of a failure names it ("window[1] = 40 must be ..."). */
convgen_status cg_fft_problem_init(cg_fft_problem *p, const convgen_fft_desc *d);

/* Points of one spectrum plane (rank 3) or of the whole spectrum (rank 1 and 2), in complex values. */
static inline int64_t cg_fft_plane_bins(const cg_fft_problem *p) { return p->rank == 1 ? p->half : (int64_t)p->n * p->half; }

/* "R2C 2-D n = 32, 8192 transforms (128 x 64), window 27x27 at 0,0" for headers and the CLI. */
void cg_fft_problem_describe(const cg_fft_problem *p, char *buf, size_t size);

/* The batched FFT as a problem kind ("fft"): its hash writes every field above, the scale by
 * its bits; its describe is cg_fft_problem_describe. */
extern const cg_problem_kind cg_fft_kind;
static inline cg_problem_ref cg_fft_ref(const cg_fft_problem *p) { return (cg_problem_ref){&cg_fft_kind, p}; }

#endif
