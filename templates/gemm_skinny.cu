{#- convgen's GEMM for a short sum and few columns (generator/gemm_skinny.c): C[{{ m }} x {{ n }}] = A op(B), summing
    {{ k }}, one batch entry a blockIdx.z. op(B) goes to shared memory once a block, [sum][column]; each thread
    then makes {{ rows }} whole row(s) of C, {{ threads }} rows apart, from one load of A per row and step of the
    sum and the same float4s of op(B) that every thread reads. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    __shared__ __align__(16) float bs[{{ k * n4 }}]; // op(B), [sum][column], columns past {{ n }} zero
    const float *__restrict__ a = workspace + {{ a_offset }}ull + (size_t)blockIdx.z * {{ a_stride }}ull;
    const float *__restrict__ b = workspace + {{ b_offset }}ull + (size_t)blockIdx.z * {{ b_stride }}ull;
    float *__restrict__ c = workspace + {{ c_offset }}ull + (size_t)blockIdx.z * {{ c_stride }}ull;
    for (unsigned i = threadIdx.x; i < {{ k * n4 }}u; i += {{ threads }}u) {
        const unsigned s = {{ udiv("i", n4_div) }}, j = i - s * {{ n4 }}u;
        bs[i] = j < {{ n }}u ? b[{{ "j + s * " ~ ldb ~ "u" if b_transposed else "s + j * " ~ ldb ~ "u" }}] : 0.0f;
    }
    __syncthreads();

    const unsigned row0 = blockIdx.x * {{ rows * threads }}u + threadIdx.x;
{%- for r in range(rows) %}
    const bool live{{ r }} = row0 + {{ r * threads }}u < {{ m }}u;
{%- endfor %}
    float acc[{{ rows }}][{{ n4 }}] = {};
#pragma unroll 8
    for (unsigned s = 0; s < {{ k }}u; ++s) {
        const float *__restrict__ column = a + row0 + s * {{ lda }}u;
{%- for r in range(rows) %}
        const float a{{ r }} = live{{ r }} ? __ldg(column + {{ r * threads }}u) : 0.0f;
{%- endfor %}
        const float4 *__restrict__ bv = (const float4 *)(bs + s * {{ n4 }}u);
#pragma unroll
        for (int q = 0; q < {{ n4 // 4 }}; ++q) {
            const float4 w = bv[q];
{%- for r in range(rows) %}
            acc[{{ r }}][4 * q] += a{{ r }} * w.x;
            acc[{{ r }}][4 * q + 1] += a{{ r }} * w.y;
            acc[{{ r }}][4 * q + 2] += a{{ r }} * w.z;
            acc[{{ r }}][4 * q + 3] += a{{ r }} * w.w;
{%- endfor %}
        }
    }
{%- for r in range(rows) %}
    if (live{{ r }}) {
#pragma unroll
        for (int j = 0; j < {{ n }}; ++j)
            c[row0 + {{ r * threads }}u + j * {{ ldc }}u] = acc[{{ r }}][j];
    }
{%- endfor %}
}
