#include "tiling.h"

#include <stdio.h>

/* Sizes past this are rejected before any sum: every sum below stays far inside int64. */
#define SIZE_LIMIT ((int64_t)1 << 40)

/* Keeps sizes[0 .. *count) ascending and at most max long. */
static void insert_sorted(int64_t m, int64_t *sizes, int *count, int max)
{
    int i = *count < max ? (*count)++ : max;
    for (; i > 0 && sizes[i - 1] > m; --i)
        if (i < max)
            sizes[i] = sizes[i - 1];
    if (i < max)
        sizes[i] = m;
}

int fft_basis_candidates(int64_t n, int64_t *sizes, int max)
{
    if (n < 1 || n > SIZE_LIMIT || max < 1)
        return 0;
    int64_t pow2 = 1;
    while (pow2 < n)
        pow2 *= 2;
    /* Every 3^b 5^c 7^d up to pow2, times the powers of two that land in [n, pow2]: a few
     * thousand products even at 2^40, where scanning the integers would take hours. */
    int count = 0;
    for (int64_t p7 = 1; p7 <= pow2; p7 *= 7)
        for (int64_t p5 = p7; p5 <= pow2; p5 *= 5)
            for (int64_t p3 = p5; p3 <= pow2; p3 *= 3)
                for (int64_t m = p3; m <= pow2; m *= 2)
                    if (m >= n)
                        insert_sorted(m, sizes, &count, max);
    return count;
}

int64_t fft_three_smooth_at_least(int64_t n)
{
    if (n < 1 || n > SIZE_LIMIT)
        return 0;
    int64_t best = 1;
    while (best < n)
        best *= 2;
    for (int64_t p3 = 1; p3 < best; p3 *= 3)
        for (int64_t v = p3; v < best; v *= 2)
            if (v >= n)
                best = v;
    return best;
}

static int64_t smallest_smooth_at_least(int64_t n)
{
    int64_t m = n;
    fft_basis_candidates(n, &m, 1);
    return m;
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The correlation's sizes, common to both cuts; the message names the first bad field. */
static bool check_sizes(int64_t in, int64_t out, int64_t extent, int64_t pad_before, char *err, size_t errlen)
{
    /* A negative pad_before skips the signal's first elements (bprop with padding beyond the
     * kernel's extent). */
    const struct { const char *name; int64_t v, lo; } f[] = {
        {"in", in, 1}, {"out", out, 1}, {"extent", extent, 1}, {"pad_before", pad_before, -SIZE_LIMIT}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; ++i)
        if (f[i].v < f[i].lo || f[i].v > SIZE_LIMIT) {
            snprintf(err, errlen, "%s = %lld must be in %s..2^40", f[i].name, (long long)f[i].v,
                     f[i].lo < 0 ? "-2^40" : f[i].lo ? "1" : "0");
            return false;
        }
    return true;
}

bool fft_tiling_make(int64_t in, int64_t out, int64_t extent, int64_t pad_before, int64_t n_fft, fft_tiling *t,
                     char *err, size_t errlen)
{
    if (!check_sizes(in, out, extent, pad_before, err, errlen))
        return false;
    if (n_fft < 0 || n_fft > SIZE_LIMIT) {
        snprintf(err, errlen, "n_fft = %lld must be in 0..2^40 (0: one tile)", (long long)n_fft);
        return false;
    }
    if (n_fft == 0)
        n_fft = smallest_smooth_at_least(out + extent - 1);
    else if (n_fft < extent) {
        snprintf(err, errlen, "n_fft = %lld must be at least the kernel's extent %lld", (long long)n_fft,
                 (long long)extent);
        return false;
    }
    *t = (fft_tiling){.in = in, .out = out, .extent = extent, .pad_before = pad_before, .n_fft = n_fft};
    t->step = n_fft - extent + 1;
    t->tiles = ceil_div(out, t->step);
    return true;
}

void fft_tiling_tile(const fft_tiling *t, int64_t index, fft_tile *tile)
{
    /* Outputs first .. first + step - 1 read the signal from first - pad_before on, n_fft
     * points; the circular correlation's outputs 0 .. step - 1 never wrap around. */
    int64_t first = index * t->step, start = first - t->pad_before;
    int64_t src = max64(start, 0), end = min64(start + t->n_fft, t->in);
    tile->src = src;
    tile->len = max64(end - src, 0);
    tile->offset = tile->len ? src - start : 0;
    tile->first = first;
    tile->count = min64(t->step, t->out - first);
}

bool fft_parts_make(int64_t in, int64_t out, int64_t extent, int64_t pad_before, int64_t block, int64_t n_fft,
                    fft_parts *p, char *err, size_t errlen)
{
    if (!check_sizes(in, out, extent, pad_before, err, errlen))
        return false;
    if (block < 1 || block > SIZE_LIMIT) {
        snprintf(err, errlen, "block = %lld must be in 1..2^40", (long long)block);
        return false;
    }
    if (n_fft < 2 * block - 1 || n_fft > SIZE_LIMIT) {
        snprintf(err, errlen, "n_fft = %lld must be at least 2 block - 1 = %lld (lags of two blocks unaliased)",
                 (long long)n_fft, (long long)(2 * block - 1));
        return false;
    }
    *p = (fft_parts){.in = in, .out = out, .extent = extent, .pad_before = pad_before, .block = block, .n_fft = n_fft};
    p->dy_blocks = ceil_div(out, block);
    p->shifts = 1 + ceil_div(extent - 1, block);
    p->x_blocks = p->dy_blocks + p->shifts - 1;
    return true;
}

bool fft_parts_for(const fft_conv_dim *d, int64_t block, int64_t n_fft, fft_parts *p, char *err, size_t errlen)
{
    /* accgrad's correlation keeps d->out taps of x against dy, whose length is d->extent. */
    return fft_parts_make(d->in, d->extent, d->out, d->pad_before, block, n_fft, p, err, errlen);
}

void fft_parts_x_block(const fft_parts *p, int64_t j, int64_t *src, int64_t *len, int64_t *offset)
{
    int64_t start = j * p->block - p->pad_before; /* xp[j block] = x[start] */
    int64_t s = max64(start, 0), end = min64(start + p->block, p->in);
    *src = s;
    *len = max64(end - s, 0);
    *offset = *len ? s - start : 0;
}

void fft_parts_dy_block(const fft_parts *p, int64_t b, int64_t *first, int64_t *count)
{
    *first = b * p->block;
    *count = min64(p->block, p->out - *first);
}

void fft_parts_shift_lags(const fft_parts *p, int64_t d, int64_t *lo, int64_t *hi)
{
    /* Tap i = d block + l with |l| < block and 0 <= i < extent. */
    *lo = max64(-(p->block - 1), -d * p->block);
    *hi = min64(p->block - 1, p->extent - 1 - d * p->block);
}

bool fft_conv_dims(const cg_problem *p, convgen_pass pass, fft_conv_dim *dims, char *err, size_t errlen)
{
    for (int i = 0; i < p->rank; ++i) {
        if (p->stride[i] != 1) {
            snprintf(err, errlen, "stride[%d] = %lld: FFT convolution needs stride 1", i, (long long)p->stride[i]);
            return false;
        }
        fft_conv_dim *d = &dims[i];
        d->taps = p->kernel[i];
        d->dilation = p->dilation[i];
        d->flip = p->flip;
        d->kernel_extent = (p->kernel[i] - 1) * p->dilation[i] + 1;
        d->reverse = pass == CONVGEN_BPROP;
        int64_t e = d->kernel_extent, pad = p->pad_before[i];
        switch (pass) {
        case CONVGEN_FPROP: d->in = p->in[i], d->out = p->out[i], d->extent = e, d->pad_before = pad; break;
        case CONVGEN_BPROP: d->in = p->out[i], d->out = p->in[i], d->extent = e, d->pad_before = e - 1 - pad; break;
        case CONVGEN_ACCGRAD: d->in = p->in[i], d->out = e, d->extent = p->out[i], d->pad_before = pad; break;
        default: snprintf(err, errlen, "pass = %d is not a pass", (int)pass); return false;
        }
    }
    return true;
}

int64_t fft_conv_dim_tap(const fft_conv_dim *d, int64_t f)
{
    int64_t at = (d->flip ? d->taps - 1 - f : f) * d->dilation; /* in the dilated kernel */
    return d->reverse ? d->kernel_extent - 1 - at : at;
}
