{#- The tile loads of convgen's generated GEMMs (gemm.cu, gemm_complex_tc.cu): each step's op(A)
    and op(B) tiles from global memory into shared memory by cp.async, in either stored layout.
    Interleaved (the FFT spectra, `group` entries a block): tile[entry][step][row], a step's rows
    `rows + row_pad` float2 apart (gemm_complex_tc.cu pads them so that its fragment reads spread
    over the banks). -#}
{#- The step from k0 of operand `x` where a thread's copies sit at constant offsets from its first
    (setup_fast): one pointer add and a copy each, `ds` step rows apart (where ds does not divide
    the step, the last copy only for the threads whose row is inside it). A copy outside the
    operand reads nothing (copy8's zeros), so its address goes unchecked: a constant offset from
    src, with no select of a safe pointer among the copy's instructions. Interleaved, into
    tile[entry][step][row], a float2 a copy; else (stored [sum][row]) into tile[step][row], `vec`
    elements a copy. -#}
{%- macro fetch_fast(x, tile, rows, outer, vec, ld, ds, copies, indent) -%}
{%- set sk = ld if outer else inc -%}
{{ indent }}{
{{ indent }}    const {{ elem }} *const src = {{ x }}_src + k0 * {{ sk }}u;
{{ indent }}#pragma unroll
{{ indent }}    for (unsigned i = 0; i < {{ copies }}u; ++i) {
{{ indent }}        const unsigned s = {{ x }}_s0 + {{ ds }}u * i;
{%- if step % ds %}
{{ indent }}        if (i == {{ copies - 1 }}u && s >= {{ step }}u) // the last copy only where the step has a row left
{{ indent }}            break;
{%- endif %}
{%- if k % step %}
{{ indent }}        const bool inside = {{ x }}_ok && k0 + s < {{ k }}u;
{%- else %}
{{ indent }}        const bool inside = {{ x }}_ok && k0 < {{ k }}u; // whole steps: the one past the sum is zeros
{%- endif %}
{%- if group > 1 %}
{{ indent }}        copy8(&{{ tile }}[{{ x }}_entry][s * {{ rows + row_pad }}u + {{ x }}_r], src + i * {{ ds * sk }}u, inside);
{%- else %}
{{ indent }}        copy{{ vec * esize }}(&{{ tile }}[s][{{ x }}_r], src + i * {{ ds * sk }}u, inside);
{%- endif %}
{{ indent }}    }
{{ indent }}}
{%- endmacro -%}

{#- A thread's first copy of operand `x` in every step: its row of the tile (and entry, where the
    GEMMs interleave), its first row of the step, whether the element exists, and where it is
    read at k0 = 0. -#}
{%- macro setup_fast(x, rows, extent, first, outer, vec, ld, indent) -%}
{%- if group > 1 %}
{%- set sk = ld if outer else inc -%}
{%- set sr = inc if outer else ld -%}
{{ indent }}const unsigned {{ x }}_entry = tid % {{ group }}u, {{ x }}_r = tid / {{ group }}u % {{ rows }}u, {{ x }}_s0 = tid / {{ group * rows }}u;
{{ indent }}const bool {{ x }}_ok = {{ first }} + {{ x }}_r < {{ extent }}u && entry0 + {{ x }}_entry < {{ batch }}u;
{{ indent }}const float2 *const {{ x }}_src = {{ x }} + ({{ x }}_ok ? entry0 + {{ x }}_entry + ({{ first }} + {{ x }}_r) * {{ sr }}u + {{ x }}_s0 * {{ sk }}u : 0u);
{%- else -%}
{{ indent }}const unsigned {{ x }}_r = tid % {{ rows // vec }}u * {{ vec }}u, {{ x }}_s0 = tid / {{ rows // vec }}u;
{{ indent }}const bool {{ x }}_ok = {{ first }} + {{ x }}_r < {{ extent }}u;
{{ indent }}const float *const {{ x }}_src = {{ x }} + ({{ x }}_ok ? {{ first }} + {{ x }}_r + {{ x }}_s0 * {{ ld }}u : 0u);
{%- endif %}
{%- endmacro -%}

{#- The step from k0 of operand `x` ("a": op(A), rows along m; "b": op(B), along n) into tile[step][row]
    (`rows` wide, `extent` in all): outer, its stored runs go along the rows; else along the sum.
    `fast`: the thread's copies worked out once (fetch_fast). -#}
{%- macro fetch(x, tile, rows, extent, first, outer, vec, ld, fast, ds, copies, indent) -%}
{%- if fast %}
{{ fetch_fast(x, tile, rows, outer, vec, ld, ds, copies, indent) }}
{%- elif group > 1 %}
{{ indent }}// {{ group }} GEMMs' elements side by side: [{{ group }}][step][row], a copy a float2
{{ indent }}for (unsigned u = tid; u < {{ group * step * rows }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned entry = u % {{ group }}u, r = u / {{ group }}u % {{ rows }}u, s = u / {{ group * rows }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u && entry0 + entry < {{ batch }}u;
{%- if outer %}
{{ indent }}    const unsigned at = entry0 + entry + (k0 + s) * {{ ld }}u + ({{ first }} + r) * {{ inc }}u;
{%- else %}
{{ indent }}    const unsigned at = entry0 + entry + ({{ first }} + r) * {{ ld }}u + (k0 + s) * {{ inc }}u;
{%- endif %}
{{ indent }}    copy8(&{{ tile }}[entry][s * {{ rows + row_pad }}u + r], inside ? {{ x }} + at : {{ x }}, inside);
{{ indent }}}
{%- elif outer %}
{{ indent }}// stored [sum][row]: {{ step }} runs of {{ rows }}, {{ vec }} {{ elem }}{{ "s" if vec > 1 }} a copy
{{ indent }}for (unsigned u = tid; u < {{ step * rows // vec }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned s = u / {{ rows // vec }}u, r = u % {{ rows // vec }}u * {{ vec }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy{{ vec * esize }}(&{{ tile }}[s][r], inside ? {{ x }} + (k0 + s) * {{ ld }}u + {{ first }} + r : {{ x }}, inside);
{{ indent }}}
{%- else %}
{{ indent }}// stored [row][sum]: {{ rows }} runs of {{ step }}, transposed into the tile a {{ elem }} at a time
{{ indent }}for (unsigned u = tid; u < {{ step * rows }}u; u += {{ threads }}u) {
{{ indent }}    const unsigned r = u / {{ step }}u, s = u % {{ step }}u;
{{ indent }}    const bool inside = k0 + s < {{ k }}u && {{ first }} + r < {{ extent }}u;
{{ indent }}    copy{{ esize }}(&{{ tile }}[s][r], inside ? {{ x }} + ({{ first }} + r) * {{ ld }}u + k0 + s : {{ x }}, inside);
{{ indent }}}
{%- endif %}
{%- endmacro -%}
