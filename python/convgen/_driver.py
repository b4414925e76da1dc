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


class _Current:
    """The device's primary context made current for a block."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        cuda, ctx, dev = _driver(), ctypes.c_void_p(), ctypes.c_int()
        _call(cuda.cuDeviceGet(ctypes.byref(dev), self.device), "cuDeviceGet")
        _call(cuda.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
        _call(cuda.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")
        self.dev = dev
        return self

    def __exit__(self, *exc):
        popped = ctypes.c_void_p()
        _driver().cuCtxPopCurrent_v2(ctypes.byref(popped))
        _driver().cuDevicePrimaryCtxRelease_v2(self.dev)


class DeviceBuffer:
    """`nbytes` of device memory (freed when collected), as a flat fp32 array of
    __cuda_array_interface__ (shape: nbytes // 4, or `shape`), copied to and from host bytes."""

    def __init__(self, nbytes, device=0, shape=None):
        self.nbytes, self.device = int(nbytes), device
        self.shape = tuple(shape) if shape is not None else (self.nbytes // 4,)
        self.pointer = ctypes.c_uint64()
        with _Current(device):
            _call(_driver().cuMemAlloc_v2(ctypes.byref(self.pointer), ctypes.c_size_t(max(self.nbytes, 1))),
                  "cuMemAlloc (%d bytes)" % self.nbytes)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": "<f4", "data": (self.pointer.value, False), "strides": None,
                "version": 3, "stream": None}

    def upload(self, data: bytes):
        with _Current(self.device):
            _call(_driver().cuMemcpyHtoD_v2(self.pointer, data, ctypes.c_size_t(len(data))), "cuMemcpyHtoD")

    def download(self) -> bytes:
        out = ctypes.create_string_buffer(self.nbytes)
        with _Current(self.device):
            _call(_driver().cuCtxSynchronize(), "cuCtxSynchronize")
            _call(_driver().cuMemcpyDtoH_v2(out, self.pointer, ctypes.c_size_t(self.nbytes)), "cuMemcpyDtoH")
        return out.raw

    def __del__(self):
        if getattr(self, "pointer", None) is not None and self.pointer.value and _cuda is not None:
            with _Current(self.device):
                _cuda.cuMemFree_v2(self.pointer)
            self.pointer = None
