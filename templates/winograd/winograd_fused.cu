{#- The fused Winograd fprop and bprop (generator/winograd/winograd_fused.c): one block per {{ tile_block }} tiles of
    {{ data }} x {{ k_block }} output channels, nothing transformed ever written to global memory. Per chunk of
    {{ c_block }} of {{ data }}'s channels: the chunk's {{ tasks }} tiles and the weights' transforms U (made once by
    the weights' kernel; or, `inside`, the chunk's weights w as they are, transformed here (G) beside
    the tiles) arrive in shared memory by cp.async, into one of two buffers, loaded while the
    previous chunk's transforms and products run (one buffer of raw tiles and weights where two
    would not fit or would cost a block an SM: loaded while its products run, U still in two); the
    tiles are transformed (BT) beside them; and each
    thread multiplies for one transform element an 8 x 8 block of (output channel, tile). After the
    last chunk the products go through shared memory and AT into the output, fprop's y with the
    layer's epilogue (the bias of output channel kk, then ReLU) as it is stored.
    A 3-D layer's tiles are one slice deep, its {{ depth_taps }} depth taps summed as more chunks: chunk q
    is tap q / {{ slice_chunks }}'s channels, its tiles from the slice that tap reaches, its weights'
    transforms U's slice of that tap. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{{ file_header(header) }}

{#- The raw tiles of the chunk from channel `c0` (of depth tap `dz`, 3-D layers) into shared memory
    by cp.async, task p = tid + i {{ threads }} of the {{ tasks }} (channel p / {{ tile_block }}, tile p % {{ tile_block }}), point q of task
    p at raw[q {{ tasks }} + p] (zeros outside the plane or volume and past the channels). -#}
{%- macro fetch_tiles(c0, dz, raw, indent) -%}
{%- for r in range((tasks + threads - 1) // threads) %}
{{ indent }}{
{{ indent }}    const unsigned p = tid + {{ r * threads }}u, c = {{ c0 }} + p / {{ tile_block }}u;
{%- if (r + 1) * threads > tasks %}
{{ indent }}    if (p < {{ tasks }}u) {
{%- else %}
{{ indent }}    {
{%- endif %}
{{ indent }}        const tile_at mine = locate(tile0 + p % {{ tile_block }}u);
{%- if volume %}
{{ indent }}        const int z = (int)(mine.tz + {{ dz }}) - ({{ offset_z }}); // the slice the depth tap reads
{{ indent }}        const bool here = mine.valid && c < {{ channels }}u && (unsigned)z < {{ depth }}u;
{%- else %}
{{ indent }}        const bool here = mine.valid && c < {{ channels }}u;
{%- endif %}
{{ indent }}        const int y0 = (int)(mine.t0 * {{ step0 }}u) - ({{ offset0 }}), x0 = (int)(mine.t1 * {{ step1 }}u) - ({{ offset1 }});
{%- if volume %}
{{ indent }}        const float *__restrict__ src = in0 + (((size_t)mine.n * {{ channels }}u + (here ? c : 0u)) * {{ depth }}u + (here ? z : 0)) * {{ height * width }}u;
{%- else %}
{{ indent }}        const float *__restrict__ src = in0 + ((size_t)mine.n * {{ channels }}u + (here ? c : 0u)) * {{ height * width }}u;
{%- endif %}
{{ wino_fetch_tile("(" ~ raw ~ ") + p", tasks, "src", "y0", "x0", alpha0, alpha1, height, width, indent ~ "        ") }}
{{ indent }}    }
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- The weights' transforms of the chunk from channel `c0` (of depth tap `dz`, 3-D layers) into buffer
    `us`, {{ vec }} floats per cp.async (zero-filled past the channels and outputs), coalesced along the
    outputs; then the group's commit. -#}
{%- macro fetch_weights(c0, dz, us, indent) -%}
{{ indent }}#pragma unroll 1 // the copies are asynchronous: a loop issues them as fast, without the registers
{{ indent }}for (unsigned r = 0; r < {{ k_block * c_block // (per_element * vec) }}u; ++r) {
{{ indent }}    const unsigned i = tid + r * {{ threads }}u, kv = i % {{ k_block // vec }}u, ce = i / {{ k_block // vec }}u;
{{ indent }}    const unsigned cl = ce / {{ elements }}u, el = ce - cl * {{ elements }}u, c = {{ c0 }} + cl, k = k0 + kv * {{ vec }}u;
{{ indent }}    const bool inside = c < {{ channels }}u && k < {{ outputs }}u;
{%- if volume %}
{{ indent }}    copy{{ vec * 4 }}(({{ us }}) + i * {{ vec }}u, inside ? u + (((size_t){{ dz }} * {{ elements }}u + el) * {{ channels }}u + c) * {{ outputs }}u + k : u, inside);
{%- else %}
{{ indent }}    copy{{ vec * 4 }}(({{ us }}) + i * {{ vec }}u, inside ? u + ((size_t)el * {{ channels }}u + c) * {{ outputs }}u + k : u, inside);
{%- endif %}
{{ indent }}}
{{ indent }}asm volatile("cp.async.commit_group;\n" ::);
{%- endmacro -%}

{#- The chunk's weights as they are (`inside`), from channel `c0` (of depth tap `dz`, 3-D layers), into
    wraw[(channel, output) pair][tap] by cp.async, 4 bytes each (zero-filled past the channels and
    outputs); copy i's pair runs along w's planes, so that neighbouring threads read neighbouring
    floats: along the channels of w's [k][c] planes, or along the outputs where they are read as
    [c][k] (weights_transposed, bprop). There each data channel's line of k_block outputs' taps
    lies as it does in w, so a 2-D bprop copies it 16 bytes at a time where w is 16-byte aligned
    (w_vec 4); a 2-D fprop so copies each output's line of c_block channels' taps, into
    wraw[output][channel][tap] (w_vec 4; its 4-byte copies then land there too). -#}
{%- macro fetch_raw_weights(c0, dz, wraw, indent) -%}
{%- if w_vec == 4 %}
{#- the lines: bprop's one a data channel (c0 + l) of k_block outputs' taps, fprop's one an output
    (k0 + l) of c_block channels' taps from the chunk's first (past them all after the last chunk) -#}
{%- if weights_transposed %}
{%- set lines = c_block -%}
{%- set line = k_block * taps -%}
{%- set inside = "first + l < " ~ channels ~ "u" -%}
{%- set floats = "min(" ~ outputs ~ "u - k0, " ~ k_block ~ "u)" -%}
{%- set base = "((size_t)(first + l) * " ~ outputs ~ "u + k0) * " ~ taps ~ "u" -%}
{%- else %}
{%- set lines = k_block -%}
{%- set line = c_block * taps -%}
{%- set inside = "k0 + l < " ~ outputs ~ "u && first < " ~ channels ~ "u" -%}
{%- set floats = "min(" ~ channels ~ "u - first, " ~ c_block ~ "u)" -%}
{%- set base = "((size_t)(k0 + l) * " ~ channels ~ "u + first) * " ~ taps ~ "u" -%}
{%- endif -%}
{{ indent }}if ((reinterpret_cast<size_t>(in1) & 15u) == 0u) { // w 16-byte aligned: each line of it by 16-byte copies
{{ indent }}    const unsigned first = {{ c0 }}; // the chunk's first channel (past them all after the last chunk)
{{ indent }}    #pragma unroll 1
{{ indent }}    for (unsigned i = tid; i < {{ lines * line // 4 }}u; i += {{ threads }}u) {
{{ indent }}        const unsigned l = i / {{ line // 4 }}u, q = i - l * {{ line // 4 }}u; // line l, its float4 q
{{ indent }}        const unsigned valid = {{ inside }} ? {{ floats }} * {{ taps }}u : 0u; // its floats of w
{{ indent }}        const float *__restrict__ src = in1 + {{ base }} + 4u * q;
{{ indent }}        copy16(({{ wraw }}) + 4u * i, 4u * q < valid ? src : in1, 4u * q < valid);
{{ indent }}    }
{{ indent }}} else {
{{ fetch_raw_weights_by_float(c0, dz, wraw, indent ~ "    ") }}
{{ indent }}}
{%- else -%}
{{ fetch_raw_weights_by_float(c0, dz, wraw, indent) }}
{%- endif %}
{%- endmacro -%}

{#- fetch_raw_weights' copies of 4 bytes, copy i one float of w. -#}
{%- macro fetch_raw_weights_by_float(c0, dz, wraw, indent) -%}
{{ indent }}#pragma unroll 1
{{ indent }}for (unsigned r = 0; r < {{ (pairs * taps + threads - 1) // threads }}u; ++r) {
{{ indent }}    const unsigned i = tid + r * {{ threads }}u, pair = i / {{ taps }}u, tap = i - pair * {{ taps }}u;
{%- if weights_transposed %}
{{ indent }}    const unsigned cl = pair / {{ k_block }}u, kl = pair - cl * {{ k_block }}u;
{%- else %}
{{ indent }}    const unsigned kl = pair / {{ c_block }}u, cl = pair - kl * {{ c_block }}u;
{%- endif %}
{{ indent }}    const unsigned c = {{ c0 }} + cl, k = k0 + kl;
{%- set ragged = (pairs * taps) % threads != 0 %}
{{ indent }}    const bool inside = {{ "i < " ~ pairs * taps ~ "u && " if ragged }}c < {{ channels }}u && k < {{ outputs }}u;
{%- if weights_transposed %}
{{ indent }}    const size_t plane = (size_t)c * {{ outputs }}u + k;
{%- else %}
{{ indent }}    const size_t plane = (size_t)k * {{ channels }}u + c;
{%- endif %}
{%- if volume %}
{{ indent }}    const unsigned slice = {{ (depth_taps - 1) ~ "u - " if weights_flip }}{{ dz }}; // the depth tap's slice of w{{ " (reversed: a flipped kernel)" if weights_flip }}
{{ indent }}    const float *__restrict__ src = in1 + (plane * {{ depth_taps }}u + slice) * {{ taps }}u + tap;
{%- else %}
{{ indent }}    const float *__restrict__ src = in1 + plane * {{ taps }}u + tap;
{%- endif %}
{%- if ragged %}
{{ indent }}    if (i < {{ pairs * taps }}u) // past the chunk's copies: none
{%- endif %}
{{ indent }}    {{ "    " if ragged }}copy4(({{ wraw }}) + {{ "(kl * " ~ c_block ~ "u + cl)" if w_vec == 4 and not weights_transposed else "(cl * " ~ k_block ~ "u + kl)" }} * {{ taps }}u + tap, inside ? src : in1, inside);
{{ indent }}}
{%- endmacro -%}

{#- The chunk's weights' transforms (`inside`): each (channel, output) pair's w from wraw (fprop's
    lines: across them) through G along dimension 1, then dimension 0, into us[c][e][k]. -#}
{%- macro transform_weights(wraw, indent) -%}
{{ indent }}for (unsigned p = tid; p < {{ pairs }}u; p += {{ threads }}u) {
{%- if w_vec == 4 and not weights_transposed %}
{{ indent }}    const float *__restrict__ wp = {{ wraw }} + ((p % {{ k_block }}u) * {{ c_block }}u + p / {{ k_block }}u) * {{ taps }}u; // pair p's w, in its output's line
{%- else %}
{{ indent }}    const float *__restrict__ wp = {{ wraw }} + p * {{ taps }}u; // pair p's w
{%- endif %}
{{ indent }}    float d[{{ r0 }}][{{ r1 }}]; // {{ "w's plane reversed (a flipped kernel)" if weights_flip else "w's plane" }}
{%- for i in range(r0) %}
{%- for j in range(r1) %}
{{ indent }}    d[{{ i }}][{{ j }}] = wp[{{ ((r0 - 1 - i) * r1 + r1 - 1 - j) if weights_flip else (i * r1 + j) }}u];
{%- endfor %}
{%- endfor %}
{{ indent }}    float *__restrict__ dst = us + (p / {{ k_block }}u) * {{ elements * k_block }}u + p % {{ k_block }}u;
{{- wino_2d_store(g1, g0, r0, r1, alpha1, alpha0, "dst", k_block, indent ~ "    ") }}
{{ indent }}}
{%- endmacro -%}

{#- The next chunk's tiles into `raw` and its weights (raw, `inside`, into `wraw`; else U into the
    buffer the chunk does not use), then the group's commit. -#}
{%- macro fetch_next(raw, wraw) -%}
{%- if volume %}
        const chunk_at next = chunk(q + 1u);
{{ fetch_tiles("next.c0", "next.dz", raw, "        ") }}
{%- if inside %}
{{ fetch_raw_weights("next.c0", "next.dz", wraw, "        ") }}
{%- else %}
{{ fetch_weights("next.c0", "next.dz", "odd ? us0 : us1", "        ") }}
{%- endif %}
{%- else %}
{{ fetch_tiles("c0 + " ~ c_block ~ "u", "", raw, "        ") }}
{%- if inside %}
{{ fetch_raw_weights("c0 + " ~ c_block ~ "u", "", wraw, "        ") }}
{%- else %}
{{ fetch_weights("c0 + " ~ c_block ~ "u", "", "odd ? us0 : us1", "        ") }}
{%- endif %}
{%- endif %}
        asm volatile("cp.async.commit_group;\n" ::);
{%- endmacro -%}

{{ wino_fused_helpers() }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    extern __shared__ float4 shared4[];
    float *__restrict__ vs = (float *)shared4;                                 // [c][e][tile]: the data's transforms
{%- set two = stages == 2 %}
{%- if inside %}
    float *__restrict__ us = vs + {{ c_block * elements * tile_block }};             // [c][e][k]: the weights', made here
    float *__restrict__ wraw0 = us + {{ c_block * elements * k_block }};         // [c][k][tap]: the weights as loaded{{ ", two buffers" if two }}
{%- if two %}
    float *__restrict__ wraw1 = wraw0 + {{ pairs * taps }};
{%- endif %}
    float *__restrict__ raw0 = wraw0 + {{ stages * pairs * taps }};                       // [point][task]: the tiles as loaded{{ ", two buffers" if two }}
{%- else %}
    float *__restrict__ us0 = vs + {{ c_block * elements * tile_block }};            // [c][e][k]: the weights', two buffers
    float *__restrict__ us1 = us0 + {{ c_block * elements * k_block }};
    const float *__restrict__ u = workspace + {{ u_buffer }}ull;    // [e][c][k]
    float *__restrict__ raw0 = us1 + {{ c_block * elements * k_block }};      // [point][task]: the tiles as loaded{{ ", two buffers" if two }}
{%- endif %}
{%- if two %}
    float *__restrict__ raw1 = raw0 + {{ tasks * alpha0 * alpha1 }};
{%- endif %}
    const unsigned tid = threadIdx.x;
    const unsigned tile0 = blockIdx.x * {{ tile_block }}u, k0 = blockIdx.y * {{ k_block }}u;
    // This thread's products: element e, output channels k0 + 8 kq .., tiles tile0 + 8 tq ..
    const unsigned e = tid >> {{ e_shift }}, kq = tid & {{ k_block // 8 - 1 }}u, tq = (tid >> {{ k_shift }}) & {{ tile_block // 8 - 1 }}u;
{{ acc_8x8("    ") }}
{% if inside %}
{{ fetch_raw_weights("0u", "0u", "wraw0", "    ") }}
{%- else %}
{{ fetch_weights("0u", "0u", "us0", "    ") }}
{%- endif %}
{{ fetch_tiles("0u", "0u", "raw0", "    ") }}
    asm volatile("cp.async.commit_group;\n" ::);
{%- if volume %}
    for (unsigned q = 0; q < {{ chunks }}u; ++q) {
        const bool odd = q & 1u;
{%- else %}
    for (unsigned c0 = 0; c0 < {{ channels }}u; c0 += {{ c_block }}u) {
        const bool odd = (c0 / {{ c_block }}u) & 1u;
{%- endif %}
{%- if not inside %}
        float *__restrict__ us = odd ? us1 : us0;
{%- endif %}
        asm volatile("cp.async.wait_group 0;\n" ::); // this chunk's tiles and weights
        __syncthreads(); // seen by all, and the chunk before's products done with vs and us
{%- if two %}
        // The next chunk's tiles and weights into the other buffers, in flight during this chunk's
        // transforms and products (after the last chunk: zeros, nothing loaded).
{{ fetch_next("odd ? raw0 : raw1", "odd ? wraw0 : wraw1") }}
{%- endif %}
        // The chunk's tiles: BT d B, dimension 1 row by row, then dimension 0 column by column.
        const float *__restrict__ raw = {{ "odd ? raw1 : raw0" if two else "raw0" }};
        for (unsigned p = tid; p < {{ tasks }}u; p += {{ threads }}u) {
{{ wino_read_tile("(raw + p)", tasks, alpha0, alpha1, "            ") }}
            float *__restrict__ dst = vs + (p / {{ tile_block }}u) * {{ elements * tile_block }}u + p % {{ tile_block }}u;
{{- wino_2d_store(bt1, bt0, alpha0, alpha1, alpha1, alpha0, "dst", tile_block, "            ") }}
        }
{%- if inside %}
        // The chunk's weights: G g GT, dimension 1 row by row, then dimension 0 column by column.
{{ transform_weights("(odd ? wraw1 : wraw0)" if two else "wraw0", "        ") }}
{%- endif %}
        __syncthreads();
{%- if not two %}
        // The next chunk's tiles and weights (U: the other buffer), in flight during this chunk's
        // products (after the last chunk: zeros, nothing loaded).
{{ fetch_next("raw0", "wraw0") }}
{%- endif %}
#pragma unroll
        for (unsigned c = 0; c < {{ c_block }}u; ++c) {
            const float4 *__restrict__ a4 = (const float4 *)(us + (c * {{ elements }}u + e) * {{ k_block }}u + kq * 8u);
            const float4 *__restrict__ b4 = (const float4 *)(vs + (c * {{ elements }}u + e) * {{ tile_block }}u + tq * 8u);
            const float4 a_lo = a4[0], a_hi = a4[1], b_lo = b4[0], b_hi = b4[1];
{{ fma_8x8("a_lo", "a_hi", "b_lo", "b_hi", "            ") }}
        }
    }
    asm volatile("cp.async.wait_all;\n" ::); // the zeros after the last chunk
    __syncthreads();

    // The products as [e][k][tile] in shared memory, then AT M A per (k, tile).
    float *__restrict__ ms = (float *)shared4;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            ms[(e * {{ k_block }}u + kq * 8u + i) * {{ tile_block }}u + tq * 8u + j] = acc[i][j];
    __syncthreads();
    for (unsigned p = tid; p < {{ k_block * tile_block }}u; p += {{ threads }}u) {
        const unsigned k = p / {{ tile_block }}u, t = p % {{ tile_block }}u, kk = k0 + k;
        const tile_at at = locate(tile0 + t);
        if (!at.valid || kk >= {{ outputs }}u)
            continue;
        float d[{{ alpha0 }}][{{ alpha1 }}];
{%- for i in range(alpha0) %}
{%- for j in range(alpha1) %}
        d[{{ i }}][{{ j }}] = ms[{{ (i * alpha1 + j) * k_block * tile_block }}u + p];
{%- endfor %}
{%- endfor %}
{{- wino_rows(at1, alpha0, alpha1, m1, "w", "        ") }}
{{- wino_fused_dst("        ") }}
{%- for j in range(m1) %}
        {
            {{ wino_column_in(alpha0, "w", j) }}
{{ wino_fused_store_column(j, "            ") }}
        }
{%- endfor %}
    }
}
