#include "fft_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Beyond this many lane-dependent twiddles per lane, one table load each beats computing
 * them. Measured on the H100 (bench/NOTES.md): with sincospif (some 40 instructions with its
 * range reduction) n = 16 and 32 ran at 66% and 55% of copy bandwidth at 128 MiB, with the
 * table at 89% and 83%; n = 8 went from 85% to 92%. So every size with twiddles uses the table,
 * unless a kernel that is a chain of latencies asks for sincospif (fft_plan_use_sincos). */
#define SINCOS_MAX_TWIDDLES 0

bool fft_size_supported(int n)
{
    if (n < FFT_MIN_N || n > FFT_MAX_N)
        return false;
    static const int primes[] = {2, 3, 5, 7};
    for (int i = 0; i < 4; ++i)
        while (n % primes[i] == 0)
            n /= primes[i];
    return n == 1;
}

bool fft_power_of_two(int n) { return n > 0 && (n & (n - 1)) == 0; }

static int largest_divisor_at_most(int n, int limit)
{
    for (int d = limit; d > 1; --d)
        if (n % d == 0)
            return d;
    return 1;
}

/* Lanes per transform: as many as divide n, up to a warp, keeping at least 2 registers per
 * lane (4 from n = 32). Lane stages cost two shuffles and a select per element, and instruction
 * issue binds the small sizes: on the H100 at 128 MiB (bench/NOTES.md), one element per lane
 * ran 2-D R2C at 1.52x cuFFT for n = 16 and 1.62x for n = 32, 8 lanes of 2 and 4 registers at
 * 1.63x and 1.89x; 1-D n = 32 went from 1.21x to 1.54x. */
int fft_min_registers(int n) { return n >= 32 ? 4 : 2; }

static int lanes_for(int n)
{
    int regs = fft_min_registers(n), most = n / regs < FFT_WARP ? n / regs : FFT_WARP;
    return largest_divisor_at_most(n, most);
}

/* Register stages cost no data movement, so they take the largest radices (8, then 4, 2,
 * and the odd primes); lane stages cost one shuffle per input but one, so they take primes. */
static int register_radices(int regs, int *out)
{
    int count = 0;
    static const int odd[] = {7, 5, 3};
    for (int i = 0; i < 3; ++i)
        while (regs % odd[i] == 0)
            out[count++] = odd[i], regs /= odd[i];
    static const int pow2[] = {8, 4, 2};
    for (int i = 0; i < 3; ++i)
        while (regs % pow2[i] == 0)
            out[count++] = pow2[i], regs /= pow2[i];
    return count;
}

static int lane_radices(int lanes, int *out)
{
    int count = 0;
    static const int primes[] = {7, 5, 3, 2};
    for (int i = 0; i < 4; ++i)
        while (lanes % primes[i] == 0)
            out[count++] = primes[i], lanes /= primes[i];
    return count;
}

/* How many twiddle factors one lane needs, all of them lane-dependent: a register stage of
 * radix r multiplies (r-1)/r of the lane's values, a lane stage every value. */
static int count_lane_twiddles(const fft_plan *p)
{
    int count = 0;
    for (int s = 0; s < p->stage_count; ++s) {
        const fft_stage *st = &p->stages[s];
        if (st->span == 1)
            continue;
        count += st->place == FFT_IN_REGISTERS ? p->regs / st->radix * (st->radix - 1) : p->regs;
    }
    return count;
}

/* How many twiddle loads (or sincospif calls) one lane makes: the kernels compute one factor per
 * register butterfly group or lane stage and make its powers by multiplication. */
static int count_twiddle_loads(const fft_plan *p)
{
    int count = 0;
    if (p->phase_count) { /* one factor per stage and value of the register digits below it */
        for (int f = 0; f < p->phase_count; ++f)
            for (int s = p->phases[f].first; s < p->phases[f].first + p->phases[f].count; ++s)
                count += p->stages[s].span > 1 ? fft_plan_register_stride(p, f, s) : 0;
        return count;
    }
    for (int s = 0; s < p->stage_count; ++s) {
        const fft_stage *st = &p->stages[s];
        if (st->span > 1)
            count += st->place == FFT_IN_REGISTERS ? p->regs / st->radix : 1;
    }
    return count;
}

static void sincos_reason(fft_plan *p, const char *why)
{
    snprintf(p->twiddle_reason, sizeof p->twiddle_reason, "sincospif: %d lane-dependent factors per lane from %d "
             "sincospif calls%s", p->lane_twiddles, count_twiddle_loads(p), why);
}

static void choose_twiddles(fft_plan *p)
{
    p->lane_twiddles = count_lane_twiddles(p);
    int loads = count_twiddle_loads(p);
    bool table = p->lane_twiddles > SINCOS_MAX_TWIDDLES;
    for (int s = 0; s < p->stage_count; ++s)
        p->stages[s].twiddle = p->stages[s].span == 1 ? FFT_TWIDDLE_NONE : table ? FFT_TWIDDLE_TABLE : FFT_TWIDDLE_SINCOS;
    if (p->lane_twiddles == 0)
        snprintf(p->twiddle_reason, sizeof p->twiddle_reason, "a single butterfly: no twiddle factors");
    else if (table)
        snprintf(p->twiddle_reason, sizeof p->twiddle_reason,
                 "table: %d lane-dependent factors per lane from %d cached loads (powers by multiplication); "
                 "the table measured faster than sincospif on the H100 for every size", p->lane_twiddles, loads);
    else
        sincos_reason(p, "");
}

void fft_plan_use_sincos(fft_plan *p, const char *why)
{
    if (p->lane_twiddles == 0)
        return;
    for (int s = 0; s < p->stage_count; ++s)
        if (p->stages[s].twiddle == FFT_TWIDDLE_TABLE)
            p->stages[s].twiddle = FFT_TWIDDLE_SINCOS;
    char for_why[96];
    snprintf(for_why, sizeof for_why, ", for %s", why);
    sincos_reason(p, for_why);
}

bool fft_plan_make(int n, bool natural, fft_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    if (!fft_size_supported(n)) {
        snprintf(err, errlen, "n = %d must be 2^a 3^b 5^c 7^d between %d and %d", n, FFT_MIN_N, FFT_MAX_N);
        return false;
    }
    p->n = n;
    p->natural = natural;
    p->lanes = lanes_for(n);
    p->regs = n / p->lanes;
    p->per_warp = FFT_WARP / p->lanes;
    int radices[FFT_MAX_STAGES];
    int reg_count = register_radices(p->regs, radices);
    int count = reg_count + lane_radices(p->lanes, radices + reg_count);
    p->stage_count = count;
    for (int s = count - 1, span = 1; s >= 0; span *= radices[s--]) {
        p->stages[s].radix = radices[s];
        p->stages[s].span = span;
        p->stages[s].place = s < reg_count ? FFT_IN_REGISTERS : FFT_ACROSS_LANES;
    }
    choose_twiddles(p);
    return true;
}

int fft_float2_wavefronts(const int64_t addr[FFT_WARP])
{
    int total = 0;
    for (int h = 0; h < FFT_WARP; h += FFT_WARP / 2) {
        int worst = 0;
        for (int i = h; i < h + FFT_WARP / 2; ++i) {
            int distinct = 0;
            for (int j = h; j < h + FFT_WARP / 2 && addr[i] >= 0; ++j) {
                bool first = addr[j] >= 0 && addr[j] % 16 == addr[i] % 16;
                for (int e = h; e < j && first; ++e)
                    first = addr[e] != addr[j];
                distinct += first;
            }
            worst = distinct > worst ? distinct : worst;
        }
        total += worst;
    }
    return total;
}

int fft_plan_register_stride(const fft_plan *p, int phase, int s)
{
    int stride = 1;
    for (int u = s + 1; u < p->stage_count; ++u) /* registers hold the non-lane digits, the lowest span first */
        if (!(p->phases[phase].lane_digits >> u & 1u))
            stride *= p->stages[u].radix;
    return stride;
}

int fft_plan_scratch_at(const fft_plan *p, int q) { return q + (p->pad_shift ? q >> p->pad_shift : 0); }

int fft_plan_position(const fft_plan *p, int phase, int lane, int reg)
{
    if (p->phase_count == 0)
        return reg * p->lanes + lane;
    unsigned lane_digits = p->phases[phase].lane_digits;
    int pos = 0;
    for (int s = p->stage_count - 1; s >= 0; --s) { /* the lowest span first */
        int *from = lane_digits >> s & 1u ? &lane : &reg;
        pos += *from % p->stages[s].radix * p->stages[s].span;
        *from /= p->stages[s].radix;
    }
    return pos;
}

/* Exchanged plans. The cost model counts instructions per value and lane: a butterfly of radix
 * 2, 4 or 8 (factored: 2, 4 and 7 per value), a twiddle (a complex multiplication for (r-1)/r
 * of the values, one more making the next power for (r-2)/r), an exchange (a store and a load
 * per value, and 4 per register set for its two __syncwarp and their waits: an estimate). */
static double exchanged_stage_cost(int radix, int span)
{
    double butterfly = radix == 8 ? 7.0 : radix == 4 ? 4.0 : 2.0;
    return butterfly + (span > 1 ? 4.0 * (2 * radix - 3) / radix : 0.0);
}

typedef struct exchange_search {
    int regs, lanes;
    fft_plan trial, best;
    double best_cost;
} exchange_search;

/* The digits among `candidates` whose radices multiply to `lanes`, preferring the lowest spans
 * (consecutive lanes then hold neighbouring positions); 0 if none. */
static unsigned lane_digits_among(const fft_plan *p, unsigned candidates, int lanes)
{
    int count = p->stage_count;
    for (unsigned m = 1; m < 1u << count; ++m) {
        unsigned digits = 0;
        int product = 1;
        for (int b = 0; b < count; ++b) /* bit b of m: stage count - 1 - b, the lowest span first */
            if (m >> b & 1u)
                digits |= 1u << (count - 1 - b), product *= p->stages[count - 1 - b].radix;
        if ((digits & ~candidates) == 0 && product == lanes)
            return digits;
    }
    return 0;
}

/* Phases from stage `first` on: each a run of stages whose radices fit a lane's registers, with
 * lane digits among the other stages. The first phase's lane digits are the stages of span below
 * lanes, so that register r of lane l holds position r * lanes + l (the loads' mapping). */
static void search_phases(exchange_search *x, int first, double cost)
{
    fft_plan *p = &x->trial;
    if (first == p->stage_count) {
        if (p->phase_count >= 2 && cost < x->best_cost - 1e-9)
            x->best = *p, x->best_cost = cost;
        return;
    }
    int product = 1;
    double phase_cost = 0.0;
    for (int end = first; end < p->stage_count; ++end) {
        product *= p->stages[end].radix;
        phase_cost += exchanged_stage_cost(p->stages[end].radix, p->stages[end].span);
        if (product > x->regs)
            break;
        unsigned own = ((1u << (end + 1)) - 1) & ~((1u << first) - 1), lane_digits = 0;
        if (first == 0) {
            int lane_product = 1;
            for (int s = 0; s < p->stage_count; ++s)
                if (p->stages[s].span < x->lanes)
                    lane_digits |= 1u << s, lane_product *= p->stages[s].radix;
            if ((lane_digits & own) || lane_product != x->lanes) /* no digit may straddle lanes and registers */
                continue;
        } else {
            lane_digits = lane_digits_among(p, ((1u << p->stage_count) - 1) & ~own, x->lanes);
            if (!lane_digits)
                continue;
        }
        fft_phase *ph = &p->phases[p->phase_count++];
        *ph = (fft_phase){first, end - first + 1, lane_digits};
        search_phases(x, end + 1, cost + phase_cost + (first > 0 ? 2.0 + 4.0 / x->regs : 0.0));
        --p->phase_count;
    }
}

/* Radix sequences of 8, 4 and 2 with product n (most significant digit first), each searched. */
static void search_radices(exchange_search *x, int rest)
{
    fft_plan *p = &x->trial;
    if (rest == 1) {
        for (int s = p->stage_count - 1, span = 1; s >= 0; span *= p->stages[s--].radix)
            p->stages[s].span = span, p->stages[s].place = FFT_IN_REGISTERS;
        p->phase_count = 0;
        search_phases(x, 0, 0.0);
        return;
    }
    static const int radices[] = {8, 4, 2};
    for (int i = 0; i < 3; ++i)
        if (rest % radices[i] == 0 && p->stage_count < FFT_MAX_STAGES) {
            p->stages[p->stage_count++].radix = radices[i];
            search_radices(x, rest / radices[i]);
            --p->stage_count;
        }
}

/* The scratch's padding: position q at q + (q >> shift), the shift with the fewest wavefronts
 * over all exchanges' stores and loads (0: no padding, the ties' choice). */
static void choose_exchange_padding(fft_plan *p)
{
    static const int shifts[] = {0, 5, 4, 3, 2};
    int best = -1, best_shift = 0;
    for (int i = 0; i < 5; ++i) {
        p->pad_shift = shifts[i];
        int stride = fft_plan_scratch_at(p, p->n), total = 0;
        for (int f = 0; f < p->phase_count; ++f)
            for (int r = 0; r < p->regs; ++r) {
                int64_t addr[FFT_WARP];
                for (int lane = 0; lane < FFT_WARP; ++lane) {
                    int t = lane / p->lanes, q = fft_plan_position(p, f, lane % p->lanes, r);
                    addr[lane] = t >= p->per_warp ? -1 : (int64_t)t * stride + fft_plan_scratch_at(p, q);
                }
                total += fft_float2_wavefronts(addr) * (f == 0 || f == p->phase_count - 1 ? 1 : 2);
            }
        if (best < 0 || total < best)
            best = total, best_shift = shifts[i];
    }
    p->pad_shift = best_shift;
    p->xstride = fft_plan_scratch_at(p, p->n);
}

bool fft_plan_make_exchanged(int n, int regs, fft_plan *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    int lanes = regs > 0 ? n / regs : 0;
    if (n < 16 || n > FFT_MAX_N || !fft_power_of_two(n) || regs < 2 || !fft_power_of_two(regs) || lanes < 2 ||
        lanes > FFT_WARP) {
        snprintf(err, errlen, "an exchanged plan needs n a power of two in 16..%d and 2..n/2 registers (a power of two) "
                 "for at most 32 lanes: n = %d, %d registers", FFT_MAX_N, n, regs);
        return false;
    }
    exchange_search x = {.regs = regs, .lanes = lanes, .best_cost = 1e30};
    x.trial.n = n;
    search_radices(&x, n);
    if (x.best_cost >= 1e30) {
        snprintf(err, errlen, "no exchanged plan of n = %d with %d registers per lane", n, regs);
        return false;
    }
    *p = x.best;
    p->natural = true;
    p->lanes = lanes;
    p->regs = regs;
    p->per_warp = FFT_WARP / lanes;
    choose_twiddles(p);
    choose_exchange_padding(p);
    return true;
}

int fft_plan_output_position(const fft_plan *p, int k)
{
    /* X[k] with k = e_0 + r_0 (e_1 + r_1 (e_2 + ...)) ends where digit s (weight span_s) is e_s. */
    int pos = 0;
    for (int s = 0; s < p->stage_count; ++s) {
        pos += k % p->stages[s].radix * p->stages[s].span;
        k /= p->stages[s].radix;
    }
    return pos;
}

static double complex root(int sign, long num, long den)
{
    /* exp(sign * 2 pi i num / den), with num reduced first so the angle stays exact. */
    double a = 2.0 * M_PI * (double)(num % den) / (double)den;
    return cos(a) + sign * I * sin(a);
}

/* One decimation-in-frequency stage: butterfly, then twiddle. */
static void dif_stage(const fft_stage *st, int n, double complex *a)
{
    int r = st->radix, w = st->span, block = r * w;
    double complex x[8];
    for (int base = 0; base < n; base += block)
        for (int j = 0; j < w; ++j) {
            for (int d = 0; d < r; ++d)
                x[d] = a[base + d * w + j];
            for (int k = 0; k < r; ++k) {
                double complex y = 0;
                for (int d = 0; d < r; ++d)
                    y += x[d] * root(-1, (long)d * k, r);
                a[base + k * w + j] = y * root(-1, (long)k * j, block);
            }
        }
}

/* One decimation-in-time stage, the conjugate transpose of dif_stage: twiddle, then butterfly. */
static void dit_stage(const fft_stage *st, int n, double complex *a)
{
    int r = st->radix, w = st->span, block = r * w;
    double complex x[8];
    for (int base = 0; base < n; base += block)
        for (int j = 0; j < w; ++j) {
            for (int d = 0; d < r; ++d)
                x[d] = a[base + d * w + j] * root(+1, (long)d * j, block);
            for (int k = 0; k < r; ++k) {
                double complex y = 0;
                for (int d = 0; d < r; ++d)
                    y += x[d] * root(+1, (long)d * k, r);
                a[base + k * w + j] = y;
            }
        }
}

void fft_plan_eval(const fft_plan *p, int sign, const double complex *in, double complex *out)
{
    double complex a[FFT_MAX_N];
    int n = p->n;
    if (sign < 0) {
        memcpy(a, in, sizeof *a * (size_t)n);
        for (int s = 0; s < p->stage_count; ++s)
            dif_stage(&p->stages[s], n, a);
        for (int i = 0; i < n; ++i) /* natural plans undo the digit reversal */
            out[i] = a[p->natural ? fft_plan_output_position(p, i) : i];
        return;
    }
    for (int i = 0; i < n; ++i)
        a[p->natural ? fft_plan_output_position(p, i) : i] = in[i];
    for (int s = p->stage_count - 1; s >= 0; --s)
        dit_stage(&p->stages[s], n, a);
    memcpy(out, a, sizeof *a * (size_t)n);
}

void fft_plan_describe(const fft_plan *p, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int s = 0; s < p->stage_count && used < size; ++s)
        used += (size_t)snprintf(buf + used, size - used, "%s%d", s ? "x" : "", p->stages[s].radix);
    if (used < size)
        used += (size_t)snprintf(buf + used, size - used, " (%d registers x %d lanes, %d transform%s per warp)",
                                 p->regs, p->lanes, p->per_warp, p->per_warp > 1 ? "s" : "");
    if (p->phase_count && used < size)
        snprintf(buf + used, size - used, " in %d phases of registers, exchanged through shared memory",
                 p->phase_count);
}
