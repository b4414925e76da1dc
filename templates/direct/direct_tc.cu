{#- direct's implicit GEMM on the tensor cores: out[rows][cols] = A[rows][red] * B[red][cols], A
    {{ in0 }} at each row's pixel and tap (gathered, or read from a patch of its lines in shared
    memory), B the weights as stored, the products by mma.sync m16n8k8 in 3xTF32.
    generator/direct/direct_tc.c chooses the tiles and works out every constant; this template only
    lays them out. -#}
{%- include "common.cuh" -%}
{%- include "direct/direct_tc_shared.cuh" -%}
{{ file_header(header) }}

{{ copy_async(4, true) }}
{%- if b_lines %}

{{ copy_async(16, true) }}
{%- endif %}

{{ tf32_lo_function() }}

{{ mma3_tf32_function() }}

// Where the GEMM's element (r, col) lands: {{ out }}[n][col][pixel] for row r = (n, pixel).
__device__ __forceinline__ unsigned long long out_index(unsigned r, unsigned col)
{
{{- decompose(out_digits, "    ") }}
    return ((unsigned long long)n * {{ cols }}u + col) * {{ row_pixels }}u + pix;
}
{%- if patch %}
{{- patch_functions() }}
{%- endif %}

{%- if b_lines %}

// B's chunk where w is 16-byte aligned: each column's line of w, its {{ chunk_red }} floats of the chunk's channels'
// taps lying together in w[k][c][tap], by 16-byte copies: thread tid takes piece q = tid % {{ line_pieces }} of column
// tid / {{ line_pieces }} and of every {{ line_cols }}th column on ({{ line_cols }} columns a pass, {{ line_passes }} passes; {{ threads - line_cols * line_pieces }} threads idle), so
// that a pass's copy is the first's plus a constant, where 4-byte copies took {{ b_channels * taps }}, each its own
// 32-byte sector. `dst`: this thread's first piece in the stage; `line`: its first column's line in w
// at the chunk's first channel; `q`: its piece; `valid`: the chunk's floats of a line (a piece past
// them is zeros, its source the line's start, inside w); `room`: the columns from its first to the
// end of the tile or the GEMM (pass j copies where j x {{ line_cols }} < room).
__device__ __forceinline__ void load_b_lines(float *dst, const float *line, unsigned q, unsigned valid, int room)
{
    const bool in = 4u * q < valid;
    const float *const src = line + (in ? 4u * q : 0u);
#pragma unroll
    for (int j = 0; j < {{ line_passes }}; ++j)
        if (j * {{ line_cols }} < room)
            copy16(dst + j * {{ line_cols * b_stride }}, src + (long long)j * {{ line_cols * b_col_stride }}, in);
}
{%- endif %}

{%- if patch %}
// One chunk's copies into a stage: A's patch (load_patch: `a` the stage's, `src`, `off`, `inside`,
// `a_left` its channels from the chunk's first on), and B's {{ b_channels }} channels x {{ taps }} taps of this
// thread's column (`b` its first place in the stage, `wsrc` its column's base at the chunk's first
// channel of its share, `b_ok` its column inside the GEMM, `b_left` the channels from its first on).
__device__ __forceinline__ void load_chunk(float *a, const float *src, const unsigned (&off)[{{ patch_places }}],
                                           unsigned inside, int a_left,
{%- else %}
// One chunk's copies into a stage: A's {{ a_channels }} channels x {{ taps }} taps of this thread's row
// (`a` its first place in the stage, `src` its row's base at the chunk's first channel of its
// share, `mask` its taps inside {{ in0 }}), and B's {{ b_channels }} channels x {{ taps }} taps of this thread's column
// (`b`, `wsrc` likewise; `b_ok` its column inside the GEMM). `left`: src channels from this
// thread's first on (a guard only where the chunks overrun them). Offsets in 64 bits: a chunk's
// channels may lie 2^31 floats apart in a large image.
__device__ __forceinline__ void load_chunk(float *a, const float *src, unsigned mask, int a_left,
{%- endif %}
                                           float *b, const float *wsrc, bool b_ok, int b_left{% if b_lines %},
                                           bool lines, float *line_dst, const float *line, unsigned line_q,
                                           unsigned valid, int line_room{% endif %}, unsigned tid)
{
{%- if patch %}
    load_patch(a, src, off, inside, a_left, tid);
{%- else %}
#pragma unroll
    for (int i = 0; i < {{ a_channels }}; ++i) {
{%- if channel_guard %}
        const bool here = i < a_left;
{%- else %}
        const bool here = true;
{%- endif %}
{%- for f in taps_list %}
        copy4(a + (i * {{ taps }} + {{ f.i }}) * {{ a_stride }}, src + (long long)i * {{ src_pixels }} + {{ f.flat }}, here && (mask >> {{ f.i }} & 1u));
{%- endfor %}
    }
{%- endif %}
{%- if b_lines %}
    if (lines) {
        load_b_lines(line_dst, line, line_q, valid, line_room);
    } else {
{%- else %}
    {
{%- endif %}
#pragma unroll
        for (int i = 0; i < {{ b_channels }}; ++i) {
{%- if channel_guard %}
            const bool here = b_ok && i * {{ b_parts }} < b_left;
{%- else %}
            const bool here = b_ok;
{%- endif %}
#pragma unroll
            for (int f = 0; f < {{ taps }}; ++f)
                copy4(b + i * {{ b_parts * taps }} + f, wsrc + (long long)i * {{ b_parts * b_chan_stride }} + f, here);
        }
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

{#- load_chunk's arguments for load_b_lines: the chunk from channel c0 into stage st. -#}
{%- macro b_lines_args(c0, st) -%}
{%- if b_lines -%}
,
                       lines, line_at + {{ st }} * {{ stage_floats }}, line_w + {{ c0 }} * {{ taps }}u, line_q,
                       {{ "min(" ~ src_c ~ "u - " ~ c0 ~ ", " ~ cc ~ "u) * " ~ taps ~ "u" if channel_guard else chunk_red ~ "u" }}, line_room
{%- endif -%}
{%- endmacro %}

{#- load_chunk's arguments for A: the chunk from channel c0 into stage st (an expression of the
    stage's offset, or "" for the first). -#}
{%- macro a_args(c0, st) -%}
{%- if patch -%}
stages{{ " + " ~ st ~ " * " ~ stage_floats if st }}, {{ in0 }} + (a_base{{ " + (long long)" ~ c0 ~ " * " ~ src_pixels if c0 }}), off, inside,
               {{ src_c }} - (int){{ c0 if c0 else "0" }}
{%- else -%}
a_at{{ " + " ~ st ~ " * " ~ stage_floats if st }}, {{ in0 }} + (a_base{{ " + (long long)" ~ c0 ~ " * " ~ src_pixels if c0 }}), mask,
               {{ src_c }} - (int)({{ c0 ~ " + " if c0 }}a_part * {{ a_channels }})
{%- endif -%}
{%- endmacro %}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ {{ in0 }}, const float *__restrict__ {{ in1 }},
    float *__restrict__ {{ out }}, float *__restrict__ workspace{{ bias_param(epi) }})
{
{%- if patch %}
    // 2 stages, each A [{{ cc }} channels][{{ patch_floats }}: the patch's lines] then B [{{ bn }} columns][{{ b_stride }}: {{ chunk_red }} (channel, tap)]
{%- else %}
    // 2 stages, each A [{{ chunk_red }} (channel, tap)][{{ a_stride }}: {{ bm }} rows] then B [{{ bn }} columns][{{ b_stride }}: {{ chunk_red }} (channel, tap)]
{%- endif %}
    extern __shared__ float4 shared4[];
    float *const stages = (float *)shared4;
    const unsigned tid = threadIdx.x;
    const unsigned row0 = blockIdx.x * {{ bm }}u, col0 = blockIdx.y * {{ bn }}u;

{%- if patch %}
{{- patch_setup() }}
{%- else %}
    // A's loads: this thread's row of the tile and its share of each chunk's channels.
    const unsigned a_row = tid & {{ bm - 1 }}u, a_part = tid >> {{ bm_log2 }};
    const unsigned row = row0 + a_row;
{{- decompose(row_digits, "    ") }}
{%- for d in dims %}
    const int pos{{ d.i }} = (int)({{ times("q" ~ d.i, d.step) }}){{ " - " ~ d.origin if d.origin > 0 }}{{ " + " ~ (0 - d.origin) if d.origin < 0 }};
{%- endfor %}
    // The taps of this row inside {{ in0 }} (none past the GEMM's rows).
    unsigned mask = 0u;
    if (row < {{ rows }}u) {
{%- for f in taps_list %}
        mask |= ({% for e in f.dims %}(unsigned)(pos{{ e.i }} + {{ e.off }}) < {{ e.size }}u{{ " && " if not loop.last }}{% endfor %}) ? {{ f.bit }}u : 0u;
{%- endfor %}
    }
    const long long a_base = ((long long)n * {{ src_c }} + a_part * {{ a_channels }}) * {{ src_pixels }}{% for d in dims %} + (long long)pos{{ d.i }}{{ " * " ~ d.src_stride if d.src_stride != 1 }}{% endfor %};
    float *const a_at = stages + a_part * {{ a_channels * taps * a_stride }} + a_row;
{%- endif %}

    // B's loads: this thread's column and its share of each chunk's channels, every {{ b_parts }}th.
    const unsigned b_col = tid / {{ b_parts }}u, b_part = tid % {{ b_parts }}u;
    const bool b_ok = col0 + b_col < {{ cols }}u;
    const unsigned long long b_base = (unsigned long long)(b_ok ? col0 + b_col : 0u) * {{ b_col_stride }}u + b_part * {{ b_chan_stride }}u;
    float *const b_at = stages + {{ a_floats }} + b_col * {{ b_stride }} + b_part * {{ taps }};
{%- if b_lines %}
    // Or, where w is 16-byte aligned, B by each column's line (load_b_lines): this thread's piece
    // line_q of column line_col of the tile and of every {{ line_cols }}th on, its first piece in stage 0
    // and its first column's line in w (the tile's first column's, where that lies past the GEMM or
    // the thread is idle), and how many of its columns lie inside the tile and the GEMM (none where it
    // is idle).
    const bool lines = (reinterpret_cast<size_t>({{ in1 }}) & 15u) == 0u;
    const unsigned line_col = tid / {{ line_pieces }}u, line_q = tid - line_col * {{ line_pieces }}u;
    const int line_room = line_col < {{ line_cols }}u ? (int)min({{ cols }}u - col0, {{ bn }}u) - (int)line_col : 0;
    float *const line_at = stages + {{ a_floats }} + line_col * {{ b_stride }} + 4u * line_q;
    const float *const line_w = {{ in1 }} + (unsigned long long)(line_room > 0 ? col0 + line_col : col0) * {{ b_col_stride }}u;
{%- endif %}

    // The mma's view: warp (wm, wn) of {{ warps_m }} x {{ threads // 32 // warps_m }} owns rows wm * {{ wm }} .. and columns wn * {{ wn }} ..; lane 4 g + t.
    const unsigned lane = tid & 31u, warp = tid >> 5, g = lane >> 2, t = lane & 3u;
    const unsigned wm = warp % {{ warps_m }}u, wn = warp / {{ warps_m }}u;
{%- if patch %}
    // The rows the lane reads of A, g and g + 8 of each 16: their places in the patch (0 past the GEMM's rows).
    unsigned a_place[{{ m_frags }}][2];
#pragma unroll
    for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
        for (int v = 0; v < 2; ++v) {
            const unsigned r = row0 + wm * {{ wm }}u + i * 16 + v * 8 + g;
            unsigned col;
            const unsigned line = line_of(r, col);
            a_place[i][v] = r < {{ rows }}u ? (line - first_line) * {{ line_len }}u + col : 0u;
        }
{%- endif %}
    float acc[{{ m_frags }}][{{ n_frags }}][4];
#pragma unroll
    for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
        for (int j = 0; j < {{ n_frags }}; ++j)
            acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.0f;

    load_chunk({{ a_args("", "") }},
               b_at, {{ in1 }} + b_base, b_ok, {{ src_c }} - (int)b_part{{ b_lines_args("0u", "0u") }}, tid);
    for (unsigned chunk = 0; chunk < {{ chunks }}u; ++chunk) {
        // The next chunk's copies into the other stage, then this one's awaited.
        if (chunk + 1u < {{ chunks }}u) {
            const unsigned next = (chunk + 1u) & 1u, c0 = (chunk + 1u) * {{ cc }}u;
            load_chunk({{ a_args("c0", "next") }},
                       b_at + next * {{ stage_floats }}, {{ in1 }} + (b_base + (unsigned long long)c0 * {{ b_chan_stride }}u), b_ok,
                       {{ src_c }} - (int)(c0 + b_part){{ b_lines_args("c0", "next") }}, tid);
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads();
        // The chunk's sums start from zero and join acc by an fp32 add: the tensor cores truncate as
        // they accumulate, which over a sum of thousands drifted past 1e-5 (c 129, 5 x 5 taps: 2.3e-5).
        float part[{{ m_frags }}][{{ n_frags }}][4];
#pragma unroll
        for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
            for (int j = 0; j < {{ n_frags }}; ++j)
                part[i][j][0] = part[i][j][1] = part[i][j][2] = part[i][j][3] = 0.0f;
{%- if patch %}
        // The chunk's sum tap-major: K step ks is tap f of channels 8 cq .. 8 cq + 7, lane t's channel
        // 8 cq + t (and + 4), at its row's place in the patch plus the tap's offset; B's in w's order.
        // Each row's first float as a pointer, so that a tap's and channel's offset is a constant
        // of the load (an index sum scaled after the add took two instructions a load and a
        // register a row and tap: S16's 248 registers).
        const float *const as = stages + (chunk & 1u) * {{ stage_floats }} + t * {{ patch_floats }};
        const float *a_row[{{ m_frags }}][2];
#pragma unroll
        for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
            for (int v = 0; v < 2; ++v)
                a_row[i][v] = as + a_place[i][v];
        const float *const bs = stages + (chunk & 1u) * {{ stage_floats }} + {{ a_floats }} + (wn * {{ wn }}u + g) * {{ b_stride }} + t * {{ taps }};
{%- else %}
        const float *const as = stages + (chunk & 1u) * {{ stage_floats }} + t * {{ a_stride }} + wm * {{ wm }}u + g;
        const float *const bs = stages + (chunk & 1u) * {{ stage_floats }} + {{ a_floats }} + (wn * {{ wn }}u + g) * {{ b_stride }} + t;
{%- endif %}
#pragma unroll
        for (int ks = 0; ks < {{ ksteps }}; ++ks) {
{%- if patch %}
            const int f = ks / {{ kq }}, cq = ks % {{ kq }}, fy = f / {{ kw }}, fx = f % {{ kw }};
            const int tap = {% if flip_a %}({{ kh - 1 }} - fy){% else %}fy{% endif %} * {{ tap_line }} + {% if flip_a %}({{ kw - 1 }} - fx){% else %}fx{% endif %} * {{ tap_col }};
{%- endif %}
            unsigned a_hi[{{ m_frags }}][4], a_lo[{{ m_frags }}][4], b_hi[{{ n_frags }}][2], b_lo[{{ n_frags }}][2];
#pragma unroll
            for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
                for (int h = 0; h < 4; ++h) {
                    // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
{%- if patch %}
                    const float v = a_row[i][h & 1][(cq * 8 + (h >> 1) * 4) * {{ patch_floats }} + tap];
{%- else %}
                    const float v = as[(ks * 8 + (h >> 1) * 4) * {{ a_stride }} + i * 16 + (h & 1) * 8];
{%- endif %}
                    a_hi[i][h] = __float_as_uint(v);
                    a_lo[i][h] = tf32_lo(v);
                }
#pragma unroll
            for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    // b0 (t, g), b1 (t + 4, g)
{%- if patch %}
                    const float v = bs[j * 8 * {{ b_stride }} + (cq * 8 + h * 4) * {{ taps }} + f];
{%- else %}
                    const float v = bs[j * 8 * {{ b_stride }} + ks * 8 + h * 4];
{%- endif %}
                    b_hi[j][h] = __float_as_uint(v);
                    b_lo[j][h] = tf32_lo(v);
                }
            mma3_tf32(part, a_hi, a_lo, b_hi, b_lo);
        }
#pragma unroll
        for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
            for (int j = 0; j < {{ n_frags }}; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e)
                    acc[i][j][e] += part[i][j][e];
        // Every warp is done with this stage before the next chunk's copies refill it.
        __syncthreads();
    }

    // d0 (g, 2 t), d1 (g, 2 t + 1), d2 (g + 8, 2 t), d3 (g + 8, 2 t + 1) of each 16 x 8.
#pragma unroll
    for (int j = 0; j < {{ n_frags }}; ++j) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
{{- store_column("col0 + wn * " ~ wn ~ "u + j * 8 + 2 * t + h") }}
#pragma unroll
            for (int i = 0; i < {{ m_frags }}; ++i)
#pragma unroll
                for (int v = 0; v < 2; ++v) {
                    const unsigned r = row0 + wm * {{ wm }}u + i * 16 + v * 8 + g;
                    if (r < {{ rows }}u)
                        {{ out }}[out_index(r, col)] = {{ epilogue_loaded(epi, "acc[i][j][2 * v + h]", "b") }};
                }
        }
    }
}
