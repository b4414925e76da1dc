{#- Warp-level FFT pieces (fbfft, section 5), shared by the FFT kernels. The context comes from
    generator/fft_kernel.c: one plan (n, lanes, regs, stages, twiddles) decides every line. Element
    i = r * lanes + l of a transform sits in register x[r] of lane l of its lane group t. -#}

{#- a * c for a constant c, with the multiplications by 1, -1, i and -i left out. -#}
{%- macro cmul_const(a, c) -%}
{%- if c.kind == "one" -%}{{ a }}
{%- elif c.kind == "neg" -%}make_float2(-{{ a }}.x, -{{ a }}.y)
{%- elif c.kind == "i" -%}make_float2(-{{ a }}.y, {{ a }}.x)
{%- elif c.kind == "negi" -%}make_float2({{ a }}.y, -{{ a }}.x)
{%- else -%}c_mul({{ a }}, make_float2({{ c.re|f32 }}, {{ c.im|f32 }}))
{%- endif -%}
{%- endmacro -%}

{#- A coefficient picked by the lane's digit d: a chain of selects between constants. -#}
{%- macro select_by_digit(cs, part) -%}
{%- for c in cs -%}{{ "d == " ~ loop.index0 ~ "u ? " if not loop.last }}{{ c[part]|f32 }}{{ " : " if not loop.last }}{%- endfor -%}
{%- endmacro -%}

{#- Element offset of transform `tr` on one side (s: rs or ss): batch and channel strides. -#}
{%- macro transform_offset(tr, s) -%}
{%- if channels == 1 -%}({{ idx }})({{ tr }}) * {{ s.batch }}u
{%- else -%}({{ idx }})({{ udiv(tr, chan_div) }}) * {{ s.batch }}u + ({{ idx }})({{ tr }} - {{ udiv(tr, chan_div) }} * {{ channels }}u) * {{ s.channel }}u
{%- endif -%}
{%- endmacro -%}

{#- Complex helpers, the warp shuffle and the twiddle factors. -#}
{%- macro fft_device_functions() -%}
__device__ __forceinline__ float2 c_add(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ __forceinline__ float2 c_mul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
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

{%- endmacro -%}

{#- The lane's twiddle factors, for kernels whose warps run many transforms (fft_transform(true)):
    they depend on the lane alone, so they are loaded once into registers instead of once per
    transform (each load takes several L1 wavefronts, the lanes reading different entries). -#}
{%- macro fft_twiddles() -%}
{%- for st in stages %}
{%- if st.twiddled and st.place == "registers" %}
{%- for g in st.groups %}
    const float2 tw{{ st.index }}_{{ loop.index0 }} = twiddle({{ g.jl }}u + l, {{ st.tw_arg }}); // stage {{ st.index }}, registers {{ g.regs|join(", ") }}
{%- endfor %}
{%- elif st.twiddled %}
    const float2 w{{ st.index }} = twiddle(d{{ st.index }} * j{{ st.index }}, {{ st.tw_arg }}); // stage {{ st.index }}, the same for every register
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{#- The transform of x[] in place: forward (decimation in frequency) or inverse (in time), with the
    twiddle factors of fft_twiddles() where `hoisted`. -#}
{%- macro fft_transform(hoisted=false) -%}
{% for st in stages %}
{%- if st.place == "registers" %}
    // Stage {{ st.index }}: radix {{ st.radix }} in registers, span {{ st.span }}.
{%- for g in st.groups %}
    {
{%- if st.twiddled %}
        // Twiddles w^k, k = 1..{{ st.radix - 1 }}, w = exp(+-2 pi i (j + l) / N): {{ "the lane's factor" if hoisted else "one load" }}, then powers
        // made as they are used, so only two stay live.
        const float2 w = {{ "tw" ~ st.index ~ "_" ~ loop.index0 if hoisted else "twiddle(" ~ g.jl ~ "u + l, " ~ st.tw_arg ~ ")" }};
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
{%- for k in range(st.radix) %}
        {
            float2 y = a0;
{%- for d in range(1, st.radix) %}
            y = c_add(y, {{ cmul_const("a" ~ d, st.coef[d][k]) }});
{%- endfor %}
{%- if sign < 0 and k > 0 and st.twiddled %}
{%- if k > 1 %}
            wk = c_mul(wk, w);
{%- endif %}
            x[{{ g.regs[k] }}] = c_mul(y, wk);
{%- else %}
            x[{{ g.regs[k] }}] = y;
{%- endif %}
        }
{%- endfor %}
    }
{%- endfor %}
{%- else %}
    // Stage {{ st.index }}: radix {{ st.radix }} across lanes {{ st.span }} apart; lane digit d{{ st.index }}.
{%- if st.twiddled and not hoisted %}
    const float2 w{{ st.index }} = twiddle(d{{ st.index }} * j{{ st.index }}, {{ st.tw_arg }}); // the same for every register
{%- endif %}
{%- if st.radix == 2 %}
    const float s{{ st.index }} = d{{ st.index }} ? -1.0f : 1.0f;
{%- endif %}
#pragma unroll
    for (int r = 0; r < {{ regs }}; ++r) {
        const unsigned d = d{{ st.index }};
{%- if sign > 0 and st.twiddled %}
        const float2 own = c_mul(x[r], w{{ st.index }});
{%- else %}
        const float2 own = x[r];
{%- endif %}
{%- if st.radix == 2 %}
        // Radix 2: the partner is the other digit; digit 0 keeps u + own, digit 1 gets u - own, as
        // FMAs by the lane's sign s (exact: one rounding, as the sum's).
        const float2 u = shfl(own, (int)lane + (d ? -{{ st.span }} : {{ st.span }}));
        float2 y = make_float2(fmaf(s{{ st.index }}, own.x, u.x), fmaf(s{{ st.index }}, own.y, u.y));
{%- else %}
        float2 y = c_mul(own, make_float2({{ select_by_digit(st.lane_coef[0], "re") }}, {{ select_by_digit(st.lane_coef[0], "im") }}));
{%- endif %}
{%- for m in range(1, st.radix if st.radix > 2 else 1) %}
        {
            const unsigned dm = d + {{ m }}u < {{ st.radix }}u ? d + {{ m }}u : d - {{ st.radix - m }}u;
            const float2 u = shfl(own, (int)lane + ((int)dm - (int)d) * {{ st.span }});
            y = c_add(y, c_mul(u, make_float2({{ select_by_digit(st.lane_coef[m], "re") }}, {{ select_by_digit(st.lane_coef[m], "im") }})));
        }
{%- endfor %}
{%- if sign < 0 and st.twiddled %}
        x[r] = c_mul(y, w{{ st.index }});
{%- else %}
        x[r] = y;
{%- endif %}
    }
{%- endif %}
{% endfor %}
{%- endmacro -%}
