{#- convgen's complex batched GEMM on the tensor cores (generator/gemm.c): the FFT algorithms' products,
    one CGEMM per frequency bin, C = op(A) op(B) column-major, the bins interleaved element by element
    as the FFT kernels leave their [image][bin] spectra (neighbours along a leading dimension {{ inc }}
    apart), {{ group }} neighbouring bins a block. The tiles come as gemm.cu's (gemm_fetch.cuh: {{ group }} bins'
    elements side by side, 32-byte sectors; where the bins pair, two a 16-byte copy past the L1), {{ bm }} x {{ step }}
    of op(A) and {{ step }} x {{ bn }} of op(B) a bin and step, through {{ depth }} cp.async stages. The products are mma.sync m16n8k8 in 3xTF32 on a real GEMM that
    is the complex one, transposed: D = C^T, so that a complex value's real and imaginary parts,
    one float2 read, land in neighbouring fragment registers. Along the sum, lane t's 8 values are
    the real parts of complex k = t and then its imaginary parts (k8 = 4 complex); op(A)'s values
    are the mma's second operand (8 of C's rows, lane g's row (ar, ai): the float2 as read), op(B)'s
    its first (8 of C's columns, row g the real part of column g and row g + 8 its imaginary
    part: lane (g, t) holds (br, bi, -bi, br), the sum's real parts then its imaginary ones). A
    lane's sums d[0], d[2] are the real and imaginary parts of one complex output, d[1], d[3] those
    of the next row's. Warp w takes bin w's whole {{ bm }} x {{ bn }} tile. C goes out through shared memory,
    so that {{ group }} lanes store one 32-byte sector of neighbouring bins, as the other kernels of the
    program read it. -#}
{%- include "common.cuh" -%}
{%- include "gemm_fetch.cuh" -%}
{#- pairs (two bins a copy): a thread's copies of operand `x` (`rows` of the tile, its stored rows `sr`
    and its sum `sk` apart): bin pair tid % 2 of row tid / 2 % rows, from step row tid / (2 rows) on,
    `pds` step rows apart; into tile[s][row][4 bins], a step row `rs` quads of float2, the pair at
    pair ^ (row >> 1 & 1) of its row's two (the fragment reads' banks, gemm_complex_tc.c). -#}
{%- macro setup_pairs(x, rows, extent, first, outer, ld, rs, indent) -%}
{%- set sk = ld if outer else inc -%}
{%- set sr = inc if outer else ld -%}
{{ indent }}const unsigned {{ x }}_pair = tid % 2u, {{ x }}_r = tid / 2u % {{ rows }}u, {{ x }}_s0 = tid / {{ 2 * rows }}u;
{{ indent }}const bool {{ x }}_ok = {{ first }} + {{ x }}_r < {{ extent }}u && entry0 + 2u * {{ x }}_pair < {{ batch }}u;
{{ indent }}const float2 *const {{ x }}_src = {{ x }} + ({{ x }}_ok ? entry0 + 2u * {{ x }}_pair + ({{ first }} + {{ x }}_r) * {{ sr }}u + {{ x }}_s0 * {{ sk }}u : 0u);
{{ indent }}const unsigned {{ x }}_dst = ({{ x }}_s0 * {{ rs }}u + {{ x }}_r) * 4u + 2u * ({{ x }}_pair ^ ({{ x }}_r >> 1 & 1u));
{%- endmacro -%}
{%- macro fetch_pairs(x, tile, outer, ld, rs, pds, indent) -%}
{%- set sk = ld if outer else inc -%}
{{ indent }}{
{{ indent }}    const float2 *const src = {{ x }}_src + k0 * {{ sk }}u;
{{ indent }}#pragma unroll
{{ indent }}    for (unsigned i = 0; i < {{ (step + pds - 1) // pds }}u; ++i) {
{{ indent }}        const unsigned s = {{ x }}_s0 + {{ pds }}u * i;
{%- if step % pds %}
{{ indent }}        if (s >= {{ step }}u)
{{ indent }}            break;
{%- endif %}
{{ indent }}        copy16(&{{ tile }}[{{ x }}_dst + i * {{ pds * rs * 4 }}u], src + i * {{ pds * sk }}u, {{ x }}_ok && k0 + s < {{ k }}u);
{{ indent }}    }
{{ indent }}}
{%- endmacro -%}
{#- A step's tiles of both operands into stage `stage`, by bin pairs or an element a copy. -#}
{%- macro fetch_step(stage, indent) -%}
{%- if pairs -%}
{{ fetch_pairs("a", "as[" ~ stage ~ "]", a_outer, a_ld, a_rs, a_pds, indent) }}
{{ fetch_pairs("b", "bs[" ~ stage ~ "]", b_outer, b_ld, b_rs, b_pds, indent) }}
{%- else -%}
{{ fetch("a", "as[" ~ stage ~ "]", bm, m, "m0", a_outer, 1, a_ld, a_fast, a_ds, a_copies, indent) }}
{{ fetch("b", "bs[" ~ stage ~ "]", bn, n, "n0", b_outer, 1, b_ld, b_fast, b_ds, b_copies, indent) }}
{%- endif %}
{%- endmacro -%}
{%- set elem = "float2" -%}
{%- set esize = 8 -%}
{{ file_header(header) }}

{{ copy_async(16 if pairs else 8, sized=true) }}

{{ tf32_lo_function() }}

{{ mma3_tf32_function() }}

// op(A)'s value x as TF32 hi and lo (hi x itself: the tensor cores read its top bits).
__device__ __forceinline__ void split(float x, unsigned &hi, unsigned &lo)
{
    hi = __float_as_uint(x);
    lo = tf32_lo(x);
}

// op(B)'s value v (complex column j, complex k of the sum) as the mma's first operand: rows g
// (C's real part) and g + 8 (its imaginary part) by the sum's real (t) and imaginary (t + 4)
// parts, each hi and lo. The one sign the complex product needs goes into the register the
// conjugates leave it in{{ "; op(B)'s conjugate also negates C's imaginary part, at its store" if conj_b }}.
// One part appears twice: its second register has bit 0 set, which the tensor cores never read
// (a TF32 operand is its top 19 bits). With the same value in two registers of a quad, ptxas
// rebuilt the quad by four moves before most of the mma that read it (134 moves a step of L3's
// products); as four values it builds each quad once.
__device__ __forceinline__ void b_fragment(float2 v, unsigned (&hi)[4], unsigned (&lo)[4])
{
    const unsigned sign = 0x80000000u;
    hi[0] = __float_as_uint(v.x);
    hi[1] = __float_as_uint(v.y);
    lo[0] = tf32_lo(v.x);
    lo[1] = tf32_lo(v.y);
{%- if conj_a != conj_b %}
    hi[2] = hi[1] | 1u; // a[0..3] = br, bi, bi, -br
    hi[3] = hi[0] ^ sign;
    lo[2] = lo[1] | 1u;
    lo[3] = lo[0] ^ sign;
{%- else %}
    hi[2] = hi[1] ^ sign; // a[0..3] = br, bi, -bi, br
    hi[3] = hi[0] | 1u;
    lo[2] = lo[1] ^ sign;
    lo[3] = lo[0] | 1u;
{%- endif %}
}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
{%- if pairs %}
    // {{ depth }} stages of the tiles ({{ shared_bytes }} bytes, dynamic): op(A)'s [step][row][4 bins], a step row {{ a_rs }}
    // quads of float2 (op(B)'s likewise, {{ b_rs }}), each bin pair one 16-byte copy; a half warp's
    // fragment reads (4 rows x 4 of the sum, one bin) meet half the banks twice each, its copies
    // each bank once. After the sum the same memory stages C, [bin][column][row], a column {{ c_col }}
    // float2 and a bin {{ c_pitch }}.
{%- else %}
    // {{ depth }} stages of the tiles ({{ shared_bytes }} bytes, dynamic): a bin's {{ step }} rows of op(A) {{ bm + row_pad }} float2 apart
    // and the bins {{ a_pitch }} apart (op(B) likewise, {{ bn + row_pad }} and {{ b_pitch }}), so that a half warp's fragment reads
    // (8 rows x 4 of the sum) and copies (4 bins x 4 rows) fall in distinct banks. After the sum
    // the same memory stages C, [bin][column][row], a column {{ c_col }} float2 and a bin {{ c_pitch }}.
{%- endif %}
    extern __shared__ __align__(16) float2 tiles[];
{%- if pairs %}
    float2 (*const as)[{{ a_pitch }}] = reinterpret_cast<float2 (*)[{{ a_pitch }}]>(tiles);
    float2 (*const bs)[{{ b_pitch }}] = reinterpret_cast<float2 (*)[{{ b_pitch }}]>(tiles + {{ depth * a_pitch }});
{%- else %}
    float2 (*const as)[{{ group }}][{{ a_pitch }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ a_pitch }}]>(tiles);
    float2 (*const bs)[{{ group }}][{{ b_pitch }}] = reinterpret_cast<float2 (*)[{{ group }}][{{ b_pitch }}]>(tiles + {{ depth * group * a_pitch }});
{%- endif %}
    const unsigned tid = threadIdx.x, e = tid >> 5, lane = tid & 31u, g = lane >> 2, t = lane & 3u;
    const unsigned m0 = blockIdx.x * {{ bm }}u, n0 = blockIdx.y * {{ bn }}u, entry0 = blockIdx.z * {{ group }}u;
    const float2 *__restrict__ a = (const float2 *)workspace + {{ a_offset }}ull;
    const float2 *__restrict__ b = (const float2 *)workspace + {{ b_offset }}ull;
    float2 *__restrict__ c = (float2 *)workspace + {{ c_offset }}ull + entry0;
{%- if pairs %}
{{ setup_pairs("a", bm, m, "m0", a_outer, a_ld, a_rs, "    ") }}
{{ setup_pairs("b", bn, n, "n0", b_outer, b_ld, b_rs, "    ") }}
{%- else %}
{%- if a_fast %}
    // op(A)'s copies: {{ a_copies }} a step, {{ a_ds }} step rows apart
{{ setup_fast("a", bm, m, "m0", a_outer, 1, a_ld, "    ") }}
{%- endif %}
{%- if b_fast %}
    // op(B)'s copies: {{ b_copies }} a step, {{ b_ds }} step rows apart
{{ setup_fast("b", bn, n, "n0", b_outer, 1, b_ld, "    ") }}
{%- endif %}
{%- endif %}
    float d[{{ ct }}][{{ rt }}][4] = {}; // C^T: 16 x 8 fragments, 8 complex columns by 8 rows

    // The tiles run {{ depth - 1 }} step{{ "s" if depth > 2 }} ahead of the sum: each step waits for its own, and after the
    // barrier the tiles {{ depth - 1 }} step{{ "s" if depth > 2 }} on go into the stage the step before read (past the sum:
    // zeros, nothing read), so that one barrier a step both publishes a stage and frees one.
    unsigned k0 = 0; // the step whose tiles are fetched next
#pragma unroll
    for (unsigned p = 0; p < {{ depth - 1 }}u; ++p, k0 += {{ step }}u) {
{{ fetch_step("p", "        ") }}
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (unsigned stage = 0, summed = 0; summed < {{ k }}u; summed += {{ step }}u, k0 += {{ step }}u) {
        asm volatile("cp.async.wait_group {{ depth - 2 }};\n" ::); // this step's tiles, of this thread
        __syncthreads(); // of every thread; and every warp is done with the step before
        {
            const unsigned fill = stage == 0u ? {{ depth - 1 }}u : stage - 1u; // the step before's stage
{{ fetch_step("fill", "            ") }}
            asm volatile("cp.async.commit_group;\n" ::);
        }
{%- if pairs %}
        // bin e of row r at e ^ 2 (r >> 1 & 1) of the row's 4: a lane's rows 8 j + g share r's bit 1
        const unsigned pos = e ^ (g >> 1 & 1u) * 2u;
        const float2 *const at = as[stage] + (t * {{ a_rs }}u + g) * 4u + pos, *const bt = bs[stage] + (t * {{ b_rs }}u + g) * 4u + pos;
{%- else %}
        const float2 *const at = as[stage][e] + t * {{ a_srow }}u + g, *const bt = bs[stage][e] + t * {{ b_srow }}u + g;
{%- endif %}
#pragma unroll
        for (unsigned s = 0; s < {{ step }}u; s += 4u) { // complex k = s + t: real parts, then imaginary
            unsigned b_hi[{{ ct }}][4], b_lo[{{ ct }}][4], a_hi[{{ rt }}][2], a_lo[{{ rt }}][2];
#pragma unroll
            for (int i = 0; i < {{ ct }}; ++i) // C's columns 8 i + g
                b_fragment(bt[s * {{ b_srow }}u + {{ 8 * row_unit }}u * i], b_hi[i], b_lo[i]);
#pragma unroll
            for (int j = 0; j < {{ rt }}; ++j) { // C's rows 8 j + g
                const float2 v = at[s * {{ a_srow }}u + {{ 8 * row_unit }}u * j];
                split(v.x, a_hi[j][0], a_lo[j][0]);
                split(v.y, a_hi[j][1], a_lo[j][1]);
            }
            mma3_tf32<{{ ct }}, {{ rt }}>(d, b_hi, b_lo, a_hi, a_lo);
        }
        stage = stage == {{ depth - 1 }}u ? 0u : stage + 1u;
    }
    asm volatile("cp.async.wait_all;\n" ::);
    __syncthreads(); // every warp's last reads of the stages done: they become C's staging

    // d[i][j] holds C's column 8 i + g at rows 8 j + 2 t and + 1 (real parts d[0], d[1], imaginary
    // d[2], d[3]): the two rows a 16-byte store, through shared memory
    float2 *const staged = tiles;
#pragma unroll
    for (int i = 0; i < {{ ct }}; ++i)
#pragma unroll
        for (int j = 0; j < {{ rt }}; ++j)
            *reinterpret_cast<float4 *>(&staged[e * {{ c_pitch }}u + (8u * i + g) * {{ c_col }}u + 8u * j + 2u * t]) =
                make_float4(d[i][j][0], {{ "-" if conj_b }}d[i][j][2], d[i][j][1], {{ "-" if conj_b }}d[i][j][3]);
    __syncthreads();
    // {{ group }} lanes a row's {{ group }} bins (one 32-byte sector), then the rows, then the columns
#pragma unroll 4
    for (unsigned u = tid; u < {{ group * bm * bn }}u; u += {{ threads }}u) {
        const unsigned bin = u % {{ group }}u, row = u / {{ group }}u % {{ bm }}u, col = u / {{ group * bm }}u;
        if (entry0 + bin < {{ batch }}u && m0 + row < {{ m }}u && n0 + col < {{ n }}u) {
            const float2 sum = staged[bin * {{ c_pitch }}u + col * {{ c_col }}u + row];
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
