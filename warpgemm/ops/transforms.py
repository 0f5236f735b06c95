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


def active() -> bool:
    """Whether a torch.func transform is running or a forward-AD level is open (~0.1 us)."""
    return checks._TRANSFORM_LEVEL() is not None or _forward_ad._current_level >= 0


def refuse(op: str, *tensors) -> None:
    """Raise for an op the kernels alone compute, under a transform or with a tangent on one of `tensors`."""
    if checks._TRANSFORM_LEVEL() is not None:
        raise NotImplementedError(f"warpgemm.{op} does not support torch.func transforms (vmap, grad, jacrev, ...): "
                                  f"its inputs are transform wrappers with no storage for the kernel to read; call it "
                                  f"outside the transform, or use the torch op there")
    if _forward_ad._current_level >= 0 and any(isinstance(t, torch.Tensor) and
                                                  _forward_ad.unpack_dual(t).tangent is not None for t in tensors):
        raise NotImplementedError(f"warpgemm.{op} does not support forward-mode AD: an input carries a tangent "
                                  f"(torch.autograd.forward_ad), which its kernel would drop")


def matmul(a, b, bias, out, out_dtype, names=("a", "b")):
    """warpgemm.matmul's result from torch ops: the product and bias in fp32, rounded once to the output dtype."""
    for name, t in zip(names + ("bias", ), (a, b, bias)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if out is not None:  # as torch.func's own out= variants
        raise NotImplementedError("warpgemm.matmul(out=...) does not support torch.func transforms (vmap, grad, "
                                  "jacrev, ...) or forward-mode AD: drop out= there")
    checks.check_gemm_dtypes(a, b, *names)
    out_dtype = checks.resolve_out_dtype(a.dtype, out_dtype)
    if bias is not None and bias.dtype not in (a.dtype, torch.float32):
        raise TypeError(f"bias must have dtype {a.dtype} or torch.float32, got {bias.dtype}")
    y = torch.matmul(a.float(), b.float())
    if bias is not None:
        y = y + bias.float()
    return y.to(out_dtype)
