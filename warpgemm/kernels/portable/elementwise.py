"""Portable elementwise binary ops in plain Triton over flat contiguous tensors (interpreter and non-Hopper)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from .gemm import _round_to_bf16_grid


@triton.jit
def add_op(a, b, alpha):
    # One rounding of a + alpha * b in fp32, as torch.add does on the GPU (an FMA).
    return tl.fma(b, alpha, a)


@triton.jit
def mul_op(a, b, alpha):
    return a * b


OPS = {"add": add_op, "mul": mul_op}


@triton.jit
def _portable_binary_kernel(a_ptr, b_ptr, c_ptr, n, alpha, OP: tl.constexpr, INTERPRETED: tl.constexpr,
                            BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    c = OP(a, b, alpha)
    if INTERPRETED and c_ptr.dtype.element_ty == tl.bfloat16:
        c = _round_to_bf16_grid(c)
    tl.store(c_ptr + offs, c.to(c_ptr.dtype.element_ty), mask=mask)


def portable_binary(op: str, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, alpha: float) -> None:
    """c = OP(a, b) elementwise; all three contiguous with the same numel and dtype."""
    n = c.numel()
    block = 4096 if c.device.type == "cpu" else 1024
    _portable_binary_kernel[(triton.cdiv(n, block), )](a, b, c, n, float(alpha), OP=OPS[op],
                                                       INTERPRETED=c.device.type == "cpu", BLOCK=block, num_warps=4)
