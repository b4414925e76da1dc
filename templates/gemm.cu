{#- convgen's batched GEMM (generator/gemm.c): C = op(A) op(B) column-major per batch entry, every
    size and offset a constant. Real (SGEMM): an entry per blockIdx.z. Complex (CGEMM, float2,
    op 'C' the conjugate transpose): the entries interleaved element by element, as the FFT
    kernels leave their [image][bin] spectra (neighbours along a leading dimension {{ inc }} apart),
    {{ group }} neighbouring entries a block, so that {{ group }} threads' loads of one element make one 32-byte
    sector, and each thread's sums belong to entry tid % {{ group }}. A block sums its {{ bm }} x {{ bn }} of C (of
    each entry) in steps of {{ step }}: op(A)'s {{ step }} x {{ bm }} and op(B)'s {{ step }} x {{ bn }} tiles go to shared memory
    as [step][row] by cp.async, the next step's while this one's products run, and each thread
    keeps {{ 2 * per }} x {{ 2 * per }} sums, rows tx*{{ per }}.. and {{ bm // 2 }} + tx*{{ per }}.. by columns ty*{{ per }}.. and {{ bn // 2 }} + ty*{{ per }}..,
    each quadrant one float4 of the tile ({{ per }} elements). -#}
{%- include "common.cuh" -%}
{%- include "gemm_fetch.cuh" -%}
{%- set elem = "float2" if complex else "float" -%}
{%- set esize = 8 if complex else 4 -%}
{{ file_header(header) }}

{%- for bytes in copy_sizes %}

{{ copy_async(bytes, sized=true) }}
{%- endfor %}

{#- The sums of one step: real, the 8 x 8 outer product of a's and b's 8 floats; complex, the
    4 x 4 of their 4 complex values, a or b conjugated where op is 'C' (signs, no instructions). -#}
{%- macro products(indent) -%}
{%- if not complex %}
{{ fma_8x8("a_lo", "a_hi", "b_lo", "b_hi", indent) }}
{%- else %}
{{ indent }}const float2 av[4] = {make_float2(a_lo.x, a_lo.y), make_float2(a_lo.z, a_lo.w), make_float2(a_hi.x, a_hi.y), make_float2(a_hi.z, a_hi.w)};
{{ indent }}const float2 bv[4] = {make_float2(b_lo.x, b_lo.y), make_float2(b_lo.z, b_lo.w), make_float2(b_hi.x, b_hi.y), make_float2(b_hi.z, b_hi.w)};
{{ indent }}#pragma unroll
{{ indent }}for (int i = 0; i < 4; ++i)
{{ indent }}#pragma unroll
{{ indent }}    for (int j = 0; j < 4; ++j) { // acc += {{ "conj(a)" if conj_a else "a" }} {{ "conj(b)" if conj_b else "b" }}
{{ indent }}        acc[i][j].x = fmaf(av[i].x, bv[j].x, acc[i][j].x);
{{ indent }}        acc[i][j].x = fmaf({{ "" if conj_a != conj_b else "-" }}av[i].y, bv[j].y, acc[i][j].x);
{{ indent }}        acc[i][j].y = fmaf({{ "-" if conj_b }}av[i].x, bv[j].y, acc[i][j].y);
{{ indent }}        acc[i][j].y = fmaf({{ "-" if conj_a }}av[i].y, bv[j].x, acc[i][j].y);
{{ indent }}    }
{%- endif %}
{%- endmacro %}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
{%- if group > 1 %}
    // Two stages of the tiles ({{ shared_bytes }} bytes, dynamic), each entry's {{ step * bm + 4 }} float2 of A (and {{ step * bn + 4 }} of
    // B) a multiple of 256 bytes and 32 more (8 banks further round than the last entry's), so
    // that a quarter warp's float4 reads (2 threads x 4 entries) and a warp's 8-byte copies (8
    // rows x 4 entries) spread evenly over the banks where the tiles are 16 rows or more.
    extern __shared__ __align__(16) float2 tiles[];
    float2 (*const as)[{{ group }}][{{ step * bm + 4 }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ step * bm + 4 }}]>(tiles);
    float2 (*const bs)[{{ group }}][{{ step * bn + 4 }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ step * bn + 4 }}]>(tiles + {{ 2 * group * (step * bm + 4) }});
    // e: the GEMM among the block's {{ group }} whose {{ bm }} x {{ bn }} sums this thread shares
    const unsigned tid = threadIdx.x, e = tid % {{ group }}u, tx = tid / {{ group }}u % {{ bm // 4 }}u, ty = tid / {{ group * bm // 4 }}u;
    const unsigned m0 = blockIdx.x * {{ bm }}u, n0 = blockIdx.y * {{ bn }}u, entry0 = blockIdx.z * {{ group }}u;
    const float2 *__restrict__ a = (const float2 *)workspace + {{ a_offset }}ull;
    const float2 *__restrict__ b = (const float2 *)workspace + {{ b_offset }}ull;
    float2 *__restrict__ c = (float2 *)workspace + {{ c_offset }}ull + entry0 + e;
{%- else %}
    // Two stages of the tiles, rows padded by 16 bytes: the transposed stores of a warp spread
    // over the banks, and float4 reads stay aligned.
    __shared__ __align__(16) {{ elem }} as[2][{{ step }}][{{ bm + per }}], bs[2][{{ step }}][{{ bn + per }}];
    const unsigned tid = threadIdx.x, tx = tid % {{ bm // (2 * per) }}u, ty = tid / {{ bm // (2 * per) }}u;
    const unsigned m0 = blockIdx.x * {{ bm }}u, n0 = blockIdx.y * {{ bn }}u;
    const {{ elem }} *__restrict__ a = (const {{ elem }} *)workspace + {{ a_offset }}ull + (size_t)blockIdx.z * {{ a_stride }}u;
    const {{ elem }} *__restrict__ b = (const {{ elem }} *)workspace + {{ b_offset }}ull + (size_t)blockIdx.z * {{ b_stride }}u;
    {{ elem }} *__restrict__ c = ({{ elem }} *)workspace + {{ c_offset }}ull + (size_t)blockIdx.z * {{ c_stride }}u;
{%- endif %}
{%- if a_fast %}
    // op(A)'s copies: {{ a_copies }} a step, {{ a_ds }} step rows apart
{{ setup_fast("a", bm, m, "m0", a_outer, a_vec, a_ld, "    ") }}
{%- endif %}
{%- if b_fast %}
    // op(B)'s copies: {{ b_copies }} a step, {{ b_ds }} step rows apart
{{ setup_fast("b", bn, n, "n0", b_outer, b_vec, b_ld, "    ") }}
{%- endif %}
{%- if complex %}
    float2 acc[4][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j)
            acc[i][j] = make_float2(0.0f, 0.0f);
{%- else %}
{{ acc_8x8("    ") }}
{%- endif %}

    unsigned k0 = 0;
    {
{{ fetch("a", "as[0]", bm, m, "m0", a_outer, a_vec, a_ld, a_fast, a_ds, a_copies, "        ") }}
{{ fetch("b", "bs[0]", bn, n, "n0", b_outer, b_vec, b_ld, b_fast, b_ds, b_copies, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (unsigned stage = 0; k0 < {{ k }}u; stage ^= 1u) {
        k0 += {{ step }}u; // the next step's tiles (past the sum: zeros, nothing read)
{{ fetch("a", "as[stage ^ 1u]", bm, m, "m0", a_outer, a_vec, a_ld, a_fast, a_ds, a_copies, "        ") }}
{{ fetch("b", "bs[stage ^ 1u]", bn, n, "n0", b_outer, b_vec, b_ld, b_fast, b_ds, b_copies, "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this step's
        __syncthreads();
#pragma unroll
        for (int s = 0; s < {{ step }}; ++s) {
{%- if group > 1 %}
            const float4 a_lo = *(const float4 *)&as[stage][e][s * {{ bm }} + tx * 2u], a_hi = *(const float4 *)&as[stage][e][s * {{ bm }} + {{ bm // 2 }}u + tx * 2u];
            const float4 b_lo = *(const float4 *)&bs[stage][e][s * {{ bn }} + ty * 2u], b_hi = *(const float4 *)&bs[stage][e][s * {{ bn }} + {{ bn // 2 }}u + ty * 2u];
{%- else %}
            const float4 a_lo = *(const float4 *)&as[stage][s][tx * {{ per }}u], a_hi = *(const float4 *)&as[stage][s][{{ bm // 2 }}u + tx * {{ per }}u];
            const float4 b_lo = *(const float4 *)&bs[stage][s][ty * {{ per }}u], b_hi = *(const float4 *)&bs[stage][s][{{ bn // 2 }}u + ty * {{ per }}u];
{%- endif %}
{{ products("            ") }}
        }
        __syncthreads();
    }
    asm volatile("cp.async.wait_all;\n" ::);

    // C column by column: sums i of rows m0 + tx*{{ per }} + i (i < {{ per }}) and m0 + {{ bm // 2 }} + tx*{{ per }} + i - {{ per }}.
{%- if group > 1 %}
    if (entry0 + e >= {{ batch }}u)
        return;
{%- endif %}
#pragma unroll
    for (int j = 0; j < {{ 2 * per }}; ++j) {
        const unsigned col = n0 + (j < {{ per }} ? ty * {{ per }}u + j : {{ bn // 2 }}u + ty * {{ per }}u + j - {{ per }});
        if (col >= {{ n }}u)
            continue;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const unsigned row = m0 + h * {{ bm // 2 }}u + tx * {{ per }}u;
            {{ elem }} *__restrict__ dst = c + col * {{ ldc }}u + row{{ " * " ~ inc ~ "u" if group > 1 }};
{%- if c_vec %}
            if (row < {{ m }}u) { // m is a multiple of {{ per }}: the {{ per }} rows are in or out together
                float4 sum = make_float4(acc[4 * h][j], acc[4 * h + 1][j], acc[4 * h + 2][j], acc[4 * h + 3][j]);
{%- if accumulate %}
                const float4 was = *(const float4 *)dst; // the sum of the sub-batches before
                sum = make_float4(was.x + sum.x, was.y + sum.y, was.z + sum.z, was.w + sum.w);
{%- endif %}
                *(float4 *)dst = sum;
            }
{%- else %}
#pragma unroll
            for (int i = 0; i < {{ per }}; ++i)
                if (row + i < {{ m }}u) {
{%- set at = "i * " ~ inc ~ "u" if group > 1 else "i" %}
{%- if complex and accumulate %}
                    dst[{{ at }}] = make_float2(dst[{{ at }}].x + acc[{{ per }} * h + i][j].x, dst[{{ at }}].y + acc[{{ per }} * h + i][j].y);
{%- else %}
                    dst[{{ at }}] {{ "+=" if accumulate else "=" }} acc[{{ per }} * h + i][j];
{%- endif %}
                }
{%- endif %}
        }
    }
}
