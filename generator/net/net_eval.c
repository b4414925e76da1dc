/* The CPU's evaluations of a network (net.h), in float64, for the tests: the dense definition
 * and the max-pooling-fragment path the executor takes, which must agree voxel for voxel. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net.h"
#include "util.h"

/* A batch of volumes [batch][c][e0][e1][e2]. */
typedef struct volumes {
    int64_t batch, c, e[3];
    double *v;
} volumes;

static int64_t extent(const volumes *t) { return t->e[0] * t->e[1] * t->e[2]; }

static bool alloc_volumes(volumes *t, int64_t batch, int64_t c, const int64_t e[3])
{
    t->batch = batch, t->c = c;
    memcpy(t->e, e, sizeof t->e);
    t->v = malloc(sizeof *t->v * (size_t)(batch * c * extent(t)));
    return t->v != NULL;
}

static double *at(const volumes *t, int64_t b, int64_t c, int64_t z, int64_t y, int64_t x)
{
    return t->v + (((b * t->c + c) * t->e[0] + z) * t->e[1] + y) * t->e[2] + x;
}

/* Valid cross-correlation with taps dil[d] apart, plus bias, then ReLU where the layer says. */
static bool convolve(const cg_net_layer *L, const double *w, const double *bias, const int64_t dil[3],
                     const volumes *in, volumes *out)
{
    int64_t e[3];
    for (int d = 0; d < 3; ++d)
        e[d] = in->e[d] - dil[d] * (L->size[d] - 1);
    if (!alloc_volumes(out, in->batch, L->k, e))
        return false;
    const int *s = L->size;
    for (int64_t b = 0; b < in->batch; ++b)
        for (int64_t k = 0; k < L->k; ++k)
            for (int64_t z = 0; z < e[0]; ++z)
                for (int64_t y = 0; y < e[1]; ++y)
                    for (int64_t x = 0; x < e[2]; ++x) {
                        double sum = bias[k];
                        for (int64_t c = 0; c < in->c; ++c)
                            for (int i = 0; i < s[0]; ++i)
                                for (int j = 0; j < s[1]; ++j)
                                    for (int l = 0; l < s[2]; ++l)
                                        sum += w[(((k * in->c + c) * s[0] + i) * s[1] + j) * s[2] + l] *
                                               *at(in, b, c, z + dil[0] * i, y + dil[1] * j, x + dil[2] * l);
                        *at(out, b, k, z, y, x) = L->relu && sum < 0 ? 0 : sum;
                    }
    return true;
}

/* The maximum over the window at (z, y, x) of entry (b, c), its elements dil[d] apart. */
static double window_max(const volumes *in, const int *p, const int64_t dil[3], int64_t b, int64_t c, int64_t z,
                         int64_t y, int64_t x)
{
    double m = -INFINITY;
    for (int i = 0; i < p[0]; ++i)
        for (int j = 0; j < p[1]; ++j)
            for (int l = 0; l < p[2]; ++l)
                m = fmax(m, *at(in, b, c, z + dil[0] * i, y + dil[1] * j, x + dil[2] * l));
    return m;
}

/* Max pooling of stride step[d], its window's elements dil[d] apart: the dense form (step 1,
 * dil the windows of the poolings before) or the trained network's (step p, dil 1; rounded down). */
static bool pool_window(const cg_net_layer *L, const int64_t dil[3], const int64_t step[3], const volumes *in,
                        volumes *out)
{
    int64_t e[3];
    for (int d = 0; d < 3; ++d)
        e[d] = (in->e[d] - dil[d] * (L->size[d] - 1) - 1) / step[d] + 1;
    if (!alloc_volumes(out, in->batch, in->c, e))
        return false;
    for (int64_t b = 0; b < in->batch; ++b)
        for (int64_t c = 0; c < in->c; ++c)
            for (int64_t z = 0; z < e[0]; ++z)
                for (int64_t y = 0; y < e[1]; ++y)
                    for (int64_t x = 0; x < e[2]; ++x)
                        *at(out, b, c, z, y, x) = window_max(in, L->size, dil, b, c, step[0] * z, step[1] * y, step[2] * x);
    return true;
}

/* Max-pooling fragments: fragment f = (oz p1 + oy) p2 + ox of entry b becomes entry f B + b. */
static bool pool_fragments(const cg_net_layer *L, const volumes *in, volumes *out)
{
    const int *p = L->size;
    const int64_t one[3] = {1, 1, 1};
    int64_t e[3], fragments = (int64_t)p[0] * p[1] * p[2];
    for (int d = 0; d < 3; ++d)
        e[d] = (in->e[d] - p[d] + 1) / p[d];
    if (!alloc_volumes(out, fragments * in->batch, in->c, e))
        return false;
    for (int64_t f = 0; f < fragments; ++f)
        for (int64_t b = 0; b < in->batch; ++b)
            for (int64_t c = 0; c < in->c; ++c)
                for (int64_t z = 0; z < e[0]; ++z)
                    for (int64_t y = 0; y < e[1]; ++y)
                        for (int64_t x = 0; x < e[2]; ++x)
                            *at(out, f * in->batch + b, c, z, y, x) =
                                window_max(in, p, one, b, c, f / (p[1] * p[2]) + p[0] * z, f / p[2] % p[1] + p[1] * y,
                                           f % p[2] + p[2] * x);
    return true;
}

typedef enum { DENSE, FRAGMENTS, PLAIN } evaluation;

static bool pool_layer(const cg_net_layer *L, evaluation how, const int64_t dil[3], const volumes *in, volumes *out)
{
    const int64_t one[3] = {1, 1, 1}, window[3] = {L->size[0], L->size[1], L->size[2]};
    return how == FRAGMENTS ? pool_fragments(L, in, out)
           : how == PLAIN   ? pool_window(L, one, window, in, out)
                            : pool_window(L, dil, one, in, out);
}

/* Runs the layers from x [C][ext]: dense (dilated, stride-1 poolings), by fragments, or plain. */
static convgen_status run_layers(const cg_net *net, const cg_net_weights *wt, const double *x, const int64_t ext[3],
                                 evaluation how, volumes *result)
{
    volumes t;
    if (!alloc_volumes(&t, 1, net->c, ext))
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for the network's input");
    memcpy(t.v, x, sizeof *t.v * (size_t)(net->c * extent(&t)));
    const int64_t one[3] = {1, 1, 1};
    int64_t dil[3] = {1, 1, 1};
    for (int i = 0; i < net->count; ++i) {
        const cg_net_layer *L = &net->layers[i];
        volumes next;
        bool ok = L->kind == CG_NET_CONV ? convolve(L, wt->w[i], wt->bias[i], how == DENSE ? dil : one, &t, &next)
                                         : pool_layer(L, how, dil, &t, &next);
        free(t.v);
        if (!ok)
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for layer %d's output", i);
        for (int d = 0; L->kind == CG_NET_POOL && how == DENSE && d < 3; ++d)
            dil[d] *= L->size[d];
        t = next;
    }
    *result = t;
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_eval_dense(const cg_net *net, const cg_net_weights *wt, const double *x, const int64_t ext[3],
                                 double *y)
{
    int64_t fov[3];
    cg_net_field_of_view(net, fov);
    for (int d = 0; d < 3; ++d)
        if (ext[d] < fov[d])
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "ext[%d] = %lld is less than the field of view, %lld", d,
                           (long long)ext[d], (long long)fov[d]);
    volumes t;
    convgen_status s = run_layers(net, wt, x, ext, DENSE, &t);
    if (s != CONVGEN_SUCCESS)
        return s;
    memcpy(y, t.v, sizeof *y * (size_t)(t.c * extent(&t)));
    free(t.v);
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_eval_fragments(const cg_net *net, const cg_net_weights *wt, const cg_net_patch *patch,
                                     const double *x, double *y)
{
    volumes t;
    convgen_status s = run_layers(net, wt, x, patch->in, FRAGMENTS, &t);
    if (s != CONVGEN_SUCCESS)
        return s;
    for (int64_t b = 0; b < t.batch; ++b)
        for (int64_t c = 0; c < t.c; ++c)
            for (int64_t z = 0; z < t.e[0]; ++z)
                for (int64_t r = 0; r < t.e[1]; ++r)
                    for (int64_t w = 0; w < t.e[2]; ++w) {
                        const int64_t j[3] = {z, r, w};
                        int64_t pos[3];
                        cg_net_dense_position(net, b, j, pos);
                        y[((c * patch->out[0] + pos[0]) * patch->out[1] + pos[1]) * patch->out[2] + pos[2]] =
                            *at(&t, b, c, z, r, w);
                    }
    free(t.v);
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_eval_window(const cg_net *net, const cg_net_weights *wt, const double *x, double *y)
{
    int64_t fov[3];
    cg_net_field_of_view(net, fov);
    volumes t;
    convgen_status s = run_layers(net, wt, x, fov, PLAIN, &t);
    if (s != CONVGEN_SUCCESS)
        return s;
    if (extent(&t) != 1) {
        free(t.v);
        return cg_fail(CONVGEN_ERROR_INTERNAL, "the field of view gave %lldx%lldx%lld outputs, not one", (long long)t.e[0],
                       (long long)t.e[1], (long long)t.e[2]);
    }
    memcpy(y, t.v, sizeof *y * (size_t)t.c);
    free(t.v);
    return CONVGEN_SUCCESS;
}
