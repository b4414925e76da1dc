{#- accgrad as a GEMM of the transposed weight gradient: rows = (c, f...) input channels and
    taps, red = (n, o...) batch and output pixels, cols = k output channels. Rows run along
    dw's contiguous axis, so the row-contiguous stores of the kernel are coalesced. -#}
{% include "direct/direct_im2col.cuh" %}// B[red][col] = dy[n][k = col][o], red = (n, o).
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
