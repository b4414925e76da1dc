/* Template values that several planners build the same way. */
#ifndef CG_VALUES_H
#define CG_VALUES_H

#include <stdbool.h>
#include <stdint.h>

#include "template/tmpl.h"

/* {pow2, mul, shift}: the magic constants dividing by d over [0, max_dividend], as
 * common.cuh's udiv() lays them out. NULL (which fails the context it is put in) with
 * CONVGEN_ERROR_INTERNAL in convgen_last_error() if they cannot be derived; planners keep
 * dividends below 2^31, where they always can (magic.h). */
tmpl_value *cg_value_magic(uint32_t d, int64_t max_dividend);

/* The digits of a flat index `index` (at most max_index) over sizes (outermost first), listed
 * innermost first as common.cuh's decompose() divides them: each a magic division (quotients
 * named index_1, index_2, ...), a size-1 zero, then `rest`, the final quotient. NULL, like
 * cg_value_magic, where a magic constant cannot be derived. */
tmpl_value *cg_value_digits(const char *index, int64_t max_index, int count, const int64_t *sizes,
                            const char *const *names, const char *rest);

/* {bias, relu}: what a kernel that writes y adds to each output (common.cuh's epilogue()), the
 * layer's epilogue bits where it `applies` them, else nothing. Templates take it as "epi": a
 * context value named "epilogue" would hide the macro. */
tmpl_value *cg_value_epilogue(unsigned epilogue, bool applies);

/* Appends one printf-formatted line to a list of header lines (common.cuh's file_header). */
void cg_value_line(tmpl_value *lines, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
