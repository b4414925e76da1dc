{#- Batched 1-D complex FFT, fbfft style: one transform in the registers of `lanes` lanes,
    register stages as straight-line butterflies, lane stages through warp shuffles. The signal
    side (forward input, inverse output) is a window with clipped loads or stores; both sides
    take batch and channel strides.
    generator/fft/fft_kernel.c decides every stage, coefficient and twiddle; this only lays out. -#}
{%- include "common.cuh" -%}
{%- include "fft/fft_warp.cuh" -%}


{#- Where element e of the warp's exchange buffer lives on the spectrum side. -#}
{%- macro spectrum_at(e) -%}
{%- if packed_spectrum -%}({{ idx }})first * {{ n }}u + {{ e }}
{%- else -%}{{ transform_offset("first + " ~ udiv(e, n_div), ss) }} + ({{ e }} - {{ udiv(e, n_div) }} * {{ n }}u)
{%- endif -%}
{%- endmacro -%}

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
    const unsigned transform = (blockIdx.x * {{ warps }}u + warp) * {{ per_warp }}u + t;
    const bool active = {{ "t < " ~ per_warp ~ "u && " if per_warp * lanes < 32 }}transform < {{ count }}u;
    const unsigned tr = active ? transform : 0u;
    const float2 *src = in + {{ transform_offset("tr", rs if sign < 0 else ss) }};
    float2 *dst = out + {{ transform_offset("tr", ss if sign < 0 else rs) }};

    // Element i = r * {{ lanes }} + l of the transform is in x[r].
    float2 x[{{ regs }}];
{%- if exchange %}
    // The warp's {{ per_warp * n }} spectrum values go through shared memory, so global accesses stay
    // coalesced while each lane's values sit in scattered (natural-order) places; one float2 of
    // padding every 16 keeps the scattered accesses off a single bank.
    __shared__ float2 exchange[{{ warps }}][{{ exchange_size }}];
    float2 *const xw = exchange[warp];
    const unsigned first = (blockIdx.x * {{ warps }}u + warp) * {{ per_warp }}u;
    const unsigned valid = first >= {{ count }}u ? 0u
                         : first + {{ per_warp }}u > {{ count }}u ? ({{ count }}u - first) * {{ n }}u : {{ per_warp * n }}u;
{%- endif %}
{%- if sign < 0 %}
    // The signal: columns {{ wx0 }}..{{ wx0 + w - 1 }} come from the window, the rest is zero.
{%- for c in xregs %}
{%- if c.kind == "zero" %}
    x[{{ c.r }}] = make_float2(0.0f, 0.0f);
{%- else %}
    {
        const unsigned e = {{ c.e }};
        x[{{ c.r }}] = active{{ " && e < " ~ w ~ "u" if c.kind != "full" }} ? src[e] : make_float2(0.0f, 0.0f);
    }
{%- endif %}
{%- endfor %}
{%- elif exchange %}
#pragma unroll
    for (unsigned e = lane; e < {{ per_warp * n }}u; e += 32u)
        if (e < valid)
            xw[e + (e >> 4)] = in[{{ spectrum_at("e") }}];
    __syncwarp();
    if (t < {{ per_warp }}u) {
{%- for r in loads %}
        x[{{ loop.index0 }}] = xw[t * {{ n }}u + {{ r }} + ((t * {{ n }}u + {{ r }}) >> 4)];
{%- endfor %}
    }
{%- else %}
{%- for r in loads %}
    x[{{ loop.index0 }}] = active ? src[{{ r }}] : make_float2(0.0f, 0.0f);
{%- endfor %}
{%- endif %}
{{ fft_transform() }}
{%- if scaled_output %}
#pragma unroll
    for (int r = 0; r < {{ regs }}; ++r)
        x[r] = make_float2(x[r].x * {{ scale|f32 }}, x[r].y * {{ scale|f32 }});
{%- endif %}
{%- if sign > 0 %}
    // Only the window's columns {{ wx0 }}..{{ wx0 + w - 1 }} are stored.
{%- for c in xregs %}
{%- if c.kind != "zero" %}
    {
        const unsigned e = {{ c.e }};
        if (active{{ " && e < " ~ w ~ "u" if c.kind != "full" }})
            dst[e] = x[{{ c.r }}];
    }
{%- endif %}
{%- endfor %}
{%- elif exchange %}
    if (t < {{ per_warp }}u) {
{%- for s in stores %}
        xw[t * {{ n }}u + {{ s }} + ((t * {{ n }}u + {{ s }}) >> 4)] = x[{{ loop.index0 }}];
{%- endfor %}
    }
    __syncwarp();
#pragma unroll
    for (unsigned e = lane; e < {{ per_warp * n }}u; e += 32u)
        if (e < valid)
            out[{{ spectrum_at("e") }}] = xw[e + (e >> 4)];
{%- else %}
    if (active) {
{%- for s in stores %}
        dst[{{ s }}] = x[{{ loop.index0 }}];
{%- endfor %}
    }
{%- endif %}
}
