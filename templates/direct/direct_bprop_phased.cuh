{#- Strided bprop per stride phase (the transposed convolution's decomposition). The generator
    (direct.c) sets per dimension shift = -pad mod stride and off_base = ceil(pad / stride). -#}
// Strided bprop, one GEMM per stride phase. Per strided dimension, phase q holds the input
// pixels i = r + stride*u with (r + pad) % stride = q; only the taps f = q + stride*j reach
// them, from the output pixels o = (i + pad - f) / stride = u + off - j, off = (r + pad - q) /
// stride, so no gather divides by the stride. A dimension of stride 1 keeps u = i, j = f and
// o = i + pad - f*dilation. rows = (n, u...), red = (k, j...), cols = c; blockIdx.z = split *
// {{ phases }} + phase, the last dimension's q varying fastest.
struct phase_t {
    unsigned split; // which slice of a split reduction
{%- for d in strided %}
    unsigned q{{ d.i }}, r{{ d.i }}, off{{ d.i }};
{%- endfor %}
};

__device__ __forceinline__ phase_t phase_of(unsigned z)
{
{{- decompose(phase_digits, "    ") }}
    phase_t ph;
    ph.split = split;
{%- for d in strided %}
    ph.q{{ d.i }} = q{{ d.i }};
{%- if d.shift == 0 %}
    ph.r{{ d.i }} = q{{ d.i }};                 // r = (q - pad) mod stride
    ph.off{{ d.i }} = {{ d.off_base }}u;
{%- else %}
    const bool wrap{{ d.i }} = q{{ d.i }} + {{ d.shift }}u >= {{ d.stride }}u;
    ph.r{{ d.i }} = q{{ d.i }} + {{ d.shift }}u - (wrap{{ d.i }} ? {{ d.stride }}u : 0u); // r = (q - pad) mod stride
    ph.off{{ d.i }} = {{ d.off_base }}u - (wrap{{ d.i }} ? 1u : 0u);
{%- endif %}
{%- endfor %}
    return ph;
}

// A[row][red] = dy[n][k][o] with o = u + off - j where that lies in dy, else 0.
__device__ __forceinline__ float load_a(const float *__restrict__ dy, unsigned row, unsigned red, const phase_t &ph)
{
{{- decompose(row_digits, "    ") }}
{{- decompose(red_digits, "    ") }}
{%- for d in dims %}
{%- if d.stride == 1 %}
    const int o{{ d.i }} = (int)u{{ d.i }}{{ " + " ~ d.pad if d.pad }} - (int)({{ times("j" ~ d.i, d.dil) }});
{%- else %}
    const int o{{ d.i }} = (int)(u{{ d.i }} + ph.off{{ d.i }}) - (int)j{{ d.i }};
{%- endif %}
{%- endfor %}
    if ({% for d in dims %}(unsigned)o{{ d.i }} < {{ d.out }}u{{ " && " if not loop.last }}{% endfor %})
        return dy[((idx_t)n * {{ k_size }}u + k) * {{ out_pixels }}u{% for d in dims %} + (idx_t)o{{ d.i }}{{ " * " ~ d.out_stride ~ "u" if d.out_stride != 1 }}{% endfor %}];
    return 0.0f;
}

// B[red][col] = w[k][c = col][f] with f = q + stride*j{{ " (the taps flipped: a convolution)" if dims[0].flip }}, 0 past the kernel.
__device__ __forceinline__ float load_b(const float *__restrict__ w, unsigned red, unsigned col, const phase_t &ph)
{
{{- decompose(red_digits, "    ") }}
{%- for d in dims %}
{%- if d.stride == 1 %}
    const unsigned f{{ d.i }} = j{{ d.i }};
{%- else %}
    const unsigned f{{ d.i }} = ph.q{{ d.i }} + {{ d.stride }}u * j{{ d.i }};
{%- endif %}
{%- endfor %}
    if ({% for d in strided %}f{{ d.i }} >= {{ d.kernel }}u{{ " || " if not loop.last }}{% endfor %})
        return 0.0f;
    return w[((idx_t)k * {{ c_size }}u + col) * {{ kernel_pixels }}u{% for d in dims %} + {{ times(tap(d), d.kernel_stride) }}{% endfor %}];
}

// Whether row's input pixel exists: a phase may hold one pixel fewer than another.
__device__ __forceinline__ bool in_image(unsigned row, const phase_t &ph)
{
{{- decompose(row_digits, "    ") }}
    (void)n; // the image index does not bound the pixel, nor does a stride-1 dimension's u
{%- for d in dims %}{% if d.stride == 1 %}
    (void)u{{ d.i }};
{%- endif %}{% endfor %}
    return {% for d in strided %}ph.r{{ d.i }} + {{ d.stride }}u * u{{ d.i }} < {{ d.in }}u{{ " && " if not loop.last }}{% endfor %};
}

// out[row][col] is dx[n][c = col][i], i = r + stride*u.
__device__ __forceinline__ idx_t out_index(unsigned row, unsigned col, const phase_t &ph)
{
{{- decompose(row_digits, "    ") }}
    return ((idx_t)n * {{ c_size }}u + col) * {{ in_pixels }}u{% for d in dims %} + (idx_t)({% if d.stride == 1 %}u{{ d.i }}{% else %}ph.r{{ d.i }} + {{ d.stride }}u * u{{ d.i }}{% endif %}){{ " * " ~ d.in_stride ~ "u" if d.in_stride != 1 }}{% endfor %};
}
