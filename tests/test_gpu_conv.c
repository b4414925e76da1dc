/* GPU tests of the convolution algorithms: every pass against the CPU float64 reference on
 * random data, outputs (and workspace) poisoned with NaN first, relative error <= 1e-5 for
 * direct and <= 1e-4 for the FFT convolutions (two fp32 transforms around the product). direct
 * runs 50 shapes (any stride), cufft 56 (stride 1, kernels up to 13), fft the same without rank
 * 3, fft-tiled with 3-D tiled volumes (fft-fused: ranks 2 and 3, fprop and bprop), a third of them again under a
 * workspace limit that makes them sub-batch (the planners that sub-batch: cufft, fft, fft-tiled,
 * winograd); direct-window bprop runs the window shapes that direct runs as GEMMs.
 * Without a GPU every test skips and says why. CONVGEN_TEST_GROUPS="fft fft-tiled" runs only
 * the groups named (direct, direct_window or direct-window, cufft, fft, fft_tiled or fft-tiled, fft_fused or fft-fused,
 * winograd: 67 shapes, stride 1 and kernels up to 7, rank 1 to 3; winograd_fused (or winograd-fused): 59,
 * kernels 2 to 5 across the plane, ranks 2 and 3; winograd_fused_inside: those the one-block kernel takes again, with the
 * weights' transforms made inside it (fprop, bprop); winograd_gemm, fft_tiled_gemm: those algorithms' shapes with the generated
 * GEMM, fft_cublas: fft's with cuBLAS's (options.gemm; fft's default is the generated one), fft_tensor: fft's
 * with its generated GEMM on the tensor cores (gemm=tensor);
 * prepared: each FFT and Winograd algorithm's first 8 shapes on weights
 * prepared once (direct_tensor, direct's shapes on the tensor cores, runs its wgmma plans on
 * prepared weights too); accuracy: Winograd's error per tile; auto: algorithm AUTO on direct's
 * handpicked shapes and random stride-1 ones, and what it chose; registry: every registered
 * planner on direct's handpicked edge cases, the ones it refuses by tests/planner_cases.c, so
 * that a new planner runs on the GPU from the day it is registered; epilogue: fprop with a bias
 * and ReLU (or one) on 8 shapes of each algorithm's group and of auto's).
 * The groups run in parallel processes (run_groups). */
#include <stdarg.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "convgen.h"
#include "direct/direct_tc.h"
#include "generate.h"
#include "planner_cases.h"
#include "verify.h"

#define DIRECT_SHAPES 71 /* 20 handpicked, 21 for direct-window, 30 random */
#define WINDOW_SHAPES 21 /* direct-window's: the window bprop's handpicked ones, then the sliding kernel's */
#define CUFFT_SHAPES 57 /* at least 42 random shapes per FFT algorithm beside the handpicked ones */

static convgen_context *ctx, *few_sms_ctx; /* the second plans for FEW_SMS multiprocessors, made when first needed */
#define FEW_SMS 2
static char no_device_reason[512];

typedef struct shape {
    char name[160];
    convgen_conv_desc d;
    convgen_algo algo;
    double bound;     /* on the relative error */
    bool sub_batched; /* also run under a workspace limit that forces sub-batches */
    int gemm;         /* options.gemm */
    int out_shift;    /* the output this many floats past a 16-byte boundary (cg_verify_shifted) */
    int m;            /* the Winograd tile F(m, r) across the plane (options.winograd_m); 0: chosen */
    const char *form[3]; /* on sm_90, a text each pass's plan's kernels hold: the form the shape tests */
    bool few_sms;        /* planned for FEW_SMS multiprocessors (options.sm_count): kernels' grids for a small GPU */
    int weights;         /* options.weights: winograd-fused's weights' transforms before its kernel or inside it */
} shape;

#define PREPARED_SHAPES 8

#define PREPARED_ALGOS 6
#define WINOGRAD_SHAPES 67 /* 40 random ones beside the 27 handpicked ones */
#define WINOGRAD_TENSOR_SHAPES 13
#define WINOGRAD_FUSED_SHAPES 71 /* 35 handpicked, 18 of them 3-D; 36 random */
#define WINOGRAD_FUSED_SHIFTED 3 /* the last three handpicked ones again, y 4, 8 and 12 bytes past 16-byte alignment */
#define AUTO_SHAPES 24 /* direct's 20 handpicked ones and 4 random stride-1 ones */
#define AUTO_CHOICES 4
#define AUTO_EXTRA 1 /* check_auto_drops_wrong_candidates */
#define EPILOGUE_PER_ALGO 8
#define EPILOGUE_ALGOS 10 /* every algorithm, winograd-fused with its weights inside, and auto */

static shape direct_shapes[DIRECT_SHAPES], window_shapes[WINDOW_SHAPES], cufft_shapes[CUFFT_SHAPES], fft_shapes[CUFFT_SHAPES],
    tiled_shapes[CUFFT_SHAPES], fused_shapes[CUFFT_SHAPES], winograd_shapes[WINOGRAD_SHAPES],
    winograd_fused_shapes[WINOGRAD_FUSED_SHAPES], winograd_gemm_shapes[WINOGRAD_SHAPES], fft_cublas_shapes[CUFFT_SHAPES],
    fft_tensor_shapes[CUFFT_SHAPES],
    tiled_gemm_shapes[CUFFT_SHAPES], auto_shapes[AUTO_SHAPES],
    prepared_shapes[PREPARED_ALGOS * PREPARED_SHAPES], epilogue_shapes[EPILOGUE_ALGOS * EPILOGUE_PER_ALGO];

#define DESC2(n_, c_, k_, h, w, r, s, pad, str, dil)                                                          \
    (convgen_conv_desc){.rank = 2, .n = n_, .c = c_, .k = k_, .in = {h, w}, .kernel = {r, s},                 \
                        .pad_before = {pad, pad}, .pad_after = {pad, pad}, .stride = {str, str},             \
                        .dilation = {dil, dil}}

/* The edge cases by hand: odd sizes, padding, stride 2, dilation 2, C = 1, K = 1, N = 1,
 * convolution mode, asymmetric padding, rank 1 and 3. */
static int handpicked(shape *s)
{
    int n = 0;
    s[n++].d = DESC2(2, 3, 5, 11, 13, 3, 3, 0, 1, 1);
    s[n++].d = DESC2(3, 4, 6, 17, 9, 5, 3, 2, 1, 1);
    s[n++].d = DESC2(2, 5, 7, 15, 15, 3, 3, 1, 2, 1);
    s[n++].d = DESC2(1, 6, 4, 19, 21, 3, 3, 2, 1, 2);
    s[n++].d = DESC2(4, 1, 8, 12, 12, 5, 5, 0, 1, 1);      /* C = 1 */
    s[n++].d = DESC2(3, 9, 1, 10, 14, 3, 3, 1, 1, 1);      /* K = 1 */
    s[n++].d = DESC2(1, 16, 16, 9, 9, 9, 9, 0, 1, 1);      /* N = 1, 1x1 output */
    s[n++].d = DESC2(2, 3, 4, 23, 17, 7, 7, 3, 2, 1);      /* the stem's shape, small */
    s[n++].d = DESC2(2, 4, 3, 13, 13, 3, 3, 2, 2, 2);      /* stride 2 and dilation 2 */
    s[n++].d = DESC2(2, 5, 6, 20, 19, 5, 5, 4, 3, 1);      /* stride 3, padding past the stride */
    s[n].d = DESC2(2, 3, 4, 17, 18, 3, 3, 1, 4, 1);
    s[n].d.stride[1] = 3;                                  /* stride 4 > kernel: a phase no tap reaches */
    ++n;
    s[n++].d = DESC2(2, 3, 70, 7, 7, 1, 1, 0, 1, 1);       /* 1x1 kernel, K > 64 */
    s[n++].d = DESC2(8, 4, 4, 32, 32, 3, 3, 1, 1, 1);      /* long reduction, split accgrad */
    s[n++].d = DESC2(2, 130, 129, 6, 6, 3, 3, 1, 1, 1);    /* C, K past one tile */
    s[n].d = DESC2(2, 3, 5, 10, 11, 3, 2, 0, 1, 1);
    s[n].d.mode = CONVGEN_CONVOLUTION;                     /* flipped kernel */
    ++n;
    s[n].d = DESC2(2, 3, 4, 12, 9, 4, 3, 0, 1, 1);
    s[n].d.pad_before[0] = 2, s[n].d.pad_after[0] = 0;     /* asymmetric padding */
    s[n].d.pad_before[1] = 0, s[n].d.pad_after[1] = 1;
    ++n;
    s[n].d = DESC2(2, 3, 4, 16, 15, 3, 3, 1, 1, 1);
    s[n].d.stride[0] = 2, s[n].d.dilation[1] = 3;          /* per-dimension stride and dilation */
    ++n;
    s[n++].d = (convgen_conv_desc){.rank = 1, .n = 3, .c = 5, .k = 6, .in = {37}, .kernel = {5},
                                   .pad_before = {2}, .pad_after = {1}, .stride = {2}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 2, .c = 3, .k = 4, .in = {7, 8, 9}, .kernel = {3, 3, 3},
                                   .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 1, .c = 2, .k = 3, .in = {9, 6, 7}, .kernel = {3, 2, 3},
                                   .stride = {2, 1, 2}, .dilation = {1, 2, 1}, .mode = CONVGEN_CONVOLUTION};
    return n;
}

/* A 3-D layer: n, c, k, the volume, the kernel, padding before and after. */
static convgen_conv_desc desc3(int64_t n, int64_t c, int64_t k, const int64_t in[3], const int64_t kernel[3],
                               const int64_t before[3], const int64_t after[3])
{
    convgen_conv_desc d = {.rank = 3, .n = n, .c = c, .k = k};
    for (int i = 0; i < 3; ++i)
        d.in[i] = in[i], d.kernel[i] = kernel[i], d.pad_before[i] = before[i], d.pad_after[i] = after[i];
    return d;
}

#define V3(a, b, c) ((const int64_t[3]){a, b, c})

/* direct-window's fprop, the sliding kernel (the window bprop's shapes below run it too; their
 * bprop the window kernel, which takes no dilation): ZNNi's first layer in small with all 80
 * output channels (two chunks of 5 warps of 8 channels, two column tiles, a depth not a multiple
 * of 8); 200 output channels from C = 2 with padding and dilation along depth, a flipped kernel;
 * C = 3 to 37 channels with dilation across rows, asymmetric padding, depth padding past the
 * kernel; C = 4 with a batch of 3 and one-slice kernels (four channels a stage); a 2-D stem at
 * stride 2 whose rows run past one block; a block of two row groups (enough blocks for the row
 * loop), whose first group's outputs wait in shared memory and go out during the second's
 * products: 20 channels (the last group of 8 has 4), a last depth tile of 5, a last row and
 * column tile part outside y. */
static int handpicked_slide(shape *s)
{
    int n = 0;
    s[n++].d = desc3(1, 1, 80, V3(21, 23, 40), V3(4, 4, 4), V3(0, 0, 0), V3(0, 0, 0));
    s[n].d = desc3(2, 2, 200, V3(11, 9, 10), V3(3, 3, 3), V3(2, 1, 1), V3(2, 1, 0));
    s[n].d.dilation[0] = 2, s[n].d.mode = CONVGEN_CONVOLUTION;
    ++n;
    s[n].d = desc3(1, 3, 37, V3(13, 21, 45), V3(3, 3, 5), V3(3, 2, 2), V3(0, 0, 1));
    s[n++].d.dilation[1] = 2;
    s[n++].d = desc3(3, 4, 12, V3(9, 10, 70), V3(1, 3, 3), V3(0, 1, 1), V3(0, 1, 1));
    s[n++].d = DESC2(2, 3, 64, 61, 66, 7, 7, 3, 2, 1);
    s[n++].d = desc3(8, 2, 20, V3(29, 63, 70), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    return n;
}

/* direct-window's bprop by sliding windows (C <= 4, rank 1 to 3, no dilation), which direct
 * runs as GEMMs: several tiles along
 * both axes, C = 1, 2 and 4, output channels a stage holds 1 (11, a prime past 8) or several,
 * strides 1 to 4, a stride past the kernel (a phase with no taps), 13 taps, convolution mode
 * with asymmetric padding and mixed strides, rank 1, a batch of 64 on grid.z; in 3-D (a block
 * per input slice, the depth taps as stages): ZNNi's first layer in small (C = 1, 4^3), strides
 * along y and x with a flipped kernel, depth padding past the kernel's middle, 2 x 3 x 7. With
 * C = 1 a tap row's weights are packed along x (float4s of taps): 3 and 4 taps above, and here 9
 * taps at stride 2 (phases of 5 and 4 taps, two float4s a row) and a 3-D kernel 6 taps wide; a
 * 1 x 3 x 3 kernel with several dx slices a block (its one depth slice read past w before). */
static int handpicked_window(shape *s)
{
    int n = 0;
    s[n++].d = DESC2(2, 1, 5, 40, 300, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(3, 2, 11, 33, 29, 5, 5, 2, 2, 1);
    s[n++].d = DESC2(2, 4, 8, 37, 41, 11, 11, 5, 4, 1);
    s[n++].d = DESC2(2, 3, 6, 20, 22, 2, 2, 0, 3, 1);      /* stride 3 > kernel 2 */
    s[n++].d = (convgen_conv_desc){.rank = 1, .n = 3, .c = 2, .k = 7, .in = {300}, .kernel = {7},
                                   .pad_before = {3}, .pad_after = {3}, .stride = {2}};
    s[n].d = DESC2(2, 3, 9, 31, 28, 7, 5, 0, 1, 1);
    s[n].d.pad_before[0] = 3, s[n].d.pad_after[0] = 2, s[n].d.pad_before[1] = 1, s[n].d.pad_after[1] = 0;
    s[n].d.stride[0] = 2, s[n].d.stride[1] = 3, s[n].d.mode = CONVGEN_CONVOLUTION;
    ++n;
    s[n++].d = DESC2(1, 3, 4, 30, 30, 13, 13, 6, 1, 1);    /* 13 taps a dimension */
    s[n++].d = DESC2(64, 3, 16, 9, 9, 3, 3, 1, 2, 1);
    s[n++].d = desc3(1, 1, 8, V3(17, 16, 15), V3(4, 4, 4), V3(0, 0, 0), V3(0, 0, 0));
    s[n].d = desc3(2, 3, 5, V3(9, 12, 13), V3(3, 5, 3), V3(1, 2, 0), V3(1, 2, 2));
    s[n].d.stride[1] = s[n].d.stride[2] = 2, s[n].d.mode = CONVGEN_CONVOLUTION;
    ++n;
    s[n++].d = desc3(1, 4, 11, V3(6, 20, 18), V3(5, 3, 3), V3(4, 1, 1), V3(0, 1, 1));
    s[n].d = desc3(3, 2, 6, V3(5, 9, 40), V3(2, 3, 7), V3(0, 1, 3), V3(1, 1, 3));
    s[n++].d.stride[1] = 3;
    s[n].d = DESC2(2, 1, 7, 23, 50, 5, 9, 2, 2, 1);
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(1, 1, 6, V3(12, 14, 37), V3(3, 2, 6), V3(1, 0, 2), V3(1, 1, 3));
    s[n++].d = desc3(1, 1, 4, V3(9, 30, 30), V3(1, 3, 3), V3(0, 0, 0), V3(0, 0, 0));
    return n + handpicked_slide(s + n);
}

/* direct's handpicked shapes: the edge cases, then the window bprop's. */
static int handpicked_direct(shape *s)
{
    int n = handpicked(s);
    return n + handpicked_window(s + n);
}

static unsigned draw(unsigned *state, unsigned lo, unsigned hi)
{
    *state = *state * 1664525u + 1013904223u;
    return lo + (*state >> 8) % (hi - lo + 1);
}

/* FFT convolution's edge cases: stride 1 only, kernels from 1 to 13 (larger than the image
 * in bprop's view), N = C = K = 1, padding beyond the kernel's extent (bprop's pad_before
 * turns negative), dilation, convolution mode, rank 1 and 3. */
static int handpicked_fft(shape *s)
{
    int n = 0;
    s[n++].d = DESC2(2, 3, 5, 11, 13, 3, 3, 0, 1, 1);
    s[n++].d = DESC2(1, 1, 1, 9, 9, 1, 1, 0, 1, 1);        /* N = C = K = 1, 1x1 kernel */
    s[n++].d = DESC2(2, 4, 3, 13, 13, 13, 13, 0, 1, 1);    /* 13x13 kernel, 1x1 output */
    s[n++].d = DESC2(2, 3, 4, 20, 18, 13, 11, 6, 1, 1);
    s[n++].d = DESC2(3, 2, 5, 10, 12, 3, 3, 5, 1, 1);      /* padding beyond the kernel */
    s[n++].d = DESC2(2, 5, 3, 19, 21, 5, 5, 2, 1, 2);      /* dilation 2 */
    s[n].d = DESC2(2, 3, 5, 10, 11, 4, 2, 1, 1, 1);
    s[n].d.mode = CONVGEN_CONVOLUTION;                     /* flipped kernel */
    ++n;
    s[n].d = DESC2(2, 3, 4, 12, 9, 4, 3, 0, 1, 1);
    s[n].d.pad_before[0] = 3, s[n].d.pad_after[0] = 0;     /* asymmetric padding */
    s[n].d.pad_before[1] = 0, s[n].d.pad_after[1] = 2;
    s[n].d.dilation[1] = 3, s[n].d.mode = CONVGEN_CONVOLUTION;
    ++n;
    s[n++].d = (convgen_conv_desc){.rank = 1, .n = 3, .c = 5, .k = 6, .in = {37}, .kernel = {5},
                                   .pad_before = {2}, .pad_after = {1}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 2, .c = 3, .k = 4, .in = {7, 8, 9}, .kernel = {3, 3, 3},
                                   .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}};
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 1, .c = 2, .k = 3, .in = {9, 6, 7}, .kernel = {3, 2, 3},
                                   .dilation = {1, 2, 1}, .mode = CONVGEN_CONVOLUTION};
    return n;
}


/* Winograd's edge cases: FFT convolution's handpicked shapes with kernels up to 7, without their
 * dilation, then 5 x 5, 7 x 7, 1 x 7 and 7 x 1 kernels; and 3-D ones: rectangular and prime
 * volumes, kernels that differ per dimension (1 x 3 x 3, 5 x 3 x 1, 7 x 3 x 2), padding on one
 * side, one input or output channel, channels past the GEMMs' tiles, batch 1 and 4. */
static int handpicked_winograd(shape *s)
{
    shape all[CUFFT_SHAPES] = {0}; /* every field but .d stays zero: gemm, out_shift */
    int n = 0, count = handpicked_fft(all);
    for (int i = 0; i < count; ++i) {
        convgen_conv_desc *d = &all[i].d;
        bool too_big = false;
        for (int r = 0; r < d->rank; ++r)
            too_big |= d->kernel[r] > 7;
        if (too_big)
            continue;
        for (int r = 0; r < d->rank; ++r)
            d->dilation[r] = 1;
        s[n++] = all[i];
    }
    s[n++].d = DESC2(2, 6, 4, 19, 21, 5, 5, 2, 1, 1);
    s[n++].d = DESC2(1, 4, 3, 17, 15, 7, 7, 3, 1, 1);      /* N = 1 */
    s[n++].d = DESC2(2, 5, 6, 14, 16, 1, 7, 0, 1, 1);      /* 1 x 7 */
    s[n++].d = DESC2(2, 5, 6, 16, 14, 7, 1, 0, 1, 1);      /* 7 x 1 */
    s[n++].d = DESC2(2, 5, 6, 3, 9, 3, 3, 0, 1, 1);        /* one output row: F(1, 3) along it, direct */
    s[n++].d = desc3(1, 40, 40, V3(19, 17, 23), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n++].d = desc3(2, 5, 6, V3(5, 13, 11), V3(1, 3, 3), V3(0, 1, 1), V3(0, 1, 1));
    s[n++].d = desc3(3, 4, 3, V3(11, 7, 13), V3(5, 3, 1), V3(2, 0, 0), V3(1, 1, 0));
    s[n].d = desc3(1, 1, 8, V3(17, 16, 15), V3(4, 4, 4), V3(0, 0, 0), V3(0, 0, 0)); /* c = 1: ZNNi's first layer */
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(4, 8, 1, V3(9, 10, 11), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));   /* k = 1 */
    s[n++].d = desc3(2, 16, 24, V3(8, 8, 8), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n++].d = desc3(1, 3, 5, V3(13, 7, 5), V3(7, 3, 2), V3(3, 1, 0), V3(0, 2, 1));
    /* the volume transforms' bricks: rows of 69 tiles in runs of 32 (the last of 5) over two
     * tiles along the depth; a whole plane of 18 rows of 4 tiles in one brick (every pass), with
     * a flipped kernel; and 19 rows of 33 tiles in bricks of 3 rows, the last of one */
    s[n++].d = desc3(1, 2, 3, V3(6, 11, 275), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n].d = desc3(2, 3, 2, V3(5, 90, 14), V3(3, 2, 3), V3(1, 0, 2), V3(0, 1, 1));
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(1, 2, 3, V3(4, 74, 130), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    /* accgrad's 6 x 5 x 5 taps a tile: its output kernel makes them plane by plane */
    s[n++].d = desc3(2, 3, 2, V3(9, 9, 10), V3(6, 5, 5), V3(1, 0, 2), V3(0, 1, 1));
    /* the generated GEMM's blocks that cover 65 to 127 columns by the multiple of 16 above (70 and
     * 66 in 80, 100 in 112), the columns past the matrix never stored */
    s[n++].d = desc3(2, 66, 70, V3(10, 20, 26), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n++].d = DESC2(3, 70, 100, 40, 44, 3, 3, 1, 1, 1);
    return n;
}

/* A random layer (fixed seed, so failures reproduce): odd sizes, any padding, dilation 2 now
 * and then, stride 2 now and then where `strided`. */
static void random_layer(unsigned *st, convgen_conv_desc *d, unsigned max_channels, unsigned max_kernel,
                         unsigned max_extra, bool strided)
{
    *d = (convgen_conv_desc){.rank = 2, .n = draw(st, 1, 4), .c = draw(st, 1, max_channels),
                             .k = draw(st, 1, max_channels)};
    for (int i = 0; i < 2; ++i) {
        d->kernel[i] = draw(st, 1, max_kernel);
        d->dilation[i] = draw(st, 1, 4) == 4 ? 2 : 1;
        d->stride[i] = strided && draw(st, 1, 3) == 3 ? 2 : 1;
        d->pad_before[i] = draw(st, 0, (unsigned)d->kernel[i] / 2 + 1);
        d->pad_after[i] = draw(st, 0, (unsigned)d->kernel[i] / 2);
        int64_t span = d->dilation[i] * (d->kernel[i] - 1) + 1;
        d->in[i] = span + draw(st, 0, max_extra);
    }
    d->mode = draw(st, 0, 3) == 0 ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
}

/* Direct: kernels up to 7, channels past one tile, strides. */
static void random_shape(unsigned *st, convgen_conv_desc *d) { random_layer(st, d, 150, 7, 16, true); }
/* FFT algorithms: stride 1, kernels up to 13. */
static void random_fft_shape(unsigned *st, convgen_conv_desc *d) { random_layer(st, d, 40, 13, 24, false); }
/* Winograd: stride 1, no dilation, kernels up to 7. */
static void random_winograd_shape(unsigned *st, convgen_conv_desc *d)
{
    random_layer(st, d, 40, 7, 24, false);
    d->dilation[0] = d->dilation[1] = 1;
}
/* winograd-fused: the same with kernels 2 to 5 and channels past one block's 8 and 32. */
static void random_winograd_fused_shape(unsigned *st, convgen_conv_desc *d)
{
    random_layer(st, d, 70, 5, 24, false);
    for (int i = 0; i < 2; ++i) {
        d->dilation[i] = 1;
        d->kernel[i] = d->kernel[i] < 2 ? 2 : d->kernel[i];
        d->in[i] = d->in[i] < d->kernel[i] ? d->kernel[i] : d->in[i];
    }
}

/* winograd-fused's edge cases: winograd's handpicked shapes that it takes (ranks 2 and 3, kernels
 * 2 to 5 across the plane: one with one output row, thirteen 3-D ones, kernels 1 to 7 deep, a
 * c = 1 convolution, k = 1, a volume 275 wide), and two 3-D ones of its own: channels that leave
 * each depth tap's last chunk of 8 part full, with padding on one side only, and a 2 x 5 x 5
 * kernel in convolution mode; and two that fill an H100 or H200 with sm_90's cluster kernel
 * (generator/winograd/winograd_fused.c, cluster_blocks), whose weights' transforms are blocked
 * and padded: F(4x4, 3x3) with a last chunk of 4 channels and 4 output channels past two blocks of
 * 64 (bprop: 76 outputs in 2 blocks), the same with 70 and 130 (no multiples of 4: chunks of 12
 * and blocks of 64 both part full), F(2x2, 5x5) at 64 channels, and a 3-D layer of 70 and 66
 * channels (its depth taps' chunks); and 8 x 8 tiles on clusters of 8 (`form` checks which on
 * sm_90), 64 outputs a block (chunks of 16, two loaders a channel): F(6x6, 3x3) fixed on the 70 x
 * 130 layer and across the 3-D one's planes, and F(4x4, 5x5), the default of 5 x 5 kernels there,
 * on 130 x 130; 128 outputs a block (chunks of 8, a channel a block), outputs padded to 128 and
 * data channels in a last chunk of 4: F(4x4, 5x5) in convolution mode, F(6x6, 3x3) across a 3-D
 * layer's planes, F(4x4, 5x5), F(6x6, 3x3) on 200 outputs (two blocks of 128; bprop 64 a block),
 * and F(6x6, 3x3) fixed in 2-D, 58 wide (rows of three float2 stores, the last tile's last ones
 * past y's width). */
static int handpicked_winograd_fused(shape *s)
{
    shape all[WINOGRAD_SHAPES] = {0}; /* every field but .d stays zero: gemm, out_shift */
    int n = 0, count = handpicked_winograd(all);
    for (int i = 0; i < count; ++i) {
        const convgen_conv_desc *d = &all[i].d;
        int plane = d->rank - 2;
        if (d->rank >= 2 && d->kernel[plane] >= 2 && d->kernel[plane] <= 5 && d->kernel[plane + 1] >= 2 &&
            d->kernel[plane + 1] <= 5)
            s[n++] = all[i];
    }
    s[n++].d = desc3(2, 13, 36, V3(7, 12, 14), V3(3, 3, 3), V3(2, 0, 1), V3(0, 2, 1));
    s[n].d = desc3(1, 9, 40, V3(6, 17, 11), V3(2, 5, 5), V3(1, 2, 2), V3(0, 2, 2));
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = DESC2(12, 76, 132, 30, 30, 3, 3, 1, 1, 1);
    /* 8 x 8 tiles on sm_90's clusters of 8 (skipped before sm_90, where a fixed one is refused), 64
     * outputs a block: F(6x6, 3x3) fixed, in 2-D and across a 3-D layer's planes, and F(4x4, 5x5),
     * the default of a 5 x 5 kernel there */
    static const char wide[] = "32 tiles x 128 output channels", narrow[] = "32 tiles x 64 output channels";
    s[n].d = DESC2(12, 70, 130, 30, 30, 3, 3, 1, 1, 1);
    s[n].form[0] = s[n].form[1] = narrow, s[n++].m = 6;
    s[n].d = desc3(3, 70, 66, V3(4, 32, 32), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n].form[0] = s[n].form[1] = narrow, s[n++].m = 6;
    s[n].d = DESC2(3, 130, 130, 32, 32, 5, 5, 2, 1, 1);
    s[n].form[0] = s[n].form[1] = narrow, n++;
    /* 128 outputs a block: enough tiles that clusters of 8 of them fill an H200 */
    s[n].d = DESC2(12, 66, 68, 40, 40, 5, 5, 2, 1, 1);
    s[n].d.mode = CONVGEN_CONVOLUTION, s[n].form[0] = s[n].form[1] = wide, n++;
    s[n].d = desc3(2, 66, 68, V3(4, 50, 50), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n].form[0] = s[n].form[1] = wide, s[n++].m = 6;
    s[n].d = DESC2(3, 68, 72, 60, 60, 5, 5, 2, 1, 1);
    s[n].form[0] = s[n].form[1] = wide, n++;
    s[n].d = DESC2(6, 68, 200, 40, 40, 3, 3, 1, 1, 1);
    s[n].form[0] = wide, s[n].form[1] = narrow, s[n++].m = 6;
    s[n++].d = DESC2(12, 70, 130, 30, 30, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(10, 64, 64, 24, 24, 5, 5, 2, 1, 1); /* this and the next two: y shifted too (WINOGRAD_FUSED_SHIFTED) */
    s[n++].d = desc3(3, 70, 66, V3(4, 32, 32), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n].d = DESC2(6, 68, 72, 58, 58, 3, 3, 1, 1, 1);
    s[n].form[0] = s[n].form[1] = wide, s[n++].m = 6;
    return n;
}

static void name_shape(shape *s)
{
    const convgen_conv_desc *d = &s->d;
    int at = snprintf(s->name, sizeof s->name, "n%lld c%lld k%lld in", (long long)d->n, (long long)d->c, (long long)d->k);
    for (int i = 0; i < d->rank; ++i)
        at += snprintf(s->name + at, sizeof s->name - (size_t)at, "%s%lld", i ? "x" : "", (long long)d->in[i]);
    at += snprintf(s->name + at, sizeof s->name - (size_t)at, " ker");
    for (int i = 0; i < d->rank; ++i)
        at += snprintf(s->name + at, sizeof s->name - (size_t)at, "%s%lld", i ? "x" : "", (long long)d->kernel[i]);
    at += snprintf(s->name + at, sizeof s->name - (size_t)at, " pad %lld+%lld str %lld dil %lld%s",
                   (long long)d->pad_before[0], (long long)d->pad_after[0], (long long)(d->stride[0] ? d->stride[0] : 1),
                   (long long)(d->dilation[0] ? d->dilation[0] : 1), d->mode ? " conv" : "");
    if (s->m)
        snprintf(s->name + at, sizeof s->name - (size_t)at, " m %d", s->m);
}

/* The shape's plan options: its GEMM and its tile across the plane. */
static convgen_plan_options shape_options(const shape *s)
{
    convgen_plan_options o = {.gemm = s->gemm, .weights = s->weights};
    for (int d = s->d.rank - 2; s->m && d < s->d.rank; ++d)
        o.winograd_m[d] = s->m;
    return o;
}

/* The context a shape's plans are made in: the device's, or one planning for FEW_SMS of its
 * multiprocessors where the shape asks (NULL, with the reason printed, where that cannot open). */
static convgen_context *shape_ctx(const shape *s)
{
    if (!s->few_sms || !ctx)
        return ctx;
    if (!few_sms_ctx && convgen_context_create(&(convgen_context_options){.sm_count = FEW_SMS}, &few_sms_ctx) !=
                            CONVGEN_SUCCESS)
        fail_msg("a context for %d multiprocessors: %s", FEW_SMS, convgen_last_error());
    return few_sms_ctx;
}

/* A workspace limit one byte below what the plan needs unlimited, so that it sub-batches; where
 * the planner fits that limit another way (a form of less workspace: a tensor-core accgrad's fewer
 * runs of tiles), 90%, 80% .. 50% of that need, until the plan sub-batches (or no plan fits). */
static convgen_plan_options tight_options(const shape *s, convgen_pass pass)
{
    convgen_plan *plan;
    convgen_plan_options o = shape_options(s);
    if (convgen_plan_conv_ex(shape_ctx(s), &s->d, pass, s->algo, &o, &plan) != CONVGEN_SUCCESS)
        fail_msg("%s %s: %s", s->name, convgen_pass_name(pass), convgen_last_error());
    size_t need;
    convgen_plan_workspace_size(plan, &need);
    convgen_plan_destroy(plan);
    if (need < 16)
        fail_msg("%s %s: %zu bytes of workspace: nothing a limit could cut", s->name, convgen_pass_name(pass), need);
    bool cut = false;
    for (int tenths = 10; !cut && tenths >= 5; --tenths) {
        o.workspace_limit = tenths == 10 ? need - 1 : need / 10 * (size_t)tenths;
        convgen_status st = convgen_plan_conv_ex(shape_ctx(s), &s->d, pass, s->algo, &o, &plan);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s %s under %zu bytes (%zu unlimited): %s", s->name, convgen_pass_name(pass), o.workspace_limit,
                     need, convgen_last_error());
        /* The layer kernels' headers say how the batch is cut; the fft algorithms' FFT kernels,
         * generated as plain batched FFTs, do not. */
        for (int i = 0; i < convgen_plan_kernel_count(plan); ++i)
            cut = cut || strstr(convgen_plan_source(plan, i), "sub-batches:");
        convgen_plan_destroy(plan);
    }
    if (!cut)
        fail_msg("%s %s: no sub-batches under %zu bytes (%zu unlimited)", s->name, convgen_pass_name(pass),
                 o.workspace_limit, need);
    return o;
}

static bool dilated(const convgen_conv_desc *d)
{
    for (int i = 0; i < d->rank; ++i)
        if (d->dilation[i] > 1)
            return true;
    return false;
}

/* Whether a kernel of the shape's plan for `pass` holds `text`. */
static bool plan_holds(const shape *s, convgen_pass pass, const char *text)
{
    convgen_plan *plan;
    convgen_plan_options o = shape_options(s);
    if (convgen_plan_conv_ex(shape_ctx(s), &s->d, pass, s->algo, &o, &plan) != CONVGEN_SUCCESS)
        fail_msg("%s %s: %s", s->name, convgen_pass_name(pass), convgen_last_error());
    bool found = false;
    for (int i = 0; i < convgen_plan_kernel_count(plan); ++i)
        found = found || strstr(convgen_plan_source(plan, i), text);
    convgen_plan_destroy(plan);
    return found;
}

/* Whether direct's tensor-core form takes the shape's pass (fprop, stride-1 bprop, up to 32 taps;
 * accgrad up to 9);
 * where not, it says why (the refusal the CPU test checks). */
static bool direct_tensor_takes(const shape *s, convgen_pass pass)
{
    cg_problem p;
    direct_tc_spec spec;
    if (cg_problem_init(&p, &s->d) == CONVGEN_SUCCESS && cg_direct_tc_spec(&p, pass, NULL, 0, &spec) == CONVGEN_SUCCESS)
        return true;
    print_message("%s: not the tensor-core form's: %s\n", convgen_pass_name(pass), convgen_last_error());
    return false;
}

/* Direct's tensor form on weights prepared once where its plan has them (the wgmma form's pieces,
 * sm_90: fprop and bprop wherever A comes from a patch; there it must have them). */
static void check_direct_prepared(const shape *s, convgen_pass pass)
{
    convgen_plan *plan;
    const convgen_plan_options options = shape_options(s), *o = &options;
    if (convgen_plan_conv_ex(shape_ctx(s), &s->d, pass, s->algo, o, &plan) != CONVGEN_SUCCESS)
        fail_msg("%s %s: %s", s->name, convgen_pass_name(pass), convgen_last_error());
    const bool prepares = convgen_plan_prepares_weights(plan), wgmma = plan_holds(s, pass, "wgmma.mma_async");
    convgen_plan_destroy(plan);
    if (wgmma != prepares)
        fail_msg("%s %s: the plan %s wgmma but %s weights to prepare", s->name, convgen_pass_name(pass),
                 wgmma ? "runs" : "does not run", prepares ? "has" : "has no");
    if (!prepares)
        return;
    cg_verify_result r;
    convgen_status st = cg_verify_prepared(shape_ctx(s), &s->d, pass, s->algo, o, 13 + (unsigned)pass, &r);
    if (st != CONVGEN_SUCCESS)
        fail_msg("%s %s prepared: %s: %s", s->name, convgen_pass_name(pass), convgen_status_string(st),
                 convgen_last_error());
    print_message("%-8s prepared weights: rel %.2e unwritten %lld\n", convgen_pass_name(pass), r.rel_error,
                  (long long)r.unwritten);
    if (r.unwritten || !(r.rel_error <= s->bound))
        fail_msg("%s %s prepared: relative error %.3e (bound %.0e), %lld elements never written", s->name,
                 convgen_pass_name(pass), r.rel_error, s->bound, (long long)r.unwritten);
    if (pass != CONVGEN_FPROP || s->d.epilogue)
        return;
    /* fprop with bias and ReLU through convgen_execute_prepared_bias */
    convgen_conv_desc biased = s->d;
    biased.epilogue = CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU;
    st = cg_verify_prepared(shape_ctx(s), &biased, pass, s->algo, o, 15, &r);
    if (st != CONVGEN_SUCCESS)
        fail_msg("%s fprop prepared, bias and ReLU: %s: %s", s->name, convgen_status_string(st), convgen_last_error());
    print_message("fprop    prepared weights, bias and ReLU: rel %.2e unwritten %lld\n", r.rel_error,
                  (long long)r.unwritten);
    if (r.unwritten || !(r.rel_error <= s->bound))
        fail_msg("%s fprop prepared, bias and ReLU: relative error %.3e (bound %.0e), %lld elements never written",
                 s->name, r.rel_error, s->bound, (long long)r.unwritten);
}

static void check_shape(void **state)
{
    const shape *s = *state;
    if (!ctx)
        skip();
    const int arch = atoi(convgen_context_arch(ctx) + strlen("sm_"));
    const bool fixed_8x8 = s->m && s->m + s->d.kernel[s->d.rank - 1] - 1 == 8 && s->algo == CONVGEN_ALGO_WINOGRAD_FUSED;
    if (fixed_8x8 && arch < 90) {
        print_message("%s: skipped: a fixed 8 x 8 tile runs on winograd-fused's cluster kernel only, which needs sm_90 "
                      "(this GPU: %s)\n", s->name, convgen_context_arch(ctx));
        skip();
    }
    /* after sm_90, a GPU whose shared memory or multiprocessors the cluster kernel does not fit
     * (e.g. 99 KiB a block) refuses the fixed tile, and says why; on sm_90 that is a failure */
    convgen_plan *probe;
    convgen_plan_options fixed = shape_options(s);
    for (int pass = 0; pass < 2 && fixed_8x8 && arch > 90; ++pass) {
        if (convgen_plan_conv_ex(ctx, &s->d, (convgen_pass)pass, s->algo, &fixed, &probe) != CONVGEN_SUCCESS) {
            print_message("%s: skipped: %s refuses the fixed 8 x 8 tile in %s: %s\n", s->name, convgen_context_arch(ctx),
                          convgen_pass_name((convgen_pass)pass), convgen_last_error());
            skip();
        }
        convgen_plan_destroy(probe);
    }
    /* the form a shape is here to test: on sm_90 (H100, H200) a failure where the plan is not it;
     * on a later GPU, whose shared memory or multiprocessors may make the planner choose otherwise,
     * a skip that says so */
    for (int pass = 0; pass < 3 && arch >= 90; ++pass)
        if (s->form[pass] && !plan_holds(s, (convgen_pass)pass, s->form[pass])) {
            if (arch > 90) {
                print_message("%s: skipped: on %s its %s plan is not \"%s\", the form it is here to test\n", s->name,
                              convgen_context_arch(ctx), convgen_pass_name((convgen_pass)pass), s->form[pass]);
                skip();
            }
            fail_msg("%s %s: on %s its plan does not hold \"%s\", the form it is here to test", s->name,
                     convgen_pass_name((convgen_pass)pass), convgen_context_arch(ctx), s->form[pass]);
        }
    /* what a shifted output is there to test: fprop's rows stored as vectors where y is aligned
     * (winograd-fused's cluster kernel), at the shape's tile */
    if (s->out_shift && !plan_holds(s, CONVGEN_FPROP, "const bool aligned = ((size_t)out &")) {
        print_message("%s: skipped: on this GPU its plan stores no rows as vectors (winograd-fused's cluster kernel "
                      "needs sm_90 and clusters that fill the GPU), so a shifted y tests nothing new\n", s->name);
        skip();
    }
    for (int run = 0; run < 3 * (s->sub_batched ? 2 : 1); ++run) {
        int pass = run % 3;
        if (s->algo == CONVGEN_ALGO_FFT_FUSED && pass == CONVGEN_ACCGRAD) {
            print_message("accgrad: fft-fused has no accgrad kernel (fft-tiled's parts are its accgrad)\n");
            continue;
        }
        if (s->algo == CONVGEN_ALGO_WINOGRAD_FUSED && s->m + s->d.kernel[s->d.rank - 1] - 1 > 6 && pass == CONVGEN_ACCGRAD) {
            print_message("accgrad: winograd-fused's accgrad takes tiles of up to 6 x 6 (8 x 8 are fprop's and bprop's, "
                          "on the cluster kernel)\n");
            continue;
        }
        if (s->weights == CONVGEN_WEIGHTS_INSIDE && pass == CONVGEN_ACCGRAD) {
            print_message("accgrad: its second operand is dy: no weights to transform inside\n");
            continue;
        }
        if (s->algo == CONVGEN_ALGO_DIRECT && s->gemm == CONVGEN_GEMM_TENSOR && !direct_tensor_takes(s, (convgen_pass)pass))
            continue;
        if (s->algo == CONVGEN_ALGO_DIRECT_WINDOW && pass == CONVGEN_ACCGRAD) {
            print_message("accgrad: direct-window has none (direct's GEMM is its accgrad)\n");
            continue;
        }
        if (s->algo == CONVGEN_ALGO_DIRECT_WINDOW && pass == CONVGEN_BPROP && dilated(&s->d)) {
            print_message("bprop: direct-window's window bprop takes no dilation (its fprop does)\n");
            continue;
        }
        convgen_plan_options tight = run >= 3 ? tight_options(s, (convgen_pass)pass) : shape_options(s);
        if (run >= 3)
            print_message("sub-batched under %zu bytes of workspace:\n", tight.workspace_limit);
        cg_verify_result r;
        convgen_status st =
            cg_verify_shifted(shape_ctx(s), &s->d, (convgen_pass)pass, s->algo, &tight, 7 + (unsigned)pass, 0, s->out_shift, &r);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s %s: %s: %s", s->name, convgen_pass_name((convgen_pass)pass), convgen_status_string(st),
                     convgen_last_error());
        print_message("%-8s rel %.2e max-abs %.2e unwritten %lld (%lld elements)\n", convgen_pass_name((convgen_pass)pass),
                      r.rel_error, r.max_abs_error, (long long)r.unwritten, (long long)r.elems);
        assert_int_equal(r.checked, r.elems);
        if (r.unwritten)
            fail_msg("%s %s: %lld of %lld output elements were never written (still NaN poison)", s->name,
                     convgen_pass_name((convgen_pass)pass), (long long)r.unwritten, (long long)r.elems);
        if (!(r.rel_error <= s->bound))
            fail_msg("%s %s: relative error %.3e > %.0e", s->name, convgen_pass_name((convgen_pass)pass), r.rel_error,
                     s->bound);
        if (s->algo == CONVGEN_ALGO_DIRECT && s->gemm == CONVGEN_GEMM_TENSOR && run < 3)
            check_direct_prepared(s, (convgen_pass)pass);
    }
}

/* fprop and bprop on weights prepared once, two inputs each (cg_verify_prepared), the weights'
 * device copy poisoned after the preparation. */
static void check_prepared(void **state)
{
    const shape *s = *state;
    if (!ctx)
        skip();
    for (int pass = 0; pass < 2; ++pass) {
        cg_verify_result r;
        convgen_status st = cg_verify_prepared(ctx, &s->d, (convgen_pass)pass, s->algo, NULL, 11 + (unsigned)pass, &r);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s %s %s: %s: %s", convgen_algo_name(s->algo), s->name, convgen_pass_name((convgen_pass)pass),
                     convgen_status_string(st), convgen_last_error());
        print_message("%-9s %-8s rel %.2e unwritten %lld\n", convgen_algo_name(s->algo),
                      convgen_pass_name((convgen_pass)pass), r.rel_error, (long long)r.unwritten);
        if (r.unwritten)
            fail_msg("%s %s: %lld output elements never written", s->name, convgen_pass_name((convgen_pass)pass),
                     (long long)r.unwritten);
        if (!(r.rel_error <= s->bound))
            fail_msg("%s %s: relative error %.3e > %.0e", s->name, convgen_pass_name((convgen_pass)pass), r.rel_error,
                     s->bound);
    }
}

/* Winograd's accuracy per F(m, r): each tile fixed on a layer of realistic scale (64 channels,
 * data and weights uniform in [-1, 1]), all three passes (accgrad runs F(r, m)); the bound of
 * each is about 10x its worst measured pass (README, "Winograd accuracy"), tight enough that
 * TF32 (2e-4 and more) or a lost term would fail it. */
typedef struct wino_case {
    char name[64];
    int m, r, rank;
    double bound;
} wino_case;

/* 3-D: F(m x m x m, r x r x r) on 2 x 64 -> 64 volumes of 18^3. */
#define WINOGRAD_TILES 9
static wino_case wino_cases[WINOGRAD_TILES] = {
    {.m = 2, .r = 3, .rank = 2, .bound = 1e-5}, {.m = 4, .r = 3, .rank = 2, .bound = 4e-5},
    {.m = 6, .r = 3, .rank = 2, .bound = 5e-5}, {.m = 2, .r = 5, .rank = 2, .bound = 8e-5},
    {.m = 4, .r = 5, .rank = 2, .bound = 7e-5}, {.m = 2, .r = 7, .rank = 2, .bound = 2e-4},
    {.m = 2, .r = 3, .rank = 3, .bound = 1.5e-5}, {.m = 4, .r = 3, .rank = 3, .bound = 1e-4},
    {.m = 2, .r = 5, .rank = 3, .bound = 3e-4}};

static void check_winograd_accuracy(void **state)
{
    const wino_case *w = *state;
    if (!ctx)
        skip();
    int64_t taps = w->r, pad = w->r / 2;
    convgen_conv_desc d = w->rank == 3 ? desc3(2, 64, 64, V3(18, 18, 18), V3(taps, taps, taps), V3(pad, pad, pad), V3(pad, pad, pad))
                                       : DESC2(8, 64, 64, 26, 26, w->r, w->r, w->r / 2, 1, 1);
    convgen_plan_options o = {.winograd_m = {w->m, w->m, w->rank == 3 ? w->m : 0}};
    for (int pass = 0; pass < 3; ++pass) {
        cg_verify_result r;
        convgen_status st = cg_verify(ctx, &d, (convgen_pass)pass, CONVGEN_ALGO_WINOGRAD, &o, 3 + (unsigned)pass, 0, &r);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s %s: %s: %s", w->name, convgen_pass_name((convgen_pass)pass), convgen_status_string(st),
                     convgen_last_error());
        print_message("winograd accuracy %-8s %-7s rel %.2e max-abs %.2e\n", w->name, convgen_pass_name((convgen_pass)pass),
                      r.rel_error, r.max_abs_error);
        if (r.unwritten || !(r.rel_error <= w->bound))
            fail_msg("%s %s: relative error %.3e > %.0e (%lld unwritten)", w->name, convgen_pass_name((convgen_pass)pass),
                     r.rel_error, w->bound, (long long)r.unwritten);
    }
}

static void make_accuracy_tests(struct CMUnitTest *tests)
{
    for (int i = 0; i < WINOGRAD_TILES; ++i) {
        wino_case *w = &wino_cases[i];
        if (w->rank == 3)
            snprintf(w->name, sizeof w->name, "F(%d,%d)^3", w->m, w->r);
        else
            snprintf(w->name, sizeof w->name, "F(%d,%d)", w->m, w->r);
        tests[i] = (struct CMUnitTest){.name = w->name, .test_func = check_winograd_accuracy, .initial_state = w};
    }
}

static int open_device(void **state)
{
    (void)state;
    convgen_status s = convgen_context_create(NULL, &ctx);
    if (s != CONVGEN_SUCCESS) {
        ctx = NULL;
        snprintf(no_device_reason, sizeof no_device_reason, "%s", convgen_last_error());
        printf("GPU tests SKIPPED: %s\n", no_device_reason);
    } else {
        printf("GPU tests on %s (%s)\n", convgen_context_device_name(ctx), convgen_context_arch(ctx));
    }
    return 0;
}

static int close_device(void **state)
{
    (void)state;
    convgen_context_destroy(few_sms_ctx);
    convgen_context_destroy(ctx);
    few_sms_ctx = ctx = NULL;
    return 0;
}

/* Fills the first `count` shapes (handpicked ones, then random ones) and their tests. */
/* ---- every registered planner ---- */

#define REGISTRY_MAX 16

/* One registered planner (the state) on direct's handpicked edge cases, every pass: the cases
 * it refuses must be the table's (checked on the CPU, so here too without a GPU); those it
 * takes against the reference, to the FFT algorithms' bound. */
static void check_registry(void **state)
{
    const cg_planner *planner = *state;
    shape s[DIRECT_SHAPES];
    int count = handpicked(s), taken = 0;
    bool takes[DIRECT_SHAPES][3];
    for (int i = 0; i < count; ++i) {
        name_shape(&s[i]);
        cg_problem p;
        assert_int_equal(cg_problem_init(&p, &s[i].d), CONVGEN_SUCCESS);
        for (int pass = 0; pass < 3; ++pass) {
            cg_generated g;
            convgen_status st = cg_generate(&p, (convgen_pass)pass, planner->algo, NULL, &g);
            takes[i][pass] = planner_takes(planner, &p, (convgen_pass)pass, st, s[i].name);
            taken += takes[i][pass];
            if (takes[i][pass])
                cg_generated_free(&g);
        }
    }
    print_message("%s: %d of %d cases taken\n", planner->name, taken, 3 * count);
    if (!ctx)
        skip();
    for (int i = 0; i < count; ++i)
        for (int pass = 0; pass < 3; ++pass) {
            if (!takes[i][pass])
                continue;
            cg_verify_result r;
            convgen_status st =
                cg_verify(ctx, &s[i].d, (convgen_pass)pass, planner->algo, NULL, 13 + (unsigned)pass, 0, &r);
            if (st != CONVGEN_SUCCESS)
                fail_msg("%s %s %s: %s: %s", planner->name, s[i].name, convgen_pass_name((convgen_pass)pass),
                         convgen_status_string(st), convgen_last_error());
            print_message("%-14s %-8s %s: rel %.2e unwritten %lld\n", planner->name,
                          convgen_pass_name((convgen_pass)pass), s[i].name, r.rel_error, (long long)r.unwritten);
            assert_int_equal(r.checked, r.elems);
            if (r.unwritten || !(r.rel_error <= 1e-4))
                fail_msg("%s %s %s: relative error %.3e (bound 1e-4), %lld of %lld elements never written",
                         planner->name, s[i].name, convgen_pass_name((convgen_pass)pass), r.rel_error,
                         (long long)r.unwritten, (long long)r.elems);
        }
}

/* fprop of a layer with an epilogue (bias and ReLU, or one of them), which the algorithm's last
 * store applies: against the float64 reference with it, sub-batched too where the shape is,
 * and on prepared weights where the plan has them. */
static void check_epilogue(void **state)
{
    const shape *s = *state;
    if (!ctx)
        skip();
    for (int run = 0; run < (s->sub_batched ? 2 : 1); ++run) {
        convgen_plan_options o =
            run ? tight_options(s, CONVGEN_FPROP) : (convgen_plan_options){.gemm = s->gemm, .weights = s->weights};
        cg_verify_result r;
        convgen_status st = cg_verify(ctx, &s->d, CONVGEN_FPROP, s->algo, &o, 13, 0, &r);
        if (st != CONVGEN_SUCCESS)
            fail_msg("%s: %s: %s", s->name, convgen_status_string(st), convgen_last_error());
        print_message("%s%s: rel %.2e unwritten %lld (%lld elements)\n", run ? "sub-batched " : "", r.ran, r.rel_error,
                      (long long)r.unwritten, (long long)r.elems);
        assert_int_equal(r.checked, r.elems);
        if (r.unwritten || !(r.rel_error <= s->bound))
            fail_msg("%s: relative error %.3e (bound %.0e), %lld of %lld elements never written", s->name, r.rel_error,
                     s->bound, (long long)r.unwritten, (long long)r.elems);
    }
    convgen_plan *plan;
    if (s->algo == CONVGEN_ALGO_AUTO || convgen_plan_conv(ctx, &s->d, CONVGEN_FPROP, s->algo, &plan) != CONVGEN_SUCCESS)
        return;
    bool prepares = convgen_plan_prepares_weights(plan);
    convgen_plan_destroy(plan);
    cg_verify_result r;
    if (prepares && cg_verify_prepared(ctx, &s->d, CONVGEN_FPROP, s->algo, NULL, 17, &r) != CONVGEN_SUCCESS)
        fail_msg("%s prepared: %s", s->name, convgen_last_error());
    if (prepares)
        print_message("prepared weights: rel %.2e unwritten %lld\n", r.rel_error, (long long)r.unwritten);
    if (prepares && (r.unwritten || !(r.rel_error <= s->bound)))
        fail_msg("%s prepared: relative error %.3e (bound %.0e), %lld elements never written", s->name, r.rel_error,
                 s->bound, (long long)r.unwritten);
}

/* EPILOGUE_PER_ALGO shapes of each algorithm's group spread over it (handpicked and random),
 * the epilogue bias and ReLU, bias alone or ReLU alone in turn. */
static void make_epilogue_tests(const shape *const *groups, const int *counts, int algos, shape *out,
                                struct CMUnitTest *tests)
{
    static const unsigned epilogues[3] = {CONVGEN_EPILOGUE_BIAS | CONVGEN_EPILOGUE_RELU, CONVGEN_EPILOGUE_BIAS,
                                          CONVGEN_EPILOGUE_RELU};
    static const char *const words[3] = {"bias relu", "bias", "relu"};
    for (int a = 0; a < algos; ++a)
        for (int i = 0; i < EPILOGUE_PER_ALGO; ++i) {
            int j = a * EPILOGUE_PER_ALGO + i;
            out[j] = groups[a][i * counts[a] / EPILOGUE_PER_ALGO];
            out[j].d.epilogue = epilogues[(a + i) % 3];
            char name[sizeof out[j].name];
            snprintf(name, sizeof name, "%s %s: %.120s", convgen_algo_name(out[j].algo), words[(a + i) % 3], out[j].name);
            memcpy(out[j].name, name, sizeof name);
            tests[j] = (struct CMUnitTest){.name = out[j].name, .test_func = check_epilogue, .initial_state = &out[j]};
        }
}

static void make_tests(shape *s, int count, int handpicked_count, void (*random)(unsigned *, convgen_conv_desc *),
                       convgen_algo algo, double bound, struct CMUnitTest *tests)
{
    unsigned seed = 20261123u;
    for (int i = handpicked_count; i < count; ++i)
        random(&seed, &s[i].d);
    for (int i = 0; i < count; ++i) {
        s[i].algo = algo, s[i].bound = bound;
        /* One shape in three with a batch to cut, for the algorithms that sub-batch. */
        const cg_planner *planner = cg_planner_of(algo);
        s[i].sub_batched = planner && (planner->flags & CG_PLANNER_SUB_BATCHES) && s[i].d.n > 1 && i % 3 == 0;
        name_shape(&s[i]);
        tests[i] = (struct CMUnitTest){.name = s[i].name, .test_func = check_shape, .initial_state = &s[i]};
    }
}

/* winograd's products on the tensor cores (gemm=tensor, generator/gemm_tc.c), shapes whose
 * fprop and bprop GEMMs it takes (an even number of tiles: C in 8-byte pairs), each a case of the
 * kernel and of the transforms that lay out its pieces: channels in whole steps of 16 and not
 * (13, 21, 36: zeros written past the sum), a partial block of 128 tiles, outputs in blocks of 152
 * and 176 (300 and 520: two and three blocks), 5 x 5, no padding, convolution mode, and 3-D (the
 * data's tiles as stored, transposed by the kernel; 10 channels: a sum not in 16-byte runs).
 * accgrad sums over the tiles, the channels its rows (13 and 21: partial blocks), and over the
 * sub-batches of the shapes that cut them. On sm_90 each plan must hold the wgmma kernel (3-D
 * accgrad: cuBLAS's); elsewhere gemm=tensor plans as chosen, and they run so. */
static int handpicked_tensor(shape *s)
{
    int n = 0;
    const char *wgmma = "wgmma.mma_async";
    s[n++].d = DESC2(4, 16, 24, 28, 28, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(8, 36, 40, 20, 20, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(4, 64, 300, 14, 14, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(8, 8, 520, 9, 9, 3, 3, 1, 1, 1); /* 32 tiles: 16 a sub-batch, whole steps of the sum */
    s[n++].d = DESC2(4, 32, 32, 32, 32, 5, 5, 2, 1, 1);
    s[n++].d = DESC2(8, 64, 64, 15, 17, 3, 3, 0, 1, 1);
    s[n].d = DESC2(4, 12, 20, 18, 18, 3, 3, 1, 1, 1), s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 4, .c = 16, .k = 20, .in = {10, 12, 12}, .kernel = {3, 3, 3},
                                   .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}, .stride = {1, 1, 1},
                                   .dilation = {1, 1, 1}};
    s[n++].d = DESC2(2, 13, 21, 19, 19, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(6, 21, 130, 11, 11, 3, 3, 1, 1, 1);
    s[n++].d = (convgen_conv_desc){.rank = 3, .n = 4, .c = 10, .k = 12, .in = {9, 9, 9}, .kernel = {3, 3, 3},
                                   .pad_before = {1, 1, 1}, .pad_after = {1, 1, 1}, .stride = {1, 1, 1},
                                   .dilation = {1, 1, 1}};
    /* sums past WINO_TC_RUN channels, cut into two runs that the output transform adds: fprop's
     * over c, then bprop's over k */
    s[n++].d = DESC2(2, 2100, 24, 10, 10, 3, 3, 1, 1, 1);
    s[n++].d = DESC2(2, 24, 2100, 10, 10, 3, 3, 1, 1, 1);
    for (int i = 0; i < n; ++i) /* accgrad too, but over a 3-D layer's bricks (cuBLAS's) */
        s[i].gemm = CONVGEN_GEMM_TENSOR, s[i].form[0] = s[i].form[1] = wgmma, s[i].form[2] = s[i].d.rank < 3 ? wgmma : NULL;
    return n;
}

/* cufft's handpicked shapes of rank lo to hi (fft-fused's tiles are 2-D). */
static int handpicked_fft_ranks(shape *s, int lo, int hi)
{
    shape all[CUFFT_SHAPES] = {0}; /* every field but .d stays zero: gemm, out_shift */
    int n = 0, count = handpicked_fft(all);
    for (int i = 0; i < count; ++i)
        if (all[i].d.rank >= lo && all[i].d.rank <= hi)
            s[n++] = all[i];
    return n;
}

/* fft-tiled's: cufft's handpicked shapes of every rank, and 3-D ones whose volumes take several
 * overlap-save tiles along each dimension (convgen's 3-D transforms of the tiles): a 7^3 kernel,
 * kernels that differ per dimension with padding on one side, convolution mode, one input
 * channel; and a 22-tap kernel whose 66-point tiles are past convgen's 3-D transforms (cuFFT's). */
static int handpicked_tiled(shape *s)
{
    int n = handpicked_fft_ranks(s, 1, 3);
    s[n++].d = desc3(1, 3, 4, V3(23, 20, 21), V3(7, 7, 7), V3(0, 0, 0), V3(0, 0, 0));
    s[n].d = desc3(2, 2, 3, V3(19, 26, 17), V3(5, 3, 4), V3(2, 1, 0), V3(1, 1, 3));
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(1, 1, 5, V3(30, 9, 33), V3(9, 1, 3), V3(4, 0, 1), V3(4, 0, 1));
    s[n++].d = desc3(1, 1, 2, V3(70, 12, 9), V3(22, 3, 3), V3(0, 1, 1), V3(0, 1, 1));
    return n;
}

/* fft-fused's: cufft's handpicked shapes of rank 2 and 3, and volumes of several 16^3 tiles
 * along each dimension: ZNNi's first layer in small (one input channel, 4^3, 13 valid points a
 * tile), a rectangular one with kernels that differ per dimension, padding on one side and
 * convolution mode, input channels past a block's pass and output channels past its group,
 * and a 9^3 kernel (8 valid points a tile). */
static int handpicked_fused(shape *s)
{
    int n = handpicked_fft_ranks(s, 2, 3);
    s[n++].d = desc3(2, 1, 6, V3(31, 28, 29), V3(4, 4, 4), V3(0, 0, 0), V3(0, 0, 0));
    s[n].d = desc3(1, 5, 3, V3(27, 15, 33), V3(5, 1, 3), V3(2, 0, 1), V3(1, 0, 2));
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(3, 19, 21, V3(14, 17, 16), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n++].d = desc3(1, 2, 3, V3(25, 19, 23), V3(9, 9, 9), V3(4, 0, 4), V3(4, 0, 4));
    return n;
}

/* fft's: cufft's handpicked shapes of every rank, and 3-D ones on one cubic basis of convgen's 3-D
 * transforms: a rectangular volume with kernels that differ per dimension, padding on one side
 * and convolution mode; a prime depth with one input channel; 30^3 with batch 3 (a 35-point basis);
 * the products' blocks 80 rows high (65 to 80 rows: output maps in fprop, input maps in bprop and
 * accgrad, where the columns take a block of 32: 17 images or more, or accgrad's output maps): 70
 * and 72 rows of them; 35 images, a second block of 32 columns mostly past them; accgrad summing 8
 * images (steps of 4, op(B)'s copies 5 rows apart past a step: the copy loop). */
static int handpicked_fft3(shape *s)
{
    int n = handpicked_fft_ranks(s, 1, 3);
    s[n].d = desc3(2, 3, 4, V3(13, 17, 11), V3(5, 3, 4), V3(2, 1, 0), V3(1, 1, 3));
    s[n++].d.mode = CONVGEN_CONVOLUTION;
    s[n++].d = desc3(1, 1, 6, V3(23, 9, 20), V3(7, 1, 3), V3(0, 0, 1), V3(0, 0, 1));
    s[n++].d = desc3(3, 5, 2, V3(30, 30, 30), V3(3, 3, 3), V3(1, 1, 1), V3(1, 1, 1));
    s[n++].d = desc3(20, 72, 70, V3(9, 10, 7), V3(3, 3, 2), V3(0, 1, 0), V3(0, 0, 1));
    s[n++].d = desc3(35, 80, 80, V3(7, 7, 7), V3(3, 3, 3), V3(0, 0, 0), V3(0, 0, 0));
    s[n++].d = desc3(8, 66, 75, V3(6, 7, 5), V3(3, 3, 3), V3(0, 0, 0), V3(0, 0, 0));
    return n;
}

/* What AUTO chose, on a shape where every family applies: it measured, the winner ran and is
 * the fastest of the candidates that ran, every candidate that ran agreed with the first one
 * (direct), each stayed under the workspace limit; planning again takes the choice from
 * wisdom, timing nothing, and the plan checks against the float64 reference. */
static void check_auto_choice(void **state)
{
    const shape *s = *state;
    if (!ctx)
        skip();
    for (int pass = 0; pass < 3; ++pass) {
        convgen_plan_options o = {.workspace_limit = (size_t)64 << 20};
        convgen_plan *plan;
        convgen_choice ch, again;
        convgen_wisdom_forget();
        if (convgen_plan_conv_ex(ctx, &s->d, (convgen_pass)pass, CONVGEN_ALGO_AUTO, &o, &plan) != CONVGEN_SUCCESS)
            fail_msg("%s %s: %s", s->name, convgen_pass_name((convgen_pass)pass), convgen_last_error());
        assert_int_equal(convgen_plan_choice(plan, &ch), CONVGEN_SUCCESS);
        assert_int_equal(ch.chosen_by, CONVGEN_CHOSEN_BY_MEASUREMENT);
        assert_true(ch.candidate_count >= 4 && ch.winner >= 0 && ch.winner < ch.candidate_count);
        int ran = 0;
        for (int i = 0; i < ch.candidate_count; ++i) {
            convgen_candidate c;
            assert_int_equal(convgen_plan_candidate(plan, i, &c), CONVGEN_SUCCESS);
            if (i == 0)
                assert_int_equal(c.algo, CONVGEN_ALGO_DIRECT);
            if (c.status != CONVGEN_SUCCESS)
                continue;
            ++ran;
            if (!(c.ms > 0 && c.ms >= ch.ms && c.difference >= 0 && c.difference <= 1e-4 &&
                  c.workspace_bytes <= o.workspace_limit))
                fail_msg("%s %s: candidate %s: %.4f ms (winner %.4f), difference %.2e, workspace %zu", s->name,
                         convgen_pass_name((convgen_pass)pass), convgen_algo_name(c.algo), c.ms, ch.ms, c.difference,
                         c.workspace_bytes);
        }
        print_message("%-8s auto chose %s (%.4f ms) of %d candidates, %d ran\n", convgen_pass_name((convgen_pass)pass),
                      convgen_algo_name(ch.algo), ch.ms, ch.candidate_count, ran);
        assert_true(ran >= 3);
        convgen_plan_destroy(plan);
        assert_int_equal(convgen_plan_conv_ex(ctx, &s->d, (convgen_pass)pass, CONVGEN_ALGO_AUTO, &o, &plan),
                         CONVGEN_SUCCESS);
        assert_int_equal(convgen_plan_choice(plan, &again), CONVGEN_SUCCESS);
        assert_int_equal(again.chosen_by, CONVGEN_CHOSEN_BY_WISDOM);
        assert_int_equal(again.algo, ch.algo);
        assert_int_equal(again.options.gemm, ch.options.gemm);
        convgen_plan_destroy(plan);
        cg_verify_result r;
        assert_int_equal(cg_verify(ctx, &s->d, (convgen_pass)pass, CONVGEN_ALGO_AUTO, &o, 5, 0, &r), CONVGEN_SUCCESS);
        if (r.unwritten || !(r.rel_error <= 1e-4))
            fail_msg("%s %s: auto's %s: relative error %.2e, %lld unwritten", s->name,
                     convgen_pass_name((convgen_pass)pass), convgen_algo_name(ch.algo), r.rel_error,
                     (long long)r.unwritten);
    }
}

/* A candidate whose output is wrong is dropped and reported: winograd's output template
 * mutated (each output x 1.01, through CONVGEN_TEMPLATE_DIR), AUTO plans a 3x3 layer, and every
 * winograd candidate must fail its check against the first candidate while the others run. The
 * layer has 64 channels a side, so that the cost model rates every winograd candidate within
 * 2.5x of the fastest (effort MEASURE times them all; at 16 channels winograd-fused's estimate
 * fell to a quarter of winograd's and one tile went untimed, so the mutant was never run). */
static void check_auto_drops_wrong_candidates(void **state)
{
    (void)state;
    if (!ctx)
        skip();
    char dir[] = "/tmp/convgen-mutant-XXXXXX", path[256], cmd[1024];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/winograd/winograd.cu", dir); /* the override mirrors templates/ */
    snprintf(cmd, sizeof cmd, "mkdir '%s/winograd' && sed 's/= mine\\[lane + {{ 32 \\* q }}u\\];/= 1.01f * mine[lane + "
             "{{ 32 * q }}u];/' '%s/templates/winograd/winograd.cu' > '%s' && grep -q '1.01f' '%s'", dir, CONVGEN_SOURCE_DIR,
             path, path);
    assert_int_equal(system(cmd), 0);
    setenv("CONVGEN_TEMPLATE_DIR", dir, 1);
    convgen_wisdom_forget();
    const convgen_conv_desc d = DESC2(8, 64, 64, 20, 20, 3, 3, 1, 1, 1);
    convgen_plan *plan;
    convgen_status st = convgen_plan_conv(ctx, &d, CONVGEN_FPROP, CONVGEN_ALGO_AUTO, &plan);
    unsetenv("CONVGEN_TEMPLATE_DIR");
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    if (st != CONVGEN_SUCCESS)
        fail_msg("auto: %s", convgen_last_error());
    convgen_choice ch;
    assert_int_equal(convgen_plan_choice(plan, &ch), CONVGEN_SUCCESS);
    int dropped = 0, ran = 0;
    for (int i = 0; i < ch.candidate_count; ++i) {
        convgen_candidate c;
        convgen_plan_candidate(plan, i, &c);
        if (c.algo == CONVGEN_ALGO_WINOGRAD) {
            if (c.status != CONVGEN_ERROR_INTERNAL || !strstr(c.note, "differs") || !(c.difference > 5e-3))
                fail_msg("a mutated winograd candidate was not dropped: status %d, difference %.2e, note '%s'",
                         (int)c.status, c.difference, c.note);
            ++dropped;
        } else {
            ran += c.status == CONVGEN_SUCCESS;
        }
    }
    print_message("auto dropped %d mutated winograd candidates, chose %s of %d that ran\n", dropped,
                  convgen_algo_name(ch.algo), ran);
    assert_true(dropped >= 3); /* cuBLAS's GEMM, the generated one and the tensor cores' (on sm_90 a tile each) */
    assert_true(ran >= 4 && ch.algo != CONVGEN_ALGO_WINOGRAD);
    convgen_plan_destroy(plan);
    convgen_wisdom_forget();
}

/* The groups CONVGEN_TEST_GROUPS names (unset: every group), by name or by the algorithm's
 * name ("fft-tiled" for fft_tiled), separated by spaces or commas; false, with a message, for a
 * name that is no group. */
static bool select_groups(const char *const *names, int count, bool *selected)
{
    const char *only = getenv("CONVGEN_TEST_GROUPS");
    for (int i = 0; i < count; ++i)
        selected[i] = only == NULL;
    char token[32];
    for (const char *at = only; at && *at;) {
        size_t len = strcspn(at, " ,");
        if (len > 0 && len < sizeof token) {
            memcpy(token, at, len);
            token[len] = '\0';
            for (char *c = token; *c; ++c)
                *c = *c == '-' ? '_' : *c;
            bool known = false;
            for (int i = 0; i < count; ++i)
                if (strcmp(token, names[i]) == 0)
                    known = selected[i] = true;
            if (!known) {
                fprintf(stderr, "CONVGEN_TEST_GROUPS: '%s' is no group (direct, direct_tensor, direct_window, cufft, fft, fft_tiled, fft_fused, "
                                "winograd, winograd_fused, winograd_fused_inside, winograd_gemm, winograd_tensor, fft_cublas, fft_tensor, fft_tiled_gemm, prepared, accuracy, "
                                "auto, epilogue, registry)\n",
                        token);
                return false;
            }
        } else if (len > 0) {
            fprintf(stderr, "CONVGEN_TEST_GROUPS: a name of %zu characters is no group\n", len);
            return false;
        }
        at += len + (at[len] != '\0');
    }
    return true;
}

typedef struct test_group {
    const char *name;
    const struct CMUnitTest *tests;
    size_t count;
} test_group;

static int run_group(const test_group *g)
{
    char name[32];
    snprintf(name, sizeof name, "gpu_%s", g->name);
    return _cmocka_run_group_tests(name, g->tests, g->count, open_device, close_device);
}

/* Copies a child's log to stdout and says how its process ended: its failures, or 1 for a
 * crash (which the log shows as a test that never finished). */
static int finish_child(pid_t pid, FILE *log, const char *group)
{
    int status = 0, failed = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status)) {
        failed = 1;
        printf("gpu_%s: the group's process did not exit normally (status %d)\n", group, status);
    } else {
        failed = WEXITSTATUS(status);
    }
    char buf[4096];
    size_t n;
    rewind(log);
    while ((n = fread(buf, 1, sizeof buf, log)) > 0)
        fwrite(buf, 1, n, stdout);
    fclose(log);
    fflush(stdout);
    return failed;
}

/* Runs the selected groups in parallel processes, one each: the suite's time is mostly NVRTC
 * and the float64 reference, both on the CPU, so the groups overlap well on a GPU machine's
 * cores. Each child writes to a file of its own, which the parent prints in group order, so
 * the output reads as if the groups had run one after another. Nothing touches CUDA before the
 * fork; each child makes its own context. Where fork fails, the group runs here. */
#define MAX_GROUPS 24 /* run_groups' processes at most */
static int run_groups(const test_group *groups, int count, const bool *selected)
{
    pid_t pids[MAX_GROUPS];
    FILE *logs[MAX_GROUPS];
    int failed = 0;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < count && i < MAX_GROUPS; ++i) {
        pids[i] = -1;
        if (!selected[i])
            continue;
        logs[i] = tmpfile();
        pids[i] = logs[i] ? fork() : -1;
        if (pids[i] == 0) {
            dup2(fileno(logs[i]), STDOUT_FILENO);
            dup2(fileno(logs[i]), STDERR_FILENO);
            setvbuf(stdout, NULL, _IONBF, 0); /* stdout and stderr in the order written */
            int f = run_group(&groups[i]);
            _exit(f > 255 ? 255 : f);
        }
        if (pids[i] < 0) {
            if (logs[i])
                fclose(logs[i]);
            failed += run_group(&groups[i]);
        }
    }
    for (int i = 0; i < count && i < MAX_GROUPS; ++i)
        if (pids[i] > 0)
            failed += finish_child(pids[i], logs[i], groups[i].name);
    return failed;
}

/* winograd-fused's shapes again with the weights' transforms made inside its one-block kernel
 * (options.weights): those that kernel takes on any GPU, fewer than CLUSTER_MIN_CHANNELS (64)
 * channels on one side or the other and the tile chosen (sm_90's cluster kernel, which refuses
 * it, takes the others); then up to INSIDE_AT_F2 of the 2-D ones with kernels up to 3 x 3 again
 * at F(2x2, r), the tile AUTO also times for small grids. Returns how many (at most `most`). */
#define INSIDE_AT_F2 10
static int with_weights_inside(const shape *from, int count, shape *to, struct CMUnitTest *tests, int most)
{
    int n = 0, f2 = 0;
    for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < count && n < most; ++i) {
            const convgen_conv_desc *d = &from[i].d;
            if (from[i].m || (d->c >= 64 && d->k >= 64))
                continue;
            if (pass == 1 && (d->rank != 2 || d->kernel[0] > 3 || d->kernel[1] > 3 || f2++ == INSIDE_AT_F2))
                continue;
            to[n] = from[i];
            to[n].weights = CONVGEN_WEIGHTS_INSIDE;
            to[n].m = pass == 1 ? 2 : 0;
            name_shape(&to[n]);
            snprintf(to[n].name + strlen(to[n].name), sizeof to[n].name - strlen(to[n].name), ", weights inside");
            tests[n] = (struct CMUnitTest){.name = to[n].name, .test_func = check_shape, .initial_state = &to[n]};
            ++n;
        }
    return n;
}

/* The shapes `from` again as `to`, their products by `gemm` (options.gemm). */
static void with_gemm(const shape *from, shape *to, int count, int gemm, struct CMUnitTest *tests)
{
    for (int i = 0; i < count; ++i) {
        to[i] = from[i];
        to[i].gemm = gemm;
        snprintf(to[i].name, sizeof to[i].name, "%s GEMM: %.140s",
                 gemm == CONVGEN_GEMM_GENERATED ? "generated" : gemm == CONVGEN_GEMM_TENSOR ? "tensor-core" : "cuBLAS",
                 from[i].name);
        tests[i] = (struct CMUnitTest){.name = to[i].name, .test_func = check_shape, .initial_state = &to[i]};
    }
}

int main(void)
{
    static struct CMUnitTest direct[DIRECT_SHAPES], direct_tensor[DIRECT_SHAPES], window[WINDOW_SHAPES], cufft[CUFFT_SHAPES], fft[CUFFT_SHAPES], tiled[CUFFT_SHAPES],
        fused[CUFFT_SHAPES], winograd[WINOGRAD_SHAPES], winograd_fused[WINOGRAD_FUSED_SHAPES + WINOGRAD_FUSED_SHIFTED],
        fused_inside[WINOGRAD_FUSED_SHAPES + INSIDE_AT_F2],
        winograd_gemm[WINOGRAD_SHAPES], winograd_tensor[2 * WINOGRAD_TENSOR_SHAPES], fft_cublas[CUFFT_SHAPES],
        fft_tensor[CUFFT_SHAPES], tiled_gemm[CUFFT_SHAPES],
        prepared[PREPARED_ALGOS * PREPARED_SHAPES],
        accuracy[WINOGRAD_TILES], autos[AUTO_SHAPES + AUTO_CHOICES + AUTO_EXTRA],
        epilogue[EPILOGUE_ALGOS * EPILOGUE_PER_ALGO];
    make_tests(direct_shapes, DIRECT_SHAPES, handpicked_direct(direct_shapes), random_shape, CONVGEN_ALGO_DIRECT, 1e-5, direct);
    make_tests(window_shapes, WINDOW_SHAPES, handpicked_window(window_shapes), random_shape, CONVGEN_ALGO_DIRECT_WINDOW,
               1e-5, window);
    make_tests(cufft_shapes, CUFFT_SHAPES, handpicked_fft(cufft_shapes), random_fft_shape, CONVGEN_ALGO_CUFFT, 1e-4,
               cufft);
    make_tests(fft_shapes, CUFFT_SHAPES, handpicked_fft3(fft_shapes), random_fft_shape, CONVGEN_ALGO_FFT, 1e-4, fft);
    make_tests(tiled_shapes, CUFFT_SHAPES, handpicked_tiled(tiled_shapes), random_fft_shape, CONVGEN_ALGO_FFT_TILED,
               1e-4, tiled);
    make_tests(fused_shapes, CUFFT_SHAPES, handpicked_fused(fused_shapes), random_fft_shape,
               CONVGEN_ALGO_FFT_FUSED, 1e-4, fused);
    make_tests(winograd_shapes, WINOGRAD_SHAPES, handpicked_winograd(winograd_shapes), random_winograd_shape,
               CONVGEN_ALGO_WINOGRAD, 1e-4, winograd);
    const int fused_handpicked = handpicked_winograd_fused(winograd_fused_shapes);
    make_tests(winograd_fused_shapes, WINOGRAD_FUSED_SHAPES, fused_handpicked, random_winograd_fused_shape,
               CONVGEN_ALGO_WINOGRAD_FUSED, 1e-4, winograd_fused);
    /* The cluster kernel stores a row of a tile's outputs as vectors where y's rows keep them
     * aligned (F(2x2, 5x5) at 24 x 24: a float2; the 3-D F(4x4, 3x3) at 32 x 32: a float4;
     * F(6x6, 3x3) at 58 x 58: three float2): again with y 4, 8 and 12 bytes past a 16-byte
     * boundary (each one's vectors refused), where it must store float by float. */
    static shape shifted[WINOGRAD_FUSED_SHIFTED];
    for (int i = 0; i < WINOGRAD_FUSED_SHIFTED; ++i) {
        shifted[i] = winograd_fused_shapes[fused_handpicked - WINOGRAD_FUSED_SHIFTED + i];
        shifted[i].out_shift = i + 1, shifted[i].sub_batched = false; /* 4, 8 and 12 bytes past */
        snprintf(shifted[i].name + strlen(shifted[i].name), sizeof shifted[i].name - strlen(shifted[i].name),
                 " y %d bytes past 16", 4 * (i + 1));
        winograd_fused[WINOGRAD_FUSED_SHAPES + i] =
            (struct CMUnitTest){.name = shifted[i].name, .test_func = check_shape, .initial_state = &shifted[i]};
    }
    static shape inside_shapes[WINOGRAD_FUSED_SHAPES + INSIDE_AT_F2];
    const int inside_count = with_weights_inside(winograd_fused_shapes, WINOGRAD_FUSED_SHAPES, inside_shapes, fused_inside,
                                                 WINOGRAD_FUSED_SHAPES + INSIDE_AT_F2);
    /* the shapes again with the other GEMM: winograd's and fft-tiled's products by convgen's
     * generated GEMM, fft's (generated by default) by cuBLAS's */
    with_gemm(winograd_shapes, winograd_gemm_shapes, WINOGRAD_SHAPES, CONVGEN_GEMM_GENERATED, winograd_gemm);
    static shape tensor_shapes[WINOGRAD_TENSOR_SHAPES];
    make_tests(tensor_shapes, WINOGRAD_TENSOR_SHAPES, handpicked_tensor(tensor_shapes), random_winograd_shape,
               CONVGEN_ALGO_WINOGRAD, 1e-4, winograd_tensor);
    /* ... and again planned for FEW_SMS multiprocessors: more tiles than blocks, so that each block
     * of the tensor-core GEMM takes several tiles in turn, its stages running on from one into the
     * next (gemm_tc.c's persistent grid) */
    static shape tensor_few[WINOGRAD_TENSOR_SHAPES];
    for (int i = 0; i < WINOGRAD_TENSOR_SHAPES; ++i) {
        shape *f = &tensor_few[i];
        *f = tensor_shapes[i];
        f->few_sms = true;
        for (int p = 0; p < 3; ++p)
            f->form[p] = f->form[p] ? "each taking every grid-th tile (persistent)" : NULL;
        snprintf(f->name + strlen(f->name), sizeof f->name - strlen(f->name), " on %d SMs", FEW_SMS);
        winograd_tensor[WINOGRAD_TENSOR_SHAPES + i] =
            (struct CMUnitTest){.name = f->name, .test_func = check_shape, .initial_state = f};
    }
    /* direct's shapes again by its tensor-core form (fprop, stride-1 bprop, accgrad of up to 9 taps:
     * mma.sync in 3xTF32; on sm_90 fprop and bprop by wgmma where A comes from a patch) */
    static shape direct_tc_shapes[DIRECT_SHAPES];
    for (int i = 0; i < DIRECT_SHAPES; ++i) {
        shape *t = &direct_tc_shapes[i];
        *t = direct_shapes[i];
        t->gemm = CONVGEN_GEMM_TENSOR;
        for (int pass = CONVGEN_FPROP; pass <= CONVGEN_ACCGRAD; ++pass) {
            cg_problem p;
            direct_tc_spec spec;
            bool takes = cg_problem_init(&p, &t->d) == CONVGEN_SUCCESS &&
                         cg_direct_tc_spec(&p, (convgen_pass)pass, NULL, 0, &spec) == CONVGEN_SUCCESS;
            t->form[pass] = !takes ? NULL : spec.wgmma ? "wgmma.mma_async" : "mma.sync.aligned";
        }
        snprintf(t->name, sizeof t->name, "tensor-core GEMM: %.140s", direct_shapes[i].name);
        direct_tensor[i] = (struct CMUnitTest){.name = t->name, .test_func = check_shape, .initial_state = t};
    }
    with_gemm(fft_shapes, fft_cublas_shapes, CUFFT_SHAPES, CONVGEN_GEMM_CUBLAS, fft_cublas);
    /* fft's shapes again with its complex GEMM on the tensor cores (gemm_complex_tc.cu: mma.sync in 3xTF32) */
    with_gemm(fft_shapes, fft_tensor_shapes, CUFFT_SHAPES, CONVGEN_GEMM_TENSOR, fft_tensor);
    with_gemm(tiled_shapes, tiled_gemm_shapes, CUFFT_SHAPES, CONVGEN_GEMM_GENERATED, tiled_gemm);
    make_accuracy_tests(accuracy);
    make_tests(auto_shapes, AUTO_SHAPES, handpicked(auto_shapes), random_winograd_shape, CONVGEN_ALGO_AUTO, 1e-4, autos);
    static shape choices[AUTO_CHOICES];
    const convgen_conv_desc choice_layers[AUTO_CHOICES] = {DESC2(8, 32, 32, 28, 28, 3, 3, 1, 1, 1),
                                                           DESC2(4, 16, 24, 33, 31, 5, 5, 2, 1, 1),
                                                           DESC2(2, 8, 8, 40, 40, 9, 9, 0, 1, 1),
                                                           DESC2(16, 64, 64, 14, 14, 3, 3, 1, 1, 1)};
    for (int i = 0; i < AUTO_CHOICES; ++i) {
        choices[i] = (shape){.d = choice_layers[i], .algo = CONVGEN_ALGO_AUTO};
        name_shape(&choices[i]);
        snprintf(choices[i].name + strlen(choices[i].name), sizeof choices[i].name - strlen(choices[i].name), " choice");
        autos[AUTO_SHAPES + i] = (struct CMUnitTest){.name = choices[i].name, .test_func = check_auto_choice,
                                                     .initial_state = &choices[i]};
    }
    autos[AUTO_SHAPES + AUTO_CHOICES] = (struct CMUnitTest){.name = "auto drops wrong candidates",
                                                            .test_func = check_auto_drops_wrong_candidates};
    /* Prepared weights: the first shapes of each group with weights to prepare (the handpicked ones). */
    const shape *const owners[PREPARED_ALGOS] = {cufft_shapes, fft_shapes, tiled_shapes, fused_shapes, winograd_shapes,
                                                 winograd_fused_shapes};
    for (int a = 0; a < PREPARED_ALGOS; ++a)
        for (int i = 0; i < PREPARED_SHAPES; ++i) {
            shape *t = &prepared_shapes[a * PREPARED_SHAPES + i];
            *t = owners[a][i];
            snprintf(t->name, sizeof t->name, "%s prepared: %.120s", convgen_algo_name(t->algo), owners[a][i].name);
            prepared[a * PREPARED_SHAPES + i] =
                (struct CMUnitTest){.name = t->name, .test_func = check_prepared, .initial_state = t};
        }
    const shape *const epilogue_groups[EPILOGUE_ALGOS] = {direct_shapes, window_shapes, cufft_shapes, fft_shapes,
                                                          tiled_shapes, fused_shapes, winograd_shapes,
                                                          winograd_fused_shapes, inside_shapes, auto_shapes};
    const int epilogue_counts[EPILOGUE_ALGOS] = {DIRECT_SHAPES, WINDOW_SHAPES, CUFFT_SHAPES, CUFFT_SHAPES, CUFFT_SHAPES,
                                                 CUFFT_SHAPES, WINOGRAD_SHAPES, WINOGRAD_FUSED_SHAPES, inside_count,
                                                 AUTO_SHAPES};
    make_epilogue_tests(epilogue_groups, epilogue_counts, EPILOGUE_ALGOS, epilogue_shapes, epilogue);
    static struct CMUnitTest registry[REGISTRY_MAX];
    int planners = cg_planner_count() < REGISTRY_MAX ? cg_planner_count() : REGISTRY_MAX;
    if (cg_planner_count() > REGISTRY_MAX)
        fprintf(stderr, "test_gpu_conv: %d planners registered, the registry group runs the first %d\n",
                cg_planner_count(), REGISTRY_MAX);
    for (int a = 0; a < planners; ++a)
        registry[a] = (struct CMUnitTest){.name = cg_planner_at(a)->name, .test_func = check_registry,
                                          .initial_state = (void *)cg_planner_at(a)};
    const test_group groups[] = {{"direct", direct, DIRECT_SHAPES},
                  {"direct_tensor", direct_tensor, DIRECT_SHAPES},
                  {"direct_window", window, WINDOW_SHAPES},
                  {"cufft", cufft, CUFFT_SHAPES},
                  {"fft", fft, CUFFT_SHAPES},
                  {"fft_tiled", tiled, CUFFT_SHAPES},
                  {"fft_fused", fused, CUFFT_SHAPES},
                  {"winograd", winograd, WINOGRAD_SHAPES},
                  {"winograd_fused", winograd_fused, WINOGRAD_FUSED_SHAPES + WINOGRAD_FUSED_SHIFTED},
                  {"winograd_fused_inside", fused_inside, (size_t)inside_count},
                  {"winograd_gemm", winograd_gemm, WINOGRAD_SHAPES},
                  {"winograd_tensor", winograd_tensor, 2 * WINOGRAD_TENSOR_SHAPES},
                  {"fft_cublas", fft_cublas, CUFFT_SHAPES},
                  {"fft_tensor", fft_tensor, CUFFT_SHAPES},
                  {"fft_tiled_gemm", tiled_gemm, CUFFT_SHAPES},
                  {"prepared", prepared, PREPARED_ALGOS * PREPARED_SHAPES},
                  {"accuracy", accuracy, WINOGRAD_TILES},
                  {"auto", autos, AUTO_SHAPES + AUTO_CHOICES + AUTO_EXTRA},
                  {"epilogue", epilogue, EPILOGUE_ALGOS * EPILOGUE_PER_ALGO},
                  {"registry", registry, (size_t)planners}};
    enum { GROUPS = sizeof groups / sizeof groups[0] };
    const char *names[GROUPS];
    bool selected[GROUPS];
    for (int i = 0; i < GROUPS; ++i)
        names[i] = groups[i].name;
    if (!select_groups(names, GROUPS, selected))
        return 1;
    /* CONVGEN_TEST_FILTER: only the tests whose names match its pattern (cmocka's: * and ?),
     * e.g. "*m 6*" for the fixed 8 x 8 tiles' */
    const char *filter = getenv("CONVGEN_TEST_FILTER");
    if (filter && *filter)
        cmocka_set_test_filter(filter);
    _Static_assert(GROUPS <= MAX_GROUPS, "run_groups keeps MAX_GROUPS processes");
    return run_groups(groups, GROUPS, selected);
}
