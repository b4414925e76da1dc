#include "bench_report.h"

#include <cuda_runtime_api.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "cache.h"
#include "generate.h"
#include "layer.h"
#include "util.h"

static void push(sample_list *l, double v)
{
    if (l->count == l->cap) {
        int cap = l->cap ? 2 * l->cap : 64;
        double *grown = realloc(l->v, sizeof *grown * (size_t)cap);
        if (!grown)
            return;
        l->v = grown, l->cap = cap;
    }
    l->v[l->count++] = v;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const sample_list *l)
{
    if (!l->count)
        return NAN;
    double *v = malloc(sizeof *v * (size_t)l->count);
    if (!v)
        return NAN;
    memcpy(v, l->v, sizeof *v * (size_t)l->count);
    qsort(v, (size_t)l->count, sizeof *v, by_value);
    double m = l->count % 2 ? v[l->count / 2] : 0.5 * (v[l->count / 2 - 1] + v[l->count / 2]);
    free(v);
    return m;
}

bench_report *bench_report_create(void)
{
    bench_report *r = calloc(1, sizeof *r);
    if (r) {
        time_t now = time(NULL);
        strftime(r->date, sizeof r->date, "%Y-%m-%d", gmtime(&now));
        r->call_us = -1;
    }
    return r;
}

void bench_report_destroy(bench_report *r)
{
    if (!r)
        return;
    free(r->rows);
    free(r->cold_ms.v);
    free(r->disk_ms.v);
    free(r->memory_us.v);
    free(r->wisdom_ms.v);
    free(r);
}

void bench_report_add(bench_report *r, const bench_row *row)
{
    if (r->count == r->cap) {
        int cap = r->cap ? 2 * r->cap : 128;
        bench_row *grown = realloc(r->rows, sizeof *grown * (size_t)cap);
        if (!grown)
            return;
        r->rows = grown, r->cap = cap;
    }
    r->rows[r->count++] = *row;
}

void bench_report_jit_plan(bench_report *r, const convgen_plan *plan)
{
    for (int i = 0; i < convgen_plan_kernel_count(plan); ++i) {
        convgen_kernel_info k;
        if (convgen_plan_kernel_info(plan, i, &k) == CONVGEN_SUCCESS && k.origin == CONVGEN_FROM_NVRTC)
            push(&r->cold_ms, k.compile_ms);
    }
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static bool chosen(const cg_layer *l, const char *const *names, int name_count)
{
    for (int i = 0; i < name_count; ++i)
        if (strcmp(names[i], l->name) == 0)
            return true;
    return name_count == 0 && l->desc.rank == 2;
}

/* One plan timed on the host clock; its kernel count and whether all came from `origin`. */
static double timed_plan(convgen_context *ctx, const cg_layer *l, int pass, convgen_algo algo, int *kernels,
                         convgen_kernel_origin origin)
{
    convgen_plan *plan;
    double t0 = now_ms();
    if (convgen_plan_conv(ctx, &l->desc, (convgen_pass)pass, algo, &plan) != CONVGEN_SUCCESS)
        return -1;
    double ms = now_ms() - t0;
    *kernels = convgen_plan_kernel_count(plan);
    for (int i = 0; i < *kernels; ++i) {
        convgen_kernel_info k;
        convgen_plan_kernel_info(plan, i, &k);
        if (k.origin != origin)
            ms = -1;
    }
    convgen_plan_destroy(plan);
    return ms;
}

bool bench_algo_listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *at = list; at && *at;) {
        size_t len = strcspn(at, ",");
        if (len == n && strncmp(at, name, n) == 0)
            return true;
        at += len + (at[len] == ',');
    }
    return list == NULL;
}

void bench_report_jit_replan(bench_report *r, convgen_context *ctx, const cg_layer *layers, int count,
                             const char *const *names, int name_count, const char *algos)
{
    for (int i = 0; i < count; ++i) {
        if (!chosen(&layers[i], names, name_count))
            continue;
        for (int pass = 0; pass < 3; ++pass)
            for (int a = 0; a < cg_planner_count(); ++a) {
                if (!bench_algo_listed(algos, cg_planner_at(a)->name))
                    continue;
                int kernels = 0;
                cache_mem_clear();
                double disk = timed_plan(ctx, &layers[i], pass, cg_planner_at(a)->algo, &kernels, CONVGEN_FROM_DISK_CACHE);
                if (disk >= 0)
                    push(&r->disk_ms, disk / kernels);
                double mem = timed_plan(ctx, &layers[i], pass, cg_planner_at(a)->algo, &kernels, CONVGEN_FROM_MEMORY_CACHE);
                if (mem >= 0)
                    push(&r->memory_us, mem * 1e3);
            }
    }
}

#define CALL_ROUNDS 25
#define CALLS_A_ROUND 200

/* Rounds of convgen_execute calls on `plan`, each call's host microseconds into us[]. */
static bool time_calls(convgen_plan *plan, float *const buf[3], double us[CALL_ROUNDS])
{
    for (int round = -1; round < CALL_ROUNDS; ++round) { /* round -1 warms up */
        double t0 = now_ms();
        for (int i = 0; i < CALLS_A_ROUND; ++i)
            if (convgen_execute(plan, buf[0], buf[1], buf[2], NULL, 0, NULL) != CONVGEN_SUCCESS)
                return false;
        double ms = now_ms() - t0;
        if (!bench_cuda_ok(cudaDeviceSynchronize(), "the calls"))
            return false;
        if (round >= 0)
            us[round] = ms * 1e3 / CALLS_A_ROUND;
    }
    return true;
}

void bench_report_call_overhead(bench_report *r, convgen_context *ctx)
{
    r->call_us = -1;
    cg_layer l;
    int is_layer = 0;
    convgen_plan *plan;
    if (cg_layer_parse_line(BENCH_CALL_LAYER, &l, &is_layer) != CONVGEN_SUCCESS || !is_layer ||
        convgen_plan_conv(ctx, &l.desc, CONVGEN_FPROP, CONVGEN_ALGO_DIRECT, &plan) != CONVGEN_SUCCESS)
        return;
    int64_t out[CONVGEN_MAX_RANK];
    convgen_output_size(&l.desc, out);
    const size_t elems[3] = {(size_t)(l.desc.n * l.desc.c * l.desc.in[0] * l.desc.in[1]),
                             (size_t)(l.desc.k * l.desc.c * l.desc.kernel[0] * l.desc.kernel[1]),
                             (size_t)(l.desc.n * l.desc.k * out[0] * out[1])};
    float *buf[3] = {NULL, NULL, NULL};
    bool ok = true;
    for (int i = 0; i < 3 && ok; ++i)
        ok = bench_cuda_ok(cudaMalloc((void **)&buf[i], 4 * elems[i]), "call buffers") &&
             bench_cuda_ok(cudaMemset(buf[i], 0, 4 * elems[i]), "call buffers");
    double us[CALL_ROUNDS];
    if (ok && time_calls(plan, buf, us)) {
        sample_list s = {us, CALL_ROUNDS, CALL_ROUNDS};
        r->call_us = median(&s);
    }
    for (int i = 0; i < 3; ++i)
        cudaFree(buf[i]);
    convgen_plan_destroy(plan);
}

void bench_report_auto_replan(bench_report *r, convgen_context *ctx, const cg_layer *l, convgen_pass pass)
{
    convgen_plan *plan;
    convgen_choice ch;
    cache_mem_clear();
    double t0 = now_ms();
    if (convgen_plan_conv(ctx, &l->desc, pass, CONVGEN_ALGO_AUTO, &plan) != CONVGEN_SUCCESS)
        return;
    double ms = now_ms() - t0;
    if (convgen_plan_choice(plan, &ch) == CONVGEN_SUCCESS && ch.chosen_by == CONVGEN_CHOSEN_BY_WISDOM)
        push(&r->wisdom_ms, ms);
    convgen_plan_destroy(plan);
}

/* The cuDNN row of the same layer and pass, or NULL. */
static const bench_row *cudnn_row(const bench_report *r, const bench_row *row, const char *impl)
{
    for (int i = 0; i < r->count; ++i)
        if (strcmp(r->rows[i].layer, row->layer) == 0 && r->rows[i].pass == row->pass &&
            strcmp(r->rows[i].impl, impl) == 0 && r->rows[i].ms > 0)
            return &r->rows[i];
    return NULL;
}

static double speedup(const bench_report *r, const bench_row *row, const char *impl)
{
    const bench_row *c = cudnn_row(r, row, impl);
    return c && row->ms > 0 ? c->ms / row->ms : NAN;
}

static void print_header(const bench_report *r, FILE *f)
{
    fprintf(f, "# convgen bench: %s, %s\n\n", r->gpu, r->date);
    fprintf(f, "- device: %s\n", r->device);
    fprintf(f, "- ceilings measured in this run: device-to-device copy %.0f GB/s (bytes read + written), "
               "fp32 FMA %.1f TFLOP/s\n", r->copy_gbs, r->fma_tflops);
    fprintf(f, "- JIT: cold NVRTC compile %.1f ms median per kernel (%d kernels), disk-cache hit %.2f ms median "
               "per kernel (%d plans), memory-cache hit %.1f us median per plan (%d plans)\n",
            median(&r->cold_ms), r->cold_ms.count, median(&r->disk_ms), r->disk_ms.count, median(&r->memory_us),
            r->memory_us.count);
    if (r->call_us >= 0)
        fprintf(f, "- a cached plan's convgen_execute, host time per call (direct fprop of `%s`, rounds of %d calls): "
                   "%.2f us median\n", BENCH_CALL_LAYER, CALLS_A_ROUND, r->call_us);
    if (r->wisdom_ms.count)
        fprintf(f, "- auto: planning a tuned shape from wisdom (kernels from the disk cache) %.2f ms median (%d plans)\n",
                median(&r->wisdom_ms), r->wisdom_ms.count);
    fprintf(f, "- timing: CUDA events around each run after 3 warm-up runs, median of the runs; input buffers "
               "rotate when a layer's data fits in L2. Speedup = cuDNN time / convgen time (> 1: convgen is "
               "faster). TFLOP/s = 2*N*C*K*prod(kernel)*prod(output) / time.\n\n");
}

/* Every row is judged against the float64 reference (sampled points), by the bound of its math:
 * strict fp32 rows within 1e-4 (correct fp32 kernels measure 2e-7 to 3e-5 on the layer set;
 * cuDNN's WINOGRAD_NONFUSED, an accepted but inaccurate pick, 6e-4 to 6e-3; a wrong kernel is
 * near 1), TF32 rows within 1e-2 (inputs rounded to 10-bit mantissas: about 1e-3). A convgen
 * row counts in a geomean only if accepted: a fast wrong kernel must not lift the summary. The
 * baseline is cuDNN's fastest whatever its error (its error is shown beside its time, and the
 * geomean line counts the rows compared against a cuDNN pick above its bound). */
#define STRICT_MAX_REF_ERROR 1e-4
#define TF32_MAX_REF_ERROR 1e-2

static double row_bound(const bench_row *row)
{
    bool tf32 = strcmp(row->impl, "cudnn-tf32") == 0 || strstr(row->algo, ", tf32") != NULL;
    return tf32 ? TF32_MAX_REF_ERROR : STRICT_MAX_REF_ERROR;
}

/* Whether the row's error against float64 is within its bound; `why` says so in a few words. */
static bool row_accepted(const bench_row *row, char *why, size_t size)
{
    bool ok = row->ref_error <= row_bound(row);
    if (isnan(row->ref_error))
        snprintf(why, size, "not checked");
    else
        snprintf(why, size, ok ? "within %.0e" : "above %.0e", row_bound(row));
    return ok;
}

/* The geomean of one convgen algorithm's speedups over one cuDNN column, and the rows it
 * leaves out, named. */
static void print_geomean(const bench_report *r, FILE *f, const char *algo, const char *impl)
{
    double logs[4] = {0};
    int n[4] = {0}, left_out = 0, inaccurate_baseline = 0;
    cg_buf left = {0}; /* the rows left out, named */
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        double s = strcmp(row->impl, "convgen") == 0 && strcmp(row->algo, algo) == 0 ? speedup(r, row, impl) : NAN;
        if (isnan(s))
            continue;
        char why[32];
        if (!row_accepted(row, why, sizeof why)) {
            ++left_out;
            cg_buf_printf(&left, "%s%s %s (", left_out > 1 ? ", " : "", row->layer, convgen_pass_name(row->pass));
            if (isnan(row->ref_error))
                cg_buf_puts(&left, "not checked)");
            else
                cg_buf_printf(&left, "error %.1e > %.0e)", row->ref_error, row_bound(row));
            continue;
        }
        const bench_row *c = cudnn_row(r, row, impl);
        inaccurate_baseline += !row_accepted(c, why, sizeof why);
        logs[row->pass] += log(s), ++n[row->pass];
        logs[3] += log(s), ++n[3];
    }
    if (!n[3] && !left_out) {
        cg_buf_free(&left);
        return;
    }
    fprintf(f, "- geomean speedup of %s over %s: %.3f (fprop %.3f, bprop %.3f, accgrad %.3f; %d rows", algo, impl,
            n[3] ? exp(logs[3] / n[3]) : NAN, n[0] ? exp(logs[0] / n[0]) : NAN, n[1] ? exp(logs[1] / n[1]) : NAN,
            n[2] ? exp(logs[2] / n[2]) : NAN, n[3]);
    if (inaccurate_baseline)
        fprintf(f, ", %d of them against a cuDNN pick outside its bound", inaccurate_baseline);
    if (left_out)
        fprintf(f, "; %d left out, against float64: %s", left_out, left.data ? left.data : "(out of memory)");
    fprintf(f, ")\n");
    cg_buf_free(&left);
}

static void print_geomeans(const bench_report *r, FILE *f)
{
    fprintf(f, "Geomeans count a convgen row only if its error against the float64 reference is within %.0e "
               "(strict fp32); cuDNN's pick is its fastest, whatever its error.\n\n", STRICT_MAX_REF_ERROR);
    for (int a = 0; a <= cg_planner_count(); ++a) {
        const char *algo = a < cg_planner_count() ? cg_planner_at(a)->name : "auto";
        print_geomean(r, f, algo, "cudnn-fp32");
        print_geomean(r, f, algo, "cudnn-tf32");
    }
}

/* A cuDNN row's algorithm names its API: "graph: eng12 ..." or "legacy: FFT_TILING". */
static bool won_by_graph(const bench_row *row)
{
    return strncmp(row->algo, "graph:", 6) == 0;
}

static void print_error(FILE *f, double e)
{
    if (isnan(e))
        fprintf(f, " |");
    else
        fprintf(f, " %.2e |", e);
}

/* Each API's best beside the other: which cuDNN API and engine won each row. */
static void print_cudnn_apis(const bench_report *r, FILE *f)
{
    bool any = false;
    for (int i = 0; i < r->count && !any; ++i)
        any = strncmp(r->rows[i].impl, "cudnn", 5) == 0;
    if (!any)
        return;
    fprintf(f, "\ncuDNN, legacy API (cudnnFind...AlgorithmEx) against graph API (engine configurations of heuristics "
               "A and FALLBACK and every engine by index; engine id, \"tc\" for tensor-core engines, knobs). "
               "Errors against the float64 reference (sampled).\n\n");
    fprintf(f, "| layer | pass | math | legacy best | ms | error | graph best | ms | error | winner | legacy/graph "
               "| graph configurations |\n");
    fprintf(f, "| --- | --- | --- | --- | ---: | ---: | --- | ---: | ---: | --- | ---: | --- |\n");
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        if (strncmp(row->impl, "cudnn", 5) != 0)
            continue;
        fprintf(f, "| %s | %s | %s | %s |", row->layer, convgen_pass_name(row->pass),
                strcmp(row->impl, "cudnn-tf32") == 0 ? "TF32" : "fp32", row->legacy_algo);
        fprintf(f, row->legacy_ms > 0 ? " %.4f |" : " n/a |", row->legacy_ms);
        print_error(f, row->legacy_error);
        fprintf(f, " %s |", row->graph_algo);
        fprintf(f, row->graph_ms > 0 ? " %.4f |" : " n/a |", row->graph_ms);
        print_error(f, row->graph_error);
        fprintf(f, " %s |", row->ms <= 0 ? "-" : won_by_graph(row) ? "graph" : "legacy");
        if (row->legacy_ms > 0 && row->graph_ms > 0)
            fprintf(f, " %.2f |", row->legacy_ms / row->graph_ms);
        else
            fprintf(f, " |");
        fprintf(f, " %s |\n", row->graph_configs);
    }
}

void bench_report_print(const bench_report *r, FILE *f)
{
    print_header(r, f);
    fprintf(f, "| layer | pass | implementation | algorithm | ms | TFLOP/s | speedup vs cuDNN fp32 | "
               "speedup vs cuDNN TF32 | rel. error vs cuDNN fp32 | rel. error vs float64 (sampled) | "
               "vs bound (geomean) |\n");
    fprintf(f, "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        if (row->ms <= 0) {
            fprintf(f, "| %s | %s | %s | %s | n/a | | | | %s | | |\n", row->layer, convgen_pass_name(row->pass),
                    row->impl, row->algo, row->note);
            continue;
        }
        fprintf(f, "| %s | %s | %s | %s%s%s%s | %.4f | %.2f | ", row->layer, convgen_pass_name(row->pass), row->impl,
                row->algo, row->note[0] ? " (" : "", row->note, row->note[0] ? ")" : "", row->ms,
                row->flops / (row->ms * 1e-3) / 1e12);
        bool mine = strcmp(row->impl, "convgen") == 0;
        if (mine)
            fprintf(f, "%.3f | %.3f | %.2e |", speedup(r, row, "cudnn-fp32"), speedup(r, row, "cudnn-tf32"),
                    row->rel_error);
        else
            fprintf(f, " | | |");
        print_error(f, row->ref_error);
        char why[32];
        bool ok = row_accepted(row, why, sizeof why);
        fprintf(f, " %s%s |\n", why, mine && !ok && !strstr(row->algo, ", tf32") ? ": left out" : "");
    }
    fprintf(f, "\n");
    print_geomeans(r, f);
    print_cudnn_apis(r, f);
}

static void csv_text(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void write_csv(const bench_report *r, FILE *f)
{
    fprintf(f, "layer,pass,implementation,algorithm,ms,tflops,speedup_vs_cudnn_fp32,speedup_vs_cudnn_tf32,rel_error,"
               "ref_error,within_bound,legacy_algorithm,legacy_ms,legacy_ref_error,graph_engine,graph_ms,"
               "graph_ref_error,cudnn_api\n");
    for (int i = 0; i < r->count; ++i) {
        const bench_row *row = &r->rows[i];
        bool mine = strcmp(row->impl, "convgen") == 0;
        char why[32];
        bool ok = row_accepted(row, why, sizeof why);
        /* the algorithm quoted: names like "fft, w once" hold a comma (RFC 4180) */
        fprintf(f, "%s,%s,%s,", row->layer, convgen_pass_name(row->pass), row->impl);
        csv_text(f, row->algo);
        fprintf(f, ",%.6f,%.4f,%.4f,%.4f,%.3e,%.3e,%s,", row->ms,
                row->ms > 0 ? row->flops / (row->ms * 1e-3) / 1e12 : NAN, mine ? speedup(r, row, "cudnn-fp32") : NAN,
                mine ? speedup(r, row, "cudnn-tf32") : NAN, row->rel_error, row->ref_error,
                isnan(row->ref_error) ? "" : ok ? "yes" : "no");
        if (mine) {
            fprintf(f, ",,,,,,\n");
            continue;
        }
        csv_text(f, row->legacy_algo);
        fprintf(f, ",%.6f,%.3e,", row->legacy_ms > 0 ? row->legacy_ms : NAN, row->legacy_error);
        csv_text(f, row->graph_algo);
        fprintf(f, ",%.6f,%.3e,%s\n", row->graph_ms > 0 ? row->graph_ms : NAN, row->graph_error,
                row->ms <= 0 ? "" : won_by_graph(row) ? "graph" : "legacy");
    }
}

int bench_report_write(const bench_report *r, const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bench.md", dir);
    FILE *md = fopen(path, "w");
    snprintf(path, sizeof path, "%s/bench.csv", dir);
    FILE *csv = fopen(path, "w");
    if (md)
        bench_report_print(r, md);
    if (csv)
        write_csv(r, csv);
    int rc = (!md || fclose(md) != 0) | (!csv || fclose(csv) != 0);
    if (rc)
        fprintf(stderr, "convgen-bench: cannot write the results under %s\n", dir);
    return rc;
}
