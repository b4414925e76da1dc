"""Device arrays from any library: an object with __cuda_array_interface__ (CuPy, Numba,
PyTorch), one with __dlpack__ (JAX, PyTorch, CuPy...), or a raw device pointer (an int). Each is
checked against what the plan expects (fp32, the shape, packed in C order, on a CUDA device)
before anything runs; a mismatch raises ValueError naming the operand and the field."""

import ctypes

_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13
_KDL_FLOAT, _KDL_COMPLEX = 2, 5


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                             ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor)))]

_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype, _capsule_is_valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
_capsule_rename = ctypes.pythonapi.PyCapsule_SetName
_capsule_rename.restype, _capsule_rename.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]


def _packed(shape, strides, item):
    """Whether byte strides (None: packed) are C order's; an extent of 1 may have any stride."""
    if strides is None:
        return True
    step = item
    for extent, stride in zip(reversed(shape), reversed(tuple(strides))):
        if extent != 1 and stride != step:
            return False
        step *= extent
    return True


def _check(name, shape, expect, strides, kind, item, dtypes):
    """shape and dtype kind ("f" float32, "c" complex64, "?" other, of `item` bytes) against what
    `dtypes` allows ("f", "fc", or "" for any), `expect` (None: any shape), and C order."""
    if dtypes and kind not in dtypes:
        raise ValueError("%s: dtype is not %s" % (name, " or ".join({"f": "float32", "c": "complex64"}[k] for k in dtypes)))
    if expect is not None and tuple(shape) != tuple(expect):
        raise ValueError("%s: shape %s, expected %s" % (name, tuple(shape), tuple(expect)))
    if not _packed(shape, strides, item):
        raise ValueError("%s: not packed in C order (its strides skip elements); pass a contiguous array" % name)


class Operand:
    """A checked device operand: its address, its bytes (None for a raw pointer) and the stream
    its producer named (None: none). release() (or the end of the Operands' `with` block) gives a
    consumed DLPack tensor back once the call that used it has returned (the work it enqueued
    keeps the producer's memory: the producer is the caller's, alive across the call)."""

    def __init__(self, pointer, nbytes=None, stream=None, keep=None):
        self.pointer, self.nbytes, self.stream, self._keep = pointer, nbytes, stream, keep

    def release(self):
        if isinstance(self._keep, _Released):
            self._keep.release()
        self._keep = None


def _elements(shape):
    count = 1
    for extent in shape:
        count *= extent
    return count


def _typestr_kind(typestr):
    """'<f4' -> 'f', '<c8' -> 'c', anything else '?'."""
    order, kind, size = typestr[0], typestr[1], typestr[2:]
    if order not in "<=|" or (kind, size) not in (("f", "4"), ("c", "8")):
        return "?"
    return kind


def _from_interface(obj, name, expect, dtypes, writable, device):
    cai = obj.__cuda_array_interface__
    shape, (pointer, readonly) = tuple(cai["shape"]), cai["data"]
    kind = _typestr_kind(cai["typestr"])
    if dtypes and kind == "?":
        raise ValueError("%s: dtype %s, expected %s" % (name, cai["typestr"], "float32 ('<f4')" if dtypes == "f" else
                                                       "float32 or complex64"))
    item = int(cai["typestr"][2:] or 1)
    _check(name, shape, expect, cai.get("strides"), kind, item, dtypes)
    if readonly and writable:
        raise ValueError("%s: read-only array, but written" % name)
    if device is not None and pointer:
        from ._driver import pointer_device
        on = pointer_device(pointer)
        if on is not None and on != device:
            raise ValueError("%s: on device %d, the plan's context on device %d" % (name, on, device))
    stream = cai.get("stream") if cai.get("version", 0) >= 3 else None
    return Operand(pointer or 0, _elements(shape) * item, stream, obj)


def _from_dlpack(obj, name, expect, dtypes, stream, device):
    device_type, device_id = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_KDL_CUDA, None)
    if device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError("%s: DLPack device type %d is not a CUDA device" % (name, device_type))
    if device is not None and device_id is not None and device_id != device:
        raise ValueError("%s: on device %d, the plan's context on device %d" % (name, device_id, device))
    # the stream the consumer will use: 1 is the legacy default stream (0 is not allowed)
    capsule = obj.__dlpack__(stream=stream if stream else 1)
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise ValueError("%s: __dlpack__ did not return a 'dltensor' capsule" % name)
    managed = ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    # consumed: renamed so that the capsule's destructor leaves the tensor to us; from here on
    # the Operand's release() calls its deleter, whatever the checks below say
    _capsule_rename(capsule, b"used_dltensor")
    op = Operand(0, None, None, _Released(managed, obj))
    try:
        t = managed.contents.dl_tensor
        shape = tuple(t.shape[i] for i in range(t.ndim))
        kind = {(_KDL_FLOAT, 32): "f", (_KDL_COMPLEX, 64): "c"}.get((t.dtype.code, t.dtype.bits), "?")
        if t.dtype.lanes != 1:
            kind = "?"
        if dtypes and kind == "?":
            raise ValueError("%s: DLPack dtype (code %d, %d bits, %d lanes), expected %s" %
                             (name, t.dtype.code, t.dtype.bits, t.dtype.lanes,
                              "float32" if dtypes == "f" else "float32 or complex64"))
        item = max(t.dtype.bits // 8, 1) * t.dtype.lanes
        strides = None if not t.strides else tuple(t.strides[i] * item for i in range(t.ndim))
        _check(name, shape, expect, strides, kind, item, dtypes)
        if t.device.device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
            raise ValueError("%s: DLPack device type %d is not a CUDA device" % (name, t.device.device_type))
        op.pointer = (t.data or 0) + t.byte_offset
        op.nbytes = _elements(shape) * item
        return op
    except BaseException:
        op.release()
        raise


class _Released:
    """Calls a consumed DLPack tensor's deleter when the operand goes."""

    def __init__(self, managed, owner):
        self.managed, self.owner = managed, owner

    def release(self):
        if self.managed is not None:
            deleter, managed = self.managed.contents.deleter, self.managed
            self.managed = self.owner = None
            if deleter:
                deleter(managed)

    def __del__(self):
        self.release()


class Operands(list):
    """The operands of one call, released when the `with` block ends however it ends."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for o in self:
            if o is not None:
                o.release()


def operand(obj, name, expect=None, stream=None, writable=False, dtypes="f", device=None):
    """obj as a device operand called `name`: of shape `expect` (None: not checked; raw pointers
    are never checked), of a dtype kind in `dtypes` ("f" float32, "fc" also complex64, "" any),
    written where `writable`, on CUDA device `device` where known (None: not checked); `stream`
    the one the call runs on (what a DLPack producer is told). None for None."""
    if obj is None:
        return None
    if isinstance(obj, int):
        if obj < 0:
            raise ValueError("%s: a device pointer must be >= 0" % name)
        return Operand(obj)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_interface(obj, name, expect, dtypes, writable, device)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, name, expect, dtypes, stream, device)  # (unversioned DLPack has no read-only flag)
    raise TypeError("%s: a %s is not a device array (no __cuda_array_interface__ or __dlpack__) nor a pointer" %
                    (name, type(obj).__name__))


def stream_handle(stream):
    """A stream given as an int (a CUstream; 0 or None: the default), or an object that carries one:
    PyTorch's (cuda_stream), CuPy's (ptr), Numba's (handle)."""
    if stream is None or isinstance(stream, int):
        return stream or None
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is not None:
            value = getattr(value, "value", value)  # Numba's handle is a c_void_p
            return int(value) or None
    raise TypeError("stream: a %s is neither a CUstream (int) nor a stream object (cuda_stream, ptr or handle)" %
                    type(stream).__name__)
