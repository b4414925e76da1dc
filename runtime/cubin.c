#include "cubin.h"

#include <elf.h>
#include <stdint.h>
#include <string.h>

/* .nv.info attributes (as cuobjdump names them): per-function values keyed by symbol. */
enum { EIFMT_NVAL = 1, EIFMT_BVAL = 2, EIFMT_HVAL = 3, EIFMT_SVAL = 4 };
enum { EIATTR_FRAME_SIZE = 0x11, EIATTR_REGCOUNT = 0x2f };
#define SHT_NV_INFO 0x70000000u

typedef struct elf_view {
    const uint8_t *data;
    size_t size;
    const Elf64_Shdr *sections;
    unsigned count;
    const char *section_names;
} elf_view;

static bool in_bounds(const elf_view *e, uint64_t offset, uint64_t length)
{
    return offset <= e->size && length <= e->size - offset;
}

static bool open_elf(elf_view *e, const void *data, size_t size)
{
    const Elf64_Ehdr *h = data;
    e->data = data;
    e->size = size;
    if (size < sizeof *h || memcmp(h->e_ident, ELFMAG, SELFMAG) != 0 || h->e_ident[EI_CLASS] != ELFCLASS64 ||
        h->e_shentsize != sizeof(Elf64_Shdr) || !in_bounds(e, h->e_shoff, (uint64_t)h->e_shnum * sizeof(Elf64_Shdr)) ||
        h->e_shstrndx >= h->e_shnum)
        return false;
    e->sections = (const Elf64_Shdr *)(e->data + h->e_shoff);
    e->count = h->e_shnum;
    const Elf64_Shdr *names = &e->sections[h->e_shstrndx];
    if (!in_bounds(e, names->sh_offset, names->sh_size) || names->sh_size == 0 ||
        e->data[names->sh_offset + names->sh_size - 1] != '\0')
        return false;
    e->section_names = (const char *)e->data + names->sh_offset;
    return true;
}

static const Elf64_Shdr *section_named(const elf_view *e, const char *prefix, const char *suffix)
{
    for (unsigned i = 0; i < e->count; ++i) {
        const Elf64_Shdr *s = &e->sections[i];
        const char *n = e->section_names + s->sh_name;
        size_t plen = strlen(prefix);
        if (s->sh_name < e->sections[((const Elf64_Ehdr *)e->data)->e_shstrndx].sh_size &&
            strncmp(n, prefix, plen) == 0 && strcmp(n + plen, suffix) == 0)
            return s;
    }
    return NULL;
}

/* The symbol table index of `name`, or -1. */
static long symbol_index(const elf_view *e, const char *name)
{
    for (unsigned i = 0; i < e->count; ++i) {
        const Elf64_Shdr *symtab = &e->sections[i];
        if (symtab->sh_type != SHT_SYMTAB || symtab->sh_link >= e->count ||
            !in_bounds(e, symtab->sh_offset, symtab->sh_size))
            continue;
        const Elf64_Shdr *strtab = &e->sections[symtab->sh_link];
        if (!in_bounds(e, strtab->sh_offset, strtab->sh_size))
            continue;
        const Elf64_Sym *syms = (const Elf64_Sym *)(e->data + symtab->sh_offset);
        size_t n = symtab->sh_size / sizeof *syms, len = strlen(name);
        for (size_t j = 0; j < n; ++j)
            if (syms[j].st_name + len < strtab->sh_size &&
                memcmp(e->data + strtab->sh_offset + syms[j].st_name, name, len + 1) == 0)
                return (long)j;
    }
    return -1;
}

/* Walks the global .nv.info entries and takes the two that describe symbol `sym`. */
static bool read_attributes(const elf_view *e, long sym, cache_kernel *k)
{
    const Elf64_Shdr *info = section_named(e, ".nv.info", "");
    if (!info || info->sh_type != SHT_NV_INFO || !in_bounds(e, info->sh_offset, info->sh_size))
        return false;
    const uint8_t *p = e->data + info->sh_offset, *end = p + info->sh_size;
    bool have_regs = false;
    while (end - p >= 2) {
        uint8_t format = p[0], attr = p[1];
        p += 2;
        size_t len = format == EIFMT_NVAL ? 0 : format == EIFMT_BVAL ? 1 : format == EIFMT_HVAL ? 2 : SIZE_MAX;
        if (format == EIFMT_SVAL && end - p >= 2)
            len = (size_t)(p[0] | p[1] << 8), p += 2;
        if (len == SIZE_MAX || (size_t)(end - p) < len)
            return false;
        uint32_t pair[2];
        if (format == EIFMT_SVAL && len == 8 && (memcpy(pair, p, 8), pair[0] == (uint32_t)sym)) {
            if (attr == EIATTR_REGCOUNT)
                k->registers = (int)pair[1], have_regs = true;
            else if (attr == EIATTR_FRAME_SIZE)
                k->stack_bytes = (int)pair[1];
        }
        p += len;
    }
    return have_regs;
}

bool cubin_read_report(const void *cubin, size_t size, const char *name, cache_kernel *k)
{
    elf_view e;
    long sym;
    if (!cubin || !open_elf(&e, cubin, size) || (sym = symbol_index(&e, name)) < 0)
        return false;
    k->stack_bytes = 0;
    if (!read_attributes(&e, sym, k))
        return false;
    const Elf64_Shdr *shared = section_named(&e, ".nv.shared.", name);
    k->shared_bytes = shared ? (int)shared->sh_size : 0;
    return true;
}
