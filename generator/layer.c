#include "layer.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A layer file is read whole, so a device or a runaway file cannot hang or fill the reader. */
#define LAYER_FILE_MAX ((size_t)16 << 20)
#define MAX_WORDS 64
#define SIZE_MAX_WORD INT32_MAX /* every size and count of a layer */

bool cg_parse_integer(const char *text, int64_t min, int64_t max, int64_t *out)
{
    /* strtoll alone takes leading blanks, a '+', and wraps nothing but says ERANGE only to
     * those who ask: digits with an optional '-', nothing else, in range. */
    const char *digits = text[0] == '-' ? text + 1 : text;
    if (!isdigit((unsigned char)digits[0]))
        return false;
    char *end;
    errno = 0;
    long long x = strtoll(text, &end, 10);
    if (errno == ERANGE || *end || x < min || x > max)
        return false;
    *out = x;
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

/* Names become file names (convgen generate writes <name>_<algo>_<pass>.cu): an identifier of
 * letters, digits, '_', '-' and '.' that starts with a letter or '_' (a digit would read as n, a
 * '-' as an option, a '.' as a hidden file), and fits cg_layer.name whole. */
static convgen_status set_name(cg_layer *layer, const char *name)
{
    size_t len = strlen(name);
    if (len >= sizeof layer->name)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer name '%s' is longer than %zu characters", name,
                       sizeof layer->name - 1);
    bool ok = isalpha((unsigned char)name[0]) || name[0] == '_';
    for (size_t i = 0; i < len && ok; ++i)
        ok = isalnum((unsigned char)name[i]) || strchr("_-.", name[i]);
    if (!ok)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer name '%s' must be letters, digits, '_', '-' and '.', "
                       "starting with a letter or '_'", name);
    memcpy(layer->name, name, len + 1);
    return CONVGEN_SUCCESS;
}

static convgen_status parse_number(const char *what, const char *word, int64_t min, int64_t *out)
{
    if (!cg_parse_integer(word, min, SIZE_MAX_WORD, out))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer %s = '%s' must be an integer from %lld to %d", what, word,
                       (long long)min, SIZE_MAX_WORD);
    return CONVGEN_SUCCESS;
}

/* "HxW" (or W, DxHxW) sizes from 1 to SIZE_MAX_WORD; rank 0 if malformed. */
static int parse_sizes(const char *word, int64_t out[CONVGEN_MAX_RANK])
{
    int rank = cg_parse_dims(word, out);
    for (int i = 0; i < rank; ++i)
        if (out[i] < 1 || out[i] > SIZE_MAX_WORD)
            return 0;
    return rank;
}

static convgen_status parse_shape(const char *const *words, convgen_conv_desc *d)
{
    int64_t kernel[CONVGEN_MAX_RANK];
    d->rank = parse_sizes(words[0], d->in);
    if (!d->rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer input = '%s' must be W, HxW or DxHxW, sizes from 1 to %d",
                       words[0], SIZE_MAX_WORD);
    if (parse_sizes(words[1], kernel) != d->rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer kernel = '%s' must have %d dimensions like the input, "
                       "sizes from 1 to %d", words[1], d->rank, SIZE_MAX_WORD);
    int64_t pad, stride;
    convgen_status s = parse_number("pad", words[2], 0, &pad);
    if (s == CONVGEN_SUCCESS)
        s = parse_number("stride", words[3], 1, &stride);
    for (int i = 0; i < d->rank && s == CONVGEN_SUCCESS; ++i) {
        d->kernel[i] = kernel[i];
        d->pad_before[i] = d->pad_after[i] = pad;
        d->stride[i] = stride;
        d->dilation[i] = 1;
    }
    return s;
}

convgen_status cg_layer_parse_words(const char *const *words, int count, cg_layer *layer, int *used)
{
    memset(layer, 0, sizeof *layer);
    int at = 0;
    convgen_status s = CONVGEN_SUCCESS;
    if (count > 0 && !is_number(words[0]) && (s = set_name(layer, words[at++])) != CONVGEN_SUCCESS)
        return s;
    if (count - at < 7)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "a layer needs n c k input kernel pad stride (7 words after the name), got %d", count - at);
    convgen_conv_desc *d = &layer->desc;
    const char *what[] = {"n", "c", "k"};
    int64_t *nck[] = {&d->n, &d->c, &d->k};
    for (int i = 0; i < 3 && s == CONVGEN_SUCCESS; ++i, ++at)
        s = parse_number(what[i], words[at], 1, nck[i]);
    if (s == CONVGEN_SUCCESS)
        s = parse_shape(words + at, d);
    *used = at + 4;
    return s;
}

/* The words after the layer, joined by single spaces: whole, or an error. */
static convgen_status set_note(cg_layer *layer, const char *const *words, int count)
{
    for (int i = 0; i < count; ++i) {
        size_t len = strlen(layer->note), add = strlen(words[i]);
        if (len + (len > 0) + add >= sizeof layer->note)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "layer %s: the note after stride is longer than %zu characters",
                           layer->name, sizeof layer->note - 1);
        if (len > 0)
            layer->note[len++] = ' ';
        memcpy(layer->note + len, words[i], add + 1);
    }
    return CONVGEN_SUCCESS;
}

/* Splits `line` (modified) into words, up to '#'; -1 past MAX_WORDS. */
static int split_words(char *line, const char *words[MAX_WORDS])
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    int count = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok; tok = strtok(NULL, " \t\r\n")) {
        if (count == MAX_WORDS)
            return -1;
        words[count++] = tok;
    }
    return count;
}

convgen_status cg_layer_parse_line(const char *line, cg_layer *layer, int *is_layer)
{
    char *copy = strdup(line);
    if (!copy)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory parsing a layer line");
    const char *words[MAX_WORDS];
    int count = split_words(copy, words), used;
    *is_layer = count != 0;
    convgen_status s = CONVGEN_SUCCESS;
    if (count < 0)
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "a layer line has more than %d words", MAX_WORDS);
    else if (count > 0 && (s = cg_layer_parse_words(words, count, layer, &used)) == CONVGEN_SUCCESS)
        s = set_note(layer, words + used, count - used);
    free(copy);
    return s;
}

static convgen_status add_layer(cg_layer **layers, int *count, int *cap, const cg_layer *layer)
{
    if (*count == *cap) {
        int grown_cap = *cap ? 2 * *cap : 32;
        cg_layer *grown = realloc(*layers, (size_t)grown_cap * sizeof *grown);
        if (!grown)
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory reading layers");
        *layers = grown, *cap = grown_cap;
    }
    (*layers)[(*count)++] = *layer;
    return CONVGEN_SUCCESS;
}

/* One line of a file: its layer, if any, added; an error names the file and the line. */
static convgen_status read_line(const char *path, int lineno, const char *line, size_t len, cg_layer **layers,
                                int *count, int *cap)
{
    cg_layer layer;
    int is_layer;
    convgen_status s = strlen(line) != len ? cg_fail(CONVGEN_ERROR_INVALID_VALUE, "a NUL byte: not a text file")
                                           : cg_layer_parse_line(line, &layer, &is_layer);
    if (s == CONVGEN_SUCCESS && is_layer)
        s = add_layer(layers, count, cap, &layer);
    if (s != CONVGEN_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", convgen_last_error());
        s = cg_fail(s, "%s:%d: %s", path, lineno, why);
    }
    return s;
}

convgen_status cg_layer_read_file(const char *path, cg_layer **layers, int *count)
{
    *layers = NULL;
    *count = 0;
    size_t size;
    char *text = cg_read_file(path, LAYER_FILE_MAX, &size);
    if (!text)
        return cg_fail(CONVGEN_ERROR_IO, "cannot read layer file %s: %s", path, cg_read_error(errno));
    int cap = 0, lineno = 0;
    convgen_status s = CONVGEN_SUCCESS;
    for (char *line = text, *end = text + size; line < end && s == CONVGEN_SUCCESS;) {
        char *nl = memchr(line, '\n', (size_t)(end - line));
        char *stop = nl ? nl : end;
        *stop = '\0';
        s = read_line(path, ++lineno, line, (size_t)(stop - line), layers, count, &cap);
        line = stop + 1;
    }
    free(text);
    if (s != CONVGEN_SUCCESS) {
        free(*layers);
        *layers = NULL;
        *count = 0;
    }
    return s;
}
