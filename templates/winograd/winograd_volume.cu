{#- The tile transforms of a 3-D layer's data volumes (generator/winograd/winograd_volume.c). One block per
    brick: {{ brick0 }} row(s) of {{ brick1 }} tiles at one tile along the depth, of one (channel, outer) volume.
    Phase A: every (row, column) of the brick's region reads its {{ depth_span }} slices once (consecutive
             threads on consecutive columns, zero outside the volume) and combines them by each row
             of the depth's matrix into {{ depth_alpha }} element planes in shared memory.
    Phase B: every (element e0, tile) reads its {{ span0 }} x {{ span1 }} points of plane e0 and runs the plane's
             transforms on them, dimension 1 row by row, then dimension 0 column by column; element
             e of the result goes to the workspace as [e][channel][outer][tile], where the GEMMs
             read it, consecutive threads on consecutive tiles.
    The transform programs are wino_program()s: sums with the coefficients folded in. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    // This block's brick: {{ brick0 }} row(s) of {{ brick1 }} tiles ({{ region_rows }} x {{ region_columns }} points a slice) at one tile
    // along the depth. Its element planes, [e0][row][column] with a float of padding after every
    // {{ bank_run }} columns, so that a warp's threads, {{ step1 }} columns apart, mostly read different banks.
    __shared__ float planes[{{ shared_floats }}];
    // block = (((pair, b0), b1), tz), tz fastest so that the blocks running together share slices;
    // pair = (channel, outer), the order of the transforms' layout
    const unsigned block = blockIdx.x;
    const unsigned rest1 = {{ udiv("block", tz_div) }}, tz = block - rest1 * {{ tiles_z }}u;
    const unsigned rest0 = {{ udiv("rest1", bricks1_div) }}, b1 = rest1 - rest0 * {{ bricks1 }}u;
    const unsigned pair = {{ udiv("rest0", bricks0_div) }}, b0 = rest0 - pair * {{ bricks0 }}u;
    const unsigned channel = {{ udiv("pair", outer_div) }}, outer = pair - channel * {{ outer_count }}u;
{%- if planes_transposed %}
    const unsigned plane = channel * {{ outer_count }}u + outer; // the volumes read as [channel][outer]
{%- else %}
    const unsigned plane = outer * {{ channels }}u + channel;
{%- endif %}
    const float *__restrict__ src = {{ source }} + (size_t)plane * {{ points }}u;
    // The region's first slice, row and column (negative: padding)
    const int z0 = (int)(tz * {{ depth_step }}u) - ({{ depth_offset }});
    const int y0 = (int)(b0 * {{ brick0 * step0 }}u) - ({{ offset0 }}), x0 = (int)(b1 * {{ brick1 * step1 }}u) - ({{ offset1 }});

    // Phase A: the region's {{ region_rows }} x {{ region_columns }} columns of {{ depth_span }} slices through {{ depth_describe }}{{ ", the slices reversed (a flipped kernel)" if flip }}.
    for (unsigned p = threadIdx.x; p < {{ column_tasks }}u; p += {{ threads }}u) {
        const unsigned r = {{ udiv("p", columns_div) }}, c = p - r * {{ region_columns }}u;
        const int y = y0 + (int)r, x = x0 + (int)c;
        const bool inside = (unsigned)y < {{ height }}u && (unsigned)x < {{ width }}u;
        const float *__restrict__ column = src + (inside ? y * {{ width }} + x : 0);
{%- for k in range(depth_span) %}
        const float s{{ k }} = inside && (unsigned)(z0 + {{ k }}) < {{ depth }}u ? __ldg(column + (z0 + {{ k }}) * {{ height * width }}) : 0.0f;
{%- endfor %}
        float *__restrict__ dst = planes + r * {{ pitch }}u + c + c / {{ bank_run }}u;
{%- for row in depth_rows %}
        dst[{{ loop.index0 * region_rows * pitch }}u] = {% for t in row %}{{ wino_scaled(t, loop.first, "s" ~ (depth_span - 1 - t.slice if flip else t.slice)) }}{% endfor %}{{ "0.0f" if not row }};
{%- endfor %}
    }
    __syncthreads();

    // Phase B: task p = (e0, tile of the brick), the tile = (ty, tx).
    for (unsigned p = threadIdx.x; p < {{ tile_tasks }}u; p += {{ threads }}u) {
        const unsigned e0 = {{ udiv("p", plane_tasks_div) }}, q = p - e0 * {{ brick0 * brick1 }}u;
        const unsigned ty = {{ udiv("q", brick1_div) }}, tx = q - ty * {{ brick1 }}u;
        const unsigned t0 = b0 * {{ brick0 }}u + ty, t1 = b1 * {{ brick1 }}u + tx;
        if (t0 >= {{ tiles0 }}u || t1 >= {{ tiles1 }}u)
            continue;
        const float *__restrict__ from = planes + e0 * {{ region_rows * pitch }}u + ty * {{ step0 * pitch }}u;
        const unsigned x = tx * {{ step1 }}u;
        float d[{{ span0 }}][{{ span1 }}]; // {{ "the tile reversed (a flipped kernel)" if flip else "the tile" }}
{%- for j in range(span1) %}
{%- set xj = span1 - 1 - j if flip else j %}
        const unsigned c{{ j }} = x + {{ xj }}u + (x + {{ xj }}u) / {{ bank_run }}u;
{%- endfor %}
{%- for i in range(span0) %}
{%- set yi = span0 - 1 - i if flip else i %}
{%- for j in range(span1) %}
        d[{{ i }}][{{ j }}] = from[{{ yi * pitch }}u + c{{ j }}];
{%- endfor %}
{%- endfor %}
        // Dimension 2, row by row: {{ describe1 }}
{{- wino_rows(prog1, span0, span1, outs1, "u", "        ") }}
        // Dimension 1, column by column: {{ describe0 }}
        const unsigned tile = (tz * {{ tiles0 }}u + t0) * {{ tiles1 }}u + t1;
        float *__restrict__ dst = workspace + {{ buffer }}ull + (size_t)e0 * {{ plane_elements * e_stride }}ull + (size_t)pair * {{ tiles }}u + tile;
{{- wino_columns_store(prog0, span0, outs0, outs1, "u", "dst", e_stride, "ull", "        ") }}
    }
}
