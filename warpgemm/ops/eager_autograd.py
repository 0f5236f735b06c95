"""Eager calls of the registered ops without the op dispatcher: the same implementation, and for autograd the same
setup_context and backward, run through a torch.autograd.Function.

torch.library.custom_op dispatches in Python: on the H100 host a call of torch.ops.warpgemm.bmm cost ~100 us and
one with autograd ~160 us against ~30 us for the kernels' own path, so a linear layer's training step spent ~0.8 ms
issuing three GEMMs that run in 0.3 ms (results/2026-11-28-s47/, notes/perf.md "session 47"). The op stays the path
wherever something must see it: torch.compile and other tracing, dispatch modes (FlopCounterMode, selective
activation checkpointing), torch.func transforms and forward-AD levels, autocast regions, tensor subclasses and
meta tensors (checks.plain_context and the type checks below).
"""
from __future__ import annotations

from typing import Callable

import torch

from . import checks

# A legacy vmap BatchedTensor (autograd.grad(is_grads_batched=True), jacobian / hessian(vectorize=True) batch the
# backward with it) has torch.Tensor's type and no storage: the registered op gets torch's vmap fallback.
_LEGACY_BATCHED = getattr(torch._C._functorch, "is_legacy_batchedtensor", lambda t: False)


def plain_tensor(x: torch.Tensor) -> bool:
    """A tensor the kernels may take directly: torch.Tensor or Parameter (no subclass), not meta, not a legacy vmap
    batch."""
    return type(x) in checks.PLAIN_TYPES and not x.is_meta and not _LEGACY_BATCHED(x)


class EagerOp:
    """Calls `op` (a registered torch.ops.warpgemm op) or, in a plain eager context on plain tensors, `impl` (the
    op's implementation, same arguments) directly, through an autograd.Function with the op's own setup_context and
    backward when a tensor argument requires grad and grad mode is on."""

    def __init__(self, op, impl: Callable, setup_context: Callable | None = None, backward: Callable | None = None):
        self.op, self.impl = op, impl
        self.function = None
        if backward is not None:
            def forward(ctx, *args):
                # setup_context called from forward (the older autograd.Function form): with a separate
                # setup_context, Function.apply binds the arguments through inspect.signature on every call.
                output = impl(*args)
                setup_context(ctx, args, output)
                return output

            name = "Eager_" + str(op).replace(".", "_")
            self.function = type(name, (torch.autograd.Function,), {
                "forward": staticmethod(forward), "backward": staticmethod(backward)})

    def __call__(self, *args):
        if not checks.plain_context():
            return self.op(*args)
        grad = False
        for x in args:
            if isinstance(x, torch.Tensor):
                if not plain_tensor(x):
                    return self.op(*args)
                grad = grad or x.requires_grad
        if grad and torch.is_grad_enabled():
            if self.function is None:
                return self.op(*args)
            return self.function.apply(*args)
        return self.impl(*args)
