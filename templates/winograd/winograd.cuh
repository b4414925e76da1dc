{#- Winograd transform programs (generator/winograd/winograd_program.c): one statement per temporary, each
    a sum of terms whose coefficients are folded in: +-1 as additions and subtractions, other
    constants as fp32 literals; terms with a zero coefficient never reach the template. -#}

{#- One term of a sum, t's coefficient times `operand`: "x", " + x", " - c * x" ... -#}
{%- macro wino_scaled(t, first, operand) -%}
{%- if first -%}{{ "-" if t.negative }}{%- else -%}{{ " - " if t.negative else " + " }}{%- endif -%}
{%- if not t.unit -%}{{ t.magnitude|f32 }} * {% endif -%}{{ operand }}
{%- endmacro -%}

{#- One term of a program's sum: its coefficient times its operand. -#}
{%- macro wino_term(t, first) -%}{{ wino_scaled(t, first, t.operand) }}{%- endmacro -%}

{#- The statements of program `prog`, then its outputs: out[i] = the temporary holding row i. -#}
{%- macro wino_program(prog, out, indent) -%}
{%- for s in prog.stmts %}
{{ indent }}const float {{ s.name }} = {% for t in s.terms %}{{ wino_term(t, loop.first) }}{% endfor %}{{ "0.0f" if not s.terms }};
{%- endfor %}
{%- for o in prog.outputs %}
{{ indent }}{{ out }}[{{ loop.index0 }}] = {{ o }};
{%- endfor %}
{%- endmacro -%}

{#- Dimension 1 of a 2-D transform: row i of d (`cols` values) through prog into the array
    `prefix`i of `outs` values, for each of the `rows` rows. -#}
{%- macro wino_rows(prog, rows, cols, outs, prefix, indent) -%}
{%- for i in range(rows) %}
{{ indent }}float {{ prefix }}{{ i }}[{{ outs }}];
{{ indent }}{
{{ indent }}    const float in[{{ cols }}] = { {% for j in range(cols) %}{{ ", " if not loop.first }}d[{{ i }}][{{ j }}]{% endfor %} };
{{- wino_program(prog, prefix ~ i, indent ~ "    ") }}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- Dimension 0's input for column j: the rows' results `prefix`0[j], `prefix`1[j], ... -#}
{%- macro wino_column_in(rows, prefix, j) -%}
const float in[{{ rows }}] = { {% for i in range(rows) %}{{ ", " if not loop.first }}{{ prefix }}{{ i }}[{{ j }}]{% endfor %} };
{%- endmacro -%}

{#- Dimension 0 of a 2-D transform column by column: column j of the rows' results `prefix`i[j]
    through prog, result (i, j) of the outs0 x outs1 to dst[(i outs1 + j) stride], the offset a
    literal with `suffix` ("u", or "ull" past 32 bits); where `lo` > 0, its lo half for 3xTF32
    (tf32_lo, the caller's) lo floats on. -#}
{%- macro wino_columns_store(prog, rows, outs0, outs1, prefix, dst, stride, suffix, indent, lo=0) -%}
{%- for j in range(outs1) %}
{{ indent }}{
{{ indent }}    {{ wino_column_in(rows, prefix, j) }}
{{ indent }}    float v[{{ outs0 }}];
{{- wino_program(prog, "v", indent ~ "    ") }}
{%- for i in range(outs0) %}
{{ indent }}    {{ dst }}[{{ (i * outs1 + j) * stride }}{{ suffix }}] = v[{{ i }}];
{%- if lo %}
{{ indent }}    {{ dst }}[{{ (i * outs1 + j) * stride + lo }}{{ suffix }}] = __uint_as_float(tf32_lo(v[{{ i }}]));
{%- endif %}
{%- endfor %}
{{ indent }}}
{%- endfor %}
{%- endmacro -%}

{#- d (`rows` x `cols`) through prog1 along dimension 1 row by row, then prog0 along dimension 0
    column by column; result (i, j) of the outs0 x outs1 goes to dst[(i outs1 + j) stride]. -#}
{%- macro wino_2d_store(prog1, prog0, rows, cols, outs1, outs0, dst, stride, indent) -%}
{{- wino_rows(prog1, rows, cols, outs1, "w", indent) }}
{{- wino_columns_store(prog0, rows, outs0, outs1, "w", dst, stride, "u", indent) }}
{%- endmacro -%}

{#- The fused kernels' tile (t0, t1) of image n (and of output slice tz, for a 3-D layer) for column
    `tile` of the batch's {{ columns }} (image, tile) pairs; past the last one, column 0's with valid
    false. -#}
{%- macro wino_locate() -%}
// One (image, tile) column of the batch: its image and position, and whether it exists.
struct tile_at {
    unsigned n{{ ", tz" if volume }}, t0, t1;
    bool valid;
};

__device__ __forceinline__ tile_at locate(unsigned tile)
{
    tile_at at;
    at.valid = tile < {{ columns }}u;
    const unsigned t = at.valid ? tile : 0u;
    at.n = {{ udiv("t", tiles_div) }};
{%- if volume %}
    const unsigned slice = t - at.n * {{ tiles }}u; // the tile's place in its image: slice tz, then the plane
    at.tz = {{ udiv("slice", plane_tiles_div) }};
    const unsigned rest = slice - at.tz * {{ plane_tiles }}u;
{%- else %}
    const unsigned rest = t - at.n * {{ tiles }}u;
{%- endif %}
    at.t0 = {{ udiv("rest", tiles1_div) }};
    at.t1 = rest - at.t0 * {{ tiles1 }}u;
    return at;
}
{%- endmacro -%}


{#- The tile of `rows` x `cols` points from (y0, x0) of the plane at `src` (`height` x `width`) into
    shared memory by cp.async, point q at raw[q tasks]; zeros outside the plane and where `here`
    is false. -#}
{%- macro wino_fetch_tile(raw, tasks, src, y0, x0, rows, cols, height, width, indent) -%}
{{ indent }}{
{{ indent }}    const float *__restrict__ corner = {{ src }} + {{ y0 }} * {{ width }} + {{ x0 }}; // the tile's first point
{%- for i in range(rows) %}
{{ indent }}    const bool row{{ i }} = here && (unsigned)({{ y0 }} + {{ i }}) < {{ height }}u;
{%- endfor %}
{%- for j in range(cols) %}
{{ indent }}    const bool column{{ j }} = (unsigned)({{ x0 }} + {{ j }}) < {{ width }}u;
{%- endfor %}
{%- for i in range(rows) %}
{%- for j in range(cols) %}
{{ indent }}    copy4({{ raw }} + {{ (i * cols + j) * tasks }}u, corner + {{ i * width + j }}, row{{ i }} && column{{ j }});
{%- endfor %}
{%- endfor %}
{{ indent }}}
{%- endmacro -%}

{#- The tile at raw[q tasks] (`rows` x `cols`, as wino_fetch_tile left it) into the array d. -#}
{%- macro wino_read_tile(raw, tasks, rows, cols, indent) -%}
{{ indent }}float d[{{ rows }}][{{ cols }}];
{%- for i in range(rows) %}
{%- for j in range(cols) %}
{{ indent }}d[{{ i }}][{{ j }}] = {{ raw }}[{{ (i * cols + j) * tasks }}u];
{%- endfor %}
{%- endfor %}
{%- endmacro -%}

{#- The fused fprop and bprop kernels' chunk q of a 3-D layer's sum over (depth tap, channel). -#}
{%- macro wino_fused_chunk() -%}
// Chunk q of the sum over (depth tap, channel), the taps outermost: its tap and first channel;
// past the last chunk, no channel (nothing is loaded).
struct chunk_at {
    unsigned dz, c0;
};

__device__ __forceinline__ chunk_at chunk(unsigned q)
{
    chunk_at at;
    at.dz = {{ udiv("q", slice_div) }};
    at.c0 = at.dz < {{ depth_taps }}u ? (q - at.dz * {{ slice_chunks }}u) * {{ c_block }}u : {{ channels }}u;
    return at;
}
{%- endmacro -%}

{#- The fused fprop and bprop kernels' helpers: locate(), a 3-D layer's chunk(), and cp.async of 4
    bytes and of {{ vec * 4 }} (the weights' copies). -#}
{%- macro wino_fused_helpers() -%}
{{ wino_locate() }}
{%- if volume %}

{{ wino_fused_chunk() }}
{%- endif %}

{{ copy_async(4) }}
{%- if vec > 1 or w_vec > 1 %}

{{ copy_async(16) }}
{%- endif %}
{%- endmacro -%}

{#- The fused fprop and bprop kernels' output plane of channel kk for the tile `at`: dst. -#}
{%- macro wino_fused_dst(indent) -%}
{%- if volume %}
{{ indent }}float *__restrict__ dst = out + (((size_t)at.n * {{ outputs }}u + kk) * {{ out_depth }}u + at.tz) * {{ out_height * out_width }}ull;
{%- else %}
{{ indent }}float *__restrict__ dst = out + ((size_t)at.n * {{ outputs }}u + kk) * {{ out_height * out_width }}ull;
{%- endif %}
{%- endmacro -%}

{#- Column j of the tile `at`'s outputs from `in` (its {{ alpha0 }} values along dimension 0): AT, the
    epilogue (channel kk's), the stores into dst, clipped to the plane. -#}
{%- macro wino_fused_store_column(j, indent) -%}
{{ indent }}float v[{{ m0 }}];
{{- wino_program(at0, "v", indent) }}
{%- for i in range(m0) %}
{{ indent }}{
{{ indent }}    const unsigned y = at.t0 * {{ m0 }}u + {{ i }}u, x = at.t1 * {{ m1 }}u + {{ j }}u;
{%- if out_checked %}
{{ indent }}    if (y < {{ out_height }}u && x < {{ out_width }}u)
{%- endif %}
{{ indent }}    dst[y * {{ out_width }}u + x] = {{ epilogue(epi, "v[" ~ i ~ "]", "kk") }};
{{ indent }}}
{%- endfor %}
{%- endmacro -%}
