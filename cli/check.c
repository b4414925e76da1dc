/* convgen check: a layer's kernels on the GPU against the CPU float64 reference. */
#include <stdio.h>

#include "args.h"
#include "verbs.h"
#include "verify.h"

int cli_check(int argc, char **argv)
{
    static const cli_verb check_verb = {"check", CLI_CHECK, "[options] LAYER", NULL, true, true};
    cli_args a;
    if (!cli_parse(argc, argv, &check_verb, &a))
        return 2;
    if (a.help || !a.have_layer) {
        FILE *f = a.help ? stdout : stderr;
        fprintf(f, "usage: convgen check [options] LAYER\n"
               "Runs the layer's plan on the GPU on random data with the output poisoned (NaN) first,\n"
               "and compares with the CPU float64 reference: every output element when that is cheap,\n"
               "else N random points (default 4096; --samples 0 checks all). Prints the max absolute and\n"
               "the relative error ||out-ref||/||ref||; fails if any element was not written or the error\n"
               "passes the pass's bound: 4 u sqrt(L) for fp32's unit roundoff u = 2^-24 and the pass's\n"
               "reduction length L (the products each output sums), never below 1e-5. Says what ran.\n");
        cli_print_options(&check_verb, f);
        return a.help ? 0 : 2;
    }
    convgen_context *ctx;
    convgen_status s = cli_open_context(NULL, a.no_cache, true, 0, &ctx);
    if (s != CONVGEN_SUCCESS)
        return cli_fail("check", s);
    printf("device %s (%s)\n", convgen_context_device_name(ctx), convgen_context_arch(ctx));
    printf("%-8s %12s %12s %12s %10s %10s  %s\n", "pass", "checked", "max-abs-err", "rel-err", "bound", "unwritten",
           "result, what ran");
    int rc = 0, skipped = 0;
    for (int pi = 0; pi < a.pass_count; ++pi) {
        convgen_pass pass = (convgen_pass)a.passes[pi];
        cg_verify_result r;
        s = cg_verify(ctx, &a.layer.desc, pass, a.algo, &a.options, a.seed, a.samples, &r);
        if (cli_skip_pass(&a, pass, s, false)) {
            ++skipped;
            continue;
        }
        if (s != CONVGEN_SUCCESS) {
            rc = cli_fail("check", s);
            break;
        }
        bool ok = r.rel_error <= r.bound && r.unwritten == 0;
        printf("%-8s %12lld %12.3e %12.3e %10.2e %10lld  %s%s, %s\n", convgen_pass_name(pass), (long long)r.checked,
               r.max_abs_error, r.rel_error, r.bound, (long long)r.unwritten, ok ? "PASS" : "FAIL",
               r.sampled ? " (sampled)" : "", r.ran);
        if (!ok)
            rc = 1;
    }
    if (skipped == a.pass_count)
        rc = cli_fail("check", CONVGEN_ERROR_NOT_SUPPORTED); /* the algorithm takes no pass of the layer */
    convgen_context_destroy(ctx);
    return rc;
}
