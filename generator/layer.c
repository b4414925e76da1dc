#include "layer.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static bool parse_int(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end)
        return false;
    *v = x;
    return true;
}

int cg_parse_dims(const char *text, int64_t out[CONVGEN_MAX_RANK])
{
    int rank = 0;
    const char *p = text;
    while (*p) {
        if (rank == CONVGEN_MAX_RANK || !isdigit((unsigned char)*p))
            return 0;
        char *end;
        errno = 0;
        long long x = strtoll(p, &end, 10);
        if (errno)
            return 0;
        out[rank++] = x;
        if (*end == 'x' && end[1])
            p = end + 1;
        else if (*end == '\0')
            p = end;
        else
            return 0;
    }
    return rank;
}

static bool is_number(const char *s)
{
    return isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]));
}

convgen_status cg_layer_parse_words(const char *const *words, int count, cg_layer *layer, int *used)
{
    memset(layer, 0, sizeof *layer);
    int at = 0;
    if (count > 0 && !is_number(words[0]))
        snprintf(layer->name, sizeof layer->name, "%s", words[at++]);
    if (count - at < 7)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "a layer needs n c k input kernel pad stride (7 words after the name), got %d", count - at);
    convgen_conv_desc *d = &layer->desc;
    const char *what[] = {"n", "c", "k"};
    int64_t *nck[] = {&d->n, &d->c, &d->k};
    for (int i = 0; i < 3; ++i, ++at)
        if (!parse_int(words[at], nck[i]))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer %s = '%s' is not an integer", what[i], words[at]);
    int64_t kernel[CONVGEN_MAX_RANK];
    d->rank = cg_parse_dims(words[at], d->in);
    if (!d->rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer input = '%s' is not HxW, DxHxW or W", words[at]);
    int krank = cg_parse_dims(words[++at], kernel);
    if (krank != d->rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer kernel = '%s' must have %d dimensions like the input",
                       words[at], d->rank);
    int64_t pad, stride;
    if (!parse_int(words[++at], &pad))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer pad = '%s' is not an integer", words[at]);
    if (!parse_int(words[++at], &stride))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer stride = '%s' is not an integer", words[at]);
    for (int i = 0; i < d->rank; ++i) {
        d->kernel[i] = kernel[i];
        d->pad_before[i] = d->pad_after[i] = pad;
        d->stride[i] = stride;
        d->dilation[i] = 1;
    }
    *used = at + 1;
    return CONVGEN_SUCCESS;
}

#define MAX_WORDS 64

convgen_status cg_layer_parse_line(const char *line, cg_layer *layer, int *is_layer)
{
    char copy[1024];
    snprintf(copy, sizeof copy, "%s", line);
    char *hash = strchr(copy, '#');
    if (hash)
        *hash = '\0';
    const char *words[MAX_WORDS];
    int count = 0;
    for (char *tok = strtok(copy, " \t\r\n"); tok && count < MAX_WORDS; tok = strtok(NULL, " \t\r\n"))
        words[count++] = tok;
    *is_layer = count > 0;
    if (!count)
        return CONVGEN_SUCCESS;
    int used;
    convgen_status s = cg_layer_parse_words(words, count, layer, &used);
    if (s != CONVGEN_SUCCESS)
        return s;
    for (int i = used; i < count; ++i) {
        size_t len = strlen(layer->note);
        snprintf(layer->note + len, sizeof layer->note - len, "%s%s", len ? " " : "", words[i]);
    }
    return CONVGEN_SUCCESS;
}

convgen_status cg_layer_read_file(const char *path, cg_layer **layers, int *count)
{
    *layers = NULL;
    *count = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return cg_fail(CONVGEN_ERROR_IO, "cannot open layer file %s: %s", path, strerror(errno));
    char line[1024];
    int lineno = 0, cap = 0;
    convgen_status s = CONVGEN_SUCCESS;
    while (s == CONVGEN_SUCCESS && fgets(line, sizeof line, f)) {
        ++lineno;
        cg_layer layer;
        int is_layer;
        s = cg_layer_parse_line(line, &layer, &is_layer);
        if (s != CONVGEN_SUCCESS) {
            char why[512];
            snprintf(why, sizeof why, "%s", convgen_last_error());
            s = cg_fail(s, "%s:%d: %s", path, lineno, why);
        } else if (is_layer) {
            if (*count == cap) {
                cap = cap ? 2 * cap : 32;
                cg_layer *grown = realloc(*layers, (size_t)cap * sizeof *grown);
                if (!grown) {
                    s = cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory reading %s", path);
                    break;
                }
                *layers = grown;
            }
            (*layers)[(*count)++] = layer;
        }
    }
    fclose(f);
    if (s != CONVGEN_SUCCESS) {
        free(*layers);
        *layers = NULL;
        *count = 0;
    }
    return s;
}
