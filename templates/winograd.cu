{#- The transforms of the non-fused Winograd algorithm (generator/winograd.c). One thread per
    tile, everything in registers, every index a constant:
    tiles:  a tile of one plane of in0 or in1 (zero outside the plane) through the transform of
            dimension 1 row by row, then of dimension 0 column by column; element e of the result
            goes to the workspace as [e][channel][outer][tile], where the GEMMs read it.
    output: the GEMMs' products of one (row, outer, tile) through AT the same way, stored into
            the tile's outputs of the plane, clipped at its edges.
    The transform programs are wino_program()s: sums with the coefficients folded in. -#}
{%- include "common.cuh" -%}
{%- include "winograd.cuh" -%}
{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    const unsigned g = blockIdx.x * {{ threads }}u + threadIdx.x;
    if (g >= {{ count }}u)
        return;
{%- if stage == "tiles" %}
    // g = (channel, outer, tile), the order of the transforms' layout, so that a warp's stores are
    // contiguous; the tile = (t0, t1)
{%- if tiles == 1 %}
    const unsigned pair = g;
{%- else %}
    const unsigned pair = {{ udiv("g", tiles_div) }}, tile = g - pair * {{ tiles }}u;
    const unsigned t0 = {{ udiv("tile", tiles1_div) }}, t1 = tile - t0 * {{ tiles1 }}u;
{%- endif %}
    const unsigned channel = {{ udiv("pair", outer_div) }}, outer = pair - channel * {{ outer_count }}u;
    const unsigned plane = outer * {{ channels }}u + channel;
    const float *__restrict__ src = {{ source }} + (size_t)plane * {{ height * width }}u;
{%- if tiles == 1 %}
    const int y0 = -({{ offset0 }}), x0 = -({{ offset1 }});
{%- else %}
    const int y0 = (int)(t0 * {{ step0 }}u) - ({{ offset0 }}), x0 = (int)(t1 * {{ step1 }}u) - ({{ offset1 }});
{%- endif %}
{%- if checked %}
    // the tile's rows and columns inside the plane; the rest reads as zero
{%- for i in range(span0) %}
    const bool row{{ i }} = (unsigned)(y0 + {{ i }}) < {{ height }}u;
{%- endfor %}
{%- for j in range(span1) %}
    const bool column{{ j }} = (unsigned)(x0 + {{ j }}) < {{ width }}u;
{%- endfor %}
{%- endif %}
    float d[{{ span0 }}][{{ span1 }}]; // {{ "the tile reversed (a flipped kernel)" if flip else "the tile" }}
{%- for i in range(span0) %}
{%- for j in range(span1) %}
{%- set y = span0 - 1 - i if flip else i %}
{%- set x = span1 - 1 - j if flip else j %}
    d[{{ i }}][{{ j }}] = {{ "row" ~ y ~ " && column" ~ x ~ " ? " if checked }}__ldg(src + (y0 + {{ y }}) * {{ width }} + x0 + {{ x }}){{ " : 0.0f" if checked }};
{%- endfor %}
{%- endfor %}
{%- else %}
    // g = (row, column), the column = (outer, tile), the tile = (t0, t1)
    const unsigned row = {{ udiv("g", columns_div) }}, column = g - row * {{ columns }}u;
    const unsigned outer = {{ udiv("column", tiles_div) }}, tile = column - outer * {{ tiles }}u;
    const unsigned t0 = {{ udiv("tile", tiles1_div) }}, t1 = tile - t0 * {{ tiles1 }}u;
    const float *__restrict__ src = workspace + {{ buffer }}ull + g;
    float d[{{ span0 }}][{{ span1 }}];
{%- for i in range(span0) %}
{%- for j in range(span1) %}
    d[{{ i }}][{{ j }}] = src[{{ (i * span1 + j) * e_stride }}ull];
{%- endfor %}
{%- endfor %}
{%- endif %}

    // Dimension 1, row by row: {{ describe1 }}
{%- for i in range(span0) %}
    float u{{ i }}[{{ outs1 }}];
    {
        const float in[{{ span1 }}] = { {% for j in range(span1) %}{{ ", " if not loop.first }}d[{{ i }}][{{ j }}]{% endfor %} };
{{- wino_program(prog1, "u" ~ i, "        ") }}
    }
{%- endfor %}
    // Dimension 0, column by column: {{ describe0 }}
{%- if stage == "tiles" %}
    float *__restrict__ dst = workspace + {{ buffer }}ull + g;
{%- else %}
    float *__restrict__ dst = out + (size_t)outer * {{ outer_stride }}ull + (size_t)row * {{ row_stride }}ull;
{%- endif %}
{%- for j in range(outs1) %}
    {
        const float in[{{ span0 }}] = { {% for i in range(span0) %}{{ ", " if not loop.first }}u{{ i }}[{{ j }}]{% endfor %} };
        float v[{{ outs0 }}];
{{- wino_program(prog0, "v", "        ") }}
{%- for i in range(outs0) %}
{%- if stage == "tiles" %}
        dst[{{ (i * outs1 + j) * e_stride }}ull] = v[{{ i }}];
{%- else %}
        {
            const unsigned y = t0 * {{ outs0 }}u + {{ i }}u, x = t1 * {{ outs1 }}u + {{ j }}u;
{%- if checked %}
            if (y < {{ height }}u && x < {{ width }}u)
{%- endif %}
            dst[{{ "(" ~ (height - 1) ~ "u - y) * " ~ width ~ "u + " ~ (width - 1) ~ "u - x" if flip else "y * " ~ width ~ "u + x" }}] = v[{{ i }}];
        }
{%- endif %}
{%- endfor %}
    }
{%- endfor %}
}
