{#- Rank 2 R2C and C2R with one image's spectrum spread over a cluster of blocks (sm_90's
    distributed shared memory; generator/fft/fft_real.c, clustered_layout, decides every constant).
    Block `rank` of cluster `image` owns spectrum columns col0 = rank * width .. col0 + width - 1
    and row pairs rank, rank + cluster, ... Forward, the row transforms send each bin to the block
    owning its column, then each block transforms its own columns; inverse, each block transforms
    its columns, then the row transforms read their bins from the blocks owning them. Included by
    fft_real.cu, whose macros it uses. -#}

{#- Cluster helpers and the bin bookkeeping. -#}
{%- macro cluster_functions() -%}

{{ cluster_peer("float2") }}

{{ cluster_sync() }}

// This block's rank in its cluster and the cluster's index in the grid: with clusters of {{ cluster }} blocks along x
// and a 1-D grid, blockIdx.x % {{ cluster }} and blockIdx.x / {{ cluster }}, the block's columns and the image.
__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned cluster_index()
{
    unsigned c;
    asm("mov.u32 %0, %%clusterid.x;" : "=r"(c));
    return c;
}
{%- if sign < 0 %}

// Where bin k of a row pair's packed spectrum Z goes: to block `home`, which owns column
// c = min(k, {{ n }} - k) (both bins feed it), slot j = c - home * {{ width }} for k <= {{ n // 2 }}, else slot {{ width }} + j.
__device__ __forceinline__ unsigned bin_slot(unsigned k, unsigned &home)
{
    const bool low = k <= {{ n // 2 }}u;
    const unsigned c = low ? k : {{ n }}u - k;
    home = {{ udiv("c", width_div) }};
    const unsigned j = c - home * {{ width }}u;
    return low ? j : {{ width }}u + j;
}
{%- if aliased %}

// Where output bin ky of column j waits for the copy-out: over the {{ 2 * buf_rows }} slots the column read
// (slot j of row ky for ky < {{ buf_rows }}, else slot {{ width }} + j of row ky - {{ buf_rows }}).
__device__ __forceinline__ unsigned staged_at(unsigned ky, unsigned j)
{
    return ky < {{ buf_rows }}u ? ky * {{ buf_pitch }}u + j : (ky - {{ buf_rows }}u) * {{ buf_pitch }}u + {{ width }}u + j;
}
{%- endif %}

{%- else %}

// Bin k of Z = A + iB for window rows r and r + 1 (b may be absent: a window's last odd row),
// read from the block owning column m = min(k, {{ n }} - k): bins past the half mirror earlier ones,
// conjugated; bin 0{{ " and bin " ~ (n // 2) if n % 2 == 0 }} of a real row {{ "are" if n % 2 == 0 else "is" }} real, so their imaginary parts are
// dropped, as cuFFT's C2R does.
__device__ __forceinline__ float2 pack_peer_bin(const float2 (*buf)[{{ buf_pitch }}], unsigned r, bool has_b, unsigned k)
{
    const bool mirrored = k > {{ n // 2 }}u;
    const unsigned m = mirrored ? {{ n }}u - k : k, home = {{ udiv("m", width_div) }}, j = m - home * {{ width }}u;
    float2 A = *peer(&buf[r][j], home), B = has_b ? *peer(&buf[r + 1u][j], home) : make_float2(0.0f, 0.0f);
{{- pack_bins_tail() }}
}
{%- endif %}
{%- endmacro -%}

{#- The row item of a warp task's lane group t: row pair q = rank, rank + {{ cluster }}, ... -#}
{%- macro cluster_row_item() %}
        const unsigned q = (task * {{ per_warp }}u + t) * {{ cluster }}u + rank;
        const bool ok0 = {{ "t < " ~ per_warp ~ "u && " if idle_lanes }}q < {{ pairs }}u;
{%- endmacro -%}

{#- The column item: column j of the block, kx of the spectrum. -#}
{%- macro cluster_column_item() %}
        const unsigned j = task * {{ per_warp }}u + t, kx = col0 + j;
        const bool ok = {{ "t < " ~ per_warp ~ "u && " if idle_lanes }}j < {{ width }}u && kx < {{ half }}u;
{%- endmacro -%}

{%- macro cluster_forward() %}
    cluster_sync(); // every block of the cluster runs before any writes into its shared memory

    // Rows: window rows 2q and 2q + 1 (signal rows {{ wy0 }} + 2q, ...) as one complex transform each,
    // q < {{ pairs }}, this block's share; signal rows outside the window are zero and never transformed.
    // Each bin goes to the block owning its column.
    for (unsigned task = warp; task < {{ row_tasks }}u; task += {{ warps }}u) {
{{- cluster_row_item() }}
        const bool ok1 = ok0{{ " && 2u * q + 1u < " ~ h ~ "u" if h % 2 == 1 }};
        const float *__restrict__ row0 = in0 + {{ transform_offset("image", rs) }} + ({{ idx }})(2u * q) * {{ pitch }}u;
        const float *__restrict__ row1 = row0 + {{ pitch }}u;
{{- load_window("ok0", "ok1", "        ") }}
{{ fft_transform(hoist_twiddles)|indent(4) }}
        if (ok0) {
{%- for k in nat %}
            {
                unsigned home;
                const unsigned slot = bin_slot({{ k }}, home);
                *peer(&buf[q][slot], home) = x[{{ loop.index0 }}];
            }
{%- endfor %}
        }
    }
    cluster_sync(); // the bins of this block's columns are all in

    // Columns kx = col0 .., each unpacked from the packed rows as it is loaded.
    float2 *__restrict__ out = reinterpret_cast<float2 *>(out0);
    for (unsigned task = warp; task < {{ col_tasks }}u; task += {{ warps }}u) {
{{- cluster_column_item() }}
        const unsigned mj = kx == 0u{{ " || kx == " ~ (n // 2) ~ "u" if n % 2 == 0 }} ? j : {{ width }}u + j; // bin n - kx
{%- for c in yregs %}
{%- if c.kind == "zero" %}
        x[{{ c.r }}] = make_float2(0.0f, 0.0f);
{%- else %}
        {
            const unsigned y = {{ c.e }}; // window row
            const bool in = ok{{ " && y < " ~ h ~ "u" if c.kind != "full" }};
            const float2 z = in ? buf[y >> 1][j] : make_float2(0.0f, 0.0f);
            const float2 m = in ? buf[y >> 1][mj] : make_float2(0.0f, 0.0f);
            x[{{ c.r }}] = y & 1u ? unpack_odd(z, m) : unpack_even(z, m);
        }
{%- endif %}
{%- endfor %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
{%- if aliased %}
        __syncwarp(); // the lane group has read all of column kx before any lane writes over it
        if (ok) {
{%- for k in colpos %}
            shared_buf[staged_at({{ k }}, j)] = x[{{ loop.index0 }}];
{%- endfor %}
        }
{%- else %}
        if (ok) {
            float2 *__restrict__ dst = out + {{ transform_offset("image", ss) }};
{%- for k in colpos %}
            dst[kx * {{ n }}u + {{ k }}] = {{ scaled_c("x[" ~ loop.index0 ~ "]") }};
{%- endfor %}
        }
{%- endif %}
    }
{%- if aliased %}
    __syncthreads();
    // The block's columns of every spectrum row leave in runs of {{ width }} bins: stored straight from a
    // column, neighbouring lanes would write {{ half * 8 }} bytes apart.
    {
        float2 *__restrict__ dst = out + {{ transform_offset("image", ss) }} + col0;
        for (unsigned e = threadIdx.x; e < {{ n * width }}u; e += {{ threads }}u) {
            const unsigned ky = {{ udiv("e", width_div) }}, j = e - ky * {{ width }}u;
            if (col0 + j < {{ half }}u)
                dst[ky * {{ half }}u + j] = {{ scaled_c("shared_buf[staged_at(ky, j)]") }};
        }
    }
{%- endif %}
{%- endmacro -%}

{%- macro cluster_inverse() %}
    const float2 *__restrict__ in = reinterpret_cast<const float2 *>(in0);
{%- if staged_loads %}
    // The block's columns of all {{ n }} spectrum rows come in coalesced, {{ copy_unroll }} loads per thread in flight
    // (read straight by the columns, a lane's bins would be {{ half * 8 }} bytes apart); the columns then
    // transform in place.
    {
        const float2 *__restrict__ src = in + {{ transform_offset("image", ss) }} + col0;
        for (unsigned base = threadIdx.x; base < {{ n * width }}u; base += {{ threads * copy_unroll }}u) {
            float2 v[{{ copy_unroll }}];
#pragma unroll
            for (unsigned u = 0; u < {{ copy_unroll }}u; ++u) {
                const unsigned e = base + u * {{ threads }}u, ky = {{ udiv("e", width_div) }}, j = e - ky * {{ width }}u;
                v[u] = e < {{ n * width }}u && col0 + j < {{ half }}u ? src[ky * {{ half }}u + j] : make_float2(0.0f, 0.0f);
            }
#pragma unroll
            for (unsigned u = 0; u < {{ copy_unroll }}u; ++u) {
                const unsigned e = base + u * {{ threads }}u;
                if (e < {{ n * width }}u)
                    shared_buf[e{{ (" + " ~ udiv("e", width_div) ~ " * " ~ (buf_pitch - width) ~ "u") if buf_pitch != width }}] = v[u];
            }
        }
    }
    __syncthreads();
{%- endif %}

    // Columns kx = col0 .., inverse; only window rows {{ wy0 }}..{{ wy0 + h - 1 }} are kept, in buf[row][j].
    for (unsigned task = warp; task < {{ col_tasks }}u; task += {{ warps }}u) {
{{- cluster_column_item() }}
{{- inverse_column_loads("buf", "j", "image") }}
{{ fft_transform(hoist_twiddles)|indent(4) }}
{%- if staged_loads %}
        __syncwarp(); // the lane group has read all of column kx before any lane writes into it
{%- endif %}
{{- keep_window_rows("buf[y]", "j") }}
    }
    cluster_sync(); // every block's columns are done before the rows read them

    // Rows: window rows 2q and 2q + 1 packed as one complex inverse transform, q < {{ pairs }}, this
    // block's share, their bins read from the blocks owning them; only the window's columns
    // {{ wx0 }}..{{ wx0 + w - 1 }} are stored.
    for (unsigned task = warp; task < {{ row_tasks }}u; task += {{ warps }}u) {
{{- cluster_row_item() }}
        const bool has_b = {{ "2u * q + 1u < " ~ h ~ "u" if h % 2 == 1 else "true" }}, ok1 = ok0 && has_b;
{%- for k in nat %}
        x[{{ loop.index0 }}] = ok0 ? pack_peer_bin(buf, 2u * q, has_b, {{ k }}) : make_float2(0.0f, 0.0f);
{%- endfor %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
        float *__restrict__ row0 = out0 + {{ transform_offset("image", rs) }} + ({{ idx }})(2u * q) * {{ pitch }}u;
        float *__restrict__ row1 = row0 + {{ pitch }}u;
{%- if epi.bias %}
        const unsigned ch = {{ transform_channel("image") }}; // the image's channel in y, its bias's
{%- endif %}
{{- store_window("ok0", "ok1", "        ", "ch", "ch") }}
    }
    cluster_sync(); // no block leaves while its peers may still read its shared memory
{%- endmacro -%}

{#- One image per cluster. -#}
{%- macro cluster_phases() %}
    // The cluster's image; this block's share of the spectrum: columns col0 .. col0 + {{ width - 1 }}, the
    // {{ "row pairs' bins kx and n - kx" if sign < 0 else "window rows" }} of each in a shared row of {{ buf_pitch }} (odd: conflict-free columns).
    extern __shared__ __align__(16) float2 shared_buf[];
    float2 (*const buf)[{{ buf_pitch }}] = reinterpret_cast<float2 (*)[{{ buf_pitch }}]>(shared_buf);
    const unsigned image = cluster_index(), rank = cluster_rank(), col0 = rank * {{ width }}u;
{%- if sign < 0 %}
{{- cluster_forward() }}
{%- else %}
{{- cluster_inverse() }}
{%- endif %}
{%- endmacro -%}
