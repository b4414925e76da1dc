{#- Warp-level FFT pieces (fbfft, section 5), shared by the FFT kernels. The context comes from
    generator/fft/fft_kernel.c: one plan (n, lanes, regs, stages, twiddles) decides every line. Element
    i = r * lanes + l of a transform sits in register x[r] of lane l of its lane group t (exchanged
    plans: in their first phase; generator/fft/fft_exchange.c maps the others). -#}

{#- a * c for a constant c, with the multiplications by 1, -1, i and -i left out. -#}
{%- macro cmul_const(a, c) -%}
{%- if c.kind == "one" -%}{{ a }}
{%- elif c.kind == "neg" -%}make_float2(-{{ a }}.x, -{{ a }}.y)
{%- elif c.kind == "i" -%}make_float2(-{{ a }}.y, {{ a }}.x)
{%- elif c.kind == "negi" -%}make_float2({{ a }}.y, -{{ a }}.x)
{%- else -%}c_mul({{ a }}, make_float2({{ c.re|f32 }}, {{ c.im|f32 }}))
{%- endif -%}
{%- endmacro -%}

{#- v times sign i (sign an argument): a swap and a negation. -#}
{%- macro times_sign_i(v, sign) -%}
{{ "make_float2(-" ~ v ~ ".y, " ~ v ~ ".x)" if sign > 0 else "make_float2(" ~ v ~ ".y, -" ~ v ~ ".x)" }}
{%- endmacro -%}

{#- v (an expression) times exp(sign i pi / 2) = sign i, the kernel's sign. -#}
{%- macro times_i(v) -%}{{ times_sign_i("(" ~ v ~ ")", sign) }}{%- endmacro -%}

{#- DFT of size 4 of a{p[0]}..a{p[3]} into {out}0..3, as two levels of radix 2 (16 additions; the
    sums of the definition take 24): out_k = sum_d a_d w^(dk), w = sign i. -#}
{%- macro dft4(p, out) %}
        const float2 {{ out }}s0 = c_add(a{{ p[0] }}, a{{ p[2] }}), {{ out }}s1 = c_sub(a{{ p[0] }}, a{{ p[2] }});
        const float2 {{ out }}s2 = c_add(a{{ p[1] }}, a{{ p[3] }}), {{ out }}s3 = c_sub(a{{ p[1] }}, a{{ p[3] }});
        const float2 {{ out }}0 = c_add({{ out }}s0, {{ out }}s2), {{ out }}2 = c_sub({{ out }}s0, {{ out }}s2);
        const float2 {{ out }}1 = c_add({{ out }}s1, {{ times_i(out ~ "s3") }}), {{ out }}3 = c_sub({{ out }}s1, {{ times_i(out ~ "s3") }});
{%- endmacro -%}

{#- b_t = sum_s a_s exp(sign 2 pi i s t / r). Radix 4 as two levels of radix 2 (16 additions);
    odd radices in the symmetric form of cg_fft_odd_table (b.cos, b.sin: sign folded into sin). -#}
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

{#- The butterfly of a register stage: b_k = sum_d a_d exp(sign 2 pi i d k / r) for k < r.
    Radices 2, 4 and 8 are factored into levels of radix 2 (radix 8: 52 additions and 4
    multiplications by 1/sqrt 2, where the sums take some 150 operations); 3, 5 and 7 in their
    symmetric form (reg_radix: (r - 1)^2 real multiplications where the sums take (r - 1)^2
    complex ones). -#}
{%- macro small_dft(st) %}
{%- if st.radix == 2 %}
        const float2 b0 = c_add(a0, a1), b1 = c_sub(a0, a1);
{%- elif st.radix == 4 %}
{{- dft4([0, 1, 2, 3], "b") }}
{%- elif st.radix == 8 %}
        // Even and odd inputs in two DFTs of 4, joined by w8^k, w8 = (1 {{ "+" if sign > 0 else "-" }} i) / sqrt 2.
{{- dft4([0, 2, 4, 6], "e") }}
{{- dft4([1, 3, 5, 7], "o") }}
        const float h = 0.70710678f;
        const float2 o1w = make_float2(h * (o1.x {{ "-" if sign > 0 else "+" }} o1.y), h * (o1.y {{ "+" if sign > 0 else "-" }} o1.x));
        const float2 o2w = {{ times_i("o2") }};
        const float2 o3w = make_float2(h * (-o3.x {{ "-" if sign > 0 else "+" }} o3.y), h * (-o3.y {{ "+" if sign > 0 else "-" }} o3.x));
        const float2 b0 = c_add(e0, o0), b4 = c_sub(e0, o0);
        const float2 b1 = c_add(e1, o1w), b5 = c_sub(e1, o1w);
        const float2 b2 = c_add(e2, o2w), b6 = c_sub(e2, o2w);
        const float2 b3 = c_add(e3, o3w), b7 = c_sub(e3, o3w);
{%- else %}
{{- reg_radix(st, sign) }}
{%- endif %}
{%- endmacro -%}

{#- A constant picked by the lane's digit `digit` (values[digit]): a chain of selects, which ptxas
    may remake where it would otherwise hold the constant in a register. -#}
{%- macro select_by_digit(values, digit) -%}
{%- for v in values -%}{{ digit ~ " == " ~ loop.index0 ~ "u ? " if not loop.last }}{{ v|f32 }}{{ " : " if not loop.last }}{%- endfor -%}
{%- endmacro -%}

{#- An odd lane stage's twist w^(d d) for the lane's digit, as a float2 of selects. -#}
{%- macro lane_twist(st) -%}
make_float2({{ select_by_digit(st.twist_re, "d" ~ st.index) }}, {{ select_by_digit(st.twist_im, "d" ~ st.index) }})
{%- endmacro -%}

{#- Element offset of transform `tr` on one side (s: rs or ss): batch and channel strides, and the
    plane stride where the transforms are the planes of rank 3 volumes (planes > 1). -#}
{%- macro entry_offset(tr, s) -%}
{%- if channels == 1 -%}({{ idx }})({{ tr }}) * {{ s.batch }}u
{%- else -%}({{ idx }})({{ udiv(tr, chan_div) }}) * {{ s.batch }}u + ({{ idx }})({{ tr }} - {{ udiv(tr, chan_div) }} * {{ channels }}u) * {{ s.channel }}u
{%- endif -%}
{%- endmacro -%}
{%- macro transform_offset(tr, s) -%}
{%- if planes == 1 -%}{{ entry_offset(tr, s) }}
{%- else -%}{{ entry_offset(udiv(tr, plane_div), s) }} + ({{ idx }})({{ tr }} - {{ udiv(tr, plane_div) }} * {{ planes }}u) * {{ s.plane }}u
{%- endif -%}
{%- endmacro -%}

{#- The channel of transform `tr`, its entry's index along the channels (fprop's y: the bias's k). -#}
{%- macro transform_channel(tr) -%}
{%- set entry = udiv(tr, plane_div) if planes > 1 else tr -%}
{%- if channels == 1 -%}0u
{%- else -%}{{ entry }} - {{ udiv(entry, chan_div) }} * {{ channels }}u
{%- endif -%}
{%- endmacro -%}

{#- Complex helpers. -#}
{%- macro complex_functions() -%}
__device__ __forceinline__ float2 c_add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 c_sub(float2 a, float2 b) { return make_float2(a.x - b.x, a.y - b.y); }
__device__ __forceinline__ float2 c_mul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
{%- endmacro -%}

{#- Complex helpers, the warp shuffle and the twiddle factors. -#}
{%- macro fft_device_functions() -%}
{{ complex_functions() }}
__device__ __forceinline__ float2 shfl(float2 v, int lane)
{
    return make_float2(__shfl_sync(0xffffffffu, v.x, lane), __shfl_sync(0xffffffffu, v.y, lane));
}
{% if twiddle == "table" %}
// exp(-2 pi i e / {{ n }}), e = 0 .. {{ n - 1 }}: {{ twiddle_reason }}.
__device__ const float2 twiddles[{{ n }}] = {
{%- for t in table %}
    {{ "{" }}{{ t.re|f32 }}, {{ t.im|f32 }}{{ "}" }},
{%- endfor %}
};

// exp({{ "+" if sign > 0 else "-" }}2 pi i m / N) with stride = {{ n }} / N. Lanes read different entries,
// so each load costs several L1 wavefronts: the kernel loads each factor once and reuses it.
__device__ __forceinline__ float2 twiddle(unsigned m, unsigned stride)
{
    float2 w = __ldg(&twiddles[m * stride]);
{%- if sign > 0 %}
    w.y = -w.y;
{%- endif %}
    return w;
}
{% else %}
// exp(i pi m scale) with scale = {{ "+" if sign > 0 else "-" }}2 / N: {{ twiddle_reason }}.
__device__ __forceinline__ float2 twiddle(unsigned m, float scale)
{
    float s, c;
    sincospif((float)m * scale, &s, &c);
    return make_float2(c, s);
}
{% endif %}
{%- endmacro -%}

{#- The lane's group t, its index l in the group, and its digit of every lane stage. -#}
{%- macro fft_lane_setup() -%}
{%- if lanes < 32 %}
    // {{ per_warp }} transform{{ "s" if per_warp > 1 }} per warp, {{ lanes }} lanes each{{ "; lanes " ~ per_warp * lanes ~ "-31 idle" if per_warp * lanes < 32 }}.
    const unsigned t = {{ udiv("lane", lane_div) }};
    const unsigned l = lane - t * {{ lanes }}u;
{%- else %}
    const unsigned t = 0u, l = lane;
{%- endif %}
{%- for ls in lane_stages %}
    // Lane stage {{ ls.index }}: this lane's digit d (span {{ ls.span }}, radix {{ ls.radix }}) and the index j below it.
{%- if ls.span > 1 %}
    const unsigned q{{ ls.index }} = {{ udiv("l", ls.span_div) }};
    const unsigned d{{ ls.index }} = q{{ ls.index }} - {{ udiv("q" ~ ls.index, ls.radix_div) }} * {{ ls.radix }}u;
    const unsigned j{{ ls.index }} = l - q{{ ls.index }} * {{ ls.span }}u;
{%- else %}
    const unsigned d{{ ls.index }} = l - {{ udiv("l", ls.radix_div) }} * {{ ls.radix }}u;
{%- endif %}
{%- endfor %}
{%- if exchanged %}
{%- for v in lane_vars %}
    const unsigned {{ v.name }} = {{ v.expr }}; // {{ v.why }}
{%- endfor %}
{%- endif %}

{%- endmacro -%}

{#- The lane's twiddle factors, for kernels whose warps run many transforms (fft_transform(true)):
    they depend on the lane alone, so they are loaded once into registers instead of once per
    transform (each load takes several L1 wavefronts, the lanes reading different entries). -#}
{%- macro fft_twiddles() -%}
{%- if exchanged %}
{%- for h in hoisted %}
    const float2 {{ h.name }} = twiddle({{ h.arg }}, {{ h.tw_arg }}); // stage {{ h.stage }}
{%- endfor %}
{%- else %}
{%- for st in stages %}
{%- if st.twiddled and st.place == "registers" %}
{%- for g in st.groups %}
    const float2 tw{{ st.index }}_{{ loop.index0 }} = twiddle({{ g.jl }}u + l, {{ st.tw_arg }}); // stage {{ st.index }}, registers {{ g.regs|join(", ") }}
{%- endfor %}
{%- elif st.twiddled %}
    const float2 w{{ st.index }} = twiddle(d{{ st.index }} * j{{ st.index }}, {{ st.tw_arg }}); // stage {{ st.index }}, the same for every register
{%- endif %}
{%- endfor %}
{%- endif %}
{%- endmacro -%}

{#- One butterfly group of a register stage: registers g.regs, the twiddle factor w (an expression) where
    the stage has twiddles, made into its powers as they are used so that only two stay live. -#}
{%- macro register_group(st, g, w, what) %}
    {
{%- if st.twiddled %}
        // Twiddles w^k, k = 1..{{ st.radix - 1 }}: {{ what }}, then powers made as they are used.
        const float2 w = {{ w }};
        float2 wk = w;
{%- endif %}
{%- for d in range(st.radix) %}
{%- if sign > 0 and d > 0 and st.twiddled %}
{%- if d > 1 %}
        wk = c_mul(wk, w);
{%- endif %}
        const float2 a{{ d }} = c_mul(x[{{ g.regs[d] }}], wk);
{%- else %}
        const float2 a{{ d }} = x[{{ g.regs[d] }}];
{%- endif %}
{%- endfor %}
{{- small_dft(st) }}
{%- for k in range(st.radix) %}
{%- if sign < 0 and k > 0 and st.twiddled %}
{%- if k > 1 %}
        wk = c_mul(wk, w);
{%- endif %}
        x[{{ g.regs[k] }}] = c_mul(b{{ k }}, wk);
{%- else %}
        x[{{ g.regs[k] }}] = b{{ k }};
{%- endif %}
{%- endfor %}
    }
{%- endmacro -%}

{#- An exchanged plan's transform (generator/fft/fft_exchange.c): phases of register stages, and between
    them the warp's values pass through its scratch `xch` in shared memory, each lane storing its
    registers at its positions of one phase and loading those of the next. -#}
{%- macro exchanged_transform(hoisted) -%}
{% for st in steps %}
{%- if st.kind == "stage" %}
    // Stage {{ st.index }}: radix {{ st.radix }} in registers, span {{ st.span }}.
{%- for g in st.groups %}
{{- register_group(st, g, g.tw if hoisted else "twiddle(" ~ g.arg ~ ", " ~ st.tw_arg ~ ")", "the lane's factor" if hoisted else "one load") }}
{%- endfor %}
{%- else %}
    // Exchange: phase {{ st.from }}'s positions out, phase {{ st.to }}'s in, through the warp's scratch (each
    // __syncwarp: every lane is done with the scratch before any lane overwrites it or reads it back).
    __syncwarp();
{%- for at in st.writes %}
    xch[xb{{ st.from }} + {{ at }}u] = x[{{ loop.index0 }}];
{%- endfor %}
    __syncwarp();
{%- for at in st.reads %}
    x[{{ loop.index0 }}] = xch[xb{{ st.to }} + {{ at }}u];
{%- endfor %}
{%- endif %}
{% endfor %}
{%- endmacro -%}

{#- The transform of x[] in place: forward (decimation in frequency) or inverse (in time), with the
    twiddle factors of fft_twiddles() where `hoisted`. -#}
{%- macro fft_transform(hoisted=false) -%}
{%- if exchanged %}
{{- exchanged_transform(hoisted) }}
{%- else %}
{% for st in stages %}
{%- if st.place == "registers" %}
    // Stage {{ st.index }}: radix {{ st.radix }} in registers, span {{ st.span }}.
{%- for g in st.groups %}
{{- register_group(st, g, "tw" ~ st.index ~ "_" ~ loop.index0 if hoisted else "twiddle(" ~ g.jl ~ "u + l, " ~ st.tw_arg ~ ")",
                   "w = exp(+-2 pi i (j + l) / N), " ~ ("the lane's factor" if hoisted else "one load")) }}
{%- endfor %}
{%- else %}
    // Stage {{ st.index }}: radix {{ st.radix }} across lanes {{ st.span }} apart; lane digit d{{ st.index }}.
{%- if st.twiddled and not hoisted %}
    const float2 w{{ st.index }} = twiddle(d{{ st.index }} * j{{ st.index }}, {{ st.tw_arg }}); // the same for every register
{%- endif %}
{%- if st.radix == 2 %}
    const float s{{ st.index }} = d{{ st.index }} ? -1.0f : 1.0f;
#pragma unroll
    for (int r = 0; r < {{ regs }}; ++r) {
        const unsigned d = d{{ st.index }};
{%- if sign > 0 and st.twiddled %}
        const float2 own = c_mul(x[r], w{{ st.index }});
{%- else %}
        const float2 own = x[r];
{%- endif %}
        // Radix 2: the partner is the other digit; digit 0 keeps u + own, digit 1 gets u - own, as
        // FMAs by the lane's sign s (exact: one rounding, as the sum's).
        const float2 u = shfl(own, (int)lane + (d ? -{{ st.span }} : {{ st.span }}));
        float2 y = make_float2(fmaf(s{{ st.index }}, own.x, u.x), fmaf(s{{ st.index }}, own.y, u.y));
{%- if sign < 0 and st.twiddled %}
        x[r] = c_mul(y, w{{ st.index }});
{%- else %}
        x[r] = y;
{%- endif %}
    }
{%- else %}
{%- set h = (st.radix - 1) // 2 %}
    // Lane digit d's output is sum_j x_j w^(j d), w = exp(sign 2 pi i / {{ st.radix }}), taken from the values m
    // digits on and back in pairs: w^(d d) (x_d + sum_m cos(2 pi m d / {{ st.radix }}) (x_(d+m) + x_(d-m)) + i sign
    // sin(2 pi m d / {{ st.radix }}) (x_(d+m) - x_(d-m))), m = 1..{{ h }}: {{ st.radix - 1 }} shuffles and {{ 4 * h + 4 }} multiplications a value{{ " (and the twiddle's 4)" if sign > 0 and st.twiddled }}.
    // The constants are selects by d where they are used, which ptxas may remake rather than hold
    // (held through the stage or the kernel, they spilled n = 126, 196 and 245 under their budgets).
    {
{%- if sign < 0 and st.twiddled %}
        const float2 z = c_mul({{ lane_twist(st) }}, w{{ st.index }}); // w^(d d) and the twiddle, one factor
{%- endif %}
#pragma unroll
        for (int r = 0; r < {{ regs }}; ++r) {
{%- if sign > 0 and st.twiddled %}
            const float2 own = c_mul(x[r], w{{ st.index }});
{%- else %}
            const float2 own = x[r];
{%- endif %}
            float2 y = own;
{%- for m in range(1, h + 1) %}
            {
                const float2 up = shfl(own, (int)lane + (d{{ st.index }} < {{ st.radix - m }}u ? {{ m * st.span }} : {{ (m - st.radix) * st.span }}));
                const float2 down = shfl(own, (int)lane + (d{{ st.index }} >= {{ m }}u ? {{ -m * st.span }} : {{ (st.radix - m) * st.span }}));
                const float2 sum = c_add(up, down), dif = c_sub(up, down);
                const float c = {{ select_by_digit(st.cos[m - 1], "d" ~ st.index) }};
                const float s = {{ select_by_digit(st.sin[m - 1], "d" ~ st.index) }};
                y = make_float2(y.x + c * sum.x - s * dif.y, y.y + c * sum.y + s * dif.x);
            }
{%- endfor %}
{%- if sign < 0 and st.twiddled %}
            x[r] = c_mul(y, z);
{%- else %}
            x[r] = c_mul(y, {{ lane_twist(st) }}); // w^(d d)
{%- endif %}
        }
    }
{%- endif %}
{%- endif %}
{% endfor %}
{%- endif %}
{%- endmacro -%}
