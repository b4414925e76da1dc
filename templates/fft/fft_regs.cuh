{#- A complex FFT of f.n points in one thread's registers x[] (generator/fft/fft_regs.c): the
    butterflies of a mixed-radix decimation in time, in place, every twiddle factor a constant;
    X[k] ends in x[f.out[k]]. Needs complex_functions() (fft_warp.cuh). -#}
{%- include "fft/fft_warp.cuh" -%}

{#- v times sign i: a swap and a negation. -#}
{%- macro times_sign_i(v, sign) -%}
{{ "make_float2(-" ~ v ~ ".y, " ~ v ~ ".x)" if sign > 0 else "make_float2(" ~ v ~ ".y, -" ~ v ~ ".x)" }}
{%- endmacro -%}

{#- b_t = sum_s a_s exp(sign 2 pi i s t / r). Radix 4 as two levels of radix 2 (16 additions);
    odd radices in the symmetric form of fft_regs.c (b.cos, b.sin: sign folded into sin). -#}
{%- macro reg_radix(b, sign) %}
{%- if b.radix == 2 %}
        const float2 b0 = c_add(a0, a1), b1 = c_sub(a0, a1);
{%- elif b.radix == 4 %}
        const float2 s0 = c_add(a0, a2), s1 = c_sub(a0, a2), s2 = c_add(a1, a3), s3 = c_sub(a1, a3);
        const float2 r3 = {{ times_sign_i("s3", sign) }};
        const float2 b0 = c_add(s0, s2), b1 = c_add(s1, r3), b2 = c_sub(s0, s2), b3 = c_sub(s1, r3);
{%- else %}
{%- set half = (b.radix - 1) // 2 %}
{%- for d in range(1, half + 1) %}
        const float2 s{{ d }} = c_add(a{{ d }}, a{{ b.radix - d }}), t{{ d }} = c_sub(a{{ d }}, a{{ b.radix - d }});
{%- endfor %}
        const float2 b0 = make_float2(a0.x{% for d in range(1, half + 1) %} + s{{ d }}.x{% endfor %}, a0.y{% for d in range(1, half + 1) %} + s{{ d }}.y{% endfor %});
{%- for k in range(1, half + 1) %}
{%- set cs = b.cos[k - 1] %}
{%- set sn = b.sin[k - 1] %}
        const float2 u{{ k }} = make_float2(a0.x{% for d in range(1, half + 1) %} + {{ cs[d - 1]|f32 }} * s{{ d }}.x{% endfor %}, a0.y{% for d in range(1, half + 1) %} + {{ cs[d - 1]|f32 }} * s{{ d }}.y{% endfor %});
        const float2 v{{ k }} = make_float2({% for d in range(1, half + 1) %}{{ " + " if not loop.first }}{{ sn[d - 1]|f32 }} * t{{ d }}.x{% endfor %}, {% for d in range(1, half + 1) %}{{ " + " if not loop.first }}{{ sn[d - 1]|f32 }} * t{{ d }}.y{% endfor %});
        const float2 b{{ k }} = make_float2(u{{ k }}.x - v{{ k }}.y, u{{ k }}.y + v{{ k }}.x);
        const float2 b{{ b.radix - k }} = make_float2(u{{ k }}.x + v{{ k }}.y, u{{ k }}.y - v{{ k }}.x);
{%- endfor %}
{%- endif %}
{%- endmacro -%}

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
