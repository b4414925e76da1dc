#include "generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "header.h"
#include "layer.h"
#include "util.h"

/* The planners, one module each. A new algorithm adds one line here. */
extern const cg_planner cg_direct_planner, cg_direct_window_planner, cg_cufft_planner, cg_fft_planner,
    cg_fft_tiled_planner, cg_fft_fused_planner, cg_winograd_planner, cg_winograd_fused_planner;

static const cg_planner *const planners[] = {
    &cg_direct_planner,
    &cg_direct_window_planner,
    &cg_cufft_planner,
    &cg_fft_planner,
    &cg_fft_tiled_planner,
    &cg_fft_fused_planner,
    &cg_winograd_planner,
    &cg_winograd_fused_planner,
};

#define PLANNER_COUNT (sizeof planners / sizeof planners[0])

int cg_planner_count(void) { return (int)PLANNER_COUNT; }

const cg_planner *cg_planner_at(int i) { return i >= 0 && i < (int)PLANNER_COUNT ? planners[i] : NULL; }

const cg_planner *cg_planner_of(convgen_algo algo)
{
    for (size_t i = 0; i < PLANNER_COUNT; ++i)
        if (planners[i]->algo == algo)
            return planners[i];
    return NULL;
}

const cg_planner *cg_planner_named(const char *name)
{
    for (size_t i = 0; name && i < PLANNER_COUNT; ++i)
        if (strcmp(planners[i]->name, name) == 0)
            return planners[i];
    return NULL;
}

const cg_planner *cg_planner_formerly_named(const char *name, const cg_problem *p, convgen_pass pass)
{
    for (size_t i = 0; name && i < PLANNER_COUNT; ++i)
        if (planners[i]->formerly && strcmp(planners[i]->formerly, name) == 0 &&
            planners[i]->applicable(p, pass) == CONVGEN_SUCCESS)
            return planners[i];
    return cg_planner_named(name);
}

/* ---- variants ---- */

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

static const char *const gemm_names[] = {"", "cublas", "generated"}; /* CONVGEN_GEMM_* */

void cg_gemm_print(const cg_tuning *t, int rank, char *buf, size_t size)
{
    (void)rank;
    snprintf(buf, size, "%s", t->gemm > 0 && t->gemm <= CONVGEN_GEMM_GENERATED ? gemm_names[t->gemm] : "");
}

convgen_status cg_gemm_parse(const char *value, int rank, cg_tuning *t)
{
    (void)rank;
    for (int g = CONVGEN_GEMM_CUBLAS; g <= CONVGEN_GEMM_GENERATED; ++g)
        if (strcmp(value, gemm_names[g]) == 0)
            return t->gemm = g, CONVGEN_SUCCESS;
    return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "'%s' is not cublas or generated", value);
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

const char *convgen_algo_name(convgen_algo algo)
{
    if (algo == CONVGEN_ALGO_AUTO)
        return "auto";
    const cg_planner *p = cg_planner_of(algo);
    return p ? p->name : "unknown";
}

const char *convgen_pass_name(convgen_pass pass)
{
    switch (pass) {
    case CONVGEN_FPROP: return "fprop";
    case CONVGEN_BPROP: return "bprop";
    case CONVGEN_ACCGRAD: return "accgrad";
    }
    return "unknown";
}

convgen_status cg_generate(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                           const cg_target *target, cg_generated *out)
{
    return cg_generate_tuned(p, pass, algo, target, NULL, out);
}

convgen_status cg_generate_tuned(const cg_problem *p, convgen_pass pass, convgen_algo algo,
                                 const cg_target *target, const cg_tuning *tune, cg_generated *out)
{
    memset(out, 0, sizeof *out);
    if (pass != CONVGEN_FPROP && pass != CONVGEN_BPROP && pass != CONVGEN_ACCGRAD)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "pass = %d is not FPROP, BPROP or ACCGRAD", (int)pass);
    const cg_planner *planner = cg_planner_of(algo);
    if (!planner)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "algo = %d is not a known algorithm", (int)algo);
    convgen_status s = planner->applicable(p, pass);
    if (s != CONVGEN_SUCCESS)
        return s;
    cg_target t = target ? *target : (cg_target){0}; /* its other zeros are the generator's defaults */
    if (t.sm_count <= 0)
        t.sm_count = 132;
    out->algo = algo;
    out->pass = pass;
    out->problem = *p;
    s = planner->generate(p, pass, &t, tune, out);
    if (s == CONVGEN_SUCCESS)
        s = cg_stamp_headers(out, &t, tune);
    if (s != CONVGEN_SUCCESS)
        cg_generated_free(out);
    return s;
}

void cg_generated_free(cg_generated *g)
{
    for (int i = 0; i < CG_MAX_KERNELS; ++i)
        free(g->kernels[i].source);
    memset(g, 0, sizeof *g);
}

void cg_dims_text(const int64_t *v, int rank, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "x" : "", (long long)v[i]);
}

static bool all_equal(const int64_t *v, int rank, int64_t x)
{
    for (int i = 0; i < rank; ++i)
        if (v[i] != x)
            return false;
    return true;
}

void cg_problem_describe(const cg_problem *p, char *buf, size_t size)
{
    char in[64], ker[64], text[64];
    cg_dims_text(p->in, p->rank, in, sizeof in);
    cg_dims_text(p->kernel, p->rank, ker, sizeof ker);
    cg_buf b = {0};
    cg_buf_printf(&b, "%lld %lld %lld %s %s %lld %lld", (long long)p->n, (long long)p->c,
                  (long long)p->k, in, ker, (long long)p->pad_before[0], (long long)p->stride[0]);
    /* What a layer line cannot say, as the CLI's options. */
    const struct { const char *option; const int64_t *v; int64_t plain; } extra[] = {
        {"--pad-before", p->pad_before, p->pad_before[0]}, {"--pad-after", p->pad_after, p->pad_before[0]},
        {"--stride", p->stride, p->stride[0]}, {"--dilation", p->dilation, 1},
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; ++i) {
        if (all_equal(extra[i].v, p->rank, extra[i].plain))
            continue;
        cg_dims_text(extra[i].v, p->rank, text, sizeof text);
        cg_buf_printf(&b, " %s %s", extra[i].option, text);
    }
    if (p->flip)
        cg_buf_puts(&b, " --convolution");
    snprintf(buf, size, "%s", b.data ? b.data : "");
    cg_buf_free(&b);
}

bool cg_target_shared_limits(const char *arch, int *per_block, int *per_sm)
{
    /* The CUDA programming guide's table of compute capabilities: the opt-in maximum per block
     * and the capacity per multiprocessor. */
    static const struct {
        int cc, per_block_kib, per_sm_kib;
    } limits[] = {{70, 96, 96}, {72, 96, 96}, {75, 64, 64},   {80, 163, 164}, {86, 99, 100},
                  {87, 163, 164}, {89, 99, 100}, {90, 227, 228}, {100, 227, 228}, {120, 99, 100}};
    int cc = 0;
    if (!arch || sscanf(arch, "sm_%d", &cc) != 1)
        return false;
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; ++i)
        if (limits[i].cc == cc) {
            *per_block = limits[i].per_block_kib * 1024;
            *per_sm = limits[i].per_sm_kib * 1024;
            return true;
        }
    return false;
}

int cg_target_max_cluster(const char *arch)
{
    int cc = 0;
    if (!arch || sscanf(arch, "sm_%d", &cc) != 1)
        return 0;
    return cc >= 90 ? 8 : 1;
}
