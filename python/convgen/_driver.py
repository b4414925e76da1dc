"""Device memory without a second library: the CUDA driver (libcuda.so.1) through ctypes, in the
device's primary context (the one libconvgen's plans run in). For workspaces a plan asks for
(Context.alloc), and for the tests' own device arrays."""

import ctypes

_cuda = None


def _driver():
    global _cuda
    if _cuda is None:
        try:
            cuda = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError("no CUDA driver: cannot load libcuda.so.1 (%s)" % e) from None
        _call(cuda.cuInit(0), "cuInit")
        _cuda = cuda
    return _cuda


def _call(result, what):
    if result != 0:
        raise RuntimeError("%s failed: CUresult %d" % (what, result))


def _retain(device):
    """The device's primary context, retained (the caller releases it): (context, device)."""
    cuda, ctx, dev = _driver(), ctypes.c_void_p(), ctypes.c_int()
    _call(cuda.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
    _call(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    return ctx, dev


class _Current:
    """A retained primary context made current for a block."""

    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        _call(_driver().cuCtxPushCurrent_v2(self.ctx), "cuCtxPushCurrent")
        return self

    def __exit__(self, *exc):
        popped = ctypes.c_void_p()
        _driver().cuCtxPopCurrent_v2(ctypes.byref(popped))


def pointer_device(pointer):
    """The ordinal of the device a pointer's memory is on, or None where the driver cannot say
    (no driver, host memory, a pointer it does not know)."""
    try:
        cuda = _driver()
    except RuntimeError:
        return None
    ordinal = ctypes.c_int()
    CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9
    if cuda.cuPointerGetAttribute(ctypes.byref(ordinal), CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                  ctypes.c_uint64(pointer)) != 0:
        return None
    return ordinal.value


def synchronize(stream):
    """Waits for a stream (a CUstream as an int; 1: the legacy default stream, 2: per-thread)."""
    _call(_driver().cuStreamSynchronize(ctypes.c_void_p(stream)), "cuStreamSynchronize")


def _elements(shape):
    count = 1
    for extent in shape:
        count *= extent
    return count


class DeviceBuffer:
    """A packed fp32 array of __cuda_array_interface__ in device memory, of `shape` (None: as many
    floats as hold `nbytes`), copied to and from host bytes; freed when collected. It holds the
    device's primary context (libconvgen's) for as long as it lives."""

    def __init__(self, nbytes, device=0, shape=None):
        self.shape = tuple(shape) if shape is not None else ((int(nbytes) + 3) // 4,)
        self.nbytes, self.device = 4 * _elements(self.shape), device
        self.pointer = ctypes.c_uint64()
        self._ctx, self._dev = _retain(device)
        try:
            with _Current(self._ctx):
                _call(_driver().cuMemAlloc_v2(ctypes.byref(self.pointer), ctypes.c_size_t(max(self.nbytes, 1))),
                      "cuMemAlloc (%d bytes)" % self.nbytes)
        except BaseException:
            _driver().cuDevicePrimaryCtxRelease_v2(self._dev)
            self._ctx = None
            raise

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": "<f4", "data": (self.pointer.value, False), "strides": None,
                "version": 3, "stream": None}

    def upload(self, data: bytes):
        with _Current(self._ctx):
            _call(_driver().cuMemcpyHtoD_v2(self.pointer, data, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def download(self) -> bytes:
        out = ctypes.create_string_buffer(self.nbytes)
        with _Current(self._ctx):
            _call(_driver().cuCtxSynchronize(), "cuCtxSynchronize")
            _call(_driver().cuMemcpyDtoH_v2(out, self.pointer, ctypes.c_size_t(self.nbytes)), "cuMemcpyDtoH")
        return out.raw

    def __del__(self):
        if getattr(self, "_ctx", None) is None or _cuda is None:
            return
        with _Current(self._ctx):
            _cuda.cuMemFree_v2(self.pointer)
        _cuda.cuDevicePrimaryCtxRelease_v2(self._dev)
        self._ctx = None
