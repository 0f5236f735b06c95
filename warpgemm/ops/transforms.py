"""torch.func transforms (vmap, grad, jacrev, ...): their tensors are wrappers with no storage, which the kernels'
launches (base addresses, strides) and checks (storage bounds) cannot read. Under a transform, matmul and linear
compute the same product with torch ops, with warpgemm's dtype rules and numerics (fp32 accumulation, the bias added
in fp32, one rounding to the output dtype), so the transform composes; add and mul run torch.add / torch.mul; the
other ops say that they do not support transforms."""
from __future__ import annotations

import torch

from . import checks

def active() -> bool:
    """Whether a torch.func transform is running (~0.07 us)."""
    return checks._TRANSFORM_LEVEL() is not None


def refuse(op: str) -> None:
    if active():
        raise NotImplementedError(f"warpgemm.{op} does not support torch.func transforms (vmap, grad, jacrev, ...): "
                                  f"its inputs are transform wrappers with no storage for the kernel to read; call it "
                                  f"outside the transform, or use the torch op there")


def matmul(a, b, bias, out, out_dtype, names=("a", "b")):
    """warpgemm.matmul's result from torch ops: the product and bias in fp32, rounded once to the output dtype."""
    for name, t in zip(names + ("bias", ), (a, b, bias)):
        if t is not None and not isinstance(t, torch.Tensor):
            raise TypeError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if out is not None:  # as torch.func's own out= variants
        raise NotImplementedError("warpgemm.matmul(out=...) does not support torch.func transforms (vmap, grad, "
                                  "jacrev, ...): drop out= inside the transform")
    checks.check_gemm_dtypes(a, b, *names)
    out_dtype = checks.resolve_out_dtype(a.dtype, out_dtype)
    if bias is not None and bias.dtype not in (a.dtype, torch.float32):
        raise TypeError(f"bias must have dtype {a.dtype} or torch.float32, got {bias.dtype}")
    y = torch.matmul(a.float(), b.float())
    if bias is not None:
        y = y + bias.float()
    return y.to(out_dtype)
