/* What convgen generate's two ways of building a kernel set share (generate_set.h): the run's
 * architectures and layer names, each program of the set planned in turn, the sources written
 * where they changed, the kept kernels and the set written as C (--embed, and embed-set). */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "generate.h"
#include "jit.h"
#include "plan.h"
#include "tune.h"
#include "util.h"
#include "generate_set.h"
#include "verbs.h"

/* Writes `size` bytes unless the file holds them already: its time stamp then stays, and what
 * depends on it is not rebuilt. */
int gen_write_if_changed(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "rb");
    if (f) {
        bool same = true;
        char chunk[65536];
        size_t at = 0, n;
        while (same && (n = fread(chunk, 1, sizeof chunk, f)) > 0)
            same = at + n <= size && memcmp(chunk, (const char *)data + at, n) == 0, at += n;
        fclose(f);
        if (same && at == size)
            return 0;
    }
    f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "convgen: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

/* What is wrong with architecture `t` as the run's next, or NULL. */
static const char *arch_problem(const generate_run *r, const char *t)
{
    if (!*t)
        return "an empty name";
    if (r->arch_count == MAX_ARCHS)
        return "more than 8 architectures";
    if (strlen(t) >= sizeof r->archs[0])
        return "a name too long";
    return jit_check_arch(t) == CONVGEN_SUCCESS ? NULL : convgen_last_error();
}

/* --arch sm_80,sm_90: every name checked; an empty list or name is an error, as compile's
 * --arch '' is (it built nothing and succeeded). */
int gen_parse_archs(const char *list, generate_run *r)
{
    char *copy = strdup(list ? list : "sm_90"), *rest = copy;
    const char *problem = copy ? NULL : "out of memory";
    for (char *t; !problem && (t = strsep(&rest, ",")) != NULL;)
        if (!(problem = arch_problem(r, t)))
            snprintf(r->archs[r->arch_count++], sizeof r->archs[0], "%s", t);
    if (problem)
        fprintf(stderr, "convgen: --arch '%s' must be architectures like sm_90 or sm_80,sm_90: %s\n",
                list ? list : "sm_90", problem);
    free(copy);
    return problem ? 2 : 0;
}

/* The line's algorithm ("algo=NAME" among the words after the layer), else the run's. */
void gen_layer_name(const cg_layer *l, int index, char *name, size_t size)
{
    if (l->name[0])
        snprintf(name, size, "%s", l->name);
    else
        snprintf(name, size, "layer%d", index);
}

int gen_algo_of(const generate_run *r, const cg_layer *l, convgen_algo *algo)
{
    const char *at = strstr(l->note, "algo=");
    *algo = r->algo_given ? r->a->algo : CONVGEN_ALGO_AUTO;
    if (!at)
        return 0;
    char name[32] = "";
    sscanf(at + 5, "%31s", name);
    const cg_planner *p = cg_planner_named(name);
    if (!p && strcmp(name, "auto") != 0) {
        char names[256];
        cli_algo_names(names, sizeof names);
        fprintf(stderr, "convgen: layer %s: algo=%s is not an algorithm: %s\n", l->name, name, names);
        return 1;
    }
    *algo = p ? p->algo : CONVGEN_ALGO_AUTO;
    return 0;
}

bool gen_same_key(cache_key a, cache_key b) { return a.hi == b.hi && a.lo == b.lo; }

/* Keeps a compiled kernel (the set takes it), unless the set has it already (freed). */
int gen_keep(kernel_set *set, set_kernel *k)
{
    for (int i = 0; i < set->count; ++i)
        if (gen_same_key(set->k[i].key, k->key)) {
            cache_kernel_free(&k->compiled); /* the same kernel for another layer or pass */
            return 0;
        }
    if (set->count == set->cap) {
        int cap = set->cap ? 2 * set->cap : 256;
        set_kernel *grown = realloc(set->k, sizeof *grown * (size_t)cap);
        if (!grown)
            return 1;
        set->k = grown, set->cap = cap;
    }
    set->k[set->count++] = *k;
    return 0;
}

/* <layer>_<algo>_<pass>[_<i>].cu; where this run wrote another kernel (another architecture's)
 * under that name, .<arch> before .cu. */
int gen_write_source(generate_run *r, const char *layer, const char *arch, convgen_algo algo, convgen_pass pass, int i,
                     const char *src, char *file, size_t size)
{
    cache_key key = jit_key(src, "any"); /* the text's, whatever the architecture */
    snprintf(file, size, "%s_%s_%s%s%.0d.cu", layer, convgen_algo_name(algo), convgen_pass_name(pass), i ? "_" : "", i);
    for (int f = 0; f < r->file_count; ++f)
        if (strcmp(r->files[f].name, file) == 0) {
            if (gen_same_key(r->files[f].key, key))
                return 0; /* written already */
            snprintf(file + strlen(file) - 3, size - strlen(file) + 3, ".%s.cu", arch);
        }
    if (r->file_count == r->file_cap) {
        int cap = r->file_cap ? 2 * r->file_cap : 256;
        written_file *grown = realloc(r->files, sizeof *grown * (size_t)cap);
        if (!grown)
            return 1;
        r->files = grown, r->file_cap = cap;
    }
    written_file *w = &r->files[r->file_count++];
    snprintf(w->name, sizeof w->name, "%s", file);
    w->key = key;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", r->a->out_dir, file);
    return gen_write_if_changed(path, src, strlen(src));
}

/* The choice and the program of one layer's pass for the context's architecture. */
static convgen_status program_of(generate_run *r, convgen_context *ctx, const cg_layer *l, convgen_pass pass,
                                 convgen_algo algo, cg_generated *gen, const char **how)
{
    convgen_plan_options o = r->a->options;
    convgen_chosen_by by = CONVGEN_CHOSEN_BY_CALLER;
    convgen_status s = algo == CONVGEN_ALGO_AUTO ? tune_choose(ctx, &l->desc, pass, &r->a->options, &algo, &o, &by)
                                                 : CONVGEN_SUCCESS;
    *how = by == CONVGEN_CHOSEN_BY_WISDOM ? " (wisdom)" : by == CONVGEN_CHOSEN_BY_ESTIMATE ? " (cost model)" : "";
    cg_problem p;
    cg_tuning t;
    cg_target target = plan_target_of(ctx);
    if (s == CONVGEN_SUCCESS)
        s = cg_problem_init(&p, &l->desc);
    if (s == CONVGEN_SUCCESS)
        s = plan_tuning_of(&o, &t);
    return s == CONVGEN_SUCCESS ? cg_generate_tuned(&p, pass, algo, &target, &t, gen) : s;
}

/* One layer's passes for one architecture: the choice, the program, fn on it. */
static int each_pass(generate_run *r, convgen_context *ctx, const char *arch, const cg_layer *l, int index,
                     gen_program_fn fn, void *user)
{
    convgen_algo algo;
    if (gen_algo_of(r, l, &algo))
        return 2;
    char layer[40];
    gen_layer_name(l, index, layer, sizeof layer);
    for (int pass = 0; pass < 3; ++pass) {
        cg_generated gen;
        const char *how;
        convgen_status s = program_of(r, ctx, l, (convgen_pass)pass, algo, &gen, &how);
        printf("[%d/%d] %s %s %s: ", ++r->step, r->steps, arch, layer, convgen_pass_name((convgen_pass)pass));
        if (s == CONVGEN_ERROR_NOT_SUPPORTED) {
            printf("not supported by %s\n", convgen_algo_name(algo));
            continue;
        }
        if (s != CONVGEN_SUCCESS)
            return cli_fail(layer, s);
        printf("%s%s\n", convgen_algo_name(gen.algo), how);
        fflush(stdout);
        int rc = fn(r, arch, layer, (convgen_pass)pass, &gen, user);
        cg_generated_free(&gen);
        if (rc)
            return rc;
    }
    return 0;
}

int gen_for_each_program(generate_run *r, const cg_layer *layers, int count, gen_program_fn fn, void *user)
{
    int rc = 0;
    for (int a = 0; a < r->arch_count && rc == 0; ++a) {
        convgen_context *ctx; /* offline, to choose for the architecture: nothing compiles in it */
        convgen_context_options o = {.offline = 1, .arch = r->archs[a], .disk_cache = -1, .sm_count = r->a->sm_count};
        convgen_status s = convgen_context_create(&o, &ctx);
        if (s != CONVGEN_SUCCESS)
            return cli_fail("generate", s);
        for (int i = 0; i < count && rc == 0; ++i)
            rc = each_pass(r, ctx, r->archs[a], &layers[i], i, fn, user);
        convgen_context_destroy(ctx);
    }
    return rc;
}

static int compare_keys(const void *a, const void *b)
{
    const set_kernel *x = a, *y = b;
    if (x->key.hi != y->key.hi)
        return x->key.hi < y->key.hi ? -1 : 1;
    return (x->key.lo > y->key.lo) - (x->key.lo < y->key.lo);
}

/* The cubins as one blob: each at a 16-byte boundary, *offsets[i] for kernel i (malloc'ed). */
static size_t *lay_out_blob(const kernel_set *set, cg_buf *blob)
{
    size_t *offsets = malloc(sizeof *offsets * (size_t)(set->count + 1));
    for (int i = 0; offsets && i < set->count; ++i) {
        const cache_kernel *k = &set->k[i].compiled;
        offsets[i] = (blob->len + 15) / 16 * 16;
        while (blob->len < offsets[i])
            cg_buf_append(blob, "", 1);
        cg_buf_append(blob, k->cubin, k->cubin_size);
    }
    return offsets;
}

/* The set's wisdom, what this process holds (--wisdom), as bytes (C promises string literals
 * only up to 4095 characters). */
static int put_wisdom(cg_buf *c, const char *name)
{
    char *wisdom = NULL;
    if (convgen_wisdom_export_string(&wisdom) != CONVGEN_SUCCESS)
        return cli_fail("generate: the set's wisdom", CONVGEN_ERROR_OUT_OF_MEMORY);
    cg_buf_printf(c, "static const char %s_wisdom[] = {", name);
    bool any = convgen_wisdom_count() > 0;
    for (size_t i = 0; any && wisdom[i]; ++i)
        cg_buf_printf(c, "%s%d,", i % 24 ? "" : "\n", (unsigned char)wisdom[i]);
    cg_buf_puts(c, "0};\n\n");
    free(wisdom);
    return 0;
}

/* FILE.c, a convgen_kernel_set called `name` (convgen.h) that needs only the public header: the
 * table of kernels, the wisdom, and by the assembler's .incbin the blob FILE.c.bin of every
 * cubin. The library's own set (embed-set) and a program's (generate --embed) alike. */
int gen_write_embed(kernel_set *set, const char *embed, const char *name)
{
    qsort(set->k, (size_t)set->count, sizeof *set->k, compare_keys);
    char bin[4200];
    snprintf(bin, sizeof bin, "%s.bin", embed);
    cg_buf blob = {0}, c = {0};
    char abs_bin[PATH_MAX] = "";
    size_t *offsets = lay_out_blob(set, &blob);
    int rc = !offsets || blob.oom ? cli_fail("generate", CONVGEN_ERROR_OUT_OF_MEMORY) : 0;
    if (rc == 0)
        rc = gen_write_if_changed(bin, blob.data ? blob.data : "", blob.len);
    if (rc == 0 && !realpath(bin, abs_bin))
        rc = 1;
    cg_buf_printf(&c, "/* Generated by convgen: the kernel set %s, %d kernels (convgen.h's convgen_kernel_set, which a\n"
                      " * program passes to convgen_kernel_set_register). Its cubins are the file\n * %s,\n"
                      " * included below. Do not edit: generate it again. */\n#include <convgen.h>\n\n",
                  name, set->count, abs_bin);
    cg_buf_printf(&c, "extern const unsigned char %s_cubins[] __attribute__((visibility(\"hidden\")));\n", name);
    cg_buf_printf(&c, "__asm__(\".section .rodata\\n.balign 16\\n.global %s_cubins\\n.hidden %s_cubins\\n"
                      "%s_cubins:\\n.incbin \\\"%s\\\"\\n.byte 0\\n.previous\\n\");\n\n", name, name, name, abs_bin);
    cg_buf_printf(&c, "static const convgen_set_kernel %s_kernels[] = {\n"
                      "    /* key_hi, key_lo, arch, cubin, cubin_size, registers, shared_bytes, stack_bytes,\n"
                      "       spill_store_bytes, spill_load_bytes, compile_ms */\n", name);
    for (int i = 0; offsets && i < set->count; ++i) {
        const cache_kernel *k = &set->k[i].compiled;
        cg_buf_printf(&c, "    {0x%016llxull, 0x%016llxull, \"%s\", %s_cubins + %zu, %zu, %d, %d, %d, %d, %d, %.1f}, /* %s */\n",
                      (unsigned long long)set->k[i].key.hi, (unsigned long long)set->k[i].key.lo, set->k[i].arch, name,
                      offsets[i], k->cubin_size, k->registers, k->shared_bytes, k->stack_bytes, k->spill_store_bytes,
                      k->spill_load_bytes, k->compile_ms, set->k[i].file);
    }
    cg_buf_puts(&c, "    {0}\n};\n\n");
    if (rc == 0)
        rc = put_wisdom(&c, name);
    cg_buf_printf(&c, "const convgen_kernel_set %s = {CONVGEN_KERNEL_SET_MAGIC, CONVGEN_KERNEL_SET_VERSION, %d, %s_kernels, "
                      "%s_wisdom};\n", name, set->count, name, name);
    if (rc == 0 && c.oom)
        rc = cli_fail("generate", CONVGEN_ERROR_OUT_OF_MEMORY);
    if (rc == 0)
        rc = gen_write_if_changed(embed, c.data, c.len);
    free(offsets);
    cg_buf_free(&blob);
    cg_buf_free(&c);
    return rc;
}
