{#- fprop as a GEMM: rows = (n, o...) output pixels, red = (c, f...) input channels and taps,
    cols = k output channels. A is the im2col view of x, B is w as stored. -#}
{%- macro tap(d) -%}{% if d.flip %}({{ d.kmax }}u - f{{ d.i }}){% else %}f{{ d.i }}{% endif %}{%- endmacro -%}
// A[row][red] = x[n][c][o*stride - pad + tap*dilation], zero outside the input.
__device__ __forceinline__ float load_a(const float *__restrict__ x, unsigned row, unsigned red)
{
{{- decompose(row_digits, "    ") }}
{{- decompose(red_digits, "    ") }}
{%- for d in dims %}
    const int i{{ d.i }} = (int)({{ times("o" ~ d.i, d.stride) }} + {{ times(tap(d), d.dil) }}){{ " - " ~ d.pad if d.pad }};
{%- endfor %}
    if ({% for d in dims %}(unsigned)i{{ d.i }} < {{ d.in }}u{{ " && " if not loop.last }}{% endfor %})
        return x[((idx_t)n * {{ c_size }}u + c) * {{ in_pixels }}u{% for d in dims %} + (idx_t)i{{ d.i }}{{ " * " ~ d.in_stride ~ "u" if d.in_stride != 1 }}{% endfor %}];
    return 0.0f;
}

// B[red][col] = w[k = col][red]: the weights are already the GEMM's B.
__device__ __forceinline__ float load_b(const float *__restrict__ w, unsigned red, unsigned col)
{
    return w[(idx_t)col * {{ red_size }}u + red];
}

// out[row][col] is y[n][k = col][o].
__device__ __forceinline__ idx_t out_index(unsigned row, unsigned col)
{
{{- decompose(out_digits, "    ") }}
    return ((idx_t)n * {{ k_size }}u + col) * {{ out_pixels }}u + opix;
}
