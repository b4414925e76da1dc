"""convgen's Python package on a GPU: every pass of layers of rank 1 to 3 through several
algorithms, the bias and ReLU epilogue, prepared weights and both array protocols
(__cuda_array_interface__ and DLPack) on device memory of the tests' own (the CUDA driver
through ctypes, convgen._driver), each output poisoned with NaN first and checked against the
float64 reference (reference.py). Skipped, saying why, without numpy, a driver or a GPU.
Runs under pytest, or alone (`python3 test_gpu.py`) where pytest is missing: then exit status 0
when every test passed, 1 when one failed, 3 when skipped."""

import ctypes
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import convgen  # noqa: E402
from convgen import _arrays  # noqa: E402
from device import why_no_gpu  # noqa: E402

try:
    import numpy as np
    import reference
except ImportError:
    np = None


WHY_NOT = "no numpy" if np is None else why_no_gpu()
CTX = None if WHY_NOT else convgen.Context(disk_cache=False)

try:
    import pytest
    pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
except ImportError:
    pytest = None


def device(array):
    """A float32 numpy array on the device (the tests' own __cuda_array_interface__ array)."""
    from convgen._driver import DeviceBuffer
    a = np.ascontiguousarray(array, dtype=np.float32)
    buf = DeviceBuffer(a.nbytes, shape=a.shape)
    buf.upload(a.tobytes())
    return buf


def host(buf):
    return np.frombuffer(buf.download(), dtype=np.float32).reshape(buf.shape)


def poisoned(shape):
    return device(np.full(shape, np.nan, dtype=np.float32))


def relative(got, want):
    assert not np.isnan(got).any(), "an output was never written"
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


LAYERS = {
    "2d": convgen.Conv(n=3, c=8, k=12, input=(17, 15), kernel=(3, 3), pad=1),
    "3d": convgen.Conv(n=2, c=4, k=6, input=(9, 10, 8), kernel=(3, 3, 3)),
    "1d": convgen.Conv(n=2, c=5, k=7, input=(33,), kernel=(5,), pad=2),
    "2d-strided": convgen.Conv(n=2, c=6, k=5, input=(19, 21), kernel=(3, 3), pad=(1, 0), stride=2, dilation=(1, 2)),
}
ALGOS = {"2d": ("direct", "fft", "winograd", "auto"), "3d": ("direct", "fft", "winograd", "auto"),
         "1d": ("direct", "winograd", "auto"), "2d-strided": ("direct", "auto")}
REF = {"fprop": lambda l, a, b: reference.fprop(l, a, b), "bprop": lambda l, a, b: reference.bprop(l, a, b),
       "accgrad": lambda l, a, b: reference.accgrad(l, a, b)}


# Relative error allowed against float64: the direct sums' fp32 rounding, and the transforms'
# (the C suite's bounds, tests/test_gpu_conv.c).
TOLERANCE = {"direct": 1e-5}
DEFAULT_TOLERANCE = 1e-4


def workspace_of(plan):
    """The plan's workspace, poisoned: a step that reads what it did not write shows."""
    ws = plan.alloc_workspace()
    if ws is not None:
        ws.upload(np.full(ws.nbytes // 4, np.nan, dtype=np.float32).tobytes())
    return ws


def test_every_pass_against_the_reference():
    rng = np.random.default_rng(11)
    worst, ran = 0.0, set()
    for name, layer in LAYERS.items():
        for algo in ALGOS[name]:
            for pass_ in convgen.PASSES:
                shapes = layer.shapes(pass_)
                a, b = rng.uniform(-1, 1, shapes[0]), rng.uniform(-1, 1, shapes[1])
                try:
                    plan = CTX.plan_conv(layer, pass_, algo, effort="estimate")
                except convgen.Error as e:  # only a refusal of the layer may skip it
                    assert e.status_name == "NOT_SUPPORTED", (name, algo, pass_, e)
                    continue
                with plan:
                    out = poisoned(shapes[2])
                    plan.execute(device(a), device(b), out, workspace=workspace_of(plan))
                    err, chosen = relative(host(out), REF[pass_](layer, a, b)), plan.choice.algo
                assert err < TOLERANCE.get(chosen, DEFAULT_TOLERANCE), (name, algo, chosen, pass_, err)
                worst = max(worst, err)
                ran.add(algo)
    assert ran == {a for algos in ALGOS.values() for a in algos}, "every algorithm ran somewhere"
    print("worst relative error %.2e" % worst)


def test_bias_relu_and_prepared_weights():
    rng = np.random.default_rng(12)
    layer = convgen.Conv(n=2, c=8, k=16, input=(14, 14), kernel=(3, 3), pad=1, bias=True, relu=True)
    x, w, _ = layer.shapes("fprop")
    xs, ws, bias = rng.uniform(-1, 1, x), rng.uniform(-1, 1, w), rng.uniform(-1, 1, layer.k)
    want = np.maximum(reference.fprop(layer, xs, ws) + bias.reshape(1, -1, 1, 1), 0)
    prepared = 0
    for algo in ("direct", "winograd", "fft"):
        with CTX.plan_conv(layer, "fprop", algo) as plan:
            ws_buf, y = workspace_of(plan), poisoned(want.shape)
            tolerance = TOLERANCE.get(algo, DEFAULT_TOLERANCE)
            plan.execute(device(xs), device(ws), y, workspace=ws_buf, bias=device(bias))
            assert relative(host(y), want) < tolerance, algo
            if plan.prepares_weights:
                plan.prepare_weights(device(ws), ws_buf)
                y2 = poisoned(want.shape)
                plan.execute_prepared(device(xs), y2, ws_buf, bias=device(bias))
                assert relative(host(y2), want) < tolerance, algo
                prepared += 1
    assert prepared == 2, "winograd's and fft's weights prepared"


class DLPackOf:
    """A DLPack producer over a device buffer of the tests' own: a consumer takes its capsule."""

    def __init__(self, buf):
        self.buf, self.taken, self.deleted = buf, [], 0

    def __dlpack_device__(self):
        return 2, 0

    def __dlpack__(self, stream=None):
        shape = (ctypes.c_int64 * len(self.buf.shape))(*self.buf.shape)
        managed = _arrays._DLManagedTensor()
        t = managed.dl_tensor
        t.data, t.ndim, t.shape, t.strides = self.buf.pointer.value, len(self.buf.shape), shape, None
        t.device.device_type, t.dtype.code, t.dtype.bits, t.dtype.lanes = 2, 2, 32, 1
        managed.deleter = _arrays._DLManagedTensor._fields_[2][1](lambda _: setattr(self, "deleted", self.deleted + 1))
        self.taken.append((shape, managed))
        make = ctypes.pythonapi.PyCapsule_New
        make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return make(ctypes.addressof(managed), b"dltensor", None)


def test_dlpack_operands():
    rng = np.random.default_rng(13)
    layer = LAYERS["2d"]
    x, w, y = layer.shapes("fprop")
    xs, ws = rng.uniform(-1, 1, x), rng.uniform(-1, 1, w)
    with CTX.plan_conv(layer, "fprop", "direct") as plan:
        out = poisoned(y)
        operands = [DLPackOf(device(xs)), DLPackOf(device(ws)), DLPackOf(out)]
        plan.execute(*operands, workspace=workspace_of(plan))
        assert relative(host(out), reference.fprop(layer, xs, ws)) < 1e-5
        assert [o.deleted for o in operands] == [1, 1, 1], "each consumed tensor given back once"


def test_pooling():
    rng = np.random.default_rng(14)
    pool = convgen.Pool("max", n=2, c=3, input=(8, 10, 6), window=(2, 2, 2))
    x = rng.uniform(-1, 1, (2, 3, 8, 10, 6))
    want = x.reshape(2, 3, 4, 2, 5, 2, 3, 2).max(axis=(3, 5, 7))
    with CTX.plan_pool(pool) as plan:
        y = poisoned(want.shape)
        plan.execute_pool(device(x), y)
        assert np.array_equal(host(y), want.astype(np.float32))


if __name__ == "__main__":  # without pytest: each test in turn; skipped: exit status 3, not 0
    if WHY_NOT:
        print("SKIPPED: %s" % WHY_NOT)
        sys.exit(3)
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print("[       OK ] %s" % name)
            except Exception as e:  # noqa: BLE001 (reported, counted)
                failed += 1
                print("[  FAILED  ] %s: %r" % (name, e))
    sys.exit(1 if failed else 0)
