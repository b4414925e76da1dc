{#- Batched 1-D complex FFT, fbfft style: one transform in the registers of `lanes` lanes,
    register stages as straight-line butterflies, lane stages through warp shuffles.
    generator/fft_kernel.c decides every stage, coefficient and twiddle; this only lays out. -#}
{%- include "common.cuh" -%}
{%- include "fft_warp.cuh" -%}

{{ file_header(header) }}

{{ fft_device_functions() }}
extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1,
    float *__restrict__ out0, float *__restrict__ workspace)
{
    const float2 *__restrict__ in = reinterpret_cast<const float2 *>(in0);
    float2 *__restrict__ out = reinterpret_cast<float2 *>(out0);
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
{{- fft_lane_setup() }}
    const {{ index_type }} transform = ({{ index_type }})(blockIdx.x * {{ warps }}u + warp) * {{ per_warp }}u + t;
    const bool active = {{ "t < " ~ per_warp ~ "u && " if per_warp * lanes < 32 }}transform < {{ batch }}u;
    const float2 *src = in + transform * {{ n }}u;
    float2 *dst = out + transform * {{ n }}u;

    // Element i = r * {{ lanes }} + l of the transform is in x[r].
    float2 x[{{ regs }}];
#pragma unroll
    for (int r = 0; r < {{ regs }}; ++r)
        x[r] = make_float2(0.0f, 0.0f);
{%- if exchange %}
    // The warp's {{ per_warp * n }} elements go through shared memory, so global accesses stay coalesced
    // while each lane's spectrum values sit in scattered (natural-order) places; one float2 of padding
    // every 16 keeps the scattered accesses off a single bank.
    __shared__ float2 exchange[{{ warps }}][{{ exchange_size }}];
    float2 *const xw = exchange[warp];
    const {{ index_type }} first = ({{ index_type }})(blockIdx.x * {{ warps }}u + warp) * {{ per_warp }}u;
    const unsigned valid = first >= {{ batch }}u ? 0u
                         : first + {{ per_warp }}u > {{ batch }}u ? (unsigned)({{ batch }}u - first) * {{ n }}u : {{ per_warp * n }}u;
{%- endif %}
{%- if exchange and sign > 0 %}
#pragma unroll
    for (unsigned e = lane; e < {{ per_warp * n }}u; e += 32u)
        if (e < valid)
            xw[e + (e >> 4)] = in[first * {{ n }}u + e];
    __syncwarp();
    if (t < {{ per_warp }}u) {
{%- for r in loads %}
        x[{{ loop.index0 }}] = xw[t * {{ n }}u + {{ r }} + ((t * {{ n }}u + {{ r }}) >> 4)];
{%- endfor %}
    }
{%- else %}
    if (active) {
{%- for r in loads %}
        x[{{ loop.index0 }}] = src[{{ r }}];
{%- endfor %}
    }
{%- endif %}
{{ fft_transform() }}
{%- if scaled_output %}
#pragma unroll
    for (int r = 0; r < {{ regs }}; ++r)
        x[r] = make_float2(x[r].x * {{ scale|f32 }}, x[r].y * {{ scale|f32 }});
{%- endif %}
{%- if exchange and sign < 0 %}
    if (t < {{ per_warp }}u) {
{%- for s in stores %}
        xw[t * {{ n }}u + {{ s }} + ((t * {{ n }}u + {{ s }}) >> 4)] = x[{{ loop.index0 }}];
{%- endfor %}
    }
    __syncwarp();
#pragma unroll
    for (unsigned e = lane; e < {{ per_warp * n }}u; e += 32u)
        if (e < valid)
            out[first * {{ n }}u + e] = xw[e + (e >> 4)];
{%- else %}
    if (active) {
{%- for s in stores %}
        dst[{{ s }}] = x[{{ loop.index0 }}];
{%- endfor %}
    }
{%- endif %}
}
