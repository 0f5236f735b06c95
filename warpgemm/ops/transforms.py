"""torch.func transforms (vmap, grad, jacrev, ...) and forward-mode AD (torch.autograd.forward_ad). A transform's
tensors are wrappers with no storage, which the kernels' launches (base addresses, strides) and checks (storage
bounds) cannot read; a dual tensor's tangent is something the kernels would silently drop. Under either, matmul and
linear compute the same product with torch ops, with warpgemm's dtype rules and numerics (fp32 accumulation, the
bias added in fp32, one rounding to the output dtype), so the transform composes and tangents propagate; add and mul
run torch.add / torch.mul; the other ops raise NotImplementedError naming themselves (under forward AD only when an
input carries a tangent)."""
from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

from . import checks


def tangent(*tensors) -> bool:
    """Whether a forward-AD level is open and one of `tensors` carries a tangent there."""
    return _forward_ad._current_level >= 0 and any(
        isinstance(t, torch.Tensor) and _forward_ad.unpack_dual(t).tangent is not None for t in tensors)


def active(*tensors) -> bool:
    """Whether a torch.func transform is running, or one of `tensors` carries a forward-AD tangent: the calls the
    torch-ops path must compute (plain tensors inside a dual level still take the kernels)."""
    return checks._TRANSFORM_LEVEL() is not None or tangent(*tensors)


def refuse_tangents(op: str, *tensors) -> None:
    """A registered op's kernels would drop a forward-AD tangent (they have no jvp): say so instead. The public
    functions route dual inputs to torch ops before getting there; this catches direct torch.ops.warpgemm calls and
    a backward fed a dual gradient."""
    if tangent(*tensors):
        raise NotImplementedError(f"torch.ops.warpgemm.{op} does not support forward-mode AD: an input carries a "
                                  f"tangent (torch.autograd.forward_ad), which its kernel would drop")


def refuse(op: str, *tensors) -> None:
    """Raise for an op the kernels alone compute, under a transform or with a tangent on one of `tensors`."""
    if checks._TRANSFORM_LEVEL() is not None:
        raise NotImplementedError(f"warpgemm.{op} does not support torch.func transforms (vmap, grad, jacrev, ...): "
                                  f"its inputs are transform wrappers with no storage for the kernel to read; call it "
                                  f"outside the transform, or use the torch op there")
    if tangent(*tensors):
        raise NotImplementedError(f"warpgemm.{op} does not support forward-mode AD: an input carries a tangent "
                                  f"(torch.autograd.forward_ad), which its kernel would drop")


def matmul(a, b, bias, out, out_dtype, names=("a", "b")):
    """warpgemm.matmul's result from torch ops: the product and bias in fp32, rounded once to the output dtype."""
    for name, t in zip(names, (a, b)):
        checks.check_tensor(name, t)  # type and layout (no storage is read here)
    if out is not None:  # as torch.func's own out= variants
        raise NotImplementedError("warpgemm.matmul(out=...) does not support torch.func transforms (vmap, grad, "
                                  "jacrev, ...) or forward-mode AD tangents: drop out= there")
    checks.check_gemm_dtypes(a, b, *names)
    out_dtype = checks.resolve_out_dtype(a.dtype, out_dtype)
    if a.dim() == 0 or b.dim() == 0:
        raise ValueError(f"matmul needs {names[0]} and {names[1]} with at least 1 dimension, got {a.dim()}-D and "
                         f"{b.dim()}-D")
    checks.check_bias(bias, b.shape[-1] if b.dim() > 1 else 1, a.dtype,
                      "the output's last dimension" if b.dim() > 1 else f"{names[1]} is 1-D: one column")
    y = torch.matmul(a.float(), b.float())
    if bias is not None:
        y = y + bias.float()
    return y.to(out_dtype)
