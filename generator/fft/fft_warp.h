/* The pieces the FFT family's kernels share (inside generator/fft/ and the fft-fused kernel):
 * a plan's stages as template values (fft_stages.c), an exchanged plan's context
 * (fft_exchange.c) and the warp kernels' common context (fft_warp.c). */
#ifndef CG_FFT_WARP_H
#define CG_FFT_WARP_H

#include <stdbool.h>
#include <stdint.h>

#include "fft_plan.h"
#include "fft_problem.h"
#include "template/tmpl.h"

/* ---- fft_stages.c ---- */

/* exp(sign 2 pi i e / r) as {kind, re, im}, kind "one", "neg", "i", "negi" (exact) or
 * "general", so that templates skip the multiplications by 1, -1, i and -i (cmul_const). */
tmpl_value *cg_fft_coefficient(int sign, int e, int r);

/* A batched FFT kernel's header lines begun: what the generator made, for which problem
 * (cg_fft_problem_describe), then a blank line; the kernel's own lines follow. */
tmpl_value *cg_fft_header_open(const cg_fft_problem *p);

/* An odd radix r's butterfly in its symmetric form (small_dft and reg_radix in the templates):
 * with s_d = a_d + a_(r-d) and t_d = a_d - a_(r-d), b_k = a_0 + sum_d cos(2 pi d k / r) s_d
 * + i sum_d sign sin(2 pi d k / r) t_d and b_(r-k) the same with -i: (r - 1)^2 real
 * multiplications by constants where the sums of the definition take (r - 1)^2 complex ones.
 * The table's [k - 1][d - 1], k, d = 1 .. (r - 1) / 2: cos (sine false) or sign sin. */
tmpl_value *cg_fft_odd_table(int sign, int r, bool sine);

/* A stage's template value (index, radix, span, twiddled, tw_arg, place; a register stage's
 * groups, and cos and sin where its radix is odd; an odd lane stage's cos, sin, twist_re and
 * twist_im by the lane's digit),
 * and the stride or scale argument of its twiddle() calls. */
tmpl_value *cg_fft_stage_value(const fft_plan *plan, int s, int sign);
void cg_fft_twiddle_argument(const fft_plan *plan, const fft_stage *st, int sign, char *buf, size_t size);

/* ---- fft_exchange.c ---- */

/* An exchanged plan's context (exchanged, steps, hoisted factors, lane_vars,
 * xstride, pad_shift) and its spectrum positions in natural order ("kl + K", the last phase's; lane_part names kl). */
void cg_fft_exchange_context(tmpl_value *ctx, const fft_plan *plan, int sign);
tmpl_value *cg_fft_exchange_positions(const fft_plan *plan, const char *lane_part);

/* ---- fft_warp.c ---- */

/* The plan's part of a template context, shared by the FFT templates (fft_warp.cuh): n, sign,
 * lanes, regs, per_warp, idle_lanes, lane_div, twiddles, stages and lane stages, and for
 * exchanged plans the keys of cg_fft_exchange_context. */
void cg_fft_warp_context(tmpl_value *ctx, const fft_plan *plan, int sign);

/* For each register r: the index of the element lane l holds there, as a C expression in l;
 * natural: the spectrum's natural index, else the position r * lanes + l (exchanged plans: the
 * last phase's natural index, always). */
tmpl_value *cg_fft_positions(const fft_plan *plan, bool natural);
/* The same for a plan that is not exchanged (the positions of its registers, as they are). */
tmpl_value *cg_fft_register_indices(const fft_plan *plan, bool natural);

/* For each register r of the plan against a window [at, at + size) of the signal: {r, kind, e},
 * kind "zero" (all lanes outside), "full" (all inside) or "partial", e the window-relative
 * index of lane l's element as an unsigned C expression (it wraps below the window). */
tmpl_value *cg_fft_window_registers(const fft_plan *plan, int at, int size);
/* How many of those registers lie inside the window for every lane ("full"). */
int cg_fft_full_registers(const fft_plan *plan, int at, int size);

/* The problem's part of a template context: count, channels, chan_div (transforms up to
 * max_transform), idx (the index type, wide enough for both sides and the workspace), rs and ss
 * (signal and spectrum strides), the window's columns w and wx0, scaled_output and scale, and
 * epi (common.cuh's epilogue map: the problem's epilogue, a C2R's only). */
void cg_fft_side_context(tmpl_value *ctx, const cg_fft_problem *p, int64_t max_transform, int64_t workspace_elements);

#endif
