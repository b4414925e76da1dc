/* Fuzz target: the wisdom reader (runtime/wisdom.c) through convgen_wisdom_import_string.
 * A checksummed format stops a mutated file at its last line, so an input without an end line
 * is taken as a body and sealed here (the end line, with its count of entry lines and XXH64,
 * appended) to reach the entry parser; one with an end line is imported as it is. Any format
 * the reader takes (1, the oldest, 2, 3 with the networks' patches, 4 with the entries'
 * candidates) may come in. What imports must export (in the oldest format that holds it: 4
 * where an entry's candidates are known, else 3 where it holds a network's line, else 2) and
 * import again to the same number of entries, and export then to the same text: every variant
 * an entry holds is one its planner reads back, every network one the network parser reads
 * back, and a stale entry (its candidates not this convgen's) is neither counted nor written. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convgen.h"
#include "util.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether an exported text has an entry line ending in a known candidates=: 16 hex digits, not
 * all zeros (a quoted GPU name may hold the words too). */
static int has_known_candidates(const char *text)
{
    for (const char *p = strstr(text, " candidates="); p; p = strstr(p + 1, " candidates=")) {
        const char *h = p + strlen(" candidates=");
        if (strspn(h, "0123456789abcdef") == 16 && h[16] == '\n' && strspn(h, "0") < 16)
            return 1;
    }
    return 0;
}

/* The body's entry lines: those after the first that are neither empty nor comments. */
static int entry_lines(const char *body)
{
    int count = 0, first = 1;
    for (const char *p = body; *p;) {
        size_t n = strcspn(p, "\n");
        if (!first && n && p[0] != '#')
            ++count;
        first = 0;
        p += n + (p[n] == '\n');
    }
    return count;
}

static char *sealed(const char *body)
{
    cg_buf b = {0};
    cg_buf_puts(&b, body);
    if (b.len && b.data[b.len - 1] != '\n')
        cg_buf_puts(&b, "\n");
    uint64_t sum = XXH64(b.data ? b.data : "", b.len, 0);
    cg_buf_printf(&b, "end entries=%d xxh64=%016" PRIx64 "\n", entry_lines(body), sum);
    return cg_buf_take(&b);
}

/* Whether a line of `text` starts with "end " (the reader takes the last such as the end line). */
static int has_end_line(const char *text)
{
    for (const char *p = text; *p; p += strcspn(p, "\n"), p += *p == '\n')
        if (strncmp(p, "end ", 4) == 0)
            return 1;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1);
    if (!body)
        return 0;
    memcpy(body, data, size);
    body[size] = '\0';
    char *text = has_end_line(body) ? body : sealed(body);
    if (text && convgen_wisdom_import_string(text) == CONVGEN_SUCCESS) {
        int count = convgen_wisdom_count();
        char *out = NULL, *again = NULL;
        if (convgen_wisdom_export_string(&out) != CONVGEN_SUCCESS ||
            strncmp(out, has_known_candidates(out) ? "convgen-wisdom 4\n"
                         : strstr(out, "\nnet=")      ? "convgen-wisdom 3\n"
                                                       : "convgen-wisdom 2\n", 17) != 0)
            abort(); /* the oldest format that holds the entries: 4 with candidates, 3 with a network's patch */
        convgen_wisdom_forget();
        if (convgen_wisdom_import_string(out) != CONVGEN_SUCCESS || convgen_wisdom_count() != count) {
            fprintf(stderr, "round trip: %d entries imported, %d after export and import: %s\n", count,
                    convgen_wisdom_count(), convgen_last_error());
            abort();
        }
        if (convgen_wisdom_export_string(&again) != CONVGEN_SUCCESS || strcmp(out, again) != 0) {
            fprintf(stderr, "round trip: exported again, the text changed:\n%s\n---\n%s", out, again ? again : "");
            abort();
        }
        free(out);
        free(again);
    }
    convgen_wisdom_forget();
    if (text != body)
        free(text);
    free(body);
    return 0;
}
