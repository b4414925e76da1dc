"""convgen from Python: fully specialized CUDA convolution kernels, generated per layer shape and
JIT-compiled with NVRTC, over libconvgen through ctypes (no compiled extension).

    import convgen
    ctx = convgen.Context()                                  # device 0; offline=True, arch="sm_90": no GPU
    layer = convgen.Conv(n=8, c=64, k=64, input=(56, 56), kernel=(3, 3), pad=1)
    plan = ctx.plan_conv(layer, "fprop", "auto")             # from wisdom, timed, or estimated
    plan.execute(x, w, y)                                    # CuPy / PyTorch / Numba / JAX arrays
    print(plan.choice.algo, plan.kernels[0].source[:400])    # what won, and its emitted source

PyTorch users: `import convgen.nn` (convgen.nn.Conv, a Module whose forward and backward are
convgen's three passes); the package itself never imports torch.

The library is found through $CONVGEN_LIBRARY, the prefix `ninja install` put it in, or the
build folder of this source tree."""

from ._lib import Error
from .core import (ALGOS, EFFORTS, FFT, PASSES, Candidate, Choice, Context, Conv, Kernel, Plan, Pool, emit,
                   emit_fft, emit_pool, wisdom)

__version__ = "0.1.0"
__all__ = ["ALGOS", "PASSES", "EFFORTS", "Error", "Conv", "FFT", "Pool", "Plan", "Kernel", "Choice", "Candidate",
           "Context", "emit", "emit_fft", "emit_pool", "wisdom"]
