{#- What direct's tensor forms (direct_tc.cu, direct_wgmma.cu) share: A's patch (the rows' lines of
    src in shared memory, copied once a chunk) and the start of a column's stores.
    generator/direct/direct_tc.c works out every constant. -#}

{#- line_of (a row's first line and column) and load_patch (a chunk's copies). -#}
{%- macro patch_functions() %}

// A's patch. {{ in0 }}'s lines, (image, row) with the padding's rows and columns, lie in one flat
// space of {{ image_lines }} lines an image, {{ line_len }} floats a line. Row r of the GEMM reads from its first line on
// (returned) and its column `col` there; src's tap (i, j) (w's, flipped where A's taps run backwards) is
// i x {{ tap_line }} + j x {{ tap_col }} floats further.
__device__ __forceinline__ unsigned line_of(unsigned r, unsigned &col)
{
{{- decompose(patch_row_digits, "    ") }}
    col = {{ times("rx", step_x) }};
    return rn * {{ image_lines }}u{% if step_y %} + {{ times("ry", step_y) }}{% endif %};
}

// A's chunk: the patch's {{ cc }} channels of {{ patch_floats }} floats, of which the tile's {{ patch_lines }} lines are the first
// {{ patch_used }}. Thread tid copies places tid + j x {{ threads }} (j < {{ patch_places }}) of every channel, from `src` (the
// tile's first image at the chunk's first channel) plus off[j] and the channel's offset, or zeros
// where bit j of `inside` is clear (padding, past the images){% if channel_guard %} or the channel is `left` or more{% endif %}.
__device__ __forceinline__ void load_patch(float *a, const float *src, const unsigned (&off)[{{ patch_places }}],
                                           unsigned inside, int left, unsigned tid)
{
#pragma unroll
    for (int j = 0; j < {{ patch_places }}; ++j) {
{%- if patch_used % threads %}
        if (j == {{ patch_places - 1 }} && tid >= {{ patch_used % threads }}u)
            break;
{%- endif %}
        const bool in = inside >> j & 1u;
#pragma unroll
        for (int ch = 0; ch < {{ cc }}; ++ch)
            copy4(a + ch * {{ patch_floats }} + tid + j * {{ threads }}, src + (long long)ch * {{ src_pixels }} + off[j], in{{ " && ch < left" if channel_guard }});
    }
}
{%- endmacro %}

{#- In the kernel: the tile's first line and image, this thread's places in the patch, their
    offsets in src and which lie inside it, and a_base. -#}
{%- macro patch_setup() %}
    // A's patch: the lines from the tile's first row's on; this thread's places in them, their
    // offsets in {{ in0 }} from the tile's first image, and which lie inside it (not padding, not past the images).
    unsigned first_col;
    const unsigned first_line = line_of(row0, first_col);
    const unsigned first_image = {{ udiv("first_line", by_image) }};
    unsigned off[{{ patch_places }}], inside = 0u;
#pragma unroll
    for (int j = 0; j < {{ patch_places }}; ++j) {
        const unsigned q = tid + j * {{ threads }}u, l = {{ udiv("q", by_line) }}, px = q - l * {{ line_len }}u;
        const unsigned line = first_line + l, image = {{ udiv("line", by_image) }}, py = line - image * {{ image_lines }}u;
        const int y = (int)py - ({{ origin_y }}), x = (int)px - ({{ origin_x }});
        const bool in = image < {{ images }}u && (unsigned)y < {{ src_h }}u && (unsigned)x < {{ src_w }}u;
        off[j] = in ? (image - first_image) * {{ src_c * src_pixels }}u + (unsigned)y * {{ src_w }}u + (unsigned)x : 0u;
        inside |= in ? 1u << j : 0u;
    }
    const long long a_base = (long long)first_image * {{ src_c }} * {{ src_pixels }};
{%- endmacro %}

{#- In the stores: column `col` of the GEMM (col_expr), none past its columns, and its bias. -#}
{%- macro store_column(col_expr) %}
            const unsigned col = {{ col_expr }};
            if (col >= {{ cols }}u)
                continue;
{%- if epi.bias %}
            const float b = __ldg(bias + col);
{%- endif %}
{%- endmacro -%}
