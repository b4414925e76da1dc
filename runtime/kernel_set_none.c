/* The empty kernel set: linked into the generator that builds the library's own set
 * (`convgen-gen generate --embed`), which must not depend on its output. */
#include "kernel_set.h"

const cg_set_kernel cg_kernel_set[1];
const size_t cg_kernel_set_count = 0;
const unsigned char cg_kernel_set_blob[1];
const char cg_kernel_set_wisdom[] = "";
