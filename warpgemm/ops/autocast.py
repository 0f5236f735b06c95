"""torch.autocast for the GEMMs: inside an autocast region matmul, linear, grouped_mm and group_gemm take their
floating operands (and bias) in the region's dtype, as torch.matmul, F.linear and torch.mm do there, so a model whose
parameters are fp32 runs its products in bf16 / fp16 and its gradients reach the fp32 parameters through the casts.
float64 tensors are left alone, as torch's autocast leaves them (warpgemm then refuses them, naming the dtype), and
so are calls with out=, as torch does not autocast its out= variants. torch's cast cache (one cast of a leaf
parameter per region) is not shared: an fp32 weight is cast on every call."""
from __future__ import annotations

import contextlib

import torch

# One C call for "is any autocast region open" (~0.1 us): the decode fast paths check it on every call.
_ANY = getattr(torch._C, "_is_any_autocast_enabled", None)
_KINDS = ("cuda", "cpu")  # the device types warpgemm runs on


def enabled() -> bool:
    """Whether an autocast region may be open (True when this torch cannot say cheaply)."""
    return _ANY is None or bool(_ANY())


def region_dtype(device: torch.device) -> torch.dtype | None:
    """The dtype of the autocast region open for this device's type, or None."""
    if not enabled() or device.type not in _KINDS or not torch.is_autocast_enabled(device.type):
        return None
    return torch.get_autocast_dtype(device.type)


def cast(*tensors):
    """The tensors as autocast would hand them to torch.mm: floating ones other than float64 in the region's dtype
    (the first tensor's device decides the region); None and non-tensors unchanged. Outside a region, unchanged."""
    if not enabled():
        return tensors
    first = next((t for t in tensors if isinstance(t, torch.Tensor)), None)
    dtype = None if first is None else region_dtype(first.device)
    if dtype is None:
        return tensors
    return tuple(t.to(dtype) if isinstance(t, torch.Tensor) and t.is_floating_point()
                 and t.dtype not in (dtype, torch.float64) else t for t in tensors)


@contextlib.contextmanager
def suspended():
    """Every open autocast region closed for the block: for products warpgemm computes in float32 with torch (the
    tuner's reference, scaled_mm's fallback), which a region would otherwise run in its own dtype."""
    with contextlib.ExitStack() as stack:
        if enabled():
            for kind in _KINDS:
                if torch.is_autocast_enabled(kind):
                    stack.enter_context(torch.autocast(kind, enabled=False))
        yield
