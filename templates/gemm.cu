{#- convgen's batched SGEMM (generator/gemm.c): C = op(A) op(B) column-major per batch entry
    (blockIdx.z), every size and offset a constant. A block sums its {{ bm }} x {{ bn }} of C in steps of
    {{ step }}: op(A)'s {{ step }} x {{ bm }} and op(B)'s {{ step }} x {{ bn }} tiles go to shared memory as [step][row] by
    cp.async, the next step's while this one's products run, and each thread keeps 8 x 8 sums,
    rows tx*4.. and {{ bm // 2 }} + tx*4.. by columns ty*4.. and {{ bn // 2 }} + ty*4... -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

// Bytes from global to shared memory without passing through registers; zeros where !full
// (then nothing is read).
__device__ __forceinline__ void copy4(float *dst, const float *src, bool full)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(to), "l"(src), "r"(full ? 4 : 0));
}

__device__ __forceinline__ void copy16(float *dst, const float *src, bool full)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(to), "l"(src), "r"(full ? 16 : 0));
}

{#- The step from k0 of operand `x` ("a": op(A), rows along m; "b": op(B), along n) into tile[step][row]
    (`rows` wide, `extent` in all): outer, its stored runs go along the rows; else along the sum. -#}
{%- macro fetch(x, tile, rows, extent, first, outer, vec, ld, indent) -%}
{%- if outer %}
{{ indent }}// stored [sum][row]: {{ step }} runs of {{ rows }}, {{ vec }} float{{ "s" if vec > 1 }} a copy
{{ indent }}for (unsigned u = tid; u < {{ step * rows // vec }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned s = u / {{ rows // vec }}u, r = u % {{ rows // vec }}u * {{ vec }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy{{ vec * 4 }}(&{{ tile }}[s][r], inside ? {{ x }} + (k0 + s) * {{ ld }}u + {{ first }} + r : {{ x }}, inside);
{{ indent }}}
{%- else %}
{{ indent }}// stored [row][sum]: {{ rows }} runs of {{ step }}, transposed into the tile a float at a time
{{ indent }}for (unsigned u = tid; u < {{ step * rows }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned r = u / {{ step }}u, s = u % {{ step }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy4(&{{ tile }}[s][r], inside ? {{ x }} + ({{ first }} + r) * {{ ld }}u + k0 + s : {{ x }}, inside);
{{ indent }}}
{%- endif %}
{%- endmacro -%}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ 2 if threads == 256 else 4 }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    // Two stages of the tiles, rows padded by 4 floats: the transposed stores of a warp spread
    // over the banks, and float4 reads stay aligned.
    __shared__ __align__(16) float as[2][{{ step }}][{{ bm + 4 }}], bs[2][{{ step }}][{{ bn + 4 }}];
    const unsigned tid = threadIdx.x, tx = tid % {{ bm // 8 }}u, ty = tid / {{ bm // 8 }}u;
    const unsigned m0 = blockIdx.x * {{ bm }}u, n0 = blockIdx.y * {{ bn }}u;
    const float *__restrict__ a = workspace + {{ a_offset }}ull + (size_t)blockIdx.z * {{ a_stride }}u;
    const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)blockIdx.z * {{ b_stride }}u;
    float *__restrict__ c = workspace + {{ c_offset }}ull + (size_t)blockIdx.z * {{ c_stride }}u;
{{ acc_8x8("    ") }}

    unsigned k0 = 0;
    {
{{ fetch("a", "as[0]", bm, m, "m0", a_outer, a_vec, a_ld, "        ") }}
{{ fetch("b", "bs[0]", bn, n, "n0", b_outer, b_vec, b_ld, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (unsigned stage = 0; k0 < {{ k }}u; stage ^= 1u) {
        k0 += {{ step }}u; // the next step's tiles (past the sum: zeros, nothing read)
{{ fetch("a", "as[stage ^ 1u]", bm, m, "m0", a_outer, a_vec, a_ld, "        ") }}
{{ fetch("b", "bs[stage ^ 1u]", bn, n, "n0", b_outer, b_vec, b_ld, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this step's
        __syncthreads();
#pragma unroll
        for (int s = 0; s < {{ step }}; ++s) {
            const float4 a_lo = *(const float4 *)&as[stage][s][tx * 4u], a_hi = *(const float4 *)&as[stage][s][{{ bm // 2 }}u + tx * 4u];
            const float4 b_lo = *(const float4 *)&bs[stage][s][ty * 4u], b_hi = *(const float4 *)&bs[stage][s][{{ bn // 2 }}u + ty * 4u];
{{ fma_8x8("a_lo", "a_hi", "b_lo", "b_hi", "            ") }}
        }
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;\n" ::);

    // C column by column: sums i of rows m0 + tx*4 + i (i < 4) and m0 + {{ bm // 2 }} + tx*4 + i - 4.
#pragma unroll
    for (int j = 0; j < 8; ++j) {
        const unsigned col = n0 + (j < 4 ? ty * 4u + j : {{ bn // 2 }}u + ty * 4u + j - 4);
        if (col >= {{ n }}u)
            continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const unsigned row = m0 + h * {{ bm // 2 }}u + tx * 4u;
            float *__restrict__ dst = c + col * {{ ldc }}u + row;
{%- if c_vec %}
            if (row < {{ m }}u) { // m is a multiple of 4: the four rows are in or out together
{%- if accumulate %}
                const float4 was = *(const float4 *)dst; // the sum of the sub-batches before
                *(float4 *)dst = make_float4(was.x + acc[4 * h][j], was.y + acc[4 * h + 1][j], was.z + acc[4 * h + 2][j],
                                             was.w + acc[4 * h + 3][j]);
{%- else %}
                *(float4 *)dst = make_float4(acc[4 * h][j], acc[4 * h + 1][j], acc[4 * h + 2][j], acc[4 * h + 3][j]);
{%- endif %}
            }
{%- else %}
#pragma unroll
            for (int i = 0; i < 4; ++i)
                if (row + i < {{ m }}u)
                    dst[i] {{ "+=" if accumulate else "=" }} acc[4 * h + i][j];
{%- endif %}
        }
    }
}
