{#- accgrad as a GEMM of the transposed weight gradient: rows = (c, f...) input channels and
    taps, red = (n, o...) batch and output pixels, cols = k output channels. Rows run along
    dw's contiguous axis, so the row-contiguous stores of the kernel are coalesced. -#}
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

// B[red][col] = dy[n][k = col][o], red = (n, o).
__device__ __forceinline__ float load_b(const float *__restrict__ dy, unsigned red, unsigned col)
{
{{- decompose(red_split_digits, "    ") }}
    return dy[((idx_t)n * {{ k_size }}u + col) * {{ out_pixels }}u + opix];
}

// out[row][col] is dw[k = col][c][f]: row is already the flat (c, f) index.
__device__ __forceinline__ idx_t out_index(unsigned row, unsigned col)
{
    return (idx_t)col * {{ rows }}u + row;
}
