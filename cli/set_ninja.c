/* The build's kernel set as ninja edges. `convgen generate --ninja FILE` chooses each layer's
 * algorithm per pass and architecture (the line's, or auto's by the wisdom or the cost model,
 * nothing compiled), writes every kernel's source (only where it changed) and writes FILE: one
 * edge per kernel and architecture, `convgen compile-kernel`, and one edge that embeds them
 * all, `convgen embed-set`. build.ninja includes FILE and reloads itself when FILE changes, so
 * ninja compiles the kernels in parallel with its own progress, and after an edit of a template
 * or of the generator exactly those whose source changed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generate.h"
#include "generate_set.h"
#include "jit.h"
#include "args.h"
#include "util.h"
#include "verbs.h"

/* The edges that compile one program's kernels (each once per file and architecture). */
typedef struct ninja_edges {
    cg_buf edges, cubins, reports;
} ninja_edges;

static int add_edges(generate_run *r, const char *arch, const char *layer, convgen_pass pass, const cg_generated *gen,
                     void *user)
{
    ninja_edges *n = user;
    int rc = 0;
    for (int i = 0; i < gen->kernel_count && rc == 0; ++i) {
        char file[192], cubin[400];
        const cg_kernel *k = &gen->kernels[i];
        rc = gen_write_source(r, layer, arch, gen->algo, pass, i, k->source, file, sizeof file);
        snprintf(cubin, sizeof cubin, "$builddir/kernel-set/%s/%.*s.cubin", arch, (int)strlen(file) - 3, file);
        if (rc == 0 && !strstr(n->cubins.data ? n->cubins.data : "", cubin)) {
            cg_buf_printf(&n->edges, "build %s | %s.report: compile_kernel %s/%s | $builddir/kernel_set.compiler || "
                                     "$builddir/convgen-gen\n"
                                     "  arch = %s\n  name = %s\n", cubin, cubin, r->a->out_dir, file, arch, k->name);
            cg_buf_printf(&n->cubins, " $\n    %s", cubin);
            cg_buf_printf(&n->reports, " $\n    %s.report", cubin);
        }
    }
    return rc;
}

/* kernel_set.compiler beside the edges' file: NVRTC's version and options, rewritten only when
 * they change. Every kernel's edge depends on it, since a kernel's cubin and cache key do; the
 * generator itself is only an order-only dependency, so that editing it recompiles just the
 * kernels whose source changed. */
static int write_compiler_stamp(const char *ninja_path)
{
    char path[1024], text[512];
    const char *slash = strrchr(ninja_path, '/');
    int dir = slash ? (int)(slash - ninja_path) + 1 : 0;
    if (snprintf(path, sizeof path, "%.*skernel_set.compiler", dir, ninja_path) >= (int)sizeof path)
        return cli_fail("generate", cg_fail(CONVGEN_ERROR_INVALID_VALUE, "--ninja path too long"));
    jit_compiler_text(text, sizeof text);
    return gen_write_if_changed(path, text, strlen(text));
}

int gen_write_ninja(generate_run *r, const cg_layer *layers, int count, const char *path)
{
    ninja_edges n = {0};
    cg_buf_printf(&n.edges, "# Written by convgen generate --ninja: the kernel set's edges (build.ninja includes this\n"
                            "# file and reloads when it changes). Do not edit.\n\n");
    int rc = gen_for_each_program(r, layers, count, add_edges, &n);
    /* the reports hold the keys embedded: a kernel recompiled to the same cubin (restat) under
     * another key, after the compiler's options changed, must still be embedded again; and the
     * embedding runs again after the generator changed (cheap, and it rewrites kernel_set.c only
     * if its text changed), since the generator writes the set's format */
    cg_buf_printf(&n.edges, "\nbuild $builddir/kernel_set.c | $builddir/kernel_set.c.bin: embed_set%s | $wisdom%s "
                            "$builddir/convgen-gen\n  dir = %s\n", n.cubins.data ? n.cubins.data : "",
                  n.reports.data ? n.reports.data : "", r->a->out_dir);
    if (rc == 0 && (n.edges.oom || n.cubins.oom || n.reports.oom))
        rc = cli_fail("generate", CONVGEN_ERROR_OUT_OF_MEMORY);
    if (rc == 0)
        rc = gen_write_if_changed(path, n.edges.data, n.edges.len);
    if (rc == 0)
        rc = write_compiler_stamp(path);
    if (rc == 0)
        printf("convgen: %d sources for %d layers and %d architecture(s) in %s; their edges in %s\n", r->file_count, count,
               r->arch_count, r->a->out_dir, path);
    cg_buf_free(&n.edges);
    cg_buf_free(&n.cubins);
    cg_buf_free(&n.reports);
    return rc;
}

/* ---- convgen compile-kernel: one edge's work ---- */

/* The build verbs' options, "--name VALUE" each, into their slots. */
typedef struct build_option {
    const char *name;
    const char **value;
} build_option;

/* words[*i] as one of `opts` (its value taken): 1; not an option: 0; an unknown option or one
 * without its value: -1, after saying so. */
static int take_build_option(const char *verb, const build_option *opts, int count, char **words, int n, int *i)
{
    if (strncmp(words[*i], "--", 2) != 0)
        return 0;
    const char *names[8];
    for (int o = 0; o < count; ++o) {
        names[o] = opts[o].name;
        if (strcmp(words[*i], opts[o].name) != 0)
            continue;
        if (*i + 1 == n) {
            fprintf(stderr, "convgen %s: %s needs a value\n", verb, words[*i]);
            return -1;
        }
        *opts[o].value = words[++*i];
        return 1;
    }
    const char *near = cli_nearest(words[*i], names, count);
    fprintf(stderr, "convgen %s: unknown option '%s'%s%s%s ('convgen %s --help' tells more)\n", verb, words[*i],
            near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "", verb);
    return -1;
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            return true;
    return false;
}

static const char compile_kernel_usage[] =
    "usage: convgen compile-kernel --arch sm_XX --name ENTRY --out FILE.cubin SOURCE.cu\n"
    "The build's (one edge of the kernel set): compiles an emitted kernel's source into\n"
    "FILE.cubin and FILE.cubin.report (its cache key and compile report, for embed-set);\n"
    "fails (exit 3) if the kernel uses local memory.\n";

/* The source file of compile-kernel's command line, read; NULL (exit code in *rc) if not. */
static char *compile_kernel_args(int argc, char **argv, const char **arch, const char **name, const char **out,
                                 const char **in, int *rc)
{
    const build_option opts[] = {{"--arch", arch}, {"--name", name}, {"--out", out}};
    *rc = 2;
    for (int i = 0; i < argc; ++i) {
        int taken = take_build_option("compile-kernel", opts, 3, argv, argc, &i);
        if (taken < 0 || (taken == 0 && *in)) {
            if (taken == 0)
                fprintf(stderr, "convgen compile-kernel: unexpected word '%s' (one SOURCE.cu)\n", argv[i]);
            return NULL;
        }
        if (taken == 0)
            *in = argv[i];
    }
    if (!*arch || !*name || !*out || !*in) {
        fputs(compile_kernel_usage, stderr);
        return NULL;
    }
    size_t size;
    char *src = cg_read_file(*in, (size_t)64 << 20, &size);
    if (!src)
        fprintf(stderr, "convgen compile-kernel: cannot read %s: %s\n", *in, cg_read_error(errno)), *rc = 1;
    return src;
}

/* convgen compile-kernel --arch A --name N --out K.cubin SOURCE.cu: the cubin, and K.cubin.report
 * (its cache key and compile report, for embed-set); fails on local memory. */
int cli_compile_kernel(int argc, char **argv)
{
    if (wants_help(argc, argv))
        return fputs(compile_kernel_usage, stdout) < 0;
    const char *arch = NULL, *name = NULL, *out = NULL, *in = NULL;
    int rc;
    char *src = compile_kernel_args(argc, argv, &arch, &name, &out, &in, &rc);
    if (!src)
        return rc;
    cache_kernel k;
    convgen_kernel_origin origin;
    convgen_status s = jit_get(src, name, arch, NULL, &k, &origin);
    cache_key key = jit_key(src, arch);
    free(src);
    if (s != CONVGEN_SUCCESS)
        return cli_fail(in, s);
    char report[4200];
    snprintf(report, sizeof report, "%s.report", out);
    FILE *f = fopen(report, "w");
    rc = gen_write_if_changed(out, k.cubin, k.cubin_size);
    if (!f || fprintf(f, "%016llx %016llx %d %d %d %d %d %.1f %s %s\n", (unsigned long long)key.hi,
                      (unsigned long long)key.lo, k.registers, k.shared_bytes, k.stack_bytes, k.spill_store_bytes,
                      k.spill_load_bytes, k.compile_ms, strrchr(in, '/') ? strrchr(in, '/') + 1 : in, arch) < 0 ||
        fclose(f) != 0)
        rc = 1, fprintf(stderr, "convgen: cannot write %s: %s\n", report, strerror(errno));
    bool local = k.stack_bytes != 0 || k.spill_store_bytes != 0 || k.spill_load_bytes != 0;
    if (local)
        fprintf(stderr, "convgen: %s for %s uses local memory (stack %d, spills %d/%d bytes)\n", in, arch, k.stack_bytes,
                k.spill_store_bytes, k.spill_load_bytes);
    cache_kernel_free(&k);
    return rc ? rc : local ? 3 : 0;
}

/* ---- convgen embed-set: the set's last edge ---- */

/* The words of argv with every "@FILE" replaced by the words in FILE (ninja's response file
 * for a long list); *text holds them. */
static char **expand_words(int argc, char **argv, int *count, char **text)
{
    cg_buf b = {0};
    for (int i = 0; i < argc; ++i) {
        size_t size;
        char *listed = argv[i][0] == '@' ? cg_read_file(argv[i] + 1, (size_t)64 << 20, &size) : NULL;
        if (argv[i][0] == '@' && !listed) {
            fprintf(stderr, "convgen: embed-set: cannot read %s\n", argv[i] + 1);
            cg_buf_free(&b);
            return NULL;
        }
        cg_buf_printf(&b, "%s\n", listed ? listed : argv[i]);
        free(listed);
    }
    *text = cg_buf_take(&b);
    char **words = *text ? malloc(sizeof *words * (strlen(*text) / 2 + 2)) : NULL;
    *count = 0;
    for (char *t = words ? strtok(*text, " \n\t") : NULL; t; t = strtok(NULL, " \n\t"))
        words[(*count)++] = t;
    return words;
}

/* One compiled kernel and its .report into the set, a line of the report for people. */
static int add_compiled(kernel_set *set, const char *cubin, FILE *report)
{
    char path[4200];
    snprintf(path, sizeof path, "%s.report", cubin);
    set_kernel k = {0};
    unsigned long long hi = 0, lo = 0;
    cache_kernel *c = &k.compiled;
    FILE *f = fopen(path, "r");
    bool ok = f && fscanf(f, "%llx %llx %d %d %d %d %d %lf %191s %15s", &hi, &lo, &c->registers, &c->shared_bytes,
                          &c->stack_bytes, &c->spill_store_bytes, &c->spill_load_bytes, &c->compile_ms, k.file,
                          k.arch) == 10;
    if (f)
        fclose(f);
    k.key = (cache_key){hi, lo};
    if (!ok || !(c->cubin = cg_read_file(cubin, (size_t)256 << 20, &c->cubin_size))) {
        fprintf(stderr, "convgen: embed-set: cannot read %s or its report\n", cubin);
        return 1;
    }
    if (report)
        fprintf(report, "%-44s %-8s %5d %6d %6d %9d %9d %10.1f\n", k.file, k.arch, c->registers, c->shared_bytes,
                c->stack_bytes, c->spill_store_bytes, c->spill_load_bytes, c->compile_ms);
    return gen_keep(set, &k);
}

static const char embed_set_usage[] =
    "usage: convgen embed-set --out FILE.c [--wisdom W] [--report R.txt] CUBIN... (or @LIST)\n"
    "The build's (the kernel set's last edge): writes the compiled kernels (each CUBIN beside its\n"
    ".report from compile-kernel) and the wisdom W as FILE.c and FILE.c.bin, the library's kernel\n"
    "set, and R.txt, their compile report. @LIST reads the words from the file LIST.\n";

/* convgen embed-set --out FILE.c [--wisdom W] [--report R.txt] CUBIN... (or @LIST): the table,
 * blob and wisdom of the compiled kernels (each beside its .report), and the compile report. */
int cli_embed_set(int argc, char **argv)
{
    if (wants_help(argc, argv))
        return fputs(embed_set_usage, stdout) < 0;
    const char *out = NULL, *wisdom = NULL, *report = NULL;
    const build_option opts[] = {{"--out", &out}, {"--wisdom", &wisdom}, {"--report", &report}};
    char *text = NULL;
    int count = 0, rc = 0, first = -1, taken = 0;
    char **words = expand_words(argc, argv, &count, &text);
    for (int i = 0; words && i < count && taken >= 0; ++i)
        if ((taken = take_build_option("embed-set", opts, 3, words, count, &i)) == 0 && first < 0)
            first = i; /* the cubins follow the options */
    if (!words || !out || taken < 0) {
        if (words && taken >= 0)
            fputs(embed_set_usage, stderr);
        free(words);
        free(text);
        return 2;
    }
    kernel_set set = {0};
    FILE *r = report ? fopen(report, "w") : NULL;
    if (r)
        fprintf(r, "%-44s %-8s %5s %6s %6s %9s %9s %10s\n", "file", "arch", "regs", "smem", "stack", "spill-st",
                "spill-ld", "compile-ms");
    for (int i = first; first >= 0 && i < count && rc == 0; ++i)
        rc = add_compiled(&set, words[i], r);
    if (r)
        fclose(r);
    if (rc == 0 && wisdom && convgen_wisdom_import(wisdom) != CONVGEN_SUCCESS)
        rc = cli_fail("embed-set", CONVGEN_ERROR_IO);
    if (rc == 0)
        rc = gen_write_embed(&set, out, "cg_kernel_set"); /* the library's own (runtime/kernel_set.h) */
    if (rc == 0)
        printf("convgen: embedded %d kernels and %d wisdom entries in %s\n", set.count, convgen_wisdom_count(), out);
    for (int i = 0; i < set.count; ++i)
        cache_kernel_free(&set.k[i].compiled);
    free(set.k);
    free(words);
    free(text);
    return rc;
}
