"""convgen.nn on a GPU with PyTorch: the Module's forward and its gradients (x, weight, bias)
through torch.autograd, for layers of rank 1 to 3 with padding, stride, dilation, bias and
ReLU, each against the float64 reference (reference.py: fprop, then bprop and accgrad of dy
masked by y > 0 after a ReLU; the bias gradient as the sum of that). Every float32 tensor
allocated while the layer runs (y, dx, dw) starts as NaN. Offline, that `import convgen` needs no torch
and `import convgen.nn` without it says so. Runs under pytest or alone (exit 3 when skipped)."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import convgen  # noqa: E402
from device import why_no_gpu  # noqa: E402

try:
    import numpy as np
    import reference
except ImportError:
    np = None
try:
    import torch
except ImportError:
    torch = None


def _why_not():
    if np is None:
        return "no numpy"
    if torch is None:
        return "no PyTorch (convgen.nn is for it; convgen itself does not need it)"
    if not torch.cuda.is_available():
        return "PyTorch sees no GPU"
    return why_no_gpu()


WHY_NOT = _why_not()

try:
    import pytest
    gpu = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))
    no_torch = pytest.mark.skipif(torch is not None, reason="PyTorch is installed here")
except ImportError:
    pytest = None
    gpu = no_torch = lambda f: f  # noqa: E731

# rank, channels in and out, input, kernel, padding, stride, dilation, bias, relu
LAYERS = [
    (1, 3, 4, (29,), (5,), 2, 1, 1, True, False),
    (2, 4, 6, (13, 11), (3, 3), 1, 2, 1, True, True),
    (2, 3, 5, (12, 12), (3, 2), 0, 1, 2, False, True),
    (3, 2, 4, (9, 8, 7), (3, 3, 3), 1, 1, 1, True, True),
]
# Relative error allowed against float64, by the algorithm auto chose (as test_gpu.py's)
TOLERANCE = {"direct": 1e-5}
DEFAULT_TOLERANCE = 1e-4


class nan_allocations:
    """For a block: torch.empty and torch.empty_like of float32 give NaN, not whatever the
    memory held (convgen.nn allocates its outputs through them), so an output never written
    shows."""

    def __enter__(self):
        self.saved = torch.empty, torch.empty_like

        def poisoned(make):
            def wrapper(*args, **kwargs):
                t = make(*args, **kwargs)
                return t.fill_(float("nan")) if t.dtype == torch.float32 else t
            return wrapper
        torch.empty, torch.empty_like = poisoned(torch.empty), poisoned(torch.empty_like)
        return self

    def __exit__(self, *exc):
        torch.empty, torch.empty_like = self.saved


def relative(got, want):
    scale = np.linalg.norm(want)
    return np.linalg.norm(got - want) / (scale if scale > 0 else 1.0)


@gpu
def test_module_forward_and_gradients_against_the_reference():
    import convgen.nn
    rng = np.random.default_rng(31)
    worst = 0.0
    for rank, cin, cout, extent, kernel, pad, stride, dilation, bias, relu in LAYERS:
        conv = convgen.nn.Conv(cin, cout, kernel, padding=pad, stride=stride, dilation=dilation, bias=bias,
                               relu=relu).cuda()
        x64 = rng.uniform(-1, 1, (2, cin) + extent)
        x = torch.tensor(x64, dtype=torch.float32, device="cuda", requires_grad=True)
        layer = conv.layer(x.shape, epilogue=False)
        with nan_allocations():
            y = conv(x)
        w64 = conv.weight.detach().double().cpu().numpy()
        want = reference.fprop(layer, x.detach().double().cpu().numpy(), w64)
        if bias:
            want += conv.bias.detach().double().cpu().numpy().reshape((1, cout) + (1,) * rank)
        if relu:
            want = np.maximum(want, 0)
        dy64 = rng.uniform(-1, 1, want.shape)
        dy = torch.tensor(dy64, dtype=torch.float32, device="cuda")
        with nan_allocations():
            y.backward(dy)
        y32 = y.detach().double().cpu().numpy()
        g = dy64 * (y32 > 0) if relu else dy64  # the mask the module used: its own y's
        xf = x.detach().double().cpu().numpy()
        plans = conv.plans(x)
        checks = [("y", y, want, plans.fprop), ("dx", x.grad, reference.bprop(layer, g, w64), plans.bprop),
                  ("dw", conv.weight.grad, reference.accgrad(layer, xf, g), plans.accgrad)]
        if bias:
            checks.append(("db", conv.bias.grad, g.sum(axis=tuple([0] + list(range(2, 2 + rank)))), None))
        for name, got, ref, plan in checks:
            got = got.detach().double().cpu().numpy()
            assert not np.isnan(got).any(), (rank, extent, kernel, name, "never written")
            err, algo = relative(got, ref), plan.choice.algo if plan else "direct"
            assert err < TOLERANCE.get(algo, DEFAULT_TOLERANCE), (rank, extent, kernel, name, algo, err)
            worst = max(worst, err)
    print("worst relative error %.2e" % worst)


@gpu
def test_module_refuses_what_convgen_cannot_run():
    import convgen.nn
    conv = convgen.nn.Conv(2, 3, (3, 3)).cuda()
    for bad, says in [(torch.zeros(1, 2, 8, 8), "CUDA"), (torch.zeros(1, 2, 8, 8, device="cuda").double(), "float32"),
                      (torch.zeros(1, 3, 8, 8, device="cuda"), "shape")]:
        try:
            conv(bad)
        except (ValueError, TypeError) as e:
            assert says in str(e), (says, str(e))
        else:
            raise AssertionError("accepted %s" % says)


@no_torch
def test_the_package_needs_no_torch():
    assert "torch" not in sys.modules, "import convgen imported torch"
    try:
        import convgen.nn  # noqa: F401
    except ImportError as e:
        assert "PyTorch" in str(e), str(e)
    else:
        raise AssertionError("convgen.nn imported without torch")


if __name__ == "__main__":  # without pytest: each test in turn; skipped: exit status 3, not 0
    if WHY_NOT:
        if torch is None:
            test_the_package_needs_no_torch()
            print("[       OK ] test_the_package_needs_no_torch")
        print("SKIPPED: %s" % WHY_NOT)
        sys.exit(3)
    failed = 0
    for name in ("test_module_forward_and_gradients_against_the_reference", "test_module_refuses_what_convgen_cannot_run"):
        try:
            globals()[name]()
            print("[       OK ] %s" % name)
        except Exception as e:  # noqa: BLE001 (reported, counted)
            failed += 1
            print("[  FAILED  ] %s: %r" % (name, e))
    sys.exit(1 if failed else 0)
