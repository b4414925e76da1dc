{#- bprop as a GEMM: rows = (n, i...) input pixels, red = (k, f...) output channels and taps,
    cols = c input channels. A gathers dy at o = (i + pad - tap*dilation) / stride where that
    division is exact and in range (the input pixel i is reached by tap f from output o). -#}
// A[row][red] = dy[n][k][o] with o*stride - pad + tap*dilation = i, zero where no such o exists.
__device__ __forceinline__ float load_a(const float *__restrict__ dy, unsigned row, unsigned red)
{
{{- decompose(row_digits, "    ") }}
{{- decompose(red_digits, "    ") }}
{%- for d in dims %}
    const int t{{ d.i }} = (int)(i{{ d.i }}{{ " + " ~ d.pad ~ "u" if d.pad }}) - (int)({{ times(tap(d), d.dil) }});
{%- if d.stride == 1 %}
    const unsigned o{{ d.i }} = (unsigned)t{{ d.i }};
{%- else %}
    const unsigned o{{ d.i }} = {{ udiv("(unsigned)t" ~ d.i, d.stride_div) }};  // t / {{ d.stride }}, used only when t >= 0
{%- endif %}
{%- endfor %}
    if ({% for d in dims %}{% if d.stride != 1 %}t{{ d.i }} >= 0 && o{{ d.i }} * {{ d.stride }}u == (unsigned)t{{ d.i }} && {% endif %}o{{ d.i }} < {{ d.out }}u{{ " && " if not loop.last }}{% endfor %})
        return dy[((idx_t)n * {{ k_size }}u + k) * {{ out_pixels }}u{% for d in dims %} + (idx_t)o{{ d.i }}{{ " * " ~ d.out_stride ~ "u" if d.out_stride != 1 }}{% endfor %}];
    return 0.0f;
}

// B[red][col] = w[k][c = col][f], red = (k, f).
__device__ __forceinline__ float load_b(const float *__restrict__ w, unsigned red, unsigned col)
{
{{- decompose(red_split_digits, "    ") }}
    return w[((idx_t)k * {{ c_size }}u + col) * {{ kernel_pixels }}u + fpix];
}

// out[row][col] is dx[n][c = col][i].
__device__ __forceinline__ idx_t out_index(unsigned row, unsigned col)
{
{{- decompose(out_digits, "    ") }}
    return ((idx_t)n * {{ c_size }}u + col) * {{ in_pixels }}u + ipix;
}
