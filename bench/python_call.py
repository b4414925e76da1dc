"""What a convgen call costs from Python: a cached plan's execute through python/convgen (ctypes
over libconvgen), host time per call, beside the same call from C that convgen-bench measures
(bench_report_call_overhead: the layer BENCH_CALL_LAYER, direct fprop, rounds of 200 calls each
synchronized, the median round). Operands two ways: device pointers as ints (the least the
package does: its argument checks and the ctypes call) and __cuda_array_interface__ arrays
(each also read and checked against the plan).

    python3 bench/python_call.py [BENCH_MD]

prints the figures; given the bench's bench.md, reads its C figure and writes the Python ones on
the line below it. Needs the package on the path (PYTHONPATH=python in a built tree) and a GPU."""

import re
import statistics
import sys
import time

import convgen
from convgen import _driver

LAYER = convgen.Conv(n=1, c=8, k=8, input=(16, 16), kernel=(3, 3), pad=1)  # BENCH_CALL_LAYER
ROUNDS, CALLS = 25, 200


def time_calls(call, device_ctx):
    """The median over rounds of a call's microseconds on the host clock (round 0 warms up), each
    round waited for in the device's context."""
    per_call = []
    for round_ in range(ROUNDS + 1):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            call()
        seconds = time.perf_counter() - t0
        with _driver._Current(device_ctx):
            _driver._call(_driver._driver().cuCtxSynchronize(), "cuCtxSynchronize")
        if round_:
            per_call.append(seconds * 1e6 / CALLS)
    return statistics.median(per_call)


def measure():
    ctx = convgen.Context()
    plan = ctx.plan_conv(LAYER, "fprop", "direct")
    x, w, y = (_driver.DeviceBuffer(0, shape=s) for s in LAYER.shapes("fprop"))
    for b in (x, w, y):
        b.upload(bytes(b.nbytes))  # zeros
    figures = {
        "device pointers": time_calls(lambda: plan.execute(x.pointer.value, w.pointer.value, y.pointer.value), x._ctx),
        "__cuda_array_interface__ arrays": time_calls(lambda: plan.execute(x, w, y), x._ctx),
    }
    return ctx.device_name, figures


def main(argv):
    name, figures = measure()
    c_us = None
    if len(argv) > 1:
        with open(argv[1]) as f:
            found = re.search(r"convgen_execute, host time per call .*?: ([0-9.]+) us median", f.read())
        c_us = float(found.group(1)) if found else None
    parts = []
    for how, us in figures.items():
        extra = " (+%.2f over C)" % (us - c_us) if c_us is not None else ""
        parts.append("%.2f us with %s%s" % (us, how, extra))
    line = ("- the same call from Python (python/convgen, ctypes; %s): %s\n" % (name, ", ".join(parts)))
    sys.stdout.write(line)
    if len(argv) > 1:  # below the C figure's line, or at the end where the bench had none
        with open(argv[1]) as f:
            lines = f.readlines()
        at = next((i + 1 for i, text in enumerate(lines) if "convgen_execute, host time per call" in text), len(lines))
        lines.insert(at, line)
        with open(argv[1], "w") as f:
            f.writelines(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
