{#- convgen's batched SGEMM on the tensor cores (generator/gemm_tc.c): C[{{ m }} x {{ n }}] = A B^T column-major per batch
    entry (op(A) stored [k][m] or in the kernel's pieces, op(B) stored [k][n] or in pieces), summing {{ k }} in
    {{ splits }} run(s), in 3xTF32 by wgmma (sm_90a). A tile is {{ bm }} rows x {{ bn }} columns of C of one run and entry,
    {{ tiles }} of them numbered (row block, column block, run, entry), the row block fastest; block b of {{ grid }} makes tiles
    b, b + {{ grid }}, .. (persistent where {{ grid }} < {{ tiles }}: its stages run on across its tiles, so that the next
    tile's copies overlap this one's last steps and its stores). A block of {{ threads }} threads sums in steps of
    {{ bk }} through {{ stages }} stages: warpgroups 0 and 1 sum (op(A) from registers: each thread reads its fragments' hi
    halves and makes their lo halves; op(B) from shared memory), warp 8 copies (the copy engine){% if converters %}, warps
    9-{{ 8 + converters }} convert (an operand as stored into core matrices, op(A) hi, op(B) hi and lo; op(B) in pieces,
    its lo halves, unless its pieces bring them){% endif %}. -#}
{%- include "common.cuh" -%}
{%- set raw_a = 0 if a_pieces else bk * (bm + 4) -%}
{%- set raw_b = 0 if b_pieces else bk * (bn + 4) -%}
{%- set ca = bk * bm -%}
{%- set cb = bk * bn -%}
{%- set stage = 2 * (ca + cb) + raw_a + raw_b -%}
{%- set steps = (k + bk - 1) // bk -%}
{#- the floats of a piece of op(A), op(B) in global memory: twice the hi halves' where its lo follow -#}
{%- set pa = ca * (2 if a_lo else 1) -%}
{%- set pb = bk * b_rows * (2 if b_lo else 1) -%}
{#- where B's pieces are twice a tile's width (halved: the tile is half of a piece's rows), the floats of the tile's share -#}
{%- set share_b = cb * (2 if b_lo else 1) -%}
{{ file_header(header) }}
{{ sm90a_marker }}
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#error "this kernel's products are wgmma (sm_90a's): compile it for sm_90a, as the runtime does on sm_90"
#endif

{{ shared_at_function() }}

// The stages' mbarriers: set up (count arrivals a phase), an arrival, an arrival that also expects
// `bytes` from bulk copies, and the wait for phase `parity` to complete.
__device__ __forceinline__ void bar_init(unsigned long long *b, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_at(b)), "r"(count) : "memory");
}
__device__ __forceinline__ void bar_arrive(unsigned long long *b)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_at(b)) : "memory");
}
__device__ __forceinline__ void bar_expect(unsigned long long *b, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_at(b)), "r"(bytes) : "memory");
}
__device__ __forceinline__ void bar_wait(unsigned long long *b, unsigned parity)
{
    unsigned done;
    do
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(shared_at(b)), "r"(parity) : "memory");
    while (!done);
}

// `bytes` from global to shared memory by the copy engine, counted on the mbarrier b.
__device__ __forceinline__ void bulk_copy(float *dst, const float *src, unsigned bytes, unsigned long long *b)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
                 "r"(shared_at(dst)), "l"(src), "r"(bytes), "r"(shared_at(b)) : "memory");
}

{{ tf32_lo_function() }}

{{ descriptor_function() }}

// d (64 x {{ bn }}, a warp's rows 16 w + g and + 8 by columns 8 j + 2 t and + 1 at d[4 j] .. d[4 j + 3])
// = a b + (add ? d : 0), a the warpgroup's 64 x 8 of TF32 in registers (warp w's rows 16 w + g and
// + 8, columns t and t + 4, as mma.sync's m16n8k8) and b (8 x {{ bn }}) TF32 from shared memory by
// descriptor; asynchronous: neither d nor a is to be touched until a wait has seen its group done.
__device__ __forceinline__ void wgmma(float (&d)[{{ bn // 2 }}], const unsigned (&a)[4], unsigned long long b, int add)
{
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %{{ bn // 2 + 5 }}, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n{{ bn }}k8.f32.tf32.tf32 {{ "{" }}{% for i in range(bn // 2) %}{{ ", " if i }}%{{ i }}{% endfor %}}, {{ "{" }}%{{ bn // 2 }}, %{{ bn // 2 + 1 }}, %{{ bn // 2 + 2 }}, %{{ bn // 2 + 3 }}}, %{{ bn // 2 + 4 }}, p, 1, 1;\n}\n"
                 : {% for i in range(bn // 2) %}{{ ", " if i }}"+f"(d[{{ i }}]){% endfor %}
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(add));
}

{{ fence_operand_function() }}

// A tile of C: its row block, column block and entry; q0 and count, the steps of the sum it takes
// (its run's).
struct tile {
    unsigned mb, nb, entry, run, q0, count;
};
__device__ __forceinline__ tile tile_at(unsigned t)
{
    tile r;
    r.mb = t % {{ mblocks }}u;
    r.nb = t / {{ mblocks }}u % {{ nblocks }}u;
    const unsigned z = t / {{ mblocks * nblocks }}u;
{%- if splits > 1 %}
    r.entry = z % {{ batch }}u, r.run = z / {{ batch }}u;
    r.q0 = r.run * {{ split_steps }}u, r.count = min({{ split_steps }}u, {{ steps }}u - r.q0);
{%- else %}
    r.entry = z, r.run = 0u, r.q0 = 0u, r.count = {{ steps }}u;
{%- endif %}
    return r;
}
{%- if converters %}

// The lo halves of a step's F hi halves in core-matrix order at p (lo F on), a float4 a thread at a
// time. Every float4 the thread takes is read before any lo is written: the compiler may not move a
// read above a store that could alias it, so a loop of read-convert-write would wait out one trip
// through shared memory a float4 (under the tensor cores' operand reads, the converters' whole
// time, which the consumers then waited on).
template <unsigned F>
__device__ __forceinline__ void lo_halves(float *p, unsigned ct)
{
    constexpr unsigned count = F / 4u, each = (count + {{ 32 * converters - 1 }}u) / {{ 32 * converters }}u;
    float4 v[each];
#pragma unroll
    for (unsigned n = 0; n < each; ++n) {
        const unsigned i = ct + n * {{ 32 * converters }}u;
        if (i < count)
            v[n] = ((const float4 *)p)[i];
    }
#pragma unroll
    for (unsigned n = 0; n < each; ++n) {
        const unsigned i = ct + n * {{ 32 * converters }}u;
        if (i < count)
            ((uint4 *)(p + F))[i] = make_uint4(tf32_lo(v[n].x), tf32_lo(v[n].y), tf32_lo(v[n].z), tf32_lo(v[n].w));
    }
}

// Rows x {{ bk }} of a raw stage ([k][row], `pitch`) into wgmma's core matrices at dst, hi, and where `LO`
// at dst + lo_at, lo: per 8 of the sum s, [row / 8][h][row % 8][4] holds the sum's 8 s + 4 h ..; where
// `PAIR` (A), row 16 w + g holds m 16 w + 2 g and 16 w + 8 + g holds m 16 w + 2 g + 1, so that a
// thread's sums of rows g and g + 8 are neighbours in C. `valid`: the step's rows of the sum that
// exist (zeros past).
template <unsigned ROWS, bool PAIR, bool LO>
__device__ __forceinline__ void convert(const float *raw, unsigned pitch, float *dst, unsigned lo_at, unsigned ct,
                                        unsigned valid)
{
    // every value this thread takes read first, as in lo_halves
    constexpr unsigned count = {{ bk // 4 }}u * ROWS, each = (count + {{ 32 * converters - 1 }}u) / {{ 32 * converters }}u;
    float v[each][4];
#pragma unroll
    for (unsigned n = 0; n < each; ++n) {
        const unsigned i = ct + n * {{ 32 * converters }}u;
        const unsigned rho = i % ROWS, q = i / ROWS;
        const unsigned row = PAIR ? (rho & ~15u) + 2u * (rho & 7u) + (rho >> 3 & 1u) : rho;
        const float *src = raw + 4u * q * pitch + row;
#pragma unroll
        for (unsigned j = 0; j < 4u; ++j)
            v[n][j] = i < count && {{ "4u * q + j < valid" if k % bk else "true" }} ? src[j * pitch] : 0.0f;
    }
#pragma unroll
    for (unsigned n = 0; n < each; ++n) {
        const unsigned i = ct + n * {{ 32 * converters }}u;
        const unsigned rho = i % ROWS, q = i / ROWS;
        float *d = dst + q / 2u * ROWS * 8u + rho / 8u * 64u + q % 2u * 32u + rho % 8u * 4u;
        if (i < count) {
            *(float4 *)d = make_float4(v[n][0], v[n][1], v[n][2], v[n][3]);
            if (LO)
                *(uint4 *)(d + lo_at) = make_uint4(tf32_lo(v[n][0]), tf32_lo(v[n][1]), tf32_lo(v[n][2]), tf32_lo(v[n][3]));
        }
    }
}
{%- endif %}

extern "C" __global__ void __launch_bounds__({{ threads }}, {{ blocks_per_sm }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    // {{ stages }} stages of {{ stage }} floats: A's core matrices hi ({{ ca }}, then as many unused: its lo halves are made in
    // registers), B's hi, lo ({{ cb }} each){{ ",
    // then the raw rows of " if not (a_pieces and b_pieces) }}{{ "A (" ~ bk ~ " x " ~ (bm + 4) ~ ")" if not a_pieces }}{{ " and " if not (a_pieces or b_pieces) }}{{ "B (" ~ bk ~ " x " ~ (bn + 4) ~ ")" if not b_pieces }}; then the mbarriers
    extern __shared__ float4 shared4[];
    float *const stages = (float *)shared4;
    unsigned long long *const loaded = (unsigned long long *)(stages + {{ stages * stage }}), *const ready = loaded + {{ stages }},
                       *const empty = ready + {{ stages }};
    const unsigned tid = threadIdx.x, warp = tid >> 5, lane = tid & 31u;
    if (tid == 0) {
        for (unsigned s = 0; s < {{ stages }}u; ++s) {
            bar_init(&loaded[s], 1u); // the copier's arrival, and the bytes
{%- if converters %}
            bar_init(&ready[s], {{ converters }}u);  // the converters
{%- endif %}
            bar_init(&empty[s], 2u);  // the consumer warpgroups
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
{{- dependent_start(dependent) }}
{%- if widen %}
    // The registers: the summing warpgroups' 128 sums a thread and two groups of A's registers in
    // flight take more than {{ 65536 // threads }} a thread; warpgroup 2 ({{ "the copier and converters" if converters else "the copier" }}) gives them some.
    if (warp >= 8u) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 {{ copier_regs }};" ::: "memory");
{%- if not converters %}
    if (warp > 8u)
        return; // the copier's warpgroup's other warps
{%- endif %}
{%- endif %}
    if (warp == 8u) {
        // The copier: step q of op(A) and op(B) as soon as the stage is free (its last step's wgmma
        // done), an operand in pieces by one bulk copy of its piece (lane 0), one as stored by a
        // bulk copy of each of its rows (lane r row r); a piece with its lo halves lands on both halves.
        // i counts the block's steps over its tiles, which take the stages in turn.
{%- if a_pieces %}
        const unsigned a_bytes = {{ 4 * ca }}u; // the hi halves{{ " (the consumers make the lo halves that follow them)" if a_lo }}
{%- endif %}
{%- if b_pieces %}
        const unsigned b_bytes = {{ 4 * share_b }}u;
{%- endif %}
        unsigned i = 0u;
#pragma unroll 1
        for (unsigned at = blockIdx.x; at < {{ tiles }}u; at += {{ grid }}u) {
            const tile tl = tile_at(at);
{%- if a_pieces %}
            const float *__restrict__ a = workspace + {{ a_offset }}ull + (size_t)tl.entry * {{ a_stride }}ull + (size_t)tl.mb * {{ steps * pa }}u;
{%- else %}
            const float *__restrict__ a = workspace + {{ a_offset }}ull + (size_t)tl.entry * {{ a_stride }}ull + tl.mb * {{ bm }}u;
            const unsigned a_bytes = 4u * min({{ bm }}u, {{ m }}u - tl.mb * {{ bm }}u); // a row's
{%- endif %}
{%- if b_pieces %}
{%- if b_rows == bn %}
            const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)tl.entry * {{ b_stride }}ull + (size_t)tl.nb * {{ steps * pb }}u;
{%- else %}
            // the tile's half of its pieces' rows: in each 8 of the sum, the first or last {{ 8 * bn }} floats
            const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)tl.entry * {{ b_stride }}ull + (size_t)(tl.nb >> 1) * {{ steps * pb }}u + (tl.nb & 1u) * {{ 8 * bn }}u;
{%- endif %}
{%- else %}
            const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)tl.entry * {{ b_stride }}ull + tl.nb * {{ bn }}u;
            const unsigned b_bytes = 4u * min({{ bn }}u, {{ n }}u - tl.nb * {{ bn }}u); // a row's
{%- endif %}
#pragma unroll 1
            for (unsigned j = 0; j < tl.count; ++j, ++i) {
                const unsigned q = tl.q0 + j, s = i % {{ stages }}u;
                float *const st = stages + s * {{ stage }}u;
{%- if not (a_pieces and b_pieces) %}
                float *const raw = st + {{ 2 * (ca + cb) }}u;
                const unsigned valid = min({{ bk }}u, {{ k }}u - q * {{ bk }}u);
                const size_t row = (size_t)q * {{ bk }}u + lane;
{%- endif %}
                if (i >= {{ stages }}u)
                    bar_wait(&empty[s], (i / {{ stages }}u - 1u) & 1u);
                if (lane == 0u)
                    bar_expect(&loaded[s], {{ "a_bytes" if a_pieces else "valid * a_bytes" }} + {{ "b_bytes" if b_pieces else "valid * b_bytes" }});
                __syncwarp();
{%- if a_pieces %}
                if (lane == 0u)
                    bulk_copy(st, a + (size_t)q * {{ pa }}u, a_bytes, &loaded[s]);
{%- else %}
                if (lane < valid)
                    bulk_copy(raw + lane * {{ bm + 4 }}u, a + row * {{ lda }}u, a_bytes, &loaded[s]);
{%- endif %}
{%- if b_pieces and b_rows == bn %}
                if (lane == 0u)
                    bulk_copy(st + {{ 2 * ca }}u, b + (size_t)q * {{ pb }}u, b_bytes, &loaded[s]);
{%- elif b_pieces %}
                if (lane == 0u) { // the tile's half of each 8 of the sum, hi{{ " and lo" if b_lo }}
{%- for h in range(2 if b_lo else 1) %}
{%- for e in range(bk // 8) %}
                    bulk_copy(st + {{ 2 * ca + h * cb + e * 8 * bn }}u, b + (size_t)q * {{ pb }}u + {{ h * bk * b_rows + e * 8 * b_rows }}u, {{ 32 * bn }}u, &loaded[s]);
{%- endfor %}
{%- endfor %}
                }
{%- else %}
                if (lane < valid)
                    bulk_copy(raw + {{ raw_a }}u + lane * {{ bn + 4 }}u, b + row * {{ ldb }}u, b_bytes, &loaded[s]);
{%- endif %}
            }
        }
        return;
    }
{%- if converters %}
    if (warp > 8u) {
        // The converters: step q's raw rows into core matrices (A's hi halves, B's hi and lo); B's piece's lo halves
        const unsigned ct = tid - 288u;
        unsigned i = 0u;
#pragma unroll 1
        for (unsigned at = blockIdx.x; at < {{ tiles }}u; at += {{ grid }}u) {
            const tile tl = tile_at(at);
#pragma unroll 1
            for (unsigned j = 0; j < tl.count; ++j, ++i) {
                const unsigned s = i % {{ stages }}u;
                float *const st = stages + s * {{ stage }}u;
{%- if not (a_pieces and b_pieces) %}
                float *const raw = st + {{ 2 * (ca + cb) }}u;
                const unsigned valid = min({{ bk }}u, {{ k }}u - (tl.q0 + j) * {{ bk }}u);
{%- endif %}
                bar_wait(&loaded[s], i / {{ stages }}u & 1u);
{%- if not a_pieces %}
                convert<{{ bm }}u, true, false>(raw, {{ bm + 4 }}u, st, 0u, ct, valid); // A's hi halves
{%- endif %}
{%- if b_lo %}
                // B's piece brought its lo halves
{%- elif b_pieces %}
                lo_halves<{{ cb }}u>(st + {{ 2 * ca }}u, ct);
{%- else %}
                convert<{{ bn }}u, false, true>(raw + {{ raw_a }}u, {{ bn + 4 }}u, st + {{ 2 * ca }}u, {{ cb }}u, ct, valid);
{%- endif %}
                asm volatile("fence.proxy.async.shared::cta;" ::: "memory"); // the stores, before the tensor cores' reads
                __syncwarp();
                if (lane == 0u)
                    bar_arrive(&ready[s]);
            }
        }
        return;
    }
{%- endif %}
{%- if widen %}
    }
    asm volatile("setmaxnreg.inc.sync.aligned.u32 {{ consumer_regs }};" ::: "memory");
{%- endif %}
    // The consumers: warpgroup wg sums rows 64 wg .. of the tile's by {{ bn }} columns. The sums are set by
    // the first wgmma of a tile (not added to: add 0), not by instructions of their own, which would
    // make ptxas serialize every wgmma. A's fragments come from the stage's hi halves into registers,
    // where each thread makes their lo halves: the tensor cores then read only B from shared memory,
    // which was their bound with both (bench/NOTES.md, "Issue 30, session 85"). Each 8 of the sum is
    // a group, waited for one group later; so A's registers alternate between two sets, each written
    // again only once its group is done{{ " (at " ~ bn ~ " columns the registers for that come from warpgroup 2, above)" if widen }}. A step's stage
    // goes back to the copier once its groups are done (a step later); a tile's last, once its sums
    // are done, before they are stored.
    static_assert({{ bk // 8 }} % 2 == 0, "A's two sets of registers alternate within a step");
    const unsigned cw = warp, wg = cw >> 2, g = lane >> 2, t = lane & 3u;
    float acc[{{ bn // 2 }}];
    unsigned a_hi[{{ bk // 8 }}][4], a_lo[{{ bk // 8 }}][4];
    unsigned i = 0u;
#pragma unroll 1
    for (unsigned at = blockIdx.x; at < {{ tiles }}u; at += {{ grid }}u) {
        const tile tl = tile_at(at);
#pragma unroll 1
        for (unsigned j = 0; j < tl.count; ++j, ++i) {
            const unsigned s = i % {{ stages }}u;
            const float *const st = stages + s * {{ stage }}u;
            bar_wait(&{{ "ready" if converters else "loaded" }}[s], i / {{ stages }}u & 1u);
            // this thread's A: in each 8 of the sum's core matrices, (g, t), (g + 8, t), (g, t + 4) and
            // (g + 8, t + 4) of its warp's 16 rows, 64, 32 and 96 floats apart: a warp's read is 32
            // neighbouring floats
            const float *const as = st + wg * 512u + (cw & 3u) * 128u + lane;
#pragma unroll
            for (int r = 0; r < {{ bn // 2 }}; ++r)
                fence_operand(acc[r]);
#pragma unroll
            for (unsigned e = 0; e < {{ bk // 8 }}u; ++e) { // lo hi, hi lo, hi hi: the small terms first
#pragma unroll
                for (unsigned h = 0; h < 4u; ++h) {
                    const float v = as[e * {{ bm * 8 }}u + (h & 1u) * 64u + (h >> 1) * 32u];
                    a_hi[e][h] = __float_as_uint(v);
                    a_lo[e][h] = tf32_lo(v);
                }
                asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
                const unsigned long long b_hi = descriptor(st + {{ 2 * ca }}u + e * {{ bn * 8 }}u), b_lo = b_hi + ({{ cb * 4 }}u >> 4);
                wgmma(acc, a_lo[e], b_hi, j | e);
                wgmma(acc, a_hi[e], b_lo, 1);
                wgmma(acc, a_hi[e], b_hi, 1);
                asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
                asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
            }
#pragma unroll
            for (int r = 0; r < {{ bn // 2 }}; ++r)
                fence_operand(acc[r]);
            if (j > 0u && (tid & 127u) == 0u) // step i - 1's groups done
                bar_arrive(&empty[(i - 1u) % {{ stages }}u]);
        }
        asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
        for (int r = 0; r < {{ bn // 2 }}; ++r)
            fence_operand(acc[r]);
        if ((tid & 127u) == 0u) // the tile's last step done
            bar_arrive(&empty[(i - 1u) % {{ stages }}u]);
        // rows g and g + 8 of the warp's 16 are m 2 g and 2 g + 1 (convert's pairing): a float2 a column
        const unsigned m = tl.mb * {{ bm }}u + 16u * cw + 2u * g, n0 = tl.nb * {{ bn }}u;
        if (m >= {{ m }}u)
            continue;
        float *__restrict__ c = workspace + {{ c_offset }}ull + (size_t)tl.entry * {{ c_stride }}ull{{ " + (size_t)tl.run * " ~ split_stride ~ "ull" if splits > 1 }} + m;
#pragma unroll
        for (int j = 0; j < {{ bn // 8 }}; ++j)
#pragma unroll
            for (int cc = 0; cc < 2; ++cc) {
                const unsigned col = n0 + 8u * j + 2u * t + cc;
                if (col < {{ n }}u) {
{%- if pairs %}
                    float2 *const to = (float2 *)(c + (size_t)col * {{ ldc }}u);
{%- if accumulate %}
                    const float2 was = *to; // the earlier sub-batches' sums
                    *to = make_float2(was.x + acc[4 * j + cc], was.y + acc[4 * j + cc + 2]);
{%- else %}
                    *to = make_float2(acc[4 * j + cc], acc[4 * j + cc + 2]);
{%- endif %}
{%- else %}
                    // C's columns are not 8-byte aligned ({{ ldc }} rows): one float at a time
                    float *const to = c + (size_t)col * {{ ldc }}u;
                    to[0] {{ "+" if accumulate }}= acc[4 * j + cc];
                    if (m + 1u < {{ m }}u)
                        to[1] {{ "+" if accumulate }}= acc[4 * j + cc + 2];
{%- endif %}
                }
            }
    }
}
