{#- convgen's GEMM for a short sum and few columns (generator/gemm_skinny.c): C[{{ m }} x {{ n }}] = A op(B), summing
    {{ k }}, one batch entry a blockIdx.z. op(B) goes to shared memory once a block, [sum][column]. A block makes
    {{ block_rows }} rows of C; their A arrives in stages of {{ stage }} steps of the sum by cp.async ({{ vec * 4 }} bytes a copy,
    zeros past the matrix), the next stage in flight while this one's products run; each thread makes
    {{ rows }} whole row(s) of C, {{ threads }} rows apart, from its rows' values of each step and the same float4s
    of op(B) that every thread reads. -#}
{%- include "common.cuh" -%}
{#- Stage `st`'s A into buffer `to` by cp.async, copy i = (step, run of {{ vec }} rows), {{ copies }} a thread, then
    the group's commit. -#}
{%- macro fetch(st, to, indent) -%}
{{ indent }}#pragma unroll
{{ indent }}for (unsigned q = 0; q < {{ copies }}u; ++q) {
{{ indent }}    const unsigned i = threadIdx.x + q * {{ threads }}u, s = {{ udiv("i", runs_div) }}, run = i - s * {{ runs }}u;
{{ indent }}    const unsigned row = first + run * {{ vec }}u, sum = ({{ st }}) * {{ stage }}u + s;
{{ indent }}    const unsigned left = row < {{ m }}u && sum < {{ k }}u ? min({{ m }}u - row, {{ vec }}u) : 0u;
{{ indent }}    copy_async(({{ to }}) + s * {{ block_rows }}u + run * {{ vec }}u, left ? a + row + sum * {{ lda }}u : a, 4u * left);
{{ indent }}}
{{ indent }}asm volatile("cp.async.commit_group;\n" ::);
{%- endmacro -%}

{{ file_header(header) }}

// {{ vec * 4 }} bytes from global to shared memory without registers; zeros past `valid` bytes.
__device__ __forceinline__ void copy_async(float *dst, const float *src, unsigned valid)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.{{ "cg" if vec == 4 else "ca" }}.shared.global [%0], [%1], {{ vec * 4 }}, %2;\n" ::"r"(to), "l"(src), "r"(valid));
}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    __shared__ __align__(16) float bs[{{ sums * n4 }}];                 // op(B), [sum][column], zero past {{ k }} x {{ n }}
    __shared__ __align__(16) float as[2][{{ stage * block_rows }}];    // two stages of A, [step][row]
    const float *__restrict__ a = workspace + {{ a_offset }}ull + (size_t)blockIdx.z * {{ a_stride }}ull;
    const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)blockIdx.z * {{ b_stride }}ull;
    float *__restrict__ c = workspace + {{ c_offset }}ull + (size_t)blockIdx.z * {{ c_stride }}ull;
    const unsigned first = blockIdx.x * {{ block_rows }}u; // the block's first row

{{ fetch("0u", "as[0]", "    ") }}
    for (unsigned i = threadIdx.x; i < {{ sums * n4 }}u; i += {{ threads }}u) {
        const unsigned s = {{ udiv("i", n4_div) }}, j = i - s * {{ n4 }}u;
        bs[i] = s < {{ k }}u && j < {{ n }}u ? b[{{ "j + s * " ~ ldb ~ "u" if b_transposed else "s + j * " ~ ldb ~ "u" }}] : 0.0f;
    }

    float acc[{{ rows }}][{{ n4 }}] = {};
#pragma unroll 1
    for (unsigned st = 0; st < {{ stages }}u; ++st) {
        if (st + 1u < {{ stages }}u) {
            // the next stage into the buffer the previous one read
{{ fetch("st + 1u", "as[(st + 1u) & 1u]", "            ") }}
            asm volatile("cp.async.wait_group 1;\n" ::);
        } else {
            asm volatile("cp.async.wait_group 0;\n" ::);
        }
        __syncthreads(); // this stage's A (and op(B)) from every thread's copies
        const float *__restrict__ at = as[st & 1u] + threadIdx.x;
        const float4 *__restrict__ bv = (const float4 *)(bs + st * {{ stage * n4 }}u);
#pragma unroll
        for (int s = 0; s < {{ stage }}; ++s) {
{%- for r in range(rows) %}
            const float a{{ r }} = at[s * {{ block_rows }} + {{ r * threads }}];
{%- endfor %}
#pragma unroll
            for (int q = 0; q < {{ n4 // 4 }}; ++q) {
                const float4 w = bv[s * {{ n4 // 4 }} + q];
{%- for r in range(rows) %}
                acc[{{ r }}][4 * q] += a{{ r }} * w.x;
                acc[{{ r }}][4 * q + 1] += a{{ r }} * w.y;
                acc[{{ r }}][4 * q + 2] += a{{ r }} * w.z;
                acc[{{ r }}][4 * q + 3] += a{{ r }} * w.w;
{%- endfor %}
            }
        }
        __syncthreads(); // every thread done with this buffer before the next fetch into it
    }
{%- for r in range(rows) %}
    if (first + threadIdx.x + {{ r * threads }}u < {{ m }}u) {
#pragma unroll
        for (int j = 0; j < {{ n }}; ++j)
            c[first + threadIdx.x + {{ r * threads }}u + j * {{ ldc }}u] = acc[{{ r }}][j];
    }
{%- endfor %}
}
