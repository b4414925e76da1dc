"""libconvgen through ctypes: the library found and loaded, its structs mirrored field for field
from convgen.h, its functions declared, and each status turned into an exception.

Nothing here is compiled: the structs below are convgen.h's, in its order, and
tests/test_python.py checks their sizes and offsets against the C compiler's."""

import ctypes
import os

MAX_RANK = 3

SUCCESS, COMPILE = 0, 6
STATUS_NAMES = (
    "SUCCESS", "INVALID_VALUE", "NOT_SUPPORTED", "OUT_OF_MEMORY", "NO_DEVICE", "CUDA", "COMPILE",
    "TEMPLATE", "IO", "INSUFFICIENT_WORKSPACE", "INTERNAL", "WORKSPACE_LIMIT",
)


class Error(Exception):
    """A failed libconvgen call: `status` (convgen_status), `status_name` ("INVALID_VALUE"),
    `message` (convgen_last_error: names the bad field) and, for COMPILE, `compile_log` (NVRTC's)."""

    def __init__(self, status, message, compile_log=""):
        self.status = status
        self.status_name = STATUS_NAMES[status] if 0 <= status < len(STATUS_NAMES) else str(status)
        self.message = message
        self.compile_log = compile_log
        text = "%s: %s" % (self.status_name, message)
        if compile_log:
            text += "\n" + compile_log
        super().__init__(text)


# ---- the structs (convgen.h) -------------------------------------------------------------------

Int64x3 = ctypes.c_int64 * MAX_RANK
IntX3 = ctypes.c_int * MAX_RANK
ProgressFn = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


class ConvDescC(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("n", ctypes.c_int64), ("c", ctypes.c_int64), ("k", ctypes.c_int64),
                ("in_", Int64x3), ("kernel", Int64x3), ("pad_before", Int64x3), ("pad_after", Int64x3),
                ("stride", Int64x3), ("dilation", Int64x3), ("mode", ctypes.c_int), ("epilogue", ctypes.c_uint)]


class ContextOptionsC(ctypes.Structure):
    _fields_ = [("device", ctypes.c_int), ("offline", ctypes.c_int), ("arch", ctypes.c_char_p),
                ("cache_dir", ctypes.c_char_p), ("disk_cache", ctypes.c_int), ("sm_count", ctypes.c_int)]


class PlanOptionsC(ctypes.Structure):
    _fields_ = [("workspace_limit", ctypes.c_size_t), ("allow_tf32", ctypes.c_int), ("fourier_size", Int64x3),
                ("winograd_m", IntX3), ("gemm", ctypes.c_int), ("effort", ctypes.c_int),
                ("progress", ProgressFn), ("progress_user", ctypes.c_void_p), ("weights", ctypes.c_int)]


class KernelInfoC(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("grid", ctypes.c_uint * 3), ("block", ctypes.c_uint * 3),
                ("registers", ctypes.c_int), ("shared_bytes", ctypes.c_int), ("dynamic_shared_bytes", ctypes.c_int),
                ("stack_bytes", ctypes.c_int), ("spill_store_bytes", ctypes.c_int), ("spill_load_bytes", ctypes.c_int),
                ("compile_ms", ctypes.c_double), ("origin", ctypes.c_int)]


class CandidateC(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("options", PlanOptionsC), ("status", ctypes.c_int),
                ("estimate_ms", ctypes.c_double), ("ms", ctypes.c_double), ("difference", ctypes.c_double),
                ("workspace_bytes", ctypes.c_size_t), ("note", ctypes.c_char * 160)]


class ChoiceC(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_int), ("options", PlanOptionsC), ("chosen_by", ctypes.c_int),
                ("effort", ctypes.c_int), ("ms", ctypes.c_double), ("candidate_count", ctypes.c_int),
                ("winner", ctypes.c_int)]


class FFTDescC(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int), ("n", ctypes.c_int), ("type", ctypes.c_int), ("direction", ctypes.c_int),
                ("batch", ctypes.c_int64), ("channels", ctypes.c_int64), ("window", IntX3), ("offset", IntX3),
                ("pitch", ctypes.c_int64), ("plane_pitch", ctypes.c_int64), ("real_stride", ctypes.c_int64 * 2),
                ("spectrum_stride", ctypes.c_int64 * 2), ("layout", ctypes.c_int), ("order", ctypes.c_int),
                ("scale", ctypes.c_float)]


class PoolDescC(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("rank", ctypes.c_int), ("n", ctypes.c_int64), ("c", ctypes.c_int64),
                ("in_", Int64x3), ("window", IntX3)]


# Each struct's C name, for the layout check.
C_NAMES = {ConvDescC: "convgen_conv_desc", ContextOptionsC: "convgen_context_options",
           PlanOptionsC: "convgen_plan_options", KernelInfoC: "convgen_kernel_info", CandidateC: "convgen_candidate",
           ChoiceC: "convgen_choice", FFTDescC: "convgen_fft_desc", PoolDescC: "convgen_pool_desc"}


# ---- the library -------------------------------------------------------------------------------

def _candidates():
    """Where libconvgen.so.0 may be: $CONVGEN_LIBRARY; the install's lib folder (written at
    `ninja install` into _paths.py); the build folder beside this source tree; the loader's path."""
    env = os.environ.get("CONVGEN_LIBRARY")
    if env:
        return [env]
    found = []
    try:
        from . import _paths  # written by ninja install
        found.append(os.path.join(_paths.LIBDIR, "libconvgen.so.0"))
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    found.append(os.path.join(here, "..", "..", "build", "libconvgen.so.0"))  # a source tree, built
    found.append("libconvgen.so.0")
    return found


def _load():
    tried = []
    for path in _candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(path + " (no such file)")
            continue
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("convgen: cannot load libconvgen.so.0; set CONVGEN_LIBRARY to its path. Tried: " +
                      "; ".join(tried))


lib = _load()

_P = ctypes.c_void_p
_S = ctypes.c_int  # convgen_status
_PROTOTYPES = {
    "convgen_status_string": (ctypes.c_char_p, [ctypes.c_int]),
    "convgen_last_error": (ctypes.c_char_p, []),
    "convgen_last_compile_log": (ctypes.c_char_p, []),
    "convgen_output_size": (_S, [ctypes.POINTER(ConvDescC), Int64x3]),
    "convgen_algo_name": (ctypes.c_char_p, [ctypes.c_int]),
    "convgen_pass_name": (ctypes.c_char_p, [ctypes.c_int]),
    "convgen_context_create": (_S, [ctypes.POINTER(ContextOptionsC), ctypes.POINTER(_P)]),
    "convgen_context_destroy": (None, [_P]),
    "convgen_context_arch": (ctypes.c_char_p, [_P]),
    "convgen_context_device_name": (ctypes.c_char_p, [_P]),
    "convgen_plan_conv_ex": (_S, [_P, ctypes.POINTER(ConvDescC), ctypes.c_int, ctypes.c_int,
                                  ctypes.POINTER(PlanOptionsC), ctypes.POINTER(_P)]),
    "convgen_plan_destroy": (None, [_P]),
    "convgen_plan_workspace_size": (_S, [_P, ctypes.POINTER(ctypes.c_size_t)]),
    "convgen_execute": (_S, [_P, _P, _P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_execute_bias": (_S, [_P, _P, _P, _P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_plan_prepares_weights": (ctypes.c_int, [_P]),
    "convgen_prepare_weights": (_S, [_P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_execute_prepared": (_S, [_P, _P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_execute_prepared_bias": (_S, [_P, _P, _P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_plan_kernel_count": (ctypes.c_int, [_P]),
    "convgen_plan_source": (ctypes.c_char_p, [_P, ctypes.c_int]),
    "convgen_plan_kernel_info": (_S, [_P, ctypes.c_int, ctypes.POINTER(KernelInfoC)]),
    "convgen_plan_choice": (_S, [_P, ctypes.POINTER(ChoiceC)]),
    "convgen_plan_candidate": (_S, [_P, ctypes.c_int, ctypes.POINTER(CandidateC)]),
    "convgen_wisdom_import": (_S, [ctypes.c_char_p]),
    "convgen_wisdom_import_string": (_S, [ctypes.c_char_p]),
    "convgen_wisdom_export": (_S, [ctypes.c_char_p]),
    "convgen_wisdom_export_string": (_S, [ctypes.POINTER(_P)]),
    "convgen_wisdom_forget": (None, []),
    "convgen_wisdom_count": (ctypes.c_int, []),
    "convgen_emit": (_S, [ctypes.POINTER(ConvDescC), ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_P)]),
    "convgen_plan_fft": (_S, [_P, ctypes.POINTER(FFTDescC), ctypes.POINTER(_P)]),
    "convgen_execute_fft": (_S, [_P, _P, _P, _P, ctypes.c_size_t, _P]),
    "convgen_emit_fft": (_S, [ctypes.POINTER(FFTDescC), ctypes.c_int, ctypes.POINTER(_P)]),
    "convgen_pool_output": (_S, [ctypes.POINTER(PoolDescC), ctypes.POINTER(ctypes.c_int64), Int64x3]),
    "convgen_plan_pool": (_S, [_P, ctypes.POINTER(PoolDescC), ctypes.POINTER(_P)]),
    "convgen_execute_pool": (_S, [_P, _P, _P, _P]),
    "convgen_emit_pool": (_S, [ctypes.POINTER(PoolDescC), ctypes.POINTER(_P)]),
}
for _name, (_restype, _argtypes) in _PROTOTYPES.items():
    _fn = getattr(lib, _name)
    _fn.restype, _fn.argtypes = _restype, _argtypes

_libc = ctypes.CDLL(None)
_libc.free.argtypes, _libc.free.restype = [_P], None


def text(b):
    return b.decode("utf-8", "replace") if b is not None else None


def check(status):
    """Raises Error for a failed status, with the library's message and compile log."""
    if status != SUCCESS:
        log = (text(lib.convgen_last_compile_log()) or "") if status == COMPILE else ""
        raise Error(status, text(lib.convgen_last_error()) or text(lib.convgen_status_string(status)), log)


def take_string(pointer):
    """A malloc'ed C string the library handed over, as str; freed."""
    try:
        return ctypes.string_at(pointer).decode("utf-8", "replace")
    finally:
        _libc.free(pointer)
