/* An emitted kernel's source made fit for the host's C++ compiler (kernel_cpu.h): what macros in
 * cuda_on_cpu.h cannot reach. Each __shared__ array becomes a static offset, placed at its first
 * use, and a reference at that offset into the running thread's block's arena (a cluster's blocks
 * run at once, each with its own), the dynamic one the arena's start; each asm statement becomes
 * the shim's call for its PTX: cp.async copies, commits and waits, and ignore-src predicates;
 * sm_90's mbarriers (their cluster-scope arrivals and waits too), bulk copies, wgmma, mma.sync and
 * clusters (rank, mapa, the cluster barrier, st.async of one float or two), with the predicates and
 * selects around them; named barriers. griddepcontrol, the async proxy's and the cluster's fences
 * and the L2 prefetch are nothing on a CPU, which runs a grid after the one before it in one
 * coherent memory. Any other PTX becomes a call that fails when it is reached, naming it.
 * Comments, strings and everything else pass through as they are. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_cpu.h"
#include "util.h"

enum { MAX_OPERANDS = 160 /* wgmma's 128 sums and its descriptors */, MAX_PREDICATES = 4 };

static bool ident_char(char c) { return isalnum((unsigned char)c) || c == '_'; }

static const char *skip_space(const char *p)
{
    while (isspace((unsigned char)*p))
        ++p;
    return p;
}

/* Past the string or character literal that starts at p. */
static const char *skip_literal(const char *p)
{
    char quote = *p++;
    while (*p && *p != quote)
        p += *p == '\\' && p[1] ? 2 : 1;
    return *p ? p + 1 : p;
}

/* The ')' or ']' that closes the bracket at p, or NULL. */
static const char *closing(const char *p)
{
    int depth = 0;
    for (; *p; ++p) {
        if (*p == '"' || *p == '\'') {
            p = skip_literal(p) - 1;
            continue;
        }
        depth += *p == '(' || *p == '[' ? 1 : *p == ')' || *p == ']' ? -1 : 0;
        if (depth == 0)
            return p;
    }
    return NULL;
}

/* The next top-level `sep` in [p, end), or end. */
static const char *next_top(const char *p, const char *end, char sep)
{
    while (p < end && *p != sep) {
        if (*p == '"' || *p == '\'')
            p = skip_literal(p);
        else if (*p == '(' || *p == '[')
            p = closing(p) + 1;
        else
            ++p;
    }
    return p;
}

static char *copy_trimmed(const char *p, const char *end)
{
    p = skip_space(p);
    while (end > p && isspace((unsigned char)end[-1]))
        --end;
    char *s = malloc((size_t)(end - p) + 1);
    if (s) {
        memcpy(s, p, (size_t)(end - p));
        s[end - p] = 0;
    }
    return s;
}

/* ---- asm statements ---- */

typedef struct asm_stmt {
    char ptx[2048]; /* the template's string literals joined, escapes decoded (wgmma's run to ~900) */
    char *operand[MAX_OPERANDS];
    int operands;
    char pred_name[MAX_PREDICATES][16], pred_test[MAX_PREDICATES][256];
    int preds;
    bool cluster_arrived; /* barrier.cluster.arrive, whose wait must follow in the statement */
} asm_stmt;

/* Appends the string literals of [p, end) to a->ptx, their escapes decoded. */
static bool join_literals(asm_stmt *a, const char *p, const char *end)
{
    size_t n = 0;
    for (p = skip_space(p); p < end; p = skip_space(p)) {
        if (*p != '"')
            return false;
        for (++p; p < end && *p != '"'; ++p) {
            char c = *p;
            if (c == '\\' && p + 1 < end)
                c = *++p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
            if (n + 1 == sizeof a->ptx)
                return false; /* longer than any template's */
            a->ptx[n++] = c;
        }
        ++p;
    }
    a->ptx[n] = 0;
    return true;
}

/* The operands of one colon-separated section: `"constraint"(expression)`, comma-separated. */
static bool take_operands(asm_stmt *a, const char *p, const char *end)
{
    for (p = skip_space(p); p < end; p = skip_space(p + 1)) {
        const char *stop = next_top(p, end, ',');
        if (*p != '"')
            return false;
        const char *open = strchr(skip_literal(p), '('), *close = open ? closing(open) : NULL;
        if (!close || close > stop || a->operands == MAX_OPERANDS)
            return false;
        a->operand[a->operands++] = copy_trimmed(open + 1, close);
        p = stop;
        if (p >= end)
            break;
    }
    return true;
}

/* %N's expression, or NULL where s is anything but %N. */
static const char *operand_of(const asm_stmt *a, const char *s)
{
    int i, used = 0;
    return sscanf(s, " %%%d%n", &i, &used) == 1 && s[used] == 0 && i >= 0 && i < a->operands ? a->operand[i] : NULL;
}

/* %N's expression, or s itself where it is an integer literal; NULL otherwise. */
static const char *value_of(const asm_stmt *a, const char *s)
{
    long v;
    int used = 0;
    return operand_of(a, s) ? operand_of(a, s) : sscanf(s, " %ld%n", &v, &used) == 1 && s[used] == 0 ? s : NULL;
}

/* Whether sscanf's %n (`used`) reached the instruction's end: nothing of it left unread. */
static bool whole(const char *ins, int used) { return used > 0 && ins[used] == 0; }

static const char *predicate_of(const asm_stmt *a, const char *name)
{
    for (int i = 0; i < a->preds; ++i)
        if (strcmp(a->pred_name[i], name) == 0)
            return a->pred_test[i];
    return NULL;
}

/* Makes the declared predicate `name` stand for the C++ test `test`; false where none is declared. */
static bool set_predicate(asm_stmt *a, const char *name, const char *test)
{
    for (int i = 0; i < a->preds; ++i)
        if (strcmp(a->pred_name[i], name) == 0) {
            snprintf(a->pred_test[i], sizeof a->pred_test[0], "%s", test);
            return true;
        }
    return false;
}

/* The comma-separated fields of s (braces already blanked) into field[], trimmed, at most `most`;
 * their count, or -1 past `most`. The caller frees them. */
static int split_fields(const char *s, char **field, int most)
{
    int count = 0;
    for (const char *p = s;; ++p) {
        const char *comma = strchr(p, ',');
        const char *end = comma ? comma : p + strlen(p);
        if (count == most)
            return -1;
        field[count++] = copy_trimmed(p, end);
        if (!comma)
            return count;
        p = comma;
    }
}

/* wgmma.mma_async m64nNk8 of TF32 into fp32: `{d ..}, a-desc, b-desc, scale-d, imm-scale-a,
 * imm-scale-b` as one call with the sums' addresses; `{d ..}, {a0, a1, a2, a3}, b-desc, ..` (A
 * from registers) with the registers' addresses too. */
static bool translate_wgmma(const asm_stmt *a, const char *ins, cg_buf *out)
{
    unsigned n;
    int used = 0;
    if (sscanf(ins, "wgmma.mma_async.sync.aligned.m64n%uk8.f32.tf32.tf32 %n", &n, &used) != 1 || used == 0 || n < 8 ||
        n > 256 || n % 8)
        return false;
    char *field[MAX_OPERANDS + 8];
    const int count = split_fields(ins + used, field, MAX_OPERANDS + 8), sums = (int)n / 2;
    const int regs = count == sums + 8 ? 4 : 0, b = sums + (regs ? regs : 1); /* A's registers or descriptor */
    bool ok = count == sums + 5 || regs;
    for (int i = 0; ok && i < b + 1; ++i)
        ok = operand_of(a, field[i]) != NULL;
    const char *scale_d = ok ? predicate_of(a, field[b + 1]) : NULL;
    scale_d = scale_d ? scale_d : ok ? value_of(a, field[b + 1]) : NULL;
    ok = ok && scale_d && (!strcmp(field[b + 2], "1") || !strcmp(field[b + 2], "-1")) &&
         (!strcmp(field[b + 3], "1") || !strcmp(field[b + 3], "-1"));
    if (ok) {
        cg_buf_puts(out, " { float *const kcpu_d[] = {");
        for (int i = 0; i < sums; ++i)
            cg_buf_printf(out, "%s&(%s)", i ? ", " : "", operand_of(a, field[i]));
        cg_buf_puts(out, "};");
        if (regs) {
            cg_buf_puts(out, " const unsigned *const kcpu_a[] = {");
            for (int i = 0; i < regs; ++i)
                cg_buf_printf(out, "%s&(%s)", i ? ", " : "", operand_of(a, field[sums + i]));
            cg_buf_puts(out, "};");
        }
        cg_buf_printf(out, " kcpu_wgmma(%uu, (unsigned long long)(%s), %s, (unsigned long long)(%s), (%s) != 0, %s, %s, "
                      "kcpu_d); }", n, regs ? "0" : operand_of(a, field[sums]), regs ? "kcpu_a" : "NULL",
                      operand_of(a, field[b]), scale_d, field[b + 2], field[b + 3]);
    }
    for (int i = 0; i < count; ++i)
        free(field[i]);
    return ok;
}

static bool shared_space(const char *s) { return !strcmp(s, "shared::cta") || !strcmp(s, "shared::cluster"); }

/* mma.sync m16n8k8 of TF32 into fp32: `{d0..d3}, {a0..a3}, {b0, b1}, {c0..c3}` as one call. */
static bool translate_mma(const asm_stmt *a, const char *ins, cg_buf *out)
{
    const char *name = "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 ";
    if (strncmp(ins, name, strlen(name)) != 0)
        return false;
    char *field[16];
    const int count = split_fields(ins + strlen(name), field, 16);
    bool ok = count == 14;
    for (int i = 0; ok && i < 14; ++i)
        ok = operand_of(a, field[i]) != NULL;
    if (ok) {
        cg_buf_puts(out, " kcpu_mma_tf32(");
        for (int i = 0; i < 14; ++i)
            cg_buf_printf(out, "%s%s", i ? ", " : "", operand_of(a, field[i]));
        cg_buf_puts(out, ");");
    }
    for (int i = 0; i < count; ++i)
        free(field[i]);
    return ok;
}

/* sm_90's clusters: the rank and id, mapa, the cluster's barrier, st.async, named barriers. */
static bool translate_cluster(asm_stmt *a, const char *ins, cg_buf *out)
{
    char dst[64], src[64], rank[64], bar[64], value[64], offset[64];
    int used = 0;
    unsigned id, count;
    if (sscanf(ins, "mov.u32 %63[^,], %%%%cluster_ctarank%n", dst, &used) == 1 && whole(ins, used) && operand_of(a, dst)) {
        cg_buf_printf(out, " (%s) = kcpu_cluster_rank();", operand_of(a, dst));
        return true;
    }
    used = 0;
    if (sscanf(ins, "mov.u32 %63[^,], %%%%clusterid.x%n", dst, &used) == 1 && whole(ins, used) && operand_of(a, dst)) {
        cg_buf_printf(out, " (%s) = kcpu_cluster_id_x();", operand_of(a, dst));
        return true;
    }
    used = 0;
    if (sscanf(ins, "mapa.u64 %63[^,], %63[^,], %63s%n", dst, src, rank, &used) == 3 && whole(ins, used) &&
        operand_of(a, dst) && operand_of(a, src) && value_of(a, rank)) {
        cg_buf_printf(out, " (%s) = (decltype(%s))kcpu_mapa((const void *)(%s), (unsigned)(%s));", operand_of(a, dst),
                      operand_of(a, dst), operand_of(a, src), value_of(a, rank));
        return true;
    }
    used = 0;
    if (sscanf(ins, "mapa.shared::cluster.u32 %63[^,], %63[^,], %63s%n", dst, src, rank, &used) == 3 &&
        whole(ins, used) && operand_of(a, dst) && operand_of(a, src) && value_of(a, rank)) {
        cg_buf_printf(out, " (%s) = kcpu_mapa_cluster((unsigned)(%s), (unsigned)(%s));", operand_of(a, dst),
                      operand_of(a, src), value_of(a, rank));
        return true;
    }
    /* the arrival and the wait straight after it, the whole barrier (common.cuh's cluster_sync);
       a split one, work between them, is not run */
    if (!strcmp(ins, "barrier.cluster.arrive.release.aligned") && !a->cluster_arrived)
        return a->cluster_arrived = true;
    if (!strcmp(ins, "barrier.cluster.wait.acquire.aligned") && a->cluster_arrived) {
        a->cluster_arrived = false;
        cg_buf_puts(out, " kcpu_cluster_sync();");
        return true;
    }
    used = 0;
    if (sscanf(ins, "bar.sync %u, %u%n", &id, &count, &used) == 2 && whole(ins, used) && id < 16) {
        cg_buf_printf(out, " kcpu_named_barrier(%uu, %uu);", id, count);
        return true;
    }
    used = 0;
    if (sscanf(ins, "st.async.shared::cluster.mbarrier::complete_tx::bytes.f32 [%63[^+]+%63[^]]], %63[^,], [%63[^]]]%n",
               dst, offset, value, bar, &used) == 4 && whole(ins, used) && operand_of(a, dst) && value_of(a, offset) &&
        operand_of(a, value) && operand_of(a, bar)) {
        cg_buf_printf(out, " kcpu_st_async((unsigned)(%s) + (unsigned)(%s), (%s), (unsigned)(%s));", operand_of(a, dst),
                      value_of(a, offset), operand_of(a, value), operand_of(a, bar));
        return true;
    }
    used = 0;
    char second[64];
    /* (the braces of {b, c} blanked by now, as in every instruction: rewrite_asm) */
    if (sscanf(ins, "st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%63[^]]], %63[^, ] , %63[^, ] , [%63[^]]]%n",
               dst, value, second, bar, &used) == 4 && whole(ins, used) && operand_of(a, dst) && operand_of(a, value) &&
        operand_of(a, second) && operand_of(a, bar)) {
        cg_buf_printf(out, " kcpu_st_async((unsigned)(%s), (%s), (unsigned)(%s)); kcpu_st_async((unsigned)(%s) + 4u, (%s), "
                      "(unsigned)(%s));", operand_of(a, dst), operand_of(a, value), operand_of(a, bar), operand_of(a, dst),
                      operand_of(a, second), operand_of(a, bar));
        return true;
    }
    return translate_mma(a, ins, out);
}

/* sm_90's mbarriers, bulk copies and wgmma groups; their fences are nothing on the CPU. */
static bool translate_sm90(asm_stmt *a, const char *ins, cg_buf *out)
{
    char name[16], bar[64], count[64], src[64], dst[64], size[64], value[2][64];
    int used = 0;
    if (!strcmp(ins, "fence.proxy.async.shared::cta") || !strcmp(ins, "fence.mbarrier_init.release.cluster") ||
        !strcmp(ins, "fence.acq_rel.cluster") || !strcmp(ins, "wgmma.fence.sync.aligned"))
        return true;
    unsigned regs;
    used = 0;
    if ((sscanf(ins, "setmaxnreg.inc.sync.aligned.u32 %u%n", &regs, &used) == 1 ||
         sscanf(ins, "setmaxnreg.dec.sync.aligned.u32 %u%n", &regs, &used) == 1) && whole(ins, used))
        return regs >= 24 && regs <= 256 && regs % 8 == 0; /* PTX's range; the CPU's registers are enough */
    used = 0;
    if (sscanf(ins, "cp.async.bulk.prefetch.L2.global [%63[^]]], %63s%n", src, size, &used) == 2 && whole(ins, used) &&
        operand_of(a, src) && value_of(a, size))
        return true; /* a hint to the L2: nothing on the CPU */
    if (!strcmp(ins, "wgmma.commit_group.sync.aligned")) {
        cg_buf_puts(out, " kcpu_wgmma_commit();");
        return true;
    }
    unsigned newest;
    if (sscanf(ins, "wgmma.wait_group.sync.aligned %u%n", &newest, &used) == 1 && whole(ins, used)) {
        cg_buf_printf(out, " kcpu_wgmma_wait(%uu);", newest);
        return true;
    }
    used = 0;
    if (sscanf(ins, "mbarrier.init.shared::cta.b64 [%63[^]]], %63s%n", bar, count, &used) == 2 && whole(ins, used) &&
        operand_of(a, bar) && value_of(a, count)) {
        cg_buf_printf(out, " kcpu_mbar_init((unsigned)(%s), (unsigned)(%s));", operand_of(a, bar), value_of(a, count));
        return true;
    }
    char space[16]; /* shared::cta or shared::cluster: the runner reads either address */
    used = 0;
    if (sscanf(ins, "mbarrier.arrive.%15[^.].b64 _, [%63[^]]]%n", space, bar, &used) == 2 && whole(ins, used) &&
        shared_space(space) && operand_of(a, bar)) {
        cg_buf_printf(out, " kcpu_mbar_arrive((unsigned)(%s), 0u);", operand_of(a, bar));
        return true;
    }
    used = 0;
    char sem[16];
    if (sscanf(ins, "mbarrier.arrive.%15[^.].cluster.%15[^.].b64 _, [%63[^]]]%n", sem, space, bar, &used) == 3 &&
        whole(ins, used) && (!strcmp(sem, "release") || !strcmp(sem, "relaxed")) && shared_space(space) &&
        operand_of(a, bar)) {
        cg_buf_printf(out, " kcpu_mbar_arrive((unsigned)(%s), 0u);", operand_of(a, bar));
        return true;
    }
    used = 0;
    if (sscanf(ins, "mbarrier.arrive.expect_tx.%15[^.].b64 _, [%63[^]]], %63s%n", space, bar, size, &used) == 3 &&
        whole(ins, used) && shared_space(space) && operand_of(a, bar) && value_of(a, size)) {
        cg_buf_printf(out, " kcpu_mbar_arrive((unsigned)(%s), (unsigned)(%s));", operand_of(a, bar), value_of(a, size));
        return true;
    }
    used = 0;
    const char *const waits[] = {"mbarrier.try_wait.parity.shared::cta.b64 %15[^,], [%63[^]]], %63s%n",
                                 "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 %15[^,], [%63[^]]], %63s%n"};
    bool waits_on = false;
    for (int w = 0; w < 2 && !waits_on; ++w, used = 0)
        waits_on = sscanf(ins, waits[w], name, bar, value[0], &used) == 3 && whole(ins, used);
    if (waits_on && operand_of(a, bar) && value_of(a, value[0])) {
        char test[64];
        snprintf(test, sizeof test, "kcpu_done_%s", name);
        cg_buf_printf(out, " bool %s = kcpu_mbar_try_wait((unsigned)(%s), (unsigned)(%s));", test, operand_of(a, bar),
                      value_of(a, value[0]));
        return set_predicate(a, name, test);
    }
    used = 0;
    if (sscanf(ins, "selp.u32 %63[^,], %63[^,], %63[^,], %15s%n", dst, value[0], value[1], name, &used) == 4 &&
        whole(ins, used) && operand_of(a, dst) && value_of(a, value[0]) && value_of(a, value[1]) && predicate_of(a, name)) {
        cg_buf_printf(out, " (%s) = (%s) ? (unsigned)(%s) : (unsigned)(%s);", operand_of(a, dst), predicate_of(a, name),
                      value_of(a, value[0]), value_of(a, value[1]));
        return true;
    }
    used = 0;
    if (sscanf(ins, "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%63[^]]], [%63[^]]], %63[^,], [%63[^]]]%n",
               dst, src, size, bar, &used) == 4 && whole(ins, used) && operand_of(a, dst) && operand_of(a, src) &&
        value_of(a, size) && operand_of(a, bar)) {
        cg_buf_printf(out, " kcpu_bulk_copy((unsigned)(%s), (const void *)(%s), (unsigned)(%s), (unsigned)(%s));",
                      operand_of(a, dst), operand_of(a, src), value_of(a, size), operand_of(a, bar));
        return true;
    }
    return translate_wgmma(a, ins, out) || translate_cluster(a, ins, out);
}

/* One PTX instruction (no ';', no braces) as C++ for the shim; false: not one the CPU runs. */
static bool translate(asm_stmt *a, const char *ins, cg_buf *out)
{
    char name[16], src[64], dst[64], size_arg[64], space[8];
    unsigned bytes, n;
    int used = 0;
    if (!*ins || strncmp(ins, "griddepcontrol.", 15) == 0)
        return true;
    if (sscanf(ins, ".reg .pred %15s%n", name, &used) == 1 && whole(ins, used) && a->preds < MAX_PREDICATES) {
        snprintf(a->pred_name[a->preds], sizeof a->pred_name[0], "%s", name);
        snprintf(a->pred_test[a->preds++], sizeof a->pred_test[0], "0");
        return true;
    }
    used = 0;
    char compare[4], type[4];
    if (sscanf(ins, "setp.%3[enq].%3[ub32] %15[^,], %63[^,], 0%n", compare, type, name, src, &used) == 4 &&
        whole(ins, used) && operand_of(a, src) && (!strcmp(compare, "eq") || !strcmp(compare, "ne")) &&
        (!strcmp(type, "u32") || !strcmp(type, "b32"))) {
        char test[256];
        snprintf(test, sizeof test, "((%s) %s 0)", operand_of(a, src), compare[0] == 'e' ? "==" : "!=");
        if (set_predicate(a, name, test))
            return true;
    }
    if (strcmp(ins, "cp.async.commit_group") == 0) {
        cg_buf_puts(out, " kcpu_commit();");
        return true;
    }
    used = 0;
    if (sscanf(ins, "cp.async.wait_group %u%n", &n, &used) == 1 && whole(ins, used)) {
        cg_buf_printf(out, " kcpu_wait(%u);", n);
        return true;
    }
    if (strcmp(ins, "cp.async.wait_all") == 0) {
        cg_buf_puts(out, " kcpu_commit(); kcpu_wait(0);");
        return true;
    }
    int fields = sscanf(ins, "cp.async.%7[cag].shared.global [%63[^]]], [%63[^]]], %u%n, %63s%n", space, dst, src,
                        &bytes, &used, size_arg, &used);
    if (fields >= 4 && whole(ins, used) && (!strcmp(space, "ca") || !strcmp(space, "cg")) && operand_of(a, dst) &&
        operand_of(a, src)) {
        const char *pred = fields == 5 ? predicate_of(a, size_arg) : NULL, *size = fields == 5 ? operand_of(a, size_arg) : NULL;
        if (fields == 5 && !pred && !size)
            return false;
        cg_buf_printf(out, " kcpu_copy_async((unsigned)(%s), (const void *)(%s), %uu, ", operand_of(a, dst),
                      operand_of(a, src), bytes);
        if (pred) /* the ignore-src predicate: zeros, nothing read */
            cg_buf_printf(out, "(%s) ? 0u : %uu);", pred, bytes);
        else if (size)
            cg_buf_printf(out, "(unsigned)(%s));", size);
        else
            cg_buf_printf(out, "%uu);", bytes);
        return true;
    }
    return translate_sm90(a, ins, out);
}

/* The asm statement whose parenthesis opens at p (its ';' at or after *end) as C++. */
static bool rewrite_asm(const char *open, const char **end, cg_buf *out)
{
    const char *close = closing(open), *semi = close ? skip_space(close + 1) : NULL;
    if (!close || *semi != ';')
        return false;
    asm_stmt a = {.operands = 0};
    const char *part = open + 1, *stop = next_top(part, close, ':');
    bool ok = join_literals(&a, part, stop);
    for (int section = 1; ok && stop < close && section <= 3; ++section) {
        part = stop + 1;
        stop = next_top(part, close, ':');
        if (section < 3) /* outputs, then inputs: %0 .. in that order; clobbers matter not */
            ok = take_operands(&a, part, stop);
    }
    cg_buf_puts(out, "{");
    /* strtok_r: kcpu_prepare rewrites a program's kernels on several threads at once, and
       strtok's one hidden position, shared by them, mangled an instruction now and then (a 3-D
       fft's cp.async: the flaky non-finite outputs of sessions 66-69) */
    char *position = NULL;
    for (char *ins = strtok_r(ok ? a.ptx : (char[]){""}, ";", &position); ok && ins;
         ins = strtok_r(NULL, ";", &position)) {
        char *s = ins;
        for (char *c = s; *c; ++c)
            if (*c == '{' || *c == '}' || *c == '\n' || *c == '\t')
                *c = ' ';
        char *t = copy_trimmed(s, s + strlen(s));
        if (t && !translate(&a, t, out)) {
            cg_buf_puts(out, " kcpu_unsupported(\"asm: ");
            for (const char *c = t; *c; ++c)
                cg_buf_printf(out, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
            cg_buf_puts(out, "\");");
        }
        free(t);
    }
    if (a.cluster_arrived)
        cg_buf_puts(out, " kcpu_unsupported(\"asm: barrier.cluster.arrive without its wait in the statement\");");
    cg_buf_puts(out, " }");
    for (int i = 0; i < a.operands; ++i)
        free(a.operand[i]);
    *end = semi + 1;
    return ok;
}

/* ---- __shared__ declarations ---- */

/* `extern __shared__ [__align__(N)] T name[];` from p (after `__shared__`) to its ';'. */
static bool rewrite_dynamic(const char *p, const char **end, cg_buf *out)
{
    const char *semi = strchr(p, ';');
    char *decl = semi ? copy_trimmed(p, semi) : NULL;
    if (!decl)
        return false;
    char *s = decl;
    if (strncmp(s, "__align__(", 10) == 0)
        s = strchr(s, ')') + 1;
    char *bracket = strstr(s, "[]"), *name = bracket;
    while (name && name > s && ident_char(name[-1]))
        --name;
    bool ok = bracket && name > s;
    if (ok) {
        char *type = copy_trimmed(s, name);
        cg_buf_printf(out, "%s *const %.*s = (%s *)kcpu_dynamic_shared();", type, (int)(bracket - name), name, type);
        free(type);
    }
    free(decl);
    *end = semi + 1;
    return ok;
}

/* One declarator of a __shared__ declaration: `name[dims]` after `type`. */
static void shared_declarator(const char *type, const char *p, const char *stop, cg_buf *out)
{
    const char *name = skip_space(p), *dims = name;
    while (dims < stop && ident_char(*dims))
        ++dims;
    char *array = copy_trimmed(dims, stop);
    const int len = (int)(dims - name);
    cg_buf_printf(out, "typedef %s kcpu_shared_%.*s_t%s; ", type, len, name, array ? array : "");
    cg_buf_printf(out, "static const size_t kcpu_at_%.*s = kcpu_static_shared(sizeof(kcpu_shared_%.*s_t)); ", len, name,
                  len, name);
    cg_buf_printf(out, "kcpu_shared_%.*s_t &%.*s = *(kcpu_shared_%.*s_t *)(kcpu_self->arena + kcpu_at_%.*s);", len, name,
                  len, name, len, name, len, name);
    free(array);
}

/* `__shared__ [__align__(N)] T a[..], b[..];` from p (after `__shared__`) to its ';'. */
static bool rewrite_static(const char *p, const char **end, cg_buf *out)
{
    const char *semi = next_top(p, p + strlen(p), ';');
    if (!*semi)
        return false;
    p = skip_space(p);
    if (strncmp(p, "__align__(", 10) == 0) /* the arena aligns every array to 128 bytes */
        p = skip_space(closing(p + 9) + 1);
    const char *first = next_top(p, semi, ','), *name = memchr(p, '[', (size_t)(first - p));
    if (!name)
        name = first;
    while (name > p && isspace((unsigned char)name[-1]))
        --name;
    while (name > p && ident_char(name[-1]))
        --name;
    if (name == p)
        return false;
    char *type = copy_trimmed(p, name);
    for (const char *d = name; d < semi; d = next_top(d, semi, ',') + 1)
        shared_declarator(type, d, next_top(d, semi, ','), out);
    free(type);
    *end = semi + 1;
    return true;
}

/* ---- the source ---- */

/* Copies a comment or literal at p whole; returns past it, or p where none starts there. */
static const char *pass_through(const char *p, cg_buf *out)
{
    const char *end = p;
    if (p[0] == '/' && p[1] == '/')
        end = p + strcspn(p, "\n");
    else if (p[0] == '/' && p[1] == '*')
        end = strstr(p + 2, "*/") ? strstr(p + 2, "*/") + 2 : p + strlen(p);
    else if (*p == '"' || *p == '\'')
        end = skip_literal(p);
    cg_buf_append(out, p, (size_t)(end - p));
    return end;
}

char *kcpu_rewrite(const char *source)
{
    cg_buf out = {0};
    const char *p = source;
    bool ok = true;
    while (ok && *p) {
        const char *q = pass_through(p, &out);
        if (q != p) {
            p = q;
            continue;
        }
        if (!ident_char(*p) || (p > source && ident_char(p[-1]))) {
            cg_buf_append(&out, p++, 1);
            continue;
        }
        size_t len = 0;
        while (ident_char(p[len]))
            ++len;
        const char *after = skip_space(p + len);
        if (len == 3 && strncmp(p, "asm", 3) == 0) {
            if (strncmp(after, "volatile", 8) == 0)
                after = skip_space(after + 8);
            ok = *after == '(' && rewrite_asm(after, &p, &out);
        } else if (len == 6 && strncmp(p, "extern", 6) == 0 && strncmp(after, "__shared__", 10) == 0) {
            ok = rewrite_dynamic(after + 10, &p, &out);
        } else if (len == 10 && strncmp(p, "__shared__", 10) == 0) {
            ok = rewrite_static(p + 10, &p, &out);
        } else {
            cg_buf_append(&out, p, len);
            p += len;
        }
    }
    if (ok)
        return cg_buf_take(&out);
    cg_buf_free(&out);
    cg_fail(CONVGEN_ERROR_NOT_SUPPORTED, "kernel_cpu: cannot read the declaration or asm statement at '%.60s'", p);
    return NULL;
}
