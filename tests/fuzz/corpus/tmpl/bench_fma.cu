{#- The fp32 FMA ceiling: {{ chains }} independent FMA chains per thread keep every lane's pipe
    full; inputs come from memory and the sum is stored, so nothing folds away. -#}
// convgen bench: fp32 FMA throughput, {{ chains }} chains x {{ iterations }} iterations x {{ unroll }} per thread.
extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1,
    float *__restrict__ out, float *__restrict__ workspace)
{
    const float b = in0[0], c = in0[1];
{%- for i in range(chains) %}
    float a{{ i }} = threadIdx.x * {{ ((i + 1) / 1000.0)|f32 }};
{%- endfor %}
    for (int it = 0; it < {{ iterations }}; ++it) {
#pragma unroll
        for (int u = 0; u < {{ unroll }}; ++u) {
{%- for i in range(chains) %}
            a{{ i }} = fmaf(a{{ i }}, b, c);
{%- endfor %}
        }
    }
    out[blockIdx.x * {{ threads }}u + threadIdx.x] = {% for i in range(chains) %}a{{ i }}{{ " + " if not loop.last }}{% endfor %};
}
