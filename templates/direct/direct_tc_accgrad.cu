{#- direct's accgrad on the tensor cores: dw[k][(c, tap)] = sum over (n, pixel) of dy[n][k][pixel] x
    at the pixel's tap, the products by mma.sync m16n8k8 in 3xTF32. generator/direct/direct_tc.c
    chooses the tiles and the splits and works out every constant; this template only lays them out. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

{{ copy_async(4, true) }}

{{ tf32_lo_function() }}

{{ mma3_tf32_function() }}

// One chunk's copies into a stage: this thread's pixel of the sum (lane r of the chunk's {{ chunk }}),
// dy at it for the block's outputs part, part + 4, .. (A: `a` its place for output `part`), and x
// at each tap of it for the block's channels part, part + 4, .. (B: `b` likewise); zeros past the
// sum, the outputs, the channels and x's edges. Offsets in 64 bits: planes of a large image lie
// 2^31 floats apart within a block's channels.
__device__ __forceinline__ void load_chunk(float *a, float *b, const float *__restrict__ x, const float *__restrict__ dy,
                                           unsigned chunk, unsigned r, unsigned part, unsigned c0, unsigned k0)
{
    const unsigned red = chunk * {{ chunk }}u + r;
{{- decompose(red_digits, "    ") }}
{{- decompose(o_digits, "    ") }}
{%- for d in dims %}
    const int pos{{ d.i }} = (int)({{ times("q" ~ d.i, d.step) }}){{ " - " ~ d.origin if d.origin > 0 }};
{%- endfor %}
    const bool here = red < {{ red }}u;
    unsigned mask = 0u;
    if (here) {
{%- for f in taps_list %}
        mask |= ({% for e in f.dims %}(unsigned)(pos{{ e.i }} + {{ e.off }}) < {{ e.size }}u{{ " && " if not loop.last }}{% endfor %}) ? {{ f.bit }}u : 0u;
{%- endfor %}
    }
    const float *const a_src = dy + ((unsigned long long)n * {{ k }}u + k0 + part) * {{ out_pixels }}u + o;
#pragma unroll
    for (int i = 0; i < {{ bm // 4 }}; ++i)
        copy4(a + 4 * i * {{ stride }}, a_src + 4ll * i * {{ out_pixels }}, here && k0 + part + 4 * i < {{ k }}u);
    const float *const x_src = x + ((long long)n * {{ c }} + c0 + part) * {{ in_pixels }}{% for d in dims %} + (long long)pos{{ d.i }}{{ " * " ~ d.src_stride if d.src_stride != 1 }}{% endfor %};
#pragma unroll
    for (int i = 0; i < {{ cb // 4 }}; ++i) {
        const bool channel = c0 + part + 4 * i < {{ c }}u;
{%- for f in taps_list %}
        copy4(b + (4 * i * {{ taps }} + {{ f.i }}) * {{ stride }}, x_src + 4ll * i * {{ in_pixels }} + {{ f.flat }}, channel && (mask >> {{ f.i }} & 1u));
{%- endfor %}
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ x, const float *__restrict__ dy, float *__restrict__ dw,
    float *__restrict__ workspace)
{
    // 2 stages, each A [{{ bm }} outputs][{{ stride }}: {{ chunk }} pixels] then B [{{ bn }} (channel, tap)][{{ stride }}];
    // after the sum, the warps' partial tiles [{{ warps_k }}][{{ bm }}][{{ bn }}] in the same memory.
{{- dependent_start(dependent) }}
    extern __shared__ float4 shared4[];
    float *const smem = (float *)shared4;
    const unsigned tid = threadIdx.x, r = tid & 31u, part = tid >> 5;
    const unsigned c0 = blockIdx.x * {{ cb }}u, k0 = blockIdx.y * {{ bm }}u;
    const unsigned chunk_begin = blockIdx.z * {{ chunks_per_split }}u;
    const unsigned chunk_end = min(chunk_begin + {{ chunks_per_split }}u, {{ chunks }}u);
    float *const a_at = smem + part * {{ stride }} + r;
    float *const b_at = smem + {{ bm * stride }} + part * {{ taps * stride }} + r;

    // The mma's view: warp (wm, wk) owns outputs wm * 32 .. and K steps wk, wk + {{ warps_k }}, .. of each chunk.
    const unsigned lane = tid & 31u, warp = tid >> 5, g = lane >> 2, t = lane & 3u;
    const unsigned wm = warp / {{ warps_k }}u, wk = warp % {{ warps_k }}u;
    float acc[2][{{ n_frags }}][4];
{%- if flush %}
    // recent: the sums of the last few chunks, which join acc by an fp32 add every {{ flush }} chunks: the
    // tensor cores truncate as they accumulate, which over a long sum drifts.
    float recent[2][{{ n_frags }}][4];
{%- else %}
    // A split of {{ chunks_per_split }} chunks or fewer: short enough a sum for the tensor cores' accumulation.
{%- endif %}
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                acc[i][j][e] = {{ "recent[i][j][e] = " if flush }}0.0f;

    load_chunk(a_at, b_at, x, dy, chunk_begin, r, part, c0, k0);
    for (unsigned chunk = chunk_begin; chunk < chunk_end; ++chunk) {
        const unsigned stage = (chunk - chunk_begin) & 1u;
        // The next chunk's copies into the other stage, then this one's awaited.
        if (chunk + 1u < chunk_end) {
            load_chunk(a_at + (stage ^ 1u) * {{ stage_floats }}, b_at + (stage ^ 1u) * {{ stage_floats }}, x, dy, chunk + 1u, r,
                       part, c0, k0);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads();
        const float *const as = smem + stage * {{ stage_floats }} + (wm * 32u + g) * {{ stride }} + wk * 8u + t;
        const float *const bs = smem + stage * {{ stage_floats }} + {{ bm * stride }} + g * {{ stride }} + wk * 8u + t;
#pragma unroll
        for (int kk = 0; kk < {{ ksteps_per_warp }}; ++kk) {
            unsigned a_hi[2][4], a_lo[2][4], b_hi[{{ n_frags }}][2], b_lo[{{ n_frags }}][2];
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
                    const float v = as[(i * 16 + (h & 1) * 8) * {{ stride }} + kk * {{ 8 * warps_k }} + (h >> 1) * 4];
                    a_hi[i][h] = __float_as_uint(v);
                    a_lo[i][h] = tf32_lo(v);
                }
#pragma unroll
            for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // b0 (t, g), b1 (t + 4, g)
                    const float v = bs[j * 8 * {{ stride }} + kk * {{ 8 * warps_k }} + h * 4];
                    b_hi[j][h] = __float_as_uint(v);
                    b_lo[j][h] = tf32_lo(v);
                }
            mma3_tf32({{ "recent" if flush else "acc" }}, a_hi, a_lo, b_hi, b_lo);
        }
{%- if flush %}
        if ((chunk - chunk_begin) % {{ flush }}u == {{ flush - 1 }}u || chunk + 1u == chunk_end) {
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        acc[i][j][e] += recent[i][j][e];
                        recent[i][j][e] = 0.0f;
                    }
        }
{%- endif %}
        // Every warp is done with this stage before the next chunk's copies refill it.
        __syncthreads();
    }

    // The warps' partial tiles, d0 (g, 2 t), d1 (g, 2 t + 1), d2 (g + 8, 2 t), d3 (g + 8, 2 t + 1) of
    // each 16 x 8, then their sum by every thread.
    float *const sums = smem + wk * {{ bm * bn }};
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e)
                sums[(wm * 32u + i * 16 + (e >> 1) * 8 + g) * {{ bn }} + j * 8 + 2 * t + (e & 1)] = acc[i][j][e];
    __syncthreads();
{%- if splits > 1 %}
    // One of {{ splits }} splits: a slice of the workspace, which the next kernel adds into dw.
    float *const dst = workspace + (size_t)blockIdx.z * {{ out_elems }}u;
{%- else %}
    float *const dst = dw;
{%- endif %}
#pragma unroll
    for (int i = 0; i < {{ (bm * bn + threads - 1) // threads }}; ++i) {
        const unsigned e = tid + i * {{ threads }}u, row = {{ udiv("e", col_div) }}, col = e - row * {{ bn }}u;
        if (e < {{ bm * bn }}u && k0 + row < {{ k }}u && c0 * {{ taps }}u + col < {{ c * taps }}u) {
            float sum = 0.0f;
#pragma unroll
            for (int w = 0; w < {{ warps_k }}; ++w)
                sum += smem[w * {{ bm * bn }} + e];
            dst[(k0 + row) * {{ c * taps }}u + c0 * {{ taps }}u + col] = sum;
        }
    }
}
