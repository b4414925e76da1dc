{#- direct's implicit GEMM on sm_90's warpgroup mma: out[rows][cols] = A[rows][red] * B[red][cols], A
    {{ in0 }} read from a patch of its lines in shared memory (direct_tc_shared.cuh) into registers, B the
    weights' pieces that the kernel before made (direct_wgmma_pieces.cu: wgmma's core matrices, hi and lo),
    the products by wgmma m64n{{ bn }}k8 in 3xTF32. generator/direct/direct_tc.c chooses the tile and works
    out every constant; this template only lays them out. -#}
{%- include "common.cuh" -%}
{%- include "direct/direct_tc_shared.cuh" -%}
{{ file_header(header) }}
{{ sm90a_marker }}
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel's products are wgmma (sm_90a's): compile it for sm_90a, as the runtime does on sm_90"
#endif

{{ copy_async(4, true) }}

{{ copy_async(16, true) }}

{{ tf32_lo_function() }}

{{ shared_at_function() }}

{{ descriptor_function() }}

// d (64 x {{ bn }}: warp w's rows 16 w + g and + 8 by columns 8 j + 2 t and + 1 at d[4 j] .. d[4 j + 3])
// = a b + (add ? d : 0), a the warpgroup's 64 x 8 of TF32 in registers (warp w's rows 16 w + g and
// + 8, columns t and t + 4, as mma.sync's m16n8k8), b 8 x {{ bn }} TF32 in shared memory by descriptor;
// asynchronous: neither d nor a is to be touched until a wait has seen its group done.
__device__ __forceinline__ void wgmma(float (&d)[{{ bn // 2 }}], const unsigned (&a)[4], unsigned long long b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %{{ bn // 2 + 5 }}, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n{{ bn }}k8.f32.tf32.tf32 {{ "{" }}{% for i in range(bn // 2) %}{{ ", " if i }}%{{ i }}{% endfor %}}, {{ "{" }}%{{ bn // 2 }}, %{{ bn // 2 + 1 }}, %{{ bn // 2 + 2 }}, %{{ bn // 2 + 3 }}}, %{{ bn // 2 + 4 }}, p, 1, 1;\n}\n"
                 : {% for i in range(bn // 2) %}{{ ", " if i }}"+f"(d[{{ i }}]){% endfor %}
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(add));
}

{{ fence_operand_function() }}

// Where the GEMM's element (r, col) lands: {{ out }}[n][col][pixel] for row r = (n, pixel).
__device__ __forceinline__ unsigned long long out_index(unsigned r, unsigned col)
{
{{- decompose(out_digits, "    ") }}
    return ((unsigned long long)n * {{ cols }}u + col) * {{ row_pixels }}u + pix;
}
{{- patch_functions() }}

// One chunk's copies into a stage: A's patch (load_patch: `a` the stage's, `src`, `off`, `inside`,
// `a_left` its channels from the chunk's first on) and B's pieces, {{ b_piece_floats }} floats in one run of the
// workspace (`b` the stage's, `piece` the chunk's), 16 bytes a copy, {{ b_copies }} a thread.
__device__ __forceinline__ void load_chunk(float *a, const float *src, const unsigned (&off)[{{ patch_places }}],
                                           unsigned inside, int a_left, float *b, const float *piece, unsigned tid)
{
    load_patch(a, src, off, inside, a_left, tid);
#pragma unroll
    for (int j = 0; j < {{ b_copies }}; ++j) {
{%- if b_piece_floats // 4 % threads %}
        if (j == {{ b_copies - 1 }} && tid >= {{ b_piece_floats // 4 % threads }}u)
            break;
{%- endif %}
        copy16(b + 4u * (tid + j * {{ threads }}u), piece + 4u * (tid + j * {{ threads }}u));
    }
    asm volatile("cp.async.commit_group;\n" ::);
}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ min_blocks }})
{{ kernel_name }}(const float *__restrict__ {{ in0 }}, const float *__restrict__ {{ in1 }},
    float *__restrict__ {{ out }}, float *__restrict__ workspace{{ bias_param(epi) }})
{
    // 2 stages, each A [{{ cc }} channels][{{ patch_floats }}: the patch's lines] (to {{ a_floats }} floats) then B's
    // pieces [{{ ksteps }} K steps][hi, lo][{{ bn // 8 }} x 2 core matrices of 8 columns x 4 of the sum]
    extern __shared__ float4 shared4[];
    float *const stages = (float *)shared4;
    const unsigned tid = threadIdx.x;
    const unsigned row0 = blockIdx.x * {{ bm }}u, col0 = blockIdx.y * {{ bn }}u;
{{- patch_setup() }}
    // B's pieces: the column tile's, a run of {{ b_piece_floats }} floats a chunk.
    const float *const pieces = workspace + (unsigned long long)blockIdx.y * {{ chunks * b_piece_floats }}u;
{{- dependent_start(dependent) }}

    // Warpgroup wg = warp / 4 sums rows 64 wg ..; warp w's A rows are 16 w + g and + 8 of the tile;
    // lane 4 g + t. Their places in the patch (0 past the GEMM's rows).
    const unsigned lane = tid & 31u, warp = tid >> 5, g = lane >> 2, t = lane & 3u;
    unsigned a_place[2];
#pragma unroll
    for (int v = 0; v < 2; ++v) {
        const unsigned r = row0 + warp * 16u + v * 8 + g;
        unsigned col;
        const unsigned line = line_of(r, col);
        a_place[v] = r < {{ rows }}u ? (line - first_line) * {{ line_len }}u + col : 0u;
    }
    float acc[{{ bn // 2 }}], part[{{ bn // 2 }}];
#pragma unroll
    for (int i = 0; i < {{ bn // 2 }}; ++i)
        acc[i] = 0.0f; // part needs no zeros: each chunk's first wgmma sets it (add 0), never reading it

    load_chunk(stages, {{ in0 }} + a_base, off, inside, {{ src_c }}, stages + {{ a_floats }}, pieces, tid);
    for (unsigned chunk = 0; chunk < {{ chunks }}u; ++chunk) {
        // This chunk's copies awaited and made visible to the tensor cores (the async proxy) before
        // any warp's wgmma reads them; then the next chunk's into the other stage, which every warp
        // is done with: each waited for its groups of the chunk before (wait_group 0) before this
        // barrier. So one barrier a chunk serves both (a second, after the sums, cost up to 2.5%).
        asm volatile("cp.async.wait_group 0;\n" ::);
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        __syncthreads();
        if (chunk + 1u < {{ chunks }}u) {
            const unsigned next = (chunk + 1u) & 1u, c0 = (chunk + 1u) * {{ cc }}u;
            load_chunk(stages + next * {{ stage_floats }}, {{ in0 }} + (a_base + (long long)c0 * {{ src_pixels }}), off, inside,
                       {{ src_c }} - (int)c0, stages + next * {{ stage_floats }} + {{ a_floats }}, pieces + (chunk + 1u) * {{ b_piece_floats }}u, tid);
        }
        // The chunk's sum tap-major: K step ks is tap f of channels 8 cq .. 8 cq + 7, lane t's channel
        // 8 cq + t (and + 4), at its row's place in the patch plus the tap's offset. Its products
        // start from zero (the first wgmma's add 0) and join acc by an fp32 add once the chunk's
        // groups are done: the tensor cores truncate as they accumulate. A's halves alternate between
        // two sets of registers: a K step's group is waited for (wait_group 1) before its set is
        // written again, two steps on.
        const float *const as = stages + (chunk & 1u) * {{ stage_floats }} + t * {{ patch_floats }};
        const float *const a_row[2] = {as + a_place[0], as + a_place[1]};
        const float *const bs = stages + (chunk & 1u) * {{ stage_floats }} + {{ a_floats }}; // every warpgroup reads all of B
        unsigned a_hi[2][4], a_lo[2][4];
#pragma unroll
        for (int i = 0; i < {{ bn // 2 }}; ++i)
            fence_operand(part[i]);
#pragma unroll
        for (int ks = 0; ks < {{ ksteps }}; ++ks) {
            const int f = ks / {{ kq }}, cq = ks % {{ kq }}, fy = f / {{ kw }}, fx = f % {{ kw }};
            const int tap = {% if flip_a %}({{ kh - 1 }} - fy){% else %}fy{% endif %} * {{ tap_line }} + {% if flip_a %}({{ kw - 1 }} - fx){% else %}fx{% endif %} * {{ tap_col }};
            const int u = ks & 1;
#pragma unroll
            for (int h = 0; h < 4; ++h) {
                // a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4)
                const float v = a_row[h & 1][(cq * 8 + (h >> 1) * 4) * {{ patch_floats }} + tap];
                a_hi[u][h] = __float_as_uint(v);
                a_lo[u][h] = tf32_lo(v);
            }
            asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
            // lo hi, hi lo, hi hi: the small terms first
            const unsigned long long b_hi = descriptor(bs + ks * {{ 16 * bn }}), b_lo = b_hi + ({{ 32 * bn }}u >> 4);
            wgmma(part, a_lo[u], b_hi, ks);
            wgmma(part, a_hi[u], b_lo, 1);
            wgmma(part, a_hi[u], b_hi, 1);
            asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
            asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
        for (int i = 0; i < {{ bn // 2 }}; ++i) {
            fence_operand(part[i]);
            acc[i] += part[i];
        }
    }

    // acc[4 j + 2 h + c]: row 16 warp + g + 8 h, column 8 j + 2 t + c.
#pragma unroll
    for (int j = 0; j < {{ bn // 8 }}; ++j) {
#pragma unroll
        for (int c = 0; c < 2; ++c) {
{{- store_column("col0 + j * 8 + 2 * t + c") }}
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const unsigned r = row0 + warp * 16u + h * 8 + g;
                if (r < {{ rows }}u)
                    {{ out }}[out_index(r, col)] = {{ epilogue_loaded(epi, "acc[4 * j + 2 * h + c]", "b") }};
            }
        }
    }
}
