{#- The fused Winograd fprop and bprop on a cluster of {{ cluster }} blocks (sm_90's distributed shared memory;
    generator/winograd/winograd_fused.c, cluster_kernel, decides every constant). A cluster works
    {{ tile_block }} tiles of {{ data }} x {{ k_block }} output channels; its block `rank` owns the transform elements of
    rows {{ rows }} rank .. {{ rows }} rank + {{ rows - 1 }} of the {{ alpha0 }} x {{ alpha1 }} tile, {{ cta_elements }} elements. The block's warps specialise:
    - {{ loaders }} loader warps bring each chunk of {{ c_block }} channels' raw tiles and this block's weights'
      transforms U into shared memory by cp.async, two chunks ahead, and transform the tiles' rows
      (BT along dimension 0 for the block's rows only, then along dimension 1) into a ring of
      {{ stages }} stages;
    - {{ cta_elements }} product warps, one per element, sum the stages' products: each lane 8 output channels x
      8 tiles (the warp's 32 tiles x 64 outputs read as broadcast float4s: two distinct tile and
      four distinct output float4s a quarter warp), while the loaders fill the next stage.
    Named barriers pass the stages: full[s] (loaders arrive, product warps wait) and empty[s] (the
    reverse). At the end each block applies AT along dimension 1 to its rows (M_r A) and sends the
    results to the block that owns the (output, tile) pair, which sums the cluster's rows through
    AT along dimension 0 in a fixed order (the result does not depend on scheduling), applies
    fprop's epilogue and stores. A 3-D layer's tiles are one slice deep, its {{ depth_taps }} depth taps summed
    as more chunks, as in winograd_fused.cu. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{{ file_header(header) }}

{#- The loaders' fetches. Everything that does not change from chunk to chunk is worked out once
    (loader_state): a loader thread's tasks are tile lt % {{ tile_block }} of channels lt / {{ tile_block }} + {{ loaders * 32 // tile_block }} i
    ({{ task_rounds }} of them), so one tile, its corner and which of its points lie in the plane serve
    every chunk; its weights' copies are the same {{ u_rounds }} (element, channel, output) offsets from
    each chunk's first channel. -#}
{%- macro loader_state(indent) -%}
{{ indent }}const tile_at mine = locate(tile0 + lt % {{ tile_block }}u);
{{ indent }}const int y0 = (int)(mine.t0 * {{ step0 }}u) - ({{ offset0 }}), x0 = (int)(mine.t1 * {{ step1 }}u) - ({{ offset1 }});
{{ indent }}unsigned long long inside = 0ull; // bit i {{ alpha1 }} + j: point (i, j) of the tile lies in the plane
{%- for i in range(alpha0) %}
{%- for j in range(alpha1) %}
{{ indent }}inside |= (unsigned long long)((unsigned)(y0 + {{ i }}) < {{ height }}u && (unsigned)(x0 + {{ j }}) < {{ width }}u) << {{ i * alpha1 + j }};
{%- endfor %}
{%- endfor %}
{{ indent }}inside = mine.valid ? inside : 0ull;
{%- if volume %}
{{ indent }}const int z0 = (int)mine.tz - ({{ offset_z }}); // the slice depth tap 0 reads
{{ indent }}// channel lt / {{ tile_block }}'s corner at slice z0 (read only where the slice is inside)
{{ indent }}const float *__restrict__ corner = in0 + ((long long)(mine.n * {{ channels }}u + lt / {{ tile_block }}u) * {{ depth }} + z0) * {{ height * width }}ll + y0 * {{ width }} + x0;
{%- else %}
{{ indent }}const float *__restrict__ corner = in0 + (size_t)(mine.n * {{ channels }}u + lt / {{ tile_block }}u) * {{ height * width }}u + y0 * {{ width }} + x0;
{%- endif %}
{{ indent }}const float *__restrict__ ub = u + (size_t)e_first * {{ channels * outputs }}ull + k0; // element e_first, channel 0
{%- for r in range(u_rounds) %}
{{ indent }}size_t uoff{{ r }} = 0;
{{ indent }}unsigned ucl{{ r }} = {{ channels }}u; // past the channels: no copy
{{ indent }}{
{{ indent }}    const unsigned i = lt + {{ r * loaders * 32 }}u, kv = i % {{ k_block // vec }}u, ce = i / {{ k_block // vec }}u;
{{ indent }}    const unsigned cl = ce / {{ cta_elements }}u, el = ce - cl * {{ cta_elements }}u;
{{ indent }}    if (i < {{ u_count }}u && k0 + kv * {{ vec }}u < {{ outputs }}u)
{{ indent }}        uoff{{ r }} = ((size_t)el * {{ channels }}u + cl) * {{ outputs }}u + kv * {{ vec }}u, ucl{{ r }} = cl;
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- Chunk `q`'s raw tiles into raw buffer `rb` and this block's weights' transforms into stage `st`
    ([c][element][k], {{ vec }} floats a cp.async), zeros outside the plane or volume and past the
    channels and outputs; one cp.async group. -#}
{%- macro fetch_chunk(q, rb, st, indent) -%}
{{ indent }}{
{%- if volume %}
{{ indent }}    const chunk_at at = chunk({{ q }});
{{ indent }}    const unsigned c0 = at.c0;
{{ indent }}    const bool slice = (unsigned)(z0 + (int)at.dz) < {{ depth }}u;
{{ indent }}    const size_t u_chunk = ((size_t)at.dz * {{ elements * channels }}u + c0) * {{ outputs }}u;
{%- else %}
{{ indent }}    const unsigned c0 = ({{ q }}) * {{ c_block }}u;
{{ indent }}    const size_t u_chunk = (size_t)c0 * {{ outputs }}u;
{%- endif %}
{%- for r in range(task_rounds) %}
{{ indent }}    {
{{ indent }}        const unsigned c = c0 + lt / {{ tile_block }}u + {{ r * loaders * 32 // tile_block }}u;
{%- if volume %}
{{ indent }}        const unsigned long long points = slice && c < {{ channels }}u ? inside : 0ull;
{{ indent }}        const float *__restrict__ src = corner + ((long long)(c - lt / {{ tile_block }}u) * {{ depth }} + at.dz) * {{ height * width }}ll;
{%- else %}
{{ indent }}        const unsigned long long points = c < {{ channels }}u ? inside : 0ull;
{{ indent }}        const float *__restrict__ src = corner + (size_t)(c - lt / {{ tile_block }}u) * {{ height * width }}u;
{%- endif %}
{{ indent }}        float *__restrict__ dst = raw + ({{ rb }}) * {{ raw_floats }}u + lt + {{ r * loaders * 32 }}u;
{%- for i in range(alpha0) %}
{%- for j in range(alpha1) %}
{{ indent }}        copy4(dst + {{ (i * alpha1 + j) * tasks }}u, src + {{ i * width + j }}, (unsigned)(points >> {{ i * alpha1 + j }}) & 1u);
{%- endfor %}
{%- endfor %}
{{ indent }}    }
{%- endfor %}
{{ indent }}    float *__restrict__ w = us + ({{ st }}) * {{ us_floats }}u + lt * {{ vec }}u;
{%- for r in range(u_rounds) %}
{{ indent }}    copy{{ vec * 4 }}(w + {{ r * loaders * 32 * vec }}u, ub + u_chunk + uoff{{ r }}, c0 + ucl{{ r }} < {{ channels }}u);
{%- endfor %}
{{ indent }}    asm volatile("cp.async.commit_group;\n" ::);
{{ indent }}}
{%- endmacro -%}

{#- Block `r`'s rows of the transform of the tile d into dst[e {{ tile_block }}] for its elements e: BT along
    dimension 0, the block's rows only, then along dimension 1. -#}
{%- macro transform_rows(r, indent) -%}
{%- for i in range(rows) %}
{{ indent }}float t{{ i }}[{{ alpha1 }}];
{%- endfor %}
{%- for j in range(alpha1) %}
{{ indent }}{
{{ indent }}    const float in[{{ alpha0 }}] = { {% for i in range(alpha0) %}{{ ", " if not loop.first }}d[{{ i }}][{{ j }}]{% endfor %} };
{{ indent }}    float v[{{ alpha0 }}];
{{- wino_program(bt0, "v", indent ~ "    ") }}
{%- for i in range(rows) %}
{{ indent }}    t{{ i }}[{{ j }}] = v[{{ r * rows + i }}];
{%- endfor %}
{{ indent }}}
{%- endfor %}
{%- for i in range(rows) %}
{{ indent }}{
{{ indent }}    const float in[{{ alpha1 }}] = { {% for j in range(alpha1) %}{{ ", " if not loop.first }}t{{ i }}[{{ j }}]{% endfor %} };
{{ indent }}    float v[{{ alpha1 }}];
{{- wino_program(bt1, "v", indent ~ "    ") }}
{%- for j in range(alpha1) %}
{{ indent }}    dst[{{ (i * alpha1 + j) * tile_block }}u] = v[{{ j }}];
{%- endfor %}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{{ wino_fused_helpers() }}

// This block's rank in its cluster (blockIdx.x % {{ cluster }}: the clusters lie along x).
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

{{ cluster_peer("float") }}

{{ cluster_sync() }}

// Named barriers: the loaders' own (LOADERS), and per stage s full (FULL + s) and empty (EMPTY + s),
// which every thread of the block counts: one side arrives, the other waits.
enum { LOADERS = 1, FULL = 2, EMPTY = 2 + {{ stages }} };

__device__ __forceinline__ void bar_sync(unsigned id, unsigned threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

__device__ __forceinline__ void bar_arrive(unsigned id, unsigned threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

extern "C" __global__ void __launch_bounds__({{ threads }}, 1) __cluster_dims__({{ cluster }}, 1, 1)
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    extern __shared__ float4 shared4[];
    float *__restrict__ raw = (float *)shared4;       // 2 x [point][task]: the tiles as loaded
    float *__restrict__ vs = raw + {{ 2 * raw_floats }}; // {{ stages }} x [c][element][tile]: their transforms
    float *__restrict__ us = vs + {{ stages * vs_floats }}; // {{ stages }} x [c][element][k]: the weights'
    const float *__restrict__ u = workspace + {{ u_buffer }}ull; // [e][c][k]
    const unsigned tid = threadIdx.x, warp = tid >> 5, rank = cluster_rank();
    const unsigned tile0 = blockIdx.x / {{ cluster }}u * {{ tile_block }}u, k0 = blockIdx.y * {{ k_block }}u;
    const unsigned e_first = rank * {{ cta_elements }}u; // this block's elements: rows {{ rows }} rank ..
{{ acc_8x8("    ") }}

    if (warp >= {{ cta_elements }}u) {
        // The loaders: chunk q's copies were issued two chunks ahead; transform its tiles into
        // stage q % {{ stages }} (free since the product warps said so, before its weights were fetched).
        const unsigned lt = tid - {{ cta_elements * 32 }}u;
{{ loader_state("        ") }}
{{ fetch_chunk("0u", "0u", "0u", "        ") }}
{%- if chunks > 1 %}
{{ fetch_chunk("1u", "1u", "1u", "        ") }}
{%- endif %}
        for (unsigned q = 0; q < {{ chunks }}u; ++q) {
            const unsigned st = q % {{ stages }}u;
            if (q + 1u < {{ chunks }}u)
                asm volatile("cp.async.wait_group 1;\n" ::); // chunk q's copies (q + 1's may fly)
            else
                asm volatile("cp.async.wait_group 0;\n" ::);
            bar_sync(LOADERS, {{ loaders * 32 }}u);         // every loader's
            const float *__restrict__ tiles = raw + (q & 1u) * {{ raw_floats }}u;
            for (unsigned p = lt; p < {{ tasks }}u; p += {{ loaders * 32 }}u) {
{{ wino_read_tile("(tiles + p)", tasks, alpha0, alpha1, "                ") }}
                float *__restrict__ dst = vs + st * {{ vs_floats }}u + (p / {{ tile_block }}u) * {{ cta_elements * tile_block }}u + p % {{ tile_block }}u;
{%- for r in range(cluster) %}
                {{ "} else " if not loop.first }}{{ "{" if loop.last else "if (rank == " ~ r ~ "u) {" }}
{{- transform_rows(r, "                    ") }}
{%- endfor %}
                }
            }
            bar_arrive(FULL + st, {{ threads }}u);
            if (q + 2u < {{ chunks }}u) {
                // chunk q + 2 into raw buffer q & 1 (read by every loader: the barrier) and stage
                // (q + 2) % {{ stages }}, chunk q - 1's, once the product warps are done with it
                bar_sync(LOADERS, {{ loaders * 32 }}u);
                if (q >= 1u)
                    bar_sync(EMPTY + (q + 2u) % {{ stages }}u, {{ threads }}u);
{{ fetch_chunk("q + 2u", "q & 1u", "(q + 2u) % " ~ stages ~ "u", "                ") }}
            }
        }
    } else {
        // The product warps: warp w sums element e_first + w's products, lane l its outputs
        // k0 + 4 kq .. and k0 + 32 + 4 kq .., tiles tile0 + 4 tq .. and tile0 + 16 + 4 tq ..
        const unsigned lane = tid & 31u, kq = (lane & 15u) >> 1, tq = (lane & 1u) + ((lane >> 4) << 1);
        for (unsigned q = 0; q < {{ chunks }}u; ++q) {
            const unsigned st = q % {{ stages }}u;
            bar_sync(FULL + st, {{ threads }}u);
            const float *__restrict__ v = vs + st * {{ vs_floats }}u, *__restrict__ w = us + st * {{ us_floats }}u;
#pragma unroll
            for (unsigned c = 0; c < {{ c_block }}u; ++c) {
                const float4 *__restrict__ a4 = (const float4 *)(w + (c * {{ cta_elements }}u + warp) * {{ k_block }}u);
                const float4 *__restrict__ b4 = (const float4 *)(v + (c * {{ cta_elements }}u + warp) * {{ tile_block }}u);
                const float4 a_lo = a4[kq], a_hi = a4[kq + 8u], b_lo = b4[tq], b_hi = b4[tq + 4u];
{{ fma_8x8("a_lo", "a_hi", "b_lo", "b_hi", "                ") }}
            }
            if (q + {{ stages }}u < {{ chunks }}u) // the loaders wait for it only where they refill it
                bar_arrive(EMPTY + st, {{ threads }}u);
        }
    }
    __syncthreads(); // every stage read: the products' shared memory may be reused

    // The products as [element][k][tile] in shared memory (ms), then M_r A per (k, tile) pair of
    // the block's rows, sent to the pair's owner: block p / {{ per_owner }} of the cluster, at
    // recv[((source rank {{ rows }} + row) {{ m1 }} + column) {{ per_owner }} + p % {{ per_owner }}] of its shared memory.
    float *__restrict__ ms = (float *)shared4, *__restrict__ recv = ms + {{ pairs * cta_elements }};
    if (warp < {{ cta_elements }}u) {
        const unsigned lane = tid & 31u, kq = (lane & 15u) >> 1, tq = (lane & 1u) + ((lane >> 4) << 1);
#pragma unroll
        for (int i = 0; i < 8; ++i) {
            float *__restrict__ row = ms + (warp * {{ k_block }}u + (i < 4 ? 4u * kq + i : 32u + 4u * kq + i - 4)) * {{ tile_block }}u;
            *(float4 *)(row + 4u * tq) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
            *(float4 *)(row + 16u + 4u * tq) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        }
    }
    // Every block of the cluster is past its products (recv lies over their stages) and has
    // its ms; the release and acquire order this block's ms for all its threads too.
    cluster_sync();
    for (unsigned p = tid; p < {{ pairs }}u; p += {{ threads }}u) {
        const unsigned owner = p / {{ per_owner }}u;
        float *__restrict__ dst = peer(recv, owner) + rank * {{ rows * m1 * per_owner }}u + (p - owner * {{ per_owner }}u);
{%- for i in range(rows) %}
        {
            const float in[{{ alpha1 }}] = { {% for j in range(alpha1) %}{{ ", " if not loop.first }}ms[{{ (i * alpha1 + j) * pairs }}u + p]{% endfor %} };
            float z[{{ m1 }}];
{{- wino_program(at1, "z", "            ") }}
{%- for j in range(m1) %}
            dst[{{ (i * m1 + j) * per_owner }}u] = z[{{ j }}];
{%- endfor %}
        }
{%- endfor %}
    }
    // Every block's rows are in: the release and acquire make the peers' writes visible.
    cluster_sync();

    // This block's pairs: AT along dimension 0 over the cluster's rows, the epilogue, the store.
    for (unsigned lp = tid; lp < {{ per_owner }}u; lp += {{ threads }}u) {
        const unsigned p = rank * {{ per_owner }}u + lp, k = p / {{ tile_block }}u, t = p % {{ tile_block }}u, kk = k0 + k;
        const tile_at at = locate(tile0 + t);
        if (p >= {{ pairs }}u || !at.valid || kk >= {{ outputs }}u)
            continue;
{{- wino_fused_dst("        ") }}
{%- for j in range(m1) %}
        {
            const float in[{{ alpha0 }}] = { {% for i in range(alpha0) %}{{ ", " if not loop.first }}recv[{{ (i * m1 + j) * per_owner }}u + lp]{% endfor %} };
{{ wino_fused_store_column(j, "            ") }}
        }
{%- endfor %}
    }
}
