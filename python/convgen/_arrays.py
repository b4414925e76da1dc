"""Device arrays from any library: an object with __cuda_array_interface__ (CuPy, Numba,
PyTorch), one with __dlpack__ (JAX, PyTorch, CuPy...), or a raw device pointer (an int). Each is
checked against what the plan expects (fp32, the shape, packed in C order, on a CUDA device)
before anything runs; a mismatch raises ValueError naming the operand and the field."""

import ctypes

_KDL_CUDA, _KDL_CUDA_MANAGED = 2, 13
_KDL_FLOAT = 2


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


def _packed_strides(shape, item):
    strides, step = [], item
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))


def _check(name, shape, expect, packed, typestr=None, dl_dtype=None):
    if typestr is not None and typestr not in ("<f4", "=f4", "|f4"):
        raise ValueError("%s: dtype %s, expected float32 ('<f4')" % (name, typestr))
    if dl_dtype is not None and (dl_dtype.code, dl_dtype.bits, dl_dtype.lanes) != (_KDL_FLOAT, 32, 1):
        raise ValueError("%s: DLPack dtype (code %d, %d bits, %d lanes), expected float32" %
                         (name, dl_dtype.code, dl_dtype.bits, dl_dtype.lanes))
    if expect is not None and tuple(shape) != tuple(expect):
        raise ValueError("%s: shape %s, expected %s" % (name, tuple(shape), tuple(expect)))
    if not packed:
        raise ValueError("%s: not packed in C order (its strides skip elements); pass a contiguous array" % name)


class Operand:
    """A checked device operand: its address and the stream its producer named (None: none).
    release() (or the `with` block's end) gives a consumed DLPack tensor back once the call that
    used it has returned (the work it enqueued keeps the producer's memory: the producer is the
    caller's, alive across the call)."""

    def __init__(self, pointer, stream=None, keep=None):
        self.pointer, self.stream, self._keep = pointer, stream, keep

    def release(self):
        if isinstance(self._keep, _Released):
            self._keep.release()
        self._keep = None


def _from_interface(obj, name, expect, stream, writable):
    cai = obj.__cuda_array_interface__
    shape, (pointer, readonly) = tuple(cai["shape"]), cai["data"]
    strides = cai.get("strides")
    packed = strides is None or tuple(strides) == _packed_strides(shape, 4)
    _check(name, shape, expect, packed, typestr=cai["typestr"])
    if readonly and writable:
        raise ValueError("%s: read-only array, but written" % name)
    return Operand(pointer or 0, cai.get("stream", stream) if cai.get("version", 0) >= 3 else stream, obj)


def _from_dlpack(obj, name, expect, stream):
    device_type, _ = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_KDL_CUDA, 0)
    if device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError("%s: DLPack device type %d is not a CUDA device" % (name, device_type))
    try:
        capsule = obj.__dlpack__(stream=stream if stream is not None else 1)  # 1: the legacy default stream
    except TypeError:
        capsule = obj.__dlpack__()
    if not _capsule_is_valid(capsule, b"dltensor"):
        raise ValueError("%s: __dlpack__ did not return a 'dltensor' capsule" % name)
    managed = ctypes.cast(_capsule_pointer(capsule, b"dltensor"), ctypes.POINTER(_DLManagedTensor))
    t = managed.contents.dl_tensor
    shape = tuple(t.shape[i] for i in range(t.ndim))
    packed = not t.strides or tuple(t.strides[i] * 4 for i in range(t.ndim)) == _packed_strides(shape, 4)
    if t.device.device_type not in (_KDL_CUDA, _KDL_CUDA_MANAGED):
        raise ValueError("%s: DLPack device type %d is not a CUDA device" % (name, t.device.device_type))
    _check(name, shape, expect, packed, dl_dtype=t.dtype)
    pointer = (t.data or 0) + t.byte_offset
    # consumed: renamed so that the capsule's destructor leaves the tensor to us, released with
    # the operand (the producer's object, which owns the memory, is the caller's)
    _capsule_rename(capsule, b"used_dltensor")
    return Operand(pointer, stream, _Released(managed, obj))


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


def operand(obj, name, expect=None, stream=None, writable=False):
    """obj as a device operand called `name`, of shape `expect` (None: not checked; raw
    pointers are never checked) and written where `writable`, or None for None."""
    if obj is None:
        return None
    if isinstance(obj, int):
        if obj < 0:
            raise ValueError("%s: a device pointer must be >= 0" % name)
        return Operand(obj, stream)
    if hasattr(obj, "__cuda_array_interface__"):
        return _from_interface(obj, name, expect, stream, writable)
    if hasattr(obj, "__dlpack__"):
        return _from_dlpack(obj, name, expect, stream)  # (unversioned DLPack has no read-only flag)
    raise TypeError("%s: a %s is not a device array (no __cuda_array_interface__ or __dlpack__) nor a pointer" %
                    (name, type(obj).__name__))
