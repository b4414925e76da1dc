/* FFT plans for warp-level transforms (fbfft, Vasilache et al. 2015, section 5): one transform
 * of size n lives in the registers of a group of lanes, and its butterflies are straight-line
 * code. The plan is data: the radices, where each stage's butterflies happen (inside a lane's
 * registers, or across lanes with shuffles), the twiddles, and the order of the output. The
 * generator renders kernels from it, and fft_plan_eval runs the same schedule on the CPU in
 * double precision so the plan's mathematics is tested without a GPU.
 *
 * Element i of a transform sits in register i / lanes of lane i % lanes (exchanged plans: in
 * their first phase; see fft_plan_position): consecutive elements
 * in consecutive lanes, so loads of contiguous data are coalesced. With n = r_0 r_1 ... r_{S-1}
 * (most significant digit first) the register stages take the high digits and the lane stages
 * the low ones.
 *
 * Forward transforms are decimation in frequency and leave X[k] at position digit_reverse(k);
 * inverse transforms are decimation in time and take their input in that order, so a
 * forward -> pointwise -> inverse chain never reorders (fbfft's trick). A natural-order plan adds
 * the permutation for users who need it. Inverse transforms are unscaled, like cuFFT's.
 */
#ifndef CG_FFT_PLAN_H
#define CG_FFT_PLAN_H

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FFT_MIN_N 2
#define FFT_MAX_N 256
/* Rank 3: the depth pass keeps a column's points in one thread's registers (REG_FFT_MAX_N). */
#define FFT_MAX_VOLUME_N 64
#define FFT_MAX_STAGES 8
#define FFT_WARP 32

typedef enum { FFT_IN_REGISTERS, FFT_ACROSS_LANES } fft_place;

/* How a stage gets its twiddle factors. Every twiddled stage's factors depend on the lane
 * (the lane digits are the low digits of the index), so they are either computed in the
 * kernel or read from a table; the plan picks one for all stages and says why. */
typedef enum { FFT_TWIDDLE_NONE, FFT_TWIDDLE_SINCOS, FFT_TWIDDLE_TABLE } fft_twiddle;

typedef struct fft_stage {
    int radix;          /* 2, 3, 4, 5, 7 or 8 */
    int span;           /* distance between the inputs of one butterfly: product of later radices */
    fft_place place;
    fft_twiddle twiddle;
} fft_stage;

/* Exchanged plans: every stage runs in registers, in phases of consecutive stages, and between
 * phases the values pass through the warp's shared memory so that the next phase's digits are
 * in registers. A lane stage costs a value two shuffles, two FMAs and a twiddle (some 8
 * instructions) per radix-2 digit; an exchange two (a store and a load) for any number of
 * digits. In phase f, lane l holds the digits of `lane_digits` (the lowest span first from the
 * low end of l), and register r the other digits in position order (fft_plan_position). */
typedef struct fft_phase {
    int first, count;       /* its stages */
    unsigned lane_digits;   /* bit s: stage s's digit comes from the lane index */
} fft_phase;

typedef struct fft_plan {
    int n;
    int lanes;      /* lanes per transform: the largest divisor of n that is at most 32 (exchanged: n / regs) */
    int regs;       /* registers per lane: n / lanes */
    int per_warp;   /* transforms per warp: 32 / lanes */
    int stage_count;
    fft_stage stages[FFT_MAX_STAGES];
    bool natural;   /* outputs in natural order (a permutation after the last stage) */
    int lane_twiddles; /* lane-dependent twiddle factors one lane needs per transform */
    int phase_count;   /* exchanged plans: 2 or more; 0 for lane stages */
    fft_phase phases[FFT_MAX_STAGES];
    int pad_shift;     /* exchanged: position q sits at q + (q >> pad_shift) in the scratch (0: q) */
    int xstride;       /* exchanged: float2s of scratch per transform */
    char twiddle_reason[224];
} fft_plan;

/* Is n a power of two (1, 2, 4, ...)? */
bool fft_power_of_two(int n);

/* Is n a supported size (2..256, of the form 2^a 3^b 5^c 7^d)? */
bool fft_size_supported(int n);
/* The registers per lane the mapping keeps at least (where n allows): 2, or 4 from n = 32. */
int fft_min_registers(int n);

/* Plans a transform of size n; false (and a message in err) for an unsupported size. */
bool fft_plan_make(int n, bool natural, fft_plan *plan, char *err, size_t errlen);

/* Computes the twiddle factors with sincospif instead of loading them from a table, for the
 * reason `why` (the header's twiddle line says it). */
void fft_plan_use_sincos(fft_plan *plan, const char *why);

/* Plans a power-of-two transform of size n (16..256) with `regs` registers per lane as an
 * exchanged plan, the phases chosen by a cost model of instructions per value; false where no
 * such plan exists. Outputs in natural order: a digit-reversed order would be this plan's own. */
bool fft_plan_make_exchanged(int n, int regs, fft_plan *plan, char *err, size_t errlen);

/* The position (DIF order) register r of lane l holds in phase f: r * lanes + l in plans with lane
 * stages and in an exchanged plan's first phase. */
int fft_plan_position(const fft_plan *plan, int phase, int lane, int reg);

/* Exchanged plans, phase f: how far apart the registers of one butterfly of stage s are (the
 * product of the radices of the register digits below s), which is also how many twiddle
 * factors the stage's groups need; and where position q sits in the warp's scratch
 * (q + (q >> pad_shift)). */
int fft_plan_register_stride(const fft_plan *plan, int phase, int s);
int fft_plan_scratch_at(const fft_plan *plan, int q);

/* Shared-memory wavefronts of one warp access to float2s at the given addresses (negative:
 * idle lane): each half-warp takes as many as it has distinct addresses on its busiest bank pair. */
int fft_float2_wavefronts(const int64_t addr[FFT_WARP]);

/* The position at which a digit-reversed (forward) plan leaves X[k]. */
int fft_plan_output_position(const fft_plan *plan, int k);

/* Runs the plan's schedule on the CPU in double precision: forward (sign -1) maps natural
 * input to output in the plan's order; inverse (sign +1) maps input in the plan's order to
 * natural output, unscaled. */
void fft_plan_eval(const fft_plan *plan, int sign, const double complex *in, double complex *out);

/* "8x4x2x2 (registers 8, lanes 4x2x2)" for headers and tests. */
void fft_plan_describe(const fft_plan *plan, char *buf, size_t size);

#endif
