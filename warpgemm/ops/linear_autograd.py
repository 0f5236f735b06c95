"""linear()'s eager training call as one autograd node, as F.linear's is.

Through the general path a training call is x viewed to (batches, M, K), weight.t() viewed to (1, K, N), the
product, and the output viewed back: four view ops forward and four view nodes for the autograd engine to run
backward, ~80 us of host time a step on the H100 host next to a GEMM's ~40 (results/2026-11-28-s47/, notes/perf.md
"session 47"). Here the forward is the no-grad call (a recorded recipe after the first call) and the backward makes
the same views itself, outside the forward's graph (recorded only under create_graph, for double backward), and
runs the shared formula (library.backward_3d). Taken in every eager training call that is not traced, autocast or
under a torch.func transform or forward-AD level, dispatch modes included (checks.autograd_node_context): a
checkpoint's recompute then saves what its forward saved whichever mode covers either.

From the second backward of a call signature (plain eager, no create_graph) the two gradient GEMMs launch from a
recorded recipe, the plans the general formula ran, on grad, weight and x directly: no per-product dispatch, checks
or plan keys (a 256^3 step's host time 430 -> 300 us on the H100 host in one pair of calls, against F.linear's
~210-220; the host drifts by tens of us between calls: results/2026-11-28-s48/).
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from .. import _env
from ..static_weights import is_static
from . import checks, gemm_impl, library
from .batching import batch_count, matmul_shapes, to_batched
from .eager_autograd import plain_tensor


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


class _BackwardRecipe(NamedTuple):
    """The launches of a backward that the general formula ran without copies (library.backward_3d, one batch, x
    read along K and an nn.Linear weight): dX = dY @ W and dW = dY^T @ X (None: not needed), each reading its
    operands at the base addresses of grad, weight and x and writing a contiguous output, as there."""

    dx: object
    dw: object
    w_shape: tuple  # (N, K): the weight is not saved where x needs no gradient


# Keyed on what the plans and the layouts read: shapes, strides, dtypes, 16-byte alignment, static-weight marks,
# which gradients are needed. False: a backward of that key the recipe cannot run (the general formula does).
_BACKWARDS: dict[tuple, _BackwardRecipe | bool] = {}
gemm_impl._FORGET_HOOKS.append(_BACKWARDS.clear)


def _backward_key(ctx, grad, weight, x) -> tuple:
    return (ctx.layout, ctx.x_shape, ctx.dtype, ctx.bias_dtype, ctx.needs_input_grad, grad.shape, grad.stride(),
            grad.dtype, grad.device, grad.data_ptr() % 16,
            None if weight is None else (weight.stride(), weight.data_ptr() % 16, is_static(weight)),
            None if x is None else (x.stride(), x.data_ptr() % 16, is_static(x)))


def _backward_recipe(ctx, grad, weight, x) -> _BackwardRecipe | bool:
    """The recipe of a backward's key, planned as the general formula plans its products (the general formula then
    runs this first backward itself and finds the plans cached), or False where a product would copy an operand or
    stage its output, or the layouts are not the common ones."""
    layout = ctx.layout
    if (layout.c3_shape[0] != 1 or layout.a_columns or not layout.b_columns or grad.dtype != ctx.dtype
            or grad.numel() == 0 or layout.a3_shape[2] == 0
            or gemm_impl.select_path(grad.device).path != "hopper"):
        return False
    g3 = grad.reshape(layout.c3_shape)
    a = None if x is None else x.reshape(layout.a3_shape)
    if g3.data_ptr() != grad.data_ptr() or (a is not None and a.data_ptr() != x.data_ptr()):
        return False  # a reshape copied: the launches read the caller's tensors
    for_a, for_b = library.backward_operands(g3, a, None if weight is None else weight.t().unsqueeze(0))
    launches = []
    for pair, columns, need in ((for_a, False, ctx.needs_input_grad[0]), (for_b, True, ctx.needs_input_grad[1])):
        if not need:
            launches.append(None)
            continue
        a3, b3 = library.product_operands(*pair, columns)
        c3 = a3.new_empty((1, a3.shape[1], b3.shape[2]))  # as library.bmm_eager allocates it
        plan = gemm_impl.cached_plan(a3, b3, c3, None, None)
        if plan.a_copy or plan.b_copy or plan.c_staged:
            return False
        launches.append(plan.launch)
    return _BackwardRecipe(*launches, (layout.c3_shape[2], layout.a3_shape[2]))


def _recorded_backward(ctx, grad, weight, x):
    """The gradients through a recipe (None where the general formula must run): the cheap checks first."""
    if (torch.is_grad_enabled() or _env.LOG_ENABLED or not checks.plain_context() or not plain_tensor(grad)
            or not (weight is None or plain_tensor(weight)) or not (x is None or plain_tensor(x))
            or not checks.recipe_safe(grad, weight, x)):
        return None  # create_graph, logging, dispatch modes, subclasses, freed storages: the general formula
    key = _backward_key(ctx, grad, weight, x)
    r = _BACKWARDS.get(key)
    if r is None:
        if len(_BACKWARDS) > 4096:
            _BACKWARDS.clear()
        _BACKWARDS[key] = _backward_recipe(ctx, grad, weight, x)
        return None  # the first backward of a key runs the general formula
    if r is False or torch._C._cuda_getDevice() != grad.device.index:
        return None
    dx = dw = dbias = None
    if r.dx is not None:
        dx = grad.new_empty(ctx.x_shape)
        r.dx.launch(grad, weight, dx, None)
    if r.dw is not None:
        dw = grad.new_empty(r.w_shape)
        r.dw.launch(grad, x, dw, None)
    if ctx.needs_input_grad[2]:
        # Summed as the general formula sums it (a view: the key holds grad's strides); also a 1-D x's (N,) grad.
        dbias = library.bias_gradient(grad.reshape(ctx.layout.c3_shape), (0, 1), ctx.bias_dtype)
    return dx, dw, dbias, None


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
        recorded = _recorded_backward(ctx, grad, weight, x)
        if recorded is not None:
            return recorded
        layout = ctx.layout
        saved = (None if weight is None else weight.t().unsqueeze(0), None if x is None else x.reshape(layout.a3_shape))
        da3, db3, dbias = library.backward_3d(
            grad.reshape(layout.c3_shape), saved, ctx.needs_input_grad[:3],
            (layout.a3_shape[0], ctx.dtype, layout.a_columns), (1, ctx.dtype, layout.b_columns), ctx.bias_dtype)
        return None if da3 is None else da3.reshape(ctx.x_shape), None if db3 is None else db3[0].t(), dbias, None
