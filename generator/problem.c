/* Validation of a convgen_conv_desc into a cg_problem: defaults filled in, output sizes
 * computed by cuDNN's rule, and every size a kernel will index checked to fit. */
#include "problem.h"

#include <stdio.h>

#include "util.h"

/* Emitted kernels index with 32-bit values (magic.h divides below 2^31), so no single
 * dimension may pass INT32_MAX; products of dimensions are 64-bit and checked separately. */
#define DIM_LIMIT_RULE "must be <= 2147483647 (kernels index with 32-bit values)"

/* "n = 0 must be >= 1" for a scalar field (index < 0), "kernel[1] = 0 must be >= 1" otherwise. */
static convgen_status bad_field(const char *name, int index, int64_t value, const char *rule)
{
    if (index < 0)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s = %lld %s", name, (long long)value, rule);
    return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s[%d] = %lld %s", name, index, (long long)value, rule);
}

/* Sizes (batch, channels, extents): a tensor has at least one element along every axis. */
static convgen_status check_size(const char *name, int index, int64_t value)
{
    if (value < 1)
        return bad_field(name, index, value, "must be >= 1");
    if (value > INT32_MAX)
        return bad_field(name, index, value, DIM_LIMIT_RULE);
    return CONVGEN_SUCCESS;
}

static convgen_status check_pad(const char *name, int index, int64_t value)
{
    if (value < 0)
        return bad_field(name, index, value, "must be >= 0");
    if (value > INT32_MAX)
        return bad_field(name, index, value, DIM_LIMIT_RULE);
    return CONVGEN_SUCCESS;
}

/* Strides and dilations: 0 means 1 so that a designated initializer may leave them out. */
static convgen_status check_step(const char *name, int index, int64_t value, int64_t *out)
{
    if (value < 0)
        return bad_field(name, index, value, "must be >= 1 (0 means 1)");
    if (value > INT32_MAX)
        return bad_field(name, index, value, DIM_LIMIT_RULE);
    *out = value == 0 ? 1 : value;
    return CONVGEN_SUCCESS;
}

static convgen_status check_scalars(const convgen_conv_desc *desc)
{
    if (desc->rank < 1 || desc->rank > CONVGEN_MAX_RANK)
        return bad_field("rank", -1, desc->rank, "must be 1, 2 or 3");
    convgen_status st;
    if ((st = check_size("n", -1, desc->n)) || (st = check_size("c", -1, desc->c)) ||
        (st = check_size("k", -1, desc->k)))
        return st;
    /* Read as an int: a caller may have stored any value in the enum. */
    int mode = (int)desc->mode;
    if (mode != CONVGEN_CROSS_CORRELATION && mode != CONVGEN_CONVOLUTION)
        return bad_field("mode", -1, mode,
                         "must be CONVGEN_CROSS_CORRELATION (0) or CONVGEN_CONVOLUTION (1)");
    if (desc->epilogue & ~(unsigned)CG_EPILOGUE_ALL)
        return bad_field("epilogue", -1, desc->epilogue,
                         "has unknown bits: CONVGEN_EPILOGUE_BIAS (1) and CONVGEN_EPILOGUE_RELU (2) are all");
    return CONVGEN_SUCCESS;
}

/* Copies spatial dimension i into p after checking each of its fields on its own. */
static convgen_status check_dimension(const convgen_conv_desc *desc, int i, cg_problem *p)
{
    convgen_status st;
    if ((st = check_size("in", i, desc->in[i])) || (st = check_size("kernel", i, desc->kernel[i])) ||
        (st = check_pad("pad_before", i, desc->pad_before[i])) ||
        (st = check_pad("pad_after", i, desc->pad_after[i])) ||
        (st = check_step("stride", i, desc->stride[i], &p->stride[i])) ||
        (st = check_step("dilation", i, desc->dilation[i], &p->dilation[i])))
        return st;
    p->in[i] = desc->in[i];
    p->kernel[i] = desc->kernel[i];
    p->pad_before[i] = desc->pad_before[i];
    p->pad_after[i] = desc->pad_after[i];
    return CONVGEN_SUCCESS;
}

/* cuDNN's output size. Every term is below 2^31 after check_dimension, so the sums and the
 * product dilation * (kernel - 1) stay far from 64-bit overflow. */
static convgen_status compute_output(cg_problem *p, int i)
{
    int64_t padded = p->in[i] + p->pad_before[i] + p->pad_after[i];
    int64_t span = p->dilation[i] * (p->kernel[i] - 1) + 1;
    if (span > padded)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE,
                       "kernel[%d] = %lld with dilation %lld spans %lld, more than the padded "
                       "in[%d] = %lld + %lld + %lld = %lld",
                       i, (long long)p->kernel[i], (long long)p->dilation[i], (long long)span, i,
                       (long long)p->in[i], (long long)p->pad_before[i], (long long)p->pad_after[i],
                       (long long)padded);
    p->out[i] = (padded - span) / p->stride[i] + 1;
    /* Padding alone can push the output past what a kernel indexes. */
    if (p->out[i] > INT32_MAX)
        return bad_field("out", i, p->out[i], DIM_LIMIT_RULE "; reduce the padding or raise the stride");
    return CONVGEN_SUCCESS;
}

/* a * b * prod(spatial[0..rank)) * sizeof(float), or false if it passes INT64_MAX. */
static bool tensor_bytes(int64_t a, int64_t b, const int64_t *spatial, int rank, int64_t *bytes)
{
    int64_t v;
    if (!cg_mul64(a, b, &v))
        return false;
    for (int i = 0; i < rank; ++i)
        if (!cg_mul64(v, spatial[i], &v))
            return false;
    return cg_mul64(v, (int64_t)sizeof(float), bytes);
}

/* Bytes rather than elements are checked so that every size_t the runtime derives fits too. */
static convgen_status check_tensor_sizes(const cg_problem *p)
{
    const struct { const char *name, *shape; int64_t a, b; const int64_t *spatial; } tensors[] = {
        {"x", "[n][c][in...]", p->n, p->c, p->in},
        {"w", "[k][c][kernel...]", p->k, p->c, p->kernel},
        {"y", "[n][k][out...]", p->n, p->k, p->out},
    };
    for (size_t t = 0; t < sizeof tensors / sizeof tensors[0]; ++t) {
        int64_t bytes;
        if (!tensor_bytes(tensors[t].a, tensors[t].b, tensors[t].spatial, p->rank, &bytes))
            return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "%s %s has 2^63 bytes or more", tensors[t].name,
                           tensors[t].shape);
    }
    return CONVGEN_SUCCESS;
}

convgen_status cg_epilogue_check(const cg_problem *p, convgen_pass pass)
{
    if (!p->epilogue || pass == CONVGEN_FPROP)
        return CONVGEN_SUCCESS;
    return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "epilogue = %u: a bias and ReLU are fprop's; clear the desc's epilogue "
                   "for %s", p->epilogue, convgen_pass_name(pass));
}

convgen_status cg_problem_init(cg_problem *p, const convgen_conv_desc *desc)
{
    if (!desc)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "desc is NULL");
    convgen_status st = check_scalars(desc);
    if (st)
        return st;
    /* Built aside so that *p is only written for a valid problem. */
    cg_problem q = {.rank = desc->rank, .n = desc->n, .c = desc->c, .k = desc->k,
                    .flip = desc->mode == CONVGEN_CONVOLUTION, .epilogue = desc->epilogue};
    for (int i = 0; i < CONVGEN_MAX_RANK; ++i)
        q.in[i] = q.kernel[i] = q.out[i] = q.stride[i] = q.dilation[i] = 1;
    for (int i = 0; i < q.rank; ++i)
        if ((st = check_dimension(desc, i, &q)) || (st = compute_output(&q, i)))
            return st;
    if ((st = check_tensor_sizes(&q)))
        return st;
    *p = q;
    return CONVGEN_SUCCESS;
}

convgen_status convgen_output_size(const convgen_conv_desc *desc, int64_t out[CONVGEN_MAX_RANK])
{
    if (!out)
        return cg_fail(CONVGEN_ERROR_INVALID_VALUE, "out is NULL");
    cg_problem p;
    convgen_status st = cg_problem_init(&p, desc);
    if (st)
        return st;
    for (int i = 0; i < p.rank; ++i)
        out[i] = p.out[i];
    return CONVGEN_SUCCESS;
}

/* ---- counts ---- */

static int64_t product(const int64_t *v, int rank)
{
    int64_t r = 1;
    for (int i = 0; i < rank; ++i)
        r *= v[i];
    return r;
}

int64_t cg_problem_in_pixels(const cg_problem *p) { return product(p->in, p->rank); }
int64_t cg_problem_kernel_pixels(const cg_problem *p) { return product(p->kernel, p->rank); }
int64_t cg_problem_out_pixels(const cg_problem *p) { return product(p->out, p->rank); }

int64_t cg_problem_x_elems(const cg_problem *p) { return p->n * p->c * cg_problem_in_pixels(p); }
int64_t cg_problem_w_elems(const cg_problem *p) { return p->k * p->c * cg_problem_kernel_pixels(p); }
int64_t cg_problem_y_elems(const cg_problem *p) { return p->n * p->k * cg_problem_out_pixels(p); }

/* The order of convgen_execute's operands: dy has y's shape, dx x's and dw w's. */
void cg_problem_operand_elems(const cg_problem *p, convgen_pass pass, int64_t elems[3])
{
    int64_t x = cg_problem_x_elems(p), w = cg_problem_w_elems(p), y = cg_problem_y_elems(p);
    switch (pass) {
    case CONVGEN_FPROP: elems[0] = x; elems[1] = w; elems[2] = y; break;
    case CONVGEN_BPROP: elems[0] = y; elems[1] = w; elems[2] = x; break;
    case CONVGEN_ACCGRAD: elems[0] = x; elems[1] = y; elems[2] = w; break;
    }
}

/* All three passes do the same multiply-adds, so one count serves them all. */
double cg_problem_reduction_length(const cg_problem *p, convgen_pass pass)
{
    double kp = (double)cg_problem_kernel_pixels(p), op = (double)cg_problem_out_pixels(p);
    return pass == CONVGEN_FPROP ? p->c * kp : pass == CONVGEN_BPROP ? p->k * kp : p->n * op;
}

double cg_problem_flops(const cg_problem *p)
{
    return 2.0 * (double)p->n * (double)p->c * (double)p->k * (double)cg_problem_kernel_pixels(p) *
           (double)cg_problem_out_pixels(p);
}

const char *convgen_pass_name(convgen_pass pass)
{
    switch (pass) {
    case CONVGEN_FPROP: return "fprop";
    case CONVGEN_BPROP: return "bprop";
    case CONVGEN_ACCGRAD: return "accgrad";
    }
    return "unknown";
}

void cg_dims_text(const int64_t *v, int rank, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < rank && used < size; ++i)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", i ? "x" : "", (long long)v[i]);
}

static bool all_equal(const int64_t *v, int rank, int64_t x)
{
    for (int i = 0; i < rank; ++i)
        if (v[i] != x)
            return false;
    return true;
}

void cg_problem_describe(const cg_problem *p, char *buf, size_t size)
{
    char in[64], ker[64], text[64];
    cg_dims_text(p->in, p->rank, in, sizeof in);
    cg_dims_text(p->kernel, p->rank, ker, sizeof ker);
    cg_buf b = {0};
    cg_buf_printf(&b, "%lld %lld %lld %s %s %lld %lld", (long long)p->n, (long long)p->c,
                  (long long)p->k, in, ker, (long long)p->pad_before[0], (long long)p->stride[0]);
    /* What a layer line cannot say, as the CLI's options. */
    const struct { const char *option; const int64_t *v; int64_t plain; } extra[] = {
        {"--pad-before", p->pad_before, p->pad_before[0]}, {"--pad-after", p->pad_after, p->pad_before[0]},
        {"--stride", p->stride, p->stride[0]}, {"--dilation", p->dilation, 1},
    };
    for (size_t i = 0; i < sizeof extra / sizeof extra[0]; ++i) {
        if (all_equal(extra[i].v, p->rank, extra[i].plain))
            continue;
        cg_dims_text(extra[i].v, p->rank, text, sizeof text);
        cg_buf_printf(&b, " %s %s", extra[i].option, text);
    }
    if (p->flip)
        cg_buf_puts(&b, " --convolution");
    if (p->epilogue & CG_EPILOGUE_BIAS)
        cg_buf_puts(&b, " --bias");
    if (p->epilogue & CG_EPILOGUE_RELU)
        cg_buf_puts(&b, " --relu");
    snprintf(buf, size, "%s", b.data ? b.data : "");
    cg_buf_free(&b);
}

/* Every field that decides a program, the spatial ones up to rank (as plan keys and wisdom
 * have always compared them). */
static void conv_hash(const void *problem, cg_key *key)
{
    const cg_problem *p = problem;
    const int64_t head[6] = {p->rank, p->n, p->c, p->k, p->flip, p->epilogue};
    cg_key_put_dims(key, head, 6);
    const int64_t *dims[7] = {p->in, p->kernel, p->out, p->pad_before, p->pad_after, p->stride, p->dilation};
    for (int i = 0; i < 7; ++i)
        cg_key_put_dims(key, dims[i], p->rank);
}

static void conv_describe(const void *problem, char *buf, size_t size) { cg_problem_describe(problem, buf, size); }

const cg_problem_kind cg_conv_kind = {"conv", conv_hash, conv_describe};
