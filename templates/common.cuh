{#- Pieces shared by the templates. Everything they print was decided by the generator:
    a digit list says which magic constants divide which index, in which order. -#}

{#- x / d for a shape constant d, exact over the dividend range the generator derived. -#}
{%- macro udiv(x, d) -%}
{%- if d.pow2 -%}
({{ x }} >> {{ d.shift }})
{%- else -%}
(__umulhi({{ x }}, {{ d.mul|hex }}u) >> {{ d.shift }})
{%- endif -%}
{%- endmacro -%}

{#- The layer's epilogue on v, an output of channel k, as the generator's map e says: its bias
    (e.bias), then ReLU (e.relu); v itself for a kernel that applies none. The bias by __ldg, a
    load per use (L1 hits): a plain bias[k], loaded once, cost winograd-fused's F(2x2, 3x3) kernel
    14 registers with NVRTC 13.0 (153 -> 167; past 168 a third block of 128 threads no longer fits
    an SM), __ldg none; winograd's output kernels have the same registers either way. -#}
{%- macro epilogue(e, v, k) -%}
{{ epilogue_loaded(e, v, "__ldg(bias + " ~ k ~ ")") }}
{%- endmacro -%}

{#- The same with the channel's bias already read into `b` (an expression). -#}
{%- macro epilogue_loaded(e, v, b) -%}
{%- set s = "(" ~ v ~ ") + " ~ b if e.bias else v -%}
{{ "fmaxf(" ~ s ~ ", 0.0f)" if e.relu else ("(" ~ s ~ ")" if e.bias else v) }}
{%- endmacro -%}

{#- The fifth parameter of a kernel that adds the layer's bias: a float per output channel. -#}
{%- macro bias_param(e) -%}{{ ",\n    const float *__restrict__ bias" if e.bias }}{%- endmacro -%}

{#- x * k for a constant k, with the multiplication by 1 left out. -#}
{%- macro times(x, k) -%}{{ x if k == 1 else x ~ " * " ~ k ~ "u" }}{%- endmacro -%}

{#- Tap f of a spatial dimension as the input sees it: flipped for convolution. -#}
{%- macro tap(d) -%}{% if d.flip %}({{ d.kmax }}u - f{{ d.i }}){% else %}f{{ d.i }}{% endif %}{%- endmacro -%}

{#- Splits a flat index into its mixed-radix digits, innermost first. -#}
{%- macro decompose(digits, indent) -%}
{%- for g in digits %}
{%- if g.kind == "div" %}
{{ indent }}const unsigned {{ g.quot }} = {{ udiv(g.src, g.div) }};  // {{ g.src }} / {{ g.size }}
{{ indent }}const unsigned {{ g.name }} = {{ g.src }} - {{ g.quot }} * {{ g.size }}u;
{%- elif g.kind == "rest" %}
{{ indent }}const unsigned {{ g.name }} = {{ g.src }};
{%- else %}
{{ indent }}const unsigned {{ g.name }} = 0u;
{%- endif %}
{%- endfor %}
{%- endmacro -%}

{#- copy_async(bytes, sized): the helper copy<bytes>(dst, src, full) for `bytes` (4, 8 or 16) a copy. Where
    !full it writes zeros and reads nothing: by cp.async's ignore-src predicate, or, `sized`, by a
    source size of 0 (the same SASS for most kernels; the generated GEMM's loops take 12% fewer
    instructions with the size, the sliding fprop's 3% fewer with the predicate). -#}
{%- macro copy_async(bytes, sized=false) -%}
// {{ bytes }} bytes from global to shared memory without passing through registers (cp.async{{ ", past L1" if bytes == 16 }});
// zeros where !full, and then nothing is read, whatever src.
__device__ __forceinline__ void copy{{ bytes }}(void *dst, const void *src, bool full = true)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
{%- if sized %}
    asm volatile("cp.async.{{ "cg" if bytes == 16 else "ca" }}.shared.global [%0], [%1], {{ bytes }}, %2;\n" ::"r"(to), "l"(src), "r"(full ? {{ bytes }} : 0));
{%- else %}
    asm volatile("{\n .reg .pred skip;\n setp.eq.u32 skip, %2, 0;\n cp.async.{{ "cg" if bytes == 16 else "ca" }}.shared.global [%0], [%1], {{ bytes }}, skip;\n}\n"
                 ::"r"(to), "l"(src), "r"((unsigned)full));
{%- endif %}
}
{%- endmacro -%}

{#- dependent_start(dependent), dependent_end(dependent): programmatic dependent launch (sm_90), as
    cg_kernel.dependent says. "first": wait for the kernel before in the stream (its writes seen),
    then let the next one launch, whose blocks then take the SMs as this one's finish instead of
    after its last; "last": the kernel before touches nothing this one does, so let the next launch
    at once and wait for the one before only at the end, so that this one never ends before it.
    Where the runtime launches a kernel plainly both are no-ops. -#}
{%- macro dependent_start(dependent) -%}
{%- if dependent %}
#if __CUDA_ARCH__ >= 900 // (a kernel set compiles one source for several architectures)
{%- if dependent == "first" %}
    asm volatile("griddepcontrol.wait;" ::: "memory"); // the kernel before has ended, its writes seen
{%- endif %}
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory"); // the next may launch
#endif
{%- endif %}
{%- endmacro -%}
{%- macro dependent_end(dependent) -%}
{%- if dependent == "last" %}
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory"); // end after the kernel before
#endif
{%- endif %}
{%- endmacro -%}

{#- bulk_copy_function(): bulk_copy alone, for a kernel that keeps its own mbarriers (the Winograd
    cluster kernel's phases); bulk_loads() below has it too. -#}
{%- macro bulk_copy_function() -%}
// `bytes` from global to shared memory by the copy engine, counted on the mbarrier `bar`.
__device__ __forceinline__ void bulk_copy(void *dst, const void *src, unsigned bytes, unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::
                 "r"((unsigned)__cvta_generic_to_shared(dst)), "l"(src), "r"(bytes),
                 "r"((unsigned)__cvta_generic_to_shared(bar)) : "memory");
}
{%- endmacro -%}

{#- bulk_loads(): sm_90's bulk copies from global to shared memory, run by the copy engine (the TMA
    unit) rather than by the threads' loads and stores: bulk_expect (one thread, then a barrier),
    bulk_copy, and bulk_wait by every thread (an mbarrier counts the bytes). Addresses and sizes
    are multiples of 16 bytes. -#}
{%- macro bulk_loads() -%}
// Makes the mbarrier `bar` expect `bytes` from bulk copies (one thread; a barrier follows before
// any bulk_copy or bulk_wait on it).
__device__ __forceinline__ void bulk_expect(unsigned long long *bar, unsigned bytes)
{
    const unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(b) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(b), "r"(bytes) : "memory");
}

{{ bulk_copy_function() }}

// Until every byte bulk_expect announced has arrived.
__device__ __forceinline__ void bulk_wait(unsigned long long *bar)
{
    const unsigned b = (unsigned)__cvta_generic_to_shared(bar);
    unsigned done = 0;
    while (!done)
        asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
                     : "=r"(done) : "r"(b) : "memory");
}
{%- endmacro -%}

{#- The file header: what this is and how it was derived, one comment line per entry. -#}
{%- macro file_header(lines) -%}
/*
{%- for line in lines %}
 *{{ " " ~ line if line else "" }}
{%- endfor %}
 */
{%- endmacro -%}

{#- acc[8][8] += a b^T for a and b of 8 floats each, given as two float4 (lo, hi): the 8 x 8 register
    block of a thread's products. -#}
{%- macro fma_8x8(a_lo, a_hi, b_lo, b_hi, indent) -%}
{{ indent }}const float av[8] = { {{- a_lo }}.x, {{ a_lo }}.y, {{ a_lo }}.z, {{ a_lo }}.w, {{ a_hi }}.x, {{ a_hi }}.y, {{ a_hi }}.z, {{ a_hi }}.w};
{{ indent }}const float bv[8] = { {{- b_lo }}.x, {{ b_lo }}.y, {{ b_lo }}.z, {{ b_lo }}.w, {{ b_hi }}.x, {{ b_hi }}.y, {{ b_hi }}.z, {{ b_hi }}.w};
{{ indent }}#pragma unroll
{{ indent }}for (int i = 0; i < 8; ++i)
{{ indent }}#pragma unroll
{{ indent }}    for (int j = 0; j < 8; ++j)
{{ indent }}        acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
{%- endmacro -%}

{#- The 8 x 8 register block of a thread's sums, zeroed. -#}
{%- macro acc_8x8(indent) -%}
{{ indent }}float acc[8][8];
{{ indent }}#pragma unroll
{{ indent }}for (int i = 0; i < 8; ++i)
{{ indent }}#pragma unroll
{{ indent }}    for (int j = 0; j < 8; ++j)
{{ indent }}        acc[i][j] = 0.0f;
{%- endmacro -%}

{#- sm_90 thread-block clusters: a peer block's copy of a shared `type` array, and the cluster-wide
    barrier that orders shared-memory writes (the peers' included) before the reads after it. -#}
{%- macro cluster_peer(type) -%}
// A peer's copy of a shared variable: the address of `local` in block `rank` of this cluster,
// a generic pointer that plain loads and stores use.
__device__ __forceinline__ {{ type }} *peer(const {{ type }} *local, unsigned rank)
{
    {{ type }} *p;
    asm("mapa.u64 %0, %1, %2;" : "=l"(p) : "l"(local), "r"(rank));
    return p;
}
{%- endmacro -%}

{%- macro cluster_sync() -%}
// Every thread of the cluster arrives and waits: the shared-memory writes before, the peers'
// included, are seen by the reads after.
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}
{%- endmacro -%}

{#- The device function tf32_lo(x), for the kernels whose products are 3xTF32 on the tensor cores
    (gemm_tc.cu, winograd_fused_cluster.cu) and the transforms that make an operand's lo halves for
    them (winograd.cu); generator/gemm_tc.h's cg_tf32_lo is the same in C. -#}
{%- macro tf32_lo_function() -%}
// x is split into two TF32 values, hi + lo = x to 21 of its 24 bits: hi is x itself, whose low 13
// bits the tensor cores ignore (they read its sign, exponent and top 10 significand bits: x
// truncated to TF32), and lo, returned here, is the rest, x - hi (exact in fp32), rounded to TF32
// by adding half its last TF32 bit. Three instructions; cvt.rna.tf32.f32 took five (its check for
// infinities among them), and a masked hi would take a register an operand. An infinite x gives
// a NaN lo.
__device__ __forceinline__ unsigned tf32_lo(float x)
{
    return __float_as_uint(x - __uint_as_float(__float_as_uint(x) & 0xffffe000u)) + 0x1000u;
}
{%- endmacro -%}

{#- The device function mma_tf32(d, a, b): one mma.sync m16n8k8 in TF32, for the kernels whose
    products are 3xTF32 by mma.sync (winograd_fused_cluster.cu, direct/direct_tc*.cu). -#}
{%- macro mma_tf32_function() -%}
// d += a b on the tensor cores, a 16 x 8 of TF32 (rows g, g + 8; columns t, t + 4 of lane
// 4 g + t) by an 8 x 8 (rows t, t + 4; column g), d's 16 x 8 in fp32 (rows g, g + 8; columns 2 t,
// 2 t + 1). Volatile, so that the mma keep the order written: the compiler put each sum's three
// back to back, every one waiting for the last.
__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{ "{" }}%0, %1, %2, %3}, {{ "{" }}%4, %5, %6, %7}, {{ "{" }}%8, %9}, {{ "{" }}%0, %1, %2, %3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
{%- endmacro -%}

{#- mma_tf32 and mma3_tf32(d, a_hi, a_lo, b_hi, b_lo): a K step of 3xTF32 over a block of M x N
    fragments, for direct's tensor-core kernels (direct/direct_tc*.cu). -#}
{%- macro mma3_tf32_function() -%}
{{ mma_tf32_function() }}

// d += a b in 3xTF32 over M x N fragments (a M of 16 x 8, b N of 8 x 8, each split hi + lo): lo hi,
// hi lo, then hi hi, the small terms first, each pass over every fragment so that no mma waits on
// the one before.
template <int M, int N>
__device__ __forceinline__ void mma3_tf32(float (&d)[M][N][4], const unsigned (&a_hi)[M][4], const unsigned (&a_lo)[M][4],
                                          const unsigned (&b_hi)[N][2], const unsigned (&b_lo)[N][2])
{
#pragma unroll
    for (int i = 0; i < M; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            mma_tf32(d[i][j], a_lo[i], b_hi[j]);
#pragma unroll
    for (int i = 0; i < M; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            mma_tf32(d[i][j], a_hi[i], b_lo[j]);
#pragma unroll
    for (int i = 0; i < M; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j)
            mma_tf32(d[i][j], a_hi[i], b_hi[j]);
}
{%- endmacro -%}

{#- wgmma's helpers, for the kernels whose products are wgmma (gemm_tc.cu, direct/direct_wgmma.cu):
    shared_at (a generic pointer's shared-memory address), descriptor (an operand's in shared memory)
    and fence_operand (a sum kept in place across a wgmma fence or wait). -#}
{%- macro shared_at_function() -%}
__device__ __forceinline__ unsigned shared_at(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
{%- endmacro -%}

{%- macro descriptor_function() -%}
// wgmma's shared-memory descriptor of an operand at p: K-major without swizzle, core matrices of
// 8 rows x 16 bytes (4 of the sum), the next 4 of the sum 128 bytes on, the next 8 rows 256 on.
__device__ __forceinline__ unsigned long long descriptor(const float *p)
{
    return (unsigned long long)((shared_at(p) & 0x3ffffu) >> 4) | (unsigned long long)(128u >> 4) << 16 |
           (unsigned long long)(256u >> 4) << 32;
}
{%- endmacro -%}

{%- macro fence_operand_function() -%}
// Keeps the compiler from moving a read or write of x across a wgmma fence or wait.
__device__ __forceinline__ void fence_operand(float &x) { asm volatile("" : "+f"(x)::"memory"); }
{%- endmacro -%}
