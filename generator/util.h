/* Small shared pieces of the generator and runtime: error reporting, a growable string,
 * overflow-checked 64-bit size arithmetic. */
#ifndef CG_UTIL_H
#define CG_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convgen.h"

/* Records a message for convgen_last_error() on this thread and returns `status`.
 * Messages name the field and the value: "kernel[0] = 0 must be >= 1". */
convgen_status cg_fail(convgen_status status, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Puts back a message convgen_last_error() held, after work whose failure is not the caller's. */
void cg_restore_error(const char *message);
/* Records NVRTC's log for convgen_last_compile_log() on this thread. */
void cg_set_compile_log(const char *log);

/* Logging through the callback set by convgen_set_log_callback(). */
void cg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cg_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Overflow-checked arithmetic on non-negative 64-bit sizes: false on overflow. */
static inline bool cg_mul64(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool cg_add64(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
/* The smallest l with 2^l >= x (0 for x <= 1): the shift of a power-of-two size. */
static inline int cg_log2_up(int64_t x)
{
    int l = 0;
    while ((1ll << l) < x)
        ++l;
    return l;
}

/* A growable NUL-terminated string. A failed allocation sets `oom` and later appends do
 * nothing, so callers check once at the end. */
typedef struct cg_buf {
    char *data;
    size_t len, cap;
    bool oom;
} cg_buf;

void cg_buf_append(cg_buf *b, const char *s, size_t n);
void cg_buf_puts(cg_buf *b, const char *s);
void cg_buf_printf(cg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cg_buf_vprintf(cg_buf *b, const char *fmt, va_list ap);
/* Hands the string to the caller (never NULL unless oom) and resets the buffer. */
char *cg_buf_take(cg_buf *b);
void cg_buf_free(cg_buf *b);

char *cg_strdup(const char *s);

/* A whole regular file of at most `max_bytes`, NUL-terminated (binary files too: *size, where
 * not NULL, is its length), or NULL with errno set where it cannot be read: EINVAL for
 * something not a regular file (a FIFO, a device, a directory: opened without blocking and
 * never read, so /dev/zero or a FIFO cannot hang or fill memory), EFBIG past `max_bytes`
 * (checked while reading, so a file that grows cannot get past it). cg_read_error(errno) says
 * so in words. */
char *cg_read_file(const char *path, size_t max_bytes, size_t *size);
const char *cg_read_error(int err);

/* Seconds on the monotonic clock (differences only). */
double cg_now_s(void);

/* The median of n > 0 values (v is sorted in place; of an even count, the upper middle one). */
double cg_median(double *v, int n);

/* The largest divisor d of n for which fits(d, user) holds, or 1 when none does: ZNNi's
 * sub-batching, the largest batch whose buffers fit a workspace limit. */
int64_t cg_largest_divisor(int64_t n, bool (*fits)(int64_t d, void *user), void *user);

/* Runs body(user, i) for i in 0..count-1 on every core (the calling thread included), each i
 * once, in no particular order; returns when all are done. For NVRTC-bound batches. */
void cg_parallel_for(int count, void (*body)(void *user, int i), void *user);

#endif
