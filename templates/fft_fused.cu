{#- fft-fused (generator/fft_fused.c): one block per overlap-save tile, image and group of kb
    output channels. Per pass over cb input channels: load the tile (clipped), DFT its rows and
    columns in shared memory, and add its products with the weights' spectra to the block's
    accumulators (kb x bins complex values in registers, acc per thread). Then the inverse:
    columns, then rows as a C2R, storing only the tile's valid outputs, scaled. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

// exp(-2 pi i m / {{ n }}), m = 0 .. {{ n - 1 }}.
__device__ const float2 twiddles[{{ n }}] = {
{%- for t in twiddles %}
    {{ "{" }}{{ t.re|f32 }}, {{ t.im|f32 }}{{ "}" }},
{%- endfor %}
};

__device__ __forceinline__ float2 c_fma(float2 a, float2 b, float2 c) // c + a b
{
    return make_float2(c.x + a.x * b.x - a.y * b.y, c.y + a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 c_fma_conj(float2 a, float2 b, float2 c) // c + a conj(b)
{
    return make_float2(c.x + a.x * b.x + a.y * b.y, c.y + a.y * b.x - a.x * b.y);
}

// One column's DFT: sum_r col[r] w^(k r), the column's elements {{ h }} apart; the inverse's with
// conjugate twiddles.
template <bool inverse>
__device__ __forceinline__ float2 column_dft(const float2 *tw, const float2 *col, unsigned k)
{
    float2 sum = make_float2(0.0f, 0.0f);
    unsigned m = 0u; // k r mod n
#pragma unroll
    for (int r = 0; r < {{ n }}; ++r) {
        sum = inverse ? c_fma_conj(col[r * {{ h }}], tw[m], sum) : c_fma(col[r * {{ h }}], tw[m], sum);
        m += k;
        m = m >= {{ n }}u ? m - {{ n }}u : m;
    }
    return sum;
}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    extern __shared__ float2 smem[];          // {{ (2 * most * bins + n) * 8 + cb * points * 4 }} bytes
    float2 *tw = smem;                        // the twiddles
    float2 *rows = tw + {{ n }};                 // after the row transforms; later the output's spectra
    float2 *spec = rows + {{ most * bins }};     // the tile's spectra; later after the column inverse
    float *sig = reinterpret_cast<float *>(spec + {{ most * bins }}); // {{ cb }} channels of the {{ n }}x{{ n }} tile of {{ signal }}
    const unsigned tid = threadIdx.x;
{%- if n <= threads %}
    if (tid < {{ n }}u)
        tw[tid] = twiddles[tid];
{%- else %}
    for (unsigned m = tid; m < {{ n }}u; m += {{ threads }}u)
        tw[m] = twiddles[m];
{%- endif %}
    // blockIdx.x = kgroup * {{ tiles }} + tile, tile = tile0 * {{ inner }} + tile1.
    const unsigned kgroup = {{ udiv("blockIdx.x", tiles_div) }}, tile = blockIdx.x - kgroup * {{ tiles }}u;
    const unsigned tile0 = {{ udiv("tile", inner_div) }}, tile1 = tile - tile0 * {{ inner }}u;
    const float2 *__restrict__ spectra = reinterpret_cast<const float2 *>(workspace + {{ spectra_offset }}ull);
    for (unsigned g = blockIdx.y; g < {{ images }}u; g += gridDim.y) {
        float2 acc[{{ acc }}];
#pragma unroll
        for (int j = 0; j < {{ acc }}; ++j)
            acc[j] = make_float2(0.0f, 0.0f);
        for (unsigned c0 = 0; c0 < {{ ins }}u; c0 += {{ cb }}u) {
            __syncthreads(); // the last pass is done with the buffers (and tw is written)
            // The tile: position q of tile t along a dimension reads {{ signal }}[q - base + t * step].
            for (unsigned e = tid; e < {{ cb * points }}u; e += {{ threads }}u) {
                const unsigned c = {{ udiv("e", points_div) }}, q = e - c * {{ points }}u;
                const unsigned q0 = {{ udiv("q", n_div) }}, q1 = q - q0 * {{ n }}u;
{%- for d in dims %}
                const long long t{{ d.i }} = (long long)q{{ d.i }} - ({{ d.base }}ll) + (long long)tile{{ d.i }} * {{ d.step }}ll;
{%- endfor %}
                float v = 0.0f;
                if (c0 + c < {{ ins }}u{% for d in dims %} && t{{ d.i }} >= 0 && t{{ d.i }} < {{ d.count }}ll{% endfor %})
                    v = in0[((size_t)g * {{ ins }}u + c0 + c) * {{ plane }}ull + (size_t)t0 * {{ dims[1].count }}u + (size_t)t1];
                sig[e] = v;
            }
            __syncthreads();
            // Rows: bin k1 of row r = sum_j sig[r][j] w^(k1 j).
            for (unsigned e = tid; e < {{ cb * n * h }}u; e += {{ threads }}u) {
                const unsigned cr = {{ udiv("e", h_div) }}, k1 = e - cr * {{ h }}u;
                const float *row = sig + cr * {{ n }}u;
                float2 sum = make_float2(0.0f, 0.0f);
                unsigned m = 0u; // k1 j mod n
#pragma unroll
                for (int j = 0; j < {{ n }}; ++j) {
                    const float v = row[j];
                    const float2 w = tw[m];
                    sum.x += v * w.x;
                    sum.y += v * w.y;
                    m += k1;
                    m = m >= {{ n }}u ? m - {{ n }}u : m;
                }
                rows[e] = sum;
            }
            __syncthreads();
            // Columns: bin (k0, k1) = sum_r rows[r][k1] w^(k0 r).
            for (unsigned e = tid; e < {{ cb * bins }}u; e += {{ threads }}u) {
                const unsigned c = {{ udiv("e", bins_div) }}, b = e - c * {{ bins }}u;
                const unsigned k0 = {{ udiv("b", h_div) }}, k1 = b - k0 * {{ h }}u;
                spec[e] = column_dft<false>(tw, rows + c * {{ bins }}u + k1, k0);
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
        // Inverse columns: (r, k1) = sum_k0 rows[k0][k1] w^(-k0 r).
        for (unsigned e = tid; e < {{ kb * bins }}u; e += {{ threads }}u) {
            const unsigned kl = {{ udiv("e", bins_div) }}, b = e - kl * {{ bins }}u;
            const unsigned r = {{ udiv("b", h_div) }}, k1 = b - r * {{ h }}u;
            spec[e] = column_dft<true>(tw, rows + kl * {{ bins }}u + k1, r);
        }
        __syncthreads();
        // Inverse rows as a C2R (bins 1 .. n - h stand for their mirrors too), into the tile's
        // valid outputs: output o = tile * step + r along a dimension, at position out_base + r.
        for (unsigned e = tid; e < {{ kb * v0 * v1 }}u; e += {{ threads }}u) {
            const unsigned kl = {{ udiv("e", valid_div) }}, v = e - kl * {{ v0 * v1 }}u;
            const unsigned r0 = {{ udiv("v", v1_div) }}, r1 = v - r0 * {{ v1 }}u;
            const unsigned o = kgroup * {{ kb }}u + kl;
            const unsigned o0 = tile0 * {{ v0 }}u + r0, o1 = tile1 * {{ v1 }}u + r1;
            if (o < {{ outs }}u && o0 < {{ dims[0].out }}u && o1 < {{ dims[1].out }}u) {
                const float2 *z = spec + kl * {{ bins }}u + ({{ dims[0].out_base }}u + r0) * {{ h }}u;
                const unsigned p1 = {{ dims[1].out_base }}u + r1;
                float y = 0.0f;
                unsigned m = 0u; // k1 p1 mod n
#pragma unroll
                for (int k1 = 0; k1 < {{ h }}; ++k1) {
                    const float2 w = tw[m];
                    const float re = z[k1].x * w.x + z[k1].y * w.y; // Re(z w^-1)
                    y += (k1 == 0 || 2 * k1 == {{ n }}) ? re : 2.0f * re;
                    m += p1;
                    m = m >= {{ n }}u ? m - {{ n }}u : m;
                }
                out[((size_t)g * {{ outs }}u + o) * {{ out_plane }}ull + (size_t)o0 * {{ dims[1].out }}u + o1] = y * {{ scale }};
            }
        }
    }
}
