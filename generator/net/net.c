/* Networks for sliding-window inference (net.h): the file's parser and the patch arithmetic. */
#include "net.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "pool_problem.h"
#include "util.h"

#define NET_EXTENT_LIMIT ((int64_t)1 << 31)

/* "3x3x3" (rank 3) or "3x3" (rank 2) of 1..64 into size[3], depth first (cg_parse_dims); the
 * rank it had, 0 if malformed. */
static int parse_sizes(const char *word, int size[3])
{
    int64_t v[CONVGEN_MAX_RANK];
    int n = cg_parse_dims(word, v);
    for (int i = 0; i < n; ++i)
        n = v[i] >= 1 && v[i] <= 64 ? n : 0;
    if (n < 2)
        return 0;
    size[0] = n == 3 ? (int)v[0] : 1, size[1] = (int)v[n - 2], size[2] = (int)v[n - 1];
    return n;
}

/* Splits a line into at most 4 words, the comment dropped; the count (5: too many). */
static int split_words(char *line, char *words[4])
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int n = 0;
    char *rest = NULL;
    for (char *w = strtok_r(line, " \t\r", &rest); w; w = strtok_r(NULL, " \t\r", &rest))
        if (n < 4)
            words[n++] = w;
        else
            return 5;
    return n;
}

static convgen_status parse_layer(char **words, int n, int line, cg_net *net)
{
    if (net->count == CG_NET_MAX_LAYERS)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: more than %d layers", line, CG_NET_MAX_LAYERS);
    cg_net_layer *L = &net->layers[net->count];
    memset(L, 0, sizeof *L);
    bool conv = strcmp(words[0], "conv") == 0;
    if (!conv && strcmp(words[0], "pool") != 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: '%s' is not input, conv or pool", line, words[0]);
    int want = conv ? 3 : 2;
    if (n != want && !(conv && n == 4 && strcmp(words[3], "relu") == 0))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: %s", line,
                       conv ? "conv takes K, a kernel DxHxW (or HxW) and an optional 'relu'" : "pool takes a window DxHxW (or HxW)");
    if (conv) {
        char *end;
        L->k = strtoll(words[1], &end, 10);
        if (*end || L->k < 1 || L->k > 65536)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: K = '%s' must be 1..65536", line, words[1]);
        L->relu = n == 4;
    }
    L->kind = conv ? CG_NET_CONV : CG_NET_POOL;
    int rank = parse_sizes(words[conv ? 2 : 1], L->size);
    if (!rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: '%s' is no size DxHxW or HxW of 1..64", line, words[conv ? 2 : 1]);
    if (net->rank && rank != net->rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: a rank %d size in a rank %d network", line, rank, net->rank);
    for (int d = 0; !conv && d < 3; ++d) /* what convgen_pool_desc takes */
        if (L->size[d] > CG_POOL_MAX_WINDOW)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: a pooling window of %d along a dimension, more than %d",
                           line, L->size[d], CG_POOL_MAX_WINDOW);
    if (!conv && L->size[0] * L->size[1] * L->size[2] > CG_POOL_MAX_ELEMENTS)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: a pooling window of more than %d elements", line,
                       CG_POOL_MAX_ELEMENTS);
    net->rank = rank;
    net->count++;
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_parse(const char *text, cg_net *net)
{
    memset(net, 0, sizeof *net);
    if (!text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "text is NULL");
    convgen_status s = CONVGEN_SUCCESS;
    int line = 0;
    for (const char *at = text; *at && s == CONVGEN_SUCCESS;) {
        size_t len = strcspn(at, "\n");
        char buf[256], *words[4];
        ++line;
        if (len >= sizeof buf)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: longer than %zu characters", line, sizeof buf - 1);
        memcpy(buf, at, len), buf[len] = '\0';
        at += len + (at[len] == '\n');
        int n = split_words(buf, words);
        if (n == 0)
            continue;
        if (n == 5)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: more than 4 words", line);
        if (strcmp(words[0], "input") == 0) {
            char *end = NULL;
            if (net->c)
                return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: a second 'input C' line", line);
            net->c = n == 2 ? strtoll(words[1], &end, 10) : 0;
            if (net->c < 1 || net->c > 65536 || *end)
                return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: 'input C' takes C of 1..65536", line);
        } else if (!net->c) {
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "line %d: the first line must be 'input C'", line);
        } else {
            s = parse_layer(words, n, line, net);
        }
    }
    if (s == CONVGEN_SUCCESS && (!net->c || !net->count))
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "the network has %s", net->c ? "no layers" : "no 'input C' line");
    if (s == CONVGEN_SUCCESS && net->layers[net->count - 1].kind != CG_NET_CONV)
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "the last layer is a pooling: a network ends with a convolution");
    return s;
}

/* A size as the file writes it: DxHxW, or HxW at rank 2. */
static int size_text(const cg_net *net, const int size[3], char *buf, size_t room)
{
    return net->rank == 3 ? snprintf(buf, room, "%dx%dx%d", size[0], size[1], size[2])
                          : snprintf(buf, room, "%dx%d", size[1], size[2]);
}

bool cg_net_text(const cg_net *net, char *buf, size_t size)
{
    size_t at = (size_t)snprintf(buf, size, "input %lld", (long long)net->c);
    for (int i = 0; i < net->count && at < size; ++i) {
        const cg_net_layer *L = &net->layers[i];
        char sizes[48];
        size_text(net, L->size, sizes, sizeof sizes);
        at += L->kind == CG_NET_CONV
                  ? (size_t)snprintf(buf + at, size - at, "; conv %lld %s%s", (long long)L->k, sizes, L->relu ? " relu" : "")
                  : (size_t)snprintf(buf + at, size - at, "; pool %s", sizes);
    }
    return at < size;
}

void cg_net_field_of_view(const cg_net *net, int64_t fov[3])
{
    for (int d = 0; d < 3; ++d) {
        int64_t stride = 1;
        fov[d] = 1;
        for (int i = 0; i < net->count; ++i) {
            fov[d] += (net->layers[i].size[d] - 1) * stride;
            if (net->layers[i].kind == CG_NET_POOL)
                stride *= net->layers[i].size[d];
        }
    }
}

/* The tensors of the patch, forward from its input: a convolution takes size - 1 and sets the
 * channels; a pooling multiplies the batch by its fragments and takes (e - p + 1) / p. Fails,
 * naming the layer, where a tensor's elements pass 2^62. */
static convgen_status forward_shapes(const cg_net *net, cg_net_patch *patch)
{
    cg_net_tensor t = {.batch = 1, .c = net->c};
    memcpy(t.ext, patch->in, sizeof t.ext);
    patch->shape[0] = t;
    for (int i = 0; i < net->count; ++i) {
        const cg_net_layer *L = &net->layers[i];
        for (int d = 0; d < 3; ++d)
            t.ext[d] = L->kind == CG_NET_CONV ? t.ext[d] - L->size[d] + 1 : (t.ext[d] - L->size[d] + 1) / L->size[d];
        if (L->kind == CG_NET_CONV)
            t.c = L->k;
        int64_t elems;
        if ((L->kind == CG_NET_POOL && !cg_mul64(t.batch, (int64_t)L->size[0] * L->size[1] * L->size[2], &t.batch)) ||
            !cg_mul64(t.batch, t.c, &elems) || !cg_mul64(elems, t.ext[0] * t.ext[1], &elems) ||
            !cg_mul64(elems, t.ext[2], &elems) || elems > ((int64_t)1 << 62))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer %d's output: more than 2^62 elements", i + 1);
        patch->shape[i + 1] = t;
    }
    return CONVGEN_SUCCESS;
}

convgen_status cg_net_patch_of(const cg_net *net, const int64_t m[3], cg_net_patch *patch)
{
    memset(patch, 0, sizeof *patch);
    for (int d = 0; d < 3; ++d) {
        if (m[d] < 1 || (net->rank == 2 && d == 0 && m[d] != 1))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "m[%d] = %lld must be %s", d, (long long)m[d],
                           net->rank == 2 && d == 0 ? "1 (a rank 2 network's depth)" : ">= 1");
        int64_t e = m[d], stride = 1;
        for (int i = net->count - 1; i >= 0 && e < NET_EXTENT_LIMIT; --i) {
            int64_t s = net->layers[i].size[d];
            e = net->layers[i].kind == CG_NET_CONV ? e + s - 1 : s * e + s - 1;
            stride *= net->layers[i].kind == CG_NET_POOL ? s : 1;
        }
        if (e >= NET_EXTENT_LIMIT)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "m[%d] = %lld: the input patch passes 2^31 voxels a side", d,
                           (long long)m[d]);
        patch->in[d] = e, patch->m[d] = m[d], patch->stride[d] = stride, patch->out[d] = m[d] * stride;
    }
    return forward_shapes(net, patch);
}

int64_t cg_net_weight_count(const cg_net *net, int i)
{
    if (i < 0 || i >= net->count || net->layers[i].kind != CG_NET_CONV)
        return 0;
    int64_t c = net->c;
    for (int j = 0; j < i; ++j)
        c = net->layers[j].kind == CG_NET_CONV ? net->layers[j].k : c;
    const cg_net_layer *l = &net->layers[i];
    return l->k * c * l->size[0] * l->size[1] * l->size[2];
}

double cg_net_patch_macs(const cg_net *net, const cg_net_patch *patch)
{
    double macs = 0;
    for (int i = 0; i < net->count; ++i) {
        const cg_net_tensor *out = &patch->shape[i + 1];
        if (net->layers[i].kind == CG_NET_CONV)
            macs += (double)out->batch * (double)out->c * (double)(out->ext[0] * out->ext[1] * out->ext[2]) *
                    (double)cg_net_weight_count(net, i) / (double)net->layers[i].k;
    }
    return macs;
}

void cg_net_dense_position(const cg_net *net, int64_t b, const int64_t j[3], int64_t pos[3])
{
    /* b = f_L B_{L-1} + b_{L-1}, B_i the batch after i poolings: peel the last pooling's
     * fragment first, and fold its offset outside the positions of the poolings after it */
    const int *pool[CG_NET_MAX_LAYERS];
    int64_t below[CG_NET_MAX_LAYERS + 1] = {1};
    int count = 0;
    for (int i = 0; i < net->count; ++i)
        if (net->layers[i].kind == CG_NET_POOL) {
            pool[count] = net->layers[i].size;
            below[count + 1] = below[count] * pool[count][0] * pool[count][1] * pool[count][2];
            ++count;
        }
    for (int d = 0; d < 3; ++d)
        pos[d] = j[d];
    for (int i = count - 1; i >= 0; --i) {
        const int *p = pool[i];
        int64_t f = b / below[i];
        b %= below[i];
        const int64_t o[3] = {f / (p[1] * p[2]), f / p[2] % p[1], f % p[2]};
        for (int d = 0; d < 3; ++d)
            pos[d] = o[d] + p[d] * pos[d];
    }
}

convgen_status cg_net_place_fragments(const cg_net *net, const cg_net_patch *p, const float *src, float *y,
                                      const int64_t out[3], const int64_t origin[3])
{
    const cg_net_tensor *t = &p->shape[net->count];
    const int64_t *S = p->stride, *m = t->ext, zero[3] = {0, 0, 0};
    /* The fragment whose voxels lie at each offset in the stride's box: a dense row (k, z, r)
     * takes its voxels from the S[2] fragments of its depth and height offsets, so the rows
     * are written one at a time, from S[2] rows read in order. */
    int64_t *at = malloc(sizeof *at * (size_t)t->batch);
    if (!at)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory placing a patch's fragments");
    for (int64_t b = 0; b < t->batch; ++b) {
        int64_t pos[3];
        cg_net_dense_position(net, b, zero, pos);
        at[(pos[0] * S[1] + pos[1]) * S[2] + pos[2]] = b;
    }
    int64_t inside[3]; /* a patch past the volume's edge places only what lies inside out */
    for (int d = 0; d < 3; ++d)
        inside[d] = cg_net_inside(p->out[d], origin[d], out[d]);
    for (int64_t k = 0; k < t->c; ++k)
        for (int64_t z = 0; z < inside[0]; ++z)
            for (int64_t r = 0; r < inside[1]; ++r) {
                float *row = y + ((k * out[0] + origin[0] + z) * out[1] + origin[1] + r) * out[2] + origin[2];
                for (int64_t o = 0; o < S[2]; ++o) {
                    int64_t b = at[(z % S[0] * S[1] + r % S[1]) * S[2] + o];
                    const float *from = src + (((b * t->c + k) * m[0] + z / S[0]) * m[1] + r / S[1]) * m[2];
                    for (int64_t j = 0; j < m[2] && o + S[2] * j < inside[2]; ++j)
                        row[o + S[2] * j] = from[j];
                }
            }
    free(at);
    return CONVGEN_SUCCESS;
}
