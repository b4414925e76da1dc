/* Template values: reference-counted scalars, lists and insertion-ordered maps.
 * A container that fails to take an element is marked failed instead of reporting at once,
 * so code building a context checks tmpl_ok() once at the end. */
#include "tmpl_internal.h"

#include <stdlib.h>
#include <string.h>

static tmpl_value *tmpl_new(tmpl_kind kind)
{
    tmpl_value *v = malloc(sizeof *v);
    if (v)
        *v = (tmpl_value){.rc = 1, .kind = kind};
    return v;
}

tmpl_value *tmpl_none(void) { return tmpl_new(TMPL_NONE); }

tmpl_value *tmpl_int(int64_t i)
{
    tmpl_value *v = tmpl_new(TMPL_INT);
    if (v)
        v->u.i = i;
    return v;
}

tmpl_value *tmpl_float(double f)
{
    tmpl_value *v = tmpl_new(TMPL_FLOAT);
    if (v)
        v->u.f = f;
    return v;
}

tmpl_value *tmpl_bool(bool b)
{
    tmpl_value *v = tmpl_new(TMPL_BOOL);
    if (v)
        v->u.b = b;
    return v;
}

tmpl_value *tmpl_str_take(char *s, size_t n)
{
    if (!s)
        return NULL;
    tmpl_value *v = tmpl_new(TMPL_STR);
    if (!v) {
        free(s);
        return NULL;
    }
    v->u.str.s = s;
    v->u.str.len = n;
    return v;
}

tmpl_value *tmpl_str_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (!d)
        return NULL;
    memcpy(d, s, n);
    d[n] = '\0';
    return tmpl_str_take(d, n);
}

tmpl_value *tmpl_str(const char *s) { return s ? tmpl_str_n(s, strlen(s)) : NULL; }

tmpl_value *tmpl_list(void) { return tmpl_new(TMPL_LIST); }
tmpl_value *tmpl_map(void) { return tmpl_new(TMPL_MAP); }

tmpl_value *tmpl_macro_value(const tmpl_node *node, const char *tname)
{
    tmpl_value *v = tmpl_new(TMPL_MACRO);
    if (v) {
        v->u.macro.node = node;
        v->u.macro.tname = tname;
    }
    return v;
}

tmpl_value *tmpl_loop_value(int64_t index0, int64_t length)
{
    tmpl_value *v = tmpl_new(TMPL_LOOP);
    if (v) {
        v->u.loop.index0 = index0;
        v->u.loop.length = length;
    }
    return v;
}

tmpl_value *tmpl_ref(tmpl_value *v)
{
    if (v)
        v->rc++;
    return v;
}

static void tmpl_free_value(tmpl_value *v)
{
    switch (v->kind) {
    case TMPL_STR: free(v->u.str.s); break;
    case TMPL_LIST:
        for (size_t i = 0; i < v->u.list.len; ++i)
            tmpl_unref(v->u.list.items[i]);
        free(v->u.list.items);
        break;
    case TMPL_MAP:
        for (size_t i = 0; i < v->u.map.len; ++i) {
            free(v->u.map.entries[i].key);
            tmpl_unref(v->u.map.entries[i].v);
        }
        free(v->u.map.entries);
        free(v->u.map.slots);
        break;
    default: break;
    }
    free(v);
}

void tmpl_unref(tmpl_value *v)
{
    if (v && --v->rc == 0)
        tmpl_free_value(v);
}

/* ---- lists ---- */

void tmpl_list_push(tmpl_value *list, tmpl_value *v)
{
    if (!list || list->kind != TMPL_LIST) {
        tmpl_unref(v);
        return;
    }
    if (!v) {
        list->failed = true;
        return;
    }
    if (list->u.list.len == list->u.list.cap) {
        size_t cap = list->u.list.cap ? list->u.list.cap * 2 : 4;
        tmpl_value **items = realloc(list->u.list.items, cap * sizeof *items);
        if (!items) {
            list->failed = true;
            tmpl_unref(v);
            return;
        }
        list->u.list.items = items;
        list->u.list.cap = cap;
    }
    list->u.list.items[list->u.list.len++] = v;
}

/* ---- maps: entries in insertion order, an open-addressing index once they are many ---- */

enum { TMPL_MAP_LINEAR = 8 }; /* below this, a scan beats hashing */

static uint32_t tmpl_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; ++s)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Index of key in the map's entries, or -1; *slot gets where it is or would go. */
static long tmpl_map_find(const tmpl_value *m, const char *key, size_t *slot)
{
    if (!m->u.map.slots) {
        for (size_t i = 0; i < m->u.map.len; ++i)
            if (tmpl_streq(m->u.map.entries[i].key, key))
                return (long)i;
        return -1;
    }
    size_t mask = m->u.map.nslots - 1;
    for (size_t s = tmpl_hash(key) & mask;; s = (s + 1) & mask) {
        uint32_t e = m->u.map.slots[s];
        if (slot)
            *slot = s;
        if (e == 0)
            return -1;
        if (tmpl_streq(m->u.map.entries[e - 1].key, key))
            return (long)(e - 1);
    }
}

/* Rebuilds the index at a size that keeps it at most half full. */
static bool tmpl_map_reindex(tmpl_value *m, size_t want)
{
    size_t n = 16;
    while (n < 2 * want)
        n *= 2;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return false;
    free(m->u.map.slots);
    m->u.map.slots = slots;
    m->u.map.nslots = n;
    for (size_t i = 0; i < m->u.map.len; ++i) {
        size_t s = tmpl_hash(m->u.map.entries[i].key) & (n - 1);
        while (slots[s])
            s = (s + 1) & (n - 1);
        slots[s] = (uint32_t)(i + 1);
    }
    return true;
}

static bool tmpl_map_grow(tmpl_value *m)
{
    if (m->u.map.len == m->u.map.cap) {
        size_t cap = m->u.map.cap ? m->u.map.cap * 2 : 8;
        tmpl_entry *e = realloc(m->u.map.entries, cap * sizeof *e);
        if (!e)
            return false;
        m->u.map.entries = e;
        m->u.map.cap = cap;
    }
    size_t want = m->u.map.len + 1;
    if (want > TMPL_MAP_LINEAR && 2 * want > m->u.map.nslots)
        return tmpl_map_reindex(m, want);
    return true;
}

void tmpl_map_set(tmpl_value *map, const char *key, tmpl_value *v)
{
    if (!map || map->kind != TMPL_MAP || !key) {
        tmpl_unref(v);
        if (map && map->kind == TMPL_MAP)
            map->failed = true;
        return;
    }
    if (!v) {
        map->failed = true;
        return;
    }
    long i = tmpl_map_find(map, key, NULL);
    if (i >= 0) {
        tmpl_unref(map->u.map.entries[i].v);
        map->u.map.entries[i].v = v;
        return;
    }
    char *k = cg_strdup(key);
    if (!k || !tmpl_map_grow(map)) {
        free(k);
        tmpl_unref(v);
        map->failed = true;
        return;
    }
    size_t n = map->u.map.len++;
    map->u.map.entries[n] = (tmpl_entry){k, v};
    if (map->u.map.slots) {
        size_t slot = 0;
        tmpl_map_find(map, k, &slot); /* finds the empty slot: k is not indexed yet */
        map->u.map.slots[slot] = (uint32_t)(n + 1);
    }
}

tmpl_value *tmpl_map_get(const tmpl_value *map, const char *key)
{
    if (!map || map->kind != TMPL_MAP)
        return NULL;
    long i = tmpl_map_find(map, key, NULL);
    return i >= 0 ? map->u.map.entries[i].v : NULL;
}

void tmpl_set_int(tmpl_value *map, const char *key, int64_t v) { tmpl_map_set(map, key, tmpl_int(v)); }
void tmpl_set_float(tmpl_value *map, const char *key, double v) { tmpl_map_set(map, key, tmpl_float(v)); }
void tmpl_set_str(tmpl_value *map, const char *key, const char *s) { tmpl_map_set(map, key, tmpl_str(s)); }
void tmpl_set_bool(tmpl_value *map, const char *key, bool v) { tmpl_map_set(map, key, tmpl_bool(v)); }

bool tmpl_ok(const tmpl_value *v)
{
    if (!v || v->failed)
        return false;
    if (v->kind == TMPL_LIST)
        for (size_t i = 0; i < v->u.list.len; ++i)
            if (!tmpl_ok(v->u.list.items[i]))
                return false;
    if (v->kind == TMPL_MAP)
        for (size_t i = 0; i < v->u.map.len; ++i)
            if (!tmpl_ok(v->u.map.entries[i].v))
                return false;
    return true;
}

/* ---- properties ---- */

const char *tmpl_kind_name(tmpl_kind k)
{
    static const char *const names[] = {"none", "bool", "int", "float", "string", "list",
                                        "map", "macro", "loop"};
    return names[k];
}

/* As Python: zero, empty and none are false. */
bool tmpl_truthy(const tmpl_value *v)
{
    switch (v->kind) {
    case TMPL_NONE: return false;
    case TMPL_BOOL: return v->u.b;
    case TMPL_INT: return v->u.i != 0;
    case TMPL_FLOAT: return v->u.f != 0.0;
    case TMPL_STR: return v->u.str.len != 0;
    case TMPL_LIST: return v->u.list.len != 0;
    case TMPL_MAP: return v->u.map.len != 0;
    default: return true;
    }
}

static bool tmpl_map_equal(const tmpl_value *a, const tmpl_value *b)
{
    if (a->u.map.len != b->u.map.len)
        return false;
    for (size_t i = 0; i < a->u.map.len; ++i) {
        const tmpl_value *o = tmpl_map_get(b, a->u.map.entries[i].key);
        if (!o || !tmpl_equal(a->u.map.entries[i].v, o))
            return false;
    }
    return true;
}

/* Ints and floats compare by value; other kinds only equal their own kind. */
bool tmpl_equal(const tmpl_value *a, const tmpl_value *b)
{
    if (a->kind == TMPL_INT && b->kind == TMPL_FLOAT)
        return (double)a->u.i == b->u.f;
    if (a->kind == TMPL_FLOAT && b->kind == TMPL_INT)
        return a->u.f == (double)b->u.i;
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case TMPL_NONE: return true;
    case TMPL_BOOL: return a->u.b == b->u.b;
    case TMPL_INT: return a->u.i == b->u.i;
    case TMPL_FLOAT: return a->u.f == b->u.f;
    case TMPL_STR: return a->u.str.len == b->u.str.len && memcmp(a->u.str.s, b->u.str.s, a->u.str.len) == 0;
    case TMPL_LIST:
        if (a->u.list.len != b->u.list.len)
            return false;
        for (size_t i = 0; i < a->u.list.len; ++i)
            if (!tmpl_equal(a->u.list.items[i], b->u.list.items[i]))
                return false;
        return true;
    case TMPL_MAP: return tmpl_map_equal(a, b);
    case TMPL_MACRO: return a->u.macro.node == b->u.macro.node;
    default: return a == b;
    }
}
