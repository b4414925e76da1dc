/* Max pooling and max-pooling fragments (ZNNi section V) as one generated kernel per shape
 * (templates/net/pool.cu): a thread per output (FRAGMENTS: per output position of all the
 * fragments, where their region fits in registers), the loads unrolled at constant offsets, every
 * index split by magic divisions. Memory-bound: MAX reads x once and writes y. FRAGMENTS with the
 * region in registers loads each element of it once per thread; otherwise each input is loaded
 * once per fragment whose windows cover it, a region's fragments in consecutive blocks so that
 * all but the first of those loads find it in the cache. */
#include "pool.h"

#include <stdio.h>
#include <string.h>

#include "templates.h"
#include "template/tmpl.h"
#include "util.h"
#include "values.h"

enum { POOL_THREADS = 256 };

/* The window's elements after the first, as offsets from it in x. */
static tmpl_value *window_taps(const cg_pool_problem *p)
{
    tmpl_value *list = tmpl_list();
    for (int i = 0; i < p->window[0]; ++i)
        for (int j = 0; j < p->window[1]; ++j)
            for (int k = 0; k < p->window[2]; ++k)
                if (i || j || k)
                    tmpl_list_push(list, tmpl_int(((int64_t)i * p->in[1] + j) * p->in[2] + k));
    return list;
}

/* Where a thread computes every fragment of its output position: the fragments' windows at one
 * position cover a region of (2p - 1) elements a dimension, which it loads once into registers
 * (27 loads for 2x2x2 instead of 8 fragments x 8). Only where the region stays small enough to
 * keep in registers; otherwise a thread per fragment's output, each loading its own window. */
enum { POOL_MAX_REGION = 64 };

static int region_side(const cg_pool_problem *p, int d) { return 2 * p->window[d] - 1; }

static bool all_fragments(const cg_pool_problem *p)
{
    return p->mode == CONVGEN_POOL_FRAGMENTS && region_side(p, 0) * region_side(p, 1) * region_side(p, 2) <= POOL_MAX_REGION;
}

/* The region's loads {name, at} and each fragment's window over them {f, names}. */
static void region_values(const cg_pool_problem *p, tmpl_value *ctx)
{
    tmpl_value *loads = tmpl_list(), *frags = tmpl_list();
    char name[48];
    for (int i = 0; i < region_side(p, 0); ++i)
        for (int j = 0; j < region_side(p, 1); ++j)
            for (int k = 0; k < region_side(p, 2); ++k) {
                tmpl_value *l = tmpl_map();
                snprintf(name, sizeof name, "v%d_%d_%d", i, j, k);
                tmpl_set_str(l, "name", name);
                tmpl_set_int(l, "at", ((int64_t)i * p->in[1] + j) * p->in[2] + k);
                tmpl_list_push(loads, l);
            }
    for (int f = 0; f < p->fragments; ++f) {
        int o[3] = {f / (p->window[1] * p->window[2]), f / p->window[2] % p->window[1], f % p->window[2]};
        tmpl_value *fr = tmpl_map(), *rest = tmpl_list(); /* the window's first element, then the rest */
        for (int i = 0; i < p->window[0]; ++i)
            for (int j = 0; j < p->window[1]; ++j)
                for (int k = 0; k < p->window[2]; ++k) {
                    snprintf(name, sizeof name, "v%d_%d_%d", o[0] + i, o[1] + j, o[2] + k);
                    if (i || j || k)
                        tmpl_list_push(rest, tmpl_str(name));
                    else
                        tmpl_set_str(fr, "first", name);
                }
        tmpl_set_int(fr, "f", f);
        tmpl_map_set(fr, "rest", rest);
        tmpl_list_push(frags, fr);
    }
    tmpl_map_set(ctx, "loads", loads);
    tmpl_map_set(ctx, "fragment_windows", frags);
}

static tmpl_value *header(const cg_pool_problem *p, const cg_kernel *k)
{
    char what[256];
    cg_pool_problem_describe(p, what, sizeof what);
    const int64_t w[3] = {p->window[0], p->window[1], p->window[2]};
    char in[64], window[64];
    cg_pool_dims_text(p, p->in, in, sizeof in);
    cg_pool_dims_text(p, w, window, sizeof window);
    tmpl_value *h = tmpl_list();
    cg_value_line(h, "convgen %s: %s", CG_GENERATOR_VERSION, what);
    static const char *const modes[] = {"max", "fragments", "interleave"};
    cg_value_line(h, "emitted by: convgen emit --pool %s --n %lld --c %lld --in %s --window %s", modes[p->mode],
                  (long long)p->n, (long long)p->c, in, window);
    cg_value_line(h, "%s", "");
    bool interleave = p->mode == CONVGEN_POOL_INTERLEAVE;
    cg_value_line(h, "x %s[%lld][%lld][%lld][%lld][%lld] (n, c, d, h, w; rank 2: d = 1) -> y %s[%lld][%lld][%lld][%lld][%lld]",
                  interleave ? "[f]" : "", (long long)p->n, (long long)p->c, (long long)p->in[0], (long long)p->in[1],
                  (long long)p->in[2], p->mode == CONVGEN_POOL_FRAGMENTS ? "[f]" : "", (long long)p->n, (long long)p->c,
                  (long long)p->out[0], (long long)p->out[1], (long long)p->out[2]);
    if (interleave)
        cg_value_line(h, "fragment f = (oz * %d + oy) * %d + ox holds the outputs o + p j (per dimension) at j: the "
                         "inverse of max-pooling fragments' layout; out = in * p",
                      p->window[1], p->window[2]);
    else if (p->fragments > 1)
        cg_value_line(h, "fragment f = (oz * %d + oy) * %d + ox: the max pooling whose windows start at offset (oz, "
                         "oy, ox); out = (in - p + 1) / p",
                      p->window[1], p->window[2]);
    if (interleave)
        cg_value_line(h, "each thread: one dense output, copied from its fragment");
    else if (all_fragments(p))
        cg_value_line(h, "each thread: one output position of all %d fragments, from the %dx%dx%d elements their "
                         "windows cover, each loaded once; maxima by fmaxf",
                      p->fragments, region_side(p, 0), region_side(p, 1), region_side(p, 2));
    else
        cg_value_line(h, "each thread: one output, the max (fmaxf) of its window's %d elements, loads unrolled",
                      p->window[0] * p->window[1] * p->window[2]);
    cg_value_line(h, "bytes: %lld read (x once), %lld written",
                  (long long)(p->n * p->c * p->in_volume * (interleave ? p->fragments : 1) * 4),
                  (long long)(p->volumes * p->out_volume * 4));
    if (all_fragments(p) || p->mode != CONVGEN_POOL_FRAGMENTS)
        cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1): block b = entry * %lld + chunk works output "
                         "positions chunk * %d .. of the entry",
                      k->grid[0], k->block[0], (long long)((p->out_volume + POOL_THREADS - 1) / POOL_THREADS),
                      POOL_THREADS);
    else
        cg_value_line(h, "launch: grid (%u, 1, 1), block (%u, 1, 1): block b = (entry * %lld + chunk) * %d + fragment "
                         "works outputs chunk * %d .. of the fragment's volume of the entry",
                      k->grid[0], k->block[0], (long long)((p->out_volume + POOL_THREADS - 1) / POOL_THREADS),
                      p->fragments, POOL_THREADS);
    cg_value_line(h, "%s", "");
    cg_value_line(h, "Generated: do not edit. Change templates/net/pool.cu or generator/net/pool.c instead.");
    return h;
}

/* The index digits: the block's (entry, chunk, fragment), the fragment innermost so that the
 * blocks of one region's fragments run together and read its input from the cache, not once per
 * fragment from DRAM; the output's (zd, zh, zw); the fragment's offset (oz, oy, ox). */
static bool set_digits(tmpl_value *ctx, const cg_pool_problem *p, int64_t chunks)
{
    /* fragments taken by separate blocks */
    int per_block = all_fragments(p) || p->mode == CONVGEN_POOL_INTERLEAVE ? 1 : p->fragments;
    const int64_t out_hw[2] = {p->out[1], p->out[2]}, block[2] = {chunks, per_block};
    const int64_t offsets[2] = {p->window[1], p->window[2]};
    const char *const out_names[2] = {"zh", "zw"}, *const block_names[2] = {"chunk", "f"};
    const char *const offset_names[2] = {"oy", "ox"};
    tmpl_value *v[3] = {
        cg_value_digits("b", p->n * p->c * per_block * chunks - 1, per_block > 1 ? 2 : 1, block,
                        block_names, "nc"),
        cg_value_digits("e", p->out_volume - 1, 2, out_hw, out_names, "zd"),
        cg_value_digits("f", p->fragments - 1, 2, offsets, offset_names, "oz"),
    };
    const char *const names[3] = {"block_digits", "output_digits", "fragment_digits"};
    bool ok = true;
    for (int i = 0; i < 3; ++i) {
        ok &= v[i] != NULL;
        tmpl_map_set(ctx, names[i], v[i]);
    }
    return ok;
}

convgen_status cg_generate_pool(const cg_pool_problem *p, const cg_target *target, cg_generated *out)
{
    (void)target; /* a thread per output fits every target alike */
    memset(out, 0, sizeof *out);
    cg_kernel *k = &out->kernels[0];
    int64_t chunks = (p->out_volume + POOL_THREADS - 1) / POOL_THREADS;
    const int64_t w[3] = {p->window[0], p->window[1], p->window[2]};
    char sizes[24]; /* three windows of 1..8 */
    cg_pool_dims_text(p, w, sizes, sizeof sizes);
    static const char *const names[] = {"maxpool", "mpf", "interleave"};
    snprintf(k->name, sizeof k->name, "convgen_%s%dd_%s", names[p->mode], p->rank, sizes); /* "convgen_mpf3d_2x2x1" */
    k->grid[0] = (unsigned)(p->volumes / (all_fragments(p) ? p->fragments : 1) * chunks), k->grid[1] = k->grid[2] = 1;
    k->block[0] = POOL_THREADS, k->block[1] = k->block[2] = 1;
    tmpl_value *ctx = tmpl_map();
    tmpl_map_set(ctx, "header", header(p, k));
    tmpl_set_str(ctx, "kernel_name", k->name);
    tmpl_set_int(ctx, "threads", POOL_THREADS);
    tmpl_set_int(ctx, "fragments", p->fragments);
    tmpl_set_int(ctx, "c", p->c);
    tmpl_set_int(ctx, "entries", p->n * p->c);
    tmpl_set_int(ctx, "in_volume", p->in_volume);
    tmpl_set_int(ctx, "in_plane", p->in[1] * p->in[2]);
    tmpl_set_int(ctx, "in_row", p->in[2]);
    tmpl_set_int(ctx, "in_height", p->in[1]);
    tmpl_set_bool(ctx, "interleave", p->mode == CONVGEN_POOL_INTERLEAVE);
    tmpl_set_int(ctx, "out_volume", p->out_volume);
    tmpl_value *window = tmpl_list();
    for (int i = 0; i < 3; ++i)
        tmpl_list_push(window, tmpl_int(p->window[i]));
    tmpl_map_set(ctx, "window", window);
    tmpl_map_set(ctx, "taps", window_taps(p));
    tmpl_set_bool(ctx, "all_fragments", all_fragments(p));
    if (all_fragments(p))
        region_values(p, ctx);
    if (!set_digits(ctx, p, chunks)) {
        tmpl_unref(ctx);
        return cg_fail(CONVGEN_ERROR_INTERNAL, "pooling: no magic division for the shape's index digits");
    }
    convgen_status s = cg_render_kernel("net/pool.cu", ctx, &k->source);
    if (s == CONVGEN_SUCCESS)
        out->kernel_count = 1;
    return s;
}
