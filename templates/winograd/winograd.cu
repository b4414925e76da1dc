{#- The transforms of the non-fused Winograd algorithm (generator/winograd/winograd.c). One thread per
    tile, everything in registers, every index a constant:
    tiles:  a tile of one plane of in0 or in1 (zero outside the plane) through the transform of
            dimension 1 row by row, then of dimension 0 column by column; element e of the result
            goes to the workspace as [e][channel][outer][tile], where the GEMMs read it.
    output: the GEMMs' products of one (row, outer, tile) through AT the same way, stored into
            the tile's outputs of the plane, clipped at its edges, through a per-warp staging
            row so that the stores coalesce. fprop's y takes the layer's epilogue (the bias of
            output channel `row`, then ReLU) on its way into the staging row, while each value
            is still its own thread's: after the exchange a lane stores other lanes' tiles,
            whose `row` may differ.
    A volume (3-D layers) adds a depth dimension in front. A single-tile plane (the weights')
    takes one thread per element e0 along depth, which combines the tile's slices by row e0 of
    the depth matrix into one plane tile and runs the plane's transforms above on it, so no
    thread holds a whole volume tile (alpha^3 values); the tiles of a data volume have a kernel
    of their own (winograd/winograd_volume.cu). The output takes one thread per tile: it reads
    each element slice once, runs the plane's AT on it and adds the result into the m0 output
    planes it feeds (m0 m1 m2 sums in registers).
    The transform programs are wino_program()s: sums with the coefficients folded in. -#}
{%- include "common.cuh" -%}
{%- include "winograd/winograd.cuh" -%}
{#- output: the product at src + offset, the sum of the GEMM's runs where it split its sum -#}
{%- macro product(offset) -%}
{%- if out_splits > 1 %}({% for r in range(out_splits) %}{{ " + " if r }}src[{{ offset + r * out_partial }}ull]{% endfor %}){% else %}src[{{ offset }}ull]{% endif -%}
{%- endmacro -%}
{{ file_header(header) }}
{%- if pieces_lo %}

{{ tf32_lo_function() }}
{%- endif %}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    const unsigned g = blockIdx.x * {{ threads }}u + threadIdx.x;
{{- dependent_start(dependent) }}
{%- if stage == "tiles" %}
    if (g >= {{ count }}u)
        return;
{%- if blocked %}
    // g = ({{ "e0, " if volume }}block, channel, output): the weights' transforms blocked for winograd-fused's
    // cluster kernel, [e][output / {{ u_rows }}][channel][output % {{ u_rows }}]{{ " (each 8 channels in the B fragments' order, below)" if u_fragments }}, the outputs padded to {{ u_blocks * u_rows }}
    // and the channels to {{ padded_channels }}{{ " with zeros" if padded }}, so that a chunk of channels of a block of
    // outputs is one run of memory, which one bulk copy brings
    const unsigned run = {{ udiv("g", run_div) }}, at = g - run * {{ padded_channels * u_rows }}u;
{%- if volume %}
    const unsigned e0 = {{ udiv("run", blocks_div) }}, block = run - e0 * {{ u_blocks }}u;
{%- else %}
    const unsigned block = run;
{%- endif %}
{%- if u_fragments %}
    // at = (8 channels, f): each 8 channels x {{ u_rows }} outputs in the order of the tensor cores' B
    // fragments, f = (n-tiles 2 p and 2 p + 1, lane 4 g + t, value v): output 16 p + 8 (v >> 1) + g,
    // channel t + 4 (v & 1)
    const unsigned group = at / {{ 8 * u_rows }}u, f = at % {{ 8 * u_rows }}u, lane = f >> 2 & 31u, v = f & 3u;
    const unsigned channel = group * 8u + (lane & 3u) + 4u * (v & 1u),
                   outer = block * {{ u_rows }}u + 16u * (f >> 7) + 8u * (v >> 1) + (lane >> 2);
{%- else %}
    const unsigned channel = {{ udiv("at", u_rows_div) }}, outer = block * {{ u_rows }}u + (at - channel * {{ u_rows }}u);
{%- endif %}
{%- if padded %}
    const bool real = channel < {{ channels }}u && outer < {{ outer_count }}u; // else the padding: zeros
{%- endif %}
{%- elif pieces %}
{%- set row_names = "channels" if channel_rows else "(outer, tile)s" %}
{%- set sum_names = "(outer, tile)s" if channel_rows else "channels" %}
    // g = ({{ "e0, " if volume }}the position in the element's pieces): the transforms in the tensor-core GEMM's
    // pieces of {{ piece_rows }} rows ({{ row_names }}) x 16 of the sum ({{ sum_names }}), [row / {{ piece_rows }}][sum / 16]
    // (one bulk copy a piece{{ " with its lo halves after it" if pieces_lo }}), in each per 8 of the sum [rho / 8][sum / 4 % 2][rho % 8][sum % 4] (wgmma's
    // K-major core matrices){{ ", rho the row paired: row 2 g + h of each 16 at 8 h + g" if paired }}; the sum padded to {{ steps * 16 }}
    // and the rows to whole pieces{{ " with zeros" if padded }}, so that a warp's stores are 128 contiguous bytes
{%- if volume %}
    const unsigned e0 = {{ udiv("g", e_div) }}, at = g - e0 * {{ e_floats }}u;
{%- else %}
    const unsigned at = g;
{%- endif %}
    const unsigned piece = {{ udiv("at", piece_div) }}, within = at - piece * {{ piece_floats }}u;
    const unsigned block = {{ udiv("piece", steps_div) }}, step = piece - block * {{ steps }}u;
    const unsigned half = within >= {{ 8 * piece_rows }}u ? 1u : 0u, x = within - half * {{ 8 * piece_rows }}u;
    const unsigned rho = (x >> 6) * 8u + (x >> 2 & 7u);
    const unsigned row = block * {{ piece_rows }}u + {{ "(rho & ~15u) + 2u * (rho & 7u) + (rho >> 3 & 1u)" if paired else "rho" }};
    const unsigned sum = step * 16u + half * 8u + (x >> 5 & 1u) * 4u + (x & 3u);
    const unsigned channel = {{ "row" if channel_rows else "sum" }}, column = {{ "sum" if channel_rows else "row" }};
{%- if padded %}
    const bool real = channel < {{ channels }}u && column < {{ operand_columns }}u; // else the padding: zeros
{%- endif %}
{%- if tiles == 1 %}
    const unsigned outer = column;
{%- else %}
    const unsigned outer = {{ udiv("column", tiles_div) }}, tile = column - outer * {{ tiles }}u;
    const unsigned t0 = {{ udiv("tile", tiles1_div) }}, t1 = tile - t0 * {{ tiles1 }}u;
{%- endif %}
{%- elif volume %}
    // g = (e0, channel, outer, tile), the order of the transforms' layout, so that a warp's
    // stores are contiguous and its threads share e0; the tile = (tz, t0, t1)
{%- if tiles == 1 %}
    const unsigned pair = g;
{%- else %}
    const unsigned pair = {{ udiv("g", tiles_div) }}, tile = g - pair * {{ tiles }}u;
    const unsigned tz = {{ udiv("tile", plane_tiles_div) }}, flat = tile - tz * {{ plane_tiles }}u;
    const unsigned t0 = {{ udiv("flat", tiles1_div) }}, t1 = flat - t0 * {{ tiles1 }}u;
{%- endif %}
    const unsigned slab = {{ udiv("pair", outer_div) }}, outer = pair - slab * {{ outer_count }}u;
    const unsigned e0 = {{ udiv("slab", channels_div) }}, channel = slab - e0 * {{ channels }}u;
{%- else %}
    // g = (channel, outer, tile), the order of the transforms' layout, so that a warp's stores are
    // contiguous; the tile = (t0, t1)
{%- if tiles == 1 %}
    const unsigned pair = g;
{%- else %}
    const unsigned pair = {{ udiv("g", tiles_div) }}, tile = g - pair * {{ tiles }}u;
    const unsigned t0 = {{ udiv("tile", tiles1_div) }}, t1 = tile - t0 * {{ tiles1 }}u;
{%- endif %}
    const unsigned channel = {{ udiv("pair", outer_div) }}, outer = pair - channel * {{ outer_count }}u;
{%- endif %}
{%- if planes_transposed %}
    const unsigned plane = {{ "!real ? 0u : " if padded }}channel * {{ outer_count }}u + outer; // the planes read as [channel][outer]
{%- else %}
    const unsigned plane = {{ "!real ? 0u : " if padded }}outer * {{ channels }}u + channel;
{%- endif %}
    const float *__restrict__ src = {{ source }} + (size_t)plane * {{ points }}u;
{%- if tiles == 1 %}
    const int y0 = -({{ offset0 }}), x0 = -({{ offset1 }});
{%- else %}
    const int y0 = (int)(t0 * {{ step0 }}u) - ({{ offset0 }}), x0 = (int)(t1 * {{ step1 }}u) - ({{ offset1 }});
{%- endif %}
{%- if volume %}
    const int z0 = {{ "(int)(tz * " ~ depth_step ~ "u) - " if tiles != 1 else "-" }}({{ depth_offset }});
{%- endif %}
{%- if checked %}
    // the tile's {{ "slices, " if volume }}rows and columns inside the {{ "volume" if volume else "plane" }}; the rest reads as zero
{%- if volume %}
{%- for k in range(depth_span) %}
    const bool slice{{ k }} = (unsigned)(z0 + {{ k }}) < {{ depth }}u;
{%- endfor %}
{%- endif %}
{%- for i in range(span0) %}
    const bool row{{ i }} = (unsigned)(y0 + {{ i }}) < {{ height }}u;
{%- endfor %}
{%- for j in range(span1) %}
    const bool column{{ j }} = (unsigned)(x0 + {{ j }}) < {{ width }}u;
{%- endfor %}
{%- endif %}
{%- if volume %}
    // Row e0 of {{ depth_describe }}:
    // the tile's slices{{ " (reversed: a flipped kernel)" if flip }} combined into one plane tile.
    float d[{{ span0 }}][{{ span1 }}];
    switch (e0) {
{%- for row in depth_rows %}
    case {{ loop.index0 }}u:
{%- for i in range(span0) %}
{%- for j in range(span1) %}
{%- set y = span0 - 1 - i if flip else i %}
{%- set x = span1 - 1 - j if flip else j %}
        d[{{ i }}][{{ j }}] = {% for t in row %}{%- set z = depth_span - 1 - t.slice if flip else t.slice -%}
{{ wino_scaled(t, loop.first, ("(slice" ~ z ~ " && row" ~ y ~ " && column" ~ x ~ " ? " if checked else "") ~ ("(real ? " if padded else "") ~ "__ldg(src + (z0 + " ~ z ~ ") * " ~ height * width ~ " + (y0 + " ~ y ~ ") * " ~ width ~ " + x0 + " ~ x ~ ")" ~ (" : 0.0f)" if padded else "") ~ (" : 0.0f)" if checked else "")) }}{% endfor %};
{%- endfor %}
{%- endfor %}
        break;
{%- endfor %}
    }
{%- else %}
    float d[{{ span0 }}][{{ span1 }}]; // {{ "the tile reversed (a flipped kernel)" if flip else "the tile" }}
{%- for i in range(span0) %}
{%- for j in range(span1) %}
{%- set y = span0 - 1 - i if flip else i %}
{%- set x = span1 - 1 - j if flip else j %}
    d[{{ i }}][{{ j }}] = {{ "row" ~ y ~ " && column" ~ x ~ " ? " if checked }}{{ "real ? " if padded }}__ldg(src + (y0 + {{ y }}) * {{ width }} + x0 + {{ x }}){{ " : 0.0f" if padded }}{{ " : 0.0f" if checked }};
{%- endfor %}
{%- endfor %}
{%- endif %}
{%- else %}
    // Lanes past the end take part in their warp's exchange below, with nothing to store.
    const bool active = g < {{ count }}u;
    const unsigned at = active ? g : {{ count - 1 }}u;
{%- if whole %}
    // at = (row, column), the column = (outer, tile), the tile = (tz, t0, t1)
    const unsigned row = {{ udiv("at", columns_div) }}, column = at - row * {{ columns }}u;
    const unsigned outer = {{ udiv("column", tiles_div) }}, tile = column - outer * {{ tiles }}u;
    const unsigned tz = {{ udiv("tile", plane_tiles_div) }}, flat = tile - tz * {{ plane_tiles }}u;
    const unsigned t0 = {{ udiv("flat", tiles1_div) }}, t1 = flat - t0 * {{ tiles1 }}u;
    const float *__restrict__ src = workspace + {{ buffer }}ull + at;
    // The tile's element slices one at a time, each read once: through the plane's transforms,
    // then added into the output planes by column e0 of {{ depth_describe }}.
    float acc[{{ depth_outs }}][{{ outs0 }}][{{ outs1 }}] = {};
{%- for column in depth_rows %}
{%- set e0 = loop.index0 %}
    {
        float d[{{ span0 }}][{{ span1 }}];
{%- for i in range(span0) %}
{%- for j in range(span1) %}
        d[{{ i }}][{{ j }}] = {{ product(((e0 * span0 + i) * span1 + j) * e_stride) }};
{%- endfor %}
{%- endfor %}
{{- wino_rows(prog1, span0, span1, outs1, "u", "        ") }}
{%- for j in range(outs1) %}
        {
            {{ wino_column_in(span0, "u", j) }}
            float v[{{ outs0 }}];
{{- wino_program(prog0, "v", "            ") }}
{%- for t in column %}
{%- for i in range(outs0) %}
            acc[{{ t.row }}][{{ i }}][{{ j }}] = acc[{{ t.row }}][{{ i }}][{{ j }}]{{ wino_scaled(t, false, "v[" ~ i ~ "]") }};
{%- endfor %}
{%- endfor %}
        }
{%- endfor %}
    }
{%- endfor %}
{%- elif volume %}
    // at = (a, row, column): a the output plane along depth this thread makes (a tile's m0 m1 m2
    // sums would spill), outermost so that a warp's threads share it; the column = (outer, tile),
    // the tile = (tz, t0, t1)
    const unsigned slab = {{ udiv("at", columns_div) }}, column = at - slab * {{ columns }}u;
    const unsigned a = {{ udiv("slab", rows_div) }}, row = slab - a * {{ rows }}u;
    const unsigned outer = {{ udiv("column", tiles_div) }}, tile = column - outer * {{ tiles }}u;
    const unsigned tz = {{ udiv("tile", plane_tiles_div) }}, flat = tile - tz * {{ plane_tiles }}u;
    const unsigned t0 = {{ udiv("flat", tiles1_div) }}, t1 = flat - t0 * {{ tiles1 }}u;
    const float *__restrict__ src = workspace + {{ buffer }}ull + (at - a * {{ e_stride }}u);
    // Row a of {{ depth_describe }}:
    // the tile's element slices combined into one plane of elements.
    float d[{{ span0 }}][{{ span1 }}];
    switch (a) {
{%- for row in depth_rows %}
    case {{ loop.index0 }}u:
{%- for i in range(span0) %}
{%- for j in range(span1) %}
        d[{{ i }}][{{ j }}] = {% for t in row %}{{ wino_scaled(t, loop.first, product(((t.slice * span0 + i) * span1 + j) * e_stride)) }}{% endfor %};
{%- endfor %}
{%- endfor %}
        break;
{%- endfor %}
    }
{%- else %}
    // at = (row, column), the column = (outer, tile), the tile = (t0, t1)
    const unsigned row = {{ udiv("at", columns_div) }}, column = at - row * {{ columns }}u;
    const unsigned outer = {{ udiv("column", tiles_div) }}, tile = column - outer * {{ tiles }}u;
    const unsigned t0 = {{ udiv("tile", tiles1_div) }}, t1 = tile - t0 * {{ tiles1 }}u;
    const float *__restrict__ src = workspace + {{ buffer }}ull + at;
    float d[{{ span0 }}][{{ span1 }}];
{%- for i in range(span0) %}
{%- for j in range(span1) %}
    d[{{ i }}][{{ j }}] = {{ product((i * span1 + j) * e_stride) }};
{%- endfor %}
{%- endfor %}
{%- endif %}
{%- endif %}

{%- if stage == "tiles" or not whole %}

    // Dimension {{ 2 if volume else 1 }}, row by row: {{ describe1 }}
{{- wino_rows(prog1, span0, span1, outs1, "u", "    ") }}
    // Dimension {{ 1 if volume else 0 }}, column by column: {{ describe0 }}
{%- endif %}
{%- if stage == "tiles" %}
{%- if pieces_lo %}
    // each piece's hi halves, then its lo halves {{ piece_floats }} floats on
    float *__restrict__ dst = workspace + {{ buffer }}ull + at + piece * {{ piece_floats }}u{{ (" + (size_t)e0 * " ~ outs0 * outs1 * e_stride ~ "ull") if volume }};
{{- wino_columns_store(prog0, span0, outs0, outs1, "u", "dst", e_stride, "ull", "    ", piece_floats) }}
{%- else %}
    float *__restrict__ dst = workspace + {{ buffer }}ull + g{{ (" + (size_t)e0 * " ~ (outs0 * outs1 - 1) * e_stride ~ "ull") if volume }};
{{- wino_columns_store(prog0, span0, outs0, outs1, "u", "dst", e_stride, "ull", "    ") }}
{%- endif %}
{%- else %}
{%- if not whole %}
{%- for j in range(outs1) %}
    float r{{ j }}[{{ outs0 }}]; // column {{ j }} of the tile's outputs
    {
        {{ wino_column_in(span0, "u", j) }}
{{- wino_program(prog0, "r" ~ j, "        ") }}
    }
{%- endfor %}
{%- endif %}

    // The stores go through shared memory one output row at a time, so that a warp writes its
    // tiles' rows in contiguous runs rather than {{ outs1 }}-float pieces {{ outs1 }} floats apart.
    __shared__ float stage[{{ threads // 32 }}][{{ 32 * outs1 }}];
    float *__restrict__ mine = stage[threadIdx.x >> 5];
    const unsigned lane = threadIdx.x & 31u;
{%- set planes = depth_outs if whole else 1 %}
{%- if volume %}
{%- set first_plane = "tz * " ~ depth_outs ~ "u" ~ ("" if whole else " + a") %}
    // Where this lane's {{ "tile" if whole else "plane of the tile" }} starts{{ " (the volume reversed: its last point)" if flip }}, and how many of its planes, rows and columns are inside.
    const long long start = (long long)outer * {{ outer_stride }}ll + (long long)row * {{ row_stride }}ll + {{ (points - 1) ~ " - " if flip }}(long long)(({{ first_plane }}) * {{ height * width }}u + t0 * {{ outs0 * width }}u + t1 * {{ outs1 }}u);
    const int planes_in = active ? min({{ planes }}, {{ depth }} - (int)({{ first_plane }})) : 0;
{%- else %}
    // Where this lane's tile starts{{ " (the plane reversed: its last point)" if flip }}, and how many of its rows and columns are inside.
    const long long start = (long long)outer * {{ outer_stride }}ll + (long long)row * {{ row_stride }}ll + {{ (height * width - 1) ~ " - " if flip }}(long long)(t0 * {{ outs0 * width }}u + t1 * {{ outs1 }}u);
{%- endif %}
    const int rows_in = active ? min({{ outs0 }}, {{ height }} - (int)(t0 * {{ outs0 }}u)) : 0;
    const int columns_in = min({{ outs1 }}, {{ width }} - (int)(t1 * {{ outs1 }}u));
    // Element lane + 32 q of a staged row is column b_q of lane from_q's tile.
{%- for q in range(outs1) %}
    const unsigned from{{ q }} = (lane + {{ 32 * q }}u) / {{ outs1 }}u;
    const int b{{ q }} = (int)(lane + {{ 32 * q }}u - from{{ q }} * {{ outs1 }}u);
    const long long start{{ q }} = __shfl_sync(0xffffffffu, start, from{{ q }});
    const int rows{{ q }} = __shfl_sync(0xffffffffu, rows_in, from{{ q }});
{%- if volume %}
    const int planes{{ q }} = __shfl_sync(0xffffffffu, planes_in, from{{ q }});
{%- endif %}
    const bool inside{{ q }} = b{{ q }} < __shfl_sync(0xffffffffu, columns_in, from{{ q }});
{%- endfor %}
{%- for z in range(planes) %}
{%- for a in range(outs0) %}
    __syncwarp();
{%- for j in range(outs1) %}
    mine[lane * {{ outs1 }}u + {{ j }}u] = {{ epilogue(epi, ("acc[" ~ z ~ "][" ~ a ~ "][" ~ j ~ "]") if whole else ("r" ~ j ~ "[" ~ a ~ "]"), "row") }};
{%- endfor %}
    __syncwarp();
{%- for q in range(outs1) %}
    if ({{ (z ~ " < planes" ~ q ~ " && ") if volume }}{{ a }} < rows{{ q }} && inside{{ q }})
        out[start{{ q }} {{ "-" if flip else "+" }} ({{ z * height * width + a * width }} + b{{ q }})] = mine[lane + {{ 32 * q }}u];
{%- endfor %}
{%- endfor %}
{%- endfor %}
{%- endif %}
{{- dependent_end(dependent) }}
}
