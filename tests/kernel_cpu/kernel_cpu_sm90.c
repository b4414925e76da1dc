/* sm_90's mbarriers, bulk copies, st.async and wgmma on the CPU (kernel_cpu_sm90.h). One block,
 * or one cluster of blocks, runs at a time, so their state is this file's, reset before each.
 *
 * An mbarrier's 8 bytes of shared memory hold a mark and its index in `bars`, where its state is
 * (the GPU's encoding is its own): so a wait on one never set up, or set up and then overwritten
 * by the kernel's data, fails, naming it. Addresses are shared::cta (the thread's own block) or
 * shared::cluster (kernel_cpu_thread.h: a rank above the arena's bytes).
 *
 * wgmma's operands are read as sm_90 does with a descriptor of no swizzle: an operand of R rows
 * (A's M, B's N) by 8 of the sum in core matrices of 8 rows x 16 bytes (4 TF32 of the sum a row),
 * the next 4 of the sum LBO bytes on, the next 8 rows SBO bytes on; each value truncated to TF32 as
 * the tensor cores read it (their low 13 bits ignored), so a 3xTF32 kernel that left out a lo half
 * is off by ~1e-3 here too. Thread s of the warpgroup holds rows 16 (s / 32) + (s % 32) / 4 and
 * 8 on, columns 8 j + 2 (s % 4) and 1 on: d[4 j + 2 h + c] is row + 8 h, column + c. */
#include "kernel_cpu_sm90.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MARK = 0x6d626172u /* "mbar" */, WARPGROUP = 128, MAX_WARPGROUPS = KCPU_MAX_CLUSTER * 1024 / WARPGROUP,
       MAX_COUNT = (1 << 20) - 1 };

typedef struct mbar {
    char *word;   /* in its block's arena */
    char *arena;
    unsigned at;  /* its address as the kernel gave it, for messages */
    unsigned count, pending, phase;
    int64_t tx; /* bytes expected and not yet landed, this phase */
} mbar;

/* A bulk copy (from global memory) or an st.async (4 bytes, `bits`) not yet landed. */
typedef struct bulk {
    char *to;
    const char *from; /* NULL: st.async's bits */
    unsigned bytes, bar;
    uint32_t bits;
} bulk;

/* One wgmma of a warpgroup: its (group, seq) in each thread's issue order, its operands, and the
 * sums' addresses of the threads that have issued it. */
typedef struct wg_op {
    char *arena; /* its block's shared memory, where its operands lie */
    unsigned group, seq, n, arrived;
    uint64_t due; /* reversed: the sweep after the one in which a wait first found it issued */
    uint64_t a, b;
    bool scale_d, a_in_registers;
    int scale_a, scale_b;
    float **d;                /* WARPGROUP x n / 2 */
    const unsigned **a_regs;  /* WARPGROUP x 4, where a_in_registers */
} wg_op;

static const kcpu_sm90_host *host;
static mbar *bars;
static unsigned bar_count, bar_cap;
static bulk *bulks; /* in flight (in order: landed when their mbarrier's phase can complete) */
static unsigned bulk_count, bulk_cap;
static wg_op **ops[MAX_WARPGROUPS]; /* each warpgroup's (block rank, warpgroup) issued and not yet run, in issue order */
static unsigned op_count[MAX_WARPGROUPS], op_cap[MAX_WARPGROUPS];

static void failf(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void failf(const char *format, ...)
{
    char what[200];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    host->fail(what);
}

/* Room for one more of `size` bytes in *list; fails the block where memory is out. */
static void *grow(void *list, unsigned count, unsigned *cap, size_t size)
{
    if (count < *cap)
        return list;
    unsigned more = *cap ? 2 * *cap : 16;
    void *grown = realloc(list, more * size);
    if (!grown)
        host->fail("out of memory for sm_90's operations in flight");
    *cap = more;
    return grown;
}

void kcpu_sm90_begin_block(const kcpu_sm90_host *h)
{
    host = h;
    bar_count = bulk_count = 0;
    for (int w = 0; w < MAX_WARPGROUPS; ++w) {
        for (unsigned i = 0; i < op_count[w]; ++i)
            free(ops[w][i]->d), free(ops[w][i]);
        op_count[w] = 0;
    }
}

const char *kcpu_sm90_end_block(void)
{
    if (bulk_count)
        return "the block ended with bulk copies or st.async in flight";
    for (int w = 0; w < MAX_WARPGROUPS; ++w)
        if (op_count[w])
            return "the block ended with wgmma groups that no wait_group covered";
    return NULL;
}

/* The `bytes` of shared memory at a shared::cta or shared::cluster address, in their block's
 * arena (*arena); *offset, their place in it. */
static char *shared_at(unsigned addr, unsigned bytes, unsigned *offset, char **arena)
{
    const kcpu_thread *t = host->self();
    const unsigned rank = addr >> KCPU_RANK_SHIFT, at = addr & ((1u << KCPU_RANK_SHIFT) - 1u);
    if (rank > t->cluster_size || (uint64_t)at + bytes > (uint64_t)KCPU_ARENA_BYTES)
        failf("shared address %#x: outside the cluster's shared memory", addr);
    *offset = at;
    *arena = rank ? host->arena_of(rank - 1u) : t->arena;
    return *arena + at;
}

/* ---- mbarriers ---- */

static uint32_t *word_at(unsigned at, char **arena)
{
    unsigned offset;
    char *p = shared_at(at, 8, &offset, arena);
    if (offset % 8)
        failf("an mbarrier at shared address %#x: not 8-byte aligned", at);
    return (uint32_t *)p;
}

static mbar *bar_at(unsigned at)
{
    char *arena;
    const uint32_t *w = word_at(at, &arena);
    if (w[0] != MARK || w[1] >= bar_count || bars[w[1]].word != (const char *)w)
        failf("the mbarrier at shared address %#x was never set up, or the kernel wrote over it", at);
    return &bars[w[1]];
}

static void land(const bulk *c)
{
    if (c->from)
        memcpy(c->to, c->from, c->bytes);
    else
        memcpy(c->to, &c->bits, 4);
}

/* Completes b's phase where nothing it waits for is left. In order, its copies land only for a
 * wait (`waiting`), the latest moment a GPU may land them: an arrival after the copies were issued
 * leaves them in flight, so that a read with no wait before it sees the poison. */
static void settle(mbar *b, bool waiting)
{
    if (b->pending)
        return;
    if (b->tx < 0) /* (copies landed at issue) */
        failf("bulk copies bring more bytes than the mbarrier at shared address %#x expects (%u more)", b->at,
              (unsigned)-b->tx);
    if (b->tx > 0 && !host->reversed && waiting) {
        const unsigned index = (unsigned)(b - bars);
        int64_t issued = 0;
        for (unsigned i = 0; i < bulk_count; ++i)
            issued += bulks[i].bar == index ? bulks[i].bytes : 0;
        if (issued > b->tx)
            failf("bulk copies bring more bytes than the mbarrier at shared address %#x expects (%u more)", b->at,
                  (unsigned)(issued - b->tx));
        if (issued < b->tx)
            return; /* more copies to come */
        unsigned kept = 0;
        for (unsigned i = 0; i < bulk_count; ++i)
            if (bulks[i].bar == index)
                land(&bulks[i]);
            else
                bulks[kept++] = bulks[i];
        bulk_count = kept;
        b->tx = 0;
    }
    if (b->tx == 0) {
        b->phase ^= 1u;
        b->pending = b->count;
        host->progress();
    }
}

void kcpu_sm90_mbar_init(unsigned at, unsigned count)
{
    if (count < 1 || count > MAX_COUNT)
        failf("mbarrier.init at shared address %#x with a count of %u", at, count);
    char *arena;
    uint32_t *w = word_at(at, &arena);
    unsigned index = bar_count;
    if (w[0] == MARK && w[1] < bar_count && bars[w[1]].word == (const char *)w)
        index = w[1]; /* set up again */
    for (unsigned i = 0; i < bulk_count; ++i)
        if (bulks[i].bar == index)
            failf("mbarrier.init at shared address %#x while bulk copies count on it", at);
    if (index == bar_count) {
        bars = grow(bars, bar_count, &bar_cap, sizeof *bars);
        ++bar_count;
    }
    bars[index] = (mbar){.word = (char *)w, .arena = arena, .at = at, .count = count, .pending = count};
    w[0] = MARK, w[1] = index;
    host->progress();
}

void kcpu_sm90_mbar_arrive(unsigned at, unsigned tx_bytes)
{
    mbar *b = bar_at(at);
    if (b->pending == 0)
        failf("an arrival on the mbarrier at shared address %#x past its count of %u", at, b->count);
    b->tx += tx_bytes;
    --b->pending;
    host->progress();
    settle(b, false);
}

bool kcpu_sm90_mbar_try_wait(unsigned at, unsigned parity)
{
    mbar *b = bar_at(at);
    settle(b, true);
    if ((b->phase & 1u) != (parity & 1u))
        return true;
    host->spin();
    return false;
}

/* A bulk copy or an st.async into `arena` issued: landed now (reversed) or when a wait on its
 * mbarrier needs it. */
static void issue(bulk c, const char *arena, unsigned bar)
{
    mbar *b = bar_at(bar);
    if (b->arena != arena)
        failf("a bulk copy or st.async to shared address %#x counted on the mbarrier at %#x, of another block",
              (unsigned)(c.to - arena), bar);
    c.bar = (unsigned)(b - bars);
    host->progress();
    if (host->reversed) {
        land(&c);
        b->tx -= c.bytes;
        settle(b, false);
        return;
    }
    bulks = grow(bulks, bulk_count, &bulk_cap, sizeof *bulks);
    bulks[bulk_count++] = c;
}

void kcpu_sm90_bulk_copy(unsigned to, const void *from, unsigned bytes, unsigned bar)
{
    unsigned offset;
    char *arena;
    char *p = shared_at(to, bytes, &offset, &arena);
    if (bytes == 0 || bytes % 16 || offset % 16 || (uintptr_t)from % 16)
        failf("a bulk copy of %u bytes to shared address %#x: sizes and addresses are multiples of 16", bytes, to);
    if (offset < KCPU_DYNAMIC_BYTES && (uint64_t)offset + bytes > host->dynamic_bytes)
        failf("a bulk copy of %u bytes to shared address %#x: past the block's dynamic shared memory", bytes, to);
    issue((bulk){p, (const char *)from, bytes, 0, 0}, arena, bar);
}

void kcpu_sm90_st_async(unsigned to, uint32_t bits, unsigned bar)
{
    unsigned offset;
    char *arena;
    char *p = shared_at(to, 4, &offset, &arena);
    if (offset % 4 || (offset < KCPU_DYNAMIC_BYTES && offset + 4 > host->dynamic_bytes))
        failf("st.async to shared address %#x: not 4-byte aligned, or past the block's dynamic shared memory", to);
    issue((bulk){p, NULL, 4, 0, bits}, arena, bar);
}

/* ---- wgmma ---- */

/* The `rows` x 8 operand at `desc` in `arena` into v[row][k], each value truncated to TF32 (as the
 * tensor cores read it) and scaled. */
static void decode(const char *arena, uint64_t desc, unsigned rows, int scale, float v[][8])
{
    const unsigned start = (unsigned)(desc & 0x3fff) << 4, lbo = (unsigned)(desc >> 16 & 0x3fff) << 4,
                   sbo = (unsigned)(desc >> 32 & 0x3fff) << 4;
    if (desc >> 62 || (desc >> 49 & 7))
        failf("wgmma: a swizzled operand or one with a base offset (descriptor bits %u, %u): not emulated",
              (unsigned)(desc >> 62), (unsigned)(desc >> 49 & 7));
    const uint64_t last = start + (uint64_t)(rows / 8 - 1) * sbo + lbo + 7 * 16 + 3 * 4 + 4;
    if (last > host->dynamic_bytes)
        failf("wgmma: an operand at shared byte %u reads past the launch's %u bytes of dynamic shared memory", start,
              host->dynamic_bytes);
    for (unsigned row = 0; row < rows; ++row)
        for (unsigned k = 0; k < 8; ++k) {
            uint32_t bits;
            memcpy(&bits, arena + start + row / 8 * sbo + k / 4 * lbo + row % 8 * 16 + k % 4 * 4, 4);
            bits &= 0xffffe000u;
            float x;
            memcpy(&x, &bits, 4);
            v[row][k] = (float)scale * x;
        }
}

/* A from the warpgroup's registers (kcpu_sm90_wgmma), truncated to TF32 and scaled. */
static void gather_a(const wg_op *op, float a[][8])
{
    for (unsigned s = 0; s < WARPGROUP; ++s) {
        const unsigned row = 16 * (s / 32) + s % 32 / 4, col = s % 4;
        for (unsigned h = 0; h < 4; ++h) {
            uint32_t bits = *op->a_regs[4 * s + h] & 0xffffe000u;
            float x;
            memcpy(&x, &bits, 4);
            a[row + 8 * (h & 1)][col + 4 * (h >> 1)] = (float)op->scale_a * x;
        }
    }
}

static void run_op(const wg_op *op)
{
    float a[64][8], b[256][8];
    if (op->a_in_registers)
        gather_a(op, a);
    else
        decode(op->arena, op->a, 64, op->scale_a, a);
    decode(op->arena, op->b, op->n, op->scale_b, b);
    for (unsigned s = 0; s < WARPGROUP; ++s) {
        float *const *d = op->d + s * (op->n / 2);
        const unsigned row0 = 16 * (s / 32) + s % 32 / 4, col0 = 2 * (s % 4);
        for (unsigned j = 0; j < op->n / 8; ++j)
            for (unsigned h = 0; h < 2; ++h)
                for (unsigned c = 0; c < 2; ++c) {
                    const unsigned row = row0 + 8 * h, col = 8 * j + col0 + c;
                    float sum = 0.0f;
                    for (unsigned k = 0; k < 8; ++k)
                        sum = fmaf(a[row][k], b[col][k], sum);
                    float *to = d[4 * j + 2 * h + c];
                    *to = op->scale_d ? *to + sum : sum;
                }
    }
    host->progress();
}

static unsigned warpgroup_of(const kcpu_thread *t, unsigned *slot)
{
    const unsigned tid = 32 * t->warp + t->lane;
    *slot = tid % WARPGROUP;
    return t->rank * (1024 / WARPGROUP) + tid / WARPGROUP;
}

static void drop_first(unsigned wg)
{
    free(ops[wg][0]->d), free(ops[wg][0]->a_regs), free(ops[wg][0]);
    memmove(ops[wg], ops[wg] + 1, (op_count[wg] - 1) * sizeof *ops[wg]);
    --op_count[wg];
}

/* In order: the warpgroup's oldest wgmma run as soon as every thread has issued them. */
static void run_complete(unsigned wg)
{
    while (op_count[wg] && ops[wg][0]->arrived == WARPGROUP) {
        run_op(ops[wg][0]);
        drop_first(wg);
    }
}

void kcpu_sm90_wgmma(unsigned n, uint64_t a, const unsigned *const *a_regs, uint64_t b, bool scale_d, int scale_a,
                     int scale_b, float *const *d)
{
    kcpu_thread *t = host->self();
    unsigned slot, wg = warpgroup_of(t, &slot);
    if (n < 8 || n > 256 || n % 8)
        failf("wgmma m64n%uk8: N is 8 to 256 in steps of 8", n);
    wg_op *op = NULL;
    for (unsigned i = 0; i < op_count[wg] && !op; ++i)
        if (ops[wg][i]->group == t->wgmma_committed && ops[wg][i]->seq == t->wgmma_issued)
            op = ops[wg][i];
    if (!op) {
        ops[wg] = grow(ops[wg], op_count[wg], &op_cap[wg], sizeof *ops[wg]);
        op = calloc(1, sizeof *op);
        float **sums = op ? calloc((size_t)WARPGROUP * (n / 2), sizeof *sums) : NULL;
        const unsigned **regs = a_regs ? calloc((size_t)WARPGROUP * 4, sizeof *regs) : NULL;
        if (!sums || (a_regs && !regs))
            host->fail("out of memory for a wgmma in flight");
        *op = (wg_op){t->arena, t->wgmma_committed, t->wgmma_issued, n, 0, UINT64_MAX, a_regs ? 0 : a, b, scale_d,
                      a_regs != NULL, scale_a, scale_b, sums, regs};
        ops[wg][op_count[wg]++] = op;
    } else if (op->n != n || op->a_in_registers != (a_regs != NULL) || (!a_regs && op->a != a) || op->b != b ||
               op->scale_d != scale_d || op->scale_a != scale_a || op->scale_b != scale_b) {
        failf("wgmma %u of group %u: the warpgroup's threads give it different operands", op->seq, op->group);
    }
    if (op->d[slot * (n / 2)])
        failf("wgmma %u of group %u issued twice by one thread", op->seq, op->group);
    memcpy(op->d + slot * (n / 2), d, (n / 2) * sizeof *d);
    if (a_regs)
        memcpy(op->a_regs + slot * 4, a_regs, 4 * sizeof *a_regs);
    ++op->arrived;
    ++t->wgmma_issued;
    host->progress();
    if (!host->reversed)
        run_complete(wg);
}

void kcpu_sm90_wgmma_commit(void)
{
    kcpu_thread *t = host->self();
    ++t->wgmma_committed;
    t->wgmma_issued = 0;
    host->progress();
}

void kcpu_sm90_wgmma_wait(unsigned newest)
{
    kcpu_thread *t = host->self();
    unsigned slot, wg = warpgroup_of(t, &slot);
    /* the oldest first: a group's sums build on the group's before */
    while (op_count[wg] && ops[wg][0]->group + newest < t->wgmma_committed) {
        wg_op *op = ops[wg][0];
        if (op->arrived == WARPGROUP && host->reversed && op->due == UINT64_MAX) {
            op->due = host->sweeps() + 1;
            host->progress(); /* the sweep is not a deadlock: the next one runs it */
        }
        if (op->arrived < WARPGROUP || (host->reversed && host->sweeps() < op->due)) {
            host->spin(); /* until the warpgroup's other threads have issued it; reversed, until every
                             fiber has moved once more (a copy over its operands lands first) */
            continue;
        }
        run_op(op);
        drop_first(wg);
    }
}
