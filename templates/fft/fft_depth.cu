{#- The depth pass of a rank 3 FFT: the 1-D transforms along the depth axis, one column of a
    volume's spectrum per thread, its points in the thread's registers. Consecutive threads take
    consecutive columns of one plane, so every load and store of a warp is one run of 32 float2s.
    The forward reads the planes the plane stage wrote (the signal window's planes; the rest of
    the depth axis is zero) and writes all n bins in place; the inverse reads all n bins and
    writes only the window's planes, for the plane stage to finish.
    generator/fft/fft_volume.c decides the layout; this only lays out. -#}
{%- include "common.cuh" -%}
{%- include "fft/fft_regs.cuh" -%}

{{ file_header(header) }}

{{ complex_functions() }}

{#- Not __restrict__: the forward reads and writes the same spectrum (each thread its own column,
    all of it read before any of it is written). #}
extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *in0, const float *__restrict__ in1, float *out0, float *__restrict__ workspace)
{
{%- if reversed %}
    // Blocks take the columns from the last volume back: the plane stage wrote those last, and the
    // first blocks find them still in the L2 cache.
    const unsigned g = ({{ blocks - 1 }}u - blockIdx.x) * {{ threads }}u + threadIdx.x;
{%- else %}
    const unsigned g = blockIdx.x * {{ threads }}u + threadIdx.x;
{%- endif %}
    if (g >= {{ columns }}u)
        return;
    const unsigned tr = {{ udiv("g", column_div) }}, c = g - tr * {{ plane_bins }}u;
    const float2 *src = reinterpret_cast<const float2 *>(in0) + {{ entry_offset("tr", src) }} + c;
    float2 *dst = reinterpret_cast<float2 *>(out0) + {{ entry_offset("tr", dst) }} + c;
    float2 x[{{ n }}];
{%- for l in loads %}
    x[{{ l.reg }}] = src[{{ l.at * plane_bins }}u];
{%- endfor %}
{%- for z in zeros %}
    x[{{ z }}] = make_float2(0.0f, 0.0f);
{%- endfor %}
{{- reg_fft(fft) }}
{%- for s in stores %}
{%- if scaled_output %}
    dst[{{ s.at * plane_bins }}u] = make_float2({{ scale|f32 }} * x[{{ s.reg }}].x, {{ scale|f32 }} * x[{{ s.reg }}].y);
{%- else %}
    dst[{{ s.at * plane_bins }}u] = x[{{ s.reg }}];
{%- endif %}
{%- endfor %}
}
