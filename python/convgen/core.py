"""The library's objects in Python: a Context, layer and FFT and pooling descriptions, plans (with
their kernels' emitted source and compile report, and what AUTO chose), execution on device
arrays, the emitters and the wisdom. Each is a thin layer over one C call of convgen.h."""

import ctypes
from dataclasses import dataclass, field
from typing import Optional, Sequence, Tuple

from . import _lib
from ._arrays import Operands, operand, stream_handle
from ._lib import Error, check, lib, text

def _names(fn):
    """An enum's names as the library spells them (convgen_algo_name, convgen_pass_name), by value
    from 0 until it says "unknown"."""
    names = []
    while text(fn(len(names))) != "unknown":
        names.append(text(fn(len(names))))
    return tuple(names)


ALGOS = _names(lib.convgen_algo_name)
PASSES = _names(lib.convgen_pass_name)
EFFORTS = ("measure", "estimate", "exhaustive")
GEMMS = ("chosen", "cublas", "generated", "tensor")
WEIGHTS = ("chosen", "before", "inside")
CHOSEN_BY = ("caller", "measurement", "wisdom", "estimate")
ORIGINS = ("nvrtc", "disk cache", "memory cache", "kernel set")


def _index(value, names, what):
    """A name of `names` (or its index) as the C enum's value."""
    if isinstance(value, int) and 0 <= value < len(names):
        return value
    try:
        return names.index(str(value).lower().replace("_", "-"))
    except ValueError:
        raise ValueError("%s = %r: one of %s" % (what, value, ", ".join(names))) from None


def _triple(values, rank, what, fill):
    """A per-dimension value (an int for every dimension, or rank of them) as rank entries."""
    if isinstance(values, int):
        values = (values,) * rank
    values = tuple(int(v) for v in values)
    if len(values) != rank:
        raise ValueError("%s = %s: give %d values (the layer's rank) or one" % (what, values, rank))
    return values + (fill,) * (_lib.MAX_RANK - rank)


# ---- convolution layers ------------------------------------------------------------------------

@dataclass(frozen=True)
class Conv:
    """A convolution layer, fp32 NC(D)HW: x [n][c][input...], w [k][c][kernel...], y [n][k][out...].
    `pad` sets both sides (pad_before / pad_after override); stride and dilation default to 1;
    `convolution` flips the kernel (cross-correlation by default, as cuDNN); `bias` and `relu` are
    fprop's epilogue (y = max(conv + bias[k], 0))."""
    n: int
    c: int
    k: int
    input: Sequence[int]
    kernel: Sequence[int]
    pad: Sequence[int] = 0
    pad_before: Optional[Sequence[int]] = None
    pad_after: Optional[Sequence[int]] = None
    stride: Sequence[int] = 1
    dilation: Sequence[int] = 1
    convolution: bool = False
    bias: bool = False
    relu: bool = False

    @property
    def rank(self):
        return len(tuple(self.input))

    def c_desc(self):
        r = self.rank
        d = _lib.ConvDescC(rank=r, n=self.n, c=self.c, k=self.k, mode=int(self.convolution),
                           epilogue=(1 if self.bias else 0) | (2 if self.relu else 0))
        d.in_[:] = _triple(self.input, r, "input", 0)
        d.kernel[:] = _triple(self.kernel, r, "kernel", 0)
        d.pad_before[:] = _triple(self.pad if self.pad_before is None else self.pad_before, r, "pad_before", 0)
        d.pad_after[:] = _triple(self.pad if self.pad_after is None else self.pad_after, r, "pad_after", 0)
        d.stride[:] = _triple(self.stride, r, "stride", 0)
        d.dilation[:] = _triple(self.dilation, r, "dilation", 0)
        return d

    def output(self) -> Tuple[int, ...]:
        """y's spatial extents (convgen_output_size); raises naming a bad field."""
        out = _lib.Int64x3()
        d = self.c_desc()
        check(lib.convgen_output_size(ctypes.byref(d), out))
        return tuple(out[:self.rank])

    def shapes(self, pass_="fprop"):
        """The pass's operand shapes (in0, in1, out): fprop x, w -> y; bprop dy, w -> dx;
        accgrad x, dy -> dw."""
        x = (self.n, self.c) + tuple(self.input)
        w = (self.k, self.c) + tuple(_triple(self.kernel, self.rank, "kernel", 0)[:self.rank])
        y = (self.n, self.k) + self.output()
        return {"fprop": (x, w, y), "bprop": (y, w, x), "accgrad": (x, y, w)}[PASSES[_index(pass_, PASSES, "pass")]]


@dataclass
class Kernel:
    """One kernel of a plan: its emitted CUDA source and NVRTC's report."""
    name: str
    source: str
    grid: Tuple[int, int, int]
    block: Tuple[int, int, int]
    registers: int
    shared_bytes: int
    dynamic_shared_bytes: int
    stack_bytes: int
    spill_store_bytes: int
    spill_load_bytes: int
    compile_ms: float
    origin: str


@dataclass
class Candidate:
    """An algorithm and tuning AUTO considered: why it dropped out (status None: it ran or would
    plan), the cost model's and the measured milliseconds (None: none), its output's difference
    from the first candidate's, its workspace."""
    algo: str
    options: dict
    error: Optional[str]
    estimate_ms: Optional[float]
    ms: Optional[float]
    difference: Optional[float]
    workspace_bytes: int
    note: str


@dataclass
class Choice:
    """How a plan's algorithm was chosen (convgen_plan_choice)."""
    algo: str
    options: dict
    chosen_by: str
    effort: str
    ms: Optional[float]
    candidates: list = field(default_factory=list)
    winner: Optional[int] = None


def _options_dict(o):
    return {"workspace_limit": o.workspace_limit, "allow_tf32": bool(o.allow_tf32),
            "fourier_size": tuple(o.fourier_size), "winograd_m": tuple(o.winograd_m), "gemm": GEMMS[o.gemm]
            if 0 <= o.gemm < len(GEMMS) else o.gemm, "effort": EFFORTS[o.effort] if 0 <= o.effort < 3 else o.effort,
            "weights": WEIGHTS[o.weights] if 0 <= o.weights < len(WEIGHTS) else o.weights}


def _plan_options(workspace_limit=0, allow_tf32=False, fourier_size=(0, 0, 0), winograd_m=(0, 0, 0),
                  gemm="chosen", effort="measure", progress=None, weights="chosen"):
    o = _lib.PlanOptionsC(workspace_limit=int(workspace_limit), allow_tf32=int(bool(allow_tf32)),
                          gemm=_index(gemm, GEMMS, "gemm"), effort=_index(effort, EFFORTS, "effort"),
                          weights=_index(weights, WEIGHTS, "weights"))
    fs, wm = tuple(fourier_size), tuple(winograd_m)
    o.fourier_size[:] = fs + (0,) * (_lib.MAX_RANK - len(fs))
    o.winograd_m[:] = wm + (0,) * (_lib.MAX_RANK - len(wm))
    callback = None
    if progress is not None:
        callback = _lib.ProgressFn(lambda done, total, user: progress(done, total))
        o.progress = callback
    return o, callback


class _Owned:
    """A library handle this object owns: destroyed by close(), at the end of a `with` block, or
    when the object is collected; `handle` refuses once it is."""
    _what = "object"
    _handle = None

    def _destroy(self, handle):
        raise NotImplementedError

    def close(self):
        if self._handle:
            self._destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def handle(self):
        if not self._handle:
            raise ValueError("the %s was closed" % self._what)
        return self._handle


class Plan(_Owned):
    """A compiled plan (convgen_plan): made by Context.plan_conv, plan_fft or plan_pool.
    `kernels` are its kernels' sources and compile reports."""
    _what = "plan"

    def __init__(self, handle, context, kind, shapes=None, prepares=False):
        self._handle, self.context, self.kind, self._shapes = handle, context, kind, shapes
        self.prepares_weights = prepares

    def _destroy(self, handle):
        self.context._release_plan(handle)

    @property
    def workspace_size(self) -> int:
        """Bytes of device workspace execute needs (0 is common)."""
        size = ctypes.c_size_t()
        check(lib.convgen_plan_workspace_size(self.handle, ctypes.byref(size)))
        return size.value

    @property
    def kernels(self):
        out = []
        for i in range(lib.convgen_plan_kernel_count(self.handle)):
            info = _lib.KernelInfoC()
            check(lib.convgen_plan_kernel_info(self.handle, i, ctypes.byref(info)))
            out.append(Kernel(text(info.name), text(lib.convgen_plan_source(self.handle, i)), tuple(info.grid),
                              tuple(info.block), info.registers, info.shared_bytes, info.dynamic_shared_bytes,
                              info.stack_bytes, info.spill_store_bytes, info.spill_load_bytes, info.compile_ms,
                              ORIGINS[info.origin] if 0 <= info.origin < len(ORIGINS) else str(info.origin)))
        return out

    @property
    def choice(self) -> Choice:
        """What chose the algorithm, and for AUTO the candidates it weighed."""
        c = _lib.ChoiceC()
        check(lib.convgen_plan_choice(self.handle, ctypes.byref(c)))
        candidates = []
        for i in range(c.candidate_count):
            k = _lib.CandidateC()
            check(lib.convgen_plan_candidate(self.handle, i, ctypes.byref(k)))
            error = None if k.status == 0 else _lib.STATUS_NAMES[k.status]
            candidates.append(Candidate(ALGOS[k.algo], _options_dict(k.options), error,
                                        k.estimate_ms if k.estimate_ms >= 0 else None, k.ms if k.ms >= 0 else None,
                                        k.difference if k.difference >= 0 else None, k.workspace_bytes, text(k.note)))
        return Choice(ALGOS[c.algo], _options_dict(c.options), CHOSEN_BY[c.chosen_by], EFFORTS[c.effort],
                      c.ms if c.ms >= 0 else None, candidates, c.winner if c.winner >= 0 else None)

    # ---- execution ----

    def _device(self):
        return None if self.context.offline else self.context.device

    def _run(self, fn, arrays, names, shapes, workspace, stream, dtypes="f", uses_workspace=True):
        """fn(pointers..., [workspace, its bytes,] stream) on the operands checked against the
        plan (the last one written): the stream the one given, else the first an array's
        __cuda_array_interface__ names, else the default; an array that names another stream is
        waited for first. Consumed DLPack tensors are given back when the call returns."""
        s = stream_handle(stream)
        if s is None:
            s = next((a.__cuda_array_interface__.get("stream") for a in arrays
                      if hasattr(a, "__cuda_array_interface__") and
                      a.__cuda_array_interface__.get("version", 0) >= 3 and
                      a.__cuda_array_interface__.get("stream")), None)
        need = self.workspace_size if uses_workspace else 0
        if uses_workspace and workspace is None and need:
            raise ValueError("workspace: the plan needs %d bytes (plan.workspace_size); pass a device array or "
                             "pointer of at least that, or plan.alloc_workspace()'s" % need)
        with Operands() as ops:
            for i, (a, name) in enumerate(zip(arrays, names)):
                if a is None:
                    raise ValueError("%s is None" % name)
                ops.append(operand(a, name, shapes[i] if shapes else None, s, writable=i == len(arrays) - 1,
                                   dtypes=dtypes, device=self._device()))
            args = [o.pointer for o in ops]
            if uses_workspace:
                ws = operand(workspace, "workspace", None, s, writable=True, dtypes="", device=self._device())
                ops.append(ws)
                args += [ws.pointer if ws else None, (need if ws.nbytes is None else ws.nbytes) if ws else 0]
            for o in ops:
                if o is not None and o.stream not in (None, s) and not self.context.offline:
                    from ._driver import synchronize
                    synchronize(o.stream)  # the producer's work on its own stream, done first
            check(fn(self.handle, *args, ctypes.c_void_p(s)))

    def alloc_workspace(self):
        """A device buffer of workspace_size bytes (None where the plan needs none), in the
        context's device's primary context, freed when collected."""
        if self.context.offline:
            raise Error(4, "the plan's context is offline: it has no device to allocate on")
        need = self.workspace_size
        from ._driver import DeviceBuffer
        return DeviceBuffer(need, self.context.device) if need else None

    def _need(self, kind, what):
        if self.kind != kind:
            raise ValueError("%s runs a %s plan; this is a %s plan" % (what, kind, self.kind))

    def execute(self, in0, in1, out, workspace=None, stream=None, bias=None):
        """Runs the plan: fprop (x, w, y), bprop (dy, w, dx) or accgrad (x, dy, dw), `out`
        overwritten; `bias` (k floats) where the layer has the bias epilogue. Arrays: any with
        __cuda_array_interface__ or __dlpack__, or device pointers. `workspace`: a device array
        (its size checked) or pointer of workspace_size bytes. `stream`: a CUstream as an int or
        a PyTorch, CuPy or Numba stream (None: the arrays' own, else the default stream)."""
        self._need("conv", "execute")
        a, b, y = self._shapes
        if bias is None:
            self._run(lib.convgen_execute, (in0, in1, out), ("in0", "in1", "out"), (a, b, y), workspace, stream)
        else:
            self._run(lib.convgen_execute_bias, (in0, in1, bias, out), ("in0", "in1", "bias", "out"),
                      (a, b, (y[1],), y), workspace, stream)

    def prepare_weights(self, w, workspace, stream=None):
        """Transforms w into the workspace once (FFT and Winograd fprop/bprop); then
        execute_prepared runs without reading w, from that workspace."""
        self._need("conv", "prepare_weights")
        self._run(lib.convgen_prepare_weights, (w,), ("w",), (self._shapes[1],), workspace, stream)

    def execute_prepared(self, in0, out, workspace, stream=None, bias=None):
        """execute with the weights prepare_weights left in `workspace`."""
        self._need("conv", "execute_prepared")
        a, _, y = self._shapes
        if bias is None:
            self._run(lib.convgen_execute_prepared, (in0, out), ("in0", "out"), (a, y), workspace, stream)
        else:
            self._run(lib.convgen_execute_prepared_bias, (in0, bias, out), ("in0", "bias", "out"), (a, (y[1],), y),
                      workspace, stream)

    def execute_fft(self, inp, out, workspace=None, stream=None):
        """An FFT plan on inp into out: real float32 or complex64 data (shapes are the caller's
        to match the description: checked only for dtype, packing and device)."""
        self._need("fft", "execute_fft")
        self._run(lib.convgen_execute_fft, (inp, out), ("in", "out"), None, workspace, stream, dtypes="fc")

    def execute_pool(self, x, y, stream=None):
        """A pooling plan on x into y."""
        self._need("pool", "execute_pool")
        self._run(lib.convgen_execute_pool, (x, y), ("x", "y"), self._shapes, None, stream, uses_workspace=False)


# ---- contexts ----------------------------------------------------------------------------------

class Context(_Owned):
    """Where plans are made: a device (its ordinal) or, offline, an architecture only ("sm_90"),
    which renders and compiles kernels on a machine without a GPU. Closing it closes its plans
    first."""
    _what = "context"

    def __init__(self, device=0, offline=False, arch=None, cache_dir=None, disk_cache=True, sm_count=0):
        self._arch, self._cache = (arch.encode() if arch else None), (cache_dir.encode() if cache_dir else None)
        o = _lib.ContextOptionsC(device=device, offline=int(bool(offline)), arch=self._arch, cache_dir=self._cache,
                                 disk_cache=0 if disk_cache else -1, sm_count=sm_count)
        handle = ctypes.c_void_p()
        check(lib.convgen_context_create(ctypes.byref(o), ctypes.byref(handle)))
        # its plans' handles, destroyed before it however the objects are collected (a cycle's
        # finalizers run in any order): a plan closed after its context finds its handle gone
        self._live_plans = set()
        self._handle, self.offline, self.device = handle.value, bool(offline), device

    def _destroy(self, handle):
        for plan in self._live_plans:
            lib.convgen_plan_destroy(plan)
        self._live_plans.clear()
        lib.convgen_context_destroy(handle)

    def _release_plan(self, handle):
        if handle in self._live_plans:
            self._live_plans.discard(handle)
            lib.convgen_plan_destroy(handle)

    @property
    def arch(self) -> str:
        return text(lib.convgen_context_arch(self.handle))

    @property
    def device_name(self) -> Optional[str]:
        return text(lib.convgen_context_device_name(self.handle))

    def _keep(self, plan):
        self._live_plans.add(plan._handle)
        return plan

    def plan_conv(self, layer: Conv, pass_="fprop", algo="auto", **options) -> Plan:
        """A plan for one pass of `layer`: algo one of ALGOS; options workspace_limit, allow_tf32,
        fourier_size, winograd_m, gemm ("chosen", "cublas", "generated", "tensor"), effort ("measure",
        "estimate", "exhaustive"), progress (a callable of done, total), weights ("chosen", "before",
        "inside": winograd-fused's weights' transforms by a kernel before, or inside, the fused one)."""
        d = layer.c_desc()
        o, callback = _plan_options(**options)
        handle = ctypes.c_void_p()
        p = _index(pass_, PASSES, "pass")
        check(lib.convgen_plan_conv_ex(self.handle, ctypes.byref(d), p, _index(algo, ALGOS, "algo"), ctypes.byref(o),
                                       ctypes.byref(handle)))
        del callback  # AUTO called it during planning only
        plan = Plan(handle.value, self, "conv", layer.shapes(p))
        plan.prepares_weights = bool(lib.convgen_plan_prepares_weights(handle.value))
        return self._keep(plan)

    def plan_fft(self, desc: "FFT") -> Plan:
        d = desc.c_desc()
        handle = ctypes.c_void_p()
        check(lib.convgen_plan_fft(self.handle, ctypes.byref(d), ctypes.byref(handle)))
        return self._keep(Plan(handle.value, self, "fft"))

    def plan_pool(self, desc: "Pool") -> Plan:
        d = desc.c_desc()
        handle = ctypes.c_void_p()
        check(lib.convgen_plan_pool(self.handle, ctypes.byref(d), ctypes.byref(handle)))
        return self._keep(Plan(handle.value, self, "pool", desc.shapes()))


# ---- FFTs and pooling ----------------------------------------------------------------------------

FFT_TYPES = ("c2c", "r2c", "c2r")
POOL_MODES = ("max", "fragments", "interleave")


@dataclass(frozen=True)
class FFT:
    """A batched FFT (convgen_fft_desc; see convgen.h for each field): rank 1-3 of n points a side,
    type "c2c", "r2c" or "c2r", direction -1 / 1 (C2C), window and offset of the signal, pitches
    and strides (0: packed), layout "natural" / "transposed", order "natural" / "digit-reversed",
    scale (0: 1)."""
    rank: int
    n: int
    type: str = "r2c"
    direction: int = 0
    batch: int = 1
    channels: int = 1
    window: Sequence[int] = (0, 0, 0)
    offset: Sequence[int] = (0, 0, 0)
    pitch: int = 0
    plane_pitch: int = 0
    real_stride: Sequence[int] = (0, 0)
    spectrum_stride: Sequence[int] = (0, 0)
    layout: str = "natural"
    order: str = "natural"
    scale: float = 0.0

    def c_desc(self):
        d = _lib.FFTDescC(rank=self.rank, n=self.n, type=_index(self.type, FFT_TYPES, "type"),
                          direction=self.direction, batch=self.batch, channels=self.channels, pitch=self.pitch,
                          plane_pitch=self.plane_pitch, layout=_index(self.layout, ("natural", "transposed"), "layout"),
                          order=_index(self.order, ("natural", "digit-reversed"), "order"), scale=self.scale)
        d.window[:] = tuple(self.window) + (0,) * (3 - len(self.window))
        d.offset[:] = tuple(self.offset) + (0,) * (3 - len(self.offset))
        d.real_stride[:], d.spectrum_stride[:] = tuple(self.real_stride), tuple(self.spectrum_stride)
        return d


@dataclass(frozen=True)
class Pool:
    """Max pooling, max-pooling fragments or their interleaving (convgen_pool_desc), rank 2 or 3,
    window p a dimension (also the stride)."""
    mode: str
    n: int
    c: int
    input: Sequence[int]
    window: Sequence[int]

    def c_desc(self):
        r = len(tuple(self.input))
        d = _lib.PoolDescC(mode=_index(self.mode, POOL_MODES, "mode"), rank=r, n=self.n, c=self.c)
        d.in_[:] = _triple(self.input, r, "input", 0)
        d.window[:] = _triple(self.window, r, "window", 0)
        return d

    def output(self):
        """y's batch entries and extents (convgen_pool_output)."""
        batch, out = ctypes.c_int64(), _lib.Int64x3()
        d = self.c_desc()
        check(lib.convgen_pool_output(ctypes.byref(d), ctypes.byref(batch), out))
        return batch.value, tuple(out[:d.rank])

    def shapes(self):
        """x's and y's shapes: INTERLEAVE's x holds the fragments of n entries (f n of them)."""
        batch, out = self.output()
        fragments = 1
        for p in self.window if not isinstance(self.window, int) else (self.window,) * len(tuple(self.input)):
            fragments *= p
        x_batch = self.n * fragments if _index(self.mode, POOL_MODES, "mode") == 2 else self.n
        return (x_batch, self.c) + tuple(self.input), (batch, self.c) + out


# ---- emitting, without compiling -----------------------------------------------------------------

def emit(layer: Conv, pass_="fprop", algo="direct", kernel=0) -> str:
    """The CUDA source of kernel `kernel` of a plan, rendered without compiling (no GPU, no NVRTC)."""
    d = layer.c_desc()
    source = ctypes.c_void_p()
    check(lib.convgen_emit(ctypes.byref(d), _index(pass_, PASSES, "pass"), _index(algo, ALGOS, "algo"), kernel,
                           ctypes.byref(source)))
    return _lib.take_string(source)


def emit_fft(desc: FFT, kernel=0) -> str:
    d = desc.c_desc()
    source = ctypes.c_void_p()
    check(lib.convgen_emit_fft(ctypes.byref(d), kernel, ctypes.byref(source)))
    return _lib.take_string(source)


def emit_pool(desc: Pool) -> str:
    d = desc.c_desc()
    source = ctypes.c_void_p()
    check(lib.convgen_emit_pool(ctypes.byref(d), ctypes.byref(source)))
    return _lib.take_string(source)


# ---- wisdom --------------------------------------------------------------------------------------

class wisdom:
    """AUTO's choices kept per GPU and layer (convgen.h's wisdom): the process's, merged from and
    written to text files."""

    @staticmethod
    def import_file(path):
        check(lib.convgen_wisdom_import(str(path).encode()))

    @staticmethod
    def import_string(text_):
        check(lib.convgen_wisdom_import_string(text_.encode()))

    @staticmethod
    def export_file(path):
        check(lib.convgen_wisdom_export(str(path).encode()))

    @staticmethod
    def export_string() -> str:
        pointer = ctypes.c_void_p()
        check(lib.convgen_wisdom_export_string(ctypes.byref(pointer)))
        return _lib.take_string(pointer)

    @staticmethod
    def forget():
        lib.convgen_wisdom_forget()

    @staticmethod
    def count() -> int:
        return lib.convgen_wisdom_count()


__all__ = ["ALGOS", "PASSES", "EFFORTS", "Error", "Conv", "FFT", "Pool", "Plan", "Kernel", "Choice", "Candidate",
           "Context", "emit", "emit_fft", "emit_pool", "wisdom"]
