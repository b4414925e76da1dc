{#- The im2col operand, shared by fprop and accgrad: element (row, red) of A is x at the input
    pixel that tap f of output pixel o reads; the passes differ only in which of (n, o) and
    (c, f) are the rows, which the digit lists say. -#}
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

