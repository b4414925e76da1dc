/* Networks for sliding-window inference (generator/net/net.c, net_eval.c), all on the CPU: the
 * network file's parser names each bad line; ZNNi's four networks (bench/nets/) parse with their
 * fields of view; a patch's arithmetic (input, fragments, dense output); the fragments' voxels
 * land on every dense position exactly once; and the max-pooling-fragment evaluation equals the
 * dense definition voxel for voxel, which equals the trained network applied at each location
 * alone, on odd sizes, several poolings and anisotropic windows. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/mman.h>

#include "net/net.h"
#include "net_exec.h"
#include "wisdom.h"

static void expect_error(const char *text, const char *words)
{
    cg_net net;
    convgen_status s = cg_net_parse(text, &net);
    if (s != CONVGEN_ERROR_INVALID_VALUE || !strstr(convgen_last_error(), words))
        fail_msg("\"%s\": expected \"%s\", got status %d: %s", text, words, (int)s, convgen_last_error());
}

static void test_bad_network_files_name_the_line(void **state)
{
    (void)state;
    expect_error("conv 8 3x3x3\n", "line 1: the first line must be 'input C'");
    expect_error("input 0\nconv 8 3x3x3\n", "line 1: 'input C' takes C of 1..65536");
    expect_error("input 1\nconv 8 3x3x3\ninput 2\n", "line 3: a second 'input C' line");
    expect_error("input 1\nconv 0 3x3x3\n", "line 2: K = '0' must be 1..65536");
    expect_error("input 1\nconv 8 3x3x\n", "line 2: '3x3x' is no size");
    expect_error("input 1\nconv 8 3x0x3\n", "line 2: '3x0x3' is no size");
    expect_error("input 1\nconv 8 3x3x3x3\n", "line 2: '3x3x3x3' is no size");
    expect_error("input 1\nconv 8 3x3x3 tanh\n", "line 2: conv takes K, a kernel");
    expect_error("input 1\npool 2x2x2 relu\n", "line 2: pool takes a window");
    expect_error("input 1\n\n# a comment\nconv 8 3x3\nconv 8 3x3x3\n", "line 5: a rank 3 size in a rank 2 network");
    expect_error("input 1\nconv 8 3x3x3\npool 5x5x5\nconv 8 3x3x3\n", "line 3: a pooling window of more than 64");
    expect_error("input 1\nconv 8 3x3x3\npool 1x1x16\nconv 8 3x3x3\n", "line 3: a pooling window of 16 along a dimension");
    expect_error("input 1\ninput 2\nconv 8 3x3x3\n", "line 2: a second 'input C' line");
    expect_error("input 1\nconv 8 3x3x3\nnorm\n", "line 3: 'norm' is not input, conv or pool");
    expect_error("input 1\nconv 8 3x3x3\npool 2x2x2\n", "a network ends with a convolution");
    expect_error("input 1\n", "the network has no layers");
    expect_error("# nothing\n", "no 'input C' line");
    expect_error("input 1\nconv 8 3x3x3 relu extra\n", "line 2: more than 4 words");
    expect_error(NULL, "text is NULL");
}

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    static char buf[4096];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

/* Table III of ZNNi: the layers, and the fields of view by the sum over layers. */
static void test_znni_networks_parse(void **state)
{
    (void)state;
    const struct { const char *name; int layers, pools; int64_t fov, in_m1; } nets[] = {
        {"n337", 10, 3, 85, 92}, {"n537", 10, 3, 163, 170}, {"n726", 8, 2, 117, 120}, {"n926", 8, 2, 155, 158},
    };
    for (size_t i = 0; i < sizeof nets / sizeof nets[0]; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/bench/nets/%s.net", CONVGEN_SOURCE_DIR, nets[i].name);
        cg_net net;
        if (cg_net_parse(read_text(path), &net) != CONVGEN_SUCCESS)
            fail_msg("%s: %s", path, convgen_last_error());
        assert_int_equal(net.rank, 3);
        assert_int_equal(net.c, 1);
        assert_int_equal(net.count, nets[i].layers);
        assert_int_equal(net.layers[net.count - 1].k, 3);
        int64_t fov[3];
        cg_net_field_of_view(&net, fov);
        for (int d = 0; d < 3; ++d)
            assert_int_equal(fov[d], nets[i].fov);
        /* the smallest patch: one voxel a final fragment, 2^pools a side of dense output */
        cg_net_patch patch;
        const int64_t m[3] = {1, 1, 1};
        assert_int_equal(cg_net_patch_of(&net, m, &patch), CONVGEN_SUCCESS);
        assert_int_equal(patch.in[0], nets[i].in_m1);
        assert_int_equal(patch.out[0], (int64_t)1 << nets[i].pools);
        assert_int_equal(patch.in[0] - fov[0] + 1, patch.out[0]);
        assert_int_equal(patch.shape[net.count].batch, (int64_t)1 << (3 * nets[i].pools));
        assert_int_equal(patch.shape[net.count].ext[0], 1);
        /* weights: the first layer's see one map, the rest 80; the last has 3 */
        const cg_net_layer *first = &net.layers[0], *last = &net.layers[net.count - 1];
        assert_int_equal(cg_net_weight_count(&net, 0), 80 * first->size[0] * first->size[1] * first->size[2]);
        assert_int_equal(cg_net_weight_count(&net, 1), 0); /* a pooling */
        assert_int_equal(cg_net_weight_count(&net, net.count - 1), 3 * 80 * last->size[0] * last->size[1] * last->size[2]);
        assert_int_equal(cg_net_weight_count(&net, net.count), 0);
        double macs = 0; /* the patch's multiply-adds, layer by layer */
        for (int l = 0; l < net.count; ++l) {
            const cg_net_tensor *o = &patch.shape[l + 1];
            macs += net.layers[l].kind == CG_NET_CONV ? (double)o->batch * (double)(o->ext[0] * o->ext[1] * o->ext[2]) *
                                                          (double)cg_net_weight_count(&net, l)
                                                      : 0;
        }
        assert_true(fabs(cg_net_patch_macs(&net, &patch) - macs) <= 1e-9 * macs);
    }
}

/* Small networks for the evaluations: rank 3 with two poolings (one anisotropic), rank 3 with a
 * 3x1x2 window, rank 2 with three poolings. */
static const char *const small_nets[] = {
    "input 2\nconv 3 2x3x2 relu\npool 2x2x2\nconv 2 3x2x2 relu\npool 2x2x1\nconv 2 2x2x3\n",
    "input 1\nconv 2 3x3x3 relu\npool 3x1x2\nconv 3 2x2x2 relu\n",
    "input 2\nconv 3 3x3 relu\npool 2x2\nconv 2 2x3\npool 3x2\nconv 3 2x2 relu\npool 2x2\nconv 1 2x2\n",
};

/* Networks of more maps, for the host mode's chunks: one begins with a pooling. */
static const char *const host_nets[] = {
    "input 2\nconv 5 2x3x2 relu\npool 2x2x2\nconv 5 3x2x2 relu\npool 2x2x1\nconv 3 2x2x3\n",
    "input 4\npool 2x2x2\nconv 3 3x3x3 relu\npool 2x1x2\nconv 2 2x2x2\n",
    "input 8\npool 2x2x2\npool 2x2x2\nconv 4 1x1x1\n",
    "input 5\nconv 4 1x1x1\nconv 13 2x2x2 relu\nconv 3 2x2x2\n", /* no pooling: nothing to interleave */
    "input 2\nconv 3 3x3x3 relu\npool 3x2x2\nconv 4 3x2x2 relu\npool 1x2x2\nconv 2 2x2x3\n", /* depth windows 3, 1 */
};

static void test_patches_and_dense_positions(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof small_nets / sizeof small_nets[0]; ++i) {
        cg_net net;
        assert_int_equal(cg_net_parse(small_nets[i], &net), CONVGEN_SUCCESS);
        int64_t fov[3];
        cg_net_field_of_view(&net, fov);
        const int64_t m[3] = {net.rank == 2 ? 1 : 2, 3, 1};
        cg_net_patch patch;
        assert_int_equal(cg_net_patch_of(&net, m, &patch), CONVGEN_SUCCESS);
        const cg_net_tensor *last = &patch.shape[net.count];
        int64_t dense = patch.out[0] * patch.out[1] * patch.out[2];
        for (int d = 0; d < 3; ++d) {
            assert_int_equal(patch.out[d], patch.in[d] - fov[d] + 1);
            assert_int_equal(last->ext[d], m[d]);
        }
        assert_int_equal(last->batch * m[0] * m[1] * m[2], dense);
        /* every (entry, voxel) of the final fragments to a distinct dense position */
        char *seen = calloc((size_t)dense, 1);
        for (int64_t b = 0; b < last->batch; ++b)
            for (int64_t z = 0; z < m[0]; ++z)
                for (int64_t y = 0; y < m[1]; ++y)
                    for (int64_t x = 0; x < m[2]; ++x) {
                        const int64_t j[3] = {z, y, x};
                        int64_t pos[3];
                        cg_net_dense_position(&net, b, j, pos);
                        for (int d = 0; d < 3; ++d)
                            assert_true(pos[d] >= 0 && pos[d] < patch.out[d]);
                        int64_t at = (pos[0] * patch.out[1] + pos[1]) * patch.out[2] + pos[2];
                        assert_int_equal(seen[at], 0);
                        seen[at] = 1;
                    }
        free(seen);
    }
    cg_net net;
    cg_net_patch patch;
    assert_int_equal(cg_net_parse(small_nets[2], &net), CONVGEN_SUCCESS);
    const int64_t deep[3] = {2, 1, 1}, huge[3] = {1, (int64_t)1 << 30, 1};
    assert_int_equal(cg_net_patch_of(&net, deep, &patch), CONVGEN_ERROR_INVALID_VALUE); /* rank 2: depth 1 */
    assert_non_null(strstr(convgen_last_error(), "m[0] = 2 must be 1"));
    assert_int_equal(cg_net_patch_of(&net, huge, &patch), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "passes 2^31"));
    /* 30 poolings of 2x2x2 keep every side under 2^31 but multiply the batch by 2^90 */
    char text[1024] = "input 1\n";
    for (int i = 0; i < 30; ++i)
        strcat(text, "pool 2x2x2\n");
    strcat(text, "conv 1 1x1x1\n");
    const int64_t one[3] = {1, 1, 1};
    assert_int_equal(cg_net_parse(text, &net), CONVGEN_SUCCESS);
    assert_int_equal(cg_net_patch_of(&net, one, &patch), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "more than 2^62 elements"));
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static double uniform(void)
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double *random_array(int64_t n)
{
    double *a = malloc(sizeof *a * (size_t)n);
    for (int64_t i = 0; i < n; ++i)
        a[i] = uniform();
    return a;
}

/* Random weights for every convolution; the arrays are freed by free_weights. */
static void random_weights(const cg_net *net, cg_net_weights *wt)
{
    memset(wt, 0, sizeof *wt);
    int64_t c = net->c;
    for (int i = 0; i < net->count; ++i) {
        const cg_net_layer *L = &net->layers[i];
        if (L->kind != CG_NET_CONV)
            continue;
        wt->w[i] = random_array(L->k * c * L->size[0] * L->size[1] * L->size[2]);
        wt->bias[i] = random_array(L->k);
        c = L->k;
    }
}

static void free_weights(cg_net_weights *wt)
{
    for (int i = 0; i < CG_NET_MAX_LAYERS; ++i)
        free((void *)wt->w[i]), free((void *)wt->bias[i]);
}

/* One patch: the fragments' dense output against the dense definition (the same sums in the same
 * order: equal to the last bit), and a few voxels against the trained network on their field of
 * view alone. */
static void check_net(const cg_net *net, const int64_t m[3], int64_t *voxels)
{
    cg_net_weights wt;
    random_weights(net, &wt);
    cg_net_patch patch;
    assert_int_equal(cg_net_patch_of(net, m, &patch), CONVGEN_SUCCESS);
    int64_t in = patch.in[0] * patch.in[1] * patch.in[2], out = patch.out[0] * patch.out[1] * patch.out[2];
    int64_t k = patch.shape[net->count].c, fov[3];
    cg_net_field_of_view(net, fov);
    double *x = random_array(net->c * in), *dense = malloc(sizeof *dense * (size_t)(k * out));
    double *frag = malloc(sizeof *frag * (size_t)(k * out));
    for (int64_t i = 0; i < k * out; ++i)
        frag[i] = NAN; /* every voxel must be written */
    assert_int_equal(cg_net_eval_dense(net, &wt, x, patch.in, dense), CONVGEN_SUCCESS);
    assert_int_equal(cg_net_eval_fragments(net, &wt, &patch, x, frag), CONVGEN_SUCCESS);
    for (int64_t i = 0; i < k * out; ++i)
        if (!(frag[i] == dense[i]))
            fail_msg("output %lld: fragments %.17g, dense %.17g", (long long)i, frag[i], dense[i]);
    int64_t window = fov[0] * fov[1] * fov[2];
    double *crop = malloc(sizeof *crop * (size_t)(net->c * window)), y[64];
    for (int64_t v = 0; v < out; v += out / 5 + 1) { /* five voxels, the first included */
        int64_t pz = v / (patch.out[1] * patch.out[2]), py = v / patch.out[2] % patch.out[1], px = v % patch.out[2];
        for (int64_t c = 0; c < net->c; ++c)
            for (int64_t z = 0; z < fov[0]; ++z)
                for (int64_t r = 0; r < fov[1]; ++r)
                    for (int64_t w = 0; w < fov[2]; ++w)
                        crop[((c * fov[0] + z) * fov[1] + r) * fov[2] + w] =
                            x[((c * patch.in[0] + pz + z) * patch.in[1] + py + r) * patch.in[2] + px + w];
        assert_int_equal(cg_net_eval_window(net, &wt, crop, y), CONVGEN_SUCCESS);
        for (int64_t c = 0; c < k; ++c)
            if (fabs(y[c] - dense[c * out + v]) > 1e-12 * (1 + fabs(y[c])))
                fail_msg("voxel %lld map %lld: alone %.17g, dense %.17g", (long long)v, (long long)c, y[c],
                         dense[c * out + v]);
    }
    *voxels += k * out;
    free(crop);
    free(x), free(dense), free(frag);
    free_weights(&wt);
}

/* The host mode's cut by depth (cg_net_slab_rows): the network run on the input rows a chunk's
 * rows see gives those rows of the final fragments, so the dense rows S q0 .. S (q0 + dq) of the
 * whole patch's output, to the last bit; the full depth reads the whole patch. */
static void check_slabs(const cg_net *net, const int64_t m[3])
{
    cg_net_weights wt;
    random_weights(net, &wt);
    cg_net_patch patch, part;
    assert_int_equal(cg_net_patch_of(net, m, &patch), CONVGEN_SUCCESS);
    cg_net_segment whole = {.first = 0, .end = net->count};
    int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1];
    cg_net_slab_rows(net, &whole, 0, m[0], from, rows);
    for (int t = 0; t <= net->count; ++t)
        if (from[t] != 0 || rows[t] != patch.shape[t].ext[0])
            fail_msg("tensor %d: the full depth reads rows %lld..+%lld of %lld", t, (long long)from[t],
                     (long long)rows[t], (long long)patch.shape[t].ext[0]);
    int64_t plane = patch.in[1] * patch.in[2], k = patch.shape[net->count].c;
    int64_t dense = patch.out[0] * patch.out[1] * patch.out[2], S = patch.stride[0];
    double *x = random_array(net->c * patch.in[0] * plane), *y = malloc(sizeof *y * (size_t)(k * dense));
    assert_int_equal(cg_net_eval_fragments(net, &wt, &patch, x, y), CONVGEN_SUCCESS);
    for (int64_t dq = 1; dq <= m[0]; ++dq)
        for (int64_t q0 = 0; q0 < m[0]; q0 += dq) {
            int64_t qn = m[0] - q0 < dq ? m[0] - q0 : dq;
            cg_net_slab_rows(net, &whole, q0, qn, from, rows);
            assert_true(from[0] >= 0 && from[0] + rows[0] <= patch.in[0]);
            const int64_t mq[3] = {qn, m[1], m[2]};
            assert_int_equal(cg_net_patch_of(net, mq, &part), CONVGEN_SUCCESS);
            assert_int_equal(part.in[0], rows[0]);
            int64_t out_plane = part.out[1] * part.out[2], part_dense = part.out[0] * out_plane;
            double *xs = malloc(sizeof *xs * (size_t)(net->c * rows[0] * plane));
            double *ys = malloc(sizeof *ys * (size_t)(k * part_dense));
            for (int64_t c = 0; c < net->c; ++c)
                memcpy(xs + c * rows[0] * plane, x + (c * patch.in[0] + from[0]) * plane,
                       sizeof *xs * (size_t)(rows[0] * plane));
            assert_int_equal(cg_net_eval_fragments(net, &wt, &part, xs, ys), CONVGEN_SUCCESS);
            for (int64_t c = 0; c < k; ++c)
                for (int64_t i = 0; i < part_dense; ++i)
                    if (!(ys[c * part_dense + i] == y[c * dense + S * q0 * out_plane + i]))
                        fail_msg("rows %lld..+%lld, map %lld, voxel %lld: %.17g, whole patch %.17g", (long long)q0,
                                 (long long)qn, (long long)c, (long long)i, ys[c * part_dense + i],
                                 y[c * dense + S * q0 * out_plane + i]);
            free(xs), free(ys);
        }
    free(x), free(y);
    free_weights(&wt);
}

/* The interleavings by the host (cg_net_place_fragments): every final voxel lands where
 * cg_net_dense_position says, inside a larger output at an origin, and nothing else is touched. */
static void check_placement(const cg_net *net, const int64_t m[3], bool past)
{
    cg_net_patch p;
    assert_int_equal(cg_net_patch_of(net, m, &p), CONVGEN_SUCCESS);
    const cg_net_tensor *t = &p.shape[net->count];
    int64_t frag = t->ext[0] * t->ext[1] * t->ext[2], n = t->batch * t->c * frag, guard = 64;
    const int64_t origin[3] = {1, 2, 3};
    int64_t out[3] = {p.out[0] + 2, p.out[1] + 3, p.out[2] + 5};
    if (past) /* the patch runs past the output's edge: 1, 2 and 3 of its rows, columns, planes */
        out[0] = origin[0] + p.out[0] - (p.out[0] > 1), out[1] = origin[1] + p.out[1] - 2, out[2] = origin[2] + p.out[2] - 3;
    int64_t size = t->c * out[0] * out[1] * out[2], inside = 1;
    for (int d = 0; d < 3; ++d)
        inside *= out[d] - origin[d] < p.out[d] ? out[d] - origin[d] : p.out[d];
    float *src = malloc(sizeof *src * (size_t)n), *y = malloc(sizeof *y * (size_t)(size + guard));
    for (int64_t i = 0; i < n; ++i)
        src[i] = (float)i;
    for (int64_t i = 0; i < size + guard; ++i)
        y[i] = -1;
    assert_int_equal(cg_net_place_fragments(net, &p, src, y, out, origin), CONVGEN_SUCCESS);
    int64_t placed = 0;
    for (int64_t b = 0; b < t->batch; ++b)
        for (int64_t c = 0; c < t->c; ++c)
            for (int64_t j = 0; j < frag; ++j) {
                const int64_t at[3] = {j / (t->ext[1] * t->ext[2]), j / t->ext[2] % t->ext[1], j % t->ext[2]};
                int64_t pos[3];
                cg_net_dense_position(net, b, at, pos);
                if (origin[0] + pos[0] >= out[0] || origin[1] + pos[1] >= out[1] || origin[2] + pos[2] >= out[2])
                    continue; /* past the edge: not placed */
                int64_t i = ((c * out[0] + origin[0] + pos[0]) * out[1] + origin[1] + pos[1]) * out[2] + origin[2] + pos[2];
                if (y[i] != src[(b * t->c + c) * frag + j])
                    fail_msg("entry %lld map %lld voxel %lld: %g at its dense position", (long long)b, (long long)c,
                             (long long)j, (double)y[i]);
                y[i] = -1, ++placed;
            }
    for (int64_t i = 0; i < size + guard; ++i)
        if (y[i] != -1)
            fail_msg("output %lld written outside the patch%s", (long long)i, i >= size ? " (past y)" : "");
    assert_int_equal(placed, t->c * inside);
    free(src), free(y);
}

static void test_depth_slabs_and_host_placement(void **state)
{
    (void)state;
    const char *nets[] = {small_nets[0], small_nets[1], host_nets[1], host_nets[2], host_nets[4]};
    const int64_t m[3] = {5, 2, 3};
    for (size_t i = 0; i < sizeof nets / sizeof *nets; ++i) {
        cg_net net;
        assert_int_equal(cg_net_parse(nets[i], &net), CONVGEN_SUCCESS);
        check_slabs(&net, m);
        check_placement(&net, m, false);
        check_placement(&net, m, true);
    }
    cg_net net; /* rank 2 */
    const int64_t m2[3] = {1, 3, 2};
    assert_int_equal(cg_net_parse(small_nets[2], &net), CONVGEN_SUCCESS);
    check_placement(&net, m2, false);
    check_placement(&net, m2, true);
}

/* A volume of `ext` tiled by the patch of fragments m as the executor tiles it
 * (cg_net_patch_origin, cg_net_pack_input, cg_net_place_output), the network's work replaced
 * by writing each dense output its own global position: every packed input voxel is the
 * volume's at its place, or zero past the edge; every output voxel of the volume is written,
 * with its own position, and nothing past y. */
static void check_tiling(const char *text, const int64_t m[3], const int64_t ext[3], int64_t want_tiles)
{
    convgen_net n = {0};
    assert_int_equal(cg_net_parse(text, &n.net), CONVGEN_SUCCESS);
    assert_int_equal(cg_net_patch_of(&n.net, m, &n.patch), CONVGEN_SUCCESS);
    int64_t fov[3], out[3], tiles[3], count = 1, vol = n.net.c, dense = 1;
    cg_net_field_of_view(&n.net, fov);
    for (int d = 0; d < 3; ++d) {
        out[d] = ext[d] - fov[d] + 1;
        tiles[d] = (out[d] + n.patch.out[d] - 1) / n.patch.out[d];
        count *= tiles[d], vol *= ext[d], dense *= out[d];
    }
    assert_int_equal(count, want_tiles);
    const int64_t k = n.patch.shape[n.net.count].c, guard = 64, *pi = n.patch.in, *po = n.patch.out;
    int64_t packed_n = n.net.c * pi[0] * pi[1] * pi[2], patch_out = k * po[0] * po[1] * po[2];
    float *x = malloc(sizeof *x * (size_t)vol), *y = malloc(sizeof *y * (size_t)(k * dense + guard));
    float *packed = malloc(sizeof *packed * (size_t)packed_n), *src = malloc(sizeof *src * (size_t)patch_out);
    for (int64_t i = 0; i < vol; ++i)
        x[i] = (float)(i + 1); /* exact in fp32 below 2^24 */
    for (int64_t i = 0; i < k * dense + guard; ++i)
        y[i] = NAN;
    for (int64_t t = 0; t < count; ++t) {
        int64_t at[3];
        cg_net_patch_origin(&n, t, tiles, out, at);
        for (int d = 0; d < 3; ++d)
            assert_true(at[d] >= 0 && at[d] < out[d]);
        for (int64_t i = 0; i < packed_n; ++i)
            packed[i] = -7; /* poison: every element is written */
        cg_net_pack_input(&n, x, ext, at, packed);
        for (int64_t c = 0, i = 0; c < n.net.c; ++c)
            for (int64_t z = 0; z < pi[0]; ++z)
                for (int64_t r = 0; r < pi[1]; ++r)
                    for (int64_t q = 0; q < pi[2]; ++q, ++i) {
                        const int64_t g[3] = {at[0] + z, at[1] + r, at[2] + q};
                        bool in = g[0] < ext[0] && g[1] < ext[1] && g[2] < ext[2];
                        float want = in ? x[((c * ext[0] + g[0]) * ext[1] + g[1]) * ext[2] + g[2]] : 0;
                        if (packed[i] != want)
                            fail_msg("patch %lld, input %lld: %g, not %g", (long long)t, (long long)i, (double)packed[i],
                                     (double)want);
                    }
        for (int64_t c = 0, i = 0; c < k; ++c) /* the patch's "output": its global position */
            for (int64_t z = 0; z < po[0]; ++z)
                for (int64_t r = 0; r < po[1]; ++r)
                    for (int64_t q = 0; q < po[2]; ++q, ++i)
                        src[i] = (float)((((c * 1000 + at[0] + z) * 1000) + at[1] + r) * 1000 + at[2] + q);
        cg_net_place_output(&n, src, y, out, at);
    }
    for (int64_t c = 0, i = 0; c < k; ++c)
        for (int64_t z = 0; z < out[0]; ++z)
            for (int64_t r = 0; r < out[1]; ++r)
                for (int64_t q = 0; q < out[2]; ++q, ++i)
                    if (y[i] != (float)((((c * 1000 + z) * 1000) + r) * 1000 + q))
                        fail_msg("output (%lld, %lld, %lld, %lld): %g", (long long)c, (long long)z, (long long)r,
                                 (long long)q, (double)y[i]);
    for (int64_t i = k * dense; i < k * dense + guard; ++i)
        assert_true(isnan(y[i]));
    free(x), free(y), free(packed), free(src);
}

/* Patches across a volume: the last of a dimension moved back inside where the volume is not a
 * multiple of the patch, one patch running past the edge where the volume is smaller than the
 * patch (the patch input 20 x 23 x 10 here), both at once; small patches and large ones (the
 * copies split over threads). */
static void test_patches_tile_the_volume(void **state)
{
    (void)state;
    const int64_t m[3] = {2, 3, 1};
    const int64_t inside[3] = {41, 37, 30}, past[3] = {17, 19, 9}, both[3] = {15, 37, 30};
    check_tiling(small_nets[0], m, inside, 4 * 3 * 11);
    check_tiling(small_nets[0], m, past, 1);
    check_tiling(small_nets[0], m, both, 1 * 3 * 11);
    /* patches of over 4 MiB: packed and placed by several threads */
    const int64_t big[3] = {24, 24, 24}, big_inside[3] = {150, 130, 120}, big_past[3] = {100, 90, 50};
    check_tiling(small_nets[0], big, big_inside, 2 * 2 * 3);
    check_tiling(small_nets[0], big, big_past, 1);
    const int64_t m2[3] = {1, 3, 2}, past2[3] = {1, 60, 90}; /* rank 2: the patch 69 x 41 */
    check_tiling(small_nets[2], m2, past2, 1 * 1 * 5);
}

/* A driver whose "device" is host memory: the row copies' calls, counted and checked as the
 * driver checks them (pitches of at most 2^31 - 1 bytes, each at least the width). */
static int copies_1d, copies_2d;

static CUresult fake_htod(CUdeviceptr dst, const void *src, size_t bytes, CUstream stream)
{
    (void)stream, ++copies_1d;
    memcpy((void *)(uintptr_t)dst, src, bytes);
    return CUDA_SUCCESS;
}

static CUresult fake_dtoh(void *dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    (void)stream, ++copies_1d;
    memcpy(dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

static CUresult fake_2d(const CUDA_MEMCPY2D *c, CUstream stream)
{
    (void)stream, ++copies_2d;
    const size_t max_pitch = ((size_t)1 << 31) - 1;
    if (c->srcPitch > max_pitch || c->dstPitch > max_pitch || c->srcPitch < c->WidthInBytes || c->dstPitch < c->WidthInBytes)
        return CUDA_ERROR_INVALID_VALUE;
    const char *src = c->srcMemoryType == CU_MEMORYTYPE_HOST ? c->srcHost : (const void *)(uintptr_t)c->srcDevice;
    char *dst = c->dstMemoryType == CU_MEMORYTYPE_HOST ? c->dstHost : (void *)(uintptr_t)c->dstDevice;
    for (size_t r = 0; r < c->Height; ++r)
        memcpy(dst + r * c->dstPitch, src + r * c->srcPitch, c->WidthInBytes);
    return CUDA_SUCCESS;
}

static CUresult fake_dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream stream)
{
    (void)stream, ++copies_1d;
    memcpy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes);
    return CUDA_SUCCESS;
}

static CUresult fake_event_record(CUevent e, CUstream s)
{
    (void)e, (void)s;
    return CUDA_SUCCESS;
}

static CUresult fake_wait(CUstream s, CUevent e, unsigned flags)
{
    (void)s, (void)e, (void)flags;
    return CUDA_SUCCESS;
}

static convgen_status no_step(convgen_net *n, const pipe_slot *p, convgen_stream stream, void *arg)
{
    (void)n, (void)p, (void)stream, (void)arg;
    return CONVGEN_SUCCESS;
}

static convgen_status no_download(convgen_net *n, const pipe_slot *p, void *arg)
{
    (void)n, (void)p, (void)arg;
    return CONVGEN_SUCCESS;
}

/* A depth chunk's input through a slot (cg_net_through_slot) that keeps the rows its predecessor
 * read: `channels` channels of `depth` rows of `plane` floats on the host; the previous chunk
 * read rows [0, 6) (in `prev`, rows `prev_pitch` bytes apart), this one reads [4, 10), its rows
 * 4 and 5 from prev on the device (the host's are poisoned there) and 6..9 from the host. */
static void check_kept_rows(const convgen_net *n, char *prev, size_t prev_pitch, int want_1d, int want_2d)
{
    enum { channels = 3, depth = 20, plane = 5, rows = 6, kept = 2, from = 4 };
    float host[channels][depth][plane], dev[channels][rows][plane];
    for (int c = 0; c < channels; ++c)
        for (int r = 0; r < depth; ++r)
            for (int i = 0; i < plane; ++i) {
                float v = (float)(c * 1000 + r * 10 + i);
                host[c][r][i] = r >= from && r < from + kept ? NAN : v;
                if (r < rows)
                    memcpy(prev + c * prev_pitch + (size_t)(r * plane + i) * 4, &v, 4);
            }
    memset(dev, 0xff, sizeof dev);
    pipe_slot p = {.dev_in = (CUdeviceptr)(uintptr_t)dev};
    const slot_input in = {.src = &host[0][from][0], .width = rows * plane * 4, .height = channels,
                           .pitch = depth * plane * 4, .kept_from = (CUdeviceptr)(uintptr_t)prev + (rows - kept) * plane * 4,
                           .kept = kept * plane * 4, .kept_pitch = prev_pitch};
    const slot_steps steps = {no_step, no_download, NULL};
    copies_1d = copies_2d = 0;
    assert_int_equal(cg_net_through_slot((convgen_net *)n, &p, &in, &steps, NULL), CONVGEN_SUCCESS);
    for (int c = 0; c < channels; ++c)
        for (int r = 0; r < rows; ++r)
            for (int i = 0; i < plane; ++i)
                if (dev[c][r][i] != (float)(c * 1000 + (from + r) * 10 + i))
                    fail_msg("channel %d, row %d, element %d: %g", c, from + r, i, (double)dev[c][r][i]);
    assert_int_equal(copies_1d, want_1d);
    assert_int_equal(copies_2d, want_2d);
}

static CUresult fake_error(CUresult r, const char **text)
{
    (void)r;
    *text = "fake";
    return CUDA_SUCCESS;
}

/* height rows of width bytes, pitch apart in `host`, through cg_net_copy_rows up into a packed
 * buffer and back down into a second host layout of the same pitch: every byte where it
 * belongs, the gaps untouched; the number of 1-D and 2-D copies it took. */
static void check_rows(const convgen_net *n, char *host, char *back, size_t pitch, size_t width, size_t height,
                       int want_1d, int want_2d)
{
    char *dev = malloc(width * height);
    for (size_t r = 0; r < height; ++r)
        for (size_t i = 0; i < width; ++i)
            host[r * pitch + i] = (char)(r * 31 + i * 7 + 1), back[r * pitch + i] = 0;
    if (pitch > width && height > 1)
        back[pitch - 1] = 'g'; /* a gap */
    copies_1d = copies_2d = 0;
    assert_int_equal(cg_net_copy_rows(n, true, host, pitch, (CUdeviceptr)(uintptr_t)dev, width, width, height, NULL),
                     CONVGEN_SUCCESS);
    for (size_t r = 0; r < height; ++r)
        assert_memory_equal(dev + r * width, host + r * pitch, width);
    assert_int_equal(cg_net_copy_rows(n, false, back, pitch, (CUdeviceptr)(uintptr_t)dev, width, width, height, NULL),
                     CONVGEN_SUCCESS);
    for (size_t r = 0; r < height; ++r)
        assert_memory_equal(back + r * pitch, host + r * pitch, width);
    if (pitch > width && height > 1)
        assert_int_equal(back[pitch - 1], 'g');
    assert_int_equal(copies_1d, 2 * want_1d);
    assert_int_equal(copies_2d, 2 * want_2d);
    free(dev);
}

/* The host mode's row copies (cg_net_copy_rows): one copy where both sides are packed, one 2-D
 * copy where a pitch differs, a copy a row past the driver's 2 GiB pitch. */
static void test_row_copies(void **state)
{
    (void)state;
    cg_driver drv = {.MemcpyHtoDAsync = fake_htod, .MemcpyDtoHAsync = fake_dtoh, .Memcpy2DAsync = fake_2d,
                     .GetErrorString = fake_error};
    convgen_context ctx = {.drv = &drv};
    convgen_net n = {.ctx = &ctx};
    char host[4096], back[4096];
    check_rows(&n, host, back, 64, 64, 5, 1, 0);  /* packed: one copy of 320 bytes */
    check_rows(&n, host, back, 100, 36, 1, 1, 0); /* one row */
    check_rows(&n, host, back, 100, 36, 7, 0, 1); /* rows of a channel's depth slab: one 2-D copy */
    /* pitches of 3 GiB: a row at a time (reserved, never touched but for the rows) */
    size_t pitch = (size_t)3 << 30, height = 3, span = pitch * (height - 1) + 64;
    char *far = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    char *far_back = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (far == MAP_FAILED || far_back == MAP_FAILED)
        skip(); /* no address space for it: nothing to check */
    check_rows(&n, far, far_back, pitch, 64, height, (int)height, 0);
    munmap(far, span), munmap(far_back, span);
}

/* A depth chunk's rows kept on the device from its predecessor's input: one 2-D copy on the
 * device and one 2-D copy up for the rest; where the predecessor's rows are past the driver's
 * 2 GiB pitch, a device copy a channel. */
static void test_kept_rows(void **state)
{
    (void)state;
    cg_driver drv = {.MemcpyHtoDAsync = fake_htod, .MemcpyDtoHAsync = fake_dtoh, .Memcpy2DAsync = fake_2d,
                     .MemcpyDtoDAsync = fake_dtod, .EventRecord = fake_event_record, .StreamWaitEvent = fake_wait,
                     .GetErrorString = fake_error};
    convgen_context ctx = {.drv = &drv};
    convgen_net n = {.ctx = &ctx};
    char prev[3 * 40 * 4];
    check_kept_rows(&n, prev, 40 * 4, 0, 2); /* packed: the kept rows, then the rest up */
    size_t pitch = (size_t)3 << 30, span = pitch * 2 + 40 * 4;
    char *far = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (far == MAP_FAILED)
        skip(); /* no address space for it: nothing to check */
    check_kept_rows(&n, far, pitch, 3, 1); /* a device copy a channel, then the rest up */
    munmap(far, span);
}

static void test_fragments_equal_the_dense_definition(void **state)
{
    (void)state;
    const int64_t sizes[][3] = {{1, 1, 1}, {2, 3, 1}, {3, 1, 2}};
    int64_t voxels = 0;
    int runs = 0;
    for (size_t i = 0; i < sizeof small_nets / sizeof small_nets[0]; ++i) {
        cg_net net;
        assert_int_equal(cg_net_parse(small_nets[i], &net), CONVGEN_SUCCESS);
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
            int64_t m[3] = {net.rank == 2 ? 1 : sizes[s][0], sizes[s][1], sizes[s][2]};
            check_net(&net, m, &voxels);
            ++runs;
        }
    }
    print_message("%d patches of %zu networks, %lld voxels: fragments = dense = each voxel alone\n", runs,
                  sizeof small_nets / sizeof small_nets[0], (long long)voxels);
}

/* ---- the executor (convgen_net_*) ---- */

static convgen_context *gpu, *offline;

static int setup(void **state)
{
    (void)state;
    convgen_context_options o = {.offline = 1, .arch = "sm_90", .disk_cache = -1};
    if (convgen_context_create(&o, &offline) != CONVGEN_SUCCESS)
        return -1;
    if (convgen_context_create(NULL, &gpu) != CONVGEN_SUCCESS) {
        printf("network executor GPU tests SKIPPED: %s\n", convgen_last_error());
        gpu = NULL;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    convgen_context_destroy(gpu);
    convgen_context_destroy(offline);
    return 0;
}

/* One of bench/nets' networks, parsed. */
static void parse_shipped(cg_net *net, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/bench/nets/%s.net", CONVGEN_SOURCE_DIR, name);
    assert_int_equal(cg_net_parse(read_text(path), net), CONVGEN_SUCCESS);
}

/* The patch chosen for a known volume (cg_net_best_fragment), n337 on an H200's budget
 * (bench/NOTES.md, "One patch past the edge"): with the memory for it, 448^3 is one patch of
 * 452^3 that runs past the edge, not eight of 268^3 inside (a 364^3 output is not a multiple
 * of 8); with less, the largest that fits (one or two dimensions whole); a volume whose output
 * is a multiple of 8 runs inside it. The fragments a volume can take are all tried: the least
 * that covers it in k patches, for every k, and 1..32 a side. */
static void test_patch_choice(void **state)
{
    (void)state;
    cg_net net;
    parse_shipped(&net, "n337");
    const struct { int64_t side; double gib; int64_t m[3]; } cases[] = {
        {448, 128, {46, 46, 46}}, {448, 80, {23, 46, 46}}, {448, 64, {23, 23, 46}}, {448, 32, {23, 23, 23}},
        {300, 128, {27, 27, 27}}, {1000, 128, {29, 58, 58}},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const double bytes = cases[i].gib * 1073741824.0;
        const cg_net_budget b = {.device_bytes = bytes / 2, .device_limit = bytes, .host_bytes = 0, .bus_up = 25e9,
                                 .bus_down = 25e9, .sm_count = 132};
        const int64_t volume[3] = {cases[i].side, cases[i].side, cases[i].side};
        int64_t m[3];
        double cost = cg_net_best_fragment(&net, &b, false, volume, NULL, 0, m);
        if (!(cost < INFINITY) || memcmp(m, cases[i].m, sizeof m) != 0)
            fail_msg("%lld^3 in %.0f GiB: fragments %lldx%lldx%lld, expected %lldx%lldx%lld", (long long)cases[i].side,
                     cases[i].gib, (long long)m[0], (long long)m[1], (long long)m[2], (long long)cases[i].m[0],
                     (long long)cases[i].m[1], (long long)cases[i].m[2]);
    }
    /* rank 2 (a depth of 1), for a volume and without one, in both modes: a patch of depth 1 */
    assert_int_equal(cg_net_parse(small_nets[2], &net), CONVGEN_SUCCESS);
    const cg_net_budget b = {.device_bytes = 8.0 * 1073741824, .device_limit = 16.0 * 1073741824,
                             .host_bytes = 16.0 * 1073741824, .bus_up = 25e9, .bus_down = 25e9, .sm_count = 132};
    const int64_t image[3] = {1, 900, 700}, unknown[3] = {0, 0, 0};
    for (int host = 0; host < 2; ++host)
        for (int known = 0; known < 2; ++known) {
            int64_t m[3] = {0, 0, 0};
            cg_net_patch p;
            assert_true(cg_net_best_fragment(&net, &b, host, known ? image : unknown, NULL, 0, m) < INFINITY);
            assert_int_equal(m[0], 1);
            assert_int_equal(cg_net_patch_of(&net, m, &p), CONVGEN_SUCCESS);
        }
}

/* The host mode's plans for n337 on an H200's budget (bus 54.7 GB/s, 31.25 GiB of pinned host
 * memory; bench/results/nvidia-h200-2026-12-02-net-host-ws.md): through 4 GiB over 1625^3, the
 * plan measured at 0.69 of the uncapped rate (fragments 65x25x28; layers 0-3 cut by 2 depth
 * rows, 4-9 by entries); through 1 GiB over 1024^3, no depth chunk whose convolution of many
 * channels computes fewer rows than a Winograd tile (one-row chunks of layer 2 ran 1.7x their
 * model). */
static void test_host_mode_patch_choice(void **state)
{
    (void)state;
    cg_net net;
    parse_shipped(&net, "n337");
    double weights = 0;
    for (int i = 0; i < net.count; ++i)
        weights += 4.0 * (double)(cg_net_weight_count(&net, i) + (net.layers[i].kind == CG_NET_CONV ? net.layers[i].k : 0));
    const struct { int64_t side; double mib; } cases[] = {{1625, 4096}, {1024, 1024}};
    for (int c = 0; c < 2; ++c) {
        const double bytes = cases[c].mib * 1048576.0;
        const cg_net_budget b = {.device_bytes = bytes / 2 - weights, .device_limit = bytes - weights,
                                 .host_bytes = 31.25 * 1073741824.0, .bus_up = 54.7e9, .bus_down = 54.7e9,
                                 .sm_count = 132};
        const int64_t volume[3] = {cases[c].side, cases[c].side, cases[c].side};
        int64_t m[3];
        cg_net_patch p;
        cg_net_segment seg[CG_NET_MAX_LAYERS + 1];
        int count = 0;
        assert_true(cg_net_best_fragment(&net, &b, true, volume, NULL, 0, m) < INFINITY);
        assert_int_equal(cg_net_patch_of(&net, m, &p), CONVGEN_SUCCESS);
        assert_true(cg_net_segments(&net, &p, &b, seg, &count) < INFINITY);
        if (c == 0) {
            const int64_t want[3] = {65, 25, 28};
            if (memcmp(m, want, sizeof m) != 0 || count != 2 || seg[0].end != 4 || seg[0].dq != 2 || seg[1].dq || seg[1].kc)
                fail_msg("4 GiB: fragments %lldx%lldx%lld in %d segments (the first to layer %d, %lld rows)",
                         (long long)m[0], (long long)m[1], (long long)m[2], count, seg[0].end, (long long)seg[0].dq);
            continue;
        }
        for (int j = 0; j < count; ++j) {
            if (!seg[j].dq)
                continue;
            int64_t from[CG_NET_MAX_LAYERS + 1], rows[CG_NET_MAX_LAYERS + 1];
            cg_net_slab_rows(&net, &seg[j], 0, seg[j].dq, from, rows);
            for (int i = seg[j].first; i < seg[j].end; ++i)
                if (net.layers[i].kind == CG_NET_CONV && p.shape[i].c > 1 && rows[i + 1] < 4)
                    fail_msg("1 GiB: fragments %lldx%lldx%lld, segment %d's chunks compute %lld rows of layer %d",
                             (long long)m[0], (long long)m[1], (long long)m[2], j, (long long)rows[i + 1], i);
        }
    }
}

static char *explain_net(const char *text, const convgen_net_options *o)
{
    convgen_net *net;
    if (convgen_net_create(offline, text, o, &net) != CONVGEN_SUCCESS)
        fail_msg("%s", convgen_last_error());
    char *plan;
    assert_int_equal(convgen_net_explain(net, &plan), CONVGEN_SUCCESS);
    convgen_net_destroy(net);
    return plan;
}

/* Planning needs no GPU: the patch, each layer's plan and the memory, and the refusals named. */
static void test_executor_plans_offline(void **state)
{
    (void)state;
    convgen_net *net;
    convgen_net_options o = {.fragment = {2, 3, 1}, .effort = CONVGEN_EFFORT_ESTIMATE};
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_SUCCESS);
    char *text;
    assert_int_equal(convgen_net_explain(net, &text), CONVGEN_SUCCESS);
    assert_non_null(strstr(text, "max-pooling fragments"));
    assert_non_null(strstr(text, "fragments of 2x3x1"));
    assert_non_null(strstr(text, "\npatch: as given\n"));
    free(text);
    float x[4] = {0};
    const int64_t in[3] = {64, 64, 64};
    assert_int_equal(convgen_net_infer(net, x, in, x, NULL), CONVGEN_ERROR_NO_DEVICE);
    assert_int_equal(convgen_net_profile(net, &text), CONVGEN_ERROR_NO_DEVICE);
    assert_int_equal(convgen_net_profile(net, NULL), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "text is NULL"));
    assert_int_equal(convgen_net_profile(NULL, &text), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "net is NULL"));
    assert_int_equal(convgen_net_set_weights(net, 1, x, x), CONVGEN_ERROR_INVALID_VALUE); /* a pooling */
    assert_non_null(strstr(convgen_last_error(), "layer = 1"));
    convgen_net_destroy(net);
    /* for a known volume: a patch of it (the planner's choice among those: test_patch_choice) */
    o = (convgen_net_options){.volume = {23, 40, 31}, .effort = CONVGEN_EFFORT_ESTIMATE};
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_SUCCESS);
    assert_int_equal(convgen_net_explain(net, &text), CONVGEN_SUCCESS);
    assert_non_null(strstr(text, "field of view 13x12x9; patch "));
    assert_non_null(strstr(text, "\npatch: the cost model's best\n"));
    free(text);
    convgen_net_destroy(net);
    /* effort measure offline: nothing runs, the cost model chooses and no wisdom is kept */
    int held = convgen_wisdom_count();
    o.effort = CONVGEN_EFFORT_MEASURE;
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_SUCCESS);
    assert_int_equal(convgen_net_explain(net, &text), CONVGEN_SUCCESS);
    assert_non_null(strstr(text, "\npatch: the cost model's best\n"));
    assert_int_equal(convgen_wisdom_count(), held);
    free(text);
    convgen_net_destroy(net);
    /* a patch measured before (on some GPU of sm_90) is taken offline, at effort estimate too,
     * for its network, volume and limits only */
    convgen_wisdom_forget();
    wisdom_net_entry e = {.key = {.gpu = "NVIDIA H200", .arch = "sm_90", .version = CONVGEN_VERSION_STRING,
                                  .volume = {23, 40, 31}, .memory_limit = 50000000, .host_limit = 1 << 30},
                          .effort = CONVGEN_EFFORT_MEASURE, .fragment = {1, 2, 3}, .mode = CONVGEN_NET_DEVICE,
                          .seconds = 0.5};
    cg_net parsed;
    assert_int_equal(cg_net_parse(small_nets[0], &parsed), CONVGEN_SUCCESS);
    assert_true(cg_net_text(&parsed, e.key.net, sizeof e.key.net));
    assert_int_equal(wisdom_net_add(&e), CONVGEN_SUCCESS);
    o = (convgen_net_options){.volume = {23, 40, 31}, .effort = CONVGEN_EFFORT_ESTIMATE, .memory_limit = 50000000,
                              .host_memory_limit = 1 << 30};
    text = explain_net(small_nets[0], &o);
    if (!strstr(text, "(fragments of 1x2x3)\npatch: from wisdom, measured before (0.5 s for the volume)\n"))
        fail_msg("not the wisdom's patch:\n%s", text);
    free(text);
    o.volume[0] = 24; /* another volume: the model's */
    text = explain_net(small_nets[0], &o);
    assert_non_null(strstr(text, "\npatch: the cost model's best\n"));
    free(text);
    convgen_wisdom_forget();
    o = (convgen_net_options){.volume = {12, 40, 31}};
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "volume[0] = 12 is smaller than the network's field of view, 13"));
    o = (convgen_net_options){.fragment = {1, 1, 1}, .memory_limit = 1000};
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_ERROR_WORKSPACE_LIMIT);
    assert_non_null(strstr(convgen_last_error(), "memory_limit"));
    o = (convgen_net_options){.fragment = {4, 0, 0}};
    assert_int_equal(convgen_net_create(offline, small_nets[0], &o, &net), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "fragment[1] = 0: give every dimension's"));
    o = (convgen_net_options){.fragment = {0, 0, 2}};
    assert_int_equal(convgen_net_create(offline, small_nets[2], &o, &net), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "fragment[2]"));
    assert_int_equal(convgen_net_create(offline, "input 1\nconv 2\n", NULL, &net), CONVGEN_ERROR_INVALID_VALUE);
    assert_null(net);
}

/* The host mode's segments offline: a layer and its pooling cut by depth, the tail by batch
 * entries, the interleavings by the host; a depth cut that spans convolutions; two poolings
 * that come first cut by their maps; a network without poolings; AUTO takes the host mode
 * where no device-mode patch fits; its refusals. */
static void test_host_mode_plans_offline(void **state)
{
    (void)state;
    convgen_net_options o = {.fragment = {4, 5, 3}, .memory_limit = 800000, .mode = CONVGEN_NET_HOST,
                             .effort = CONVGEN_EFFORT_ESTIMATE};
    char *plan = explain_net(host_nets[0], &o);
    const char *says[] = {"host mode", "segment 0: layers 0-1, 7 chunks of 2 depth rows of one entry",
                          "segment 1: layers 2-4, 2 chunks of 4 of 8 entries",
                          "convolutions", "(beside the next patch's segment 0)", "the interleavings: by the host",
                          "a chunk's input and output"};
    for (size_t i = 0; i < sizeof says / sizeof *says; ++i)
        if (!strstr(plan, says[i]))
            fail_msg("the plan does not say \"%s\":\n%s", says[i], plan);
    free(plan);
    /* a little more memory: one depth cut through two convolutions and their poolings, the
     * rows between its chunks computed twice rather than a tensor sent down and up */
    o.memory_limit = 1200000;
    plan = explain_net(host_nets[0], &o);
    assert_non_null(strstr(plan, "segment 0: layers 0-3, 5 chunks of 1 depth rows of one entry"));
    free(plan);
    /* where the whole patch fits, one segment: the network and the interleavings */
    o.memory_limit = 3000000;
    plan = explain_net(host_nets[0], &o);
    assert_non_null(strstr(plan, "segment 0: layers 0-4 and the interleavings, 1 chunks"));
    assert_null(strstr(plan, "segment 1"));
    assert_null(strstr(plan, "by the host"));
    free(plan);
    /* two poolings first, cut by their own maps (a smaller last slice) */
    o = (convgen_net_options){.fragment = {1, 8, 8}, .memory_limit = 1000000, .mode = CONVGEN_NET_HOST,
                              .effort = CONVGEN_EFFORT_ESTIMATE};
    plan = explain_net(host_nets[2], &o);
    assert_non_null(strstr(plan, "segment 0: layers 0-1, 3 chunks of 3 maps of one entry"));
    free(plan);
    /* without poolings the last segment's output is the dense patch */
    o = (convgen_net_options){.fragment = {3, 4, 5}, .memory_limit = 32609, .mode = CONVGEN_NET_HOST,
                              .effort = CONVGEN_EFFORT_ESTIMATE};
    plan = explain_net(host_nets[3], &o);
    assert_non_null(strstr(plan, "segment 2: layer 2, 3 chunks of 1 depth rows of one entry"));
    assert_null(strstr(plan, "interleav"));
    free(plan);
    /* a fragment the planner accepts is never refused for its chunks' memory: the pair's own
     * buffers are counted when the segments are chosen */
    const int64_t frags[][3] = {{1, 1, 4}, {1, 3, 2}};
    const size_t limits[] = {175692, 212587};
    for (size_t f = 0; f < sizeof frags / sizeof *frags; ++f)
        for (size_t l = 0; l < sizeof limits / sizeof *limits; ++l) {
            convgen_net *tight;
            o = (convgen_net_options){.memory_limit = limits[l], .mode = CONVGEN_NET_HOST, .effort = CONVGEN_EFFORT_ESTIMATE};
            memcpy(o.fragment, frags[f], sizeof o.fragment);
            if (convgen_net_create(offline, host_nets[0], &o, &tight) == CONVGEN_SUCCESS)
                convgen_net_destroy(tight);
            else if (!strstr(convgen_last_error(), "does not fit the host mode"))
                fail_msg("fragment %lldx%lldx%lld, memory_limit %zu: %s", (long long)frags[f][0], (long long)frags[f][1],
                         (long long)frags[f][2], limits[l], convgen_last_error());
        }
    /* AUTO, for a volume through a limit no device-mode patch fits */
    o = (convgen_net_options){.volume = {90, 80, 70}, .memory_limit = 200000, .effort = CONVGEN_EFFORT_ESTIMATE};
    plan = explain_net(host_nets[0], &o);
    assert_non_null(strstr(plan, "host mode"));
    free(plan);
    convgen_net *net;
    o.mode = CONVGEN_NET_DEVICE;
    assert_int_equal(convgen_net_create(offline, host_nets[0], &o, &net), CONVGEN_ERROR_WORKSPACE_LIMIT);
    assert_non_null(strstr(convgen_last_error(), "(device mode)"));
    o = (convgen_net_options){.fragment = {4, 5, 3}, .memory_limit = 1200000, .mode = CONVGEN_NET_HOST,
                              .host_memory_limit = 1000};
    assert_int_equal(convgen_net_create(offline, host_nets[0], &o, &net), CONVGEN_ERROR_WORKSPACE_LIMIT);
    assert_non_null(strstr(convgen_last_error(), "host_memory_limit = 1000"));
    o.memory_limit = 120000, o.host_memory_limit = 0;
    assert_int_equal(convgen_net_create(offline, host_nets[0], &o, &net), CONVGEN_ERROR_WORKSPACE_LIMIT);
    assert_non_null(strstr(convgen_last_error(), "memory_limit = 120000"));
    o.mode = 3;
    assert_int_equal(convgen_net_create(offline, host_nets[0], &o, &net), CONVGEN_ERROR_INVALID_VALUE);
    assert_non_null(strstr(convgen_last_error(), "mode = 3"));
    assert_null(net);
}

/* "host" or "device", as the executor's plan says. */
static const char *plan_mode_of(const convgen_net *net)
{
    char *plan;
    assert_int_equal(convgen_net_explain(net, &plan), CONVGEN_SUCCESS);
    const char *mode = strstr(plan, "host mode") ? "host" : "device";
    free(plan);
    return mode;
}

/* A volume of `ext` (odd extents: patches overlap and the last ones move back) through the
 * executor against the dense definition in float64, weights and input random. */
static void check_volume_at(int effort, const char *text, const int64_t fragment[3], const int64_t ext[3],
                            size_t memory_limit, convgen_net_mode mode, const char *expect, double *worst)
{
    cg_net net;
    assert_int_equal(cg_net_parse(text, &net), CONVGEN_SUCCESS);
    convgen_net_options o = {.effort = effort, .memory_limit = memory_limit, .mode = mode};
    memcpy(o.fragment, fragment, sizeof o.fragment);
    if (!fragment[0] && !fragment[1] && !fragment[2]) /* chosen: for this volume */
        memcpy(o.volume, ext, sizeof o.volume);
    convgen_net *exe;
    if (convgen_net_create(gpu, text, &o, &exe) != CONVGEN_SUCCESS)
        fail_msg("%s", convgen_last_error());
    cg_net_weights wt;
    random_weights(&net, &wt);
    int64_t c = net.c;
    for (int i = 0; i < net.count; ++i) { /* the same weights in fp32 for the GPU */
        const cg_net_layer *L = &net.layers[i];
        if (L->kind != CG_NET_CONV)
            continue;
        int64_t count = L->k * c * L->size[0] * L->size[1] * L->size[2];
        float *w = malloc(sizeof *w * (size_t)(count + L->k));
        for (int64_t j = 0; j < count; ++j)
            w[j] = (float)wt.w[i][j];
        for (int64_t j = 0; j < L->k; ++j)
            w[count + j] = (float)wt.bias[i][j];
        for (int64_t j = 0; j < count + L->k; ++j) /* what the GPU sees is what the reference sums */
            ((double *)(j < count ? wt.w[i] : wt.bias[i]))[j < count ? j : j - count] = w[j];
        if (convgen_net_set_weights(exe, i, w, w + count) != CONVGEN_SUCCESS)
            fail_msg("%s", convgen_last_error());
        free(w);
        c = L->k;
    }
    int64_t full[3] = {1, 1, 1}, fov[3], out[3], in_n = net.c, out_n = 1;
    for (int d = 0; d < net.rank; ++d)
        full[3 - net.rank + d] = ext[d];
    cg_net_field_of_view(&net, fov);
    for (int d = 0; d < 3; ++d) {
        out[d] = full[d] - fov[d] + 1;
        in_n *= full[d], out_n *= out[d];
    }
    int64_t k = net.layers[net.count - 1].k;
    const int64_t guard = 256; /* past y: never written */
    float *x = malloc(sizeof *x * (size_t)in_n), *y = malloc(sizeof *y * (size_t)(k * out_n + guard));
    double *xd = malloc(sizeof *xd * (size_t)in_n), *ref = malloc(sizeof *ref * (size_t)(k * out_n));
    for (int64_t i = 0; i < in_n; ++i)
        xd[i] = x[i] = (float)uniform();
    for (int64_t i = 0; i < k * out_n + guard; ++i)
        y[i] = NAN; /* every voxel must be written */
    if (convgen_net_infer(exe, x, ext, y, NULL) != CONVGEN_SUCCESS)
        fail_msg("infer: %s", convgen_last_error());
    assert_int_equal(cg_net_eval_dense(&net, &wt, xd, full, ref), CONVGEN_SUCCESS);
    double d2 = 0, r2 = 0;
    for (int64_t i = 0; i < k * out_n; ++i) {
        if (isnan(y[i]))
            fail_msg("output %lld of %lld never written", (long long)i, (long long)(k * out_n));
        d2 += (y[i] - ref[i]) * (y[i] - ref[i]), r2 += ref[i] * ref[i];
    }
    for (int64_t i = k * out_n; i < k * out_n + guard; ++i)
        if (!isnan(y[i]))
            fail_msg("%g written %lld past the output", (double)y[i], (long long)(i - k * out_n));
    double rel = sqrt(d2 / (r2 > 0 ? r2 : 1));
    char *plan;
    convgen_net_explain(exe, &plan);
    print_message("%lld outputs, rel %.2e; %s", (long long)(k * out_n), rel, plan);
    if (expect && !strstr(plan, expect))
        fail_msg("the plan does not say \"%s\"", expect);
    free(plan);
    char *steps = NULL;
    convgen_status ps = convgen_net_profile(exe, &steps);
    bool host = strstr(plan_mode_of(exe), "host") != NULL;
    if (ps != CONVGEN_SUCCESS || !strstr(steps, host ? "segment 0: " : "total") ||
        !strstr(steps, host ? "a patch, two in flight" : "interleaving"))
        fail_msg("profile: %s", ps == CONVGEN_SUCCESS ? steps : convgen_last_error());
    print_message("%s", steps);
    free(steps);
    if (!(rel <= 1e-5))
        fail_msg("relative error %.3e against the dense definition", rel);
    *worst = rel > *worst ? rel : *worst;
    free(x), free(y), free(xd), free(ref);
    free_weights(&wt);
    convgen_net_destroy(exe);
}

/* check_volume_at effort estimate: each layer's algorithm and the patch the cost model's. */
static void check_volume(const char *text, const int64_t fragment[3], const int64_t ext[3], size_t memory_limit,
                         convgen_net_mode mode, const char *expect, double *worst)
{
    check_volume_at(CONVGEN_EFFORT_ESTIMATE, text, fragment, ext, memory_limit, mode, expect, worst);
}

static void test_executor_equals_the_dense_definition_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    double worst = 0;
    const int64_t m0[3] = {2, 3, 1}, m1[3] = {1, 2, 2}, m2[3] = {3, 2, 0};
    const int64_t v0[3] = {41, 37, 30}, v1[3] = {29, 33, 26}, v2[3] = {101, 93, 0};
    check_volume(small_nets[0], m0, v0, 0, CONVGEN_NET_DEVICE, NULL, &worst);
    check_volume(small_nets[1], m1, v1, 0, CONVGEN_NET_DEVICE, NULL, &worst);
    check_volume(small_nets[2], m2, v2, 0, CONVGEN_NET_DEVICE, NULL, &worst);
    /* a patch deeper than the volume (20 of 17): its one patch a depth runs past the edge, while
     * rows and columns take several, the last moved back */
    const int64_t v3[3] = {17, 37, 30};
    check_volume(small_nets[0], m0, v3, 0, CONVGEN_NET_DEVICE, "patch 20x23x10", &worst);
    /* a volume of 14 MB (2 channels) through a memory limit of 3 MB: many patches through the
     * pipeline, chosen for the volume */
    const int64_t none[3] = {0, 0, 0}, big[3] = {130, 120, 110};
    check_volume(small_nets[0], none, big, (size_t)3 << 20, CONVGEN_NET_DEVICE, NULL, &worst);
    print_message("5 volumes, worst relative error %.2e\n", worst);
}

/* The host mode's every way of cutting a layer, each against the dense definition: depth rows
 * (a convolution and its pooling, a last chunk of fewer rows; a pooling that comes first; depth
 * windows of 3 and 1 with a kernel 3 deep; every layer of a network without poolings, each
 * alone and all in one cut; one cut through convolutions and poolings, the whole network's
 * with a pooling first), output
 * maps (a pooling's own where it comes first, two poolings in one cut segment; a convolution's
 * of rank 2), batch entries (a last chunk smaller), the interleavings in the last segment or by
 * the host; one segment (one patch in flight), two, three and four (two patches in flight, the
 * host tensors' order flipped each patch where the count is even); and AUTO choosing it for a
 * volume through a memory limit no device-mode patch fits. Each volume takes several patches. */
static void test_host_mode_equals_the_dense_definition_on_the_gpu(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    double worst = 0;
    const int64_t m[3] = {4, 5, 3}, v[3] = {45, 50, 30}, m2[3] = {3, 2, 0}, v2[3] = {101, 93, 0};
    check_volume(host_nets[0], m, v, 800000, CONVGEN_NET_HOST, "7 chunks of 2 depth rows of one entry", &worst);
    check_volume(host_nets[0], m, v, 1200000, CONVGEN_NET_HOST, "segment 0: layers 0-3, 5 chunks of 1 depth rows", &worst);
    check_volume(host_nets[0], m, v, 600000, CONVGEN_NET_HOST, "3 chunks of 3 of 8 entries", &worst);
    const int64_t shallow[3] = {25, 50, 30}; /* the patch 28 deep: past the edge */
    check_volume(host_nets[0], m, shallow, 600000, CONVGEN_NET_HOST, "patch 28x", &worst);
    check_volume(host_nets[0], m, v, 200000, CONVGEN_NET_HOST, "segment 3: layer 4", &worst); /* 4: phases flip */
    const int64_t m4[3] = {4, 4, 4}; /* depth rows of each of 8 entries, a smaller last one */
    check_volume(host_nets[0], m4, v, 250000, CONVGEN_NET_HOST, "segment 2: layers 2-3, 24 chunks of 2 depth rows", &worst);
    check_volume(host_nets[0], m, v, 3000000, CONVGEN_NET_HOST, "segment 0: layers 0-4 and the interleavings", &worst);
    check_volume(host_nets[1], m, v, 200000, CONVGEN_NET_HOST, "segment 0: layer 0, 13 chunks of 1 depth rows", &worst);
    check_volume(host_nets[1], m, v, 400000, CONVGEN_NET_HOST, "segment 0: layer 0, 4 chunks of 1 maps", &worst);
    check_volume(host_nets[1], m, v, 600000, CONVGEN_NET_HOST, "segment 0: layers 0-3, 4 chunks of 1 depth rows", &worst);
    check_volume(host_nets[0], m, v, 1400000, CONVGEN_NET_HOST, "segment 1: layers 2-4 and the interleavings", &worst);
    check_volume(host_nets[4], m, v, 400000, CONVGEN_NET_HOST, "depth rows of one entry", &worst);
    check_volume(small_nets[2], m2, v2, 400000, CONVGEN_NET_HOST, "segment 0: layers 0-1, 3 chunks of 1 maps", &worst);
    const int64_t m8[3] = {1, 8, 8}, v8[3] = {50, 47, 41}, m3[3] = {3, 4, 5}, v3[3] = {13, 11, 9};
    check_volume(host_nets[2], m8, v8, 1000000, CONVGEN_NET_HOST, "segment 0: layers 0-1, 3 chunks of 3 maps", &worst);
    check_volume(host_nets[3], m3, v3, 32609, CONVGEN_NET_HOST, "segment 2: layer 2, 3 chunks of 1 depth rows", &worst);
    check_volume(host_nets[3], m3, v3, 50000, CONVGEN_NET_HOST, "segment 0: layers 0-2, 3 chunks of 1 depth rows", &worst);
    const int64_t none[3] = {0, 0, 0}, big[3] = {90, 80, 70};
    check_volume(host_nets[0], none, big, 200000, CONVGEN_NET_AUTO, "host mode", &worst);
    print_message("17 volumes in host mode, worst relative error %.2e\n", worst);
}

/* At effort measure the cost model's best few patches run and the fastest is kept as wisdom: a
 * second network of the same text, volume and limits takes it from there (also at less effort,
 * and after the wisdom went through its text), and still equals the dense definition. */
static void test_patch_measured_and_kept_as_wisdom(void **state)
{
    (void)state;
    if (!gpu)
        skip();
    convgen_wisdom_forget();
    double worst = 0;
    const int64_t none[3] = {0, 0, 0}, big[3] = {130, 120, 110};
    const size_t limit = (size_t)3 << 20; /* the model rates several device-mode patches within 1.3x */
    check_volume_at(CONVGEN_EFFORT_MEASURE, small_nets[0], none, big, limit, CONVGEN_NET_AUTO,
                    "patch: the fastest of the cost model's best 3, each run", &worst);
    char *text = NULL;
    assert_int_equal(convgen_wisdom_export_string(&text), CONVGEN_SUCCESS);
    /* format 3, or 4 where its layers' measured entries carry their candidates */
    if (!strstr(text, strstr(text, " candidates=") ? "convgen-wisdom 4\n" : "convgen-wisdom 3\n") ||
        !strstr(text, "net=\"input 2; conv 3 2x3x2 relu; pool 2x2x2; conv 2 3x2x2 relu; pool 2x2x1; conv 2 "
                      "2x2x3\" gpu=\"") ||
        !strstr(text, " volume=130x120x110 memory=3145728 ") || !strstr(text, " mode=auto effort=measure fragment="))
        fail_msg("the wisdom holds no network's entry:\n%s", text);
    print_message("%s", text);
    long long f[3]; /* the winner, which the next network takes */
    assert_int_equal(sscanf(strstr(text, " fragment=") + 10, "%lldx%lldx%lld", &f[0], &f[1], &f[2]), 3);
    char expect[96];
    snprintf(expect, sizeof expect, "(fragments of %lldx%lldx%lld)\npatch: from wisdom", f[0], f[1], f[2]);
    check_volume_at(CONVGEN_EFFORT_MEASURE, small_nets[0], none, big, limit, CONVGEN_NET_AUTO, expect, &worst);
    convgen_wisdom_forget();
    assert_int_equal(convgen_wisdom_import_string(text), CONVGEN_SUCCESS);
    check_volume_at(CONVGEN_EFFORT_ESTIMATE, small_nets[0], none, big, limit, CONVGEN_NET_AUTO, expect, &worst);
    /* another volume is another key: measured again */
    const int64_t other[3] = {120, 120, 110};
    check_volume_at(CONVGEN_EFFORT_MEASURE, small_nets[0], none, other, limit, CONVGEN_NET_AUTO, "patch: the fastest of",
                    &worst);
    free(text);
    convgen_wisdom_forget();
    print_message("4 volumes, worst relative error %.2e\n", worst);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_network_files_name_the_line),
        cmocka_unit_test(test_znni_networks_parse),
        cmocka_unit_test(test_patches_and_dense_positions),
        cmocka_unit_test(test_fragments_equal_the_dense_definition),
        cmocka_unit_test(test_depth_slabs_and_host_placement),
        cmocka_unit_test(test_row_copies),
        cmocka_unit_test(test_kept_rows),
        cmocka_unit_test(test_patches_tile_the_volume),
        cmocka_unit_test(test_patch_choice),
        cmocka_unit_test(test_host_mode_patch_choice),
        cmocka_unit_test(test_executor_plans_offline),
        cmocka_unit_test(test_executor_equals_the_dense_definition_on_the_gpu),
        cmocka_unit_test(test_host_mode_plans_offline),
        cmocka_unit_test(test_host_mode_equals_the_dense_definition_on_the_gpu),
        cmocka_unit_test(test_patch_measured_and_kept_as_wisdom),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
