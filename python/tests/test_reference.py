"""The tests' numpy reference against the definition (nested loops), and its three passes
against each other (<fprop(x), dy> = <x, bprop(dy)> = <w, accgrad(x, dy)>), on the CPU."""

import pytest

import convgen

np = pytest.importorskip("numpy", reason="no numpy: the GPU tests' reference is not checked")
import reference  # noqa: E402  (python/tests, on pytest's path)

LAYERS = [
    convgen.Conv(n=2, c=3, k=2, input=(7, 6), kernel=(3, 2), pad_before=(1, 0), pad_after=(0, 1), stride=(2, 1),
                 dilation=(1, 2)),
    convgen.Conv(n=1, c=2, k=3, input=(5, 4, 6), kernel=(2, 3, 2), pad=1, convolution=True),
    convgen.Conv(n=2, c=2, k=2, input=(9,), kernel=(3,), dilation=3, stride=2, pad=2),
]


@pytest.mark.parametrize("layer", LAYERS, ids=["2d", "3d", "1d"])
def test_reference_is_the_definition(layer):
    rng = np.random.default_rng(5)
    x, w, y = (rng.uniform(-1, 1, s) for s in layer.shapes("fprop"))
    assert np.allclose(reference.fprop(layer, x, w), reference.naive_fprop(layer, x, w), rtol=1e-12, atol=1e-12)
    dy = y
    inner = np.sum(reference.fprop(layer, x, w) * dy)
    assert np.isclose(inner, np.sum(x * reference.bprop(layer, dy, w)), rtol=1e-10)
    assert np.isclose(inner, np.sum(w * reference.accgrad(layer, x, dy)), rtol=1e-10)
