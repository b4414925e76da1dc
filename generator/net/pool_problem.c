/* Pooling problems (pool_problem.h): the descriptor's checks and the output's shape. */
#include "pool_problem.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* Kernels index a volume's elements and the grid's blocks in 32 bits, with magic divisions
 * that hold below 2^31. */
#define POOL_INDEX_LIMIT ((int64_t)1 << 31)

static convgen_status check_counts(const convgen_pool_desc *d)
{
    if (d->mode != CONVGEN_POOL_MAX && d->mode != CONVGEN_POOL_FRAGMENTS && d->mode != CONVGEN_POOL_INTERLEAVE)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "mode = %d is not CONVGEN_POOL_MAX, CONVGEN_POOL_FRAGMENTS or "
                       "CONVGEN_POOL_INTERLEAVE", (int)d->mode);
    if (d->rank != 2 && d->rank != 3)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "rank = %d must be 2 or 3", d->rank);
    if (d->n < 1)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "n = %lld must be >= 1", (long long)d->n);
    if (d->c < 1)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "c = %lld must be >= 1", (long long)d->c);
    return CONVGEN_SUCCESS;
}

/* One dimension's extents: the window fits the input (FRAGMENTS: at its last offset too). */
static convgen_status check_dimension(const convgen_pool_desc *d, int i, int64_t *out)
{
    if (d->window[i] < 1 || d->window[i] > CG_POOL_MAX_WINDOW)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "window[%d] = %d must be 1..%d", i, d->window[i], CG_POOL_MAX_WINDOW);
    int64_t p = d->window[i], need = d->mode == CONVGEN_POOL_FRAGMENTS ? 2 * p - 1 : d->mode == CONVGEN_POOL_MAX ? p : 1;
    if (d->mode == CONVGEN_POOL_INTERLEAVE && (d->in[i] < 1 || d->in[i] >= POOL_INDEX_LIMIT / p))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in[%d] = %lld must be 1..%lld for window[%d] = %lld (out = in * p)",
                       i, (long long)d->in[i], (long long)(POOL_INDEX_LIMIT / p - 1), i, (long long)p);
    if (d->mode == CONVGEN_POOL_INTERLEAVE)
        return *out = d->in[i] * p, CONVGEN_SUCCESS;
    if (d->in[i] < need || d->in[i] >= POOL_INDEX_LIMIT)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in[%d] = %lld must be %lld..%lld for window[%d] = %lld%s", i,
                       (long long)d->in[i], (long long)need, (long long)POOL_INDEX_LIMIT - 1, i, (long long)p,
                       d->mode == CONVGEN_POOL_FRAGMENTS ? " (every fragment, at every offset, needs a window)" : "");
    *out = d->mode == CONVGEN_POOL_FRAGMENTS ? (d->in[i] - p + 1) / p : d->in[i] / p;
    return CONVGEN_SUCCESS;
}

void cg_pool_dims_text(const cg_pool_problem *p, const int64_t v[3], char *buf, size_t size)
{
    buf[0] = '\0';
    for (int i = 3 - p->rank; i < 3; ++i)
        snprintf(buf + strlen(buf), size - strlen(buf), "%s%lld", i > 3 - p->rank ? "x" : "", (long long)v[i]);
}

/* in_volume, out_volume and volumes under the kernels' 32-bit limits; n c in_volume in 64 bits. */
static convgen_status check_sizes(cg_pool_problem *p)
{
    char in[64];
    cg_pool_dims_text(p, p->in, in, sizeof in);
    int64_t window = (int64_t)p->window[0] * p->window[1] * p->window[2];
    if (window > CG_POOL_MAX_ELEMENTS)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "window: %lld elements, more than %d", (long long)window,
                       CG_POOL_MAX_ELEMENTS);
    p->fragments = p->mode != CONVGEN_POOL_MAX ? (int)window : 1;
    int64_t in_volume, out_volume, volumes, all_in, chunks;
    if (!cg_mul64(p->in[0], p->in[1], &in_volume) || !cg_mul64(in_volume, p->in[2], &in_volume) ||
        in_volume >= POOL_INDEX_LIMIT)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in = %s: a volume of 2^31 elements or more", in);
    if (!cg_mul64(p->out[0], p->out[1], &out_volume) || !cg_mul64(out_volume, p->out[2], &out_volume) ||
        out_volume >= POOL_INDEX_LIMIT)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "in = %s times the window: a volume of 2^31 elements or more", in);
    /* x's elements: INTERLEAVE's holds the fragments, f n c volumes */
    if (!cg_mul64(p->n, p->c, &volumes) || !cg_mul64(volumes, in_volume, &all_in) ||
        !cg_mul64(all_in, p->mode == CONVGEN_POOL_INTERLEAVE ? window : 1, &all_in))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "n * c * in = %lld * %lld * %lld elements overflow 64 bits",
                       (long long)p->n, (long long)p->c, (long long)in_volume);
    chunks = (out_volume + 255) / 256;
    if (!cg_mul64(volumes, p->mode == CONVGEN_POOL_FRAGMENTS ? p->fragments : 1, &volumes) ||
        volumes >= POOL_INDEX_LIMIT / chunks)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "n * c = %lld * %lld volumes%s of %lld outputs: a grid of 2^31 "
                       "blocks or more; pool fewer at a time", (long long)p->n, (long long)p->c,
                       p->mode == CONVGEN_POOL_FRAGMENTS ? " times the fragments" : "", (long long)out_volume);
    p->in_volume = in_volume, p->out_volume = out_volume, p->volumes = volumes;
    return CONVGEN_SUCCESS;
}

convgen_status cg_pool_problem_init(cg_pool_problem *p, const convgen_pool_desc *d)
{
    memset(p, 0, sizeof *p);
    if (!d)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "desc is NULL");
    convgen_status s = check_counts(d);
    if (s != CONVGEN_SUCCESS)
        return s;
    p->mode = d->mode, p->rank = d->rank, p->n = d->n, p->c = d->c;
    p->in[0] = p->out[0] = 1, p->window[0] = 1;
    for (int i = 0; i < d->rank; ++i) {
        int at = 3 - d->rank + i;
        if ((s = check_dimension(d, i, &p->out[at])) != CONVGEN_SUCCESS)
            return s;
        p->in[at] = d->in[i], p->window[at] = d->window[i];
    }
    return check_sizes(p);
}

void cg_pool_problem_describe(const cg_pool_problem *p, char *buf, size_t size)
{
    const int64_t w[3] = {p->window[0], p->window[1], p->window[2]};
    char in[64], out[64], window[64];
    cg_pool_dims_text(p, p->in, in, sizeof in);
    cg_pool_dims_text(p, p->out, out, sizeof out);
    cg_pool_dims_text(p, w, window, sizeof window);
    if (p->mode == CONVGEN_POOL_FRAGMENTS)
        snprintf(buf, size, "max-pooling fragments %s of %lld x %lld x %s -> %d fragments x %lld x %lld x %s", window,
                 (long long)p->n, (long long)p->c, in, p->fragments, (long long)p->n, (long long)p->c, out);
    else if (p->mode == CONVGEN_POOL_INTERLEAVE)
        snprintf(buf, size, "fragments %s interleaved: %d fragments x %lld x %lld x %s -> %lld x %lld x %s", window,
                 p->fragments, (long long)p->n, (long long)p->c, in, (long long)p->n, (long long)p->c, out);
    else
        snprintf(buf, size, "max pooling %s of %lld x %lld x %s -> %s", window, (long long)p->n, (long long)p->c, in,
                 out);
}

static void pool_hash(const void *problem, cg_key *key)
{
    const cg_pool_problem *p = problem;
    cg_key_put_i64(key, p->mode);
    cg_key_put_i64(key, p->rank);
    cg_key_put_i64(key, p->n);
    cg_key_put_i64(key, p->c);
    cg_key_put_dims(key, p->in, 3);
    for (int i = 0; i < 3; ++i)
        cg_key_put_i64(key, p->window[i]);
}

static void pool_describe(const void *problem, char *buf, size_t size) { cg_pool_problem_describe(problem, buf, size); }

const cg_problem_kind cg_pool_kind = {"pool", pool_hash, pool_describe};
