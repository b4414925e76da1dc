"""convgen's Python package on a machine without a GPU: the structs' layout against convgen.h's
(the C compiler's sizes and offsets), offline plans of every algorithm and pass with their
emitted source and compile report, AUTO's choice and candidates at effort estimate, the
emitters, wisdom, and errors naming the bad field. What executes is test_gpu.py's."""

import ctypes
import os
import subprocess
import tempfile

import pytest

import convgen
from convgen import _arrays, _lib

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
HEADER = os.path.join(SOURCE, "runtime", "convgen.h")


@pytest.fixture(scope="module")
def ctx():
    with convgen.Context(offline=True, arch="sm_90", disk_cache=False) as c:
        yield c


def _c_layout():
    """{C struct: (sizeof, {field: (offsetof, sizeof)})} from a program the C compiler builds."""
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "convgen.h"', 'int main(void) {']
    for cls, cname in _lib.C_NAMES.items():
        lines.append('printf("%s size %%zu\\n", sizeof(%s));' % (cname, cname))
        for fname, _ in cls._fields_:
            c_field = "in" if fname == "in_" else fname
            lines.append('printf("%s %s %%zu %%zu\\n", offsetof(%s, %s), sizeof(((%s *)0)->%s));' %
                         (cname, fname, cname, c_field, cname, c_field))
    lines.append("return 0; }")
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "layout.c"), os.path.join(d, "layout")
        with open(src, "w") as f:
            f.write("\n".join(lines))
        subprocess.run(["cc", "-std=c11", "-I", os.path.dirname(HEADER), src, "-o", exe], check=True)
        out = subprocess.run([exe], check=True, capture_output=True, text=True).stdout
    layout = {}
    for line in out.splitlines():
        cname, what, *values = line.split()
        entry = layout.setdefault(cname, [0, {}])
        if what == "size":
            entry[0] = int(values[0])
        else:
            entry[1][what] = tuple(int(v) for v in values)
    return layout


@pytest.mark.skipif(not os.path.exists(HEADER), reason="no source tree beside the package: convgen.h not found")
def test_structs_match_the_header():
    layout = _c_layout()
    for cls, cname in _lib.C_NAMES.items():
        size, offsets = layout[cname]
        assert ctypes.sizeof(cls) == size, cname
        for fname, _ in cls._fields_:
            f = getattr(cls, fname)
            assert (f.offset, f.size) == offsets[fname], "%s.%s: offset and size" % (cname, fname)


LAYERS = [
    convgen.Conv(n=4, c=16, k=24, input=(20, 18), kernel=(3, 3), pad=1),
    convgen.Conv(n=2, c=8, k=8, input=(9, 10, 11), kernel=(3, 3, 3)),
    convgen.Conv(n=3, c=5, k=7, input=(40,), kernel=(5,), pad=2, stride=2),
]


@pytest.mark.parametrize("layer", LAYERS, ids=["2d", "3d", "1d"])
@pytest.mark.parametrize("pass_", convgen.PASSES)
def test_direct_plans_offline_with_their_source_and_report(ctx, layer, pass_):
    with ctx.plan_conv(layer, pass_, "direct") as plan:
        kernels = plan.kernels
        assert kernels, "a plan has kernels"
        for k in kernels:
            assert k.source.startswith("/*") and "convgen" in k.source
            assert k.name in k.source
            assert k.stack_bytes == 0 and k.spill_store_bytes == 0 and k.spill_load_bytes == 0
            assert k.registers > 0 and k.block[0] > 0
        assert plan.choice.chosen_by == "caller" and plan.choice.algo == "direct"
        assert plan.workspace_size >= 0
        assert not plan.prepares_weights


def test_every_algorithm_that_covers_a_layer_plans(ctx):
    layer = LAYERS[0]
    planned = []
    for algo in convgen.ALGOS:
        try:
            with ctx.plan_conv(layer, "fprop", algo, effort="estimate") as plan:
                assert plan.kernels
                planned.append(algo)
        except convgen.Error as e:
            assert e.status_name == "NOT_SUPPORTED", (algo, e)
    assert {"direct", "fft", "winograd", "winograd-fused", "auto"} <= set(planned)


def test_auto_estimates_and_lists_its_candidates(ctx):
    layer = convgen.Conv(n=4, c=32, k=40, input=(30, 26), kernel=(5, 5), pad=2)  # planned nowhere else
    with ctx.plan_conv(layer, "fprop", "auto", effort="estimate") as plan:
        choice = plan.choice
        assert choice.chosen_by in ("estimate", "wisdom")
        assert choice.algo in convgen.ALGOS and choice.algo != "auto"
        if choice.chosen_by == "estimate":
            assert choice.candidates and choice.winner is not None
            winner = choice.candidates[choice.winner]
            assert winner.algo == choice.algo and winner.estimate_ms > 0
            assert all(c.ms is None for c in choice.candidates)  # nothing timed offline


def test_progress_is_called(ctx):
    seen = []
    with ctx.plan_conv(LAYERS[0], "fprop", "auto", effort="estimate", progress=lambda d, t: seen.append((d, t))):
        pass
    assert not seen or seen[-1][0] == seen[-1][1]


def test_options_reach_the_planner(ctx):
    with ctx.plan_conv(LAYERS[0], "fprop", "winograd", winograd_m=(4, 4), gemm="generated") as plan:
        assert "F(4" in plan.kernels[0].source or "4x4" in plan.kernels[0].source
    with pytest.raises(convgen.Error) as e:
        ctx.plan_conv(LAYERS[0], "fprop", "winograd", winograd_m=(13, 13))
    assert e.value.status_name == "INVALID_VALUE" and "winograd_m" in e.value.message
    with pytest.raises(convgen.Error) as e:
        ctx.plan_conv(LAYERS[0], "fprop", "fft", workspace_limit=16)
    assert e.value.status_name == "WORKSPACE_LIMIT"
    with ctx.plan_conv(LAYERS[0], "fprop", "winograd-fused", weights="inside") as plan:
        assert len(plan.kernels) == 1 and not plan.prepares_weights  # the weights' transforms in the fused kernel
    with ctx.plan_conv(LAYERS[0], "fprop", "winograd-fused", weights="before") as plan:
        assert len(plan.kernels) == 2 and plan.prepares_weights
    with ctx.plan_conv(LAYERS[0], "bprop", "direct", gemm="tensor") as plan:
        assert len(plan.kernels) == 2 and plan.prepares_weights  # sm_90's wgmma form lays w out first
    with pytest.raises(ValueError) as e:
        ctx.plan_conv(LAYERS[0], "fprop", "winograd-fused", weights="beside")
    assert "weights" in str(e.value)


def test_bias_and_relu_epilogue(ctx):
    layer = convgen.Conv(n=2, c=8, k=16, input=(12, 12), kernel=(3, 3), bias=True, relu=True)
    with ctx.plan_conv(layer, "fprop", "direct") as plan:
        assert "bias" in plan.kernels[-1].source
    with pytest.raises(convgen.Error) as e:
        ctx.plan_conv(layer, "bprop", "direct")
    assert "epilogue" in e.value.message


def test_errors_name_the_field(ctx):
    bad = convgen.Conv(n=1, c=1, k=1, input=(8, 8), kernel=(0, 3))
    with pytest.raises(convgen.Error) as e:
        bad.output()
    assert e.value.status == 1 and "kernel[0] = 0" in e.value.message
    with pytest.raises(convgen.Error) as e:
        ctx.plan_conv(bad, "fprop", "direct")
    assert "kernel[0]" in str(e.value)
    with pytest.raises(ValueError, match="algo = 'nope'"):
        ctx.plan_conv(LAYERS[0], "fprop", "nope")
    with pytest.raises(ValueError, match="pass = 'sideways'"):
        ctx.plan_conv(LAYERS[0], "sideways", "direct")
    with pytest.raises(ValueError, match="pad_before"):
        convgen.Conv(n=1, c=1, k=1, input=(8, 8), kernel=(3, 3), pad_before=(1, 1, 1)).c_desc()


def test_execute_checks_arrays_before_the_library(ctx):
    layer = LAYERS[0]
    x, w, y = layer.shapes("fprop")

    class Interface:  # a device array by __cuda_array_interface__, never dereferenced here
        def __init__(self, shape, typestr="<f4", strides=None, readonly=False):
            self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (4096, readonly),
                                             "strides": strides, "version": 3}

    with ctx.plan_conv(layer, "fprop", "direct") as plan:
        with pytest.raises(ValueError, match="workspace: the plan needs %d bytes" % plan.workspace_size):
            plan.execute(Interface(x), Interface(w), Interface(y))
        with pytest.raises(convgen.Error, match="offline"):
            plan.alloc_workspace()
        ws = 1 << 20  # a pointer: never dereferenced offline
        with pytest.raises(ValueError, match=r"in1: shape \(24, 16, 3, 2\), expected \(24, 16, 3, 3\)"):
            plan.execute(Interface(x), Interface((24, 16, 3, 2)), Interface(y), workspace=ws)
        with pytest.raises(ValueError, match="in0: dtype <f8"):
            plan.execute(Interface(x, "<f8"), Interface(w), Interface(y), workspace=ws)
        with pytest.raises(ValueError, match="out: not packed"):
            plan.execute(Interface(x), Interface(w), Interface(y, strides=(4,) * len(y)), workspace=ws)
        with pytest.raises(ValueError, match="out: read-only"):
            plan.execute(Interface(x), Interface(w), Interface(y, readonly=True), workspace=ws)
        with pytest.raises(ValueError, match="in1 is None"):
            plan.execute(Interface(x), None, Interface(y), workspace=ws)
        with pytest.raises(TypeError, match="in0: a list is not a device array"):
            plan.execute([1.0], Interface(w), Interface(y), workspace=ws)
        with pytest.raises(convgen.Error) as e:  # all good: the offline context has no device
            plan.execute(Interface(x), Interface(w), Interface(y), workspace=ws)
        assert e.value.status_name == "NO_DEVICE"
        with pytest.raises(convgen.Error) as e:
            plan.execute(4096, 8192, 16384, workspace=ws)  # raw pointers
        assert e.value.status_name == "NO_DEVICE"


def test_dlpack_operands_are_checked(ctx):
    """A DLPack producer of the tests' own (host memory said to be CUDA's, never touched)."""
    keep = []

    class Producer:
        def __init__(self, shape, device_type=2, bits=32):
            self.shape, self.device_type, self.bits = shape, device_type, bits
            self.released = False

        def __dlpack_device__(self):
            return self.device_type, 0

        def __dlpack__(self, stream=None):
            shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
            managed = _arrays._DLManagedTensor()
            t = managed.dl_tensor
            t.data, t.ndim, t.shape, t.strides, t.byte_offset = 4096, len(self.shape), shape, None, 0
            t.device.device_type, t.dtype.code, t.dtype.bits, t.dtype.lanes = self.device_type, 2, self.bits, 1

            def deleter(_):
                self.released = True

            managed.deleter = _arrays._DLManagedTensor._fields_[2][1](deleter)
            keep.extend([shape, managed, managed.deleter])
            make = ctypes.pythonapi.PyCapsule_New
            make.restype, make.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            return make(ctypes.addressof(managed), b"dltensor", None)

    layer = LAYERS[0]
    x, w, y = layer.shapes("fprop")
    with ctx.plan_conv(layer, "fprop", "direct") as plan:
        px = Producer(x)
        with pytest.raises(convgen.Error) as e:
            plan.execute(px, Producer(w), Producer(y), workspace=1 << 20)
        assert e.value.status_name == "NO_DEVICE"
        assert px.released, "the consumed tensor's deleter runs once the call returns, even by an exception"
        with pytest.raises(ValueError, match="not a CUDA device"):
            plan.execute(Producer(x, device_type=1), Producer(w), Producer(y), workspace=1 << 20)
        with pytest.raises(ValueError, match="expected float32"):
            plan.execute(Producer(x, bits=16), Producer(w), Producer(y), workspace=1 << 20)


def test_emitters_need_no_context():
    src = convgen.emit(LAYERS[1], "bprop", "direct")
    assert "bprop" in src and src.startswith("/*")
    fft = convgen.FFT(rank=2, n=32, type="r2c", batch=4, channels=3, window=(27, 27))
    assert "__global__" in convgen.emit_fft(fft)
    pool = convgen.Pool("fragments", n=2, c=3, input=(9, 9, 9), window=(2, 2, 2))
    assert pool.output() == (16, (4, 4, 4))
    assert "__global__" in convgen.emit_pool(pool)
    with pytest.raises(convgen.Error, match="window"):
        convgen.emit_pool(convgen.Pool("max", n=1, c=1, input=(8, 8), window=(9, 2)))


def test_fft_and_pool_plans_offline(ctx):
    with ctx.plan_fft(convgen.FFT(rank=2, n=16, type="c2c", direction=-1, batch=8)) as plan:
        assert plan.kernels and plan.kind == "fft"
        with pytest.raises(ValueError, match="execute runs a conv plan; this is a fft plan"):
            plan.execute(1, 2, 3)
    with ctx.plan_pool(convgen.Pool("max", n=2, c=3, input=(8, 8, 8), window=(2, 2, 2))) as plan:
        assert plan.kernels[0].stack_bytes == 0


def test_wisdom_round_trip(tmp_path):
    convgen.wisdom.forget()
    assert convgen.wisdom.count() == 0
    text = convgen.wisdom.export_string()
    path = tmp_path / "w.txt"
    convgen.wisdom.export_file(path)
    convgen.wisdom.import_file(path)
    convgen.wisdom.import_string(text)
    assert convgen.wisdom.count() == 0
    with pytest.raises(convgen.Error) as e:
        convgen.wisdom.import_string("not wisdom\n")
    assert e.value.status_name in ("INVALID_VALUE", "IO")


def test_closed_objects_refuse(ctx):
    plan = ctx.plan_conv(LAYERS[0], "fprop", "direct")
    plan.close()
    with pytest.raises(ValueError, match="closed"):
        plan.kernels


class _Array:
    """A device array by __cuda_array_interface__ of the tests' own, never dereferenced offline."""

    def __init__(self, shape, typestr="<f4", strides=None, stream=None, data=1 << 20):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (data, False),
                                         "strides": strides, "version": 3, "stream": stream}


def test_workspace_arrays_are_sized_and_any_dtype(ctx):
    layer = LAYERS[0]
    x, w, y = layer.shapes("fprop")
    with ctx.plan_conv(layer, "fprop", "direct") as plan:
        need = plan.workspace_size
        assert need > 0
        small = _Array((need - 1,), "|u1")  # bytes, one short: the library refuses it
        with pytest.raises(convgen.Error) as e:
            plan.execute(_Array(x), _Array(w), _Array(y), workspace=small)
        assert e.value.status_name == "INSUFFICIENT_WORKSPACE"
        with pytest.raises(convgen.Error) as e:  # enough (uint8 or float32): on to the device
            plan.execute(_Array(x), _Array(w), _Array(y), workspace=_Array((need,), "|u1"))
        assert e.value.status_name == "NO_DEVICE"


def test_strides_of_single_extents_and_stream_objects(ctx):
    layer = convgen.Conv(n=1, c=1, k=4, input=(9, 9), kernel=(3, 3))
    x, w, y = layer.shapes("fprop")
    with ctx.plan_conv(layer, "fprop", "direct") as plan:
        odd = (4 * 81 * 7, 12345, 36, 4)  # n = c = 1: their strides say nothing
        ws = _Array((plan.workspace_size,), "|u1") if plan.workspace_size else None
        with pytest.raises(convgen.Error, match="offline"):
            plan.execute(_Array(x, strides=odd), _Array(w), _Array(y), workspace=ws)

        class TorchLike:
            cuda_stream = 1234

        with pytest.raises(convgen.Error, match="offline"):
            plan.execute(_Array(x), _Array(w), _Array(y), workspace=ws, stream=TorchLike())
        with pytest.raises(TypeError, match="stream: a str"):
            plan.execute(_Array(x), _Array(w), _Array(y), workspace=ws, stream="fast")
    assert _arrays.stream_handle(0) is None and _arrays.stream_handle(7) == 7


def test_pooling_shapes():
    inter = convgen.Pool("interleave", n=2, c=3, input=(4, 5, 6), window=(2, 2, 2))
    assert inter.shapes() == ((16, 3, 4, 5, 6), (2, 3, 8, 10, 12))
    frag = convgen.Pool("fragments", n=2, c=3, input=(9, 9, 9), window=(2, 2, 2))
    assert frag.shapes() == ((2, 3, 9, 9, 9), (16, 3, 4, 4, 4))


def test_plans_and_contexts_die_in_any_order(capfd):
    import gc
    c = convgen.Context(offline=True, arch="sm_90", disk_cache=False)
    plan = c.plan_conv(LAYERS[0], "fprop", "direct")
    c.cycle = plan  # a cycle: the collector finalizes the two in any order
    del c, plan
    gc.collect()
    c = convgen.Context(offline=True, arch="sm_90", disk_cache=False)
    plan = c.plan_conv(LAYERS[0], "fprop", "direct")
    c.close()  # closes the plan first
    plan.close()  # nothing left to destroy
    with pytest.raises(ValueError, match="closed"):
        plan.kernels
    assert "still alive" not in capfd.readouterr().err
