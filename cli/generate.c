/* convgen generate: the kernel set of a layer file, emitted into a folder (one .cu per
 * kernel) and, with --arch, compiled for each architecture to check that no kernel uses local
 * memory. The build runs it for the configured kernel set and architectures. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "args.h"
#include "generate.h"
#include "jit.h"
#include "problem.h"
#include "util.h"
#include "verbs.h"

typedef struct emitted {
    char file[160];
    char name[CG_KERNEL_NAME_MAX];
    char *source;
} emitted;

typedef struct kernel_set {
    emitted *k;
    int count, cap;
} kernel_set;

static int write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
        fprintf(stderr, "convgen: cannot write %s: %s\n", path, strerror(errno));
        return 1;
    }
    return 0;
}

static int keep(kernel_set *set, const char *file, const cg_kernel *k)
{
    if (set->count == set->cap) {
        int cap = set->cap ? 2 * set->cap : 64;
        emitted *grown = realloc(set->k, sizeof *grown * (size_t)cap);
        if (!grown)
            return 1;
        set->k = grown, set->cap = cap;
    }
    emitted *e = &set->k[set->count++];
    snprintf(e->file, sizeof e->file, "%s", file);
    snprintf(e->name, sizeof e->name, "%s", k->name);
    e->source = cg_strdup(k->source);
    return !e->source;
}

/* The kernels of a set compile for each of its architectures (a list like "sm_80,sm_90"): they
 * use thread-block clusters only where all of them have clusters. */
static int set_max_cluster(const char *archs)
{
    int least = 0;
    for (const char *a = archs; a && *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : "") {
        int m = cg_target_max_cluster(a);
        if (m > 0 && (least == 0 || m < least))
            least = m;
    }
    return least;
}

/* One file per kernel: <layer>_<algo>_<pass>[_<i>].cu, named so a user finds it. */
static int generate_layer(const cli_args *a, const cg_layer *layer, int index, kernel_set *set)
{
    cg_problem p;
    convgen_status s = cg_problem_init(&p, &layer->desc);
    if (s != CONVGEN_SUCCESS)
        return cli_fail(layer->name, s);
    char name[40];
    if (layer->name[0])
        snprintf(name, sizeof name, "%s", layer->name);
    else
        snprintf(name, sizeof name, "layer%d", index);
    cg_target target = {.sm_count = a->sm_count, .max_cluster = set_max_cluster(a->arch)};
    for (int pass = 0; pass < 3; ++pass) {
        cg_generated gen;
        s = cg_generate(&p, (convgen_pass)pass, a->algo, &target, &gen);
        if (s == CONVGEN_ERROR_NOT_SUPPORTED)
            continue; /* the algorithm does not cover this layer: nothing to emit */
        if (s != CONVGEN_SUCCESS)
            return cli_fail(layer->name, s);
        int rc = 0;
        for (int i = 0; i < gen.kernel_count && rc == 0; ++i) {
            char file[160], path[4400];
            snprintf(file, sizeof file, "%s_%s_%s%s%.0d.cu", name, convgen_algo_name(a->algo),
                     convgen_pass_name((convgen_pass)pass), i ? "_" : "", i);
            snprintf(path, sizeof path, "%s/%s", a->out_dir, file);
            rc = write_file(path, gen.kernels[i].source) || keep(set, file, &gen.kernels[i]);
        }
        cg_generated_free(&gen);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- compiling the set: one job per (kernel, architecture), on every core ---- */

typedef struct compile_job {
    const kernel_set *set;
    char archs[8][16];
    int arch_count;
    cache_kernel *results; /* [kernel * arch_count + arch] */
    convgen_status *status;
} compile_job;

static void compile_one(void *user, int i)
{
    compile_job *j = user;
    const emitted *e = &j->set->k[i / j->arch_count];
    convgen_kernel_origin origin;
    j->status[i] = jit_get(e->source, e->name, j->archs[i % j->arch_count], NULL, &j->results[i], &origin);
    if (j->status[i] != CONVGEN_SUCCESS)
        fprintf(stderr, "convgen: %s for %s: %s\n", e->file, j->archs[i % j->arch_count], convgen_last_error());
}

static int parse_archs(const char *list, compile_job *j)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *t = strtok(copy, ","); t; t = strtok(NULL, ",")) {
        if (j->arch_count == 8 || jit_check_arch(t) != CONVGEN_SUCCESS) {
            fprintf(stderr, "convgen: --arch: %s\n", j->arch_count == 8 ? "at most 8 architectures" : convgen_last_error());
            return 1;
        }
        snprintf(j->archs[j->arch_count++], sizeof j->archs[0], "%s", t);
    }
    return 0;
}

/* Writes DIR/compile-report.txt; fails if any kernel did not compile or uses local memory. */
static int report(const cli_args *a, const compile_job *j)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/compile-report.txt", a->out_dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return write_file(path, "");
    int bad = 0;
    fprintf(f, "%-36s %-8s %5s %6s %6s %9s %9s %10s\n", "file", "arch", "regs", "smem", "stack", "spill-st",
            "spill-ld", "compile-ms");
    for (int i = 0; i < j->set->count * j->arch_count; ++i) {
        const cache_kernel *k = &j->results[i];
        bool ok = j->status[i] == CONVGEN_SUCCESS && k->stack_bytes == 0 && k->spill_store_bytes == 0 &&
                  k->spill_load_bytes == 0;
        bad += !ok;
        fprintf(f, "%-36s %-8s %5d %6d %6d %9d %9d %10.1f%s\n", j->set->k[i / j->arch_count].file,
                j->archs[i % j->arch_count], k->registers, k->shared_bytes, k->stack_bytes, k->spill_store_bytes,
                k->spill_load_bytes, k->compile_ms, ok ? "" : "  LOCAL MEMORY OR ERROR");
    }
    fclose(f);
    printf("convgen: compiled %d kernels for %d architecture(s): %s\n", j->set->count, j->arch_count,
           bad ? "some use local memory or failed (see compile-report.txt)" : "none uses local memory");
    return bad != 0;
}

static int compile_set(const cli_args *a, const kernel_set *set)
{
    compile_job j = {.set = set};
    if (parse_archs(a->arch, &j))
        return 2;
    int jobs = set->count * j.arch_count;
    j.results = calloc((size_t)jobs + 1, sizeof *j.results);
    j.status = calloc((size_t)jobs + 1, sizeof *j.status);
    int rc = 1;
    if (j.results && j.status) {
        cg_parallel_for(jobs, compile_one, &j);
        rc = report(a, &j);
    }
    for (int i = 0; j.results && i < jobs; ++i)
        cache_kernel_free(&j.results[i]);
    free(j.results);
    free(j.status);
    return rc;
}

int cli_generate(int argc, char **argv)
{
    cli_args a;
    if (!cli_parse(argc, argv, true, &a))
        return 2;
    if (a.help || !a.set || !a.out_dir) {
        printf("usage: convgen generate --set FILE --out DIR [--algo NAME] [--arch sm_80,sm_90] [--sms N]\n"
               "Emits every kernel of every layer in FILE (lines like bench/layers.txt), all three\n"
               "passes, into DIR as <layer>_<algo>_<pass>[_<i>].cu; layers the algorithm does not cover\n"
               "are skipped. With --arch, compiles each kernel for each architecture on every core and\n"
               "writes DIR/compile-report.txt; fails if a kernel uses local memory (stack or spills).\n");
        return a.help ? 0 : 2;
    }
    cg_layer *layers;
    int count;
    convgen_status s = cg_layer_read_file(a.set, &layers, &count);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("generate", s);
    if (mkdir(a.out_dir, 0755) != 0 && errno != EEXIST) {
        fprintf(stderr, "convgen: cannot create %s: %s\n", a.out_dir, strerror(errno));
        free(layers);
        return 1;
    }
    kernel_set set = {0};
    int rc = 0;
    for (int i = 0; i < count && rc == 0; ++i)
        rc = generate_layer(&a, &layers[i], i, &set);
    if (rc == 0)
        printf("convgen: %d kernel sources from %d layers in %s\n", set.count, count, a.out_dir);
    if (rc == 0 && a.arch)
        rc = compile_set(&a, &set);
    for (int i = 0; i < set.count; ++i)
        free(set.k[i].source);
    free(set.k);
    free(layers);
    return rc;
}
