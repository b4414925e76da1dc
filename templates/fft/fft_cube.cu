{#- A rank 3 R2C or C2R of small volumes in one pass (generator/fft/fft_cube.c): a block takes
    `volumes` whole volumes, and their transforms along x (rows, two real rows as one complex
    transform), y and z (columns) run one after another in shared memory, each 1-D transform in
    one thread's registers (fft_regs.c). Only the signal window and the spectrum cross global
    memory. The forward reads the window (clipped), transforms its rows, its planes' y columns
    in place, then the z columns, which store the spectrum; the inverse runs the same phases the
    other way, pruned to the window. The generator chooses every constant; this only lays out. -#}
{%- include "common.cuh" -%}
{%- include "fft/fft_regs.cuh" -%}

{{ file_header(header) }}

{{ complex_functions() }}

// The 1-D transform of every phase: {{ "X[k] = sum_j x[j] exp(-2 pi i j k / " ~ n ~ ")" if forward else "x[j] = sum_k X[k] exp(+2 pi i j k / " ~ n ~ ")" }} in place, k-th result in x[{{ fft.out|join(", ") }}].
__device__ __forceinline__ void transform(float2 (&x)[{{ n }}])
{
{{- reg_fft(fft) }}
}
{%- if forward %}

{{ copy_async(4) }}
{%- endif %}

{#- The z phase's bin: volume v of the block, b its bin in the plane's layout, the thread order. -#}
{%- macro z_bin() %}
        const unsigned v = {{ udiv("e", plane_div) }}, b = e - v * {{ plane_bins }}u;
{%- if transposed %}
        const unsigned kx = {{ udiv("b", n_div) }}, ky = b - kx * {{ n }}u; // [kx][ky]
{%- else %}
        const unsigned ky = {{ udiv("b", half_div) }}, kx = b - ky * {{ half }}u; // [ky][kx]
{%- endif %}
{%- endmacro %}

{#- A column's points into x[]: x[l.reg] = src[l.at] for each load, zeros where the window has none. -#}
{%- macro load_column(src, loads, zeros, suffix) %}
        float2 x[{{ n }}];
{%- for l in loads %}
        x[{{ l.reg }}] = {{ src }}[{{ l.at }}{{ suffix }}];
{%- endfor %}
{%- for z in zeros %}
        x[{{ z }}] = make_float2(0.0f, 0.0f);
{%- endfor %}
{%- endmacro %}

{#- The y columns in place, one a (volume, window plane, bin kx). -#}
{%- macro y_columns(zeros) %}
    for (unsigned e = tid; e < {{ volumes * d * half }}u; e += {{ threads }}u) {
        const unsigned vj = {{ udiv("e", half_div) }}, kx = e - vj * {{ half }}u;
        float2 *col = rows + vj * {{ pp }}u + kx;
{{- load_column("col", y_loads, zeros, "") }}
        transform(x);
{%- for s in y_stores %}
        col[{{ s.at }}] = x[{{ s.reg }}];
{%- endfor %}
    }
{%- endmacro %}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out0,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    (void)in1, (void)workspace;
    extern __shared__ float2 smem[];  // {{ shared }} bytes
    float2 *const rows = smem;        // per volume {{ d }} planes {{ pp }} float2s apart, each {{ n }} rows of {{ hs }} (the half spectra)
    float *const sig = reinterpret_cast<float *>(smem + {{ rows_elems }}); // per volume the window's {{ d * h }} rows, {{ sp }} floats apart
    const unsigned tid = threadIdx.x, first = blockIdx.x * {{ volumes }}u;
{%- if forward %}
    const float *__restrict__ signal = in0;
    float2 *__restrict__ spectra = reinterpret_cast<float2 *>(out0);

    // The window: element (plane j, row r, column c) of volume v into sig, rows of {{ w }} of {{ n }}. A volume
    // past the last is zeros: its rows are other rows' partners in the row transforms, where garbage
    // (a NaN) would spread into them.
    for (unsigned e = tid; e < {{ volumes * d * h * w }}u; e += {{ threads }}u) {
        const unsigned row = {{ udiv("e", w_div) }}, c = e - row * {{ w }}u; // row = v * {{ d * h }} + j * {{ h }} + r
        const unsigned v = {{ udiv("row", dh_div) }}, jr = row - v * {{ d * h }}u;
        const unsigned j = {{ udiv("jr", h_div) }}, r = jr - j * {{ h }}u;
        if (first + v < {{ count }}u)
            copy4(sig + row * {{ sp }}u + c,
                  signal + {{ entry_offset("first + v", rs) }} + ({{ idx }})j * {{ plane_pitch }}u + ({{ idx }})r * {{ pitch }}u + c);
        else
            sig[row * {{ sp }}u + c] = 0.0f;
    }
    asm volatile("cp.async.commit_group;\n cp.async.wait_group 0;\n" ::);
    __syncthreads();

    // Rows t and t + {{ pairs }} as the real and imaginary parts of one transform Z; their spectra
    // A_k = Z_k + conj Z_(n-k), B_k = -i (Z_k - conj Z_(n-k)) (twice the true ones) go to row
    // {{ oy }} + r of plane j of their volume. Columns outside the window are zero.
    for (unsigned t = tid; t < {{ pairs }}u; t += {{ threads }}u) {
        const unsigned tb = t + {{ pairs }}u;
        const float *ra = sig + t * {{ sp }}u, *rb = sig + tb * {{ sp }}u;
{%- if nrows % 2 %}
        const bool has_b = tb < {{ nrows }}u;
{%- endif %}
        float2 x[{{ n }}];
{%- for l in row_loads %}
        x[{{ l.reg }}] = make_float2(ra[{{ l.at }}], {{ "has_b ? rb[" ~ l.at ~ "] : 0.0f" if nrows % 2 else "rb[" ~ l.at ~ "]" }});
{%- endfor %}
{%- for z in row_zeros %}
        x[{{ z }}] = make_float2(0.0f, 0.0f);
{%- endfor %}
        transform(x);
        const unsigned va = {{ udiv("t", dh_div) }}, ja = {{ udiv("t - va * " ~ (d * h) ~ "u", h_div) }};
        const unsigned vb = {{ udiv("tb", dh_div) }}, jb = {{ udiv("tb - vb * " ~ (d * h) ~ "u", h_div) }};
        float2 *oa = rows + (va * {{ d }}u + ja) * {{ pp }}u + (t - va * {{ d * h }}u - ja * {{ h }}u + {{ oy }}u) * {{ hs }}u;
        float2 *ob = rows + (vb * {{ d }}u + jb) * {{ pp }}u + (tb - vb * {{ d * h }}u - jb * {{ h }}u + {{ oy }}u) * {{ hs }}u;
{{- store_split_rows(split, nrows % 2, "        ") }}
    }
    __syncthreads();

    // y columns in place, one per (volume, window plane, bin kx): the window's rows {{ oy }}..{{ oy + h - 1 }} in, bin ky
    // out at row {{ "ky" if natural else "position(ky), the digit-reversed order" }}.
{{- y_columns(y_zeros) }}
    __syncthreads();

    // z columns, one per (volume, bin): the window's planes {{ oz }}..{{ oz + d - 1 }} in, all {{ n }} bins out to the
    // spectrum, whose planes' layout is the thread order: consecutive threads, consecutive float2s.
    for (unsigned e = tid; e < {{ volumes * plane_bins }}u; e += {{ threads }}u) {
{{- z_bin() }}
        if (first + v >= {{ count }}u)
            continue;
        const float2 *col = rows + v * {{ d * pp }}u + ky * {{ hs }}u + kx;
{{- load_column("col", z_loads, z_zeros, "") }}
        transform(x);
        float2 *dst = spectra + {{ entry_offset("first + v", ss) }} + b;
{%- for s in z_stores %}
        dst[{{ s.at }}u] = make_float2({{ out_scale|f32 }} * x[{{ s.reg }}].x, {{ out_scale|f32 }} * x[{{ s.reg }}].y);
{%- endfor %}
    }
{%- else %}
    const float2 *__restrict__ spectra = reinterpret_cast<const float2 *>(in0);
    float *__restrict__ y = out0;

    // z columns, one per (volume, bin): all {{ n }} bins in from the spectrum (the thread order is its
    // planes' layout), the window's planes {{ oz }}..{{ oz + d - 1 }} out.
    for (unsigned e = tid; e < {{ volumes * plane_bins }}u; e += {{ threads }}u) {
{{- z_bin() }}
        float2 *col = rows + v * {{ d * pp }}u + ky * {{ hs }}u + kx;
        if (first + v >= {{ count }}u) { // no volume: zeros, for the rows that pair with its rows
{%- for s in z_stores %}
            col[{{ s.at }}] = make_float2(0.0f, 0.0f);
{%- endfor %}
            continue;
        }
        const float2 *src = spectra + {{ entry_offset("first + v", ss) }} + b;
{{- load_column("src", z_loads, [], "u") }}
        transform(x);
{%- for s in z_stores %}
        col[{{ s.at }}] = x[{{ s.reg }}];
{%- endfor %}
    }
    __syncthreads();

    // y columns in place, one per (volume, window plane, bin kx): bin ky in from row {{ "ky" if natural else "position(ky)" }},
    // the window's rows {{ oy }}..{{ oy + h - 1 }} out to rows 0..{{ h - 1 }}.
{{- y_columns([]) }}
    __syncthreads();

    // Rows t and t + {{ pairs }} (row r of window plane j of their volume) as one transform of
    // Z_k = A_k + i B_k, their outputs its real and imaginary parts; the window's columns kept.
    for (unsigned t = tid; t < {{ pairs }}u; t += {{ threads }}u) {
        const unsigned tb = t + {{ pairs }}u;
{%- if nrows % 2 %}
        const bool has_b = tb < {{ nrows }}u;
{%- endif %}
        const unsigned va = {{ udiv("t", dh_div) }}, ja = {{ udiv("t - va * " ~ (d * h) ~ "u", h_div) }};
        const unsigned vb = {{ udiv("tb", dh_div) }}, jb = {{ udiv("tb - vb * " ~ (d * h) ~ "u", h_div) }};
        const float2 *za = rows + (va * {{ d }}u + ja) * {{ pp }}u + (t - va * {{ d * h }}u - ja * {{ h }}u) * {{ hs }}u;
        const float2 *zb = rows + (vb * {{ d }}u + jb) * {{ pp }}u + (tb - vb * {{ d * h }}u - jb * {{ h }}u) * {{ hs }}u;
        float2 x[{{ n }}];
{{- load_merged_rows(merge, nrows % 2, "        ") }}
        transform(x);
        float *oa = sig + t * {{ sp }}u, *ob = sig + tb * {{ sp }}u;
{{- store_row_parts(row_stores, nrows % 2, "        ") }}
    }
    __syncthreads();

    // The window out of sig: element (plane j, row r, column c) of volume v, consecutive threads on consecutive columns.
    for (unsigned e = tid; e < {{ volumes * d * h * w }}u; e += {{ threads }}u) {
        const unsigned row = {{ udiv("e", w_div) }}, c = e - row * {{ w }}u; // row = v * {{ d * h }} + j * {{ h }} + r
        const unsigned v = {{ udiv("row", dh_div) }}, jr = row - v * {{ d * h }}u;
        const unsigned j = {{ udiv("jr", h_div) }}, r = jr - j * {{ h }}u;
{%- if epi.bias %}
        const unsigned tr = first + v, ch = {{ transform_channel("tr") }}; // the volume's channel in y, its bias's
{%- endif %}
        if (first + v < {{ count }}u)
            y[{{ entry_offset("first + v", rs) }} + ({{ idx }})j * {{ plane_pitch }}u + ({{ idx }})r * {{ pitch }}u + c] =
                {{ epilogue(epi, (out_scale|f32) ~ " * sig[row * " ~ sp ~ "u + c]", "ch") }};
    }
{%- endif %}
}
