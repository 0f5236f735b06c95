"""Static weights: the caller's promise that lets a decode GEMM start reading its weight before the kernel launched
before it has finished.

warpgemm's weight-streaming (swap-AB) launches use programmatic dependent launch: their programs start while the
previous kernel on the stream drains, and wait for it (griddepcontrol.wait) before touching memory, since that
kernel may be writing x. A weight that no kernel still running can write need not wait: with the promise, each
program loads its first ring-full of weight boxes into shared memory before the wait, so the HBM stays busy across
the gap between two kernels (kernels/hopper/partitions.py, tma_producer). Results are bitwise the same; only when
the bytes arrive changes. Measured on an H100, back to back in CUDA graphs on cold weights: `bench decode`
+1-9% per shape (notes/perf.md, session 30).

The promise, per tensor (its storage, through any view of it): **no GPU kernel that may still be running when a
warpgemm call starts writes it.** Inference weights keep it: they are written at load time, and later in-place
updates by ordinary PyTorch kernels (copy_, load_state_dict, optimizer steps) finish before the next kernel on the
stream starts, since those kernels never release their successor early. What breaks it: writing the tensor with a
kernel that releases its successor early (programmatic dependent launch) right before a warpgemm call reads it:
warpgemm's own kernels do, so warpgemm refuses a static tensor as `out=`; so may kernels of other libraries.
Breaking it makes the product read stale weights. `WARPGEMM_STATIC_WEIGHTS=0` ignores every mark.
"""
from __future__ import annotations

import torch

from . import _env

ATTR = "_warpgemm_static"
_any_marked = False  # until the first mark, is_static answers without looking at the tensor (every call asks)


def mark_static(obj, static: bool = True):
    """Mark a tensor, or every parameter of an nn.Module, as a static weight (see the module docstring for the
    promise this makes); `static=False` removes the mark. Returns obj. Mark the tensor that owns the storage (a
    Parameter): every view of it counts as marked, while marking a view marks that view object only.

        model = warpgemm.mark_static(model.eval())      # inference: no kernel writes the weights during a step
    """
    if isinstance(obj, torch.nn.Module):
        for p in obj.parameters():
            mark_static(p, static)
        return obj
    if not isinstance(obj, torch.Tensor):
        raise TypeError(f"mark_static takes a tensor or an nn.Module, got {type(obj).__name__}")
    if static:
        global _any_marked
        _any_marked = True
        setattr(obj, ATTR, True)
    elif ATTR in obj.__dict__:
        delattr(obj, ATTR)
    return obj


def is_static(t: torch.Tensor) -> bool:
    """Whether warpgemm may read `t` before the previous kernel on the stream has finished: `t` or the tensor
    owning its storage (its view base) is marked, and WARPGEMM_STATIC_WEIGHTS is not 0."""
    if not (_any_marked and _env.STATIC_WEIGHTS):
        return False
    if getattr(t, ATTR, False):
        return True
    base = t._base
    return base is not None and getattr(base, ATTR, False)
