{#- fft-fused (generator/fftconv/fft_fused.c): one block per overlap-save tile, image and group of kb
    output channels. Per pass over cb input channels: load the tile (clipped), FFT its rows (two
    real rows as one complex transform, a thread each) and its columns (a thread each; 3-D: the
    y columns, then the z columns) in registers, and add its products with the weights' spectra
    to the block's accumulators (kb x bins complex values in registers, acc per thread). Then
    the inverse: columns (3-D: z, then y), then rows two at a time, pruned to the tile's valid
    outputs, staged in shared memory for coalesced stores. -#}
{%- include "common.cuh" -%}
{%- include "fft/fft_regs.cuh" -%}
{{ file_header(header) }}

{{ complex_functions() }}
__device__ __forceinline__ float2 c_fma(float2 a, float2 b, float2 c) // c + a b
{
    return make_float2(c.x + a.x * b.x - a.y * b.y, c.y + a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 c_fma_conj(float2 a, float2 b, float2 c) // c + a conj(b)
{
    return make_float2(c.x + a.x * b.x + a.y * b.y, c.y + a.y * b.x - a.x * b.y);
}

// X[k] = sum_j x[j] exp(-2 pi i j k / {{ n }}) in place, X[k] in x[{{ fwd.out|join(", ") }}].
__device__ __forceinline__ void fft_forward(float2 (&x)[{{ n }}])
{
{{- reg_fft(fwd) }}
}

// x[j] = sum_k X[k] exp(+2 pi i j k / {{ n }}) in place, x[j] in x[{{ inv.out|join(", ") }}].
__device__ __forceinline__ void fft_inverse(float2 (&x)[{{ n }}])
{
{{- reg_fft(inv) }}
}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ per_sm }}) // {{ per_sm }} block{{ "s" if per_sm > 1 }} a multiprocessor (fused_shape_of)
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace{{ bias_param(epi) }})
{
    extern __shared__ float2 smem[];                // {{ shared }} bytes
{%- if rank == 2 %}
    float2 *rows = smem;                            // the rows' spectra; then the products; then the outputs
    float2 *spec = smem + {{ rows_elems }};              // the tile; then its spectra; then the inverse columns
    float *sig = reinterpret_cast<float *>(spec);   // {{ cb }} channels of the {{ n }}x{{ n }} tile of {{ signal }}, rows {{ sp }} apart
    float *obuf = reinterpret_cast<float *>(rows);  // the valid outputs, {{ kb }}x{{ v0 }} rows {{ vls }} apart
{%- else %}
    float2 *rows = smem;                            // the rows' spectra and their y columns; the products; the inverse y columns
    float2 *spec = smem + {{ rows_elems }};              // the tile; its spectra; the inverse z columns; the outputs
    float *sig = reinterpret_cast<float *>(spec);   // {{ cb }} channels of the {{ n }}^3 tile of {{ signal }}, rows {{ sp }} apart
    float *obuf = reinterpret_cast<float *>(spec);  // the valid outputs, {{ kb }}x{{ v0 }}x{{ v1 }} rows {{ vls }} apart
{%- endif %}
    const unsigned tid = threadIdx.x;
{%- if rank == 2 %}
    // blockIdx.x = kgroup * {{ tiles }} + tile, tile = tile0 * {{ inner }} + tile1.
    const unsigned kgroup = {{ udiv("blockIdx.x", tiles_div) }}, tile = blockIdx.x - kgroup * {{ tiles }}u;
    const unsigned tile0 = {{ udiv("tile", inner_div) }}, tile1 = tile - tile0 * {{ inner }}u;
{%- else %}
    // blockIdx.x = kgroup * {{ tiles }} + tile, tile = (tile0 * {{ mid }} + tile1) * {{ inner }} + tile2.
    const unsigned kgroup = {{ udiv("blockIdx.x", tiles_div) }}, tile = blockIdx.x - kgroup * {{ tiles }}u;
    const unsigned tile01 = {{ udiv("tile", inner_div) }}, tile2 = tile - tile01 * {{ inner }}u;
    const unsigned tile0 = {{ udiv("tile01", mid_div) }}, tile1 = tile01 - tile0 * {{ mid }}u;
{%- endif %}
    const float2 *__restrict__ spectra = reinterpret_cast<const float2 *>(workspace + {{ spectra_offset }}ull);
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y) {
        float2 acc[{{ acc }}];
#pragma unroll
        for (int j = 0; j < {{ acc }}; ++j)
            acc[j] = make_float2(0.0f, 0.0f);
        for (unsigned c0 = 0; c0 < {{ ins }}u; c0 += {{ cb }}u) {
            __syncthreads(); // the last pass is done with the buffers, the last image with obuf
            // The tile: position q of tile t along a dimension reads {{ signal }}[q - base + t * step].
            for (unsigned e = tid; e < {{ cb * points }}u; e += {{ threads }}u) {
{%- if rank == 2 %}
                const unsigned cr = {{ udiv("e", n_div) }}, q1 = e - cr * {{ n }}u; // cr = c * {{ n }} + q0
                const unsigned c = {{ udiv("cr", n_div) }}, q0 = cr - c * {{ n }}u;
{%- else %}
                const unsigned cr = {{ udiv("e", n_div) }}, q2 = e - cr * {{ n }}u; // cr = (c * {{ n }} + q0) * {{ n }} + q1
                const unsigned cq = {{ udiv("cr", n_div) }}, q1 = cr - cq * {{ n }}u;
                const unsigned c = {{ udiv("cq", n_div) }}, q0 = cq - c * {{ n }}u;
{%- endif %}
{%- for d in dims %}
                const long long t{{ d.i }} = (long long)q{{ d.i }} - ({{ d.base }}ll) + (long long)tile{{ d.i }} * {{ d.step }}ll;
{%- endfor %}
                float v = 0.0f;
                if (c0 + c < {{ ins }}u{% for d in dims %} && t{{ d.i }} >= 0 && t{{ d.i }} < {{ d.count }}ll{% endfor %})
                    v = in0[((size_t)g * {{ ins }}u + c0 + c) * {{ plane }}ull + {{ in_offset }}];
                sig[cr * {{ sp }}u + q{{ rank - 1 }}] = v;
            }
            __syncthreads();
            // Rows t and t + {{ pairs }} as the real and imaginary parts of one transform Z; their
            // spectra A_k = Z_k + conj Z_(n-k), B_k = -i (Z_k - conj Z_(n-k)), twice the true ones.
            for (unsigned t = tid; t < {{ pairs }}u; t += {{ threads }}u) {
                const float *ra = sig + t * {{ sp }}u, *rb = ra + {{ pairs * sp }}u;
{%- if nrows % 2 %}
                const bool has_b = t + {{ pairs }}u < {{ nrows }}u;
{%- endif %}
                float2 x[{{ n }}];
#pragma unroll
                for (int j = 0; j < {{ n }}; ++j)
                    x[j] = make_float2(ra[j], {{ "has_b ? rb[j] : 0.0f" if nrows % 2 else "rb[j]" }});
                fft_forward(x);
{%- if rank == 2 %}
                float2 *oa = rows + t * {{ hs }}u, *ob = oa + {{ pairs * hs }}u;
{%- else %}
                const unsigned tb = t + {{ pairs }}u, pa = {{ udiv("t", n_div) }}, pb = {{ udiv("tb", n_div) }};
                float2 *oa = rows + pa * {{ pp }}u + (t - pa * {{ n }}u) * {{ hs }}u, *ob = rows + pb * {{ pp }}u + (tb - pb * {{ n }}u) * {{ hs }}u;
{%- endif %}
{{- store_split_rows(split, nrows % 2, "                ") }}
            }
            __syncthreads();
{%- if rank == 2 %}
            // Columns: bin (k0, k1) of channel c from rows k1 of its {{ n }} rows' spectra.
            for (unsigned e = tid; e < {{ cb * h }}u; e += {{ threads }}u) {
                const unsigned c = {{ udiv("e", h_div) }}, k1 = e - c * {{ h }}u;
                const float2 *col = rows + c * {{ n * hs }}u + k1;
                float2 x[{{ n }}];
#pragma unroll
                for (int r = 0; r < {{ n }}; ++r)
                    x[r] = col[r * {{ hs }}];
                fft_forward(x);
                float2 *s = spec + c * {{ bins }}u + k1;
{%- else %}
            // y columns in place: (k1, k2) of plane q0 of channel c from rows q1 of the plane's rows' spectra.
            for (unsigned e = tid; e < {{ cb * n * h }}u; e += {{ threads }}u) {
                const unsigned cq = {{ udiv("e", h_div) }}, k2 = e - cq * {{ h }}u; // cq = c * {{ n }} + q0
                float2 *col = rows + cq * {{ pp }}u + k2;
                float2 x[{{ n }}];
#pragma unroll
                for (int r = 0; r < {{ n }}; ++r)
                    x[r] = col[r * {{ hs }}];
                fft_forward(x);
{%- for o in ycol_out %}
                col[{{ o.at }}] = x[{{ o.reg }}];
{%- endfor %}
            }
            __syncthreads();
            // z columns: bin (k0, k1, k2) of channel c from planes q0 of its y columns' spectra.
            for (unsigned e = tid; e < {{ cb * n * h }}u; e += {{ threads }}u) {
                const unsigned ck = {{ udiv("e", h_div) }}, k2 = e - ck * {{ h }}u; // ck = c * {{ n }} + k1
                const unsigned c = {{ udiv("ck", n_div) }}, k1 = ck - c * {{ n }}u;
                const float2 *col = rows + c * {{ n * pp }}u + k1 * {{ hs }}u + k2;
                float2 x[{{ n }}];
#pragma unroll
                for (int r = 0; r < {{ n }}; ++r)
                    x[r] = col[r * {{ pp }}];
                fft_forward(x);
                float2 *s = spec + c * {{ bins }}u + k1 * {{ h }}u + k2;
{%- endif %}
{%- for o in col_out %}
                s[{{ o.at }}] = x[{{ o.reg }}];
{%- endfor %}
            }
            __syncthreads();
            // Products: accumulator j holds bin b of output channel kgroup * {{ kb }} + kl.
#pragma unroll
            for (int j = 0; j < {{ acc }}; ++j) {
                const unsigned slot = tid + {{ threads }}u * j;
                const unsigned kl = {{ udiv("slot", bins_div) }}, b = slot - kl * {{ bins }}u, o = kgroup * {{ kb }}u + kl;
                if (slot < {{ kb * bins }}u && o < {{ outs }}u) {
                    const float2 *w = spectra + ((size_t)o * {{ w_out }}u + (size_t)c0 * {{ w_in }}u) * {{ bins }}u + b;
#pragma unroll
                    for (int c = 0; c < {{ cb }}; ++c)
                        if (c0 + c < {{ ins }}u)
                            acc[j] = {{ "c_fma_conj" if conjugate else "c_fma" }}(spec[c * {{ bins }} + b], __ldg(w + (size_t)c * {{ w_in * bins }}u), acc[j]);
                }
            }
        }
        __syncthreads(); // every product is in
#pragma unroll
        for (int j = 0; j < {{ acc }}; ++j) {
            const unsigned slot = tid + {{ threads }}u * j;
            if (slot < {{ kb * bins }}u)
                rows[slot] = acc[j];
        }
        __syncthreads();
{%- if rank == 2 %}
        // Inverse columns, only their {{ v0 }} valid rows kept: row r of channel kl at spec[(kl * {{ v0 }} + r) * {{ hs }} + k1].
        for (unsigned e = tid; e < {{ kb * h }}u; e += {{ threads }}u) {
            const unsigned kl = {{ udiv("e", h_div) }}, k1 = e - kl * {{ h }}u;
            const float2 *col = rows + kl * {{ bins }}u + k1;
            float2 x[{{ n }}];
#pragma unroll
            for (int k0 = 0; k0 < {{ n }}; ++k0)
                x[k0] = col[k0 * {{ h }}];
            fft_inverse(x);
            float2 *s = spec + kl * {{ v0 * hs }}u + k1;
{%- for o in icol_out %}
            s[{{ o.at }}] = x[{{ o.reg }}];
{%- endfor %}
        }
        __syncthreads();
        const float2 *irows_in = spec; // the inverse rows' spectra
{%- else %}
        // Inverse z columns, only their {{ v0 }} valid planes kept: row k1 of plane r0 of channel kl at
        // spec[(kl * {{ v0 }} + r0) * {{ pp }} + k1 * {{ hs }} + k2].
        for (unsigned e = tid; e < {{ kb * n * h }}u; e += {{ threads }}u) {
            const unsigned ck = {{ udiv("e", h_div) }}, k2 = e - ck * {{ h }}u; // ck = kl * {{ n }} + k1
            const unsigned kl = {{ udiv("ck", n_div) }}, k1 = ck - kl * {{ n }}u;
            const float2 *col = rows + kl * {{ bins }}u + k1 * {{ h }}u + k2;
            float2 x[{{ n }}];
#pragma unroll
            for (int k0 = 0; k0 < {{ n }}; ++k0)
                x[k0] = col[k0 * {{ n * h }}];
            fft_inverse(x);
            float2 *s = spec + kl * {{ v0 * pp }}u + k1 * {{ hs }}u + k2;
{%- for o in icol_out %}
            s[{{ o.at }}] = x[{{ o.reg }}];
{%- endfor %}
        }
        __syncthreads();
        // Inverse y columns, only their {{ v1 }} valid rows kept: row r1 of plane r0 of channel kl at
        // rows[((kl * {{ v0 }} + r0) * {{ v1 }} + r1) * {{ hs }} + k2].
        for (unsigned e = tid; e < {{ kb * v0 * h }}u; e += {{ threads }}u) {
            const unsigned cr = {{ udiv("e", h_div) }}, k2 = e - cr * {{ h }}u; // cr = kl * {{ v0 }} + r0
            const float2 *col = spec + cr * {{ pp }}u + k2;
            float2 x[{{ n }}];
#pragma unroll
            for (int k1 = 0; k1 < {{ n }}; ++k1)
                x[k1] = col[k1 * {{ hs }}];
            fft_inverse(x);
            float2 *s = rows + cr * {{ v1 * hs }}u + k2;
{%- for o in iycol_out %}
            s[{{ o.at }}] = x[{{ o.reg }}];
{%- endfor %}
        }
        __syncthreads();
        const float2 *irows_in = rows; // the inverse rows' spectra
{%- endif %}
        // Inverse rows t and t + {{ ipairs }} as one transform of Z_k = A_k + i B_k, their outputs its
        // real and imaginary parts; only the {{ vl }} valid ones are kept.
        for (unsigned t = tid; t < {{ ipairs }}u; t += {{ threads }}u) {
            const float2 *za = irows_in + t * {{ hs }}u, *zb = za + {{ ipairs * hs }}u;
{%- if irows % 2 %}
            const bool has_b = t + {{ ipairs }}u < {{ irows }}u;
{%- endif %}
            float2 x[{{ n }}];
{{- load_merged_rows(merge, irows % 2, "            ") }}
            fft_inverse(x);
            float *oa = obuf + t * {{ vls }}u, *ob = oa + {{ ipairs * vls }}u;
{{- store_row_parts(irow_out, irows % 2, "            ") }}
        }
        __syncthreads();
        // The stores, scaled: output o = tile * step + r along a dimension.
        for (unsigned e = tid; e < {{ irows * vl }}u; e += {{ threads }}u) {
{%- if rank == 2 %}
            const unsigned cr = {{ udiv("e", v1_div) }}, r1 = e - cr * {{ v1 }}u; // cr = kl * {{ v0 }} + r0
            const unsigned kl = {{ udiv("cr", v0_div) }}, r0 = cr - kl * {{ v0 }}u;
{%- else %}
            const unsigned cr = {{ udiv("e", v2_div) }}, r2 = e - cr * {{ vl }}u; // cr = (kl * {{ v0 }} + r0) * {{ v1 }} + r1
            const unsigned cq = {{ udiv("cr", v1_div) }}, r1 = cr - cq * {{ v1 }}u;
            const unsigned kl = {{ udiv("cq", v0_div) }}, r0 = cq - kl * {{ v0 }}u;
{%- endif %}
            const unsigned o = kgroup * {{ kb }}u + kl;
{%- for d in dims %}
            const unsigned o{{ d.i }} = tile{{ d.i }} * {{ d.v }}u + r{{ d.i }};
{%- endfor %}
            if (o < {{ outs }}u{% for d in dims %} && o{{ d.i }} < {{ d.out }}u{% endfor %})
                out[((size_t)g * {{ outs }}u + o) * {{ out_plane }}ull + {{ out_offset }}] =
                    {{ epilogue(epi, "obuf[cr * " ~ vls ~ "u + r" ~ (rank - 1) ~ "] * " ~ scale, "o") }};
        }
    }
}
