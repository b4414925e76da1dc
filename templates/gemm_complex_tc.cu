{#- convgen's complex batched GEMM on the tensor cores (generator/gemm.c): the FFT algorithms' products,
    one CGEMM per frequency bin, C = op(A) op(B) column-major, the bins interleaved element by element
    as the FFT kernels leave their [image][bin] spectra (neighbours along a leading dimension {{ inc }}
    apart), {{ group }} neighbouring bins a block. The tiles come as gemm.cu's (gemm_fetch.cuh: {{ group }} bins'
    elements side by side, 32-byte sectors), {{ bm }} x {{ step }} of op(A) and {{ step }} x {{ bn }} of op(B) a bin and step,
    through two cp.async stages. The products are mma.sync m16n8k8 in 3xTF32 on a real GEMM that
    is the complex one: along the sum, lane t's 8 values are the real parts of complex k = t and
    then its imaginary parts (k8 = 4 complex); along C's columns, column 2 j the real part of complex
    column j and 2 j + 1 its imaginary part, so that op(B)'s real fragment holds (Br, -Bi) in the real
    column and (Bi, Br) in the imaginary one (op(A)'s conjugate negates the rows of its imaginary
    parts there, not its own values): 4 M N K real products, the complex cost, and a lane's sums
    d[0], d[1] are one complex output. Warp w sums bin w % {{ group }}'s rows 0..{{ bm - 1 }} by {{ 4 * nt }} complex columns
    from {{ 4 * nt }} (w / {{ group }}). C goes out through shared memory, so that {{ group }} lanes store one
    32-byte sector of neighbouring bins, as the other kernels of the program read it. -#}
{%- include "common.cuh" -%}
{%- include "gemm_fetch.cuh" -%}
{%- set elem = "float2" -%}
{%- set esize = 8 -%}
{{ file_header(header) }}

{{ copy_async(8, sized=true) }}

{{ tf32_lo_function() }}

{{ mma3_tf32_function() }}

// x as TF32 hi and lo (hi x itself: the tensor cores read its top bits).
__device__ __forceinline__ void split(float x, unsigned &hi, unsigned &lo)
{
    hi = __float_as_uint(x);
    lo = tf32_lo(x);
}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    // Two stages of the tiles ({{ shared_bytes }} bytes, dynamic): a bin's {{ step }} rows of op(A) {{ bm + row_pad }} float2 apart
    // and the bins {{ a_pitch }} apart (op(B) likewise, {{ bn + row_pad }} and {{ b_pitch }}), so that a half warp's fragment reads
    // (4 rows x 4 of the sum) and copies (4 bins x 4 rows) fall in distinct banks. After the sum
    // the same memory stages C, [bin][column][row] {{ c_pitch }} float2 a bin.
    extern __shared__ __align__(16) float2 tiles[];
    float2 (*const as)[{{ group }}][{{ a_pitch }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ a_pitch }}]>(tiles);
    float2 (*const bs)[{{ group }}][{{ b_pitch }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ b_pitch }}]>(tiles + {{ 2 * group * a_pitch }});
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
    const unsigned e = warp % {{ group }}u, c0 = warp / {{ group }}u * {{ 4 * nt }}u;
    // this lane's column of op(B)'s fragments: the imaginary part of complex column g / 2, or its real
    const bool imaginary = (g & 1u) != 0u;
    const unsigned m0 = blockIdx.x * {{ bm }}u, n0 = blockIdx.y * {{ bn }}u, entry0 = blockIdx.z * {{ group }}u;
    const float2 *__restrict__ a = (const float2 *)workspace + {{ a_offset }}ull;
    const float2 *__restrict__ b = (const float2 *)workspace + {{ b_offset }}ull;
    float2 *__restrict__ c = (float2 *)workspace + {{ c_offset }}ull + entry0;
{%- if a_fast %}
    // op(A)'s copies: {{ a_copies }} a step, {{ a_ds }} step rows apart
{{ setup_fast("a", bm, m, "m0", a_outer, 1, a_ld, "    ") }}
{%- endif %}
{%- if b_fast %}
    // op(B)'s copies: {{ b_copies }} a step, {{ b_ds }} step rows apart
{{ setup_fast("b", bn, n, "n0", b_outer, 1, b_ld, "    ") }}
{%- endif %}
    float d[{{ mt }}][{{ nt }}][4] = {};

    unsigned k0 = 0;
    {
{{ fetch("a", "as[0]", bm, m, "m0", a_outer, 1, a_ld, a_fast, a_ds, a_copies, "        ") }}
{{ fetch("b", "bs[0]", bn, n, "n0", b_outer, 1, b_ld, b_fast, b_ds, b_copies, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (unsigned stage = 0; k0 < {{ k }}u; stage ^= 1u) {
        k0 += {{ step }}u; // the next step's tiles (past the sum: zeros, nothing read)
{{ fetch("a", "as[stage ^ 1u]", bm, m, "m0", a_outer, 1, a_ld, a_fast, a_ds, a_copies, "        ") }}
{{ fetch("b", "bs[stage ^ 1u]", bn, n, "n0", b_outer, 1, b_ld, b_fast, b_ds, b_copies, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this step's
        __syncthreads();
        const float2 *const at = as[stage][e], *const bt = bs[stage][e];
#pragma unroll
        for (unsigned s = 0; s < {{ step }}u; s += 4u) { // complex k = s + t: real parts, then imaginary
            unsigned a_hi[{{ mt }}][4], a_lo[{{ mt }}][4], b_hi[{{ nt }}][2], b_lo[{{ nt }}][2];
#pragma unroll
            for (int i = 0; i < {{ mt }}; ++i) {
                const float2 p = at[(s + t) * {{ bm + row_pad }}u + 16u * i + g], q = at[(s + t) * {{ bm + row_pad }}u + 16u * i + g + 8u];
                split(p.x, a_hi[i][0], a_lo[i][0]);
                split(q.x, a_hi[i][1], a_lo[i][1]);
                split(p.y, a_hi[i][2], a_lo[i][2]);
                split(q.y, a_hi[i][3], a_lo[i][3]);
            }
#pragma unroll
            for (int j = 0; j < {{ nt }}; ++j) {
                const float2 v = bt[(s + t) * {{ bn + row_pad }}u + c0 + 4u * j + (g >> 1)];
                const float bi = {{ "-" if conj_b }}v.y;
                split(imaginary ? bi : v.x, b_hi[j][0], b_lo[j][0]); // times a's real parts
{%- if conj_a %}
                split(imaginary ? -v.x : bi, b_hi[j][1], b_lo[j][1]); // times a's imaginary parts, which op(A) negates
{%- else %}
                split(imaginary ? v.x : -bi, b_hi[j][1], b_lo[j][1]); // times a's imaginary parts
{%- endif %}
            }
            mma3_tf32<{{ mt }}, {{ nt }}>(d, a_hi, a_lo, b_hi, b_lo);
        }
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads(); // every warp's last reads of the stages done: they become C's staging

    // d[i][j] holds complex C rows 16 i + g and + 8 of column c0 + 4 j + t: through shared memory
    float2 *const staged = tiles;
#pragma unroll
    for (int i = 0; i < {{ mt }}; ++i)
#pragma unroll
        for (int j = 0; j < {{ nt }}; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                staged[e * {{ c_pitch }}u + (c0 + 4u * j + t) * {{ bm + 4 }}u + 16u * i + 8u * h + g] = make_float2(d[i][j][2 * h], d[i][j][2 * h + 1]);
    __syncthreads();
    // {{ group }} lanes a row's {{ group }} bins (one 32-byte sector), then the rows, then the columns
#pragma unroll 4
    for (unsigned u = tid; u < {{ group * bm * bn }}u; u += {{ threads }}u) {
        const unsigned bin = u % {{ group }}u, row = u / {{ group }}u % {{ bm }}u, col = u / {{ group * bm }}u;
        if (entry0 + bin < {{ batch }}u && m0 + row < {{ m }}u && n0 + col < {{ n }}u) {
            const float2 sum = staged[bin * {{ c_pitch }}u + col * {{ bm + 4 }}u + row];
            float2 *const dst = c + (size_t)(m0 + row) * {{ inc }}u + (size_t)(n0 + col) * {{ ldc }}u + bin;
{%- if accumulate %}
            const float2 was = *dst; // the sum of the sub-batches before
            *dst = make_float2(was.x + sum.x, was.y + sum.y);
{%- else %}
            *dst = sum;
{%- endif %}
        }
    }
}
