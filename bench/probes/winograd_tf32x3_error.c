/* A probe for issue 30 (bench/NOTES.md, "Issue 30, session 57"), run on the CPU, no GPU needed:
 *   ninja && cc -O2 -std=c11 -Igenerator/winograd -o wte bench/probes/winograd_tf32x3_error.c \
 *       build/generator/winograd/winograd_transform.o build/generator/winograd/rational.o -lm && ./wte
 *
 * The question: do a fused Winograd's products in 3xTF32 on the tensor cores keep fp32's accuracy?
 * Each operand x is split as the cluster kernel splits it (templates/winograd/
 * winograd_fused_cluster.cu, split_tf32): hi = x with its low 13 bits cleared, lo = x - hi (exact)
 * rounded to TF32; a product is a_lo b_hi + a_hi b_lo + a_hi b_hi, each term exact (11 x 11 bits),
 * an mma's 8 channels summed and added to the fp32 sum. How the tensor cores round that sum is not
 * documented, so two bounds of it: once to nearest (RN) and, pessimistic, toward zero (RZ) after
 * each mma. Against that, the FFMA kernels' fp32 products, summed channel by channel. Everything
 * else in fp32 as the kernels do (the transforms' matrices from wino_derive, as dot products); the
 * reference in float64 by direct correlation; random data in [-1, 1]. Printed: the relative error
 * ||y - ref|| / ||ref|| of each, and the bound `convgen check` holds the layer to (README: 4 u
 * sqrt(L), at least 1e-5). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "winograd_transform.h"

enum { TILES = 4, OUTPUTS = 8, MAX_A = 8 };

static double q(cg_q v) { return (double)v.num / (double)v.den; }

static uint32_t bits(float x)
{
    uint32_t b;
    memcpy(&b, &x, 4);
    return b;
}

static float from_bits(uint32_t b)
{
    float x;
    memcpy(&x, &b, 4);
    return x;
}

/* The kernel's split: hi and lo as the tensor cores read them (their low 13 bits ignored). */
static void split(float x, float *hi, float *lo)
{
    *hi = from_bits(bits(x) & 0xffffe000u);
    *lo = from_bits((bits(x - *hi) + 0x1000u) & 0xffffe000u);
}

/* s rounded to fp32 toward zero. */
static float toward_zero(double s)
{
    float f = (float)s;
    return fabs((double)f) > fabs(s) ? nextafterf(f, 0.0f) : f;
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* One layer of `channels` x OUTPUTS, TILES x TILES tiles of F(m x m, r x r); mode 0: fp32 FFMA,
 * 1: 3xTF32 (RN), 2: 3xTF32 (RZ). Returns the relative error. */
static double layer_error(const wino_transform *t, int channels, int mode, uint64_t seed)
{
    const int m = t->m, r = t->r, a = t->alpha, side = TILES * m + r - 1;
    rng = seed;
    float *x = malloc(sizeof(float) * channels * side * side), *w = malloc(sizeof(float) * OUTPUTS * channels * r * r);
    float *u = malloc(sizeof(float) * OUTPUTS * channels * a * a), *v = malloc(sizeof(float) * channels * a * a);
    for (int i = 0; i < channels * side * side; ++i)
        x[i] = (float)uniform();
    for (int i = 0; i < OUTPUTS * channels * r * r; ++i)
        w[i] = (float)uniform();
    for (int k = 0; k < OUTPUTS; ++k) /* U = G w G^T in fp32 */
        for (int c = 0; c < channels; ++c)
            for (int i = 0; i < a; ++i)
                for (int j = 0; j < a; ++j) {
                    float s = 0.0f;
                    for (int p = 0; p < r; ++p)
                        for (int q2 = 0; q2 < r; ++q2)
                            s += (float)q(t->g[i][p]) * w[((k * channels + c) * r + p) * r + q2] * (float)q(t->g[j][q2]);
                    u[((k * channels + c) * a + i) * a + j] = s;
                }
    double err = 0.0, norm = 0.0;
    for (int ty = 0; ty < TILES; ++ty)
        for (int tx = 0; tx < TILES; ++tx) {
            for (int c = 0; c < channels; ++c) /* V = BT d B in fp32 */
                for (int i = 0; i < a; ++i)
                    for (int j = 0; j < a; ++j) {
                        float s = 0.0f;
                        for (int p = 0; p < a; ++p)
                            for (int q2 = 0; q2 < a; ++q2)
                                s += (float)q(t->bt[i][p]) * x[(c * side + ty * m + p) * side + tx * m + q2] *
                                     (float)q(t->bt[j][q2]);
                        v[(c * a + i) * a + j] = s;
                    }
            for (int k = 0; k < OUTPUTS; ++k) {
                float mprod[MAX_A][MAX_A];
                for (int e = 0; e < a * a; ++e) {
                    float sum = 0.0f;
                    for (int c0 = 0; c0 < channels; c0 += 8) {
                        double step = 0.0;
                        for (int c = c0; c < c0 + 8 && c < channels; ++c) {
                            float uu = u[(k * channels + c) * a * a + e], vv = v[c * a * a + e];
                            if (mode == 0) {
                                sum = fmaf(uu, vv, sum);
                                continue;
                            }
                            float uh, ul, vh, vl;
                            split(uu, &uh, &ul), split(vv, &vh, &vl);
                            step += (double)ul * vh + (double)uh * vl + (double)uh * vh;
                        }
                        if (mode == 1)
                            sum = (float)((double)sum + step);
                        else if (mode == 2)
                            sum = toward_zero((double)sum + step);
                    }
                    mprod[e / a][e % a] = sum;
                }
                for (int i = 0; i < m; ++i) /* y = AT M A in fp32, against float64 correlation */
                    for (int j = 0; j < m; ++j) {
                        float y = 0.0f;
                        for (int p = 0; p < a; ++p)
                            for (int q2 = 0; q2 < a; ++q2)
                                y += (float)q(t->at[i][p]) * mprod[p][q2] * (float)q(t->at[j][q2]);
                        double ref = 0.0;
                        const int oy = ty * m + i, ox = tx * m + j;
                        for (int c = 0; c < channels; ++c)
                            for (int p = 0; p < r; ++p)
                                for (int q2 = 0; q2 < r; ++q2)
                                    ref += (double)x[(c * side + oy + p) * side + ox + q2] *
                                           w[((k * channels + c) * r + p) * r + q2];
                        err += (y - ref) * (y - ref), norm += ref * ref;
                    }
            }
        }
    free(x), free(w), free(u), free(v);
    return sqrt(err / norm);
}

int main(void)
{
    const struct {
        int m, r, channels;
    } cases[] = {{2, 3, 256}, {4, 3, 256}, {6, 3, 256}, {6, 3, 64}, {2, 5, 128}, {4, 5, 128}};
    printf("%-10s %8s %10s %12s %12s %10s\n", "F(m, r)", "channels", "fp32 FFMA", "3xTF32 (RN)", "3xTF32 (RZ)",
           "bound");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        wino_transform t;
        char why[200];
        if (!wino_derive(cases[i].m, cases[i].r, &t, why, sizeof why)) {
            fprintf(stderr, "F(%d, %d): %s\n", cases[i].m, cases[i].r, why);
            return 1;
        }
        double e[3];
        for (int mode = 0; mode < 3; ++mode)
            e[mode] = 0.5 * (layer_error(&t, cases[i].channels, mode, 1) + layer_error(&t, cases[i].channels, mode, 2));
        const double l = (double)cases[i].channels * cases[i].r * cases[i].r, bound = fmax(4 * 0x1p-24 * sqrt(l), 1e-5);
        char name[16];
        snprintf(name, sizeof name, "F(%d, %d)", cases[i].m, cases[i].r);
        printf("%-10s %8d %10.2e %12.2e %12.2e %10.2e\n", name, cases[i].channels, e[0], e[1], e[2], bound);
    }
    return 0;
}
