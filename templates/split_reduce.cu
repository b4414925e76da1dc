{#- Adds the partial results of a split reduction: out[i] = sum over s of workspace[s][i], then
    fprop's epilogue. Scalar and coalesced: the caller's output pointer need not be 16-byte
    aligned. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ unused0, const float *__restrict__ unused1,
    float *__restrict__ {{ out }}, const float *__restrict__ workspace{{ bias_param(epi) }})
{
{{- dependent_start(dependent|default("")) }}
    const {{ index_type }} i = ({{ index_type }})blockIdx.x * {{ threads }}u + threadIdx.x;
    if (i >= {{ out_elems }}u)
        return;
    float sum = workspace[i];
#pragma unroll
    for (int s = 1; s < {{ splits }}; ++s)
        sum += workspace[(size_t)s * {{ out_elems }}ull + i];
{%- if epi.bias %}
    const unsigned k = {{ udiv("i", pixels_div) }} % {{ k_size }}u; // y[n][k][pixel]
{%- endif %}
    {{ out }}[i] = {{ epilogue(epi, "sum", "k") }};
}
