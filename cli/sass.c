/* The SASS instruction mix of a compiled kernel, for convgen compile: the cubin (from the kernel
 * caches) disassembled by cuobjdump or nvdisasm, whichever the CUDA toolkit on PATH has, and its
 * instructions counted by opcode. Neither tool has a library interface, so they run as
 * programs; without them there is no mix, and compile says so once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "jit.h"
#include "verbs.h"

#define MAX_OPCODES 128

typedef struct opcode_count {
    char name[16];
    int count;
} opcode_count;

static bool on_path(const char *tool)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

/* The disassembler's command for a cubin file, or NULL. */
static const char *disassembler(void)
{
    static int which = -1; /* 0: none, 1: cuobjdump, 2: nvdisasm */
    if (which < 0)
        which = on_path("cuobjdump") ? 1 : on_path("nvdisasm") ? 2 : 0;
    return which == 1 ? "cuobjdump -sass" : which == 2 ? "nvdisasm" : NULL;
}

/* The opcode of a SASS line: the word after the address comment and any predicate (FFMA of
 * "@P0 FFMA R0, R1, R2, R3 ;"), or false. */
static bool opcode_of(const char *line, char *op, size_t size)
{
    const char *at = strstr(line, "*/");
    if (!strstr(line, "/*") || !at || !strchr(line, ';'))
        return false;
    at += 2;
    while (*at == ' ' || *at == '\t')
        ++at;
    if (*at == '@') /* a predicate */
        at += strcspn(at, " \t"), at += strspn(at, " \t");
    size_t n = strcspn(at, " .;\t");
    if (n == 0 || n >= size || at[0] < 'A' || at[0] > 'Z')
        return false;
    memcpy(op, at, n);
    op[n] = '\0';
    return true;
}

static int by_count(const void *a, const void *b)
{
    return ((const opcode_count *)b)->count - ((const opcode_count *)a)->count;
}

static int count_opcodes(FILE *in, opcode_count *ops, int *total)
{
    char line[1024], op[16];
    int n = 0;
    *total = 0;
    while (fgets(line, sizeof line, in)) {
        if (!opcode_of(line, op, sizeof op))
            continue;
        ++*total;
        int i = 0;
        while (i < n && strcmp(ops[i].name, op) != 0)
            ++i;
        if (i == n && n < MAX_OPCODES) {
            snprintf(ops[n].name, sizeof ops[n].name, "%s", op);
            ops[n++].count = 0;
        }
        if (i < n)
            ++ops[i].count;
    }
    qsort(ops, (size_t)n, sizeof *ops, by_count);
    return n;
}

bool cli_sass_available(void) { return disassembler() != NULL; }

bool cli_sass_mix(const char *source, const char *name, const char *arch, char *mix, size_t size)
{
    const char *tool = disassembler();
    cache_kernel k;
    convgen_kernel_origin origin;
    if (!tool || jit_get(source, name, arch, NULL, &k, &origin) != CONVGEN_SUCCESS)
        return false;
    char path[] = "/tmp/convgen-sass-XXXXXX";
    int fd = mkstemp(path);
    bool ok = fd >= 0 && write(fd, k.cubin, k.cubin_size) == (ssize_t)k.cubin_size;
    if (fd >= 0)
        close(fd);
    cache_kernel_free(&k);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%s %s 2>/dev/null", tool, path);
    FILE *in = ok ? popen(cmd, "r") : NULL;
    opcode_count ops[MAX_OPCODES];
    int total = 0, n = in ? count_opcodes(in, ops, &total) : 0;
    if (in)
        ok = pclose(in) == 0 && total > 0;
    unlink(path);
    if (!ok)
        return false;
    int used = snprintf(mix, size, "%d instructions:", total);
    for (int i = 0; i < n && i < 10 && used < (int)size; ++i)
        used += snprintf(mix + used, size - (size_t)used, " %s %.1f%%", ops[i].name, 100.0 * ops[i].count / total);
    return true;
}
