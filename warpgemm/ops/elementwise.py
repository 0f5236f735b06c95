"""`warpgemm.add` (torch.add semantics) on the warp-specialized elementwise kernel, with its fallbacks.

Paths, in order: `hopper` (same-shape, same-dtype tensors TMA can stream as one 2-D view), `portable` (flat
contiguous tensors on other GPUs or under the interpreter), `torch` (broadcasting, mixed dtypes, strides
neither kernel takes: torch computes it, correctly, and WARPGEMM_LOG says so).
"""
from __future__ import annotations

import numbers
from typing import NamedTuple

import torch
from torch import Tensor

from .. import _env
from ..config import StreamConfig, check_stream_config
from . import checks, transforms
from .eager_autograd import EagerOp

STREAM_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
_SCALARS = numbers.Number  # Python's numbers and numpy's scalars (numpy registers its own)
_TORCH_OPS = {"add": lambda a, b, alpha, out: torch.add(a, b, alpha=alpha, out=out),
              "mul": lambda a, b, alpha, out: torch.mul(a, b, out=out)}


def default_stream_config(dtype: torch.dtype) -> StreamConfig:
    # 512-byte rows make a 32-row tile one contiguous 16 KB chunk. One tile per program with two programs
    # resident per SM measured best on the H100 (notes/perf.md): 1.019x torch.add at 32768^2 fp32 where a
    # persistent grid stopped at 0.967x, finishing with its slowest SM.
    return StreamConfig(block_x=32, block_y=512 // dtype.itemsize, load_slots=2, store_slots=2, compute_warps=4,
                        ctas_per_sm=2, tiles_per_program=1)


class StreamPlan(NamedTuple):
    path: str
    reason: str
    launch: object  # kernels.hopper.elementwise.StreamLaunch for the hopper path


_PLANS: dict[tuple, StreamPlan] = {}


def _plan(op: str, a: Tensor, b: Tensor, c: Tensor, config: StreamConfig | None) -> StreamPlan:
    dev = c.device
    contiguous = a.is_contiguous() and b.is_contiguous() and c.is_contiguous()
    if dev.type == "cuda" and _env.BACKEND != "portable" and _env.is_hopper(dev.index):
        from ..kernels.hopper.elementwise import StreamLaunch, stream_geometry

        cfg = config or default_stream_config(c.dtype)
        reason = check_stream_config(cfg, c.dtype)
        if reason is not None:
            raise ValueError(f"config {cfg} is invalid for {c.dtype} tensors: {reason}")
        geom = stream_geometry((a, b, c), cfg.block_y)
        if geom is not None:
            return StreamPlan("hopper", f"sm_90 warp-specialized TMA stream, {geom.rows}x{geom.cols} view, "
                              f"config {cfg.name}", StreamLaunch(cfg, geom, c.dtype, op, _env.num_sms(dev.index)))
        if not contiguous:
            return StreamPlan("torch", "strides TMA cannot stream as one 2-D view", None)
        return StreamPlan("portable", "contiguous, but no 16-byte-aligned 2-D view for TMA", None)
    if not contiguous:
        return StreamPlan("torch", "non-contiguous tensors off the Hopper path", None)
    return StreamPlan("portable", "CPU tensor under the Triton interpreter" if dev.type == "cpu" else
                      f"{dev} is not sm_90", None)


def binary_into(op: str, a: Tensor, b: Tensor, c: Tensor, alpha: float, config: StreamConfig | None = None):
    """c = OP(a, b); a, b, c have one shape and one dtype (checked by the caller)."""
    if c.numel() == 0 or c.device.type == "meta":  # meta tensors: shape inference only, nothing to compute
        return c
    key = (op, a.shape, a.stride(), b.stride(), c.stride(), c.dtype, a.data_ptr() % 16, b.data_ptr() % 16,
           c.data_ptr() % 16, c.device, config)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        plan = _PLANS[key] = _plan(op, a, b, c, config)
    if _env.LOG_ENABLED:
        _env.log(f"{op} {tuple(c.shape)} {c.dtype}: path={plan.path} ({plan.reason})")
    if plan.path == "hopper":
        plan.launch.launch(a, b, c, float(alpha))
    elif plan.path == "portable":
        from ..kernels.portable.elementwise import portable_binary

        portable_binary(op, a, b, c, alpha)
    else:
        _TORCH_OPS[op](a, b, alpha, c)
    return c


def _binary_new(a: Tensor, b: Tensor, op: str, alpha: float) -> Tensor:
    return binary_into(op, a, b, torch.empty(a.shape, dtype=a.dtype, device=a.device), alpha)


@torch.library.custom_op("warpgemm::binary", mutates_args=())
def binary_op(a: Tensor, b: Tensor, op: str, alpha: float) -> Tensor:
    """Same-shape, same-dtype elementwise OP(a, b) (op: 'add' computes a + alpha * b, 'mul' a * b)."""
    transforms.refuse_tangents("binary", a, b)
    return _binary_new(a, b, op, alpha)


@binary_op.register_fake
def _binary_fake(a, b, op, alpha):
    return torch.empty(a.shape, dtype=a.dtype, device=a.device)


def _binary_setup(ctx, inputs, output):
    a, b, op, alpha = inputs
    ctx.op, ctx.alpha = op, alpha
    ctx.save_for_backward(a if op == "mul" else None, b if op == "mul" else None)


def _binary_backward(ctx, grad):
    if ctx.op == "add":
        return grad, grad * ctx.alpha if ctx.alpha != 1 else grad, None, None
    a, b = ctx.saved_tensors
    return grad * b, grad * a, None, None


binary_op.register_autograd(_binary_backward, setup_context=_binary_setup)
# What add and mul call: the registered op, or in plain eager calls its implementation (eager_autograd.py).
BINARY = EagerOp(torch.ops.warpgemm.binary, _binary_new, _binary_setup, _binary_backward)


def _in_place_or_disjoint(out: Tensor, *inputs: Tensor) -> bool:
    # Writing onto an input is fine when out IS that input (each tile is read before it is written); any other
    # overlap is left to torch, which computes it or refuses it.
    return all(not checks.shares_memory(out, t) or (out.data_ptr() == t.data_ptr() and out.stride() == t.stride())
               for t in inputs)


def _check_config(config, a, b) -> None:
    """A forced config is checked on every path (as matmul's), so one the GPU would refuse is refused on the CPU and
    on torch's fallback too."""
    if config is None:
        return
    if not isinstance(config, StreamConfig):
        raise TypeError(f"config must be a warpgemm.StreamConfig or None, got {type(config).__name__}")
    dtype = a.dtype if isinstance(a, Tensor) else b.dtype if isinstance(b, Tensor) else None
    reason = check_stream_config(config, dtype) if dtype in STREAM_DTYPES else None
    if reason:
        raise ValueError(f"config {config} is invalid for {dtype} tensors: {reason}")


def _binary(op: str, a, b, alpha, out, config):
    _check_config(config, a, b)
    plain = checks.plain_context()  # one query: no transform, dual level, dispatch mode or tracing
    if not plain and transforms.active(a, b, out):  # torch.func wrappers (no storage), forward-AD tangents
        return _TORCH_OPS[op](a, b, alpha, out)
    if not torch.compiler.is_compiling():
        if isinstance(out, Tensor) and out.layout == torch.strided:  # (another layout: check_tensor names it below)
            # The README's promise for marked weights holds for every op that writes, whichever path computes.
            checks.check_out_not_static(out)
        if (isinstance(a, Tensor) and a.is_neg() or isinstance(b, Tensor) and b.is_neg()
                or isinstance(out, Tensor) and out.is_neg()):
            return _TORCH_OPS[op](a, b, alpha, out)  # a lazy negation: torch applies the sign, our kernel would not
    if isinstance(a, Tensor) and isinstance(b, _SCALARS) or isinstance(b, Tensor) and isinstance(a, _SCALARS):
        # torch.add(x, 2.0): a Python number on one side (torch's type promotion and broadcasting decide the
        # result); the stream kernels take two tensors, so torch computes it.
        if out is not None:
            checks.check_tensor("out", out)
        return _TORCH_OPS[op](a, b, alpha, out)
    checks.check_tensor("a", a)
    checks.check_tensor("b", b)
    if out is not None:
        checks.check_tensor("out", out)
        checks.check_out_not_inference(out)
    checks.check_devices(a=a, b=b, out=out)
    fast = (a.shape == b.shape and a.dtype == b.dtype and a.dtype in STREAM_DTYPES
            and (out is None or (out.shape == a.shape and out.dtype == a.dtype and _in_place_or_disjoint(out, a, b))))
    if not fast:
        if _env.LOG_ENABLED:
            _env.log(f"{op} {tuple(a.shape)} {a.dtype} with {tuple(b.shape)} {b.dtype}: path=torch "
                     "(broadcasting, mixed or unsupported dtypes, or an out= of another shape/dtype)")
        return _TORCH_OPS[op](a, b, alpha, out)
    needs_grad = torch.is_grad_enabled() and (a.requires_grad or b.requires_grad)
    if out is not None:
        if needs_grad:
            raise RuntimeError(f"{op}(): functions with out=... arguments don't support automatic differentiation")
        binary_into(op, a, b, out, alpha, config)
        checks.mark_written(out)
        return out
    if needs_grad or not plain or type(a) is not Tensor or type(b) is not Tensor:  # through the registered op
        return BINARY(a, b, op, float(alpha))
    c = torch.empty(a.shape, dtype=a.dtype, device=a.device)
    return binary_into(op, a, b, c, alpha, config)


def add(a: Tensor, b: Tensor, *, alpha: float = 1, out: Tensor | None = None,
        config: StreamConfig | None = None) -> Tensor:
    """torch.add(a, b, alpha=alpha, out=out). Same-shape fp32/bf16/fp16 tensors run on the warp-specialized
    stream kernel; anything else (a Python number for a or b, broadcasting, mixed dtypes, odd strides) is computed
    correctly by a fallback (torch)."""
    return _binary("add", a, b, alpha, out, config)


def mul(a: Tensor, b: Tensor, *, out: Tensor | None = None, config: StreamConfig | None = None) -> Tensor:
    """torch.mul(a, b, out=out) on the same kernels as `add`: the compute step is the only difference."""
    return _binary("mul", a, b, 1.0, out, config)
