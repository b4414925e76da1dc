{#- The fused Winograd fprop and bprop on a cluster of {{ cluster }} blocks (sm_90's distributed shared memory;
    generator/winograd/winograd_fused.c, cluster_kernel, decides every constant). A cluster works
    {{ tile_block }} tiles of {{ data }} x {{ k_block }} output channels; its block `rank` owns the transform elements of
    rows {{ rows }} rank .. {{ rows }} rank + {{ rows - 1 }} of the {{ alpha0 }} x {{ alpha1 }} tile, {{ cta_elements }} elements. The block's warps specialise:
    - {{ loaders }} loader warps bring their block's share of each chunk's raw tiles ({{ c_share }} of its {{ c_block }} channels, one
      warp a channel, or {{ split }}, one lane a tile) into shared memory by cp.async, two chunks ahead,
      transform each tile (BT along dimension 0, then 1: whole, or where {{ split }} warps share a channel
      (split) a share of its columns each, back in place, then that share of its rows) and
      store each row of the result in the stage of the block that owns it, through distributed
      shared memory: every raw tile is read from L2 once a cluster, not once a block;
    - {{ cta_elements }} product warps, one per element, bring their element's weights' transforms U, a chunk
      by one bulk copy (the TMA unit: no loads through the warp's own pipes; u is blocked for it,
      [e][k / {{ k_block }}][c][{{ k_block }}]{{ ", each 8 channels of a run in the mma's B fragments' order" if tensor }}) {{ stages }} chunks ahead (each warp
      its own, so that no loader waits on the products before it copies) and sum the stages' products: each lane {{ lane_outputs }} output channels x
      8 tiles (the warp's 32 tiles x {{ k_block }} outputs read as broadcast float4s: two distinct tile and
      four distinct output float4s a quarter warp), while the loaders fill the next stage. Where
      `tensor` (chunks of whole 8-channel K steps) the products are mma instead, 3xTF32 on the
      tensor cores, the tiles the mma's A and the weights its B: a stage's channels 8 floats apart
      more (vs_pitch) so that the tiles' float2 loads meet no bank conflict, and u's runs hold the
      weights in the order of the mma's B fragments (u_fragments), so that every loaded value goes
      to the mma as it lies in its register, with no move.
    The stages pass between the cluster's blocks through mbarriers in each block: full[s] counts
    this block's loader warps and the bytes of the rows the cluster's loaders (its own among them)
    send by st.async (whose completion needs no fence: an arrival releasing to the cluster cost a
    memory barrier a warp, the kernel's first stall on an H200), and empty[s] counts the cluster's
    product warps (stage s read in every block, which the loaders wait on before they refill it);
    a loader warp's lane 0 arrives for it, and a product warp's lane p on block p's empty[s], once
    __syncwarp has ordered the lanes' accesses before it. At the end each block applies AT along
    dimension 1 to its rows (M_r A) and sends the results to the block that owns the (output, tile)
    pair, which sums the cluster's rows through AT along dimension 0 in a fixed order (the result
    does not depend on scheduling), applies fprop's epilogue and stores, a row of a tile as one
    vector store (or, of 6 outputs, three float2) where y allows. A 3-D layer's tiles are one slice
    deep, its {{ depth_taps }} depth taps summed as more chunks, as in winograd_fused.cu. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{{ file_header(header) }}

{#- Raw tiles: a loader warp copies row i of its channel's {{ tile_block }} tiles as {{ copies|length }} copies, each of a few
    neighbouring columns of several tiles (lane l: tile base + l / columns, column first + l % columns),
    so that a warp's 4-byte copies read neighbouring addresses (a tile's columns are neighbours, and
    so are the tiles); point (i, j) of task t (channel lw, tile) lies at raw[({{ alpha1 }} i + j) {{ point_stride }} + pad(j)
    + t], the pads ({{ col_pad|join(", ") }}) putting a copy's columns in different banks, each point's
    slot 32 floats wider than its {{ loader_threads }} tasks to leave room for them. -#}

{#- Everything of the loaders' copies that does not change from chunk to chunk, worked out once
    (loader_state): for each copy g of a row, this lane's tile corner and which of its rows lie
    in the plane. -#}
{%- macro loader_state(indent) -%}
{%- set lc = "lc" if split > 1 else "lw" -%}
{%- if split > 1 -%}
{{ indent }}// lw: the loader warp; lc = lw / {{ split }}: its channel of the block's share of each chunk, rank {{ c_share }} + lc; part: the
{{ indent }}// rows it brings ({{ copy_rows }} part ..), the columns, then the rows, it transforms
{{ indent }}const unsigned lane = lt & 31u, lw = lt >> 5, lc = lw / {{ split }}u, part = lw % {{ split }}u;
{%- else -%}
{{ indent }}const unsigned lane = lt & 31u, lw = lt >> 5; // lw: the loader warp, the channel rank {{ c_share }} + lw of each chunk
{%- endif %}
{{ indent }}const unsigned cl0 = rank * {{ c_share }}u + {{ lc }};
{%- for g in copies %}
{%- set n = loop.index0 %}
{{ indent }}const float *__restrict__ corner{{ n }}; // copy {{ n }}: tiles {{ g.base }}.. x columns {{ g.first }}..{{ g.first + g.columns - 1 }}
{{ indent }}unsigned inside{{ n }} = 0u, ro{{ n }}; // bit i: its row i{{ " of those it brings" if split > 1 }} lies in the plane{{ "; bit 8 + dz: the slice of depth tap dz lies in the volume" if volume }}; ro: its point (0, j) in raw
{{ indent }}{
{{ indent }}    const unsigned tile = {{ g.base }}u + lane / {{ g.columns }}u, j = {{ g.first }}u + lane % {{ g.columns }}u;
{{ indent }}    const tile_at at = locate(tile0 + tile);
{{ indent }}    const int y0 = (int)(at.t0 * {{ step0 }}u) - ({{ offset0 }}){{ " + (int)(part * " ~ copy_rows ~ "u)" if split > 1 }}, x = (int)(at.t1 * {{ step1 }}u) - ({{ offset1 }}) + (int)j;
{%- for i in range(copy_rows) %}
{{ indent }}    inside{{ n }} |= (unsigned)(at.valid && (unsigned)(y0 + {{ i }}) < {{ height }}u && (unsigned)x < {{ width }}u) << {{ i }};
{%- endfor %}
{{ indent }}    ro{{ n }} = j * {{ point_stride }}u + {{ g.tiles }}u * (lane % {{ g.columns }}u) + {{ lc }} * {{ tile_block }}u + tile{{ " + part * " ~ copy_rows * alpha1 * point_stride ~ "u" if split > 1 }};
{%- if volume %}
{{ indent }}    const int z = (int)at.tz - ({{ offset_z }}); // the slice depth tap 0 reads
{%- for dz in range(depth_taps) %}
{{ indent }}    inside{{ n }} |= (unsigned)((unsigned)(z + {{ dz }}) < {{ depth }}u) << {{ 8 + dz }};
{%- endfor %}
{{ indent }}    // channel cl0's point (0, j) at that slice (read only where the slice is inside)
{{ indent }}    corner{{ n }} = in0 + (((long long)at.n * {{ channels }}u + cl0) * {{ depth }} + z) * {{ height * width }}ll + y0 * {{ width }} + x;
{%- else %}
{{ indent }}    corner{{ n }} = in0 + ((long long)at.n * {{ channels }}u + cl0) * {{ height * width }}ll + y0 * {{ width }} + x;
{%- endif %}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- Chunk `q`'s raw tiles of channel cl0 into raw buffer `rb`, zeros outside the plane or volume and
    past the channels; one cp.async group. -#}
{%- macro fetch_tiles(q, rb, indent) -%}
{{ indent }}{
{%- if volume %}
{{ indent }}    const chunk_at at = chunk({{ q }});
{{ indent }}    const bool here = at.c0 + cl0 < {{ channels }}u;
{{ indent }}    const long long from = ((long long)at.c0 * {{ depth }} + at.dz) * {{ height * width }}ll;
{%- for g in copies %}
{{ indent }}    const bool here{{ loop.index0 }} = here && (inside{{ loop.index0 }} >> (8u + at.dz) & 1u);
{%- endfor %}
{%- else %}
{{ indent }}    const unsigned c0 = ({{ q }}) * {{ c_block }}u;
{{ indent }}    const bool here = c0 + cl0 < {{ channels }}u;
{{ indent }}    const size_t from = (size_t)c0 * {{ height * width }}u;
{%- endif %}
{{ indent }}    float *__restrict__ dst = raw + ({{ rb }}) * {{ raw_floats }}u;
{%- for i in range(copy_rows) %}
{%- for g in copies %}
{{ indent }}    copy4(dst + ro{{ loop.index0 }} + {{ i * alpha1 * point_stride }}u, corner{{ loop.index0 }} + from + {{ i * width }}, here{{ loop.index0 if volume }} && (inside{{ loop.index0 }} >> {{ i }} & 1u));
{%- endfor %}
{%- endfor %}
{{ indent }}    asm volatile("cp.async.commit_group;\n" ::);
{{ indent }}}
{%- endmacro -%}

{#- A product warp's weights of chunk `q` into stage `st`: its element's {{ c_block }} channels x {{ k_block }} outputs,
    [element][c][k] there as in u's blocked layout ([e][k / {{ k_block }}][c][{{ k_block }}], the channels padded to {{ u_channels }}
    with zeros; in the tensor form each 8 channels x {{ k_block }} in the order of the mma's B fragments), so one bulk copy by the TMA unit of {{ c_block * k_block * 4 }} bytes, issued by lane 0 and counted on
    the warp's mbarrier uready[st]. -#}
{%- macro fetch_weights(q, st, indent) -%}
{{ indent }}if (lane == 0u) {
{%- if tensor %}
{{ indent }}    // the warp's element's run of u for this block's outputs (worked out here, in lane 0 only: held
{{ indent }}    // through the products it cost two registers, which the tensor products' operands need)
{{ indent }}    const float *__restrict__ uw = u + (size_t)(e_first + warp) * {{ u_element }}ull + (size_t)blockIdx.y * {{ u_run }}u;
{%- endif %}
{%- if volume %}
{{ indent }}    const chunk_at at = chunk({{ q }});
{{ indent }}    const float *__restrict__ src = uw + (size_t)at.dz * {{ elements * u_element }}ull + at.c0 * {{ k_block }}u;
{%- else %}
{{ indent }}    const float *__restrict__ src = uw + ({{ q }}) * {{ c_block * k_block }}u;
{%- endif %}
{{ indent }}    unsigned long long *__restrict__ bar = &uready[({{ st }}) * {{ cta_elements }}u + warp];
{{ indent }}    expect_bytes(bar, {{ c_block * k_block * 4 }}u);
{{ indent }}    bulk_copy(us + ({{ st }}) * {{ us_floats }}u + warp * {{ c_block * k_block }}u, src, {{ c_block * k_block * 4 }}u, bar);
{{ indent }}}
{%- endmacro -%}

{#- The transform of the tile d, BT along dimension 0 then 1, each row of it into the stage of the
    block that owns it: row i of the tile to block p = i / {{ rows }}, ((i % {{ rows }}) {{ alpha1 }} + j) {{ tile_block }} floats past
    to[p] (a shared::cluster address), signalling full{p}, that block's full[st]. -#}
{%- macro transform_tile(indent) -%}
{%- for j in range(alpha1) %}
{{ indent }}float t{{ j }}[{{ alpha0 }}]; // column {{ j }} through BT
{{ indent }}{
{{ indent }}    const float in[{{ alpha0 }}] = { {% for i in range(alpha0) %}{{ ", " if not loop.first }}d[{{ i }}][{{ j }}]{% endfor %} };
{{- wino_program(bt0, "t" ~ j, indent ~ "    ") }}
{{ indent }}}
{%- endfor %}
{%- for i in range(alpha0) %}
{{ indent }}{
{{ indent }}    const float in[{{ alpha1 }}] = { {% for j in range(alpha1) %}{{ ", " if not loop.first }}t{{ j }}[{{ i }}]{% endfor %} };
{{ indent }}    float v[{{ alpha1 }}];
{{- wino_program(bt1, "v", indent ~ "    ") }}
{%- for j in range(alpha1) %}
{{ indent }}    put<{{ ((i % rows) * alpha1 + j) * tile_block * 4 }}u>(to{{ i // rows }}, v[{{ j }}], full{{ i // rows }});
{%- endfor %}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- The transform split between a channel's {{ split }} loader warps (`part` 0 .. {{ split - 1 }}; a block a row of
    the tile, rows 1): the warp's columns part {{ alpha1 // split }} .. through BT along dimension 0, back in place
    in raw (a column's points {{ pad_step }} floats further each, its pad); once every loader's columns are
    there, its rows part {{ copy_rows }} .., row part {{ copy_rows }} + ii through BT along dimension 1 into the
    stage of its block at to[ii], signalling full[ii]. Each warp loads, transforms and sends a
    {{ split }}th of what one warp would. -#}
{%- macro transform_split(indent) -%}
{{ indent }}{
{{ indent }}    float *column = tile + part * {{ (alpha1 // split) * (point_stride + pad_step) }}u; // point (0, part {{ alpha1 // split }})
{%- for jj in range(alpha1 // split) %}
{{ indent }}    {
{{ indent }}        const float in[{{ alpha0 }}] = { {% for i in range(alpha0) %}{{ ", " if not loop.first }}column[{{ (i * alpha1 + jj) * point_stride + jj * pad_step }}u]{% endfor %} };
{{ indent }}        float t[{{ alpha0 }}];
{{- wino_program(bt0, "t", indent ~ "        ") }}
{%- for i in range(alpha0) %}
{{ indent }}        column[{{ (i * alpha1 + jj) * point_stride + jj * pad_step }}u] = t[{{ i }}];
{%- endfor %}
{{ indent }}    }
{%- endfor %}
{{ indent }}}
{{ indent }}loaders_sync(); // every loader's columns through BT
{{ indent }}{
{{ indent }}    const float *row = tile + part * {{ copy_rows * alpha1 * point_stride }}u; // point (part {{ copy_rows }}, 0)
{%- for ii in range(copy_rows) %}
{{ indent }}    {
{{ indent }}        const float in[{{ alpha1 }}] = { {% for j in range(alpha1) %}{{ ", " if not loop.first }}row[{{ (ii * alpha1 + j) * point_stride + col_pad[j] }}u]{% endfor %} };
{{ indent }}        float v[{{ alpha1 }}];
{{- wino_program(bt1, "v", indent ~ "        ") }}
{%- for j in range(alpha1) %}
{{ indent }}        put<{{ j * tile_block * 4 }}u>(to{{ ii }}, v[{{ j }}], full{{ ii }});
{%- endfor %}
{{ indent }}    }
{%- endfor %}
{{ indent }}}
{%- endmacro -%}

{{ wino_fused_helpers() }}

{{ bulk_copy_function() }}

// This block's rank in its cluster (blockIdx.x % {{ cluster }}: the clusters lie along x).
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

{{ cluster_peer("float") }}

{{ cluster_sync() }}

// The loaders' own named barrier: the raw tiles pass between their warps.
__device__ __forceinline__ void loaders_sync()
{
    asm volatile("bar.sync 1, {{ loader_threads }};" ::: "memory");
}

// The shared::cluster address of `local` (this block's shared memory) in block `rank` of the cluster.
__device__ __forceinline__ unsigned cluster_address(const void *local, unsigned rank)
{
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"((unsigned)__cvta_generic_to_shared(local)), "r"(rank));
    return remote;
}

// One arrival on the mbarrier at shared::cluster address `bar` (this block's or a peer's), releasing
// this thread's shared-memory accesses before it at the block's scope, as a buffer's release to
// its producer is made (the data a peer reads next comes by st.async, which needs no fence).
__device__ __forceinline__ void arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
}

// The arrival of this block's loader warp on its own full[s], expecting the bytes of its share of
// the rows that the cluster's st.async bring into this block's stage s.
__device__ __forceinline__ void arrive_expecting(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cluster.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

// A float of the transforms into a stage at shared::cluster address `to` + OFFSET bytes, in this
// block or a peer, by st.async, which counts its bytes on that block's full[s] (`full`) as they
// land. One instruction, the offset an immediate: a plain store into this block instead took a
// branch on the rank and a generic store through the window (S2R, two moves) a float.
template <unsigned OFFSET>
__device__ __forceinline__ void put(unsigned to, float v, unsigned full)
{
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%0+%3], %1, [%2];"
                 ::"r"(to), "f"(v), "r"(full), "n"(OFFSET) : "memory");
}

{%- if tensor %}
{{ tf32_lo_function() }}
// (The input transform's differences already turn a tile that holds an infinity into NaNs.)

{{ mma_tf32_function() }}
{%- endif %}

// The arrival of a product warp's lane 0 on its own uready[s], expecting the bytes of the bulk
// copies of its weights.
__device__ __forceinline__ void expect_bytes(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"((unsigned)__cvta_generic_to_shared(bar)), "r"(bytes)
                 : "memory");
}

// Waits for phase `parity` of this block's mbarrier `bar` to complete.
__device__ __forceinline__ void wait_phase(const unsigned long long *bar, unsigned parity)
{
    const unsigned at = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(at), "r"(parity) : "memory");
    while (!done);
}

extern "C" __global__ void __launch_bounds__({{ threads }}, 1) __cluster_dims__({{ cluster }}, 1, 1)
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    extern __shared__ float4 shared4[];
    // full[s] and empty[s] of each stage; outside the dynamic memory, which the end reuses
    __shared__ unsigned long long full[{{ stages }}], empty[{{ stages }}], uready[{{ stages * cta_elements }}];
    float *__restrict__ raw = (float *)shared4;       // 2 x [point][task]: this block's share of the tiles as loaded
    float *__restrict__ vs = raw + {{ 2 * raw_floats }}; // {{ stages }} x [c][element][tile]: the cluster's transforms of them
    float *__restrict__ us = vs + {{ stages * vs_floats }}; // {{ stages }} x [element][c][k]: the weights'{{ " (each 8 c in B fragments' order)" if tensor }}
    const float *__restrict__ u = workspace + {{ u_buffer }}ull; // [e][k / {{ k_block }}][c][{{ k_block }}]{{ ", the same" if tensor }}
    const unsigned tid = threadIdx.x, warp = tid >> 5, rank = cluster_rank();
    const unsigned tile0 = blockIdx.x / {{ cluster }}u * {{ tile_block }}u, k0 = blockIdx.y * {{ k_block }}u;
    const unsigned e_first = rank * {{ cta_elements }}u; // this block's elements: rows {{ rows }} rank ..
    if (tid == 0) {
        for (unsigned s = 0; s < {{ stages }}u; ++s) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], {{ loaders }};" ::"r"((unsigned)__cvta_generic_to_shared(&full[s])) : "memory");
            asm volatile("mbarrier.init.shared::cta.b64 [%0], {{ cluster * cta_elements }};" ::"r"((unsigned)__cvta_generic_to_shared(&empty[s])) : "memory");
            for (unsigned w = 0; w < {{ cta_elements }}u; ++w)
                asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&uready[s * {{ cta_elements }}u + w])) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    cluster_sync(); // every block's mbarriers are ready before any peer arrives on them
{%- if tensor %}
    // a product lane's sums, mma's fragments: m-tile i (16 tiles) x n-tile j (8 outputs) x 4
    // (see below)
    float acc[2][{{ k_block // 8 }}][4];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < {{ k_block // 8 }}; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r)
                acc[i][j][r] = 0.0f;
{%- else %}
    float acc[{{ lane_outputs }}][8]; // a product lane's sums: output 32 (i / 4) + 4 kq + i % 4, tile (see below)
#pragma unroll
    for (int i = 0; i < {{ lane_outputs }}; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;
{%- endif %}

    if (warp >= {{ cta_elements }}u) {
        // The loaders: chunk q's copies were issued two chunks ahead; transform its tiles into
        // stage q % {{ stages }} of every block, once the cluster's product warps are done with chunk
        // q - {{ stages }} there (empty[s]).
        const unsigned lt = tid - {{ cta_elements * 32 }}u;
{{ loader_state("        ") }}
{{ fetch_tiles("0u", "0u", "        ") }}
{%- if chunks > 1 %}
{{ fetch_tiles("1u", "1u", "        ") }}
{%- endif %}
        // this thread's task (channel cl0, tile lane) in the stages of the blocks: row i to block i / {{ rows }}
        const unsigned task = cl0 * {{ vs_pitch }}u + lane;
{%- if split > 1 %}
        // the blocks of the warp's rows: part {{ copy_rows }} + ii for its row ii
{%- for ii in range(copy_rows) %}
        const unsigned stage{{ ii }} = cluster_address(vs + task, part * {{ copy_rows }}u + {{ ii }}u),
                       full_at{{ ii }} = cluster_address(full, part * {{ copy_rows }}u + {{ ii }}u);
{%- endfor %}
{%- else %}
{%- for p in range(cluster) %}
        const unsigned stage{{ p }} = cluster_address(vs + task, {{ p }}u), full_at{{ p }} = cluster_address(full, {{ p }}u);
{%- endfor %}
{%- endif %}
        const unsigned full_mine = cluster_address(full, rank);
        for (unsigned q = 0; q < {{ chunks }}u; ++q) {
            const unsigned st = q % {{ stages }}u;
            if (q + 1u < {{ chunks }}u)
                asm volatile("cp.async.wait_group 1;\n" ::); // chunk q's copies (q + 1's may fly)
            else
                asm volatile("cp.async.wait_group 0;\n" ::);
            loaders_sync(); // every loader's
            if (q >= {{ stages }}u) // stage st read in every block (chunk q - {{ stages }})
                wait_phase(&empty[st], (q - {{ stages }}u) / {{ stages }}u & 1u);
{%- if split > 1 %}
            {
                float *tile = raw + (q & 1u) * {{ raw_floats }}u + lc * {{ tile_block }}u + lane; // the task's point (0, 0)
{%- for ii in range(copy_rows) %}
                const unsigned to{{ ii }} = stage{{ ii }} + st * {{ vs_floats * 4 }}u, full{{ ii }} = full_at{{ ii }} + st * 8u;
{%- endfor %}
{{ transform_split("                ") }}
            }
{%- else %}
            {
                const float *__restrict__ tile = raw + (q & 1u) * {{ raw_floats }}u + lt;
                float d[{{ alpha0 }}][{{ alpha1 }}];
{%- for i in range(alpha0) %}
{%- for j in range(alpha1) %}
                d[{{ i }}][{{ j }}] = tile[{{ (i * alpha1 + j) * point_stride + col_pad[j] }}u];
{%- endfor %}
{%- endfor %}
{%- for p in range(cluster) %}
                const unsigned to{{ p }} = stage{{ p }} + st * {{ vs_floats * 4 }}u, full{{ p }} = full_at{{ p }} + st * 8u;
{%- endfor %}
{{ transform_tile("                ") }}
            }
{%- endif %}
            __syncwarp();
            if (lane == 0u) // one arrival a warp, expecting its share of the bytes this block's stage receives
                arrive_expecting(full_mine + st * 8u, {{ cluster * c_share * tile_block * rows * alpha1 * 4 // loaders }}u);
            if (q + 2u < {{ chunks }}u) {
                loaders_sync(); // chunk q + 2 into raw buffer q & 1, read by every loader
{{ fetch_tiles("q + 2u", "q & 1u", "                ") }}
            }
        }
    } else {
        // The product warps: warp w sums element e_first + w's products of outputs k0 .. and
        // tiles tile0 ..
        const unsigned lane = tid & 31u;
        // The warp brings its own element's weights, {{ stages }} chunks ahead (no other warp reads
        // them){{ ": its element's run of u for this block's outputs." if not tensor else "." }}
{%- if not tensor %}
        const float *__restrict__ uw = u + (size_t)(e_first + warp) * {{ u_element }}ull + (size_t)blockIdx.y * {{ u_run }}u;
{%- endif %}
{%- for q in range(stages) %}
{{ fetch_weights(q ~ "u", q ~ "u", "        ") }}
{%- endfor %}
        // lane p < {{ cluster }} arrives for the warp on block p's empty[s]: one register, where each block's
        // address held in every lane cost a register a block{{ " (the tensor products' operands need that one too:\n        // its address is worked out at each arrival)" if tensor }}
{%- if not tensor %}
        const unsigned empty_at = cluster_address(empty, lane < {{ cluster }}u ? lane : 0u);
{%- endif %}
{%- if tensor %}
        // 3xTF32 on the tensor cores, one mma K step a group of 8 channels of the chunk (8 s ..),
        // the tiles as A (16 tiles x 8 channels) and the weights as B (8 channels x 8 outputs):
        // lane 4 g + t holds channels t and t + 4 of each. Rows g and g + 8 of m-tile i are tiles
        // 16 i + 2 g and + 1, side by side in the stage as the loaders lay them out (a channel's two
        // one float2, straight into the operand's registers); column g of n-tile j is output
        // 8 j + g, whose weights u lays out as the mma's B fragments (a lane's float4 of them the
        // operands of n-tiles 2 p and 2 p + 1, a warp's 512 contiguous bytes). Its sums, rows g and
        // g + 8 of m-tile i by columns 2 t and 2 t + 1 of n-tile j, are tiles 16 i + 2 g and + 1 of
        // outputs 8 j + 2 t and + 1.
        const unsigned g = lane >> 2, t = lane & 3u;
        const float4 *__restrict__ w_lane = (const float4 *)(us + warp * {{ c_block * k_block }}u) + lane;
        const float2 *__restrict__ x_lane = (const float2 *)(vs + warp * {{ tile_block }}u + t * {{ vs_pitch }}u + 2u * g);
{%- else %}
        // Lane l's outputs k0 + 32 i + 4 kq .. (i < {{ k_block // 32 }}), tiles tile0 + 4 tq .. and tile0 + 16 + 4 tq ..
        const unsigned kq = (lane & 15u) >> 1, tq = (lane & 1u) + ((lane >> 4) << 1);
        // The lane's first float4s of stage 0, channel 0: its weights (a: [element][c][k]) and its
        // tiles (b: [c][element][tile]). Worked out once, so that the loop's loads take constant
        // offsets: indexed inside the loop as (c {{ cta_elements }} + warp) {{ tile_block }}, each channel's tiles took an
        // address of their own (IADD3, LOP3, LEA), ~70 instructions a chunk beside 768 FFMA (6i, F(4x4, 3x3)).
        const float4 *__restrict__ a_lane = (const float4 *)(us + warp * {{ c_block * k_block }}u) + kq;
        const float4 *__restrict__ b_lane = (const float4 *)(vs + warp * {{ tile_block }}u) + tq;
{%- endif %}
        for (unsigned q = 0; q < {{ chunks }}u; ++q) {
            const unsigned st = q % {{ stages }}u;
            wait_phase(&uready[st * {{ cta_elements }}u + warp], q / {{ stages }}u & 1u); // the warp's weights of chunk q
            wait_phase(&full[st], q / {{ stages }}u & 1u);
{%- if tensor %}
            // the lane's operands of stage st: from here on every address is one of these plus a constant
            const float4 *__restrict__ w4 = w_lane + st * {{ us_floats // 4 }}u;
            const float2 *__restrict__ x2 = x_lane + st * {{ vs_floats // 2 }}u;
#pragma unroll
            for (unsigned s = 0; s < {{ c_block // 8 }}u; ++s) {
                // the tiles of m-tiles 0 and 1: channel 8 s + t and 8 s + t + 4, each value its own hi
                // half as loaded (the tensor cores read only its TF32 bits)
                unsigned x_hi[2][4], x_lo[2][4];
#pragma unroll
                for (int i = 0; i < 2; ++i) {
                    const float2 xt = x2[s * {{ 4 * vs_pitch }}u + 8u * i], xu = x2[s * {{ 4 * vs_pitch }}u + {{ 2 * vs_pitch }}u + 8u * i];
                    const float x[4] = {xt.x, xt.y, xu.x, xu.y}; // a0 .. a3: rows g, g + 8 by channels t, t + 4
#pragma unroll
                    for (int r = 0; r < 4; ++r)
                        x_hi[i][r] = __float_as_uint(x[r]), x_lo[i][r] = tf32_lo(x[r]);
                }
                // 3xTF32, lo hi + hi lo + hi hi (lo lo, below 2^-20 of the product, left out), the small
                // terms first; each term's products exact and summed in fp32, the sums keep fp32's
                // accuracy (bench/NOTES.md, "Issue 30, session 57"). A sum's three mma are 3 others apart.
#pragma unroll
                for (int p = 0; p < {{ k_block // 16 }}; ++p) {
                    const float4 w = w4[s * {{ 2 * k_block }}u + p * 32u]; // n-tiles 2 p and 2 p + 1
                    const unsigned w_hi[2][2] = { {__float_as_uint(w.x), __float_as_uint(w.y)}, {__float_as_uint(w.z), __float_as_uint(w.w)} };
                    const unsigned w_lo[2][2] = { {tf32_lo(w.x), tf32_lo(w.y)}, {tf32_lo(w.z), tf32_lo(w.w)} };
#pragma unroll
                    for (int n = 0; n < 4; ++n)
                        mma_tf32(acc[n & 1][2 * p + (n >> 1)], x_lo[n & 1], w_hi[n >> 1]);
#pragma unroll
                    for (int n = 0; n < 4; ++n)
                        mma_tf32(acc[n & 1][2 * p + (n >> 1)], x_hi[n & 1], w_lo[n >> 1]);
#pragma unroll
                    for (int n = 0; n < 4; ++n)
                        mma_tf32(acc[n & 1][2 * p + (n >> 1)], x_hi[n & 1], w_hi[n >> 1]);
                }
            }
{%- else %}
            // the lane's operands of stage st: from here on every address is one of these plus a constant
            const float4 *__restrict__ a4 = a_lane + st * {{ us_floats // 4 }}u, *__restrict__ b4 = b_lane + st * {{ vs_floats // 4 }}u;
#pragma unroll
            for (unsigned c = 0; c < {{ c_block }}u; ++c) {
                const float4 a[{{ k_block // 32 }}] = { {% for i in range(k_block // 32) %}{{ ", " if not loop.first }}a4[c * {{ k_block // 4 }}u{{ " + " ~ 8 * i ~ "u" if i }}]{% endfor %} };
                const float4 b_lo = b4[c * {{ vs_pitch // 4 }}u], b_hi = b4[c * {{ vs_pitch // 4 }}u + 4u];
                const float av[{{ lane_outputs }}] = { {% for i in range(k_block // 32) %}{{ ", " if not loop.first }}a[{{ i }}].x, a[{{ i }}].y, a[{{ i }}].z, a[{{ i }}].w{% endfor %} };
                const float bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
                for (int i = 0; i < {{ lane_outputs }}; ++i)
#pragma unroll
                    for (int j = 0; j < 8; ++j)
                        acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
{%- endif %}
            if (q + {{ stages }}u < {{ chunks }}u) { // the loaders wait for it only where they refill it
                // the warp's reads of stage st, before its arrival and before the copy engine refills it
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
                __syncwarp();
                if (lane < {{ cluster }}u)
                    arrive({{ "cluster_address(empty, lane)" if tensor else "empty_at" }} + st * 8u);
{{ fetch_weights("q + " ~ stages ~ "u", "st", "                ") }}
            }
        }
    }
    __syncthreads(); // every stage read: the products' shared memory may be reused

    // The products as [element][k][tile] in shared memory (ms), then M_r A per (k, tile) pair of
    // the block's rows, sent to the pair's owner: block p / {{ per_owner }} of the cluster, at
    // recv[((source rank {{ rows }} + row) {{ m1 }} + column) {{ per_owner }} + p % {{ per_owner }}] of its shared memory.
{%- if tensor %}
    // Output k's tile t lies at ms[(element {{ k_block }} + k) {{ tile_block }} + (t ^ swizzle(k))], swizzle(k) = 8 (k / 2 % 4)
    // (below); its readers take a row's 32 tiles, permuted, as before.
{%- else %}
    // Output k's tile t lies at ms[(element {{ k_block }} + k) {{ tile_block }} + (t ^ swizzle(k))], swizzle(k) = 8 (k / 4 % 4):
    // a quarter warp's float4 stores, rows 4 kq + i of four kq, would otherwise all fall in the
    // same 8 banks (a 4-way conflict); its readers take a row's 32 tiles, permuted, as before.
{%- endif %}
    float *__restrict__ ms = (float *)shared4, *__restrict__ recv = ms + {{ pairs * cta_elements }};
    if (warp < {{ cta_elements }}u) {
{%- if tensor %}
        // n-tile j's columns 2 t and 2 t + 1: outputs 8 j + 2 t and + 1, each tiles 16 i + 2 g and + 1
        // of m-tile i; swizzle(k) = 8 (k / 2 % 4) = 8 t here, so that a warp's float2 stores, row 2 t + c
        // of four t, fill the 32 banks twice and each half warp's once (16 (k / 2 % 2) left each half
        // warp 2-way conflicted, 0.5-3% slower on an H200; 8 (k / 4 % 4) put them four times in 16)
        const unsigned lane = tid & 31u, g = lane >> 2, t = lane & 3u, swizzle = t << 3;
#pragma unroll
        for (int j = 0; j < {{ k_block // 8 }}; ++j)
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                float *__restrict__ row = ms + (warp * {{ k_block }}u + 8u * j + 2u * t + c) * {{ tile_block }}u;
#pragma unroll
                for (int i = 0; i < 2; ++i)
                    *(float2 *)(row + ((16u * i + 2u * g) ^ swizzle)) = make_float2(acc[i][j][c], acc[i][j][c + 2]);
            }
{%- else %}
        const unsigned lane = tid & 31u, kq = (lane & 15u) >> 1, tq = (lane & 1u) + ((lane >> 4) << 1),
                       swizzle = (kq & 3u) << 3;
#pragma unroll
        for (int i = 0; i < {{ lane_outputs }}; ++i) {
            float *__restrict__ row = ms + (warp * {{ k_block }}u + 32u * (i / 4) + 4u * kq + i % 4) * {{ tile_block }}u;
            *(float4 *)(row + ((4u * tq) ^ swizzle)) = make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
            *(float4 *)(row + ((16u + 4u * tq) ^ swizzle)) = make_float4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        }
{%- endif %}
    }
    // Every block of the cluster is past its products (recv lies over their stages) and has
    // its ms; the release and acquire order this block's ms for all its threads too.
    cluster_sync();
    for (unsigned p = tid; p < {{ pairs }}u; p += {{ threads }}u) {
        const unsigned owner = p / {{ per_owner }}u;
        float *__restrict__ dst = peer(recv, owner) + rank * {{ rows * m1 * per_owner }}u + (p - owner * {{ per_owner }}u);
        const unsigned at = p ^ {{ "(p >> 6 & 3u) << 3" if tensor else "(p >> 7 & 3u) << 3" }}; // (k, t) at (k, t ^ swizzle(k))
{%- for i in range(rows) %}
        {
            const float in[{{ alpha1 }}] = { {% for j in range(alpha1) %}{{ ", " if not loop.first }}ms[{{ (i * alpha1 + j) * pairs }}u + at]{% endfor %} };
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
{%- if row_vector %}
    // A row of a tile's outputs is {{ ["one", "two", "three"][m1 // row_vector - 1] }} {{ row_vector }}-float store{{ "s" if row_vector < m1 }} where y is {{ row_vector * 4 }}-byte aligned (its
    // width a multiple of {{ row_vector }}), so that a warp's 32 neighbouring tiles write a contiguous run rather than
    // every {{ m1 }}th float of it.
    const bool aligned = ((size_t)out & {{ row_vector * 4 - 1 }}u) == 0u;
{%- endif %}
    for (unsigned lp = tid; lp < {{ per_owner }}u; lp += {{ threads }}u) {
        const unsigned p = rank * {{ per_owner }}u + lp, k = p / {{ tile_block }}u, t = p % {{ tile_block }}u, kk = k0 + k;
        const tile_at at = locate(tile0 + t);
        if (p >= {{ pairs }}u || !at.valid || kk >= {{ outputs }}u)
            continue;
{{- wino_fused_dst("        ") }}
        float z[{{ m0 }}][{{ m1 }}]; // the tile's outputs
{%- for j in range(m1) %}
        {
            const float in[{{ alpha0 }}] = { {% for i in range(alpha0) %}{{ ", " if not loop.first }}recv[{{ (i * m1 + j) * per_owner }}u + lp]{% endfor %} };
            float v[{{ m0 }}];
{{- wino_program(at0, "v", "            ") }}
{%- for i in range(m0) %}
            z[{{ i }}][{{ j }}] = {{ epilogue(epi, "v[" ~ i ~ "]", "kk") }};
{%- endfor %}
        }
{%- endfor %}
{%- for i in range(m0) %}
        {
            const unsigned y = at.t0 * {{ m0 }}u + {{ i }}u, x = at.t1 * {{ m1 }}u;
            float *__restrict__ row = dst + y * {{ out_width }}u + x;
{%- set ind = "                " if out_height % m0 else "            " %}
{%- if out_height % m0 %}
            if (y < {{ out_height }}u) {
{%- endif %}
{%- if row_vector %}
{{ ind }}if (aligned) {
{%- for q in range(m1 // row_vector) %}
{%- set piece = "*(float" ~ row_vector ~ " *)" ~ ("(row + " ~ q * row_vector ~ "u)" if q else "row") %}
{%- set value = "make_float" ~ row_vector ~ "(" %}
{%- if q and out_width % m1 %}
{{ ind }}    if (x + {{ q * row_vector }}u < {{ out_width }}u)
{{ ind }}        {{ piece }} = {{ value }}{% for j in range(q * row_vector, (q + 1) * row_vector) %}{{ ", " if j > q * row_vector }}z[{{ i }}][{{ j }}]{% endfor %});
{%- else %}
{{ ind }}    {{ piece }} = {{ value }}{% for j in range(q * row_vector, (q + 1) * row_vector) %}{{ ", " if j > q * row_vector }}z[{{ i }}][{{ j }}]{% endfor %});
{%- endif %}
{%- endfor %}
{{ ind }}} else {
{%- for j in range(m1) %}
{%- if out_width % m1 %}
{{ ind }}    if (x + {{ j }}u < {{ out_width }}u)
{{ ind }}        row[{{ j }}] = z[{{ i }}][{{ j }}];
{%- else %}
{{ ind }}    row[{{ j }}] = z[{{ i }}][{{ j }}];
{%- endif %}
{%- endfor %}
{{ ind }}}
{%- else %}
{%- for j in range(m1) %}
{%- if out_width % m1 %}
{{ ind }}if (x + {{ j }}u < {{ out_width }}u)
{{ ind }}    row[{{ j }}] = z[{{ i }}][{{ j }}];
{%- else %}
{{ ind }}row[{{ j }}] = z[{{ i }}][{{ j }}];
{%- endif %}
{%- endfor %}
{%- endif %}
{%- if out_height % m0 %}
            }
{%- endif %}
        }
{%- endfor %}
    }
}
