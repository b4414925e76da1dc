/* The "fft" algorithm (generator/fftconv/program.c says how the program runs): FFT convolution
 * through convgen's own FFT kernels (issue 4) and, by default, its own complex GEMM, on one
 * square (cubic) basis of at most FFT_MAX_N points per side, rank 1 and 2, and FFT_MAX_VOLUME_N
 * in 3-D. */
#include <string.h>

#include "fftconv.h"
#include "tiling.h"
#include "fft/fft_plan.h"
#include "util.h"

/* One square basis B x B (convgen's FFTs are square, and cubic in 3-D), the largest dimension's,
 * at most FFT_MAX_N (3-D: FFT_MAX_VOLUME_N). */
static convgen_status square_basis(const cg_problem *p, const cg_tuning *tune, lib_spec *s)
{
    int64_t b = 0, max = p->rank == 3 ? FFT_MAX_VOLUME_N : FFT_MAX_N;
    for (int d = 0; d < s->rank; ++d) {
        if (tune && tune->fourier_size[d] && b && tune->fourier_size[d] != b)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "options->fourier_size[%d] = %lld: the fft algorithm's basis is "
                           "square", d, (long long)tune->fourier_size[d]);
        b = s->d[d].size > b ? s->d[d].size : b;
    }
    if (b > max)
        return cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "fft: the correlation needs a %lld-point transform, beyond %lld%s",
                       (long long)b, (long long)max, p->rank == 3 ? " in 3-D" : "");
    s->points = 1;
    for (int d = 0; d < s->rank; ++d) {
        s->d[d].size = b;
        s->d[d].spectrum = d == s->rank - 1 ? b / 2 + 1 : b;
        s->points *= b;
    }
    s->bins = s->points / b * (b / 2 + 1);
    return CONVGEN_SUCCESS;
}

int64_t cg_fft_basis(const cg_problem *p, convgen_pass pass)
{
    lib_spec s;
    fc_spec_init(&s, true);
    if (fc_whole_basis(p, pass, NULL, &s) != CONVGEN_SUCCESS || square_basis(p, NULL, &s) != CONVGEN_SUCCESS)
        return 0;
    return s.d[0].size;
}

static convgen_status fft_generate(const cg_problem *p, convgen_pass pass, const cg_target *t, const cg_tuning *tune,
                                   cg_generated *out)
{
    lib_spec s;
    fc_spec_init(&s, true);
    convgen_status st = fc_whole_basis(p, pass, tune, &s);
    if (st == CONVGEN_SUCCESS)
        st = square_basis(p, tune, &s);
    return st == CONVGEN_SUCCESS ? fc_program(p, pass, t, tune, &s, out) : st;
}

/* A basis's candidates: by each GEMM unless the caller fixed the GEMM or TF32, cuBLAS's, the
 * generated FMA kernel and, for 1-D and 2-D layers, the generated one on the tensor cores in
 * 3xTF32 (fp32's accuracy; before sm_80 that plan takes the FMA kernel, gemm_complex_tc.c). Not
 * yet for 3-D layers: their shipped wisdom was tuned without it, and its candidate added would
 * make those entries stale (bench/NOTES.md, "Issue 30, session 82"). */
static int fft_basis_variants(const cg_problem *p, cg_tuning *out, int n, int max, const cg_tuning *t, bool by_gemm)
{
    n = cg_variants_add(out, n, max, t, by_gemm);
    if (by_gemm && p->rank <= 2 && n < max) {
        out[n] = *t;
        out[n++].gemm = CONVGEN_GEMM_TENSOR;
    }
    return n;
}

/* AUTO's candidates of fft: its own basis and, unless the caller fixed one, up to two larger ones
 * at most half as large again and within FFT_MAX_N (3-D: FFT_MAX_VOLUME_N), each by the GEMMs of
 * fft_basis_variants:
 * - the smallest 2^a 3^b, at every effort: the FFT kernels run a radix of 5 or 7 as a plain DFT
 *   (across lanes, R - 1 shuffles a value), so F1's own 35 points (5 x 7) took its passes 1.8x
 *   as long as 36 did (accgrad 0.145 against 0.078 ms; H100, bench/NOTES.md "Issue 30, session
 *   86"), which the cost model does not see (it counts 5 N log2 N FLOPs whatever the radices);
 * - the next power of two, at EXHAUSTIVE: radix-4 transforms can outrun the smaller 3- and
 *   5-smooth one (F2's 64 against 60 points). */
static int fft_variants(const cg_problem *p, convgen_pass pass, int effort, const cg_tuning *fixed, cg_tuning *out,
                        int max)
{
    bool by_gemm = !fixed->tf32 && !fixed->gemm, basis_fixed = false;
    int n = fft_basis_variants(p, out, 0, max, fixed, by_gemm);
    for (int d = 0; d < CONVGEN_MAX_RANK; ++d)
        basis_fixed |= fixed->fourier_size[d] != 0;
    if (basis_fixed)
        return n;
    int64_t own = cg_fft_basis(p, pass), pow2 = 2;
    if (!own)
        return n;
    while (pow2 < own)
        pow2 *= 2;
    int64_t larger[2] = {fft_three_smooth_at_least(own), effort == CONVGEN_EFFORT_EXHAUSTIVE ? pow2 : 0};
    if (larger[1] == larger[0])
        larger[1] = 0;
    const int64_t most = p->rank == 3 ? FFT_MAX_VOLUME_N : FFT_MAX_N;
    for (int i = 0; i < 2; ++i) {
        if (!larger[i] || larger[i] == own || larger[i] > most || larger[i] > 1.5 * (double)own)
            continue;
        cg_tuning t = *fixed;
        for (int d = 0; d < p->rank; ++d)
            t.fourier_size[d] = larger[i];
        n = fft_basis_variants(p, out, n, max, &t, by_gemm);
    }
    return n;
}

static const cg_knob fft_knobs[] = {
    {"fourier", cg_fourier_print, cg_fourier_parse}, {"gemm", cg_gemm_print, cg_gemm_parse}, {NULL, NULL, NULL}};

const cg_planner cg_fft_planner = {
    .algo = CONVGEN_ALGO_FFT,
    .name = "fft",
    .flags = CG_PLANNER_SUB_BATCHES,
    .applicable = fc_fft_applicable,
    .generate = fft_generate,
    .knobs = fft_knobs,
    .variants = fft_variants,
};
