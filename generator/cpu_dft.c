/* Naive DFTs for the CPU evaluation (cpu_dft.h). */
#include "cpu_dft.h"

#include <math.h>
#include <stdlib.h>

bool cg_dft_axis(double complex *a, const int64_t *n, int rank, int d, int sign)
{
    int64_t len = n[d], stride = 1, outer = 1;
    for (int e = d + 1; e < rank; ++e)
        stride *= n[e];
    for (int e = 0; e < d; ++e)
        outer *= n[e];
    double complex *line = malloc(sizeof *line * (size_t)len), *w = malloc(sizeof *w * (size_t)len);
    for (int64_t k = 0; w && k < len; ++k)
        w[k] = cexp(sign * 2.0 * M_PI * I * (double)k / (double)len);
    for (int64_t o = 0; line && w && o < outer; ++o)
        for (int64_t i = 0; i < stride; ++i) {
            double complex *base = a + o * len * stride + i;
            for (int64_t k = 0; k < len; ++k) {
                double complex sum = 0;
                for (int64_t j = 0; j < len; ++j)
                    sum += base[j * stride] * w[(j * k) % len];
                line[k] = sum;
            }
            for (int64_t k = 0; k < len; ++k)
                base[k * stride] = line[k];
        }
    bool ok = line && w;
    free(line);
    free(w);
    return ok;
}
