/* The disk cache (cache.h): one file per kernel, <dir>/<2 hex>/<32 hex>.cgk.
 *
 * Entry layout, every integer little-endian, written field by field (never a struct dump, so
 * the file does not depend on the compiler's padding or the host's byte order):
 *
 *   offset  size  field
 *        0     8  magic "CGKERNEL"
 *        8     4  u32 format version (ENTRY_VERSION)
 *       12     4  u32 header size (ENTRY_HEADER_SIZE)
 *       16     8  u64 key hi
 *       24     8  u64 key lo
 *       32    20  i32 registers, shared bytes, stack bytes, spill store bytes, spill load bytes
 *       52     8  f64 compile_ms (IEEE-754 bits)
 *       60     8  u64 payload length
 *       68     8  u64 payload checksum (XXH3-64 of the cubin)
 *       76     8  u64 header checksum (XXH3-64 of bytes 0..75)
 *       84     …  the cubin, exactly `payload length` bytes, nothing after it
 *
 * Writers go through a temporary file in the entry's folder and rename(2) it into place, so
 * readers see a whole entry or none, and racing writers of one key each leave a whole entry.
 * Readers trust nothing: an entry failing any check is unlinked and reported as a miss, so the
 * next compile rewrites it. */
#include "cache.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define ENTRY_MAGIC "CGKERNEL"
#define ENTRY_VERSION 1u
#define ENTRY_HEADER_SIZE 84u
#define ENTRY_HEADER_SUM_OFFSET 76u
/* No cubin comes near this; a larger length is damage, refused before allocating. */
#define ENTRY_MAX_PAYLOAD ((uint64_t)256 << 20)

struct cache_disk {
    char *dir;
    bool writable;
    atomic_bool warned; /* one write-failure warning per cache, from any thread */
};

/* ---- where the folder is ---- */

/* "<a>/<b>", malloc'ed; NULL if out of memory. */
static char *path_join(const char *a, const char *b)
{
    cg_buf p = {0};
    cg_buf_printf(&p, "%s/%s", a, b);
    return cg_buf_take(&p);
}

/* The folder per cache.h's order, malloc'ed; NULL when none can be named (or out of memory).
 * CONVGEN_CACHE_DIR=off wins over everything, `dir` included: it is the user's switch for
 * programs that pass a folder of their own. An empty variable counts as unset, and a relative
 * XDG_CACHE_HOME is ignored, as the XDG base directory specification asks. */
static char *cache_dir_named(const char *dir, bool *off)
{
    const char *env = getenv("CONVGEN_CACHE_DIR");
    *off = env && strcmp(env, "off") == 0;
    if (*off)
        return NULL;
    if (dir && *dir)
        return cg_strdup(dir);
    if (env && *env)
        return cg_strdup(env);
    const char *xdg = getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/')
        return path_join(xdg, "convgen");
    const char *home = getenv("HOME");
    if (home && *home)
        return path_join(home, ".cache/convgen");
    return NULL;
}

/* mkdir -p with mode 0755; false with errno set if `path` is not a folder afterwards. */
static bool make_dirs(const char *path)
{
    char *p = cg_strdup(path);
    if (!p) {
        errno = ENOMEM;
        return false;
    }
    bool ok = true;
    for (char *s = p + 1; ok && *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        ok = mkdir(p, 0755) == 0 || errno == EEXIST;
        *s = '/';
    }
    struct stat st;
    if (ok && mkdir(p, 0755) != 0 && errno != EEXIST)
        ok = false;
    if (ok && (stat(p, &st) != 0 || !S_ISDIR(st.st_mode))) {
        if (errno == 0 || errno == EEXIST)
            errno = ENOTDIR;
        ok = false;
    }
    free(p);
    return ok;
}

/* Tries what a put does (create a file in the folder), once, so an unwritable folder costs
 * one warning at open instead of one failed write per kernel. Permission bits alone would be
 * wrong for root, read-only mounts and ACLs. */
static bool probe_writable(const char *dir)
{
    char *tmpl = path_join(dir, ".probe-XXXXXX");
    if (!tmpl) {
        errno = ENOMEM;
        return false;
    }
    int fd = mkstemp(tmpl);
    if (fd >= 0) {
        close(fd);
        unlink(tmpl);
    }
    free(tmpl);
    return fd >= 0;
}

cache_disk *cache_disk_open(const char *dir)
{
    bool off;
    char *path = cache_dir_named(dir, &off);
    if (!path) {
        cg_debug("cache: disk cache %s", off ? "off (CONVGEN_CACHE_DIR=off)" : "has no folder");
        return NULL;
    }
    cache_disk *d = calloc(1, sizeof *d);
    if (!d) {
        free(path);
        return NULL;
    }
    d->dir = path;
    atomic_init(&d->warned, false);
    errno = 0;
    d->writable = make_dirs(path) && probe_writable(path);
    if (!d->writable)
        cg_warn("kernel cache folder %s cannot be created or written (%s); caching falls back "
                "to memory only", path, strerror(errno));
    return d;
}

void cache_disk_close(cache_disk *d)
{
    if (!d)
        return;
    free(d->dir);
    free(d);
}

const char *cache_disk_dir(const cache_disk *d) { return d ? d->dir : NULL; }
bool cache_disk_writable(const cache_disk *d) { return d && d->writable; }

char *cache_disk_entry_path(const cache_disk *d, cache_key key)
{
    char hex[33];
    cache_key_hex(key, hex);
    cg_buf p = {0};
    cg_buf_printf(&p, "%s/%.2s/%s.cgk", d->dir, hex, hex);
    return cg_buf_take(&p);
}

/* ---- the entry header ---- */

typedef struct entry_header {
    char magic[8];
    uint32_t version, header_size;
    cache_key key;
    int32_t registers, shared_bytes, stack_bytes, spill_store_bytes, spill_load_bytes;
    double compile_ms;
    uint64_t payload_size, payload_sum, header_sum;
} entry_header;

static unsigned char *put_le(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static uint64_t get_le(const unsigned char **p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)(*p)[i] << (8 * i);
    *p += bytes;
    return v;
}

/* The header of `k` under `key`, checksums included. */
static void header_encode(cache_key key, const cache_kernel *k, unsigned char out[ENTRY_HEADER_SIZE])
{
    uint64_t ms;
    memcpy(&ms, &k->compile_ms, sizeof ms);
    memcpy(out, ENTRY_MAGIC, 8);
    unsigned char *p = out + 8;
    p = put_le(p, ENTRY_VERSION, 4);
    p = put_le(p, ENTRY_HEADER_SIZE, 4);
    p = put_le(p, key.hi, 8);
    p = put_le(p, key.lo, 8);
    p = put_le(p, (uint32_t)k->registers, 4);
    p = put_le(p, (uint32_t)k->shared_bytes, 4);
    p = put_le(p, (uint32_t)k->stack_bytes, 4);
    p = put_le(p, (uint32_t)k->spill_store_bytes, 4);
    p = put_le(p, (uint32_t)k->spill_load_bytes, 4);
    p = put_le(p, ms, 8);
    p = put_le(p, k->cubin_size, 8);
    p = put_le(p, XXH3_64bits(k->cubin, k->cubin_size), 8);
    put_le(p, XXH3_64bits(out, ENTRY_HEADER_SUM_OFFSET), 8);
}

static void header_decode(const unsigned char in[ENTRY_HEADER_SIZE], entry_header *h)
{
    memcpy(h->magic, in, 8);
    const unsigned char *p = in + 8;
    h->version = (uint32_t)get_le(&p, 4);
    h->header_size = (uint32_t)get_le(&p, 4);
    h->key.hi = get_le(&p, 8);
    h->key.lo = get_le(&p, 8);
    h->registers = (int32_t)(uint32_t)get_le(&p, 4);
    h->shared_bytes = (int32_t)(uint32_t)get_le(&p, 4);
    h->stack_bytes = (int32_t)(uint32_t)get_le(&p, 4);
    h->spill_store_bytes = (int32_t)(uint32_t)get_le(&p, 4);
    h->spill_load_bytes = (int32_t)(uint32_t)get_le(&p, 4);
    uint64_t ms = get_le(&p, 8);
    memcpy(&h->compile_ms, &ms, sizeof ms);
    h->payload_size = get_le(&p, 8);
    h->payload_sum = get_le(&p, 8);
    h->header_sum = get_le(&p, 8);
}

/* Why the header cannot be of this key's valid entry, or NULL if it can. `why` holds the
 * message; `rest` is the number of bytes that follow the header in the file. */
static const char *header_problem(const unsigned char *raw, const entry_header *h, cache_key key,
                                  uint64_t rest, char *why, size_t why_size)
{
    if (memcmp(h->magic, ENTRY_MAGIC, 8) != 0)
        return "not a convgen cache entry (bad magic)";
    if (h->header_sum != XXH3_64bits(raw, ENTRY_HEADER_SUM_OFFSET))
        return "header checksum mismatch";
    if (h->version != ENTRY_VERSION) {
        snprintf(why, why_size, "format version %u, expected %u", h->version, ENTRY_VERSION);
        return why;
    }
    if (h->header_size != ENTRY_HEADER_SIZE)
        return "unexpected header size";
    if (h->key.hi != key.hi || h->key.lo != key.lo)
        return "entry of another key";
    if (h->payload_size > ENTRY_MAX_PAYLOAD)
        return "payload length over the limit";
    if (h->payload_size != rest) {
        snprintf(why, why_size, "payload length %llu but %llu bytes follow the header",
                 (unsigned long long)h->payload_size, (unsigned long long)rest);
        return why;
    }
    return NULL;
}

/* ---- reading ---- */

/* Reads exactly n bytes: n, or fewer at end of file, or -1 on an error. */
static ssize_t read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    return (ssize_t)got;
}

typedef enum { ENTRY_OK, ENTRY_MISS, ENTRY_BAD } entry_verdict;

/* The kernel of a checked header and its cubin (taken over). */
static cache_kernel kernel_of(const entry_header *h, void *cubin)
{
    return (cache_kernel){
        .cubin = cubin, .cubin_size = (size_t)h->payload_size, .registers = h->registers,
        .shared_bytes = h->shared_bytes, .stack_bytes = h->stack_bytes,
        .spill_store_bytes = h->spill_store_bytes, .spill_load_bytes = h->spill_load_bytes,
        .compile_ms = h->compile_ms,
    };
}

/* Checks an entry's bytes (header, format, key, lengths, checksum) and copies its kernel out.
 * Out of memory is a plain miss (the entry may be fine); anything else wrong is bad. */
static entry_verdict entry_parse(const unsigned char *raw, size_t size, cache_key key, cache_kernel *out,
                                 const char **why, char *buf, size_t buf_size)
{
    entry_header h;
    if (size < ENTRY_HEADER_SIZE) {
        *why = "shorter than a header";
        return ENTRY_BAD;
    }
    header_decode(raw, &h);
    *why = header_problem(raw, &h, key, (uint64_t)size - ENTRY_HEADER_SIZE, buf, buf_size);
    if (*why)
        return ENTRY_BAD;
    size_t n = (size_t)h.payload_size;
    if (XXH3_64bits(raw + ENTRY_HEADER_SIZE, n) != h.payload_sum) {
        *why = "payload checksum mismatch";
        return ENTRY_BAD;
    }
    void *cubin = malloc(n ? n : 1);
    if (!cubin) {
        *why = "out of memory";
        return ENTRY_MISS;
    }
    memcpy(cubin, raw + ENTRY_HEADER_SIZE, n);
    *out = kernel_of(&h, cubin);
    return ENTRY_OK;
}

bool cache_entry_parse(const void *bytes, size_t size, cache_key key, cache_kernel *out, const char **why,
                       char *buf, size_t buf_size)
{
    return entry_parse(bytes, size, key, out, why, buf, buf_size) == ENTRY_OK;
}

/* Reads the open entry `fd` whole and checks it as entry_parse does (the fuzz target's path). */
static entry_verdict entry_read(int fd, cache_key key, cache_kernel *out, const char **why,
                                char *buf, size_t buf_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *why = "cannot stat";
        return ENTRY_MISS;
    }
    if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < ENTRY_HEADER_SIZE) {
        *why = S_ISREG(st.st_mode) ? "shorter than a header" : "not a regular file";
        return ENTRY_BAD;
    }
    if ((uint64_t)st.st_size > SIZE_MAX / 2) {
        *why = "larger than memory";
        return ENTRY_BAD;
    }
    size_t size = (size_t)st.st_size;
    unsigned char *raw = malloc(size);
    if (!raw) {
        *why = "out of memory";
        return ENTRY_MISS;
    }
    ssize_t got = read_full(fd, raw, size);
    entry_verdict v;
    if (got < 0) {
        *why = "read error";
        v = ENTRY_MISS;
    } else {
        /* a file shorter than fstat said is judged by what it holds: its lengths then disagree */
        v = entry_parse(raw, (size_t)got, key, out, why, buf, buf_size);
    }
    free(raw);
    return v;
}

/* Unlinks a bad entry, unless a writer has renamed a fresh one over it since we opened it:
 * the name then points at another file, which is not ours to judge. */
static void entry_remove(const char *path, int fd)
{
    struct stat open_st, path_st;
    if (fstat(fd, &open_st) == 0 && stat(path, &path_st) == 0 && open_st.st_dev == path_st.st_dev
        && open_st.st_ino == path_st.st_ino)
        unlink(path);
}

bool cache_disk_get(cache_disk *d, cache_key key, cache_kernel *out)
{
    if (!d)
        return false;
    char *path = cache_disk_entry_path(d, key);
    if (!path)
        return false;
    /* O_NONBLOCK: a FIFO planted at the entry's name must not hang us; files ignore it. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    entry_verdict v = ENTRY_MISS;
    if (fd >= 0) {
        const char *why = NULL;
        char buf[160];
        v = entry_read(fd, key, out, &why, buf, sizeof buf);
        if (v != ENTRY_OK)
            cg_debug("cache: %s %s: %s", v == ENTRY_BAD ? "removing" : "skipping", path, why);
        if (v == ENTRY_BAD)
            entry_remove(path, fd);
        close(fd);
    }
    free(path);
    return v == ENTRY_OK;
}

/* ---- writing ---- */

static bool write_full(int fd, const void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(fd, (const char *)buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return false;
        done += (size_t)w;
    }
    return true;
}

/* Fills the temporary file. No fsync: after a crash an entry may be short or zeroed, which
 * the reader's length and checksum checks catch and remove, costing one recompile; an fsync
 * per kernel would cost every compile a disk flush to guard against that. */
static bool tmp_fill(int fd, cache_key key, const cache_kernel *k)
{
    unsigned char raw[ENTRY_HEADER_SIZE];
    header_encode(key, k, raw);
    return write_full(fd, raw, sizeof raw) && write_full(fd, k->cubin, k->cubin_size)
        && fchmod(fd, 0644) == 0;
}

/* Writes the entry through "<path>.tmp-XXXXXX" and renames it over `path`. On failure, sets
 * *step to what failed, leaves errno as that step set it and no temporary file behind. */
static bool entry_write(const char *path, cache_key key, const cache_kernel *k, const char **step)
{
    cg_buf t = {0};
    cg_buf_printf(&t, "%s.tmp-XXXXXX", path);
    char *tmp = cg_buf_take(&t);
    *step = "allocate a path";
    errno = ENOMEM;
    int fd = tmp ? mkstemp(tmp) : -1;
    if (fd < 0) {
        if (tmp)
            *step = "create a temporary file";
        free(tmp);
        return false;
    }
    bool ok = tmp_fill(fd, key, k);
    *step = "write";
    if (close(fd) != 0 && ok) {
        ok = false;
        *step = "close";
    }
    if (ok && rename(tmp, path) != 0) {
        ok = false;
        *step = "rename into place";
    }
    if (!ok) {
        int e = errno;
        unlink(tmp);
        errno = e;
    }
    free(tmp);
    return ok;
}

/* The entry's two-hex-digit folder, with mkdir -p: the cache folder itself may have been
 * removed since open (someone cleaning ~/.cache), and a cache should heal from that. */
static bool entry_folder_make(const char *path)
{
    char *folder = cg_strdup(path);
    if (!folder) {
        errno = ENOMEM;
        return false;
    }
    *strrchr(folder, '/') = '\0';
    bool ok = make_dirs(folder);
    free(folder);
    return ok;
}

void cache_disk_put(cache_disk *d, cache_key key, const cache_kernel *k)
{
    if (!d || !d->writable)
        return;
    if (k->cubin_size > ENTRY_MAX_PAYLOAD) {
        cg_debug("cache: not storing a %zu-byte cubin (over the entry limit)", k->cubin_size);
        return;
    }
    char *path = cache_disk_entry_path(d, key);
    const char *step = "allocate a path";
    bool ok = false;
    errno = ENOMEM;
    if (path && !entry_folder_make(path))
        step = "create its folder";
    else if (path)
        ok = entry_write(path, key, k, &step);
    if (!ok && !atomic_exchange(&d->warned, true))
        cg_warn("kernel cache: cannot store an entry under %s (%s: %s); further write failures "
                "of this cache are not reported", d->dir, step, strerror(errno));
    free(path);
}
