{#- B's pieces for direct_wgmma.cu: w laid out once a run as the products kernel reads it, hi and lo
    halves, so that its copies are 16 bytes each and nothing is rearranged on chip (lo halves made
    on chip, by the thread that copied each piece, cost 19% on V1: bench/NOTES.md, session 77).
    generator/direct/direct_tc.c works out every constant. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

{{ tf32_lo_function() }}

// Thread i makes B's float i of {{ hi_floats }}: column tile nb, chunk, K step ks (tap f of channels
// 8 cq ..), core matrix (8 columns n8, 4 of the sum kh), column nr and sum kr in it: w's
// (column, channel, tap) = ({{ bn }} nb + 8 n8 + nr, {{ cc }} chunk + 8 cq + 4 kh + kr, f), zero past the
// GEMM's columns or {{ in1 }}'s channels. It lands at its K step's hi half and, {{ 8 * bn }} floats on, its lo.
extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ {{ in0 }}, const float *__restrict__ {{ in1 }},
    float *__restrict__ {{ out }}, float *__restrict__ workspace)
{
{{- dependent_start(dependent) }}
    const unsigned i = blockIdx.x * {{ threads }}u + threadIdx.x;
    if (i >= {{ hi_floats }}u)
        return;
    const unsigned kr = i % 4u, nr = i / 4u % 8u, kh = i / 32u % 2u, n8 = i / 64u % {{ bn // 8 }}u;
    const unsigned step = i / {{ 8 * bn }}u, ks = step % {{ ksteps }}u, chunk = step / {{ ksteps }}u % {{ chunks }}u,
                   nb = step / {{ ksteps * chunks }}u;
    const unsigned f = ks / {{ kq }}u, cq = ks % {{ kq }}u;
    const unsigned col = nb * {{ bn }}u + n8 * 8u + nr, ch = chunk * {{ cc }}u + cq * 8u + kh * 4u + kr;
    const float v = col < {{ cols }}u && ch < {{ src_c }}u
                        ? {{ in1 }}[(unsigned long long)col * {{ b_col_stride }}u + (unsigned long long)ch * {{ b_chan_stride }}u + f]
                        : 0.0f;
    float *const hi = workspace + (unsigned long long)step * {{ 16 * bn }}u + i % {{ 8 * bn }}u;
    hi[0] = v;
    hi[{{ 8 * bn }}] = __uint_as_float(tf32_lo(v));
}
