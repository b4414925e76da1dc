/* What convgen generate's two ways of building a kernel set share: compiling it here (with
 * --embed) or writing ninja's edges for it (--ninja, the build's way: cli/set_ninja.c). */
#ifndef CLI_GENERATE_SET_H
#define CLI_GENERATE_SET_H

#include <stdbool.h>
#include <stdio.h>

#include "args.h"
#include "cache.h"
#include "generate.h"

#define MAX_ARCHS 8

/* A compiled kernel of the set. */
typedef struct set_kernel {
    cache_key key;
    cache_kernel compiled;
    char file[192], arch[16];
} set_kernel;

typedef struct kernel_set {
    set_kernel *k;
    int count, cap;
    int compiled, cached, local; /* NVRTC runs, cache hits, kernels with local memory */
} kernel_set;

/* A source file written in this run, and the kernel in it. */
typedef struct written_file {
    char name[192];
    cache_key key;
} written_file;

typedef struct generate_run {
    const cli_args *a;
    written_file *files;
    int file_count, file_cap;
    bool algo_given;
    char archs[MAX_ARCHS][16];
    int arch_count;
    cache_disk *disk;      /* the --cache folder's */
    const char *embed;
    kernel_set set;
    FILE *report;
    int step, steps; /* progress */
} generate_run;

/* Writes `size` bytes unless the file holds them already (its time stamp then stays). */
int gen_write_if_changed(const char *path, const void *data, size_t size);
int gen_parse_archs(const char *list, generate_run *r);
/* The layer's name in file names ("layer<index>" where it has none). */
void gen_layer_name(const cg_layer *l, int index, char *name, size_t size);
/* The line's algorithm ("algo=NAME" after the layer), else the run's (auto by default). */
int gen_algo_of(const generate_run *r, const cg_layer *l, convgen_algo *algo);
bool gen_same_key(cache_key a, cache_key b);
/* Keeps a compiled kernel (the set takes it), unless the set has it already (freed). */
int gen_keep(kernel_set *set, set_kernel *k);
/* Writes kernel i's source as <layer>_<algo>_<pass>[_<i>].cu into the output folder (.<arch>.cu
 * where this run wrote another kernel under that name); *file gets the name. */
int gen_write_source(generate_run *r, const char *layer, const char *arch, convgen_algo algo, convgen_pass pass, int i,
                     const char *src, char *file, size_t size);
/* The set as FILE.c, `const convgen_kernel_set name` (the table, the wisdom held), and
 * FILE.c.bin (the cubins). */
int gen_write_embed(kernel_set *set, const char *embed, const char *name);

/* What is done with each program of the set (a layer's pass for an architecture). */
typedef int (*gen_program_fn)(generate_run *r, const char *arch, const char *layer, convgen_pass pass,
                              const cg_generated *gen, void *user);
/* For each architecture, layer and pass: the line's algorithm or auto's choice (the wisdom's for
 * the architecture, else the cost model's, nothing compiled), the program, a progress line, fn. */
int gen_for_each_program(generate_run *r, const cg_layer *layers, int count, gen_program_fn fn, void *user);

/* --ninja FILE: the sources and ninja's edges that compile and embed them. */
int gen_write_ninja(generate_run *r, const cg_layer *layers, int count, const char *path);

#endif
