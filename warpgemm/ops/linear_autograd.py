"""linear()'s eager training call as one autograd node, as F.linear's is.

Through the general path a training call is x viewed to (batches, M, K), weight.t() viewed to (1, K, N), the
product, and the output viewed back: four view ops forward and four view nodes for the autograd engine to run
backward, ~80 us of host time a step on the H100 host next to a GEMM's ~40 (results/2026-11-28-s47/, notes/perf.md
"session 47"). Here the forward is the no-grad call (a recorded recipe after the first call) and the backward makes
the same views itself, outside the forward's graph (recorded only under create_graph, for double backward), and
runs the shared formula (library.backward_3d). Taken in every eager training call that is not traced, autocast or
under a torch.func transform or forward-AD level, dispatch modes included (checks.autograd_node_context): a
checkpoint's recompute then saves what its forward saved whichever mode covers either.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from . import library
from .batching import batch_count, matmul_shapes, to_batched


class _Layout(NamedTuple):
    """How the kernels saw x and weight.t(): a3's shape, the output's 3-D shape, and which of a3, b3 is stored
    column by column (their gradients are made the same way)."""

    a3_shape: tuple
    c3_shape: tuple
    a_columns: bool
    b_columns: bool


_LAYOUTS: dict[tuple, _Layout] = {}


def _layout(x: torch.Tensor, weight: torch.Tensor) -> _Layout:
    key = (x.shape, x.stride(), weight.shape, weight.stride())
    layout = _LAYOUTS.get(key)
    if layout is None:
        a3, b3 = to_batched(matmul_shapes(x, weight.t()))  # as the call itself folded them (ops/api.py)
        if len(_LAYOUTS) > 4096:
            _LAYOUTS.clear()
        layout = _LAYOUTS[key] = _Layout(tuple(a3.shape), (batch_count(a3, b3), a3.shape[1], b3.shape[2]),
                                         library.column_major(a3), library.column_major(b3))
    return layout


class LinearFunction(torch.autograd.Function):
    """apply(x, weight, bias, config): linear(x, weight, bias) with gradients for x, weight and bias."""

    @staticmethod
    def forward(ctx, x, weight, bias, config):
        from .api import linear  # (api imports this module)

        y = linear(x, weight, bias, config=config)  # grad mode is off inside forward: the eager call
        if y._base is not None:
            # (Meta tensors' shape-only path returns a view.) A custom Function's view output refuses in-place
            # changes (an in-place activation after the layer), which F.linear's output takes.
            y = y.clone()
        need_x, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        ctx.save_for_backward(weight if need_x else None, x if need_w else None)  # what each gradient needs
        ctx.layout, ctx.x_shape = _layout(x, weight), x.shape
        ctx.dtype, ctx.bias_dtype = x.dtype, None if bias is None else bias.dtype
        return y

    @staticmethod
    def backward(ctx, grad):
        weight, x = ctx.saved_tensors
        layout = ctx.layout
        saved = (None if weight is None else weight.t().unsqueeze(0), None if x is None else x.reshape(layout.a3_shape))
        da3, db3, dbias = library.backward_3d(
            grad.reshape(layout.c3_shape), saved, ctx.needs_input_grad[:3],
            (layout.a3_shape[0], ctx.dtype, layout.a_columns), (1, ctx.dtype, layout.b_columns), ctx.bias_dtype)
        return None if da3 is None else da3.reshape(ctx.x_shape), None if db3 is None else db3[0].t(), dbias, None
