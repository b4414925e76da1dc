/* Wisdom (wisdom.h): the process's entries behind one lock, and their text form.
 *
 * A wisdom file, like FFTW's, is for people to read and for convgen to trust only whole:
 *
 *   convgen-wisdom 2
 *   # convgen's tuned choices: one line a layer and pass (convgen_wisdom_export)
 *   gpu="NVIDIA H100 80GB HBM3" arch=sm_90 version=0.1.0 pass=fprop n=128 c=64 k=64 in=64x64
 *       kernel=9x9 pad_before=0x0 pad_after=0x0 stride=1x1 dilation=1x1 mode=correlation limit=0
 *       tf32=0 effort=measure algo=winograd variant="m=6x6 gemm=generated" ms=1.2345
 *   end entries=1 xxh64=0123456789abcdef
 *
 * (each entry on one line). The variant is the planner's own text of the knobs it fixes
 * (cg_variant_print), so a planner's new knob needs no new format. The end line counts the
 * entries and carries XXH64 of every byte before it, so a truncated, edited or damaged file
 * fails as a whole and nothing of it is merged. A file whose first line is not a format this
 * reads is foreign and ignored the same way.
 *
 * Format 1, the oldest still read, had the knobs as fields of their own instead of the variant
 * ("algo=winograd fourier=0x0 m=6x6 gemm=generated"), and "algo=direct" also for the window
 * bprop that direct then chose silently; it is read into the same entries (the planner that is
 * `formerly` so named where it applies, its variant printed from those fields) and written as
 * format 2.
 *
 * Format 3 adds the networks' patches (convgen_net_create measured them), one line each:
 *
 *   net="input 1; conv 80 2x2x2 relu; pool 2x2x2; ..." gpu="NVIDIA H200" arch=sm_90 version=0.1.0
 *       volume=1625x1625x1625 memory=4294967296 host_memory=33554432000 mode=auto effort=measure
 *       fragment=65x25x28 chose=host s=57.3
 *
 * Format 4 adds to each layer's entry what it was measured among: candidates=XXH64 of the
 * (algorithm, variant) list AUTO had for it at its effort (cg_candidates_hash, 0: not known). An
 * entry whose list this convgen makes otherwise is stale: it was measured before a planner gained
 * the candidate that might beat it (the H100's shipped wisdom kept choices of before winograd's
 * tensor-core GEMM, 1.09-25x slower, until it was retuned by hand: bench/NOTES.md, "Issue 30,
 * sessions 71-72"). A stale entry is no answer to a lookup (one for any GPU takes another GPU's
 * fresh entry past it), yields to any entry of its key and is not written back, so the layer is
 * tuned again.
 *
 * A file is written in the oldest format that holds its entries (2; 3 with networks' lines; 4 with
 * any entry's candidates known), so that an older convgen still reads what it can. */
#include "wisdom.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "generate.h"
#include "kernel_set.h"
#include "layer.h"
#include "util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

#define MAGIC "convgen-wisdom " /* and the format's number */
#define OLDEST_FORMAT 1          /* the knobs as fields: fourier=, m=, gemm= */
#define LAYERS_FORMAT 2          /* algo= and the planner's variant="..." */
#define NETS_FORMAT 3            /* and the networks' patches: net="..." */
#define CURRENT_FORMAT 4         /* and each layer's candidates=... */
#define MAX_FILE_BYTES (64u << 20)

/* Entries in the order they came, and an index of them by key: open addressing with linear
 * probing over a power-of-two table kept at most half full, each slot the key's hash and the
 * entry's position. The GPU's name is left out of the hash, so a lookup for "any GPU" probes the
 * same chain as one for a named GPU. Importing n entries is O(n) (it was O(n^2): 50,000 entries
 * took minutes). Entries are never removed one by one, so a chain is never broken. */
typedef struct wisdom_slot {
    uint64_t hash;
    int32_t index; /* into v; -1: empty */
} wisdom_slot;

typedef struct wisdom_set {
    wisdom_entry *v;
    int count, cap;
    wisdom_slot *slots;
    size_t nslots;
    wisdom_net_entry *nets; /* few (one a network, volume and limits): searched in order */
    int net_count, net_cap;
} wisdom_set;

static wisdom_set held;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const effort_names[] = {"measure", "estimate", "exhaustive"};
static const char *const gemm_names[] = {"chosen", "cublas", "generated"}; /* format 1's */
static const char *const mode_names[] = {"auto", "device", "host"};        /* convgen_net_mode's */

/* EXHAUSTIVE > MEASURE > ESTIMATE. */
static int effort_rank(int effort) { return effort == CONVGEN_EFFORT_EXHAUSTIVE ? 2 : effort == CONVGEN_EFFORT_MEASURE; }

/* The layer as wisdom names it, to compare and hash through the conv kind: what an entry
 * stores. The output sizes are not stored but follow from the rest (a layer read back has them
 * recomputed, one made by hand may not), so they are left out. */
static cg_problem stored_layer(const cg_problem *p)
{
    cg_problem q = *p;
    memset(q.out, 0, sizeof q.out);
    return q;
}

static bool same_layer(const cg_problem *a, const cg_problem *b)
{
    cg_problem sa = stored_layer(a), sb = stored_layer(b);
    return cg_problem_same(cg_conv_ref(&sa), cg_conv_ref(&sb));
}

/* `want` may leave the GPU's name empty: any GPU of its architecture. */
static bool same_key(const wisdom_key *have, const wisdom_key *want)
{
    return (!want->gpu[0] || strcmp(have->gpu, want->gpu) == 0) && strcmp(have->arch, want->arch) == 0 &&
           strcmp(have->version, want->version) == 0 && have->pass == want->pass &&
           have->workspace_limit == want->workspace_limit && have->tf32 == want->tf32 &&
           same_layer(&have->layer, &want->layer);
}

/* XXH3 of everything same_key compares but the GPU's name. */
static uint64_t key_hash(const wisdom_key *k)
{
    cg_problem stored = stored_layer(&k->layer);
    cg_key layer;
    layer.len = 0;
    cg_problem_key(cg_conv_ref(&stored), &layer);
    const int64_t w[3] = {k->pass, (int64_t)k->workspace_limit, k->tf32};
    uint64_t h = XXH3_64bits_withSeed(w, sizeof w, XXH3_64bits(layer.bytes, layer.len));
    h = XXH3_64bits_withSeed(k->arch, strnlen(k->arch, sizeof k->arch), h);
    return XXH3_64bits_withSeed(k->version, strnlen(k->version, sizeof k->version), h);
}

/* What a search of the index asks of an entry besides its key. */
typedef struct wisdom_query {
    bool exact_gpu;     /* the GPU's name too, "" only matching "" (else "" in the key means any) */
    bool measured_only; /* no provisional entry */
    bool fresh_only;    /* no stale entry: an any-GPU lookup passes one GPU's for another's fresh one */
    int effort;         /* tuned with at least this effort */
} wisdom_query;

/* Whether e, of this convgen's version, was measured among other candidates than this convgen
 * lists for its layer (another version's entry is kept as it is, to merge and export). */
static bool stale(const wisdom_entry *e)
{
    const wisdom_key *k = &e->key;
    return e->candidates && strcmp(k->version, CONVGEN_VERSION_STRING) == 0 &&
           e->candidates != cg_candidates_hash(&k->layer, k->pass, e->effort, k->tf32, k->workspace_limit);
}

/* The position of the earliest entry of `key` that answers `q`, or -1: the earliest, as the
 * linear search this index replaced found it. */
static int set_find(const wisdom_set *s, const wisdom_key *key, wisdom_query q)
{
    int best = -1;
    if (!s->nslots)
        return best;
    uint64_t h = key_hash(key);
    size_t mask = s->nslots - 1;
    for (size_t i = h & mask; s->slots[i].index >= 0; i = (i + 1) & mask) {
        int at = s->slots[i].index;
        const wisdom_entry *e = &s->v[at];
        if (s->slots[i].hash == h && (best < 0 || at < best) && (!q.exact_gpu || strcmp(e->key.gpu, key->gpu) == 0) &&
            same_key(&e->key, key) && !(q.measured_only && e->provisional) && effort_rank(e->effort) >= effort_rank(q.effort) &&
            !(q.fresh_only && stale(e)))
            best = at;
    }
    return best;
}

static void slot_put(wisdom_slot *slots, size_t nslots, uint64_t hash, int index)
{
    size_t i = hash & (nslots - 1);
    while (slots[i].index >= 0)
        i = (i + 1) & (nslots - 1);
    slots[i] = (wisdom_slot){hash, index};
}

/* Room for one more entry: the array and, kept at most half full, the index. */
static bool set_reserve(wisdom_set *s)
{
    if (s->count == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        wisdom_entry *v = s->cap < INT32_MAX / 2 ? realloc(s->v, sizeof *v * (size_t)cap) : NULL;
        if (!v)
            return false;
        s->v = v, s->cap = cap;
    }
    if ((size_t)(s->count + 1) * 2 <= s->nslots)
        return true;
    size_t nslots = s->nslots ? 2 * s->nslots : 128;
    wisdom_slot *slots = malloc(sizeof *slots * nslots);
    if (!slots)
        return false;
    for (size_t i = 0; i < nslots; ++i)
        slots[i].index = -1;
    for (int i = 0; i < s->count; ++i) /* in order, so each chain stays in insertion order */
        slot_put(slots, nslots, key_hash(&s->v[i].key), i);
    free(s->slots);
    s->slots = slots, s->nslots = nslots;
    return true;
}

static void set_free(wisdom_set *s)
{
    free(s->v);
    free(s->slots);
    free(s->nets);
    *s = (wisdom_set){0};
}

/* Adds an entry or replaces the one of its key: a measured one over a provisional one, and
 * either over one of its kind tuned with no more effort; a stale one yields to any and replaces
 * none (a file's, merged back after the layer was tuned again, would otherwise undo that). */
static convgen_status set_add(wisdom_set *s, const wisdom_entry *e)
{
    int i = set_find(s, &e->key, (wisdom_query){.exact_gpu = true, .effort = CONVGEN_EFFORT_ESTIMATE});
    if (i >= 0) {
        bool same_class = e->provisional == s->v[i].provisional, held_stale = stale(&s->v[i]);
        if (held_stale || (!stale(e) && (same_class ? effort_rank(e->effort) >= effort_rank(s->v[i].effort)
                                                    : s->v[i].provisional)))
            s->v[i] = *e;
        return CONVGEN_SUCCESS;
    }
    if (!set_reserve(s))
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for wisdom");
    s->v[s->count] = *e;
    slot_put(s->slots, s->nslots, key_hash(&e->key), s->count);
    s->count++;
    return CONVGEN_SUCCESS;
}

void wisdom_gpu_name(char *dst, size_t size, const char *name)
{
    snprintf(dst, size, "%s", name);
    for (char *q = dst; *q; ++q)
        if (*q == '"' || *q == '\n')
            *q = '_';
}

/* ---- the networks' entries ---- */

/* Limits a process resolves from the free memory differ a little from run to run. */
static bool near(uint64_t have, uint64_t want) { return (have > want ? have - want : want - have) <= want / 32; }

static bool same_net_key(const wisdom_net_key *have, const wisdom_net_key *want, bool exact_gpu)
{
    return (exact_gpu || want->gpu[0] ? strcmp(have->gpu, want->gpu) == 0 : true) && strcmp(have->arch, want->arch) == 0 &&
           strcmp(have->version, want->version) == 0 && strcmp(have->net, want->net) == 0 &&
           memcmp(have->volume, want->volume, sizeof have->volume) == 0 && have->mode == want->mode &&
           near(have->memory_limit, want->memory_limit) && near(have->host_limit, want->host_limit);
}

/* The earliest entry of `key` measured with at least `effort`, or -1. */
static int net_find(const wisdom_set *s, const wisdom_net_key *key, int effort, bool exact_gpu)
{
    for (int i = 0; i < s->net_count; ++i)
        if (same_net_key(&s->nets[i].key, key, exact_gpu) && effort_rank(s->nets[i].effort) >= effort_rank(effort))
            return i;
    return -1;
}

static convgen_status net_add(wisdom_set *s, const wisdom_net_entry *e)
{
    int i = net_find(s, &e->key, CONVGEN_EFFORT_ESTIMATE, true);
    if (i >= 0) {
        if (effort_rank(e->effort) >= effort_rank(s->nets[i].effort))
            s->nets[i] = *e;
        return CONVGEN_SUCCESS;
    }
    if (s->net_count == s->net_cap) {
        int cap = s->net_cap ? 2 * s->net_cap : 8;
        wisdom_net_entry *v = s->net_cap < INT32_MAX / 2 ? realloc(s->nets, sizeof *v * (size_t)cap) : NULL;
        if (!v)
            return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for wisdom");
        s->nets = v, s->net_cap = cap;
    }
    s->nets[s->net_count++] = *e;
    return CONVGEN_SUCCESS;
}

bool wisdom_net_lookup(const wisdom_net_key *key, int effort, wisdom_net_entry *out)
{
    pthread_mutex_lock(&lock);
    int i = net_find(&held, key, effort, false);
    if (i >= 0)
        *out = held.nets[i];
    pthread_mutex_unlock(&lock);
    return i >= 0;
}

convgen_status wisdom_net_add(const wisdom_net_entry *e)
{
    pthread_mutex_lock(&lock);
    convgen_status s = net_add(&held, e);
    pthread_mutex_unlock(&lock);
    return s;
}

/* ---- the layers' entries ---- */

bool wisdom_lookup(const wisdom_key *key, int effort, wisdom_entry *out)
{
    pthread_mutex_lock(&lock);
    int i = set_find(&held, key, (wisdom_query){.effort = effort, .fresh_only = true});
    bool found = i >= 0;
    if (found)
        *out = held.v[i];
    else /* for the log: a stale one passed over */
        i = set_find(&held, key, (wisdom_query){.effort = effort});
    wisdom_entry old = i >= 0 ? held.v[i] : (wisdom_entry){0};
    pthread_mutex_unlock(&lock);
    if (i >= 0 && !found) /* outside the lock: a log callback may call into wisdom */
        cg_debug("wisdom: the entry for this layer and pass (%s \"%s\") was measured among other candidates than this "
                 "convgen lists: stale, tuning again", convgen_algo_name(old.algo), old.variant);
    return found;
}

convgen_status wisdom_add(const wisdom_entry *e)
{
    pthread_mutex_lock(&lock);
    convgen_status s = set_add(&held, e);
    pthread_mutex_unlock(&lock);
    return s;
}

/* ---- writing ---- */

static void put_dims64(cg_buf *b, const char *name, const int64_t *v, int rank)
{
    char text[96];
    cg_dims_text(v, rank, text, sizeof text);
    cg_buf_printf(b, " %s=%s", name, text);
}

static void put_entry(cg_buf *b, const wisdom_entry *e, int format)
{
    const cg_problem *p = &e->key.layer;
    cg_buf_printf(b, "gpu=\"%s\" arch=%s version=%s pass=%s n=%" PRId64 " c=%" PRId64 " k=%" PRId64, e->key.gpu,
                  e->key.arch, e->key.version, convgen_pass_name(e->key.pass), p->n, p->c, p->k);
    put_dims64(b, "in", p->in, p->rank);
    put_dims64(b, "kernel", p->kernel, p->rank);
    put_dims64(b, "pad_before", p->pad_before, p->rank);
    put_dims64(b, "pad_after", p->pad_after, p->rank);
    put_dims64(b, "stride", p->stride, p->rank);
    put_dims64(b, "dilation", p->dilation, p->rank);
    cg_buf_printf(b, " mode=%s limit=%" PRIu64 " tf32=%d effort=%s algo=%s variant=\"%s\" ms=%.6g",
                  p->flip ? "convolution" : "correlation", e->key.workspace_limit, e->key.tf32,
                  effort_names[e->effort], convgen_algo_name(e->algo), e->variant, e->ms);
    if (format >= CURRENT_FORMAT)
        cg_buf_printf(b, " candidates=%016" PRIx64, e->candidates);
    cg_buf_puts(b, "\n");
}

static void put_net_entry(cg_buf *b, const wisdom_net_entry *e)
{
    const wisdom_net_key *k = &e->key;
    cg_buf_printf(b, "net=\"%s\" gpu=\"%s\" arch=%s version=%s", k->net, k->gpu, k->arch, k->version);
    put_dims64(b, "volume", k->volume, 3);
    cg_buf_printf(b, " memory=%" PRIu64 " host_memory=%" PRIu64 " mode=%s effort=%s", k->memory_limit, k->host_limit,
                  mode_names[k->mode], effort_names[e->effort]);
    put_dims64(b, "fragment", e->fragment, 3);
    cg_buf_printf(b, " chose=%s s=%.6g\n", mode_names[e->mode], e->seconds);
}

/* The text of the set's entries, the provisional ones (the kernel set's, the cost model's) and
 * the stale ones left out; in the oldest format that holds them (header comment). */
static char *set_text(const wisdom_set *s)
{
    cg_buf b = {0};
    bool *written = calloc((size_t)s->count + 1, sizeof *written); /* each entry's staleness worked out once */
    if (!written)
        return NULL;
    int format = s->net_count ? NETS_FORMAT : LAYERS_FORMAT;
    for (int i = 0; i < s->count; ++i) {
        written[i] = !s->v[i].provisional && !stale(&s->v[i]);
        if (written[i] && s->v[i].candidates)
            format = CURRENT_FORMAT;
    }
    cg_buf_printf(&b, MAGIC "%d\n", format);
    cg_buf_puts(&b, "# convgen's tuned choices: one line a layer and pass, measured where gpu, arch and version\n"
                      "# say (convgen_wisdom_export). The last line checksums the file: edited, it is ignored.\n");
    int entries = 0;
    for (int i = 0; i < s->count; ++i)
        if (written[i])
            put_entry(&b, &s->v[i], format), ++entries;
    free(written);
    for (int i = 0; i < s->net_count; ++i)
        put_net_entry(&b, &s->nets[i]), ++entries;
    uint64_t sum = XXH64(b.data, b.len, 0);
    cg_buf_printf(&b, "end entries=%d xxh64=%016" PRIx64 "\n", entries, sum);
    return cg_buf_take(&b);
}

/* ---- reading ---- */

#define MAX_FIELDS 32

typedef struct fields {
    char *name[MAX_FIELDS], *value[MAX_FIELDS];
    int count;
} fields;

/* Splits a line (modified in place) into name=value words; a value may be "quoted". A quote
 * inside an unquoted value, or text right after a closing quote, is refused: the writer could
 * not write such a value back (a gpu=M3" read as 'M3"' was exported as "M3"" and that file was
 * refused; found by fuzz_wisdom). */
static bool split_fields(char *line, fields *f)
{
    f->count = 0;
    for (char *p = line; *p;) {
        while (*p == ' ')
            ++p;
        if (!*p)
            break;
        char *eq = strchr(p, '=');
        if (!eq || f->count == MAX_FIELDS)
            return false;
        *eq = '\0';
        f->name[f->count] = p;
        char *v = eq + 1, *end;
        if (*v == '"') {
            end = strchr(++v, '"');
            if (!end || (end[1] && end[1] != ' '))
                return false;
        } else {
            end = v + strcspn(v, " \"");
            if (*end == '"')
                return false;
        }
        char next = *end;
        *end = '\0';
        f->value[f->count++] = v;
        p = next ? end + 1 : end;
    }
    return true;
}

static const char *field(const fields *f, const char *name)
{
    for (int i = 0; i < f->count; ++i)
        if (strcmp(f->name[i], name) == 0)
            return f->value[i];
    return NULL;
}

static bool parse_int(const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long x = text ? strtoll(text, &end, 10) : 0;
    if (!text || !*text || *end || errno || x < lo || x > hi)
        return false;
    *out = x;
    return true;
}

static bool parse_u64(const char *text, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long x = text && *text >= '0' && *text <= '9' ? strtoull(text, &end, 10) : 0;
    if (!text || !*text || *text < '0' || *text > '9' || *end || errno)
        return false;
    *out = x;
    return true;
}

/* A candidates hash as put_entry writes it: exactly 16 hex digits (no sign, no 0x). */
static bool parse_hash(const char *text, uint64_t *out)
{
    if (!text || strlen(text) != 16 || text[strspn(text, "0123456789abcdefABCDEF")])
        return false;
    *out = strtoull(text, NULL, 16);
    return true;
}

static int name_index(const char *text, const char *const *names, int count)
{
    for (int i = 0; text && i < count; ++i)
        if (strcmp(text, names[i]) == 0)
            return i;
    return -1;
}

static bool parse_dims(const fields *f, const char *name, int rank, int64_t out[CONVGEN_MAX_RANK])
{
    const char *text = field(f, name);
    return text && cg_parse_dims(text, out) == rank;
}

/* The layer of an entry, validated as convgen_plan_conv would. */
static bool parse_layer(const fields *f, cg_problem *p)
{
    convgen_conv_desc d = {0};
    const char *mode = field(f, "mode");
    d.rank = field(f, "in") ? cg_parse_dims(field(f, "in"), d.in) : 0;
    if (d.rank < 1 || !parse_int(field(f, "n"), 1, INT64_MAX, &d.n) || !parse_int(field(f, "c"), 1, INT64_MAX, &d.c) ||
        !parse_int(field(f, "k"), 1, INT64_MAX, &d.k) || !parse_dims(f, "kernel", d.rank, d.kernel) ||
        !parse_dims(f, "pad_before", d.rank, d.pad_before) || !parse_dims(f, "pad_after", d.rank, d.pad_after) ||
        !parse_dims(f, "stride", d.rank, d.stride) || !parse_dims(f, "dilation", d.rank, d.dilation) || !mode ||
        (strcmp(mode, "correlation") != 0 && strcmp(mode, "convolution") != 0))
        return false;
    d.mode = strcmp(mode, "convolution") == 0 ? CONVGEN_CONVOLUTION : CONVGEN_CROSS_CORRELATION;
    return cg_problem_init(p, &d) == CONVGEN_SUCCESS;
}

/* A field's text; a `word` (written unquoted) must not hold a space, which a quoted value may. */
static bool copy_text(char *dst, size_t size, const char *src, bool word)
{
    if (!src || !*src || strlen(src) >= size || (word && strchr(src, ' ')))
        return false;
    strcpy(dst, src);
    return true;
}

/* Format 1's knob fields (fourier=, m=, gemm=, validated as that format was) as the variant
 * of the planner that the entry's algo= names for its layer and pass today. A planner that had
 * no name of its own then (its choice was `formerly` another's) is no format-1 algo=. */
static bool parse_v1_variant(const fields *f, wisdom_entry *e)
{
    const cg_problem *p = &e->key.layer;
    const cg_planner *pl = cg_planner_formerly_named(field(f, "algo"), p, e->key.pass), *named;
    int gemm = name_index(field(f, "gemm"), gemm_names, 3);
    int64_t m[CONVGEN_MAX_RANK];
    cg_tuning knobs = {0};
    if (!pl || ((named = cg_planner_named(field(f, "algo"))) && named->formerly) || gemm < 0 || !parse_dims(f, "fourier", p->rank, knobs.fourier_size) || !parse_dims(f, "m", p->rank, m))
        return false;
    for (int d = 0; d < p->rank; ++d) {
        if (knobs.fourier_size[d] < 0 || m[d] < 0 || m[d] > 12)
            return false;
        knobs.winograd_m[d] = (int)m[d];
    }
    knobs.gemm = gemm;
    e->algo = pl->algo;
    cg_variant_print(pl, &knobs, p->rank, e->variant, sizeof e->variant);
    return true;
}

/* Format 2's algo= and variant="...", the variant as its planner reads it; `why` gets the
 * planner's reason where it refuses one. */
static bool parse_v2_variant(const fields *f, wisdom_entry *e, char *why, size_t size)
{
    const cg_planner *pl = cg_planner_named(field(f, "algo"));
    const char *variant = field(f, "variant");
    cg_tuning knobs = {0};
    if (!pl || !variant)
        return false;
    if (cg_variant_parse(pl, variant, e->key.layer.rank, &knobs) != CONVGEN_SUCCESS) {
        snprintf(why, size, ": %s", convgen_last_error());
        return false;
    }
    e->algo = pl->algo;
    snprintf(e->variant, sizeof e->variant, "%s", variant);
    return true;
}

/* A network's entry (format 3): every field once (12), the network as cg_net_text writes it. */
static bool parse_net_entry(char *line, wisdom_net_entry *e)
{
    fields f;
    memset(e, 0, sizeof *e);
    if (!split_fields(line, &f) || f.count != 12)
        return false;
    const char *text = field(&f, "net"), *sec = field(&f, "s");
    char lines[CG_NET_TEXT_MAX];
    cg_net net;
    if (!text || strlen(text) >= sizeof lines || !sec)
        return false;
    for (size_t i = 0; i <= strlen(text); ++i) /* "; " between lines */
        lines[i] = text[i] == ';' ? '\n' : text[i];
    /* a network convgen reads, written as convgen writes it */
    if (cg_net_parse(lines, &net) != CONVGEN_SUCCESS || !cg_net_text(&net, e->key.net, sizeof e->key.net) ||
        strcmp(e->key.net, text) != 0)
        return false;
    e->key.mode = name_index(field(&f, "mode"), mode_names, 3);
    e->mode = name_index(field(&f, "chose"), mode_names, 3);
    e->effort = name_index(field(&f, "effort"), effort_names, 3);
    if (!copy_text(e->key.gpu, sizeof e->key.gpu, field(&f, "gpu"), false) ||
        !copy_text(e->key.arch, sizeof e->key.arch, field(&f, "arch"), true) ||
        !copy_text(e->key.version, sizeof e->key.version, field(&f, "version"), true) || e->key.mode < 0 ||
        e->mode < CONVGEN_NET_DEVICE || e->effort < 0 || e->effort == CONVGEN_EFFORT_ESTIMATE ||
        !parse_u64(field(&f, "memory"), &e->key.memory_limit) || !parse_u64(field(&f, "host_memory"), &e->key.host_limit) ||
        !parse_dims(&f, "volume", 3, e->key.volume) || !parse_dims(&f, "fragment", 3, e->fragment))
        return false;
    for (int d = 0; d < 3; ++d)
        if (e->key.volume[d] < 0 || e->key.volume[d] > INT32_MAX || e->fragment[d] < 1 || e->fragment[d] > INT32_MAX ||
            (net.rank == 2 && d == 0 && (e->key.volume[d] > 1 || e->fragment[d] != 1)))
            return false;
    char *end;
    e->seconds = strtod(sec, &end);
    return !*end && isfinite(e->seconds) && e->seconds >= 0;
}

/* An entry of format `format`: every field once (22 in format 1, 20 in formats 2 and 3, 21 in 4:
 * candidates=, 16 hex digits). */
static bool parse_entry(char *line, int format, wisdom_entry *e, char *why, size_t size)
{
    fields f;
    memset(e, 0, sizeof *e);
    if (!split_fields(line, &f) || f.count != (format == 1 ? 22 : format >= CURRENT_FORMAT ? 21 : 20))
        return false;
    if (format >= CURRENT_FORMAT && !parse_hash(field(&f, "candidates"), &e->candidates))
        return false;
    uint64_t limit;
    int64_t tf32;
    const char *ms = field(&f, "ms");
    char *end;
    e->key.pass = (convgen_pass)name_index(field(&f, "pass"), (const char *const[]){"fprop", "bprop", "accgrad"}, 3);
    e->effort = name_index(field(&f, "effort"), effort_names, 3);
    if (!copy_text(e->key.gpu, sizeof e->key.gpu, field(&f, "gpu"), false) ||
        !copy_text(e->key.arch, sizeof e->key.arch, field(&f, "arch"), true) ||
        !copy_text(e->key.version, sizeof e->key.version, field(&f, "version"), true) || (int)e->key.pass < 0 ||
        e->effort < 0 || e->effort == CONVGEN_EFFORT_ESTIMATE || !parse_layer(&f, &e->key.layer) ||
        !parse_u64(field(&f, "limit"), &limit) || !parse_int(field(&f, "tf32"), 0, 1, &tf32) || !ms)
        return false;
    if (format == 1 ? !parse_v1_variant(&f, e) : !parse_v2_variant(&f, e, why, size))
        return false;
    e->ms = strtod(ms, &end);
    if (*end || !isfinite(e->ms) || e->ms < 0)
        return false;
    e->key.workspace_limit = limit;
    e->key.tf32 = (int)tf32;
    return true;
}

/* The format of a text's first line ("convgen-wisdom N"), or 0 where it is no format this
 * reads (*newer: a later one's). */
static int format_of(const char *text, bool *newer)
{
    char tail;
    int format = 0;
    *newer = false;
    if (strncmp(text, MAGIC, strlen(MAGIC)) != 0 || sscanf(text + strlen(MAGIC), "%9d%c", &format, &tail) != 2 ||
        tail != '\n' || text[strlen(MAGIC)] < '1' || text[strlen(MAGIC)] > '9')
        return 0;
    *newer = format > CURRENT_FORMAT;
    return format >= OLDEST_FORMAT && format <= CURRENT_FORMAT ? format : 0;
}

/* Parses a whole wisdom text into `out`; `origin` names it in messages. */
static convgen_status parse_text(const char *text, const char *origin, wisdom_set *out)
{
    size_t len = strlen(text);
    bool newer;
    int format = format_of(text, &newer);
    if (newer)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is convgen wisdom of a later format than this convgen reads "
                       "(%d to %d): ignored", origin, OLDEST_FORMAT, CURRENT_FORMAT);
    if (!format)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is not convgen wisdom (its first line is not '" MAGIC "N', "
                       "N from %d to %d): ignored", origin, OLDEST_FORMAT, CURRENT_FORMAT);
    const char *end_line = NULL;
    for (const char *p = text; p < text + len; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : text + len)
        if (strncmp(p, "end ", 4) == 0)
            end_line = p;
    int count = -1;
    uint64_t sum = 0;
    char tail;
    if (!end_line || sscanf(end_line, "end entries=%d xxh64=%" SCNx64 "%c", &count, &sum, &tail) != 3 || tail != '\n' ||
        end_line + strcspn(end_line, "\n") + 1 != text + len)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is damaged: no 'end entries=N xxh64=...' last line (truncated?): "
                       "ignored", origin);
    if (XXH64(text, (size_t)(end_line - text), 0) != sum)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is damaged: its checksum does not match (edited or corrupted): "
                       "ignored", origin);
    char *body = cg_strdup(text);
    if (!body)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory reading wisdom");
    body[end_line - text] = '\0';
    convgen_status s = CONVGEN_SUCCESS;
    int line_no = 1, entries = 0;
    char *save = NULL;
    strtok_r(body, "\n", &save); /* the magic line */
    for (char *line = strtok_r(NULL, "\n", &save); line && s == CONVGEN_SUCCESS; line = strtok_r(NULL, "\n", &save)) {
        ++line_no;
        if (line[0] == '#' || line[0] == '\0')
            continue;
        wisdom_entry e;
        wisdom_net_entry ne;
        char why[400] = "";
        if (format >= NETS_FORMAT && strncmp(line, "net=", 4) == 0) {
            if (!parse_net_entry(line, &ne))
                s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s line %d is not a network's wisdom entry: ignored", origin,
                            line_no);
            else if ((s = net_add(out, &ne)) == CONVGEN_SUCCESS)
                ++entries;
        } else if (!parse_entry(line, format, &e, why, sizeof why))
            s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s line %d is not a wisdom entry of format %d%s: ignored", origin,
                        line_no, format, why);
        else if ((s = set_add(out, &e)) == CONVGEN_SUCCESS)
            ++entries;
    }
    free(body);
    if (s == CONVGEN_SUCCESS && entries != count)
        s = cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s is damaged: %d entries where its end line says %d: ignored", origin,
                    entries, count);
    return s;
}

static convgen_status merge_text(const char *text, const char *origin, bool provisional)
{
    wisdom_set incoming = {0};
    convgen_status s = parse_text(text, origin, &incoming);
    pthread_mutex_lock(&lock);
    for (int i = 0; i < incoming.count && s == CONVGEN_SUCCESS; ++i) {
        incoming.v[i].provisional = provisional;
        s = set_add(&held, &incoming.v[i]);
    }
    for (int i = 0; i < incoming.net_count && s == CONVGEN_SUCCESS && !provisional; ++i)
        s = net_add(&held, &incoming.nets[i]);
    pthread_mutex_unlock(&lock);
    set_free(&incoming);
    return s;
}

static convgen_status read_file(const char *path, char **text)
{
    size_t size = 0;
    errno = 0;
    char *t = cg_read_file(path, MAX_FILE_BYTES, &size);
    if (!t)
        return cg_fail(CONVGEN_ERROR_IO, "cannot read wisdom file '%s': %s", path, cg_read_error(errno ? errno : EIO));
    if (size > MAX_FILE_BYTES || memchr(t, '\0', size)) {
        free(t);
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "wisdom file '%s' is not a text file of wisdom: ignored", path);
    }
    *text = t;
    return CONVGEN_SUCCESS;
}

/* Writes `text` to a temporary file beside `path` and renames it over `path`: a reader sees the
 * old file or the new one, never a part. */
static convgen_status write_atomically(const char *path, const char *text)
{
    size_t size = strlen(path) + 48;
    char *tmp = malloc(size);
    if (!tmp)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory writing wisdom");
    static unsigned counter; /* two threads of one process exporting at once */
    snprintf(tmp, size, "%s.%ld.%u.tmp", path, (long)getpid(), __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fputs(text, f) >= 0 && fflush(f) == 0 && fsync(fileno(f)) == 0;
    int err = errno;
    if (f && fclose(f) != 0)
        ok = false;
    if (ok && rename(tmp, path) != 0)
        ok = false, err = errno;
    if (!ok)
        remove(tmp);
    free(tmp);
    return ok ? CONVGEN_SUCCESS : cg_fail(CONVGEN_ERROR_IO, "cannot write wisdom file '%s': %s", path, strerror(err));
}

/* ---- the public calls ---- */

convgen_status convgen_wisdom_import_string(const char *text)
{
    if (!text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "text is NULL");
    return merge_text(text, "the wisdom text", false);
}

convgen_status wisdom_check_text(const char *text, const char *origin)
{
    wisdom_set parsed = {0};
    convgen_status s = parse_text(text, origin, &parsed);
    set_free(&parsed);
    return s;
}

convgen_status wisdom_import_provisional(const char *text, const char *origin)
{
    return merge_text(text, origin, true);
}

convgen_status convgen_wisdom_import(const char *path)
{
    if (!path)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "path is NULL");
    char *text, origin[512];
    convgen_status s = read_file(path, &text);
    if (s != CONVGEN_SUCCESS)
        return s;
    snprintf(origin, sizeof origin, "wisdom file '%s'", path);
    s = merge_text(text, origin, false);
    free(text);
    return s;
}

convgen_status convgen_wisdom_export_string(char **text)
{
    if (!text)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "text is NULL");
    pthread_mutex_lock(&lock);
    *text = set_text(&held);
    pthread_mutex_unlock(&lock);
    return *text ? CONVGEN_SUCCESS : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory exporting wisdom");
}

convgen_status convgen_wisdom_export(const char *path)
{
    if (!path || !*path)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "path is %s", path ? "empty" : "NULL");
    char *text;
    convgen_status s = convgen_wisdom_export_string(&text);
    if (s != CONVGEN_SUCCESS)
        return s;
    s = write_atomically(path, text);
    free(text);
    return s;
}

void convgen_wisdom_forget(void)
{
    pthread_mutex_lock(&lock);
    set_free(&held);
    pthread_mutex_unlock(&lock);
}

int convgen_wisdom_count(void)
{
    pthread_mutex_lock(&lock);
    int n = held.net_count;
    for (int i = 0; i < held.count; ++i)
        n += !stale(&held.v[i]);
    pthread_mutex_unlock(&lock);
    return n;
}

/* ---- $CONVGEN_WISDOM ---- */

/* Whether `held` has a measured (not provisional), not stale entry of exactly this key tuned with
 * at least `effort` (the caller holds the lock). */
static bool held_has(const wisdom_key *key, int effort)
{
    int i = set_find(&held, key, (wisdom_query){.exact_gpu = true, .measured_only = true, .effort = effort});
    return i >= 0 && !stale(&held.v[i]); /* a stale one yields to the file's (another process's retune) */
}

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t env_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *env_path(void)
{
    const char *path = getenv("CONVGEN_WISDOM");
    return path && *path ? path : NULL;
}

static void load_env_once(void)
{
    /* The kernel set's wisdom: what the build's kernels were chosen by, under every other
     * entry (provisional: it fills only keys nothing else holds, and is never exported). */
    if (cg_kernel_set.wisdom && cg_kernel_set.wisdom[0] && kernel_set_enabled() &&
        merge_text(cg_kernel_set.wisdom, "the kernel set's wisdom", true) != CONVGEN_SUCCESS)
        cg_warn("%s", convgen_last_error());
    cg_debug("wisdom: %d entries held from the kernel set", convgen_wisdom_count());
    const char *path = env_path();
    if (!path || access(path, F_OK) != 0)
        return; /* not there yet: the first tuned plan writes it */
    if (convgen_wisdom_import(path) != CONVGEN_SUCCESS)
        cg_warn("CONVGEN_WISDOM: %s", convgen_last_error());
    else
        cg_debug("CONVGEN_WISDOM: read %s (%d entries held)", path, convgen_wisdom_count());
}

void wisdom_load_env(void) { pthread_once(&env_once, load_env_once); }

void wisdom_save_env(void)
{
    const char *path = env_path();
    if (!path)
        return;
    pthread_mutex_lock(&env_lock);
    /* One process at a time (a lock file beside it): read what others added since, merge it
     * by the usual rule (more effort wins; ours on a tie), write it all back. A file that
     * is there but not wisdom is never overwritten. */
    size_t size = strlen(path) + 8;
    char *lock_path = malloc(size);
    int fd = -1;
    if (lock_path) {
        snprintf(lock_path, size, "%s.lock", path);
        fd = open(lock_path, O_CREAT | O_RDWR, 0644);
        if (fd >= 0)
            flock(fd, LOCK_EX);
    }
    char *text = NULL;
    wisdom_set theirs = {0};
    bool exists = access(path, F_OK) == 0;
    convgen_status s = exists ? read_file(path, &text) : CONVGEN_SUCCESS;
    if (s == CONVGEN_SUCCESS && text)
        s = parse_text(text, path, &theirs);
    if (s != CONVGEN_SUCCESS) {
        cg_warn("CONVGEN_WISDOM: %s; it is left as it is and this process's choices are not saved",
                convgen_last_error());
    } else {
        pthread_mutex_lock(&lock);
        for (int i = 0; i < theirs.count; ++i)
            if (!held_has(&theirs.v[i].key, theirs.v[i].effort))
                set_add(&held, &theirs.v[i]);
        for (int i = 0; i < theirs.net_count; ++i)
            if (net_find(&held, &theirs.nets[i].key, theirs.nets[i].effort, true) < 0)
                net_add(&held, &theirs.nets[i]);
        pthread_mutex_unlock(&lock);
        if (convgen_wisdom_export(path) != CONVGEN_SUCCESS)
            cg_warn("CONVGEN_WISDOM: %s", convgen_last_error());
    }
    free(text);
    set_free(&theirs);
    if (fd >= 0)
        close(fd); /* releases the lock */
    free(lock_path);
    pthread_mutex_unlock(&env_lock);
}
