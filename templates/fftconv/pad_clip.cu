{#- The generated pieces of the cufft algorithm around cuFFT and cuBLAS (generator/fftconv/program.c):
    pad: every point of every padded image, from the operand or zero;
    clip: every element of the output, from its point of the padded images, scaled (in parts:
    the sum of the points of the shifts that reach it).
    Dimension d places source index t at position base + t * step (base - t * step when down),
    mirrored modulo the transform size when mirror; positions from limit on stay zero. -#}
{%- include "common.cuh" -%}

{#- The clip's store of v into element `point` of every output image g, then fprop's epilogue where
    the generator asks for it: y is [n][k], so image g's channel is g % k. `wrap` breaks the line. -#}
{%- macro store_images(v, wrap) -%}
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y){{ " {" if epi.bias }}
{%- if epi.bias %}
        const unsigned k = g - {{ udiv("g", k_div) }} * {{ k_size }}u; // the image's channel, its bias's
{%- endif %}
        out[(size_t)g * {{ points }}u + point] ={{ "\n            " if wrap else " " }}{{ epilogue(epi, v, "k") }};
{%- if epi.bias %}
    }
{%- endif %}
{%- endmacro -%}
{{ file_header(header) }}
{%- if not clip %}
{%- for d in dims %}

// Dimension {{ d.i }}: the {{ operand }} index at padded position q{{ " of tile `tile` (" ~ d.tiles ~ " along this dimension, " ~ d.tile_step ~ " apart)" if tiled }}, or -1 where the point is zero.
__device__ __forceinline__ int source{{ d.i }}(int q{{ ", int tile" if tiled }})
{
{%- if d.mirror %}
    const int v = q == 0 ? 0 : {{ d.size }} - q; // the mirror: its transform is the conjugate
{%- else %}
    const int v = q;
{%- endif %}
{%- if d.limit < d.size %}
    if (v >= {{ d.limit }})
        return -1;
{%- endif %}
    long long t = {{ d.from_v }}{{ " + (long long)tile * " ~ d.tile_step if tiled }}; // 64-bit: a bprop padding near 2^31 shifts by as much
{%- if d.step > 1 %}
    if (t < 0 || t % {{ d.step }} != 0)
        return -1;
    t /= {{ d.step }};
{%- else %}
    if (t < 0)
        return -1;
{%- endif %}
    return t < {{ d.count }} ? (int)t : -1;
}
{%- endfor %}
{%- endif %}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    const unsigned point = blockIdx.x * {{ threads }}u + threadIdx.x;
    if (point >= {{ points }}u)
        return;
{%- for g in digits %}
    const unsigned q{{ g.i - 1 }}_{{ g.i }} = {{ udiv(("point" if loop.first else "q" ~ (g.i) ~ "_" ~ (g.i + 1)), g.div) }};
    const unsigned q{{ g.i }} = {{ "point" if loop.first else "q" ~ g.i ~ "_" ~ (g.i + 1) }} - q{{ g.i - 1 }}_{{ g.i }} * {{ g.size }}u;
{%- endfor %}
    const unsigned q0 = {{ "point" if dims|length == 1 else "q0_1" }};
{%- if clip and tiled %}
{#- the tile's valid outputs from position base: 0 for a correlation's tiles #}
    // Output element q of image g: tile q / step along each dimension, at q % step in it.
{%- for d in dims %}
    const unsigned tile{{ d.i }} = {{ udiv("q" ~ d.i, d.tile_div) }}, r{{ d.i }} = q{{ d.i }} - tile{{ d.i }} * {{ d.tile_step }}u;
{%- endfor %}
{%- if dims|length == 3 %}
    const unsigned tile = tile0 * {{ inner_tiles }}u + tile1 * {{ last_tiles }}u + tile2;
{%- else %}
    const unsigned tile = {{ "tile0 * " ~ inner_tiles ~ "u + tile1" if dims|length == 2 else "tile0" }};
{%- endif %}
    const unsigned from = {% for d in dims %}{{ " + " if not loop.first }}{{ "(" ~ d.base ~ "u + r" ~ d.i ~ ")" if d.base else "r" ~ d.i }} * {{ d.padded_stride }}u{% endfor %};
    const float *__restrict__ padded = workspace + {{ real_offset }}ull;
    {{ store_images("padded[((size_t)tile * " ~ tile_images ~ "u + g) * " ~ padded_points ~ "u + from] * " ~ scale, true) }}
{%- elif clip and parts %}
    // Tap q of image g, at i = base + step * q along each dimension: the sum over the shifts d
    // whose lag i - d * block lies in (-block, block), read at (i - d * block) mod the size from
    // the shift's padded images [shift][image] (convolution in parts).
{%- for d in dims %}
    const int i{{ d.i }} = {{ d.base }} {{ "-" if d.down else "+" }} {{ d.step }} * (int)q{{ d.i }};
{%- endfor %}
    const float *__restrict__ padded = workspace + {{ real_offset }}ull;
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y) {
        float sum = 0.0f;
{%- for sh in shifts %}
        { // shift {{ sh.name }}
{%- for l in sh.lags %}
            const int l{{ l.i }} = i{{ l.i }} - {{ l.offset }};
{%- endfor %}
            if ({% for l in sh.lags %}{{ " && " if not loop.first }}l{{ l.i }} > -{{ l.block }} && l{{ l.i }} < {{ l.block }}{% endfor %})
                sum += padded[((size_t){{ sh.index }}u * {{ images }}u + g) * {{ padded_points }}u + {% for l in sh.lags %}{{ " + " if not loop.first }}(unsigned)(l{{ l.i }} < 0 ? l{{ l.i }} + {{ l.size }} : l{{ l.i }}) * {{ l.padded_stride }}u{% endfor %}];
        }
{%- endfor %}
        out[(size_t)g * {{ points }}u + point] = sum * {{ scale }};
    }
{%- elif clip %}
    // Output element q of image g: the padded image's point at base + step * q along each dimension.
    const unsigned from = {% for d in dims %}{{ " + " if not loop.first }}({{ d.base }}u {{ "-" if d.down else "+" }} {{ d.step }}u * q{{ d.i }}) * {{ d.padded_stride }}u{% endfor %};
    const float *__restrict__ padded = workspace + {{ real_offset }}ull;
    {{ store_images("padded[(size_t)g * " ~ padded_points ~ "u + from] * " ~ scale, false) }}
{%- elif tiled %}
    float *__restrict__ padded = workspace + {{ real_offset }}ull;
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y) { // [tile][image]
        const unsigned tile = {{ udiv("g", image_div) }}, image = g - tile * {{ tile_images }}u;
{%- if dims|length == 3 %}
        const unsigned tile0 = {{ udiv("tile", inner_div) }}, inner = tile - tile0 * {{ inner_tiles }}u;
        const unsigned tile1 = {{ udiv("inner", last_div) }}, tile2 = inner - tile1 * {{ last_tiles }}u;
{%- elif dims|length == 2 %}
        const unsigned tile0 = {{ udiv("tile", inner_div) }}, tile1 = tile - tile0 * {{ inner_tiles }}u;
{%- else %}
        const unsigned tile0 = tile;
{%- endif %}
{%- for d in dims %}
        const int t{{ d.i }} = source{{ d.i }}((int)q{{ d.i }}, (int)tile{{ d.i }});
{%- endfor %}
        const bool inside = {% for d in dims %}{{ " && " if not loop.first }}t{{ d.i }} >= 0{% endfor %};
        const unsigned from = inside ? {% for d in dims %}{{ " + " if not loop.first }}(unsigned)t{{ d.i }} * {{ d.tensor_stride }}u{% endfor %} : 0u;
        padded[(size_t)g * {{ points }}u + point] = inside ? {{ source }}[(size_t)image * {{ tensor_points }}u + from] : 0.0f;
    }
{%- else %}
{%- for d in dims %}
    const int t{{ d.i }} = source{{ d.i }}((int)q{{ d.i }});
{%- endfor %}
    const bool inside = {% for d in dims %}{{ " && " if not loop.first }}t{{ d.i }} >= 0{% endfor %};
    const unsigned from = inside ? {% for d in dims %}{{ " + " if not loop.first }}(unsigned)t{{ d.i }} * {{ d.tensor_stride }}u{% endfor %} : 0u;
    float *__restrict__ padded = workspace + {{ real_offset }}ull;
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y)
        padded[(size_t)g * {{ points }}u + point] = inside ? {{ source }}[(size_t)g * {{ tensor_points }}u + from] : 0.0f;
{%- endif %}
}
