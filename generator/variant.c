/* Variant strings (generate.h): a planner's knobs as text, "key=value" words in the planner's
 * order ("m=6x6 gemm=cublas"), printed and read back through the planner's knob list, and the
 * value codecs of the cg_tuning fields the knobs fix. The keys are the planners' own: nothing
 * here names one, and nothing here looks a planner up, so every planner may use it. */
#include <stdio.h>
#include <string.h>

#include "generate.h"
#include "layer.h"
#include "util.h"

/* Per-dimension values, "" where all are 0 (chosen by the planner). */
static void dims_print(const int64_t *v, int rank, char *buf, size_t size)
{
    bool any = false;
    for (int d = 0; d < rank; ++d)
        any |= v[d] != 0;
    if (any)
        cg_dims_text(v, rank, buf, size);
    else if (size)
        buf[0] = '\0';
}

/* rank values from lo to hi, not all 0 (that is no value: the key is left out). */
static convgen_status dims_parse(const char *value, int rank, int64_t lo, int64_t hi, int64_t v[CONVGEN_MAX_RANK])
{
    int64_t x[CONVGEN_MAX_RANK] = {0};
    bool any = false;
    if (cg_parse_dims(value, x) != rank)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "not %d size%s joined by 'x'", rank, rank > 1 ? "s" : "");
    for (int d = 0; d < rank; ++d) {
        if (x[d] < lo || x[d] > hi)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%lld is not in [%lld, %lld]", (long long)x[d], (long long)lo,
                           (long long)hi);
        any |= x[d] != 0;
    }
    if (!any)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "all 0 fixes nothing (leave the key out)");
    memcpy(v, x, sizeof x);
    return CONVGEN_SUCCESS;
}

void cg_tile_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    int64_t m[CONVGEN_MAX_RANK] = {0};
    for (int d = 0; d < rank; ++d)
        m[d] = t->winograd_m[d];
    dims_print(m, rank, buf, size);
}

convgen_status cg_tile_parse(const char *value, int rank, cg_tuning *t)
{
    int64_t m[CONVGEN_MAX_RANK];
    convgen_status s = dims_parse(value, rank, 0, 12, m);
    for (int d = 0; s == CONVGEN_SUCCESS && d < rank; ++d)
        t->winograd_m[d] = (int)m[d];
    return s;
}

void cg_fourier_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    dims_print(t->fourier_size, rank, buf, size);
}

convgen_status cg_fourier_parse(const char *value, int rank, cg_tuning *t)
{
    int64_t n[CONVGEN_MAX_RANK];
    convgen_status s = dims_parse(value, rank, 0, INT64_MAX, n);
    for (int d = 0; s == CONVGEN_SUCCESS && d < rank; ++d)
        t->fourier_size[d] = n[d];
    return s;
}

/* An enum field's value as a word: names[0] is "" (chosen, left out), names[1 ..] the values. */
static void word_print(int value, const char *const *names, int count, char *buf, size_t size)
{
    snprintf(buf, size, "%s", value > 0 && value < count ? names[value] : "");
}

/* The value of `word` among names[1 ..]; else INVALID_VALUE naming the words (`choices`). */
static convgen_status word_parse(const char *word, const char *const *names, int count, const char *choices,
                                 int *value)
{
    for (int i = 1; i < count; ++i)
        if (strcmp(word, names[i]) == 0)
            return *value = i, CONVGEN_SUCCESS;
    return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "'%s' is not %s", word, choices);
}

static const char *const gemm_names[] = {"", "cublas", "generated", "tensor"}; /* CONVGEN_GEMM_* */
static const char *const weights_names[] = {"", "before", "inside"};         /* CONVGEN_WEIGHTS_* */
enum {
    GEMM_NAMES = sizeof gemm_names / sizeof gemm_names[0],
    WEIGHTS_NAMES = sizeof weights_names / sizeof weights_names[0]
};

void cg_gemm_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    (void)rank;
    word_print(t->gemm, gemm_names, GEMM_NAMES, buf, size);
}

convgen_status cg_gemm_parse(const char *value, int rank, cg_tuning *t)
{
    (void)rank;
    return word_parse(value, gemm_names, GEMM_NAMES, "cublas, generated or tensor", &t->gemm);
}

void cg_tensor_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    (void)rank;
    snprintf(buf, size, "%s", t->gemm == CONVGEN_GEMM_TENSOR ? "tensor" : "");
}

convgen_status cg_tensor_parse(const char *value, int rank, cg_tuning *t)
{
    (void)rank;
    if (strcmp(value, "tensor") != 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "'%s' is not tensor (the other form is the default: no key)", value);
    t->gemm = CONVGEN_GEMM_TENSOR;
    return CONVGEN_SUCCESS;
}

void cg_weights_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    (void)rank;
    word_print(t->weights, weights_names, WEIGHTS_NAMES, buf, size);
}

convgen_status cg_weights_parse(const char *value, int rank, cg_tuning *t)
{
    (void)rank;
    return word_parse(value, weights_names, WEIGHTS_NAMES, "before or inside", &t->weights);
}

void cg_variant_print(const cg_planner *pl, const cg_tuning *t, int rank, char *buf, size_t size)
{
    size_t used = 0;
    char value[CG_VARIANT_MAX];
    if (size)
        buf[0] = '\0';
    for (const cg_knob *k = pl->knobs; k && k->key && used < size; ++k) {
        k->print(t, rank, value, sizeof value);
        if (value[0])
            used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", used ? " " : "", k->key, value);
    }
}

static const cg_knob *knob_named(const cg_planner *pl, const char *key, size_t len)
{
    for (const cg_knob *k = pl->knobs; k && k->key; ++k)
        if (strlen(k->key) == len && strncmp(k->key, key, len) == 0)
            return k;
    return NULL;
}

/* The planner's keys, for messages: "m, gemm" or "none". */
static void knob_keys(const cg_planner *pl, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s", pl->knobs && pl->knobs[0].key ? "" : "none");
    for (const cg_knob *k = pl->knobs; k && k->key && used < size; ++k)
        used += (size_t)snprintf(buf + used, size - used, "%s%s", k == pl->knobs ? "" : ", ", k->key);
}

convgen_status cg_variant_parse(const cg_planner *pl, const char *text, int rank, cg_tuning *t)
{
    char word[CG_VARIANT_MAX], keys[128], again[CG_VARIANT_MAX];
    cg_tuning v = *t;
    unsigned seen = 0;
    if (strlen(text) >= CG_VARIANT_MAX)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s: variant \"%.32s...\" is too long", pl->name, text);
    for (const char *p = text; *p; p += *p == ' ') {
        size_t len = strcspn(p, " ");
        if (!len)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s: variant \"%s\" has a stray space", pl->name, text);
        snprintf(word, sizeof word, "%.*s", (int)len, p);
        p += len;
        char *eq = strchr(word, '=');
        const cg_knob *k = eq ? knob_named(pl, word, (size_t)(eq - word)) : NULL;
        if (!k) {
            knob_keys(pl, keys, sizeof keys);
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s: variant \"%s\": '%.*s' is no key of %s's (%s)", pl->name,
                           text, eq ? (int)(eq - word) : (int)len, word, pl->name, keys);
        }
        unsigned bit = 1u << (k - pl->knobs);
        if (seen & bit)
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s: variant \"%s\" gives %s twice", pl->name, text, k->key);
        seen |= bit;
        convgen_status s = k->parse(eq + 1, rank, &v);
        if (s != CONVGEN_SUCCESS) {
            snprintf(keys, sizeof keys, "%s", convgen_last_error());
            return cg_fail(s, "%s: variant \"%s\": %s: %s", pl->name, text, word, keys);
        }
    }
    cg_variant_print(pl, &v, rank, again, sizeof again);
    if (strcmp(again, text) != 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s: variant \"%s\" is not as %s writes it (\"%s\")", pl->name,
                       text, pl->name, again);
    *t = v;
    return CONVGEN_SUCCESS;
}

int cg_variants_add(cg_tuning *out, int n, int max, const cg_tuning *t, bool by_gemm)
{
    static const int gemms[] = {CONVGEN_GEMM_CUBLAS, CONVGEN_GEMM_GENERATED};
    for (int g = 0; g < (by_gemm ? 2 : 1) && n < max; ++g, ++n) {
        out[n] = *t;
        if (by_gemm)
            out[n].gemm = gemms[g];
    }
    return n;
}
