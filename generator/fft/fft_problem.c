#include "fft_problem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fft_plan.h"
#include "problem.h"
#include "util.h"

#define BAD(...) cg_fail(CONVGEN_ERROR_INVALID_VALUE, __VA_ARGS__)
#define UNSUPPORTED(...) cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, __VA_ARGS__)

static convgen_status check_kind(cg_fft_problem *p, const convgen_fft_desc *d)
{
    if (d->type != CONVGEN_FFT_C2C && d->type != CONVGEN_FFT_R2C && d->type != CONVGEN_FFT_C2R)
        return BAD("type = %d must be CONVGEN_FFT_C2C, _R2C or _C2R", (int)d->type);
    if (d->rank < 1 || d->rank > 3)
        return BAD("rank = %d must be 1, 2 or 3", d->rank);
    if (!fft_size_supported(d->n))
        return BAD("n = %d must be 2^a 3^b 5^c 7^d between %d and %d", d->n, FFT_MIN_N, FFT_MAX_N);
    /* The depth pass holds a column's n points in one thread's registers (fft_volume.c). */
    if (d->rank == 3 && d->n > FFT_MAX_VOLUME_N)
        return UNSUPPORTED("n = %d: rank 3 transforms go up to n = %d", d->n, FFT_MAX_VOLUME_N);
    int implied = d->type == CONVGEN_FFT_R2C ? -1 : d->type == CONVGEN_FFT_C2R ? 1 : 0;
    int dir = (int)d->direction;
    if (implied ? dir != 0 && dir != implied : dir != -1 && dir != 1)
        return BAD("direction = %d must be %s", dir,
                   implied < 0 ? "0 or CONVGEN_FFT_FORWARD for R2C" : implied > 0 ? "0 or CONVGEN_FFT_INVERSE for C2R"
                                                                      : "CONVGEN_FFT_FORWARD or _INVERSE for C2C");
    p->type = d->type;
    p->rank = d->rank;
    p->n = d->n;
    p->sign = implied ? implied : dir;
    p->half = d->type == CONVGEN_FFT_C2C ? d->n : d->n / 2 + 1;
    return CONVGEN_SUCCESS;
}

static convgen_status check_count(cg_fft_problem *p, const convgen_fft_desc *d)
{
    if (d->batch < 1)
        return BAD("batch = %lld must be >= 1", (long long)d->batch);
    if (d->channels < 0)
        return BAD("channels = %lld must be >= 0 (0 means 1)", (long long)d->channels);
    p->batch = d->batch;
    p->channels = d->channels ? d->channels : 1;
    if (!cg_mul64(p->batch, p->channels, &p->count) || p->count > INT32_MAX)
        return UNSUPPORTED("batch * channels = %lld * %lld transforms: at most 2^31 - 1 in one plan",
                           (long long)p->batch, (long long)p->channels);
    return CONVGEN_SUCCESS;
}

/* One dimension of the signal window: size (0 means n) and where it sits in the signal. */
static convgen_status check_window(const convgen_fft_desc *d, int i, int *size, int *at)
{
    if (d->window[i] < 0 || d->window[i] > d->n)
        return BAD("window[%d] = %d must be in 0..n = %d (0 means n)", i, d->window[i], d->n);
    *size = d->window[i] ? d->window[i] : d->n;
    if (d->offset[i] < 0 || d->offset[i] > d->n - *size)
        return BAD("offset[%d] = %d must be in 0..%d: the window of %d must fit n = %d", i, d->offset[i],
                   d->n - *size, *size, d->n);
    *at = d->offset[i];
    return CONVGEN_SUCCESS;
}

/* The signal side: R2C input, C2R output, C2C's signal (forward input, inverse output). */
static convgen_status check_signal_side(cg_fft_problem *p, const convgen_fft_desc *d)
{
    convgen_status s;
    p->d = 1, p->oz = 0, p->h = 1, p->oy = 0, p->planes = 1;
    for (int i = p->rank; i < 3; ++i)
        if (d->window[i] || d->offset[i])
            return BAD("window[%d] = %d, offset[%d] = %d must be 0 for rank %d", i, d->window[i], i, d->offset[i],
                       p->rank);
    if (p->rank < 3 && d->plane_pitch)
        return BAD("plane_pitch = %lld must be 0 for rank %d", (long long)d->plane_pitch, p->rank);
    if (p->rank == 1) {
        if (d->pitch)
            return BAD("pitch = %lld must be 0 for rank 1", (long long)d->pitch);
        p->pitch = 0;
        return check_window(d, 0, &p->w, &p->ox);
    }
    int r = p->rank - 2; /* the row dimension's index */
    if ((r && (s = check_window(d, 0, &p->d, &p->oz)) != CONVGEN_SUCCESS) ||
        (s = check_window(d, r, &p->h, &p->oy)) != CONVGEN_SUCCESS ||
        (s = check_window(d, r + 1, &p->w, &p->ox)) != CONVGEN_SUCCESS)
        return s;
    p->pitch = d->pitch ? d->pitch : p->w;
    if (p->pitch < p->w)
        return BAD("pitch = %lld must be >= window[%d] = %d", (long long)d->pitch, r + 1, p->w);
    if (p->rank < 3)
        return CONVGEN_SUCCESS;
    int64_t plane; /* the extent of one window plane */
    if (!cg_mul64(p->h - 1, p->pitch, &plane) || !cg_add64(plane, p->w, &plane))
        return BAD("pitch = %lld: %d rows of it overflow 64 bits", (long long)p->pitch, p->h);
    if (!d->plane_pitch && !cg_mul64(p->h, p->pitch, &p->plane_pitch))
        return BAD("pitch = %lld: %d rows of it (the default plane_pitch) overflow 64 bits", (long long)p->pitch, p->h);
    if (d->plane_pitch)
        p->plane_pitch = d->plane_pitch;
    if (p->plane_pitch < plane)
        return BAD("plane_pitch = %lld must be >= %lld, the extent of a window plane (%d rows of pitch %lld)",
                   (long long)d->plane_pitch, (long long)plane, p->h, (long long)p->pitch);
    return CONVGEN_SUCCESS;
}

static convgen_status check_layout(cg_fft_problem *p, const convgen_fft_desc *d)
{
    if (d->layout != CONVGEN_FFT_LAYOUT_NATURAL && d->layout != CONVGEN_FFT_LAYOUT_TRANSPOSED)
        return BAD("layout = %d must be CONVGEN_FFT_LAYOUT_NATURAL or _TRANSPOSED", (int)d->layout);
    if (d->order != CONVGEN_FFT_ORDER_NATURAL && d->order != CONVGEN_FFT_ORDER_DIGIT_REVERSED)
        return BAD("order = %d must be CONVGEN_FFT_ORDER_NATURAL or _DIGIT_REVERSED", (int)d->order);
    bool real = p->type != CONVGEN_FFT_C2C;
    if (d->layout == CONVGEN_FFT_LAYOUT_TRANSPOSED && p->rank == 1)
        return BAD("layout = TRANSPOSED is for rank 2 and 3 spectra");
    if (d->order == CONVGEN_FFT_ORDER_DIGIT_REVERSED && real && p->rank == 1)
        return BAD("order = DIGIT_REVERSED: a rank 1 R2C/C2R spectrum has only the half axis, which is natural");
    p->transposed = d->layout == CONVGEN_FFT_LAYOUT_TRANSPOSED;
    p->natural = d->order == CONVGEN_FFT_ORDER_NATURAL;
    if (!isfinite(d->scale))
        return BAD("scale = %g must be finite", (double)d->scale);
    p->scale = d->scale == 0.0f ? 1.0f : d->scale;
    return CONVGEN_SUCCESS;
}

/* Strides of one side: 0 means packed. Outputs of different transforms must not overlap
 * (checked by a sufficient rule: the smaller stride clears one transform, the larger clears
 * all transforms along the smaller one). Returns the side's extent in elements. */
static convgen_status check_strides(const cg_fft_problem *p, const char *name, const int64_t given[2], int64_t extent,
                                    bool output, int64_t stride[2], int64_t *elements)
{
    for (int i = 0; i < 2; ++i)
        if (given[i] < 0)
            return BAD("%s[%d] = %lld must be >= 0 (0 means packed)", name, i, (long long)given[i]);
    stride[1] = given[1] ? given[1] : extent;
    if (!given[0] && !cg_mul64(stride[1], p->channels, &stride[0]))
        return BAD("%s: the packed batch stride overflows 64 bits", name);
    if (given[0])
        stride[0] = given[0];
    int64_t last0, last1, end;
    if (!cg_mul64(p->batch - 1, stride[0], &last0) || !cg_mul64(p->channels - 1, stride[1], &last1) ||
        !cg_add64(last0, last1, &end) || !cg_add64(end, extent, elements))
        return BAD("%s = {%lld, %lld}: the last element's index overflows 64 bits", name, (long long)stride[0],
                   (long long)stride[1]);
    if (!output)
        return CONVGEN_SUCCESS;
    int64_t counts[2] = {p->batch, p->channels}, small = 1, large = 0, reach;
    if (counts[0] > 1 && counts[1] > 1)
        small = stride[0] < stride[1] ? 0 : 1, large = 1 - small;
    else
        small = counts[0] > 1 ? 0 : 1, large = -1;
    if (counts[small] > 1 && stride[small] < extent)
        return BAD("%s[%d] = %lld: output transforms of %lld elements would overlap", name, (int)small,
                   (long long)stride[small], (long long)extent);
    if (large >= 0 && (!cg_mul64(counts[small], stride[small], &reach) || stride[large] < reach))
        return BAD("%s[%d] = %lld: output transforms would overlap (needs >= %lld x %lld)", name, (int)large,
                   (long long)stride[large], (long long)counts[small], (long long)stride[small]);
    return CONVGEN_SUCCESS;
}

convgen_status cg_fft_problem_init(cg_fft_problem *p, const convgen_fft_desc *d)
{
    memset(p, 0, sizeof *p);
    if (!d)
        return BAD("desc is NULL");
    convgen_status s;
    if ((s = check_kind(p, d)) != CONVGEN_SUCCESS || (s = check_count(p, d)) != CONVGEN_SUCCESS ||
        (s = check_signal_side(p, d)) != CONVGEN_SUCCESS || (s = check_layout(p, d)) != CONVGEN_SUCCESS)
        return s;
    /* One transform's extent on each side. The signal window's rows are pitch apart. The inverse
     * writes the signal side, the forward the spectrum. */
    int64_t real_extent, planes_extent;
    if (!cg_mul64(p->h - 1, p->pitch, &real_extent) || !cg_add64(real_extent, p->w, &real_extent))
        return BAD("pitch = %lld: %d rows of it overflow 64 bits", (long long)p->pitch, p->h);
    if (!cg_mul64(p->d - 1, p->plane_pitch, &planes_extent) || !cg_add64(real_extent, planes_extent, &real_extent))
        return BAD("plane_pitch = %lld: %d planes of it overflow 64 bits", (long long)p->plane_pitch, p->d);
    int64_t spectrum_extent = cg_fft_plane_bins(p) * (p->rank == 3 ? p->n : 1);
    bool real_out = p->sign > 0;
    if ((s = check_strides(p, "real_stride", d->real_stride, real_extent, real_out, p->real_stride,
                           &p->real_elements)) != CONVGEN_SUCCESS ||
        (s = check_strides(p, "spectrum_stride", d->spectrum_stride, spectrum_extent, !real_out, p->spectrum_stride,
                           &p->spectrum_elements)) != CONVGEN_SUCCESS)
        return s;
    return CONVGEN_SUCCESS;
}

void cg_fft_problem_describe(const cg_fft_problem *p, char *buf, size_t size)
{
    static const char *const types[] = {"C2C", "R2C", "C2R"};
    int used = snprintf(buf, size, "%s %s %d-D n = %d, %lld transform%s", types[p->type],
                        p->sign < 0 ? "forward" : "inverse", p->rank, p->n, (long long)p->count,
                        p->count > 1 ? "s" : "");
    if (used < 0 || (size_t)used >= size)
        return;
    if (p->plane_stage) /* the planes of rank 3 volumes: batch x channels x planes */
        used += snprintf(buf + used, size - (size_t)used, " (%lld x %lld channels x %d planes)", (long long)p->batch,
                         (long long)p->channels, p->planes);
    else if (p->channels > 1)
        used += snprintf(buf + used, size - (size_t)used, " (%lld x %lld channels)", (long long)p->batch,
                         (long long)p->channels);
    if ((size_t)used < size) {
        if (p->rank == 3)
            snprintf(buf + used, size - (size_t)used, ", window %dx%dx%d at %d,%d,%d", p->d, p->h, p->w, p->oz, p->oy,
                     p->ox);
        else if (p->rank == 2)
            snprintf(buf + used, size - (size_t)used, ", window %dx%d at %d,%d", p->h, p->w, p->oy, p->ox);
        else
            snprintf(buf + used, size - (size_t)used, ", window %d at %d", p->w, p->ox);
    }
    used = (int)strlen(buf);
    if (p->epilogue && (size_t)used < size) /* FFT convolution's C2R into fprop's y */
        snprintf(buf + used, size - (size_t)used, ", stored as y with %s%s%s",
                 p->epilogue & CG_EPILOGUE_BIAS ? "its channel's bias" : "",
                 p->epilogue == CG_EPILOGUE_ALL ? " and " : "", p->epilogue & CG_EPILOGUE_RELU ? "ReLU" : "");
}

static void fft_hash(const void *problem, cg_key *key)
{
    const cg_fft_problem *p = problem;
    uint32_t scale;
    memcpy(&scale, &p->scale, sizeof scale);
    const int64_t v[] = {p->type, p->rank, p->n, p->sign, p->batch, p->channels, p->count, p->d, p->oz, p->h, p->oy,
                         p->w, p->ox, p->pitch, p->plane_pitch, p->planes, p->plane_stride[0], p->plane_stride[1], p->plane_stage, p->depth_stage,
                         p->real_stride[0], p->real_stride[1], p->spectrum_stride[0], p->spectrum_stride[1], p->half,
                         p->transposed, p->natural, scale, p->real_elements, p->spectrum_elements, p->epilogue};
    cg_key_put_dims(key, v, (int)(sizeof v / sizeof v[0]));
}

static void fft_describe(const void *problem, char *buf, size_t size) { cg_fft_problem_describe(problem, buf, size); }

const cg_problem_kind cg_fft_kind = {"fft", fft_hash, fft_describe};
