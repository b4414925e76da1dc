/* A complex FFT of n points in one thread's registers. fft-fused transforms a tile's rows and
 * columns one per thread (up to 64 points, a few hundred transforms a tile): fbfft's warp
 * plans (fft_plan.c) spread one transform over lanes and exchange through shuffles, which
 * pays at 64 points and up; here a thread owns whole transforms, so every twiddle factor is a
 * constant of its butterfly and no value crosses lanes. */
#include "fft_regs.h"

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft_warp.h"

/* Radix 4 where 4 divides m (two levels of radix 2 with multiplications by +-i only), else 2,
 * else the smallest odd prime factor. */
static int pick_radix(int m)
{
    if (m % 4 == 0)
        return 4;
    if (m % 2 == 0)
        return 2;
    for (int p = 3; p * p <= m; p += 2)
        if (m % p == 0)
            return p;
    return m;
}

/* Decimation in time of the m values x[regs[j]], j < m, in place: the r subsequences
 * x[j r + s] are transformed first, then joined by q = m / r butterflies, the one of bin k
 * taking Y_s[k] times w_m^(s k) and leaving X[k + q t] in Y_t[k]'s register. */
static bool schedule(reg_fft *f, const int *regs, int m, int *out)
{
    if (m == 1) {
        out[0] = regs[0];
        return true;
    }
    const int r = pick_radix(m), q = m / r;
    if (r > REG_FFT_MAX_RADIX)
        return false;
    int sub[REG_FFT_MAX_RADIX][REG_FFT_MAX_N];
    for (int s = 0; s < r; ++s) {
        int in[REG_FFT_MAX_N];
        for (int j = 0; j < q; ++j)
            in[j] = regs[j * r + s];
        if (!schedule(f, in, q, sub[s]))
            return false;
    }
    for (int k = 0; k < q; ++k) {
        if (f->count == (int)(sizeof f->b / sizeof f->b[0]))
            return false;
        reg_butterfly *b = &f->b[f->count++];
        b->radix = r, b->k = k, b->m = m;
        for (int s = 0; s < r; ++s)
            b->regs[s] = sub[s][k];
        for (int t = 0; t < r; ++t)
            out[k + q * t] = sub[t][k];
    }
    return true;
}

bool cg_reg_fft(int n, int sign, reg_fft *f)
{
    memset(f, 0, sizeof *f);
    f->n = n, f->sign = sign;
    if (n < 1 || n > REG_FFT_MAX_N)
        return false;
    int regs[REG_FFT_MAX_N];
    for (int j = 0; j < n; ++j)
        regs[j] = j;
    return schedule(f, regs, n, f->out);
}

static double complex unit(int sign, long e, int n)
{
    double a = 2.0 * M_PI * (double)(e % n) / n;
    return cos(a) + sign * sin(a) * I;
}

void cg_reg_fft_eval(const reg_fft *f, double *re, double *im)
{
    double complex x[REG_FFT_MAX_N];
    for (int j = 0; j < f->n; ++j)
        x[j] = re[j] + im[j] * I;
    for (int i = 0; i < f->count; ++i) {
        const reg_butterfly *b = &f->b[i];
        double complex a[REG_FFT_MAX_RADIX];
        for (int s = 0; s < b->radix; ++s)
            a[s] = x[b->regs[s]] * unit(f->sign, (long)s * b->k, b->m);
        for (int t = 0; t < b->radix; ++t) {
            double complex sum = 0;
            for (int s = 0; s < b->radix; ++s)
                sum += a[s] * unit(f->sign, (long)s * t, b->radix);
            x[b->regs[t]] = sum;
        }
    }
    for (int j = 0; j < f->n; ++j)
        re[j] = creal(x[j]), im[j] = cimag(x[j]);
}

tmpl_value *cg_reg_fft_value(const reg_fft *f)
{
    tmpl_value *v = tmpl_map(), *list = tmpl_list(), *out = tmpl_list();
    tmpl_set_int(v, "n", f->n);
    tmpl_set_int(v, "sign", f->sign);
    for (int i = 0; i < f->count; ++i) {
        const reg_butterfly *b = &f->b[i];
        tmpl_value *bv = tmpl_map(), *regs = tmpl_list(), *tw = tmpl_list();
        tmpl_set_int(bv, "radix", b->radix);
        for (int s = 0; s < b->radix; ++s) {
            tmpl_list_push(regs, tmpl_int(b->regs[s]));
            tmpl_list_push(tw, cg_fft_coefficient(f->sign, s * b->k, b->m));
        }
        tmpl_map_set(bv, "regs", regs);
        tmpl_map_set(bv, "tw", tw);
        if (b->radix % 2) {
            tmpl_map_set(bv, "cos", cg_fft_odd_table(f->sign, b->radix, false));
            tmpl_map_set(bv, "sin", cg_fft_odd_table(f->sign, b->radix, true));
        }
        tmpl_list_push(list, bv);
    }
    for (int k = 0; k < f->n; ++k)
        tmpl_list_push(out, tmpl_int(f->out[k]));
    tmpl_map_set(v, "butterflies", list);
    tmpl_map_set(v, "out", out);
    return v;
}

void cg_reg_fft_radices(int n, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int m = n; m > 1 && used < size; m /= pick_radix(m)) {
        int w = snprintf(buf + used, size - used, "%s%d", used ? "x" : "", pick_radix(m));
        used += w > 0 ? (size_t)w : 0;
    }
}

/* The two rows a complex transform carries as its real and imaginary parts come apart by
 * Z_k and Z_(n-k): split[k] = {k, z, zm}, their registers, for the bins k < n / 2 + 1. */
tmpl_value *cg_reg_fft_split_value(const reg_fft *fwd, int h)
{
    tmpl_value *list = tmpl_list();
    for (int k = 0; k < h; ++k) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "k", k);
        tmpl_set_int(v, "z", fwd->out[k]);
        tmpl_set_int(v, "zm", fwd->out[(fwd->n - k) % fwd->n]);
        tmpl_list_push(list, v);
    }
    return list;
}

/* The inverse rows' input Z_k = A_k + i B_k from two rows' half spectra: merge[k] = {k, kind,
 * src}: "real" at bins 0 and n / 2 (the imaginary parts a real row's spectrum has not there are
 * dropped, as a C2R does), "direct" below n / 2 + 1, "mirror" above (conj A_(n-k), conj B_(n-k)). */
tmpl_value *cg_reg_fft_merge_value(int n, int h)
{
    tmpl_value *list = tmpl_list();
    for (int k = 0; k < n; ++k) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "k", k);
        tmpl_set_str(v, "kind", k == 0 || 2 * k == n ? "real" : k < h ? "direct" : "mirror");
        tmpl_set_int(v, "src", k < h ? k : n - k);
        tmpl_list_push(list, v);
    }
    return list;
}

tmpl_value *cg_reg_placements(const int *regs, int first, int count, int skip, int step)
{
    tmpl_value *list = tmpl_list();
    for (int i = 0; i < count; ++i) {
        tmpl_value *v = tmpl_map();
        tmpl_set_int(v, "reg", regs ? regs[first + i] : first + i);
        tmpl_set_int(v, "at", (int64_t)(skip + i) * step);
        tmpl_list_push(list, v);
    }
    return list;
}
