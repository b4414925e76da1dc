/* The empty kernel set: linked into the generator that builds the library's own set
 * (`convgen-gen generate --ninja`, `convgen-gen embed-set`), which must not depend on its output. */
#include "kernel_set.h"

const convgen_kernel_set cg_kernel_set = {CONVGEN_KERNEL_SET_MAGIC, CONVGEN_KERNEL_SET_VERSION, 0, NULL, ""};
