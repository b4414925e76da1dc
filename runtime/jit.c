#include "jit.h"

#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cubin.h"
#include "generate.h"
#include "kernel_set.h"
#include "util.h"

/* -v makes ptxas print the resource report (registers, shared memory, stack, spills) into
 * the program log, which is how the report is known without a GPU. -minimal (NVRTC 12.4 on)
 * leaves out the runtime API's declarations, textures and device-side launches, none of which
 * an emitted kernel uses: 5-25 ms less per kernel (of 40-320 ms measured on a 2-core machine).
 * The cache key hashes the options used, so an option added here invalidates every cached
 * kernel, as it must. */
static const char *const base_options[] = {"--ptxas-options=-v", "-std=c++17", "-minimal"};
#define BASE_OPTIONS (sizeof base_options / sizeof base_options[0])

/* How many of base_options NVRTC major.minor takes: all but -minimal before 12.4. */
static size_t base_option_count(int major, int minor)
{
    return major > 12 || (major == 12 && minor >= 4) ? BASE_OPTIONS : BASE_OPTIONS - 1;
}

convgen_status jit_check_arch(const char *arch)
{
    int sm = 0;
    char tail[8] = "";
    if (!arch || sscanf(arch, "sm_%d%7s", &sm, tail) < 1 || (tail[0] && strcmp(tail, "a") != 0))
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "arch = '%s' must look like sm_90", arch ? arch : "(null)");
    int count = 0;
    if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0)
        return cg_fail(CONVGEN_ERROR_COMPILE, "NVRTC cannot list its architectures");
    int *archs = malloc(sizeof *archs * (size_t)count);
    if (!archs)
        return cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory listing NVRTC's architectures");
    nvrtcGetSupportedArchs(archs);
    bool found = false;
    for (int i = 0; i < count; ++i)
        found |= archs[i] == sm;
    int lo = archs[0], hi = archs[count - 1];
    free(archs);
    if (found)
        return CONVGEN_SUCCESS;
    return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "arch = '%s' is not supported by this NVRTC (sm_%d to sm_%d)", arch,
                   lo, hi);
}

static int scan_after(const char *from, const char *end, const char *needle_before_number)
{
    /* The integer that precedes `needle` on the same line ("12 bytes stack frame"), or -1 if
     * the report of this function (from..end) has no such line. */
    const char *hit = strstr(from, needle_before_number);
    if (!hit || (end && hit > end))
        return -1;
    const char *p = hit;
    while (p > from && p[-1] == ' ')
        --p;
    while (p > from && p[-1] >= '0' && p[-1] <= '9')
        --p;
    return atoi(p);
}

bool jit_parse_report(const char *log, const char *name, cache_kernel *k)
{
    char marker[160];
    snprintf(marker, sizeof marker, "Function properties for %s", name);
    const char *at = strstr(log, marker);
    const char *used = at ? strstr(at, "Used ") : NULL;
    if (!used)
        return false;
    /* This function's report ends with its "Used ..." line. */
    const char *end = strchr(used, '\n');
    k->stack_bytes = scan_after(at, end, " bytes stack frame");
    k->spill_store_bytes = scan_after(at, end, " bytes spill stores");
    k->spill_load_bytes = scan_after(at, end, " bytes spill loads");
    k->registers = atoi(used + 5);
    int smem = scan_after(used, end, " bytes smem");
    k->shared_bytes = smem < 0 ? 0 : smem; /* ptxas omits the field when there is none */
    return true;
}

/* The report from ptxas' log, else from the cubin. Spill slots live in the stack frame, so
 * a cubin with no frame has no spills; with a frame and no log, spills are unknown (-1). */
static void read_report(const char *log, const char *name, cache_kernel *k)
{
    if (log && jit_parse_report(log, name, k))
        return;
    cg_debug("no ptxas report for %s in NVRTC's log; reading the cubin. Log:\n%s", name, log ? log : "(none)");
    if (!cubin_read_report(k->cubin, k->cubin_size, name, k)) {
        k->registers = k->shared_bytes = k->stack_bytes = -1;
        cg_warn("no resource report for kernel %s: neither ptxas' log nor the cubin has one", name);
    }
    k->spill_store_bytes = k->spill_load_bytes = k->stack_bytes == 0 ? 0 : -1;
}

static convgen_status nvrtc_fail(nvrtcProgram prog, nvrtcResult r, const char *what)
{
    size_t size = 0;
    char *log = NULL;
    if (prog && nvrtcGetProgramLogSize(prog, &size) == NVRTC_SUCCESS && (log = malloc(size + 1))) {
        nvrtcGetProgramLog(prog, log);
        log[size] = '\0';
    }
    cg_set_compile_log(log ? log : "");
    free(log);
    return cg_fail(CONVGEN_ERROR_COMPILE, "%s: %s (convgen_last_compile_log() has NVRTC's log)", what,
                   nvrtcGetErrorString(r));
}

/* The architecture a source compiles for: `arch`, or sm_90a where arch is sm_90 and the source
 * uses sm_90's arch-specific instructions (wgmma), which such a source says by a line of its own,
 * CG_SM90A_MARKER (generate.h; a word in a comment cannot switch it). sm_90a code runs on sm_90
 * devices only, which is the arch's. */
static const char *compile_arch(const char *source, const char *arch)
{
    return strcmp(arch, "sm_90") == 0 && strstr(source, "\n" CG_SM90A_MARKER "\n") ? "sm_90a" : arch;
}

static convgen_status compile(const char *source, const char *name, const char *arch, cache_kernel *out)
{
    char arch_option[32];
    snprintf(arch_option, sizeof arch_option, "--gpu-architecture=%s", compile_arch(source, arch));
    const char *options[BASE_OPTIONS + 1] = {arch_option};
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    const size_t count = base_option_count(major, minor);
    for (size_t i = 0; i < count; ++i)
        options[i + 1] = base_options[i];
    nvrtcProgram prog = NULL;
    double t0 = cg_now_s();
    nvrtcResult r = nvrtcCreateProgram(&prog, source, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS)
        return nvrtc_fail(NULL, r, "nvrtcCreateProgram");
    r = nvrtcCompileProgram(prog, (int)count + 1, options);
    convgen_status s = CONVGEN_SUCCESS;
    if (r != NVRTC_SUCCESS) {
        s = nvrtc_fail(prog, r, name);
    } else if ((r = nvrtcGetCUBINSize(prog, &out->cubin_size)) != NVRTC_SUCCESS || !(out->cubin = malloc(out->cubin_size))) {
        s = r != NVRTC_SUCCESS ? nvrtc_fail(prog, r, "nvrtcGetCUBINSize")
                               : cg_fail(CONVGEN_ERROR_OUT_OF_MEMORY, "out of memory for a cubin");
    } else if ((r = nvrtcGetCUBIN(prog, out->cubin)) != NVRTC_SUCCESS) {
        s = nvrtc_fail(prog, r, "nvrtcGetCUBIN");
    } else {
        out->compile_ms = 1e3 * (cg_now_s() - t0);
        size_t size = 0;
        nvrtcGetProgramLogSize(prog, &size);
        char *log = malloc(size + 1);
        if (log && nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
            log[size] = '\0';
        else
            free(log), log = NULL;
        read_report(log, name, out);
        free(log);
    }
    nvrtcDestroyProgram(&prog);
    if (s != CONVGEN_SUCCESS)
        cache_kernel_free(out);
    return s;
}

/* The options this NVRTC compiles with, space-separated (what the cache key hashes). */
static void options_text(int major, int minor, char *buf, size_t size)
{
    buf[0] = '\0';
    for (size_t i = 0, used = 0, count = base_option_count(major, minor); i < count && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s ", base_options[i]);
}

void jit_compiler_text(char *buf, size_t size)
{
    int major = 0, minor = 0;
    char options[256];
    nvrtcVersion(&major, &minor);
    options_text(major, minor, options, sizeof options);
    snprintf(buf, size, "NVRTC %d.%d options %s\n", major, minor, options);
}

cache_key jit_key(const char *source, const char *arch)
{
    int major = 0, minor = 0;
    nvrtcVersion(&major, &minor);
    char options[256];
    options_text(major, minor, options, sizeof options);
    return cache_key_of(source, compile_arch(source, arch), options, major, minor);
}

convgen_status jit_get(const char *source, const char *name, const char *arch, cache_disk *disk,
                       cache_kernel *out, convgen_kernel_origin *origin)
{
    memset(out, 0, sizeof *out);
    cache_key key = jit_key(source, arch);
    if (cache_mem_get(key, out)) {
        *origin = CONVGEN_FROM_MEMORY_CACHE;
        return CONVGEN_SUCCESS;
    }
    if (kernel_set_get(key, out)) {
        *origin = CONVGEN_FROM_KERNEL_SET;
        cache_mem_put(key, out);
        return CONVGEN_SUCCESS;
    }
    if (disk && cache_disk_get(disk, key, out)) {
        *origin = CONVGEN_FROM_DISK_CACHE;
        cache_mem_put(key, out);
        return CONVGEN_SUCCESS;
    }
    convgen_status s = compile(source, name, arch, out);
    if (s != CONVGEN_SUCCESS)
        return s;
    *origin = CONVGEN_FROM_NVRTC;
    cache_mem_put(key, out);
    if (disk)
        cache_disk_put(disk, key, out);
    return CONVGEN_SUCCESS;
}

typedef struct batch {
    jit_job *jobs;
    const char *arch;
    cache_disk *disk;
} batch;

static void get_one(void *user, int i)
{
    const batch *b = user;
    jit_job *j = &b->jobs[i];
    j->status = jit_get(j->source, j->name, b->arch, b->disk, &j->compiled, &j->origin);
    if (j->status != CONVGEN_SUCCESS) {
        j->message = cg_strdup(convgen_last_error());
        j->log = cg_strdup(convgen_last_compile_log());
    }
}

void jit_get_all(jit_job *jobs, int count, const char *arch, cache_disk *disk)
{
    batch b = {jobs, arch, disk};
    cg_parallel_for(count, get_one, &b);
}

convgen_status jit_job_fail(const jit_job *job)
{
    cg_set_compile_log(job->log ? job->log : "");
    return cg_fail(job->status, "%s", job->message ? job->message : "compiling a kernel failed");
}

void jit_job_free(jit_job *job)
{
    cache_kernel_free(&job->compiled);
    free(job->message);
    free(job->log);
    job->message = job->log = NULL;
}
