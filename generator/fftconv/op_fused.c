/* The FUSED op kind (op_kinds.h): fft-fused's kernel, per tile a forward FFT of each input
 * channel, the products with the weights' spectra summed over the channels, and the inverse FFT
 * of each output channel (fft_fused.c renders it). */
#include <math.h>
#include <stdlib.h>

#include "fftconv.h"
#include "cpu_dft.h"
#include "op_kinds.h"
#include "util.h"

/* The fused kernels' measured rate (bench/NOTES.md): 12% of the FMA rate, less than the GEMMs'
 * for the weights' reads from L2, measured at about 1.8 times the copy bandwidth (L3 fprop's
 * 25 GB in 4.5 ms). */
#define FFT_FUSED_EFFICIENCY 0.12
#define FFT_FUSED_L2_RATE 1.8

/* The kernel by its definition: per image and tile, each channel's tile transformed in double,
 * the products with the weights' spectra (extended from the Hermitian half) summed, transformed
 * back and the tile's valid outputs clipped. */
static convgen_status evaluate_fused(const cg_kernel_op *kop, const cg_op_buffers *b)
{
    const cg_fused_op *op = &kop->fused;
    const cg_pad_op *in = &op->input;
    int64_t n[CONVGEN_MAX_RANK], half[CONVGEN_MAX_RANK], outs[CONVGEN_MAX_RANK];
    int64_t points = 1, bins = 1, plane = fc_pad_operand_points(in), out_plane = 1, rank = in->rank;
    for (int d = 0; d < rank; ++d) {
        n[d] = in->size[d], half[d] = d == rank - 1 ? n[d] / 2 + 1 : n[d];
        outs[d] = op->out_dims[d].count;
        points *= n[d], bins *= half[d], out_plane *= outs[d];
    }
    const float complex *w = (const float complex *)(b->ws + op->spectra);
    double complex *x = malloc(sizeof *x * (size_t)(points * op->channels)), *y = malloc(sizeof *y * (size_t)points);
    bool ok = x && y;
    for (int64_t g = 0; ok && g < in->images; ++g)
        for (int64_t t = 0; ok && t < in->tiles; ++t) {
            int64_t tile[CONVGEN_MAX_RANK];
            fc_pad_tile_index(in, t, tile);
            for (int64_t c = 0; ok && c < op->channels; ++c) { /* the tile, transformed */
                double complex *xc = x + c * points;
                int64_t q[CONVGEN_MAX_RANK] = {0};
                do
                    xc[cg_index_flat(q, n, (int)rank)] = fc_pad_value(in, b->in[0] + (g * op->channels + c) * plane, tile, q);
                while (cg_index_next(q, n, (int)rank));
                for (int d = 0; d < rank; ++d)
                    ok &= cg_dft_axis(xc, n, (int)rank, d, -1);
            }
            for (int64_t o = 0; ok && o < op->outputs; ++o) {
                int64_t k[CONVGEN_MAX_RANK] = {0};
                do { /* Y = sum_c X_c W, the weights' full spectrum from their half */
                    int64_t mirror[CONVGEN_MAX_RANK];
                    bool stored;
                    cg_dft_hermitian_source(k, n, half, (int)rank, mirror, &stored);
                    double complex sum = 0;
                    for (int64_t c = 0; c < op->channels; ++c) {
                        double complex wv = w[(o * op->w_out + c * op->w_in) * bins + cg_index_flat(mirror, half, (int)rank)];
                        wv = stored ? wv : conj(wv);
                        sum += x[c * points + cg_index_flat(k, n, (int)rank)] * (op->conjugate ? conj(wv) : wv);
                    }
                    y[cg_index_flat(k, n, (int)rank)] = sum;
                } while (cg_index_next(k, n, (int)rank));
                for (int d = 0; d < rank; ++d)
                    ok &= cg_dft_axis(y, n, (int)rank, d, +1);
                int64_t r[CONVGEN_MAX_RANK] = {0}, steps[CONVGEN_MAX_RANK], at[CONVGEN_MAX_RANK], pos[CONVGEN_MAX_RANK];
                for (int d = 0; d < rank; ++d)
                    steps[d] = op->out_dims[d].tile_step;
                do { /* the tile's valid outputs */
                    bool inside = true;
                    for (int d = 0; d < rank; ++d) {
                        at[d] = tile[d] * steps[d] + r[d];
                        pos[d] = op->out_dims[d].base + op->out_dims[d].step * r[d];
                        inside &= at[d] < outs[d];
                    }
                    if (inside)
                        b->out[(g * op->outputs + o) * out_plane + cg_index_flat(at, outs, (int)rank)] =
                            (float)(creal(y[cg_index_flat(pos, n, (int)rank)]) * in->scale);
                } while (cg_index_next(r, steps, (int)rank));
            }
        }
    free(x);
    free(y);
    return ok ? CONVGEN_SUCCESS
              : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the fused kernel's DFTs on the CPU");
}

/* Per tile and image, the products and, for each group of output channels a block makes, the
 * input channels' register FFTs (5 N log2 N FLOPs a complex transform of N points, two real rows
 * a transform) and the outputs' inverse; each block reads the weights' spectra of its output
 * channels for its one tile, 8 bytes a complex multiply-add, from L2. */
static cg_work fused_work(const cg_kernel_op *kop, int sm_count)
{
    (void)sm_count;
    const cg_fused_op *op = &kop->fused;
    double points = cg_product(op->input.size, op->input.rank), bins = points / 2 + points / op->input.size[op->input.rank - 1];
    double tiles = (double)op->input.images * op->input.tiles;
    double groups = ceil((double)op->outputs / (double)(op->per_block > 0 ? op->per_block : 1));
    double transform = 5.0 * points * log2(points) / 2;
    double macs = bins * tiles * op->channels * op->outputs;
    return (cg_work){.flops = 8.0 * macs + transform * tiles * (op->channels * groups + op->outputs),
                     .efficiency = FFT_FUSED_EFFICIENCY, .bytes = 8.0 * macs, .bandwidth_efficiency = FFT_FUSED_L2_RATE};
}

static const char *describe_fused(const cg_kernel_op *op)
{
    (void)op;
    return "per tile: FFT, products over the channels, inverse FFT";
}

const cg_op_class cg_op_fused = {CG_OP_FUSED, "fused", evaluate_fused, fused_work, describe_fused};
