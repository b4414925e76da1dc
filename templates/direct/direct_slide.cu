{#- direct-window's fprop: each thread's block of outputs summed over the taps from a window of
    x in shared memory. generator/direct/direct_slide.c says why and chooses every constant;
    this template lays them out. -#}
{%- include "common.cuh" -%}
{#- The call of finish() where the layer has an epilogue. -#}
{%- macro finish_acc(indent) -%}
{%- if epi.bias or epi.relu %}
{{ indent }}finish(acc, k{{ ", bias" if epi.bias }});
{%- endif %}
{%- endmacro -%}
{{ file_header(header) }}

{{ copy_async(4) }}

{% if streams %}// One output: y is larger than L2, so it streams past it (evict first).
__device__ __forceinline__ void put(float *p, float v) { __stcs(p, v); }
{% else %}// One output.
__device__ __forceinline__ void put(float *p, float v) { *p = v; }
{% endif %}
// The thread's {{ yt }} x {{ p }} outputs of its channel i, value(yt, pp), where they lie in y; `out` is its first.
template <typename Value>
__device__ __forceinline__ void store_channel(float *__restrict__ out, int i, unsigned row, unsigned z, Value value)
{
#pragma unroll
    for (int yt = 0; yt < {{ yt }}; ++yt)
#pragma unroll
        for (int pp = 0; pp < {{ p }}; ++pp)
            if (row + yt < {{ y.dst }}u && z + pp < {{ z.dst }}u)
                put(out + i * {{ y_volume }}u + pp * {{ y_plane }}u + yt * {{ x.dst }}u, value(yt, pp));
}

// One stage into `buf`: the windows of {{ ci }} input channel(s), [channel][depth {{ ze }}][row {{ ye }}][column {{ xe }}],
// then their weights [channel][tap][{{ cbp }} output channels]. The thread copies rows warp + {{ warps }} * i
// of every channel and depth; x_rows and buf_rows are its first row's column, and the masks' bits
// say which copies exist (rows, cols) and which read inside x (depths, in_rows, in_cols).
__device__ __forceinline__ void stage(float *__restrict__ buf, const float *__restrict__ x_rows, float *buf_rows,
                                      unsigned depths, unsigned rows, unsigned in_rows, unsigned cols, unsigned in_cols,
                                      const float *__restrict__ w_stage, unsigned k0, unsigned tid)
{
#pragma unroll
    for (int c = 0; c < {{ ci }}; ++c)
#pragma unroll
        for (int z = 0; z < {{ ze }}; ++z)
#pragma unroll
            for (int i = 0; i < {{ y_copies }}; ++i)
#pragma unroll
                for (int j = 0; j < {{ x_copies }}; ++j)
                    if ((rows >> i) & (cols >> j) & 1u)
                        copy4(buf_rows + ((c * {{ ze }} + z) * {{ ye }} + {{ warps }} * i) * {{ xe }} + 32 * j,
                              x_rows + (c * {{ x_volume }} + z * {{ x_plane }} + {{ warps }} * i * {{ x.src }} + 32 * j),
                              (depths >> z) & (in_rows >> i) & (in_cols >> j) & 1u);
    float *const wbuf = buf + {{ window_floats }};
    // Four copies an iteration: unrolled whole, L1's 91 a thread kept their addresses live and spilled.
#pragma unroll 4
    for (int i = 0; i < {{ weight_copies }}; ++i) {
        const unsigned e = tid + {{ threads }}u * i;
{{- decompose(weight_digits, "        ") }}
        // w[k][c][t{{ " reversed: a convolution" if reverse }}], zeros past the last output channel
        const bool in = kl < {{ kb }}u && k0 + kl < {{ k_size }}u;
        if (e < {{ weight_floats }}u)
            copy4(wbuf + e, w_stage + (in ? (k0 + kl) * {{ c_size * taps }}u + c * {{ taps }}u + {{ (taps - 1) ~ "u - t" if reverse else "t" }} : 0u), in);
    }
}
{% if trickle %}
// A few channels of the previous row group's outputs, waiting in `stash` ([value][thread], this
// thread's column), go to y during each iteration `it` of the products: {{ drain_channels }} channel(s) of {{ yt }} x {{ p }}.
__device__ __forceinline__ void drain(const float *__restrict__ stash, float *__restrict__ out, unsigned k, unsigned row,
                                      unsigned z, int it)
{
#pragma unroll
    for (int j = 0; j < {{ drain_channels }}; ++j) {
        const int i = it * {{ drain_channels }} + j;
        if (i >= {{ g }} || k + i >= {{ k_size }}u)
            break;
        store_channel(out, i, row, z, [&](int yt, int pp) { return stash[((i * {{ yt }} + yt) * {{ p }} + pp) * {{ threads }}]; });
    }
}

// Sets a row group's outputs aside for drain().
__device__ __forceinline__ void set_aside(const float (&acc)[{{ g }}][{{ yt }}][{{ p }}], float *__restrict__ stash)
{
#pragma unroll
    for (int i = 0; i < {{ g }}; ++i)
#pragma unroll
        for (int yt = 0; yt < {{ yt }}; ++yt)
#pragma unroll
            for (int pp = 0; pp < {{ p }}; ++pp)
                stash[((i * {{ yt }} + yt) * {{ p }} + pp) * {{ threads }}] = acc[i][yt][pp];
}
{% endif %}
// One stage's products: per input channel, tap row r of the thread's rows and tap column tx, the
// {{ ze }} values of the window its {{ p }} depth positions read; then, for each of its rows yt that row
// r feeds (r = yt * {{ y.step }} + ty * {{ y.dil }}) and each depth tap, {{ g }} weights and {{ g }} x {{ p }} FMAs.
__device__ __forceinline__ void products(float (&acc)[{{ g }}][{{ yt }}][{{ p }}], const float *__restrict__ win,
                                         const float *__restrict__ wts
{%- if trickle %}, const float *__restrict__ stash, float *__restrict__ out,
                                         unsigned k, unsigned row, unsigned z, bool drains{% endif %})
{
    // Channels and tap rows stay loops{{ ", and so do tap columns" if not unroll_columns }}: unrolled, ptxas hoists their
    // loads and spills (a 2-D stem's 64 accumulators took 7 KiB of local memory{{ "; L1's 11 columns of 14 values, 8 bytes" if not unroll_columns }}).
#pragma unroll 1
    for (int c = 0; c < {{ ci }}; ++c)
#pragma unroll 1
        for (int r = 0; r < {{ rows }}; ++r) {
{%- if trickle %}
            if (drains)
                drain(stash, out, k, row, z, c * {{ rows }} + r);
{%- endif %}
#pragma unroll{{ " 1" if not unroll_columns }}
            for (int tx = 0; tx < {{ x.taps }}; ++tx) {
                const float *col = win + (c * {{ ze }} * {{ ye }} + r) * {{ xe }} + tx * {{ x.dil }};
                float v[{{ ze }}];
#pragma unroll
                for (int j = 0; j < {{ ze }}; ++j)
                    v[j] = col[j * {{ ye * xe }}];
#pragma unroll
                for (int yt = 0; yt < {{ yt }}; ++yt) {
                    const int q = r - yt * {{ y.step }}; // = ty * {{ y.dil }} for the tap row ty, if any
                    if (q < 0 || q % {{ y.dil }} != 0 || q / {{ y.dil }} >= {{ y.taps }})
                        continue;
                    const int ty = q / {{ y.dil }};
#pragma unroll
                    for (int tz = 0; tz < {{ z.taps }}; ++tz) {
                        const float *w = wts + (c * {{ taps }} + (tz * {{ y.taps }} + ty) * {{ x.taps }} + tx) * {{ cbp }};
                        float wv[{{ g }}];
{%- if g4 %}
#pragma unroll
                        for (int i = 0; i < {{ g // 4 }}; ++i) {
                            const float4 f = reinterpret_cast<const float4 *>(w)[i];
                            wv[4 * i] = f.x, wv[4 * i + 1] = f.y, wv[4 * i + 2] = f.z, wv[4 * i + 3] = f.w;
                        }
{%- else %}
#pragma unroll
                        for (int i = 0; i < {{ g }}; ++i)
                            wv[i] = w[i];
{%- endif %}
#pragma unroll
                        for (int pp = 0; pp < {{ p }}; ++pp)
#pragma unroll
                            for (int i = 0; i < {{ g }}; ++i)
                                acc[i][yt][pp] = fmaf(v[pp * {{ z.step }} + tz * {{ z.dil }}], wv[i], acc[i][yt][pp]);
                    }
                }
            }
        }
}

__device__ __forceinline__ void zero(float (&acc)[{{ g }}][{{ yt }}][{{ p }}])
{
#pragma unroll
    for (int i = 0; i < {{ g }}; ++i)
#pragma unroll
        for (int yt = 0; yt < {{ yt }}; ++yt)
#pragma unroll
            for (int pp = 0; pp < {{ p }}; ++pp)
                acc[i][yt][pp] = 0.0f;
}
{%- if epi.bias or epi.relu %}

// The layer's epilogue on the thread's outputs, channel k + i's{{ " bias, then ReLU" if epi.bias and epi.relu else (" bias" if epi.bias else ": ReLU") }}
{%- if epi.bias %}
// (channels past k's end, never stored, read the last one's bias)
{%- endif %}.
__device__ __forceinline__ void finish(float (&acc)[{{ g }}][{{ yt }}][{{ p }}], unsigned k{{ ", const float *__restrict__ bias" if epi.bias }})
{
#pragma unroll
    for (int i = 0; i < {{ g }}; ++i)
#pragma unroll
        for (int yt = 0; yt < {{ yt }}; ++yt)
#pragma unroll
            for (int pp = 0; pp < {{ p }}; ++pp)
                acc[i][yt][pp] = {{ epilogue(epi, "acc[i][yt][pp]", "min(k + i, " ~ (k_size - 1) ~ "u)") }};
}
{%- endif %}

// y[n][k][z][row][col] of the thread's block where it lies in the tensor; `out` is its first.
__device__ __forceinline__ void store(const float (&acc)[{{ g }}][{{ yt }}][{{ p }}], float *__restrict__ out, unsigned k,
                                      unsigned row, unsigned z)
{
#pragma unroll
    for (int i = 0; i < {{ g }}; ++i) {
        if (k + i >= {{ k_size }}u)
            break;
        store_channel(out, i, row, z, [&](int yt, int pp) { return acc[i][yt][pp]; });
    }
}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ x, const float *__restrict__ w, float *__restrict__ y,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    (void)workspace;
    extern __shared__ __align__(16) float smem[];
    const unsigned tid = threadIdx.x, lane = tid & 31u, warp = tid >> 5;
    const unsigned wk = warp % {{ wk }}u, wy = warp / {{ wk }}u; // its channel group and rows
    // This block: image n, output channel chunk kc, depth tile zt; rows and columns from y and x.
    const unsigned bz = blockIdx.z;
{{- decompose(block_digits, "    ") }}
    const unsigned k0 = kc * {{ kb }}u, zo0 = zt * {{ p }}u, yo0 = blockIdx.y * {{ yl * wy * yt }}u, xo0 = blockIdx.x * 32u;

    // The window's origin in x: o * stride - pad at the block's first output, per dimension.
    const int zs0 = (int)(zo0 * {{ z.step }}u) + ({{ z.off }}), ys0 = (int)(yo0 * {{ y.step }}u) + ({{ y.off }}),
              xs0 = (int)(xo0 * {{ x.step }}u) + ({{ x.off }});
    unsigned depths = 0u, rows = 0u, in_rows = 0u, cols = 0u, in_cols = 0u;
#pragma unroll
    for (int z = 0; z < {{ ze }}; ++z)
        depths |= (unsigned)(zs0 + z) < {{ z.src }}u ? 1u << z : 0u;
#pragma unroll
    for (int i = 0; i < {{ y_copies }}; ++i) {
        const unsigned row = warp + {{ warps }}u * i;
        rows |= row < {{ ye }}u ? 1u << i : 0u;
        in_rows |= (unsigned)(ys0 + (int)row) < {{ y.src }}u ? 1u << i : 0u;
    }
#pragma unroll
    for (int j = 0; j < {{ x_copies }}; ++j) {
        const unsigned col = lane + 32u * j;
        cols |= col < {{ xe }}u ? 1u << j : 0u;
        in_cols |= (unsigned)(xs0 + (int)col) < {{ x.src }}u ? 1u << j : 0u;
    }
    const float *const x_rows = x + (long long)n * {{ c_size * x_volume }}ll
        + ((long long)zs0 * {{ x_plane }} + (long long)(ys0 + (int)warp) * {{ x.src }} + xs0 + (int)lane);
    float *const buf_rows = smem + warp * {{ xe }}u + lane;
    const unsigned xo = xo0 + lane, k = k0 + wk * {{ g }}u;
    float *const out = y + (size_t)n * {{ k_size * y_volume }}ull + (size_t)k * {{ y_volume }}u + zo0 * {{ y_plane }}u + xo;
    float acc[{{ g }}][{{ yt }}][{{ p }}];
{%- if stages == 1 %}

    // The whole reduction is one stage: the window and weights once, then {{ yl }} group(s) of rows.
    stage(smem, x_rows, buf_rows, depths, rows, in_rows, cols, in_cols, w, k0, tid);
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncthreads();
{%- if trickle %}
    float *const stash = smem + {{ stage_floats }}u + tid; // the previous group's outputs, [value][thread]
{%- endif %}
    // The warp's groups with rows in y (the last row tile's may have fewer): none of its FMAs is
    // spent on rows past y's edge.
    const unsigned rows_left = {{ y.dst }}u - min(yo0 + wy * {{ yt }}u, {{ y.dst }}u);
    const unsigned groups = min((rows_left + {{ wy * yt - 1 }}u) / {{ wy * yt }}u, {{ yl }}u);
#pragma unroll 1
    for (unsigned yl = 0; yl < groups; ++yl) {
        const unsigned row = (yl * {{ wy }}u + wy) * {{ yt }}u; // the thread's first, in the block
        zero(acc);
{%- if trickle %}
        const unsigned before = yl > 0u ? row - {{ wy * yt }}u : row; // the previous group's first row
        products(acc, smem + row * {{ y.step }}u * {{ xe }}u + lane * {{ x.step }}u, smem + {{ window_floats }}u + wk * {{ g }}u,
                 stash, out + (yo0 + before) * {{ x.dst }}u, k, yo0 + before, zo0, yl > 0u && xo < {{ x.dst }}u);
{{- finish_acc("        ") }}
        if (yl + 1u < groups)
            set_aside(acc, stash);
        else if (xo < {{ x.dst }}u)
            store(acc, out + (yo0 + row) * {{ x.dst }}u, k, yo0 + row, zo0);
{%- else %}
        products(acc, smem + row * {{ y.step }}u * {{ xe }}u + lane * {{ x.step }}u, smem + {{ window_floats }}u + wk * {{ g }}u);
{{- finish_acc("        ") }}
        if (xo < {{ x.dst }}u)
            store(acc, out + (yo0 + row) * {{ x.dst }}u, k, yo0 + row, zo0);
{%- endif %}
    }
{%- else %}
    zero(acc);

    // Stages of {{ ci }} input channel(s), the next one's copies in flight during this one's products.
    stage(smem, x_rows, buf_rows, depths, rows, in_rows, cols, in_cols, w, k0, tid);
    asm volatile("cp.async.commit_group;\n" ::);
    for (unsigned s = 0; s < {{ stages }}u; ++s) {
        if (s + 1u < {{ stages }}u) {
            const unsigned b = ((s + 1u) & 1u) * {{ stage_floats }}u;
            stage(smem + b, x_rows + (s + 1u) * {{ ci * x_volume }}u, buf_rows + b, depths, rows, in_rows, cols, in_cols,
                  w + (s + 1u) * {{ ci * taps }}u, k0, tid);
        }
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this stage's
        __syncthreads();
        const float *const buf = smem + (s & 1u) * {{ stage_floats }}u;
        products(acc, buf + wy * {{ yt * y.step }}u * {{ xe }}u + lane * {{ x.step }}u, buf + {{ window_floats }}u + wk * {{ g }}u);
        __syncthreads();
    }
    const unsigned row = wy * {{ yt }}u;
{{- finish_acc("    ") }}
    if (xo < {{ x.dst }}u)
        store(acc, out + (yo0 + row) * {{ x.dst }}u, k, yo0 + row, zo0);
{%- endif %}
}
