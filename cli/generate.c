/* convgen generate: a kernel set. Every layer of a layer file, all three passes, planned for
 * each architecture on an offline context with the line's algorithm (a word "algo=NAME" after
 * the layer) or the --algo one, by default auto: the wisdom's choice for the architecture
 * (--wisdom), else the cost model's. Each kernel's source goes into a folder as a .cu file
 * (rewritten only when it changed, so that its time stamp says when it last did); each is
 * compiled (or found in the --cache folder, so an edit of a template or of the generator
 * recompiles exactly the kernels whose source it changed) and checked for local memory; with
 * --embed, the cubins and the wisdom are written as a C file (and a blob beside it) that defines
 * a convgen_kernel_set, which a program registers (convgen.h). The build's way, --ninja, leaves
 * the compiling to ninja (cli/set_ninja.c) and embed-set writes the library's own set the same
 * way; both go through gen_for_each_program. */
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

static void report_kernel(generate_run *r, const set_kernel *k)
{
    const cache_kernel *c = &k->compiled;
    bool local = c->stack_bytes != 0 || c->spill_store_bytes != 0 || c->spill_load_bytes != 0;
    r->set.local += local;
    fprintf(r->report, "%-44s %-8s %5d %6d %6d %9d %9d %10.1f%s\n", k->file, k->arch, c->registers, c->shared_bytes,
            c->stack_bytes, c->spill_store_bytes, c->spill_load_bytes, c->compile_ms, local ? "  LOCAL MEMORY" : "");
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

/* The inline way (--embed, or only the sources): a program's kernels compiled here at once
 * (through the --cache folder), reported and kept. */
static int compile_program(generate_run *r, const char *arch, const char *layer, convgen_pass pass,
                           const cg_generated *gen, void *user)
{
    (void)user;
    jit_job jobs[CG_MAX_KERNELS] = {0};
    for (int i = 0; i < gen->kernel_count; ++i)
        jobs[i].source = gen->kernels[i].source, jobs[i].name = gen->kernels[i].name;
    jit_get_all(jobs, gen->kernel_count, arch, r->disk);
    int rc = 0;
    for (int i = 0; i < gen->kernel_count; ++i) {
        set_kernel k = {.key = jit_key(jobs[i].source, arch), .compiled = jobs[i].compiled};
        jobs[i].compiled = (cache_kernel){0}; /* the set takes it */
        snprintf(k.arch, sizeof k.arch, "%s", arch);
        if (rc == 0)
            rc = gen_write_source(r, layer, arch, gen->algo, pass, i, jobs[i].source, k.file, sizeof k.file);
        if (rc == 0 && jobs[i].status != CONVGEN_SUCCESS)
            rc = cli_fail(jobs[i].name, jit_job_fail(&jobs[i]));
        if (rc == 0) {
            r->set.compiled += jobs[i].origin == CONVGEN_FROM_NVRTC;
            r->set.cached += jobs[i].origin != CONVGEN_FROM_NVRTC;
            report_kernel(r, &k);
            rc = gen_keep(&r->set, &k);
        } else {
            cache_kernel_free(&k.compiled);
        }
        jit_job_free(&jobs[i]);
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

/* --set-name, or the --embed file's base name up to its first '.', as a C identifier. */
static int set_name_of(const cli_args *a, char *name, size_t size)
{
    if (a->set_name) {
        bool ok = (isalpha((unsigned char)a->set_name[0]) || a->set_name[0] == '_') && strlen(a->set_name) < size;
        for (const char *p = a->set_name; ok && *p; ++p)
            ok = isalnum((unsigned char)*p) || *p == '_';
        if (!ok) {
            fprintf(stderr, "convgen: --set-name '%s' must be a C identifier of at most %zu characters\n", a->set_name,
                    size - 1);
            return 2;
        }
        snprintf(name, size, "%s", a->set_name);
        return 0;
    }
    const char *base = strrchr(a->embed, '/') ? strrchr(a->embed, '/') + 1 : a->embed;
    size_t n = 0;
    if (isdigit((unsigned char)base[0]))
        n = (size_t)snprintf(name, size, "set_");
    for (; *base && *base != '.' && n + 1 < size; ++base)
        name[n++] = isalnum((unsigned char)*base) ? *base : '_';
    name[n] = '\0';
    if (n == 0)
        snprintf(name, size, "kernel_set");
    return 0;
}

static const cli_verb generate_verb = {
    "generate", CLI_GENERATE, "--set FILE --out DIR [options]",
    "Plans every layer of FILE (lines like bench/layers.txt; a word algo=NAME after a layer picks\n"
    "its algorithm), all three passes, for each architecture (default sm_90), with --algo or\n"
    "auto: the choice in the wisdom file for the architecture, else the cost model's. Writes\n"
    "each kernel's source into DIR as <layer>_<algo>_<pass>[_<i>].cu (only when it changed),\n"
    "compiles it (--cache: a disk cache, so that unchanged kernels are not compiled again) and\n"
    "writes DIR/compile-report.txt; fails if a kernel uses local memory (stack or spills).\n"
    "--embed FILE.c writes the cubins and the wisdom as a kernel set, a C file that a program\n"
    "compiles and registers (convgen_kernel_set_register) and FILE.c.bin, which it includes;\n"
    "the set is called --set-name NAME, by default FILE's base name.\n"
    "--ninja FILE (the build's way) compiles nothing: it writes the sources and FILE, ninja's\n"
    "edges that compile each kernel (convgen compile-kernel) and embed them (convgen embed-set).\n",
    true, false};

int cli_generate(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, &generate_verb, &a))
        return 2;
    if (a.help || !a.set || !a.out_dir)
        return cli_usage(&generate_verb, a.help ? stdout : stderr);
    generate_run r = {.a = &a, .embed = a.embed, .algo_given = a.algo_given};
    unsetenv("CONVGEN_WISDOM"); /* the set follows --wisdom only: the builder's own wisdom stays out */
    if (gen_parse_archs(a.arch, &r))
        return 2;
    char set_name[64] = "";
    if (a.set_name && !a.embed) {
        fprintf(stderr, "convgen: --set-name names the set of --embed FILE.c: give --embed too\n");
        return 2;
    }
    if (a.embed && set_name_of(&a, set_name, sizeof set_name))
        return 2;
    if (a.wisdom && convgen_wisdom_import(a.wisdom) != CONVGEN_SUCCESS)
        return cli_fail("generate", CONVGEN_ERROR_IO);
    cg_layer *layers;
    int count;
    convgen_status s = cg_layer_read_file(a.set, &layers, &count);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("generate", s);
    r.steps = 3 * count * r.arch_count;
    if (mkdir(a.out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "convgen: cannot create %s: %s\n", a.out_dir, strerror(errno));
        free(layers);
        return 1;
    }
    if (a.ninja) {
        int rc = gen_write_ninja(&r, layers, count, a.ninja);
        free(r.files);
        free(layers);
        return rc;
    }
    char report_path[4400];
    snprintf(report_path, sizeof report_path, "%s/compile-report.txt", a.out_dir);
    if (!(r.report = fopen(report_path, "w"))) {
        fprintf(stderr, "convgen: cannot write into %s: %s\n", a.out_dir, strerror(errno));
        free(layers);
        return 1;
    }
    fprintf(r.report, "%-44s %-8s %5s %6s %6s %9s %9s %10s\n", "file", "arch", "regs", "smem", "stack", "spill-st",
            "spill-ld", "compile-ms");
    int rc = 0;
    if (a.cache_dir)
        r.disk = cache_disk_open(a.cache_dir);
    rc = gen_for_each_program(&r, layers, count, compile_program, NULL);
    cache_disk_close(r.disk);
    fclose(r.report);
    if (rc == 0 && r.embed)
        rc = gen_write_embed(&r.set, r.embed, set_name);
    if (rc == 0)
        printf("convgen: %d kernels from %d layers for %d architecture(s) in %s: %d compiled, %d from the caches; %s\n",
               r.set.count, count, r.arch_count, a.out_dir, r.set.compiled, r.set.cached,
               r.set.local ? "some use local memory (see compile-report.txt)" : "none uses local memory");
    rc = rc ? rc : r.set.local != 0;
    for (int i = 0; i < r.set.count; ++i)
        cache_kernel_free(&r.set.k[i].compiled);
    free(r.set.k);
    free(r.files);
    free(layers);
    return rc;
}
