{#- The fused Winograd accgrad (generator/winograd/winograd_fused.c), F(r, m): dw's taps of a (k, c) pair are
    AT [ sum over the batch's tiles of (G dy G^T) . (BT x B) ] A, dy's {{ r0 }} x {{ r1 }} tiles as the filters and
    the {{ m0 }} x {{ m1 }} taps as F(m, r)'s outputs.
    One block per {{ k_block }} output x {{ c_block }} input channels{{ " and run of " ~ run ~ " tiles" if splits > 1 }}; per chunk of
    {{ t_block }} tiles, x's and dy's tiles ({{ x_tasks + dy_tasks }} of them) arrive in shared memory by cp.async, in one of
    two stages while the previous chunk's transforms and products run (one stage where two do not fit: while its
    products run), go through BT and G as [e][channel][tile], and each
    thread sums one element's 8 x 8 block of (k, c) products over the chunk. After the last chunk
    the sums go through shared memory and AT into dw{{ " (or the run's partial dw)" if splits > 1 }}.
    A 3-D layer's tiles are one slice deep and its channels (x's channel, depth tap) pairs, {{ depth_taps }} to
    a channel of x: the tap's tiles of x come from the slice it reaches, and dw's planes of an output
    channel are the {{ channels }} sums' in order. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{{ file_header(header) }}

{#- The loop over the chunk's {{ x_tasks + dy_tasks }} tasks (x's tiles, then dy's), round r's task of a thread
    r {{ threads }} + tid, or, in odd rounds, r {{ threads }} + {{ threads - 1 }} - tid: a thread whose first task is an x tile (the
    costlier: more points, BT) takes its second one last, if at all. The loads and transforms of a
    chunk run between the same two barriers, so the busiest thread's share is what they cost. -#}
{%- macro each_task() -%}
for (unsigned r = 0, p = tid; p < {{ x_tasks + dy_tasks }}u; ++r, p = r * {{ threads }}u + ((r & 1u) ? {{ threads - 1 }}u - tid : tid))
{%- endmacro -%}

{#- The raw tiles of the chunk from column `col0` into shared memory by cp.async: task p < {{ x_tasks }} is x's
    channel p / {{ t_block }} at column col0 + p % {{ t_block }}, the next {{ dy_tasks }} dy's the same way; point q of x's
    task p at xd[q {{ x_tasks }} + p], of dy's task t at dd[q {{ dy_tasks }} + t] (zeros outside the planes and the run). -#}
{%- macro fetch_tiles(col0, xd, dd, indent) -%}
{{ indent }}{{ each_task() }} {
{{ indent }}    const unsigned col = {{ col0 }} + p % {{ t_block }}u;
{{ indent }}    const tile_at at = locate(col); // past the run, a tile that goes unused (here is false)
{{ indent }}    if (p < {{ x_tasks }}u) {
{{ indent }}        const unsigned c = c0 + p / {{ t_block }}u;
{%- if volume %}
{{ indent }}        const unsigned xc = {{ udiv("c", taps_div) }}, z = at.tz + (c - xc * {{ depth_taps }}u) - {{ offset_z }}u; // x's channel and the slice its tap reads
{{ indent }}        const bool here = col < end && c < {{ channels }}u && z < {{ depth }}u; // z wraps past the top
{%- else %}
{{ indent }}        const bool here = col < end && c < {{ channels }}u;
{%- endif %}
{{ indent }}        const int y0 = (int)(at.t0 * {{ step0 }}u) - ({{ offset0 }}), x0 = (int)(at.t1 * {{ step1 }}u) - ({{ offset1 }});
{%- if volume %}
{{ indent }}        const float *__restrict__ src = in0 + (((size_t)at.n * {{ x_channels }}u + (here ? xc : 0u)) * {{ depth }}u + (here ? z : 0u)) * {{ height * width }}u;
{%- else %}
{{ indent }}        const float *__restrict__ src = in0 + ((size_t)at.n * {{ channels }}u + (here ? c : 0u)) * {{ height * width }}u;
{%- endif %}
{{ wino_fetch_tile(xd ~ " + p", x_tasks, "src", "y0", "x0", alpha0, alpha1, height, width, indent ~ "        ") }}
{{ indent }}    } else {
{{ indent }}        const unsigned q = p - {{ x_tasks }}u, k = k0 + q / {{ t_block }}u;
{{ indent }}        const bool here = col < end && k < {{ outputs }}u;
{{ indent }}        const int y0 = (int)(at.t0 * {{ step0 }}u), x0 = (int)(at.t1 * {{ step1 }}u);
{%- if volume %}
{{ indent }}        const float *__restrict__ src = in1 + (((size_t)at.n * {{ outputs }}u + (here ? k : 0u)) * {{ out_depth }}u + at.tz) * {{ out_height * out_width }}u;
{%- else %}
{{ indent }}        const float *__restrict__ src = in1 + ((size_t)at.n * {{ outputs }}u + (here ? k : 0u)) * {{ out_height * out_width }}u;
{%- endif %}
{{ wino_fetch_tile(dd ~ " + q", dy_tasks, "src", "y0", "x0", r0, r1, out_height, out_width, indent ~ "        ") }}
{{ indent }}    }
{{ indent }}}
{{ indent }}asm volatile("cp.async.commit_group;\n" ::);
{%- endmacro -%}

{#- The chunk's raw tiles (x's at xs, dy's at ds_) through BT and G into vs and ds. -#}
{%- macro transform_chunk(xs, ds_) -%}
        // The chunk's tiles through BT (x's) and G (dy's): dimension 1 row by row, then
        // dimension 0 column by column.
        {{ each_task() }} {
            if (p < {{ x_tasks }}u) {
{{ wino_read_tile("(" ~ xs ~ " + p)", x_tasks, alpha0, alpha1, "                ") }}
                float *__restrict__ dst = vs + (p / {{ t_block }}u) * {{ t_block }}u + p % {{ t_block }}u;
{{- wino_2d_store(bt1, bt0, alpha0, alpha1, alpha1, alpha0, "dst", c_block * t_block, "                ") }}
            } else {
                const unsigned q = p - {{ x_tasks }}u;
{{ wino_read_tile("(" ~ ds_ ~ " + q)", dy_tasks, r0, r1, "                ") }}
                float *__restrict__ dst = ds + (q / {{ t_block }}u) * {{ t_block }}u + q % {{ t_block }}u;
{{- wino_2d_store(g1, g0, r0, r1, alpha1, alpha0, "dst", k_block * t_block, "                ") }}
            }
        }
{%- endmacro -%}

{#- The chunk's products: each thread's 8 x 8 sums of its element over the chunk's tiles. -#}
{%- macro products() -%}
        // The chunk's products, four tiles per float4.
#pragma unroll
        for (unsigned q = 0; q < {{ t_block // 4 }}u; ++q) {
            float4 a[8], b[8];
#pragma unroll
            for (int i = 0; i < 8; ++i) {
                a[i] = *(const float4 *)(ds + (e * {{ k_block }}u + kq + 4u * i) * {{ t_block }}u + 4u * q);
                b[i] = *(const float4 *)(vs + (e * {{ c_block }}u + cq + 2u * i) * {{ t_block }}u + 4u * q);
            }
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) {
                    acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
                    acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
                    acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
                    acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
                }
        }
{%- endmacro -%}

{{ wino_locate() }}

{{ copy_async(4) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    extern __shared__ float4 shared4[];
    float *__restrict__ vs = (float *)shared4;                                // [e][c][tile]: x's transforms
    float *__restrict__ ds = vs + {{ elements * c_block * t_block }};   // [e][k][tile]: dy's
    const unsigned tid = threadIdx.x;
    const unsigned c0 = blockIdx.x * {{ c_block }}u, k0 = blockIdx.y * {{ k_block }}u;
{%- if splits > 1 %}
    const unsigned first = blockIdx.z * {{ run }}u, end = min(first + {{ run }}u, {{ columns }}u);
{%- else %}
    const unsigned first = 0, end = {{ columns }}u;
{%- endif %}
    // This thread's sums: element e, output channels k0 + kq + 4 i, input channels c0 + cq + 2 j
    // (interleaved, so that the float4 reads of a quarter warp fall in distinct banks).
    const unsigned e = tid >> 3, kq = tid & 3u, cq = (tid >> 2) & 1u;
{{ acc_8x8("    ") }}

{%- if stages == 2 %}
    // Two stages of the tiles as loaded, [point][task], x's then dy's: stage s at xr and dr + s {{ raw_stage }}.
{%- else %}
    // The tiles as loaded, [point][task], x's then dy's.
{%- endif %}
    float *__restrict__ xr = ds + {{ elements * k_block * t_block }};
    float *__restrict__ dr = xr + {{ alpha0 * alpha1 * x_tasks }};
{{ fetch_tiles("first", "xr", "dr", "    ") }}
{%- if stages == 2 %}
    for (unsigned col0 = first, stage = 0; col0 < end; col0 += {{ t_block }}u, stage ^= 1u) {
        asm volatile("cp.async.wait_group 0;\n" ::); // this chunk's tiles
        __syncthreads(); // seen by all, and the chunk before's products done with vs and ds
        const float *__restrict__ cx = xr + stage * {{ raw_stage }}u, *__restrict__ cd = dr + stage * {{ raw_stage }}u;
        // The next chunk's tiles into the other stage, in flight during this chunk's transforms and
        // products (past the run: zeros, nothing loaded).
{{ fetch_tiles("col0 + " ~ t_block ~ "u", "(xr + (stage ^ 1u) * " ~ raw_stage ~ "u)", "(dr + (stage ^ 1u) * " ~ raw_stage ~ "u)", "        ") }}
        {{ transform_chunk("cx", "cd") }}
        __syncthreads();
        {{ products() }}
    }
{%- else %}
    for (unsigned col0 = first; col0 < end; col0 += {{ t_block }}u) {
        asm volatile("cp.async.wait_group 0;\n" ::); // this chunk's tiles
        __syncthreads(); // seen by all, and the chunk before's products done with vs and ds
        {{ transform_chunk("xr", "dr") }}
        __syncthreads();
        // The next chunk's tiles, in flight during this chunk's products (past the run: zeros,
        // nothing loaded).
{{ fetch_tiles("col0 + " ~ t_block ~ "u", "xr", "dr", "        ") }}
        {{ products() }}
    }
{%- endif %}

    asm volatile("cp.async.wait_all;\n" ::); // the zeros past the run
    __syncthreads();

    // The sums as [e][k][c] in shared memory (an element's {{ k_block * c_block }} padded by one float,
    // so that the elements' stores spread over the banks), then AT M A per (k, c).
    float *__restrict__ ms = (float *)shared4;
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j)
            ms[e * {{ k_block * c_block + 1 }}u + (kq + 4u * i) * {{ c_block }}u + cq + 2u * j] = acc[i][j];
    __syncthreads();
    for (unsigned p = tid; p < {{ k_block * c_block }}u; p += {{ threads }}u) {
        const unsigned k = k0 + p / {{ c_block }}u, c = c0 + p % {{ c_block }}u;
        if (k >= {{ outputs }}u || c >= {{ channels }}u)
            continue;
        float d[{{ alpha0 }}][{{ alpha1 }}];
{%- for i in range(alpha0) %}
{%- for j in range(alpha1) %}
        d[{{ i }}][{{ j }}] = ms[{{ (i * alpha1 + j) * (k_block * c_block + 1) }}u + p];
{%- endfor %}
{%- endfor %}
{{- wino_rows(at1, alpha0, alpha1, m1, "w", "        ") }}
{%- set plane = "plane" if volume and flip else "c" %}
{%- if volume and flip %}
        const unsigned tap = c - {{ udiv("c", taps_div) }} * {{ depth_taps }}u, plane = c + {{ depth_taps - 1 }}u - 2u * tap; // the depth taps reversed too
{%- endif %}
{%- if splits > 1 %}
        float *__restrict__ dst = workspace + {{ buffer }}ull + (size_t)blockIdx.z * {{ partial }}u + (k * {{ channels }}u + {{ plane }}) * {{ m0 * m1 }}u;
{%- else %}
        float *__restrict__ dst = out + (k * {{ channels }}u + {{ plane }}) * {{ m0 * m1 }}u;
{%- endif %}
{%- for j in range(m1) %}
        {
            {{ wino_column_in(alpha0, "w", j) }}
            float v[{{ m0 }}];
{{- wino_program(at0, "v", "            ") }}
{%- for i in range(m0) %}
            dst[{{ m0 * m1 - 1 - (i * m1 + j) if flip else i * m1 + j }}u] = v[{{ i }}];{{ " // the taps reversed (convolution)" if flip and loop.first and j == 0 }}
{%- endfor %}
        }
{%- endfor %}
    }
}
