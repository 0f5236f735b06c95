"""The token form's calls from recorded recipes.

Forward: a grouped_mm(x, W, offs) call of a signature that passed the checks once (shapes, strides, dtypes, devices;
not offs' values, which the kernels read on the device) skips them from the second call on; a call without gradients
also launches the recorded plan directly, as matmul's eager recipes do. As theirs, the key cannot see a storage
shrunk (resize_) to fewer bytes than the view spans but not to zero (checks.recipe_safe refuses a freed one).

Backward: from the second backward of a call signature, dX = dY @ W[g]^T and dW (the ragged-K form) launch from the
plans the general formula ran (grouped._tokens_backward), on grad, the tokens and the experts directly: no
per-product dispatch through the ops' implementations, no checks or plan keys.

A mixture-of-experts layer's training step spent ~0.5-0.6 ms of host time on the H100 host against
torch._grouped_mm's ~0.2 (results/2026-11-28-s48/), so steps of a few tenths of a millisecond of GPU work were
host-bound; the backward runs on the autograd engine's device thread, where Python ran ~2x slower in those
measurements. Recorded only where the general formula reads every operand in place: the gradient in the tokens'
dtype (no fp16 scaling), plans without copies or staged outputs, the Hopper path; plain eager contexts only.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from .. import _env
from . import checks, gemm_impl, grouped_ragged_k
from . import grouped as _grouped  # (a cycle: grouped imports this module last; read at call time)
from .eager_autograd import plain_tensor


class _Forward(NamedTuple):
    plan: object  # the token-form plan (grouped._GroupedPlan), reading x and W in place
    shape: tuple  # the output's (T, N)
    out_dtype: torch.dtype
    device: int


# Keyed on what the checks and the plan read (offs' values aside): recorded after a call that passed the checks.
# False: a signature whose plan copies an operand or stages the output (the checked call runs, and plans nothing
# again).
_FORWARDS: dict[tuple, _Forward | bool] = {}
gemm_impl._FORGET_HOOKS.append(_FORWARDS.clear)


def _forward_key(a, b, offs, out_dtype) -> tuple:
    return (a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, a.device, b.device, offs.shape, offs.dtype,
            offs.device, out_dtype, a.data_ptr() % 16 == 0, b.data_ptr() % 16 == 0)


def _plain_call(a, b, offs, out_dtype) -> bool:
    """A call a recipe may take: plain tensors (not meta, not a subclass) with storage, a plain context, an out_dtype
    of the accepted type, no logging or host check of offs (grouped.py). The tensors are asked first: a key reads
    strides and addresses, which a sparse or nested tensor refuses (the checks name them)."""
    return (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and isinstance(offs, torch.Tensor)
            and checks.plain_context()  # (first of the queries: False while tracing, which the others would break)
            and plain_tensor(a) and plain_tensor(b) and plain_tensor(offs)
            and (out_dtype is None or isinstance(out_dtype, torch.dtype)) and not _env.LOG_ENABLED
            and not _grouped._CHECK_OFFS and checks.recipe_safe(a, b, offs))


def forward(a, b, offs, out_dtype):
    """grouped_mm(a, b, offs, out_dtype=out_dtype) of a recorded signature (2-D x 3-D, no out=, no forced config),
    or None where the checked call must run."""
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.dim() == 2 and b.dim() == 3):
        return None  # (the other forms are never recorded: no key to build on their every call)
    if not _plain_call(a, b, offs, out_dtype):
        return None
    r = _FORWARDS.get(_forward_key(a, b, offs, out_dtype))
    if not r or torch._C._cuda_getDevice() != r.device:
        return None
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        return _grouped.TOKENS(a, b, offs, r.out_dtype, None)
    out = a.new_empty(r.shape, dtype=r.out_dtype)
    _grouped.tokens_launch(r.plan, a, b, out, offs, a.shape[0])
    return out


def record_forward(a, b, offs, out_dtype, resolved_dtype) -> None:
    """After grouped_mm's checks passed for a 2-D x 3-D call without out= or a forced config: its recipe, where the
    plan reads x and W in place and writes a fresh output (the Hopper path)."""
    if (not _plain_call(a, b, offs, out_dtype) or a.numel() == 0 or b.shape[0] == 0 or b.shape[2] == 0
            or gemm_impl.select_path(a.device).path != "hopper"):
        return
    key = _forward_key(a, b, offs, out_dtype)
    if key in _FORWARDS:
        return  # recorded, refused, or recorded for another current device (that call declines; this one checks)
    if len(_FORWARDS) > 4096:
        _FORWARDS.clear()
    shape = (a.shape[0], b.shape[2])
    plan = _grouped._plan(a.unsqueeze(0), b, a.new_empty((1, *shape), dtype=resolved_dtype), None)
    refused = plan.a_copy or plan.b_copy or plan.c_staged
    _FORWARDS[key] = False if refused else _Forward(plan, shape, resolved_dtype, a.device.index)


class _Recipe(NamedTuple):
    dx: object  # the token-form plan of dX = dY @ W[g]^T (grouped._GroupedPlan), or None
    dw: object  # the ragged-K plan of dW, or of dW^T where the experts are stored column-major, or None
    dw_shape: tuple  # that product's (G, M, N)


# Keyed on what the plans read: shapes, strides, dtypes, 16-byte alignment, which gradients are needed and the
# experts' layout. False: a key the general formula runs.
_RECIPES: dict[tuple, _Recipe | bool] = {}
gemm_impl._FORGET_HOOKS.append(_RECIPES.clear)


def _key(ctx, grad, a, b, offs) -> tuple:
    # (offs' own layout is not in it: the launch helpers copy a strided or misaligned offs on every call)
    return (ctx.dtype, ctx.needs_input_grad[:2], ctx.b_columns, grad.shape, grad.stride(), grad.dtype, grad.device,
            grad.data_ptr() % 16 == 0, offs.shape, offs.dtype,
            None if a is None else (a.shape, a.stride(), a.dtype, a.data_ptr() % 16 == 0),
            None if b is None else (b.shape, b.stride(), b.dtype, b.data_ptr() % 16 == 0))


def _dw_operands(ctx, grad, a):
    """The ragged-K form's (left, right) as the general formula passes them: dW^T = dY^T A (experts stored
    column-major) or dW = A^T dY."""
    return (grad.t(), a) if ctx.b_columns else (a.t(), grad)


def _record(ctx, grad, a, b, offs) -> _Recipe | bool:
    """Plan this key's products as the general formula plans them (it then runs this first backward itself and finds
    the plans cached), or False where a product would not read its operands in place."""
    if (grad.dtype != ctx.dtype or grad.dim() != 2 or grad.numel() == 0 or offs.shape[0] == 0
            or gemm_impl.select_path(grad.device).path != "hopper"):
        return False
    dx = dw = dw_shape = None
    if ctx.needs_input_grad[0]:
        bt = b.transpose(1, 2)
        if bt.shape[2] == 0:
            return False
        plan = _grouped._plan(grad.unsqueeze(0), bt, grad.new_empty((1, grad.shape[0], bt.shape[2])), None)
        if plan.a_copy or plan.b_copy or plan.c_staged:
            return False
        dx = plan
    if ctx.needs_input_grad[1]:
        left, right = _dw_operands(ctx, grad, a)
        dw_shape = (offs.shape[0], left.shape[0], right.shape[1])
        if 0 in dw_shape or not (grouped_ragged_k.reads_token_outer(left.t())
                                 and grouped_ragged_k.reads_token_outer(right)):
            return False
        plan = grouped_ragged_k.plan_ragged(left.t(), right, grad.new_empty(dw_shape), None)
        if plan.c_staged:
            return False
        dw = plan
    return _Recipe(dx, dw, dw_shape)


def backward(ctx, grad, a, b, offs):
    """The token form's gradients through a recipe, or None where the general formula must run (the first backward
    of a key, create_graph, logging, dispatch modes, tracing, subclasses, freed storages)."""
    if (torch.is_grad_enabled() or _env.LOG_ENABLED or not checks.plain_context() or not plain_tensor(grad)
            or not plain_tensor(offs) or not (a is None or plain_tensor(a)) or not (b is None or plain_tensor(b))
            or not checks.recipe_safe(grad, a, b, offs)):
        return None
    key = _key(ctx, grad, a, b, offs)
    r = _RECIPES.get(key)
    if r is None:
        if len(_RECIPES) > 4096:
            _RECIPES.clear()
        _RECIPES[key] = _record(ctx, grad, a, b, offs)
        return None  # the first backward of a key runs the general formula
    if r is False or torch._C._cuda_getDevice() != grad.device.index:
        return None
    da = db = None
    if r.dx is not None:
        out = grad.new_empty((grad.shape[0], b.shape[1]))
        _grouped.tokens_launch(r.dx, grad, b, out, offs, grad.shape[0])  # (reads dY and W[g]^T in place)
        da = _grouped._zero_past_end(out, offs)
    if r.dw is not None:
        left, right = _dw_operands(ctx, grad, a)
        out = grad.new_empty(r.dw_shape)
        grouped_ragged_k.ragged_launch(r.dw, left.t(), right, out, offs)
        db = out.transpose(1, 2) if ctx.b_columns else out
    return da, db, None, None, None
