{#- Max pooling, or its fragments (ZNNi section V), or fragments interleaved back into dense
    volumes (a thread per dense output, gathering it from its fragment). With all_fragments each thread computes one
    output position of every fragment from the region their windows cover there, loaded once into
    registers. Otherwise each thread one output, the maximum of its window's elements by unrolled
    loads. Consecutive threads take consecutive outputs along
    the width, so a warp's loads for one window element are one run of p-strided floats, and the
    window's elements together cover that run; a region's fragments are consecutive blocks, which
    find its input in the cache. generator/net/pool.c decides every number. -#}
{%- include "common.cuh" -%}

{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0,
    float *__restrict__ workspace)
{
{%- if interleave %}
    // Block b: entry nc (n * {{ c }} + c), its dense outputs chunk * {{ threads }} + threadIdx.x.
{%- elif all_fragments %}
    // Block b: entry nc (n * {{ c }} + c), output positions chunk * {{ threads }} + threadIdx.x of all {{ fragments }} fragments.
{%- elif fragments > 1 %}
    // Block b: fragment f of entry nc (n * {{ c }} + c), its outputs chunk * {{ threads }} + threadIdx.x.
{%- else %}
    // Block b: entry nc (n * {{ c }} + c), its outputs chunk * {{ threads }} + threadIdx.x.
{%- endif %}
    const unsigned b = blockIdx.x;
{{- decompose(block_digits, "    ") }}
    const unsigned e = chunk * {{ threads }}u + threadIdx.x;
    if (e >= {{ out_volume }}u)
        return;
{{- decompose(output_digits, "    ") }}
{%- if interleave %}
    // Per dimension the output o + p j is position j of the fragment whose window offset is o
    // (divisions by the window's constants).
    const unsigned jd = zd / {{ window[0] }}u, jh = zh / {{ window[1] }}u, jw = zw / {{ window[2] }}u;
    const unsigned f = ((zd - jd * {{ window[0] }}u) * {{ window[1] }}u + zh - jh * {{ window[1] }}u) * {{ window[2] }}u + zw - jw * {{ window[2] }}u;
    const unsigned at = (jd * {{ in_height }}u + jh) * {{ in_row }}u + jw;
    out0[(unsigned long long)nc * {{ out_volume }}ull + e] = in0[((unsigned long long)f * {{ entries }}u + nc) * {{ in_volume }}ull + at];
}
{%- elif all_fragments %}
    // The region the fragments' windows cover at this position, each element loaded once.
    const float *src = in0 + (unsigned long long)nc * {{ in_volume }}ull + zd * {{ window[0] * in_plane }}u + zh * {{ window[1] * in_row }}u + zw * {{ window[2] }}u;
{%- for l in loads %}
    const float {{ l.name }} = src[{{ l.at }}u];
{%- endfor %}
    // Fragment f (the window at offset (oz, oy, ox) = its digits) is y's outermost axis.
    float *dst = out0 + (unsigned long long)nc * {{ out_volume }}ull + e;
{%- for fr in fragment_windows %}
    {
        float m = {{ fr.first }};
{%- for v in fr.rest %}
        m = fmaxf(m, {{ v }});
{%- endfor %}
        dst[{{ fr.f * entries * out_volume }}ull] = m;
    }
{%- endfor %}
}
{%- else %}
{%- if fragments > 1 %}
    // f is the window's offset (oz, oy, ox); the fragments are y's outermost axis.
{{- decompose(fragment_digits, "    ") }}
    const unsigned v = f * {{ entries }}u + nc;
    const unsigned at = (oz + zd * {{ window[0] }}u) * {{ in_plane }}u + (oy + zh * {{ window[1] }}u) * {{ in_row }}u + ox + zw * {{ window[2] }}u;
{%- else %}
    const unsigned v = nc;
    const unsigned at = zd * {{ window[0] * in_plane }}u + zh * {{ window[1] * in_row }}u + zw * {{ window[2] }}u;
{%- endif %}
    const float *src = in0 + (unsigned long long)nc * {{ in_volume }}ull + at;
    float m = src[0];
{%- for t in taps %}
    m = fmaxf(m, src[{{ t }}u]);
{%- endfor %}
    out0[(unsigned long long)v * {{ out_volume }}ull + e] = m;
}
{%- endif %}
