/* The verbs of the convgen command; each takes argv after the verb and returns the exit code. */
#ifndef CLI_VERBS_H
#define CLI_VERBS_H

int cli_emit(int argc, char **argv);
int cli_emit_fft(int argc, char **argv); /* emit --algo fft */
int cli_emit_pool(int argc, char **argv); /* emit --pool */
int cli_generate(int argc, char **argv);
int cli_compile(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_tune(int argc, char **argv);
int cli_compile_kernel(int argc, char **argv); /* the build's kernel-set edges (cli/set_ninja.c) */
int cli_embed_set(int argc, char **argv);
int cli_explain(int argc, char **argv);
int cli_net(int argc, char **argv);
int cli_infer(int argc, char **argv);

#include <stdbool.h>
#include <stddef.h>
#include "convgen.h"
/* A device context, or (unless need_device) an offline one for `arch` or sm_90. */
convgen_status cli_open_context(const char *arch, bool no_cache, bool need_device, int sm_count,
                                convgen_context **ctx);
/* compile's table of a plan's kernels (registers, shared memory, stack, spills, compile time):
 * the header line, and a plan's rows; true when a kernel uses local memory. */
void cli_print_kernel_header(void);
bool cli_print_kernels(const convgen_plan *plan, convgen_pass pass);
/* The SASS instruction mix of a kernel ("4120 instructions: FFMA 61.2% LDS 12.0% ..."), where
 * cuobjdump or nvdisasm is on PATH; false without one. */
bool cli_sass_available(void);
bool cli_sass_mix(const char *source, const char *name, const char *arch, char *mix, size_t size);

#endif
