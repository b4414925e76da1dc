#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <threads.h>
#include <unistd.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

static thread_local char last_error[1024];

/* NVRTC logs have no fixed bound, so each thread's copy is on the heap, freed by the key's
 * destructor when the thread exits. */
static pthread_key_t compile_log_key;
static pthread_once_t compile_log_once = PTHREAD_ONCE_INIT;

static void make_compile_log_key(void) { pthread_key_create(&compile_log_key, free); }

convgen_status cg_fail(convgen_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    cg_debug("error: %s", last_error);
    return status;
}

const char *convgen_last_error(void) { return last_error; }

void cg_restore_error(const char *message) { snprintf(last_error, sizeof last_error, "%s", message); }

void cg_set_compile_log(const char *log)
{
    pthread_once(&compile_log_once, make_compile_log_key);
    free(pthread_getspecific(compile_log_key));
    pthread_setspecific(compile_log_key, log ? cg_strdup(log) : NULL);
}

const char *convgen_last_compile_log(void)
{
    pthread_once(&compile_log_once, make_compile_log_key);
    const char *log = pthread_getspecific(compile_log_key);
    return log ? log : "";
}

const char *convgen_status_string(convgen_status status)
{
    switch (status) {
    case CONVGEN_SUCCESS: return "success";
    case CONVGEN_ERROR_INVALID_VALUE: return "invalid value";
    case CONVGEN_ERROR_NOT_SUPPORTED: return "not supported by this algorithm";
    case CONVGEN_ERROR_OUT_OF_MEMORY: return "out of host memory";
    case CONVGEN_ERROR_NO_DEVICE: return "no CUDA device";
    case CONVGEN_ERROR_CUDA: return "CUDA driver error";
    case CONVGEN_ERROR_COMPILE: return "kernel compilation failed";
    case CONVGEN_ERROR_TEMPLATE: return "template error";
    case CONVGEN_ERROR_IO: return "file input/output error";
    case CONVGEN_ERROR_INSUFFICIENT_WORKSPACE: return "workspace too small";
    case CONVGEN_ERROR_INTERNAL: return "internal error";
    case CONVGEN_ERROR_WORKSPACE_LIMIT: return "workspace limit exceeded";
    }
    return "unknown status";
}

/* ---- logging ---- */

static void log_to_stderr(convgen_log_level level, const char *message, void *user)
{
    (void)user;
    fprintf(stderr, "convgen: %s: %s\n", level == CONVGEN_LOG_WARNING ? "warning" : "debug", message);
}

/* The callback and its argument change together, under this lock. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static convgen_log_fn log_fn = log_to_stderr;
static void *log_user;

void convgen_set_log_callback(convgen_log_fn fn, void *user)
{
    pthread_mutex_lock(&log_lock);
    log_fn = fn;
    log_user = user;
    pthread_mutex_unlock(&log_lock);
}

static void log_v(convgen_log_level level, const char *fmt, va_list ap)
{
    pthread_mutex_lock(&log_lock);
    convgen_log_fn fn = log_fn;
    void *user = log_user;
    pthread_mutex_unlock(&log_lock);
    if (!fn)
        return;
    char msg[1024];
    vsnprintf(msg, sizeof msg, fmt, ap);
    fn(level, msg, user);
}

void cg_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_v(CONVGEN_LOG_WARNING, fmt, ap);
    va_end(ap);
}

void cg_debug(const char *fmt, ...)
{
    const char *env = getenv("CONVGEN_LOG");
    if (!env || strcmp(env, "debug") != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    log_v(CONVGEN_LOG_DEBUG, fmt, ap);
    va_end(ap);
}

/* ---- strings ---- */

char *cg_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static bool buf_reserve(cg_buf *b, size_t extra)
{
    if (b->oom)
        return false;
    if (b->len + extra + 1 <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra + 1)
        cap *= 2;
    char *d = realloc(b->data, cap);
    if (!d) {
        b->oom = true;
        return false;
    }
    b->data = d;
    b->cap = cap;
    return true;
}

void cg_buf_append(cg_buf *b, const char *s, size_t n)
{
    if (!buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void cg_buf_puts(cg_buf *b, const char *s) { cg_buf_append(b, s, strlen(s)); }

void cg_buf_vprintf(cg_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0 || !buf_reserve(b, (size_t)n))
        return;
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void cg_buf_printf(cg_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cg_buf_vprintf(b, fmt, ap);
    va_end(ap);
}

char *cg_buf_take(cg_buf *b)
{
    if (b->oom) {
        cg_buf_free(b);
        return NULL;
    }
    if (!b->data) { /* never appended to: still an empty string, not unterminated bytes */
        if (!buf_reserve(b, 0))
            return NULL;
        b->data[0] = '\0';
    }
    char *d = b->data;
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

void cg_buf_free(cg_buf *b)
{
    free(b->data);
    *b = (cg_buf){0};
}

typedef struct parallel_job {
    void (*body)(void *user, int i);
    void *user;
    int count, next;
    pthread_mutex_t lock;
} parallel_job;

static void *parallel_worker(void *arg)
{
    parallel_job *j = arg;
    for (;;) {
        pthread_mutex_lock(&j->lock);
        int i = j->next++;
        pthread_mutex_unlock(&j->lock);
        if (i >= j->count)
            return NULL;
        j->body(j->user, i);
    }
}

void cg_parallel_for(int count, void (*body)(void *user, int i), void *user)
{
    enum { MAX_THREADS = 64 };
    parallel_job j = {.body = body, .user = user, .count = count};
    pthread_mutex_init(&j.lock, NULL);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int helpers = (cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores) - 1;
    if (helpers > count - 1)
        helpers = count - 1;
    pthread_t tid[MAX_THREADS];
    int started = 0;
    while (started < helpers && pthread_create(&tid[started], NULL, parallel_worker, &j) == 0)
        ++started;
    parallel_worker(&j);
    for (int t = 0; t < started; ++t)
        pthread_join(tid[t], NULL);
    pthread_mutex_destroy(&j.lock);
}

int64_t cg_largest_divisor(int64_t n, bool (*fits)(int64_t d, void *user), void *user)
{
    int64_t best = 1;
    for (int64_t d = 1; d * d <= n; ++d) { /* divisors in pairs: d and n / d */
        if (n % d != 0)
            continue;
        const int64_t pair[2] = {d, n / d};
        for (int i = 0; i < 2; ++i)
            if (pair[i] > best && fits(pair[i], user))
                best = pair[i];
    }
    return best;
}

char *cg_read_file(const char *path, size_t max_bytes, size_t *size)
{
    /* O_NONBLOCK: opening a FIFO with no writer would block; it is refused below unread. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        errno = EINVAL;
        return NULL;
    }
    cg_buf b = {0};
    char chunk[65536];
    ssize_t n;
    int err = 0;
    while ((n = read(fd, chunk, sizeof chunk)) != 0) {
        if (n < 0) {
            if (errno == EINTR)
                continue;
            err = errno;
            break;
        }
        if ((size_t)n > max_bytes - b.len) {
            err = EFBIG;
            break;
        }
        cg_buf_append(&b, chunk, (size_t)n);
    }
    close(fd);
    if (size)
        *size = b.len;
    cg_buf_append(&b, "", 0);
    if (err || b.oom) {
        cg_buf_free(&b);
        errno = err ? err : ENOMEM;
        return NULL;
    }
    return cg_buf_take(&b);
}

const char *cg_read_error(int err)
{
    return err == EINVAL ? "not a regular file" : err == EFBIG ? "larger than this reader accepts" : strerror(err);
}

double cg_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cg_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, compare_doubles);
    return v[n / 2];
}
