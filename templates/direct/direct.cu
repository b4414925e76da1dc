{#- Direct convolution as an implicit GEMM (cuDNN paper, section 4): out[M][N] = A[M][R] * B[R][N]
    with the im2col operand gathered tile by tile into shared memory, never materialized.
    generator/direct/direct.c chooses the GEMM view of the pass, the tiles and every constant;
    this template only lays them out. -#}
{%- include "common.cuh" -%}
{{ file_header(header) }}

// The gathers of this pass: element (row, red) of A, (red, col) of B, and where output
// element (row, col) lives. Indices are unsigned and bounded, so the magic divisions are exact.
typedef {{ index_type }} idx_t;
{% include gather %}

extern "C" __global__ void __launch_bounds__({{ threads }})
{{ kernel_name }}(const float *__restrict__ {{ in0 }}, const float *__restrict__ {{ in1 }},
    float *__restrict__ {{ out }}, float *__restrict__ workspace{{ bias_param(epi) }})
{
    // Tiles of A [{{ block_red }}][{{ block_rows }}] and B [{{ block_red }}][{{ block_cols }}], reduction-major; rows
    // padded by {{ pad }} floats so that the reduction-fast loaders store to distinct banks.
    __shared__ __align__(16) float a_tile[{{ block_red }}][{{ block_rows + pad }}];
    __shared__ __align__(16) float b_tile[{{ block_red }}][{{ block_cols + pad }}];
{% if phases > 1 %}
    // This block's stride phase and split: {{ phases }} GEMMs on blockIdx.z.
    const phase_t ph = phase_of(blockIdx.z);
{%- endif %}
    const unsigned tid = threadIdx.x;
    const unsigned row0 = blockIdx.x * {{ block_rows }}u, col0 = blockIdx.y * {{ block_cols }}u;
    // Thread (tm, tn) owns rows row0 + tm + {{ rows_apart }}*i and columns col0 + {{ thread_cols }}*tn + j:
    // lanes run along rows, so row-contiguous outputs are stored coalesced.
    const unsigned tm = tid & {{ rows_apart - 1 }}u, tn = tid >> {{ rows_apart_log2 }};
{%- for ld in loaders %}
    // {{ ld.what }}
    const unsigned {{ ld.name }}_fast = tid & {{ ld.fast_mask }}u, {{ ld.name }}_slow = tid >> {{ ld.fast_log2 }};
{%- endfor %}

    float acc[{{ thread_rows }}][{{ thread_cols }}];
#pragma unroll
    for (int i = 0; i < {{ thread_rows }}; ++i)
#pragma unroll
        for (int j = 0; j < {{ thread_cols }}; ++j)
            acc[i][j] = 0.0f;

    // This block's share of the reduction: steps of {{ block_red }}, {{ steps_per_split }} of {{ steps }}.
    const unsigned step_begin = {{ step_begin }};
    const unsigned step_end = {{ step_end }};

{%- for ld in loaders %}
    float {{ ld.name }}_next[{{ ld.count }}];
{%- endfor %}
{%- for ld in loaders %}
#pragma unroll
    for (int e = 0; e < {{ ld.count }}; ++e) {
        const unsigned red = step_begin * {{ block_red }}u + {{ ld.red_local }}, free = {{ ld.free0 }} + {{ ld.free_local }};
        {{ ld.name }}_next[e] = ({{ ld.guard ~ " && " if ld.guard }}free < {{ ld.free_size }}u && red < {{ red_size }}u) ? {{ ld.call }} : 0.0f;
    }
{%- endfor %}

    for (unsigned step = step_begin; step < step_end; ++step) {
{%- for ld in loaders %}
#pragma unroll
        for (int e = 0; e < {{ ld.count }}; ++e)
{%- if ld.guard %}
            if ({{ ld.guard }})
                {{ ld.name }}_tile[{{ ld.red_local }}][{{ ld.free_local }}] = {{ ld.name }}_next[e];
{%- else %}
            {{ ld.name }}_tile[{{ ld.red_local }}][{{ ld.free_local }}] = {{ ld.name }}_next[e];
{%- endif %}
{%- endfor %}
        __syncthreads();

        // Fetch the next step's elements now, so the loads fly while this step computes.
        if (step + 1u < step_end) {
{%- for ld in loaders %}
#pragma unroll
            for (int e = 0; e < {{ ld.count }}; ++e) {
                const unsigned red = (step + 1u) * {{ block_red }}u + {{ ld.red_local }}, free = {{ ld.free0 }} + {{ ld.free_local }};
                {{ ld.name }}_next[e] = ({{ ld.guard ~ " && " if ld.guard }}free < {{ ld.free_size }}u && red < {{ red_size }}u) ? {{ ld.call }} : 0.0f;
            }
{%- endfor %}
        }

#pragma unroll
        for (int kk = 0; kk < {{ block_red }}; ++kk) {
            float a_reg[{{ thread_rows }}], b_reg[{{ thread_cols }}];
#pragma unroll
            for (int i = 0; i < {{ thread_rows }}; ++i)
                a_reg[i] = a_tile[kk][tm + {{ rows_apart }}u * i];
#pragma unroll
            for (int j = 0; j < {{ thread_cols }}; j += 4) {
                const float4 v = *reinterpret_cast<const float4 *>(&b_tile[kk][{{ thread_cols }}u * tn + j]);
                b_reg[j] = v.x; b_reg[j + 1] = v.y; b_reg[j + 2] = v.z; b_reg[j + 3] = v.w;
            }
#pragma unroll
            for (int i = 0; i < {{ thread_rows }}; ++i)
#pragma unroll
                for (int j = 0; j < {{ thread_cols }}; ++j)
                    acc[i][j] = fmaf(a_reg[i], b_reg[j], acc[i][j]);
        }
        __syncthreads();
    }
{% if splits > 1 %}
    // Split reduction: each of the {{ splits }} splits writes a whole output-shaped slice of the
    // workspace, and the next kernel adds the slices into {{ out }}.
    float *const dst = workspace + (size_t){{ split }} * {{ out_elems }}ull;
{%- else %}
    float *const dst = {{ out }};
{%- endif %}
{%- if epi.bias and phases == 1 %}
    // The bias of this thread's output channels, loaded once before the stores (read per store,
    // the loads took some 40 more registers, and the 8 x 8 tile then half the blocks).
    float bias_at[{{ thread_cols }}];
#pragma unroll
    for (int j = 0; j < {{ thread_cols }}; ++j) {
        const unsigned col = col0 + {{ thread_cols }}u * tn + j;
        bias_at[j] = col < {{ cols }}u ? __ldg(bias + col) : 0.0f;
    }
{%- endif %}
#pragma unroll
    for (int i = 0; i < {{ thread_rows }}; ++i) {
        const unsigned row = row0 + tm + {{ rows_apart }}u * i;
#pragma unroll
        for (int j = 0; j < {{ thread_cols }}; ++j) {
            const unsigned col = col0 + {{ thread_cols }}u * tn + j;
{%- if phases > 1 %}
            if (row < {{ rows }}u && col < {{ cols }}u && in_image(row, ph))
                dst[out_index(row, col, ph)] = acc[i][j];
{%- else %}
            if (row < {{ rows }}u && col < {{ cols }}u)
                dst[out_index(row, col)] = {{ epilogue_loaded(epi, "acc[i][j]", "bias_at[j]") }};
{%- endif %}
        }
    }
}
