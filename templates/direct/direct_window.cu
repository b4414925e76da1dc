{#- direct's bprop by sliding windows, for layers with few input channels. generator/direct/direct_window.c
    says why and chooses every constant; this template lays them out. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

{{ copy_async(4) }}

// One stage into shared memory: dy's window for {{ kc }} output channels ([kk][row][col], pitch
// {{ cols }}, {{ window_pitch }} floats a channel) and their weights
{%- if packed %} ([kk][fz][jy][jx], {{ tap_row }} taps a row: one input channel){% else %} ([kk][fz][jy][jx], a float4 of the {{ c_size }} input channel(s)){% endif %}.
// Each channel's copies read where the thread worked out once (`from`, `inside`: bit i for copy
// i), a plane further on per channel. Every thread makes all {{ copies }} copies of a channel: those
// past its {{ window }} floats write zeros into the padding, so no copy waits behind a branch.
__device__ __forceinline__ void stage(float *__restrict__ window, float4 *__restrict__ weights,
                                      const float *__restrict__ dy_k, const float *__restrict__ w_k,
                                      const unsigned (&from)[{{ copies }}], unsigned inside,
                                      const unsigned (&wfrom)[{{ wcopies }}], unsigned winside, unsigned tid)
{
    float *const wf = reinterpret_cast<float *>(weights);
#pragma unroll
    for (int kk = 0; kk < {{ kc }}; ++kk) {
        const float *__restrict__ src = dy_k + kk * {{ dy_k_stride }}u;
#pragma unroll
        for (int i = 0; i < {{ copies }}; ++i)
            copy4(window + kk * {{ window_pitch }}u + tid + {{ threads }}u * i, src + from[i], (inside >> i) & 1u);
#pragma unroll
        for (int i = 0; i < {{ wcopies }}; ++i)
            if (tid + {{ threads }}u * i < {{ weights }}u)
{%- if wz > 1 %}
#pragma unroll
                for (int fz = 0; fz < {{ wz }}; ++fz) // every depth slice of the kernel: each stage's dy slice meets several
                    copy4(wf + (kk * {{ wz }} + fz) * {{ weights }}u + tid + {{ threads }}u * i,
                          w_k + kk * {{ w_k_stride }}u + fz * ({{ slice_stride }}) + wfrom[i], (winside >> i) & 1u);
{%- else %}
                copy4(wf + kk * {{ weights }}u + tid + {{ threads }}u * i, w_k + kk * {{ w_k_stride }}u + wfrom[i], (winside >> i) & 1u);
{%- endif %}
    }
}

// One stage's products for a phase with JY x JX taps: per output channel and tap row, the
// {{ px }} + {{ x.taps - 1 }} values of dy the thread's {{ px }} pixels slide over (float4 reads), then per
{%- if packed %}
// depth slice the row's {{ x.taps }} taps (float4 reads of 4 taps along x, the same for the whole block; all
// loaded before the first FMA) and {{ px }} FMAs a tap.
{%- else %}
// tap the weights of the {{ c_size }} input channels (one float4, the same for the whole block) and
// {{ px }} x {{ c_size }} FMAs.
{%- endif %} The window's row and column origins are those of the most taps.
{%- if volume %}
// In 3-D the thread holds {{ pz }} input slice(s) iz0 + z of dx; this stage's dy slice, oz0 + dz
// (oz0 = iz0 + pad - (taps - 1)), reaches slice z through the depth tap fz = z + {{ depth_kernel - 1 }} - dz.
{%- endif %}
{%- if depth_variants %}
// DZ: this stage's dz, a constant (one copy of the products per dz, so that which of the thread's
// slices a tap reaches is known when compiling: no branches, and the loads run ahead of the
// FMAs); the output channels stay a loop, to keep the {{ depth_variants }} copies' code small.
{%- endif %}
template <int JY, int JX{{ ", int DZ" if depth_variants }}>
__device__ __forceinline__ void products(float (&acc)[{{ c_size }}][{{ pz }}][{{ px }}], const float *__restrict__ window,
                                         const float4 *__restrict__ weights, unsigned ty, unsigned tx{{ "" if depth_variants else ", int dz" }})
{
{%- if depth_variants %}
    const int dz = DZ;
#pragma unroll 1
{%- else %}
#pragma unroll
{%- endif %}
    for (int kk = 0; kk < {{ kc }}; ++kk)
#pragma unroll
        for (int jy = 0; jy < JY; ++jy) {
            // dy's row o = u + off - jy is the window's row ty + {{ y.taps - 1 }} - jy
            const float *row = window + kk * {{ window_pitch }}u + (ty + {{ y.taps - 1 }}u - jy) * {{ cols }}u + tx * {{ px }}u;
            float d[{{ 4 * d4 }}];
#pragma unroll
            for (int i = 0; i < {{ d4 }}; ++i) {
                const float4 v = *reinterpret_cast<const float4 *>(row + 4 * i);
                d[4 * i] = v.x, d[4 * i + 1] = v.y, d[4 * i + 2] = v.z, d[4 * i + 3] = v.w;
            }
{%- if packed %}
            // the taps of row jy of each slice's depth tap (a slice it does not reach reads a valid one, unused)
            float wv[{{ pz }}][{{ tap_row }}];
#pragma unroll
            for (int z = 0; z < {{ pz }}; ++z) {
{%- if wz > 1 %}
                const int fz = z + {{ depth_kernel - 1 }} - dz, fs = fz < 0 ? 0 : fz >= {{ depth_kernel }} ? {{ depth_kernel - 1 }} : fz;
{%- else %}
                const int fs = 0;
{%- endif %}
                const float4 *q = weights + (kk * {{ wz }} + fs) * {{ weights // 4 }} + jy * {{ tap_row // 4 }};
#pragma unroll
                for (int i = 0; i < {{ tap_row // 4 }}; ++i) {
                    const float4 v = q[i];
                    wv[z][4 * i] = v.x, wv[z][4 * i + 1] = v.y, wv[z][4 * i + 2] = v.z, wv[z][4 * i + 3] = v.w;
                }
            }
{%- endif %}
#pragma unroll
            for (int z = 0; z < {{ pz }}; ++z) {
                const int fz = z + {{ depth_kernel - 1 }} - dz;
                if (fz < 0 || fz >= {{ depth_kernel }})
                    continue;
{%- if packed %}
#pragma unroll
                for (int jx = 0; jx < JX; ++jx)
#pragma unroll
                    for (int p = 0; p < {{ px }}; ++p) // dy's column o = u + p + off - jx
                        acc[0][z][p] = fmaf(d[p + {{ x.taps - 1 }} - jx], wv[z][jx], acc[0][z][p]);
{%- else %}
                const float4 *wts = weights + (kk * {{ wz }} + {{ "fz" if wz > 1 else "0" }}) * {{ weights // 4 }};
#pragma unroll
                for (int jx = 0; jx < JX; ++jx) {
                    const float4 w = wts[jy * {{ x.taps }} + jx];
#pragma unroll
                    for (int p = 0; p < {{ px }}; ++p) {
                        const float v = d[p + {{ x.taps - 1 }} - jx]; // dy's column o = u + p + off - jx
{%- for c in range(c_size) %}
                        acc[{{ c }}][z][p] = fmaf(v, w.{{ ["x", "y", "z", "w"][c] }}, acc[{{ c }}][z][p]);
{%- endfor %}
                    }
                }
{%- endif %}
            }
        }
}

{% if depth_variants %}// The products of the stage dz, by the copy made for it.
template <int JY, int JX>
__device__ __forceinline__ void products_at(float (&acc)[{{ c_size }}][{{ pz }}][{{ px }}], const float *__restrict__ window,
                                            const float4 *__restrict__ weights, unsigned ty, unsigned tx, int dz)
{
    switch (dz) {
{%- for v in range(depth_variants) %}
    case {{ v }}: products<JY, JX, {{ v }}>(acc, window, weights, ty, tx); break;
{%- endfor %}
    }
}

{% endif %}extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ dy, const float *__restrict__ w, float *__restrict__ dx,
    float *__restrict__ workspace)
{
    (void)workspace;
{%- if dynamic %}
    extern __shared__ __align__(16) float smem[]; // {{ 2 * kc * window_pitch }} floats of windows, then the weights
    float (*const window)[{{ kc * window_pitch }}] = reinterpret_cast<float (*)[{{ kc * window_pitch }}]>(smem);
    float4 (*const weights)[{{ kc * wz * weights // 4 }}] = reinterpret_cast<float4 (*)[{{ kc * wz * weights // 4 }}]>(smem + {{ 2 * kc * window_pitch }});
{%- else %}
    __shared__ __align__(16) float window[2][{{ kc * window_pitch }}];
    __shared__ __align__(16) float4 weights[2][{{ kc * wz * weights // 4 }}];
{%- endif %}
    const unsigned tid = threadIdx.x, z = blockIdx.z;
    // This block's stride phase (q0, q1) along (y, x) and image n{{ ", and its input slices from iz0 = " ~ pz ~ " iz along depth" if volume }}.
{{- decompose(phase_digits, "    ") }}
{%- for d in dims %}
    // {{ ["y", "x"][d.i] }}: the phase's first input pixel r{{ d.i }} = (q{{ d.i }} - pad) mod {{ d.stride }}, dy's offset off{{ d.i }} = (r{{ d.i }} + pad - q{{ d.i }}) / {{ d.stride }}, its taps
{%- if d.shift == 0 %}
    const unsigned r{{ d.i }} = q{{ d.i }}, off{{ d.i }} = {{ d.off_base }}u;
{%- else %}
    const bool wrap{{ d.i }} = q{{ d.i }} + {{ d.shift }}u >= {{ d.stride }}u;
    const unsigned r{{ d.i }} = q{{ d.i }} + {{ d.shift }}u - (wrap{{ d.i }} ? {{ d.stride }}u : 0u);
    const unsigned off{{ d.i }} = {{ d.off_base }}u - (wrap{{ d.i }} ? 1u : 0u);
{%- endif %}
    const unsigned taps{{ d.i }} = q{{ d.i }} < {{ d.full }}u ? {{ d.taps }}u : {{ d.taps - 1 }}u;
{%- endfor %}

    // The block's pixels of the phase: rows t0.., columns u0..; the window's first dy row and
    // column (o = u + off - j at the block's first pixel and the last of the most taps).
    const unsigned t0 = blockIdx.y * {{ ly }}u, u0 = blockIdx.x * {{ lx * px }}u;
    const int oy0 = (int)(t0 + off0) - {{ y.taps - 1 }}, ox0 = (int)(u0 + off1) - {{ x.taps - 1 }};

    // Where this thread's copies of every stage read, from the output channel's plane.
    unsigned from[{{ copies }}], inside = 0u;
#pragma unroll
    for (int i = 0; i < {{ copies }}; ++i) {
        const unsigned e = tid + {{ threads }}u * i;
{{- decompose(stage_digits, "        ") }}
        const int oy = oy0 + (int)row, ox = ox0 + (int)col;
        const bool in = e < {{ window }}u && (unsigned)oy < {{ y.out }}u && (unsigned)ox < {{ x.out }}u;
        from[i] = in ? (unsigned)oy * {{ x.out }}u + (unsigned)ox : 0u;
        inside |= in ? 1u << i : 0u;
    }
    unsigned wfrom[{{ wcopies }}], winside = 0u;
#pragma unroll
    for (int i = 0; i < {{ wcopies }}; ++i) {
        const unsigned e = tid + {{ threads }}u * i;
{{- decompose(weight_digits, "        ") }}
{%- if packed %}
        const unsigned c4 = 0u; // one input channel: a row's taps packed along x
{%- endif %}
        // w[k][c][f], the tap f = q + stride*j{{ " flipped (a convolution)" if y.flip }}
        const unsigned fy = {{ (y.kernel - 1) ~ "u - " if y.flip }}(q0 + {{ y.stride }}u * jy), fx = {{ (x.kernel - 1) ~ "u - " if x.flip }}(q1 + {{ x.stride }}u * jx);
        const bool in = e < {{ weights }}u && c4 < {{ c_size }}u && jy < taps0 && jx < taps1;
        wfrom[i] = in ? c4 * {{ w_c_stride }}u + fy * {{ x.kernel }}u + fx : 0u;
        winside |= in ? 1u << i : 0u;
    }

    float acc[{{ c_size }}][{{ pz }}][{{ px }}];
#pragma unroll
    for (int c = 0; c < {{ c_size }}; ++c)
#pragma unroll
        for (int zi = 0; zi < {{ pz }}; ++zi)
#pragma unroll
            for (int p = 0; p < {{ px }}; ++p)
                acc[c][zi][p] = 0.0f;
    // Lanes: {{ lanes }} neighbouring rows per quarter warp (distinct banks), then {{ lx }} along x.
    const unsigned ty = (tid & {{ lanes - 1 }}u) + {{ lanes }}u * (tid >> {{ lanes_lx_log2 }}), tx = (tid >> {{ lanes_log2 }}) & {{ lx - 1 }}u;

{%- if volume %}

    // Stage t = (dz, chunk), dz outermost: dy's slice oz = oz0 + dz of a chunk's output channels,
    // the {{ pz + depth_kernel - 1 }} slice(s) that meet dx's slices iz0..iz0 + {{ pz - 1 }}, and {{ "every depth slice of the kernel" if pz > 1 else "the kernel's slice fz = " ~ (depth_kernel - 1) ~ " - dz" }}{{ " (reversed: a convolution)" if depth_flip }}. Only the slices
    // inside dy are staged, dz in [dz_first, dz_last) (those past dy's edges would add zeros).
    const unsigned iz0 = iz * {{ pz }}u;
    const int oz0 = (int)iz0 + ({{ depth_pad - depth_kernel + 1 }});
    const int dz_end = {{ depth_out }} - oz0 < {{ pz + depth_kernel - 1 }} ? {{ depth_out }} - oz0 : {{ pz + depth_kernel - 1 }};
    const unsigned dz_first = oz0 < 0 ? (unsigned)-oz0 : 0u, dz_last = dz_end > 0 ? (unsigned)dz_end : 0u;
    const float *__restrict__ dy_n = dy + (size_t)n * {{ k_size * dy_k_stride }}ull;
    auto stage_at = [&](unsigned dz, unsigned chunk, unsigned b) {
{%- if pz > 1 %}
        const unsigned slice = {{ depth_kernel - 1 if depth_flip else 0 }}u; // the first of the {{ wz }} the stage holds
{%- else %}
        const unsigned slice = {{ "dz" if depth_flip else (depth_kernel - 1) ~ "u - dz" }};
{%- endif %}
        stage(window[b], weights[b], dy_n + (size_t)chunk * {{ kc * dy_k_stride }}u + (unsigned)(oz0 + (int)dz) * {{ out_plane }}u,
              w + (size_t)chunk * {{ kc * w_k_stride }}u + slice * {{ kernel_plane }}u, from, inside, wfrom, winside, tid);
    };
    if (dz_first < dz_last)
        stage_at(dz_first, 0u, 0u);
    asm volatile("cp.async.commit_group;\n" ::);
    unsigned b = 0u; // the buffer of this stage
#pragma unroll 1
    for (unsigned dz = dz_first; dz < dz_last; ++dz)
#pragma unroll 1
    for (unsigned chunk = 0; chunk < {{ chunks }}u; ++chunk, b ^= 1u) {
        // the next stage's copies fly during this one's products
        const bool wraps = chunk + 1u == {{ chunks }}u;
        const unsigned next_dz = wraps ? dz + 1u : dz, next_chunk = wraps ? 0u : chunk + 1u;
        if (next_dz < dz_last)
            stage_at(next_dz, next_chunk, b ^ 1u);
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this stage's
        __syncthreads();
        const float *const win = window[b];
        const float4 *const wts = weights[b];
{%- else %}

    const float *__restrict__ dy_n = dy + (size_t)n * {{ k_size * dy_k_stride }}ull;
    stage(window[0], weights[0], dy_n, w, from, inside, wfrom, winside, tid);
    asm volatile("cp.async.commit_group;\n" ::);
    for (unsigned chunk = 0; chunk < {{ chunks }}u; ++chunk) {
        if (chunk + 1u < {{ chunks }}u) // the next stage's copies fly during this one's products
            stage(window[(chunk + 1u) & 1u], weights[(chunk + 1u) & 1u], dy_n + (size_t)(chunk + 1u) * {{ kc * out_plane }}u,
                  w + (size_t)(chunk + 1u) * {{ kc * c_size * kernel_plane }}u, from, inside, wfrom, winside, tid);
        asm volatile("cp.async.commit_group;\n" ::);
        asm volatile("cp.async.wait_group 1;\n" ::); // this stage's
        __syncthreads();
        const float *const win = window[chunk & 1u];
        const float4 *const wts = weights[chunk & 1u];
        const int dz = 0;
{%- endif %}
{%- for c in classes %}
{%- if loop.first and loop.last %}
        products{{ "_at" if depth_variants }}<{{ c.jy }}, {{ c.jx }}>(acc, win, wts, ty, tx, dz);
{%- else %}
        {% if not loop.first %}else{% if not loop.last %} {% endif %}{% endif %}{% if not loop.last %}if (taps0 == {{ c.jy }}u && taps1 == {{ c.jx }}u){% endif %}
            products{{ "_at" if depth_variants }}<{{ c.jy }}, {{ c.jx }}>(acc, win, wts, ty, tx, dz);
{%- endif %}
{%- endfor %}
        __syncthreads();
    }

    // dx[n][c][i] at i = r + stride*u, where that lies in the image.
    const unsigned iy = r0 + {{ y.stride }}u * (t0 + ty);
    if (iy >= {{ y.in }}u)
        return;
    float *__restrict__ dst = dx + (size_t)n * {{ c_size * dx_c_stride }}ull + {{ "iz0 * " ~ in_plane ~ "u + " if volume }}iy * {{ x.in }}u;
#pragma unroll
    for (int zi = 0; zi < {{ pz }}; ++zi) {
{%- if volume %}
        if (iz0 + zi >= {{ depth_in }}u)
            break;
{%- endif %}
#pragma unroll
        for (int p = 0; p < {{ px }}; ++p) {
            const unsigned ix = r1 + {{ x.stride }}u * (u0 + tx * {{ px }}u + p);
            if (ix < {{ x.in }}u)
#pragma unroll
                for (int c = 0; c < {{ c_size }}; ++c)
                    dst[c * {{ dx_c_stride }}u + zi * {{ in_plane }}u + ix] = acc[c][zi][p];
        }
    }
}
