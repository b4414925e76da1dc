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
#include "tune.h"
#include "util.h"
#include "generate_set.h"
#include "verbs.h"

static void report_kernel(generate_run *r, const set_kernel *k)
{
    const cache_kernel *c = &k->compiled;
    bool local = c->stack_bytes != 0 || c->spill_store_bytes != 0 || c->spill_load_bytes != 0;
    r->set.local += local;
    fprintf(r->report, "%-44s %-8s %5d %6d %6d %9d %9d %10.1f%s\n", k->file, k->arch, c->registers, c->shared_bytes,
            c->stack_bytes, c->spill_store_bytes, c->spill_load_bytes, c->compile_ms, local ? "  LOCAL MEMORY" : "");
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
