{#- Batched FFTs with a row and a column phase, fbfft style: R2C (forward) and C2R (inverse),
    rank 1 and 2 (and the planes of rank 3, generator/fft/fft_volume.c), and 2-D C2C. Two real rows ride as the real and imaginary parts of one
    complex warp transform; the Hermitian halves are unpacked (R2C) or packed (C2R) through
    shared memory ("packed"; C2C rows are one complex transform each). Rank 2 runs the signal
    rows and the spectrum columns (n/2 + 1, or n for C2C) in one kernel with the spectrum in
    shared memory, or in a per-block slot of the workspace that stays in L2 where it does not fit.
    generator/fft/fft_real.c decides every constant; this only lays out. -#}
{%- include "common.cuh" -%}
{%- include "fft/fft_warp.cuh" -%}
{%- include "fft/fft_real_cluster.cuh" -%}


{#- The window's columns of one row into x[], zero, unchecked or clipped per register: packed, two
    real rows (row0[e], row1[e]) valid where ok0 and ok1; else one complex row[e] valid where ok0. -#}
{%- macro load_window(ok0, ok1, indent) -%}
{%- for c in xregs %}
{%- if c.kind == "zero" %}
{{ indent }}x[{{ c.r }}] = make_float2(0.0f, 0.0f);
{%- else %}
{{ indent }}{
{{ indent }}    const unsigned e = {{ c.e }};
{%- set inside = "" if c.kind == "full" else " && e < " ~ w ~ "u" %}
{%- if packed %}
{{ indent }}    x[{{ c.r }}] = make_float2({{ ok0 }}{{ inside }} ? row0[e] : 0.0f, {{ ok1 }}{{ inside }} ? row1[e] : 0.0f);
{%- else %}
{{ indent }}    x[{{ c.r }}] = {{ ok0 }}{{ inside }} ? row[e] : make_float2(0.0f, 0.0f);
{%- endif %}
{{ indent }}}
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{#- x[] out to the window's columns, scaled, with clipped stores: packed, x[r].x to row0 and
    x[r].y to row1, with the epilogue of y's channels k0 and k1; else x[r] to the complex row. -#}
{%- macro store_window(ok0, ok1, indent, k0, k1) -%}
{%- for c in xregs %}
{%- if c.kind != "zero" %}
{{ indent }}{
{{ indent }}    const unsigned e = {{ c.e }};
{%- set inside = "" if c.kind == "full" else " && e < " ~ w ~ "u" %}
{%- if packed %}
{{ indent }}    if ({{ ok0 }}{{ inside }})
{{ indent }}        row0[e] = {{ epilogue(epi, scaled("x[" ~ c.r ~ "].x"), k0) }};
{{ indent }}    if ({{ ok1 }}{{ inside }})
{{ indent }}        row1[e] = {{ epilogue(epi, scaled("x[" ~ c.r ~ "].y"), k1) }};
{%- else %}
{{ indent }}    if ({{ ok0 }}{{ inside }})
{{ indent }}        row[e] = {{ scaled_c("x[" ~ c.r ~ "]") }};
{%- endif %}
{{ indent }}}
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{%- macro scaled_c(v) -%}{{ "make_float2(" ~ scaled(v ~ ".x") ~ ", " ~ scaled(v ~ ".y") ~ ")" if scaled_output else v }}{%- endmacro -%}

{#- The item of a warp task's lane group t: its image img (transform tr) and its row pair q or
    column kx (`name`) in the image, and whether it exists (`ok`). -#}
{%- macro task_item(div, per_image, name, ok) %}
        const unsigned item = task * {{ per_warp }}u + t;
        const unsigned img = {{ udiv("item", div) }}, {{ name }} = item - img * {{ per_image }}u, tr = image0 + img;
        const bool {{ ok }} = {{ "t < " ~ per_warp ~ "u && " if idle_lanes }}item < {{ images * per_image }}u && tr < {{ count }}u;
{%- endmacro -%}

{#- Row r of image img's spectrum between the phases (a float2 pointer): buf[img][r], or with a
    split slot rows below the split in shared memory and the rest in the block's workspace slot. -#}
{%- macro row(img, r) -%}{{ "slot_row(" ~ r ~ ")" if split_rows else "buf[" ~ img ~ "][" ~ r ~ "]" }}{%- endmacro -%}

{#- Where bin k of a buf row sits: k, or k + k / 16 where the generator pads the rows. -#}
{%- macro padded(k) -%}{{ "(" ~ k ~ ") + ((" ~ k ~ ") >> 4)" if pad_rows else k }}{%- endmacro -%}

{#- Tile element (row R = img * n + ky, column kx), with a spare float2 every 16 rows if padded. -#}
{%- macro tile_at(img, ky, kx) -%}
{%- if pad_tile -%}({{ img }} * {{ n }}u + {{ ky }}) * {{ tile_pitch }}u + {{ kx }} + (({{ img }} * {{ n }}u + {{ ky }}) >> 4)
{%- else -%}({{ img }} * {{ n }}u + {{ ky }}) * {{ tile_pitch }}u + {{ kx }}
{%- endif -%}
{%- endmacro -%}

{#- Bins of the block's spectra: its images ({{ images }}, fewer in a partial last block) times n * half. -#}
{%- macro block_bins() -%}(image0 + {{ images }}u <= {{ count }}u ? {{ images }}u : {{ count }}u - image0) * {{ n * half }}u{%- endmacro -%}

{%- macro scaled(v) -%}{{ v ~ " * " ~ (scale|f32) if scaled_output else v }}{%- endmacro -%}

{#- Column kx of an inverse's spectrum into x[] where `ok`: from `staged`[k][`col`] where the block's
    spectra came into shared memory, else straight from the spectrum of transform `tr`. -#}
{%- macro inverse_column_loads(staged, col, tr) -%}
{%- if staged_loads %}
{%- for k in colpos %}
        x[{{ loop.index0 }}] = ok ? {{ staged }}[{{ k }}][{{ col }}] : make_float2(0.0f, 0.0f);
{%- endfor %}
{%- else %}
        const float2 *__restrict__ src = in + {{ transform_offset(tr, ss) }};
{%- for k in colpos %}
        x[{{ loop.index0 }}] = ok ? src[{{ "kx * " ~ n ~ "u + " ~ k if transposed else "(" ~ k ~ ") * " ~ half ~ "u + kx" }}] : make_float2(0.0f, 0.0f);
{%- endfor %}
{%- endif %}
{%- endmacro -%}

{#- The window's rows of an inverse column's results: x[] to `rows`[`col`], an expression of the
    window row y. -#}
{%- macro keep_window_rows(rows, col) -%}
{%- for c in yregs %}
{%- if c.kind != "zero" %}
        {
            const unsigned y = {{ c.e }}; // window row
            if (ok{{ " && y < " ~ h ~ "u" if c.kind != "full" }})
                {{ rows }}[{{ col }}] = x[{{ c.r }}];
        }
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{#- The end of a C2R's pack_bin, once A and B hold bin m = min(k, n - k) of the two rows' halves:
    the real bins' imaginary parts dropped, mirrored bins conjugated, Z = A + iB. -#}
{%- macro pack_bins_tail() %}
    if (m == 0u{{ " || m == " ~ (n // 2) ~ "u" if n % 2 == 0 }})
        A.y = B.y = 0.0f;
    if (mirrored)
        A.y = -A.y, B.y = -B.y;
    return make_float2(A.x - B.y, A.y + B.x);
{%- endmacro -%}

{#- One block's images, rank 2 (from image0): forward rows, then columns; inverse columns, then rows.
    The spectrum between the phases is in buf[img][row][bin]. -#}
{%- macro image_phases() -%}
{%- if sign < 0 %}

{%- if packed %}
    // Rows: window rows 2q and 2q + 1 (signal rows {{ wy0 }} + 2q, ...) as one complex transform each, q < {{ pairs }};
{%- else %}
    // Rows: window row q (signal row {{ wy0 }} + q), q < {{ pairs }};
{%- endif %}
    // signal rows outside the window are zero and are never transformed (pruned).
    for (unsigned task = warp; task < {{ row_tasks }}u; task += {{ warps }}u) {
{{- task_item(pair_div, pairs, "q", "ok0") }}
{%- if packed %}
        const bool ok1 = ok0{{ " && 2u * q + 1u < " ~ h ~ "u" if h % 2 == 1 }};
        const float *__restrict__ row0 = in0 + {{ transform_offset("tr", rs) }} + ({{ idx }})(2u * q) * {{ pitch }}u;
        const float *__restrict__ row1 = row0 + {{ pitch }}u;
{{- load_window("ok0", "ok1", "        ") }}
{%- else %}
        const float2 *__restrict__ row = reinterpret_cast<const float2 *>(in0) + {{ transform_offset("tr", rs) }} + ({{ idx }})q * {{ pitch }}u;
{{- load_window("ok0", "ok1", "        ") }}
{%- endif %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
        if (ok0) {
{%- if buf_swizzle %}
            const unsigned skl = kl ^ (q & {{ buf_swizzle }}u); // row q's swizzle, on the lane's part of its bins
{%- endif %}
{%- for k in row_bins %}
            {{ row("img", "q") }}[{{ padded(k) }}] = x[{{ loop.index0 }}];
{%- endfor %}
        }
    }
    __syncthreads();

    // Columns: kx = 0..{{ half - 1 }}{{ ", each unpacked from the packed rows as it is loaded" if packed }}.
    float2 *__restrict__ out = reinterpret_cast<float2 *>(out0);
{%- if aliased %}
    // Natural-layout results are staged in buf itself (see alias_at): stored straight from a column,
    // neighbouring lanes would write {{ half * 8 }} bytes apart.
{%- elif staged %}
    // Natural-layout results go through a tile [ky][kx] (odd pitch) behind the {{ "half " if packed }}spectrum: stored
    // straight from a column, neighbouring lanes would write {{ half * 8 }} bytes apart.
    // Rows of {{ tile_pitch }}{{ ", and a spare float2 every 16 rows: the column bins of a half-warp then fall on distinct banks" if pad_tile }}.
    float2 *const tile = shared_buf + {{ tile_offset }};
{%- endif %}
    for (unsigned task = warp; task < {{ col_tasks }}u; task += {{ warps }}u) {
{%- if column_stride %}
{{- task_item(half_div, half, "c", "ok") }}
        // The warp's lane groups take columns {{ column_stride }} apart: a half-warp's tile stores then fall on distinct banks.
        const unsigned kx = c < {{ per_warp * column_stride }}u ? c % {{ per_warp }}u * {{ column_stride }}u + c / {{ per_warp }}u : c;
{%- else %}
{{- task_item(half_div, half, "kx", "ok") }}
{%- endif %}
{%- if buf_swizzle %}
        // Row y >> 1 holds its bins swizzled by (y >> 1) & {{ buf_swizzle }}, which is (l >> 1) & {{ buf_swizzle }} for every row the lane loads.
        const unsigned pkx = kx ^ ((l >> 1) & {{ buf_swizzle }}u);
        const unsigned mx = kx ? {{ n }}u - kx : 0u, pmx = mx ^ ((l >> 1) & {{ buf_swizzle }}u);
{%- else %}
        const unsigned pkx = {{ padded("kx") }};
{%- if packed %}
        const unsigned mx = kx ? {{ n }}u - kx : 0u, pmx = {{ padded("mx") }};
{%- endif %}
{%- endif %}
{%- if unguarded_columns and not split_rows %}
        // Rows inside the window load without a test, from image 0 where the lane group has no column
        // (its results are never stored): a guarded load cost a branch around it.
        const unsigned simg = ok ? img : 0u;
{%- endif %}
{%- for c in yregs %}
{%- if c.kind == "zero" %}
        x[{{ c.r }}] = make_float2(0.0f, 0.0f);
{%- else %}
        {
            const unsigned y = {{ c.e }}; // window row
{%- if c.kind == "full" and unguarded_columns %}
{%- if packed %}
            const float2 z = {{ row("simg", "y >> 1") }}[pkx];
            const float2 m = {{ row("simg", "y >> 1") }}[pmx];
            x[{{ c.r }}] = y & 1u ? unpack_odd(z, m) : unpack_even(z, m);
{%- else %}
            x[{{ c.r }}] = {{ row("simg", "y") }}[pkx];
{%- endif %}
{%- else %}
            const bool in = ok{{ " && y < " ~ h ~ "u" if c.kind != "full" }};
{%- if packed %}
            const float2 z = in ? {{ row("img", "y >> 1") }}[pkx] : make_float2(0.0f, 0.0f);
            const float2 m = in ? {{ row("img", "y >> 1") }}[pmx] : make_float2(0.0f, 0.0f);
            x[{{ c.r }}] = y & 1u ? unpack_odd(z, m) : unpack_even(z, m);
{%- else %}
            x[{{ c.r }}] = in ? {{ row("img", "y") }}[pkx] : make_float2(0.0f, 0.0f);
{%- endif %}
{%- endif %}
        }
{%- endif %}
{%- endfor %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
{%- if aliased %}
        __syncwarp(); // the lane group has read all of columns kx and n - kx before any lane writes over them
        if (ok) {
{%- for k in colpos %}
            (&buf[img][0][0])[alias_at({{ k }}, kx)] = x[{{ loop.index0 }}];
{%- endfor %}
        }
{%- elif staged %}
        if (ok) {
{%- for k in colpos %}
            tile[{{ tile_at("img", k, "kx") }}] = x[{{ loop.index0 }}];
{%- endfor %}
        }
{%- else %}
        if (ok) {
            float2 *__restrict__ dst = out + {{ transform_offset("tr", ss) }};
{%- for k in colpos %}
            dst[{{ "kx * " ~ n ~ "u + " ~ k if transposed else "(" ~ k ~ ") * " ~ half ~ "u + kx" }}] = {{ scaled_c("x[" ~ loop.index0 ~ "]") }};
{%- endfor %}
        }
{%- endif %}
    }
{%- if staged %}
    __syncthreads();
{%- if flat_copy %}
    // The block's spectra are consecutive in the output, and so are the tile's rows ({{ half }} is odd): one
    // flat, coalesced copy{{ "; the tile's spare float2 every 16 rows costs a multiply-high per bin" if pad_tile }}. Copying
    // two bins per thread (float4) measured 1.9x slower at n = 8 and 16 on the H100.
    {
{%- if partial_block %}
        const unsigned total = {{ block_bins() }};
{%- endif %}
        float2 *__restrict__ dst = out + ({{ idx }})image0 * {{ n * half }}u;
        const float2 *src = tile;
        for (unsigned e = threadIdx.x; e < {{ images * n * half }}u; e += {{ threads }}u) {
            const float2 v = src[e{{ " + " ~ udiv("e", pad_div) if pad_tile }}];
            {{ "if (e < total)\n                " if partial_block }}dst[e] = {{ scaled_c("v") }};
        }
    }
{%- elif aliased %}
    // The block's spectra leave shared memory row by row, coalesced, a warp per row: whether the row waits in
    // buf as itself (ky < {{ buf_rows }}) or mirrored is the same for the whole warp, and no bin needs a division.
    for (unsigned rr = warp; rr < {{ images * n }}u; rr += {{ warps }}u) {
        const unsigned img = {{ "rr / " ~ n ~ "u" if images > 1 else "0u" }}, ky = rr{{ " - img * " ~ n ~ "u" if images > 1 }}, tr = image0 + img;
        const bool low = ky < {{ buf_rows }}u;
        const float2 *src = &buf[img][low ? ky : ky - {{ buf_rows }}u][0];
        float2 *__restrict__ dst = out + {{ transform_offset("tr", ss) }} + ky * {{ half }}u;
{%- for j in range((half + 31) // 32) %}
        {
            const unsigned kx = lane{{ " + " ~ (32 * j) ~ "u" if j }};
            const unsigned bin = low ? kx : {{ "kx == 0u ? " ~ n ~ "u : " if j == 0 }}{{ "kx == " ~ (n // 2) ~ "u ? " ~ (n + 1) ~ "u : " if n % 2 == 0 and (n // 2) >= 32 * j and (n // 2) < 32 * (j + 1) }}{{ n }}u - kx;
            if ({{ "kx < " ~ half ~ "u && " if half < 32 * (j + 1) }}tr < {{ count }}u) {
                const float2 v = src[{{ padded("bin") }}];
                dst[kx] = {{ scaled_c("v") }};
            }
        }
{%- endfor %}
    }
{%- else %}
    // The block's spectra leave shared memory row by row, coalesced.
    for (unsigned e = threadIdx.x; e < {{ images * n * half }}u; e += {{ threads }}u) {
        const unsigned img = {{ udiv("e", image_div) }}, rest = e - img * {{ n * half }}u;
        const unsigned ky = {{ udiv("rest", half_div) }}, kx = rest - ky * {{ half }}u, tr = image0 + img;
        if (tr < {{ count }}u) {
            const float2 v = tile[{{ tile_at("img", "ky", "kx") }}];
            out[{{ transform_offset("tr", ss) }} + ky * {{ half }}u + kx] = {{ scaled_c("v") }};
        }
    }
{%- endif %}
{%- endif %}
{%- else %}

    // Columns: kx = 0..{{ half - 1 }}, inverse; only rows {{ wy0 }}..{{ wy0 + h - 1 }} (the window) are kept.
    const float2 *__restrict__ in = reinterpret_cast<const float2 *>(in0);
{%- if staged_loads %}
    // The block's spectra come into buf coalesced, {{ copy_unroll }} loads per thread in flight: read straight by the
    // columns, a lane's bins would be {{ half * 8 }} bytes apart. The columns then transform in place.
{%- if flat_loads %}
    // The spectra are consecutive in the input and buf's rows are theirs ({{ half }} bins), so this is one flat copy,
    // its loops' bounds constants{{ ", the loads of a partial last block stopping at its own images" if partial_block }} (with the bound in
    // a register, C2R n = 32 measured 7% slower on the H100).
{%- endif %}
    {
{%- set all = (images * n * half) ~ "u" %}
{%- if flat_loads and partial_block %}
        const unsigned total = {{ block_bins() }};
{%- endif %}
{%- if flat_loads %}
        const float2 *__restrict__ src = in + ({{ idx }})image0 * {{ n * half }}u;
        float2 *const dst = &buf[0][0][0];
{%- endif %}
{%- if bulk_load %}
        // By the copy engine where the input is 16-byte aligned: the load/store pipe, this kernel's
        // bound, is left to the transforms. Once a kernel: the mbarrier waits on phase 0 only.
        __shared__ unsigned long long arrived; // the mbarrier that counts the copy's bytes
        if (((size_t)src & 15u) == 0u) {
            const unsigned bytes = {{ "total * 8u" if partial_block else (images * n * half * 8) ~ "u" }};
            if (threadIdx.x == 0)
                bulk_expect(&arrived, bytes);
            __syncthreads(); // the mbarrier made before any thread waits on it
            if (threadIdx.x == 0)
                bulk_copy(dst, src, bytes, &arrived);
            bulk_wait(&arrived);
        } else {
{%- endif %}
        for (unsigned base = threadIdx.x; base < {{ all }}; base += {{ threads * copy_unroll }}u) {
            float2 v[{{ copy_unroll }}];
#pragma unroll
            for (unsigned u = 0; u < {{ copy_unroll }}u; ++u) {
{%- if flat_loads %}
                v[u] = base + u * {{ threads }}u < {{ "total" if partial_block else all }} ? src[base + u * {{ threads }}u] : make_float2(0.0f, 0.0f);
{%- else %}
                const unsigned e = base + u * {{ threads }}u, img = {{ udiv("e", image_div) }}, tr = image0 + img;
                v[u] = e < {{ all }} && tr < {{ count }}u ? in[{{ transform_offset("tr", ss) }} + e - img * {{ n * half }}u] : make_float2(0.0f, 0.0f);
{%- endif %}
            }
#pragma unroll
            for (unsigned u = 0; u < {{ copy_unroll }}u; ++u) {
{%- if flat_loads %}
                if (base + u * {{ threads }}u < {{ all }})
                    dst[base + u * {{ threads }}u] = v[u];
{%- else %}
                const unsigned e = base + u * {{ threads }}u, img = {{ udiv("e", image_div) }}, rest = e - img * {{ n * half }}u;
                const unsigned ky = {{ udiv("rest", half_div) }}, kx = rest - ky * {{ half }}u;
                if (e < {{ all }})
                    buf[img][ky][{{ padded("kx") }}] = v[u];
{%- endif %}
            }
        }
{%- if bulk_load %}
        }
{%- endif %}
    }
    __syncthreads();
{%- endif %}
    for (unsigned task = warp; task < {{ col_tasks }}u; task += {{ warps }}u) {
{{- task_item(half_div, half, "kx", "ok") }}
        const unsigned pkx = {{ padded("kx") }};
{{- inverse_column_loads("buf[img]", "pkx", "tr") }}
{{ fft_transform(hoist_twiddles)|indent(4) }}
{%- if staged_loads %}
        __syncwarp(); // the lane group has read all of column kx before any lane writes into it
{%- endif %}
{{- keep_window_rows(row("img", "y"), "pkx") }}
    }
    __syncthreads();

{%- if packed %}
    // Rows: window rows 2q and 2q + 1 packed as one complex inverse transform, q < {{ pairs }}; only the
{%- else %}
    // Rows: window row q, one complex inverse transform, q < {{ pairs }}; only the
{%- endif %}
    // window's columns {{ wx0 }}..{{ wx0 + w - 1 }} are stored.
    for (unsigned task = warp; task < {{ row_tasks }}u; task += {{ warps }}u) {
{{- task_item(pair_div, pairs, "q", "ok0") }}
{%- if not packed %}
        const float2 *a = {{ row("ok0 ? img : 0u", "ok0 ? q : 0u") }};
{%- for k in nat %}
        x[{{ loop.index0 }}] = ok0 ? a[{{ padded(k) }}] : make_float2(0.0f, 0.0f);
{%- endfor %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
        float2 *__restrict__ row = reinterpret_cast<float2 *>(out0) + {{ transform_offset("tr", rs) }} + ({{ idx }})q * {{ pitch }}u;
{{- store_window("ok0", "ok1", "        ", "", "") }}
{%- else %}
        const bool has_b = {{ "2u * q + 1u < " ~ h ~ "u" if h % 2 == 1 else "true" }}, ok1 = ok0 && has_b;
        const float2 *a = {{ row("ok0 ? img : 0u", "ok0 ? 2u * q : 0u") }}, *b = {{ row("ok0 ? img : 0u", "ok0 ? 2u * q + 1u : 1u") }};
{%- for k in nat %}
        x[{{ loop.index0 }}] = ok0 ? pack_bin(a, b, has_b, {{ k }}) : make_float2(0.0f, 0.0f);
{%- endfor %}
{{ fft_transform(hoist_twiddles)|indent(4) }}
        float *__restrict__ row0 = out0 + {{ transform_offset("tr", rs) }} + ({{ idx }})(2u * q) * {{ pitch }}u;
        float *__restrict__ row1 = row0 + {{ pitch }}u;
{%- if epi.bias %}
        const unsigned ch = {{ transform_channel("tr") }}; // the image's channel in y, its bias's
{%- endif %}
{{- store_window("ok0", "ok1", "        ", "ch", "ch") }}
{%- endif %}
    }
{%- endif %}
{%- endmacro -%}

{{ file_header(header) }}

{{ fft_device_functions() }}
{%- if cluster %}
{{- cluster_functions() }}
{%- endif %}
{%- if not packed %}
{%- elif sign < 0 %}

{%- if aliased and not cluster %}
// Where output bin (ky, kx) of column kx waits in buf before the copy-out. The column read bins kx and
// n - kx of every row pair and writes its {{ n }} outputs over them: bin kx of row ky for ky < {{ buf_rows }}, else bin
// n - kx of row ky - {{ buf_rows }}. Columns 0{{ " and " ~ (n // 2) if n % 2 == 0 }} read a single bin per row and use the spare bin{{ "s" if n % 2 == 0 }} {{ n }}{{ " and " ~ (n + 1) if n % 2 == 0 }}
// past the row's end instead. (The copy-out spells the same mapping out a warp per row.)
__device__ __forceinline__ unsigned alias_at(unsigned ky, unsigned kx)
{
    const bool low = ky < {{ buf_rows }}u;
    const unsigned row = low ? ky : ky - {{ buf_rows }}u;
    const unsigned bin = low ? kx : kx == 0u ? {{ n }}u : {{ "kx == " ~ (n // 2) ~ "u ? " ~ (n + 1) ~ "u : " if n % 2 == 0 }}{{ n }}u - kx;
    return row * {{ buf_pitch }}u + {{ padded("bin") }};
}
{%- endif %}

// Z = A + iB is the transform of rows a + ib (a, b real). Bin k of A and of B, from Z[k] = z and
// Z[n - k] = m: A[k] = (z + conj m) / 2, B[k] = (z - conj m) / 2i.
__device__ __forceinline__ float2 unpack_even(float2 z, float2 m) { return make_float2(0.5f * (z.x + m.x), 0.5f * (z.y - m.y)); }
__device__ __forceinline__ float2 unpack_odd(float2 z, float2 m) { return make_float2(0.5f * (z.y + m.y), 0.5f * (m.x - z.x)); }
{%- elif not cluster %}

// Bin k of Z = A + iB from the Hermitian halves a, b ({{ half }} bins) of two real rows: bins past the
// half mirror earlier ones, conjugated; bin 0{{ " and bin " ~ (n // 2) if n % 2 == 0 }} of a real row {{ "are" if n % 2 == 0 else "is" }} real, so their imaginary
// parts are dropped, as cuFFT's C2R does. b may be absent (a window's last odd row).
__device__ __forceinline__ float2 pack_bin(const float2 *a, const float2 *b, bool has_b, unsigned k)
{
    const bool mirrored = k > {{ n // 2 }}u;
    const unsigned m = mirrored ? {{ n }}u - k : k;
    float2 A = a[{{ padded("m") }}], B = has_b ? b[{{ padded("m") }}] : make_float2(0.0f, 0.0f);
{{- pack_bins_tail() }}
}
{%- endif %}
{%- if bulk_load %}

{{ bulk_loads() }}
{%- endif %}

// At least {{ min_blocks }} block{{ "s" if min_blocks > 1 }} per multiprocessor: {{ launch_reason }}.
extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }}){{ " __cluster_dims__(" ~ cluster ~ ", 1, 1)" if cluster }}
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1,
    float *__restrict__ out0, float *__restrict__ workspace{{ bias_param(epi) }})
{
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
{{- fft_lane_setup() }}
{%- if hoist_twiddles %}
{{ fft_twiddles() }}
{%- endif %}
    float2 x[{{ regs }}];
{%- if rank == 1 %}
    // Lane group t holds transforms tr0 = first + 2t and tr0 + 1 as the real and imaginary parts
    // of one complex transform; the warp's {{ per_warp }} group{{ "s" if per_warp > 1 }} cover {{ 2 * per_warp }} transforms from `first`.
    const unsigned first = (blockIdx.x * {{ warps }}u + warp) * {{ 2 * per_warp }}u;
    const unsigned tr0 = first + 2u * t, tr1 = tr0 + 1u;
    const bool ok0 = {{ "t < " ~ per_warp ~ "u && " if idle_lanes }}tr0 < {{ count }}u, ok1 = {{ "t < " ~ per_warp ~ "u && " if idle_lanes }}tr1 < {{ count }}u;
{%- if sign < 0 %}
    const float *__restrict__ row0 = in0 + {{ transform_offset("tr0", rs) }};
    const float *__restrict__ row1 = in0 + {{ transform_offset("tr1", rs) }};
    // Columns {{ wx0 }}..{{ wx0 + w - 1 }} of the signal come from the window; the rest is zero.
{{- load_window("ok0", "ok1", "    ") }}
{{ fft_transform() }}
    // The packed spectra, natural order, one row of {{ spitch }} (odd: conflict-free columns) per group{{ ", bin k at k + k / 16 (the bank model's choice)" if pad_rows }}.
    __shared__ float2 spectra[{{ warps }}][{{ per_warp }}][{{ spitch }}];
    if (t < {{ per_warp }}u) {
{%- for k in nat %}
        spectra[warp][t][{{ padded(k) }}] = x[{{ loop.index0 }}];
{%- endfor %}
    }
    __syncwarp();
    float2 *__restrict__ out = reinterpret_cast<float2 *>(out0);
    // The warp's {{ 2 * per_warp }} half spectra of {{ half }} bins, stored bin-contiguous.
#pragma unroll
    for (unsigned i = 0; i < {{ bin_loads }}u; ++i) {
        const unsigned e = lane + 32u * i, j = {{ udiv("e", e_div) }}, k = e - j * {{ half }}u, tr = first + j;
        if ({{ "e < " ~ (2 * per_warp * half) ~ "u && " if (2 * per_warp * half) % 32 }}tr < {{ count }}u) {
            const unsigned mk = k ? {{ n }}u - k : 0u;
            const float2 z = spectra[warp][j >> 1][{{ padded("k") }}], m = spectra[warp][j >> 1][{{ padded("mk") }}];
            const float2 v = j & 1u ? unpack_odd(z, m) : unpack_even(z, m);
            out[{{ transform_offset("tr", ss) }} + k] = {{ scaled_c("v") }};
        }
    }
{%- else %}
    // The warp's {{ 2 * per_warp }} half spectra go to shared memory (coalesced loads), one row of {{ spitch }} each{{ ", bin k at k + k / 16 (the bank model's choice)" if pad_rows }}.
    // All {{ bin_loads }} loads of a lane are issued before the first store: in a loop, each load waited for the
    // one before, and from n = 8 to 32 a warp's bins just exceed its 32 lanes (two round trips).
    __shared__ float2 spectra[{{ warps }}][{{ 2 * per_warp }}][{{ spitch }}];
    const float2 *__restrict__ in = reinterpret_cast<const float2 *>(in0);
    float2 bins[{{ bin_loads }}];
#pragma unroll
    for (unsigned i = 0; i < {{ bin_loads }}u; ++i) {
        const unsigned e = lane + 32u * i, j = {{ udiv("e", e_div) }}, k = e - j * {{ half }}u, tr = first + j;
        bins[i] = {{ "e < " ~ (2 * per_warp * half) ~ "u && " if (2 * per_warp * half) % 32 }}tr < {{ count }}u ? in[{{ transform_offset("tr", ss) }} + k] : make_float2(0.0f, 0.0f);
    }
#pragma unroll
    for (unsigned i = 0; i < {{ bin_loads }}u; ++i) {
        const unsigned e = lane + 32u * i, j = {{ udiv("e", e_div) }}, k = e - j * {{ half }}u;
        {{ "if (e < " ~ (2 * per_warp * half) ~ "u) " if (2 * per_warp * half) % 32 }}spectra[warp][j][{{ padded("k") }}] = bins[i];
    }
    __syncwarp();
    {
        const unsigned g = {{ "t < " ~ per_warp ~ "u ? t : 0u" if idle_lanes else "t" }};
{%- for k in nat %}
        x[{{ loop.index0 }}] = pack_bin(spectra[warp][2u * g], spectra[warp][2u * g + 1u], true, {{ k }});
{%- endfor %}
    }
{{ fft_transform() }}
    float *__restrict__ row0 = out0 + {{ transform_offset("tr0", rs) }};
    float *__restrict__ row1 = out0 + {{ transform_offset("tr1", rs) }};
{%- if epi.bias %}
    // The two transforms' channels in y, their biases' (two images, perhaps of other channels).
    const unsigned ch0 = {{ transform_channel("tr0") }}, ch1 = {{ transform_channel("tr1") }};
{%- endif %}
    // Only the window's columns {{ wx0 }}..{{ wx0 + w - 1 }} are stored.
{{- store_window("ok0", "ok1", "    ", "ch0", "ch1") }}
{%- endif %}
{%- else %}
{%- if cluster %}
{{- cluster_phases() }}
{%- elif resident %}
    // Block b works images b, b + gridDim.x, ... The {{ "half " if packed }}spectrum between the row and column transforms
    // is too large for shared memory: {{ "rows 0.." ~ (split_rows - 1) ~ " are in shared memory (" ~ shared_bytes ~ " bytes), the rest" if split_rows else "it is" }} in this
    // block's slot of the workspace ({{ slot_elements * 8 }} bytes). The grid has {{ blocks_per_sm }} block{{ "s" if blocks_per_sm > 1 }} per multiprocessor,
    // each working image after image in its own slot, so that the slots of all blocks
    // ({{ slot_elements * 8 * blocks }} bytes) {{ "stay in the L2 cache between the phases" if slots_in_l2 else "stay in the L2 cache as far as it holds them" }}.
{%- if split_rows %}
    extern __shared__ __align__(16) float2 shared_buf[];
    float2 *const slot = reinterpret_cast<float2 *>(workspace) + ({{ idx }})blockIdx.x * {{ slot_elements }}u;
    const auto slot_row = [&](unsigned r) -> float2 * {
        return r < {{ split_rows }}u ? shared_buf + r * {{ buf_pitch }}u : slot + (r - {{ split_rows }}u) * {{ buf_pitch }}u;
    };
{%- else %}
    float2 (*const buf)[{{ buf_rows }}][{{ buf_pitch }}] = reinterpret_cast<float2 (*)[{{ buf_rows }}][{{ buf_pitch }}]>(
        reinterpret_cast<float2 *>(workspace) + ({{ idx }})blockIdx.x * {{ slot_elements }}u);
{%- endif %}
    for (unsigned image0 = blockIdx.x; image0 < {{ count }}u; image0 += gridDim.x) {
{{- image_phases()|indent(4) }}
        __syncthreads(); // every read of the slot is done before the next image overwrites it
    }
{%- else %}
    // {{ images }} image{{ "s" if images > 1 }} per block. The {{ "half " if packed }}spectrum between the row and column transforms:
    // in shared memory ({{ shared_bytes }} bytes, dynamic).
    extern __shared__ __align__(16) float2 shared_buf[];
    float2 (*const buf)[{{ buf_rows }}][{{ buf_pitch }}] = reinterpret_cast<float2 (*)[{{ buf_rows }}][{{ buf_pitch }}]>(shared_buf);
{%- if exchanged %}
    // The warp's scratch for the exchanges between the transforms' phases: {{ per_warp }} transform{{ "s" if per_warp > 1 }} of {{ xstride }} float2s{{ " (position q at q + q / " ~ (2 ** pad_shift) ~ ": the bank model's choice)" if pad_shift }}.
    float2 *const xch = shared_buf + {{ xch_offset }}u + warp * {{ xch_warp }}u;
{%- endif %}
{%- if blocks_reversed %}
    // From the last image back: the depth pass wrote those last, and the first blocks find them in the L2 cache.
    const unsigned image0 = ({{ blocks - 1 }}u - blockIdx.x) * {{ images }}u;
{%- else %}
    const unsigned image0 = blockIdx.x * {{ images }}u;
{%- endif %}
{{- image_phases() }}
{%- endif %}
{%- endif %}
}
