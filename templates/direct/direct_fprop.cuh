{#- fprop as a GEMM: rows = (n, o...) output pixels, red = (c, f...) input channels and taps,
    cols = k output channels. A is the im2col view of x, B is w as stored. -#}
{% include "direct/direct_im2col.cuh" %}// B[red][col] = w[k = col][red]: the weights are already the GEMM's B.
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
