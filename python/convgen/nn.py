"""convgen's convolutions for PyTorch: one torch.autograd.Function whose forward is convgen's
fprop (with the bias and ReLU epilogue where asked) and whose backward is its bprop and accgrad,
and a Module over it. Imported on its own (`import convgen.nn`) and only where torch is: the rest
of the package never needs it.

    import torch, convgen.nn
    conv = convgen.nn.Conv(64, 64, kernel_size=(3, 3, 3), padding=1, relu=True).cuda()
    y = conv(x)                  # x: float32, CUDA, [n][64][d][h][w]; y.sum().backward() works
    print(conv.plans(x).fprop.choice.algo)   # what convgen chose for this shape

Plans are made once per input shape and device (auto at effort "estimate" unless told, as
Context.plan_conv), on the tensors' device and PyTorch's current stream; workspaces come from
PyTorch's allocator. The layer's math is convgen.h's: cross-correlation (as torch's conv) unless
`convolution`, fp32 exact (no TF32 unless `allow_tf32`)."""

import math
from collections import namedtuple

try:
    import torch
except ImportError as e:  # the package itself imports without torch
    raise ImportError("convgen.nn needs PyTorch (import torch: %s); the rest of convgen does not" % e) from e

from .core import Context, Conv as ConvLayer

_contexts = {}

# A layer's plans for one input shape: fprop's with the epilogue, bprop's and accgrad's without it.
Plans = namedtuple("Plans", "fprop bprop accgrad relu y_shape")


def context(device):
    """convgen's context on a torch device (CUDA), one per device for the process."""
    index = torch.device(device).index
    index = torch.cuda.current_device() if index is None else index
    if index not in _contexts:
        _contexts[index] = Context(device=index)
    return _contexts[index]


def _checked(t, name, device=None):
    if not isinstance(t, torch.Tensor):
        raise TypeError("%s: a torch.Tensor is needed, not a %s" % (name, type(t).__name__))
    if not t.is_cuda:
        raise ValueError("%s: convgen runs on CUDA tensors; this one is on %s" % (name, t.device))
    if t.dtype != torch.float32:
        raise ValueError("%s: dtype %s; convgen's layers are float32" % (name, t.dtype))
    if device is not None and t.device != device:
        raise ValueError("%s is on %s, the input on %s" % (name, t.device, device))
    return t.contiguous()


def _workspace(plan, device):
    size = plan.workspace_size
    return torch.empty(size, dtype=torch.uint8, device=device) if size else None


def _run(plan, in0, in1, out, bias=None):
    """plan on PyTorch's current stream (detached tensors: the array protocol refuses a tensor
    that requires grad, and autograd is this Function's own business)."""
    stream = torch.cuda.current_stream(out.device)
    plan.execute(in0.detach(), in1.detach(), out, workspace=_workspace(plan, out.device), stream=stream,
                 bias=None if bias is None else bias.detach())
    return out


class ConvFunction(torch.autograd.Function):
    """y = conv(x, w) (+ bias, then ReLU where the layer has them), by `plans` (Plans) for x's
    shape. Its gradients: dx = bprop(g, w), dw = accgrad(x, g), db = g summed over all but its
    maps, where g is dy, masked by y > 0 after a ReLU."""

    @staticmethod
    def forward(ctx, x, w, bias, plans):
        y = torch.empty(plans.y_shape, dtype=torch.float32, device=x.device)
        _run(plans.fprop, x, w, y, bias)
        ctx.plans, ctx.has_bias = plans, bias is not None
        ctx.save_for_backward(x, w, y if plans.relu else None)
        return y

    @staticmethod
    @torch.autograd.function.once_differentiable  # its gradients are convgen's, not a graph's
    def backward(ctx, dy):
        x, w, y = ctx.saved_tensors
        g = dy.contiguous()
        if ctx.plans.relu:
            g = g * (y > 0)
        dx = dw = db = None
        if ctx.needs_input_grad[0]:
            dx = _run(ctx.plans.bprop, g, w, torch.empty_like(x))
        if ctx.needs_input_grad[1]:
            dw = _run(ctx.plans.accgrad, x, g, torch.empty_like(w))
        if ctx.has_bias and ctx.needs_input_grad[2]:
            db = g.sum(dim=[0] + list(range(2, g.dim())))
        return dx, dw, db, None


class Conv(torch.nn.Module):
    """A convolution layer of rank len(kernel_size) (1-3) run by convgen: weight [out][in][kernel...]
    and bias [out] initialized as torch.nn.Conv*d's; `relu` fuses a ReLU into fprop's store.
    `padding`, `stride`, `dilation`: an int or one per dimension; `algo` and the options are
    Context.plan_conv's (default auto at effort "estimate")."""

    def __init__(self, in_channels, out_channels, kernel_size, padding=0, stride=1, dilation=1, bias=True,
                 relu=False, convolution=False, algo="auto", **plan_options):
        super().__init__()
        self.kernel_size = tuple(kernel_size) if not isinstance(kernel_size, int) else (kernel_size,)
        if not 1 <= len(self.kernel_size) <= 3:
            raise ValueError("kernel_size: %r has rank %d; convgen's layers have rank 1 to 3" %
                             (kernel_size, len(self.kernel_size)))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.padding, self.stride, self.dilation = padding, stride, dilation
        self.relu, self.convolution, self.algo = relu, convolution, algo
        self.plan_options = dict({"effort": "estimate"}, **plan_options)
        self.weight = torch.nn.Parameter(torch.empty((out_channels, in_channels) + self.kernel_size))
        self.bias = torch.nn.Parameter(torch.empty(out_channels)) if bias else None
        self.reset_parameters()
        self._plans = {}

    def reset_parameters(self):
        torch.nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))  # as torch.nn.Conv*d
        if self.bias is not None:
            bound = 1 / math.sqrt(self.weight[0].numel())
            torch.nn.init.uniform_(self.bias, -bound, bound)

    def layer(self, x_shape, epilogue=True):
        """The convgen.Conv of an input of x_shape ([n][in][spatial...]), with or without the epilogue."""
        rank = len(self.kernel_size)
        if len(x_shape) != rank + 2 or x_shape[1] != self.in_channels:
            raise ValueError("x: shape %s; this layer takes [n][%d] and %d spatial extents" %
                             (tuple(x_shape), self.in_channels, rank))
        return ConvLayer(n=x_shape[0], c=self.in_channels, k=self.out_channels, input=tuple(x_shape[2:]),
                         kernel=self.kernel_size, pad=self.padding, stride=self.stride, dilation=self.dilation,
                         convolution=self.convolution, bias=epilogue and self.bias is not None,
                         relu=epilogue and self.relu)

    def plans(self, x) -> Plans:
        """The plans for x's shape and device (and the layer's settings as they are), made on first use."""
        key = (tuple(x.shape), x.device, self.algo, self.relu, self.bias is not None,
               tuple(sorted(self.plan_options.items())))
        if key not in self._plans:
            ctx, layer = context(x.device), self.layer(x.shape)
            plain = self.layer(x.shape, epilogue=False)
            self._plans[key] = Plans(ctx.plan_conv(layer, "fprop", self.algo, **self.plan_options),
                                     ctx.plan_conv(plain, "bprop", self.algo, **self.plan_options),
                                     ctx.plan_conv(plain, "accgrad", self.algo, **self.plan_options),
                                     self.relu, layer.shapes("fprop")[2])
        return self._plans[key]

    def forward(self, x):
        x = _checked(x, "x")
        w = _checked(self.weight, "weight", x.device)
        b = _checked(self.bias, "bias", x.device) if self.bias is not None else None
        return ConvFunction.apply(x, w, b, self.plans(x))

    def extra_repr(self):
        return "%d, %d, kernel_size=%s, padding=%s, stride=%s, dilation=%s, bias=%s, relu=%s, algo=%s" % (
            self.in_channels, self.out_channels, self.kernel_size, self.padding, self.stride, self.dilation,
            self.bias is not None, self.relu, self.algo)
