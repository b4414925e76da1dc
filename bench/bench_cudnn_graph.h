/* cuDNN's graph (backend) API for one convolution pass: the engine configurations that support
 * it, each finalized into an execution plan and ranked by a short timing; the best of the strict
 * fp32 class and the best of all (TF32 allowed). The legacy cudnnFind…AlgorithmEx list does not
 * reach every engine and knob setting; this does. C through the backend descriptors. */
#ifndef BENCH_CUDNN_GRAPH_H
#define BENCH_CUDNN_GRAPH_H

#include <cudnn.h>

#include "bench.h"

typedef struct bench_graph bench_graph;

/* Builds the pass's operation graph (x, w, y in b's buffers, packed NCHW fp32) and finalizes up
 * to max_configs engine configurations, de-duplicated: those of the heuristics modes A and
 * FALLBACK (their knob settings), then every engine by global index (its default knobs). A
 * configuration is kept when its plan finalizes, its workspace fits workspace_bytes and a run
 * succeeds; each kept one is timed briefly for ranking. NULL, with why, when the graph API
 * cannot state or run the pass at all. */
bench_graph *bench_graph_create(cudnnHandle_t handle, void *workspace, size_t workspace_bytes,
                                const convgen_conv_desc *d, convgen_pass pass, bench_buffers *b, int max_configs,
                                char *why, size_t why_size);
void bench_graph_destroy(bench_graph *g);

/* Re-times the two fastest configurations of a class (tf32: all of them; else the strict fp32
 * class: no tensor-core, down-converting or reduced-precision-reduction numerical note) with
 * the full median of `runs`, and keeps the faster as the class's best. Its time and its name
 * ("eng12 TILE_SIZE=3,STAGES=4", "tc" when tensor cores) go to ms and name; false, with why,
 * when the class has no configuration or its runs fail. */
bool bench_graph_best(bench_graph *g, bool tf32, int runs, double *ms, char *name, size_t name_size, char *why,
                      size_t why_size);

/* One run of the class's best (after bench_graph_best) on buffer set 0, written to `out`
 * (device memory of the output's size), synchronized. */
bool bench_graph_write(bench_graph *g, bool tf32, float *out);

/* "N configs (S strict), R rejected", for the report. */
void bench_graph_summary(const bench_graph *g, char *text, size_t size);

#endif
