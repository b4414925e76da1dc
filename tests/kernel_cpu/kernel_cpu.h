/* Emitted kernels run on the CPU, for tests where no GPU is: each kernel's CUDA source, rewritten
 * a little (kernel_cpu_rewrite.c) and compiled by the host's C++ compiler against cuda_on_cpu.h,
 * runs its grid one block at a time, each GPU thread a fiber that yields at barriers and shuffles.
 * What it checks is what the kernel computes (indexing, transforms, sums, barriers placed so that
 * no read sees an unlanded copy or unwritten shared memory), not how fast: the GPU tests still
 * time and check the kernels on the device. sm_90's mbarriers, bulk copies, wgmma, mma.sync and
 * clusters run too (kernel_cpu_sm90.h; a cluster's blocks at once); asm the CPU cannot run fails
 * when it is reached, naming it. */
#ifndef KCPU_H
#define KCPU_H

#include <stdbool.h>

#include "convgen.h"
#include "generate.h"

typedef struct kcpu_runner kcpu_runner;

/* The order a launch runs in. The CPU runs one ordering of what a GPU runs in parallel; two
 * opposite ones expose what either hides: IN_ORDER runs blocks and threads first to last, each
 * as far as it can before the next, with cp.async copies landing at the wait that covers them
 * (a read before its barrier or its wait sees the poison); REVERSED runs them last to first with
 * copies landing at issue (a write over what other threads still read shows). sm_90's bulk copies
 * and wgmma take each order's side too (kernel_cpu_sm90.h). ALTERNATE, the
 * default, takes them in turn, launch by launch. */
typedef enum { KCPU_ALTERNATE, KCPU_IN_ORDER, KCPU_REVERSED } kcpu_schedule;

/* A runner whose kernels include `shim_dir`/cuda_on_cpu.h and compile with `cxx` (a C++17
 * compiler command); fails with the reason where the compiler does not run. */
convgen_status kcpu_create(const char *cxx, const char *shim_dir, kcpu_runner **out);
void kcpu_destroy(kcpu_runner *r);
void kcpu_set_schedule(kcpu_runner *r, kcpu_schedule s);

/* Compiles those of the `count` kernels not yet compiled, as many at once as there are cores
 * (kcpu_launch compiles a kernel it has not seen, alone). */
convgen_status kcpu_prepare(kcpu_runner *r, const cg_kernel *kernels, int count);

/* Runs k's grid with the runtime's five kernel parameters (plan.c: in0, in1, out, workspace,
 * bias), compiling its source at first use. */
convgen_status kcpu_launch(kcpu_runner *r, const cg_kernel *k, const float *in0, const float *in1, float *out,
                           void *ws, const float *bias);

/* r as cg_program_run's kernel runner: each kernel of a program launched by kcpu_launch. */
cg_kernel_runner kcpu_program_runner(kcpu_runner *r);

/* The source as the C++ compiler gets it (after cuda_on_cpu.h): __shared__ arrays made arena
 * references, asm statements made calls. The caller frees it; NULL with the reason on failure. */
char *kcpu_rewrite(const char *source);

#endif
