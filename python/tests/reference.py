"""The tests' CPU reference in float64 (numpy): a convolution layer's three passes by the
definition, one kernel tap at a time over every output (padding, stride, dilation, convolution
or cross-correlation), as convgen.h defines them."""

import numpy as np


def _geometry(layer):
    r = layer.rank
    seq = lambda v: (v,) * r if isinstance(v, int) else tuple(v)
    before = seq(layer.pad if layer.pad_before is None else layer.pad_before)
    after = seq(layer.pad if layer.pad_after is None else layer.pad_after)
    return seq(layer.stride), seq(layer.dilation), before, after


def _taps(layer, dilation, stride):
    """Each kernel tap t: the weights' index it takes (flipped for convolution), and the slices
    of the padded input it meets over every output."""
    r, kernel, out = layer.rank, tuple(layer.kernel), layer.output()
    for t in np.ndindex(*kernel):
        tap = tuple(kernel[d] - 1 - t[d] for d in range(r)) if layer.convolution else t
        sl = tuple(slice(t[d] * dilation[d], t[d] * dilation[d] + (out[d] - 1) * stride[d] + 1, stride[d])
                   for d in range(r))
        yield (slice(None), slice(None)) + tap, (slice(None), slice(None)) + sl


def fprop(layer, x, w):
    """y [n][k][out...] = sum over c and taps of x at (o * stride - pad_before + t * dilation) w[k][c][t]
    (the tap flipped for convolution), x zero outside."""
    stride, dilation, before, after = _geometry(layer)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(before, after)))
    y = np.zeros((layer.n, layer.k) + layer.output())
    w = w.astype(np.float64)
    for tap, sl in _taps(layer, dilation, stride):
        y += np.einsum("nc...,kc->nk...", xp[sl], w[tap])
    return y


def bprop(layer, dy, w):
    """dx = fprop's transpose applied to dy."""
    stride, dilation, before, after = _geometry(layer)
    r = layer.rank
    padded = tuple(layer.input[d] + before[d] + after[d] for d in range(r))
    dxp = np.zeros((layer.n, layer.c) + padded)
    w = w.astype(np.float64)
    for tap, sl in _taps(layer, dilation, stride):
        dxp[sl] += np.einsum("nk...,kc->nc...", dy.astype(np.float64), w[tap])
    inner = tuple(slice(before[d], before[d] + layer.input[d]) for d in range(r))
    return dxp[(slice(None), slice(None)) + inner]


def accgrad(layer, x, dy):
    """dw [k][c][kernel...] = sum over n and outputs of dy times the x each tap saw."""
    stride, dilation, before, after = _geometry(layer)
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(zip(before, after)))
    dw = np.zeros((layer.k, layer.c) + tuple(layer.kernel))
    axes = [0] + list(range(2, 2 + layer.rank))  # the batch and the outputs, summed
    for tap, sl in _taps(layer, dilation, stride):
        dw[tap] = np.tensordot(dy.astype(np.float64), xp[sl], axes=(axes, axes))
    return dw


def naive_fprop(layer, x, w):
    """fprop by nested loops over every output and tap: what fprop is checked against."""
    stride, dilation, before, _ = _geometry(layer)
    out, r, kernel = layer.output(), layer.rank, tuple(layer.kernel)
    y = np.zeros((layer.n, layer.k) + out)
    for n in range(layer.n):
        for k in range(layer.k):
            for o in np.ndindex(*out):
                s = 0.0
                for c in range(layer.c):
                    for t in np.ndindex(*kernel):
                        at = tuple(o[d] * stride[d] - before[d] + t[d] * dilation[d] for d in range(r))
                        if all(0 <= at[d] < layer.input[d] for d in range(r)):
                            tap = tuple(kernel[d] - 1 - t[d] for d in range(r)) if layer.convolution else t
                            s += float(x[(n, c) + at]) * float(w[(k, c) + tap])
                y[(n, k) + o] = s
    return y
