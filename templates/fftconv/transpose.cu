{#- Transposes a complex matrix [rows][cols] into [cols][rows] through a shared-memory tile, both
    sides coalesced. Rows of tiles beyond the grid's y size are taken in turn. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

extern "C" __global__ void __launch_bounds__({{ tile * tile_rows }})
{{ kernel_name }}(const float *__restrict__ in0, const float *__restrict__ in1, float *__restrict__ out,
    float *__restrict__ workspace)
{
    // {{ tile }} x {{ tile }} complex values; the odd pitch puts a column's values on distinct bank pairs.
    __shared__ float2 t[{{ tile }}][{{ tile + 1 }}];
    const float2 *__restrict__ src = reinterpret_cast<const float2 *>(workspace + {{ src_offset }}ull);
    float2 *__restrict__ dst = reinterpret_cast<float2 *>(workspace + {{ dst_offset }}ull);
    const unsigned c0 = blockIdx.x * {{ tile }}u;
    for (unsigned r0 = blockIdx.y * {{ tile }}u; r0 < {{ rows }}u; r0 += gridDim.y * {{ tile }}u) {
#pragma unroll
        for (unsigned j = 0; j < {{ tile }}u; j += {{ tile_rows }}u) {
            const unsigned r = r0 + j + threadIdx.y, c = c0 + threadIdx.x;
            if (r < {{ rows }}u && c < {{ cols }}u)
                t[j + threadIdx.y][threadIdx.x] = src[(size_t)r * {{ cols }}u + c];
        }
        __syncthreads();
#pragma unroll
        for (unsigned j = 0; j < {{ tile }}u; j += {{ tile_rows }}u) {
            const unsigned c = c0 + j + threadIdx.y, r = r0 + threadIdx.x;
            if (c < {{ cols }}u && r < {{ rows }}u)
                dst[(size_t)c * {{ rows }}u + r] = t[threadIdx.x][j + threadIdx.y];
        }
        __syncthreads();
    }
}
