"""Public GEMM ops: `matmul` (torch.matmul semantics) and `linear` (F.linear semantics), plus `explain`."""
from __future__ import annotations

import torch

from typing import NamedTuple

from .. import _env, heuristics, tuning
from ..config import GemmConfig
from . import autocast, checks, library, transforms
from .batching import batch_count, matmul_shapes, to_batched
from . import gemm_impl
from .linear_autograd import LinearFunction
from .gemm_impl import bmm_into, explain_bmm, select_path
from ..static_weights import is_static, writes_static

# Eager calls with no autograd and no tracing skip the dispatcher (a few microseconds per op).
_PLAIN = checks.PLAIN_TYPES


def _needs_grad(a, b, bias) -> bool:
    return torch.is_grad_enabled() and (a.requires_grad or b.requires_grad or
                                        (bias is not None and bias.requires_grad))


def _prepare(a, b, bias, out, out_dtype, config, names):
    an, bn = names
    checks.check_tensor(an, a)
    checks.check_tensor(bn, b)
    checks.check_gemm_dtypes(a, b, an, bn)
    out_dtype = checks.resolve_out_dtype(a.dtype, out_dtype, out)
    if bias is not None:
        checks.check_tensor("bias", bias)  # before its device is read
    checks.check_devices(**{an: a, bn: b, "bias": bias, "out": out})
    shapes = matmul_shapes(a, b)
    checks.check_bias(bias, shapes.N, a.dtype, "the output's last dimension" if b.dim() > 1 else
                      f"{bn} is 1-D: one column, which the output drops")
    if out is not None:
        if tuple(out.shape) != shapes.out_shape:
            raise ValueError(f"out must have shape {shapes.out_shape}, got {tuple(out.shape)}")
        checks.check_out_writable(out)
        checks.check_out_not_aliasing(out, **{an: a, bn: b, "bias": bias})
    if config is not None:
        if not isinstance(config, GemmConfig):
            raise TypeError(f"config must be a warpgemm.GemmConfig or None, got {type(config).__name__}")
        # Checked on every path, so a config that the GPU would refuse is refused on the CPU too.
        checks.check_forced_config(config, a.dtype, out_dtype)
    return shapes, out_dtype


class _Recipe(NamedTuple):
    """A repeated eager call, reduced to what it does: allocate the output (or take the caller's out=) and launch
    the planned kernel."""

    out_shape: tuple
    out_dtype: torch.dtype
    device: torch.device
    launch: object  # kernels.hopper.gemm.GemmLaunch


# Keyed on everything validation and planning read (shapes, strides, dtypes, devices, base alignment, bias,
# forced config): a hit has passed the same checks and gets the same plan. Only calls that ran the Hopper kernel
# on the caller's own tensors (no copies, no staging) are recorded.
_RECIPES: dict[tuple, _Recipe] = {}
gemm_impl._FORGET_HOOKS.append(_RECIPES.clear)


def _recipe_key(a, b, bias, out_dtype, config, out=None) -> tuple | None:
    """None where a call must take the checked path: a tensor with no storage to key on (a sparse layout), a
    lazily negated one or one whose storage was freed (the checks refuse each by name)."""
    if not checks.recipe_safe(a, b, bias, out):
        return None
    bias_key = None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.device, bias.data_ptr() % 16)
    # is_static: a static weight's launch may load it before the wait on the previous kernel (static_weights.py).
    key = (a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, a.device, b.device, a.data_ptr() % 16,
           b.data_ptr() % 16, out_dtype, bias_key, config, is_static(b))
    if out is not None:
        # out's layout decides the plan (its strides, the store's alignment); its address is checked per call.
        key += (out.shape, out.stride(), out.dtype, out.device, out.data_ptr() % 16)
    return key


def _remember(key, out_shape, out_dtype, a, b, bias, a3, b3, plan) -> bool:
    """Record a call that ran the Hopper kernel on the caller's own tensors (no copies, no staged output) as a
    recipe. Returns whether it did."""
    if (plan is None or plan.a_copy or plan.b_copy or plan.c_staged or a3.data_ptr() != a.data_ptr()
            or b3.data_ptr() != b.data_ptr() or (bias is not None and bias.stride(0) != 1)):
        return False
    if len(_RECIPES) > 4096:
        _RECIPES.clear()
    _RECIPES[key] = _Recipe(out_shape, out_dtype, a.device, plan.launch)
    return True


def _out_overlaps(out, a, b, bias) -> bool:
    return (checks.shares_memory(out, a) or checks.shares_memory(out, b)
            or (bias is not None and checks.shares_memory(out, bias)))


def _matmul(a, b, bias, out, out_dtype, config, names, *, context_plain: bool, alias_key=None):
    """alias_key: a caller's own recipe key (linear's, on the untransposed weight) to record the recipe under.
    context_plain: the caller's checks.plain_context() (False: no recipe, and the call goes through the op)."""
    plain = type(a) in _PLAIN and type(b) in _PLAIN and (bias is None or isinstance(bias, torch.Tensor))
    needs_grad = _needs_grad(a, b, bias) if plain else None  # non-tensors are reported by _prepare first
    eager = (plain and not needs_grad and (out is None or (type(out) in _PLAIN and not out.requires_grad))
             and not _env.LOG_ENABLED
             and (config is None or type(config) is GemmConfig) and context_plain)  # (False while tracing)
    key = _recipe_key(a, b, bias, out_dtype, config, out) if eager else None
    eager = key is not None
    if eager:
        r = _RECIPES.get(key)
        if r is not None and torch._C._cuda_getDevice() == r.device.index:
            if out is not None:
                # What the key cannot say: whether this out overlaps an operand or a static weight, or is an
                # inference tensor written outside inference mode. Each sends the call down the checked path, which
                # refuses it with the reason.
                if not (_out_overlaps(out, a, b, bias) or writes_static(out) or checks.writes_inference_tensor(out)):
                    r.launch.launch(a, b, out, bias)  # out views the storage the plan's c3 viewed: same base
                    checks.mark_written(out)
                    return out
                r = None
        if r is not None:
            if alias_key is not None:
                # linear() missed its own key but matmul(x, w.t()) recorded this one: share it, else every later
                # linear call of these shapes would miss again and pay validation (overhead_probe.json).
                _RECIPES[alias_key] = r
            # new_empty without keywords is ~0.7 us cheaper than torch.empty(..., dtype=, device=) per call
            # (results/2026-11-23-eager/host_breakdown_m4.json); a's device is r.device (it is in the key).
            c = (a.new_empty(r.out_shape) if r.out_dtype == a.dtype
                 else torch.empty(r.out_shape, dtype=r.out_dtype, device=r.device))
            r.launch.launch(a, b, c, bias)
            return c
    shapes, out_dtype = _prepare(a, b, bias, out, out_dtype, config, names)
    a3, b3 = to_batched(shapes)
    cfg = None if config is None else config.to_list()
    if needs_grad is None:
        needs_grad = _needs_grad(a, b, bias)
    # Not the eager fast path: the registered op, or in a plain eager training call its autograd node (EagerOp
    # decides). Meta tensors (shape inference, planning without a GPU) take the ops' fake implementations.
    via_op = (needs_grad or not plain or torch.compiler.is_compiling() or a.device.type == "meta"
              or not context_plain)
    if out is None:
        if via_op:
            return library.BMM(a3, b3, bias, out_dtype, cfg).view(shapes.out_shape)
        # The output itself, not a view of the 3-D buffer, as torch returns: linear's training node returns it, and
        # autograd forbids in-place changes of a custom Function's view outputs (an in-place ReLU after the layer).
        c = torch.empty(shapes.out_shape, dtype=out_dtype, device=a.device)
        plan = bmm_into(a3, b3, bias, c.view(batch_count(a3, b3), a3.shape[1], b3.shape[2]), config)
        if eager and _remember(key, shapes.out_shape, out_dtype, a, b, bias, a3, b3, plan) and alias_key is not None:
            _RECIPES[alias_key] = _RECIPES[key]
        return c
    if needs_grad:
        raise RuntimeError("matmul(): functions with out=... arguments don't support automatic differentiation")
    c_shape = (batch_count(a3, b3), a3.shape[1], b3.shape[2])
    if torch.compiler.is_compiling():
        # A view that cannot fold fails while tracing in a way no except clause sees: fold only what surely does.
        c3 = out.view(c_shape) if out.is_contiguous() else None
    else:
        try:
            c3 = out.view(c_shape)
        except RuntimeError:
            c3 = None  # out's strides do not fold to 3-D: compute aside, then copy in
    target = c3 if c3 is not None else torch.empty(c_shape, dtype=out.dtype, device=out.device)
    if via_op:
        torch.ops.warpgemm.bmm_out(a3, b3, bias, target, cfg)
    else:
        plan = bmm_into(a3, b3, bias, target, config)
        if eager and c3 is not None:
            _remember(key, shapes.out_shape, out_dtype, a, b, bias, a3, b3, plan)
        if c3 is not None:
            checks.mark_written(out)  # (a copy_ into out counts itself; the registered op's dispatch counts for it)
    if c3 is None:
        out.copy_(target.view(shapes.out_shape))
    return out


def matmul(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None,
           out_dtype: torch.dtype | None = None, bias: torch.Tensor | None = None,
           config: GemmConfig | None = None) -> torch.Tensor:
    """torch.matmul for bf16/fp16 tensors (1-D, 2-D, batched, broadcast), with fp32 accumulation.

    out_dtype: the input dtype (default) or torch.float32. bias: an (N,) vector added to every output row.
    config: force a Hopper kernel config (raises ValueError if it cannot run these dtypes).
    Inside torch.autocast, floating operands and bias are cast to the region's dtype first, as torch.matmul's are
    (not with out=, which torch does not autocast either).
    """
    if checks.plain_context():  # the eager fast path's one check
        return _matmul(a, b, bias, out, out_dtype, config, ("a", "b"), context_plain=True)
    if out is None:
        a, b, bias = autocast.cast(a, b, bias)
    if transforms.active(a, b, bias):  # torch.func wrappers without storage, or dual tensors (ops/transforms.py)
        return transforms.matmul(a, b, bias, out, out_dtype)
    return _matmul(a, b, bias, out, out_dtype, config, ("a", "b"), context_plain=False)


def linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None, *,
           config: GemmConfig | None = None) -> torch.Tensor:
    """F.linear: x (..., in_features) @ weight (out_features, in_features).T + bias, read without copies.
    Inside torch.autocast, floating operands and bias are cast to the region's dtype first, as F.linear's are."""
    key = None
    if (type(x) in _PLAIN and type(weight) in _PLAIN and (bias is None or type(bias) in _PLAIN)
            and (config is None or type(config) is GemmConfig)):
        if _needs_grad(x, weight, bias):
            # A training call: one autograd node around this same call without grad (linear_autograd.py). Not for
            # a tensor the checked path must look at (it names what is wrong), nor while tracing.
            if checks.autograd_node_context() and checks.recipe_safe(x, weight, bias):
                return LinearFunction.apply(x, weight, bias, config)
        elif not _env.LOG_ENABLED and checks.plain_context():  # (not while tracing, either)
            # A repeated eager call (decode: the same shapes every step) skips validation and the transposed view.
            key = _recipe_key(x, weight, bias, None, config)
            key = None if key is None else ("linear", ) + key
            r = None if key is None else _RECIPES.get(key)
            if r is not None and torch._C._cuda_getDevice() == r.device.index:
                c = x.new_empty(r.out_shape)  # linear's output has x's dtype and device (cheapest: see _matmul)
                r.launch.launch(x, weight, c, bias)  # the launch reads base addresses only
                return c
    context_plain = checks.plain_context()
    if not context_plain:
        x, weight, bias = autocast.cast(x, weight, bias)
    checks.check_tensor("weight", weight)
    if weight.dim() != 2:
        raise ValueError(f"weight must be 2-D (out_features, in_features), got shape {tuple(weight.shape)}")
    checks.check_tensor("input", x)
    if x.dim() == 0 or x.shape[-1] != weight.shape[1]:
        raise ValueError(f"input must have last dimension {weight.shape[1]} (weight's in_features), "
                         f"got shape {tuple(x.shape)}")
    if not context_plain and transforms.active(x, weight, bias):
        return transforms.matmul(x, weight.t(), bias, None, None, ("input", "weight"))
    return _matmul(x, weight.t(), bias, None, None, config, ("input", "weight"), alias_key=key,
                   context_plain=context_plain)


def explain(a: torch.Tensor, b: torch.Tensor, *, out: torch.Tensor | None = None,
            out_dtype: torch.dtype | None = None, bias: torch.Tensor | None = None,
            config: GemmConfig | None = None) -> str:
    """Say which path and config `matmul(a, b, ...)` would run and why, without running it."""
    transforms.refuse("explain")
    if out is None:  # as matmul
        a, b, bias = autocast.cast(a, b, bias)
    shapes, out_dtype = _prepare(a, b, bias, out, out_dtype, config, ("a", "b"))
    a3, b3 = to_batched(shapes)
    c_shape = (batch_count(a3, b3), a3.shape[1], b3.shape[2])
    aside = torch.empty(c_shape, dtype=out_dtype, device="meta")
    if out is None:
        return explain_bmm(a3, b3, aside, config)
    try:
        c3 = out.view(c_shape)  # as matmul(out=) takes it: its layout decides how C is written
    except RuntimeError:
        return ("out's strides do not fold to (batch, M, N): computed into a temporary, then copied into out; "
                + explain_bmm(a3, b3, aside, config))
    return explain_bmm(a3, b3, c3, config)


def tune(a: torch.Tensor, b: torch.Tensor, *, bias: torch.Tensor | None = None, out_dtype: torch.dtype | None = None,
         rep_ms: int = 25, progress=None) -> tuning.TuneResult:
    """Tune `matmul(a, b, bias=bias, out_dtype=out_dtype)` on this GPU now (for `linear(x, w)`: `tune(x, w.t())`).

    Times the heuristics' choice and the candidate configs on these operands (the first tuning compiles each
    candidate once), keeps the winner in the tuning cache and uses it from the next call of this problem on, here
    and in later processes unless WARPGEMM_TUNE=0 (warpgemm/tuning.py). Returns the result: `.config` is None when
    the heuristics' choice stayed fastest, `.rows` has every candidate's time and error. One- and two-row products
    are not tuned: they run a GEMV, or against a static weight (warpgemm.mark_static) the heuristics' swap-AB tile.
    The tuner times candidates without the static-weight early loads.
    """
    transforms.refuse("tune")
    a, b, bias = autocast.cast(a, b, bias)
    shapes, out_dtype = _prepare(a, b, bias, None, out_dtype, None, ("a", "b"))
    if a.device.type != "cuda" or select_path(a.device).path != "hopper":
        raise RuntimeError(f"tune() times the Hopper kernels and needs an sm_90 GPU, got a tensor on {a.device}")
    a3, b3 = to_batched(shapes)
    c3 = torch.empty((batch_count(a3, b3), a3.shape[1], b3.shape[2]), dtype=out_dtype, device=a.device)
    if c3.numel() == 0 or a3.shape[2] == 0:
        raise ValueError(f"nothing to tune: the product is empty (output {tuple(c3.shape)}, K={a3.shape[2]})")
    gemv_why = heuristics.gemv_reason(c3.shape[0], c3.shape[1], b3.stride(1) == 1, a3.dtype)
    if gemv_why is not None:
        raise ValueError(f"not tuned: one- and two-row products run a GEMV ({gemv_why}) or, against a static "
                         "weight, the heuristics' swap-AB tile")
    if bias is not None and bias.stride(0) != 1:
        bias = bias.contiguous()
    return tuning.tune_problem(a3, b3, c3, bias, rep_ms=rep_ms, progress=progress)
