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
{%- set elem = "float2" if complex else "float" -%}
{%- set esize = 8 if complex else 4 -%}
{{ file_header(header) }}

{%- for bytes in copy_sizes %}

{{ copy_async(bytes, sized=true) }}
{%- endfor %}

{#- The step from k0 of operand `x` where a thread's copies sit at constant offsets from its first
    (setup_fast): one pointer add and a copy each, `ds` step rows apart (where ds does not divide
    the step, the last copy only for the threads whose row is inside it). Interleaved, into
    tile[entry][step][row], a float2 a copy; else (stored [sum][row]) into tile[step][row], `vec`
    elements a copy. -#}
{%- macro fetch_fast(x, tile, rows, outer, vec, ld, ds, copies, indent) -%}
{%- set sk = ld if outer else inc -%}
{{ indent }}{
{{ indent }}    const {{ elem }} *const src = {{ x }}_src + k0 * {{ sk }}u;
{{ indent }}#pragma unroll
{{ indent }}    for (unsigned i = 0; i < {{ copies }}u; ++i) {
{{ indent }}        const unsigned s = {{ x }}_s0 + {{ ds }}u * i;
{%- if step % ds %}
{{ indent }}        if (i == {{ copies - 1 }}u && s >= {{ step }}u) // the last copy only where the step has a row left
{{ indent }}            break;
{%- endif %}
{%- if k % step %}
{{ indent }}        const bool inside = {{ x }}_ok && k0 + s < {{ k }}u;
{%- else %}
{{ indent }}        const bool inside = {{ x }}_ok && k0 < {{ k }}u; // whole steps: the one past the sum is zeros
{%- endif %}
{%- if group > 1 %}
{{ indent }}        copy8(&{{ tile }}[{{ x }}_entry][s * {{ rows }}u + {{ x }}_r], inside ? src + i * {{ ds * sk }}u : {{ x }}, inside);
{%- else %}
{{ indent }}        copy{{ vec * esize }}(&{{ tile }}[s][{{ x }}_r], inside ? src + i * {{ ds * sk }}u : {{ x }}, inside);
{%- endif %}
{{ indent }}    }
{{ indent }}}
{%- endmacro -%}

{#- A thread's first copy of operand `x` in every step: its row of the tile (and entry, where the
    GEMMs interleave), its first row of the step, whether the element exists, and where it is
    read at k0 = 0. -#}
{%- macro setup_fast(x, rows, extent, first, outer, vec, ld, indent) -%}
{%- if group > 1 %}
{%- set sk = ld if outer else inc -%}
{%- set sr = inc if outer else ld -%}
{{ indent }}const unsigned {{ x }}_entry = tid % {{ group }}u, {{ x }}_r = tid / {{ group }}u % {{ rows }}u, {{ x }}_s0 = tid / {{ group * rows }}u;
{{ indent }}const bool {{ x }}_ok = {{ first }} + {{ x }}_r < {{ extent }}u && entry0 + {{ x }}_entry < {{ batch }}u;
{{ indent }}const float2 *const {{ x }}_src = {{ x }} + ({{ x }}_ok ? entry0 + {{ x }}_entry + ({{ first }} + {{ x }}_r) * {{ sr }}u + {{ x }}_s0 * {{ sk }}u : 0u);
{%- else -%}
{{ indent }}const unsigned {{ x }}_r = tid % {{ rows // vec }}u * {{ vec }}u, {{ x }}_s0 = tid / {{ rows // vec }}u;
{{ indent }}const bool {{ x }}_ok = {{ first }} + {{ x }}_r < {{ extent }}u;
{{ indent }}const float *const {{ x }}_src = {{ x }} + ({{ x }}_ok ? {{ first }} + {{ x }}_r + {{ x }}_s0 * {{ ld }}u : 0u);
{%- endif %}
{%- endmacro -%}

{#- The step from k0 of operand `x` ("a": op(A), rows along m; "b": op(B), along n) into tile[step][row]
    (`rows` wide, `extent` in all): outer, its stored runs go along the rows; else along the sum.
    `fast`: the thread's copies worked out once (fetch_fast). -#}
{%- macro fetch(x, tile, rows, extent, first, outer, vec, ld, fast, ds, copies, indent) -%}
{%- if fast %}
{{ fetch_fast(x, tile, rows, outer, vec, ld, ds, copies, indent) }}
{%- elif group > 1 %}
{{ indent }}// {{ group }} GEMMs' elements side by side: [{{ group }}][step][row], a copy a float2
{{ indent }}for (unsigned u = tid; u < {{ group * step * rows }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned entry = u % {{ group }}u, r = u / {{ group }}u % {{ rows }}u, s = u / {{ group * rows }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u && entry0 + entry < {{ batch }}u;
{%- if outer %}
{{ indent }}    const unsigned at = entry0 + entry + (k0 + s) * {{ ld }}u + ({{ first }} + r) * {{ inc }}u;
{%- else %}
{{ indent }}    const unsigned at = entry0 + entry + ({{ first }} + r) * {{ ld }}u + (k0 + s) * {{ inc }}u;
{%- endif %}
{{ indent }}    copy8(&{{ tile }}[entry][s * {{ rows }}u + r], inside ? {{ x }} + at : {{ x }}, inside);
{{ indent }}}
{%- elif outer %}
{{ indent }}// stored [sum][row]: {{ step }} runs of {{ rows }}, {{ vec }} {{ elem }}{{ "s" if vec > 1 }} a copy
{{ indent }}for (unsigned u = tid; u < {{ step * rows // vec }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned s = u / {{ rows // vec }}u, r = u % {{ rows // vec }}u * {{ vec }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy{{ vec * esize }}(&{{ tile }}[s][r], inside ? {{ x }} + (k0 + s) * {{ ld }}u + {{ first }} + r : {{ x }}, inside);
{{ indent }}}
{%- else %}
{{ indent }}// stored [row][sum]: {{ rows }} runs of {{ step }}, transposed into the tile a {{ elem }} at a time
{{ indent }}for (unsigned u = tid; u < {{ step * rows }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned r = u / {{ step }}u, s = u % {{ step }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy{{ esize }}(&{{ tile }}[s][r], inside ? {{ x }} + ({{ first }} + r) * {{ ld }}u + k0 + s : {{ x }}, inside);
{{ indent }}}
{%- endif %}
{%- endmacro -%}

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
