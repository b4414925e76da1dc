{#- Strided bprop per stride phase (the transposed convolution's decomposition): phase q holds
    the input pixels i = r + stride*u with (r + pad) % stride = q, which only the taps
    f = q + stride*j reach, from o = (i + pad - f) / stride = u + c - j, c = (r + pad - q) / stride.
    rows = (n, u...), red = (k, j...), cols = c input channels; a dimension of stride 1 is the
    plain form (u = i, j = f, o = i + pad - f*dilation). No gather divides by the stride. -#}
// blockIdx.z as the split of the reduction and the phase's constants per strided dimension:
// q, its first input pixel r, and the offset c.
struct phase_t {
    unsigned split;
{%- for d in strided %}
    unsigned q{{ d.i }}, r{{ d.i }}, c{{ d.i }};
{%- endfor %}
};

__device__ __forceinline__ phase_t phase_of(unsigned z)
{
{{- decompose(phase_digits, "    ") }}
    phase_t ph;
    ph.split = split;
{%- for d in strided %}
    const bool wrap{{ d.i }} = q{{ d.i }} + {{ d.shift }}u >= {{ d.stride }}u; // r = (q - pad) mod stride
    ph.q{{ d.i }} = q{{ d.i }};
    ph.r{{ d.i }} = q{{ d.i }} + {{ d.shift }}u - (wrap{{ d.i }} ? {{ d.stride }}u : 0u);
    ph.c{{ d.i }} = {{ d.c_base }}u - (wrap{{ d.i }} ? 1u : 0u);
{%- endfor %}
    return ph;
}

// A[row][red] = dy[n][k][o] with o = u + c - j where that lies in dy, else 0.
__device__ __forceinline__ float load_a(const float *__restrict__ dy, unsigned row, unsigned red, const phase_t &ph)
{
{{- decompose(row_digits, "    ") }}
{{- decompose(red_digits, "    ") }}
{%- for d in dims %}
{%- if d.stride == 1 %}
    const int o{{ d.i }} = (int)u{{ d.i }}{{ " + " ~ d.pad if d.pad }} - (int)({{ times("j" ~ d.i, d.dil) }});
{%- else %}
    const int o{{ d.i }} = (int)(u{{ d.i }} + ph.c{{ d.i }}) - (int)j{{ d.i }};
{%- endif %}
{%- endfor %}
    if ({% for d in dims %}(unsigned)o{{ d.i }} < {{ d.out }}u{{ " && " if not loop.last }}{% endfor %})
        return dy[((idx_t)n * {{ k_size }}u + k) * {{ out_pixels }}u{% for d in dims %} + (idx_t)o{{ d.i }}{{ " * " ~ d.out_stride ~ "u" if d.out_stride != 1 }}{% endfor %}];
    return 0.0f;
}

// B[red][col] = w[k][c = col][f] with f = q + stride*j (flipped for convolution), 0 past the kernel.
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
    (void)n; // the image index does not bound the pixel
    return {% for d in strided %}ph.r{{ d.i }} + {{ d.stride }}u * u{{ d.i }} < {{ d.in }}u{{ " && " if not loop.last }}{% endfor %};
}

// out[row][col] is dx[n][c = col][i], i = r + stride*u.
__device__ __forceinline__ idx_t out_index(unsigned row, unsigned col, const phase_t &ph)
{
{{- decompose(row_digits, "    ") }}
    return ((idx_t)n * {{ c_size }}u + col) * {{ in_pixels }}u{% for d in dims %} + (idx_t)({% if d.stride == 1 %}u{{ d.i }}{% else %}ph.r{{ d.i }} + {{ d.stride }}u * u{{ d.i }}{% endif %}){{ " * " ~ d.in_stride ~ "u" if d.in_stride != 1 }}{% endfor %};
}
