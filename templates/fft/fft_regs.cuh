{#- A complex FFT of f.n points in one thread's registers x[] (generator/fft/fft_regs.c): the
    butterflies of a mixed-radix decimation in time, in place, every twiddle factor a constant;
    X[k] ends in x[f.out[k]]. Needs complex_functions() (fft_warp.cuh). -#}
{%- include "fft/fft_warp.cuh" -%}

{#- The transform of x[] in place. -#}
{%- macro reg_fft(f) %}
{%- for b in f.butterflies %}
    { // radix {{ b.radix }}: x[{{ b.regs|join("], x[") }}]
{%- for s in range(b.radix) %}
        const float2 a{{ s }} = {{ cmul_const("x[" ~ b.regs[s] ~ "]", b.tw[s]) }};
{%- endfor %}
{{- reg_radix(b, f.sign) }}
{%- for t in range(b.radix) %}
        x[{{ b.regs[t] }}] = b{{ t }};
{%- endfor %}
    }
{%- endfor %}
{%- endmacro -%}

{#- Two real rows as one complex transform (fft_regs.c's cg_reg_fft_split_value and _merge_value):
    x[] is the transform; the pair's half spectra are read through za, zb (inverse) and the
    results written through oa, ob (both); `odd`: the second row may be missing (bool has_b);
    `pad` is each line's indentation. -#}

{#- Forward: the halves apart, A_k = Z_k + conj Z_(n-k) to oa[k], B_k = -i (Z_k - conj Z_(n-k))
    to ob[k], twice the true ones. -#}
{%- macro store_split_rows(split, odd, pad) %}
{%- for s in split %}
{{ pad }}oa[{{ s.k }}] = make_float2(x[{{ s.z }}].x + x[{{ s.zm }}].x, x[{{ s.z }}].y - x[{{ s.zm }}].y);
{%- endfor %}
{%- if odd %}
{{ pad }}if (has_b) {
{%- endif %}
{%- for s in split %}
{{ pad }}ob[{{ s.k }}] = make_float2(x[{{ s.z }}].y + x[{{ s.zm }}].y, x[{{ s.zm }}].x - x[{{ s.z }}].x);
{%- endfor %}
{%- if odd %}
{{ pad }}}
{%- endif %}
{%- endmacro -%}

{#- Inverse: x[k] = A_k + i B_k from the two half spectra za, zb; bins 0 and n / 2 real (a C2R
    drops the imaginary parts a real row's spectrum has not), the mirror half conjugated. -#}
{%- macro load_merged_rows(merge, odd, pad) %}
{%- for m in merge %}
{{ pad }}{
{{ pad }}    const float2 a = za[{{ m.src }}], b = {{ "has_b ? zb[" ~ m.src ~ "] : make_float2(0.0f, 0.0f)" if odd else "zb[" ~ m.src ~ "]" }};
{%- if m.kind == "real" %}
{{ pad }}    x[{{ m.k }}] = make_float2(a.x, b.x);
{%- elif m.kind == "direct" %}
{{ pad }}    x[{{ m.k }}] = make_float2(a.x - b.y, a.y + b.x);
{%- else %}
{{ pad }}    x[{{ m.k }}] = make_float2(a.x + b.y, b.x - a.y);
{%- endif %}
{{ pad }}}
{%- endfor %}
{%- endmacro -%}

{#- Inverse: the two rows out of the transform's real and imaginary parts, element s.at from x[s.reg]. -#}
{%- macro store_row_parts(stores, odd, pad) %}
{%- for s in stores %}
{{ pad }}oa[{{ s.at }}] = x[{{ s.reg }}].x;
{%- endfor %}
{%- if odd %}
{{ pad }}if (has_b) {
{%- endif %}
{%- for s in stores %}
{{ pad }}ob[{{ s.at }}] = x[{{ s.reg }}].y;
{%- endfor %}
{%- if odd %}
{{ pad }}}
{%- endif %}
{%- endmacro -%}
