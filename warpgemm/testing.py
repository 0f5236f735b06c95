"""Reference implementations and error measures shared by the test suites and `warpgemm check`.

The rule: an op's relative error against a float64 reference may be at most about twice what torch's own
same-dtype op makes on the same inputs (plus a tiny floor for exactly-representable cases).
"""
from __future__ import annotations

import torch


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64; inf when out has NaN (unwritten elements), 0 for empty tensors."""
    if out.numel() == 0:
        return 0.0
    out64 = out.detach().to(torch.float64)
    if torch.isnan(out64).any():
        return float("inf")
    ref64 = ref.detach().to(torch.float64)
    denom = ref64.norm().item()
    diff = (out64 - ref64).norm().item()
    return diff / denom if denom > 0 else diff


def matmul_reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """torch.matmul in float64 (CPU tensors) or float32 (CUDA: float64 matmul is slow there)."""
    dt = torch.float64 if a.device.type == "cpu" else torch.float32
    ref = torch.matmul(a.to(dt), b.to(dt))
    if bias is not None:
        ref = ref + bias.to(dt)
    return ref


def torch_matmul_error(a, b, bias, ref, out_dtype) -> float:
    """The error torch itself makes computing the same product in the input dtype, rounded to out_dtype."""
    if a.device.type == "cpu":
        # CPU bf16 matmul is slow and not the baseline anyone uses; emulate fp32 accumulation + output rounding.
        got = torch.matmul(a.float(), b.float())
        if bias is not None:
            got = got + bias.float()
        got = got.to(out_dtype)
    else:
        got = torch.matmul(a, b) if out_dtype == a.dtype else torch.matmul(a.float(), b.float())
        if bias is not None:
            got = got + bias.to(got.dtype)
        got = got.to(out_dtype)
    return rel_error(got, ref)


def tolerance(torch_err: float, dtype: torch.dtype) -> float:
    """Allowed error: twice torch's own, with a floor of a few units of rounding of the output dtype."""
    floor = {torch.float32: 1e-6, torch.bfloat16: 4e-3, torch.float16: 5e-4}.get(dtype, 1e-3)
    return max(2.0 * torch_err, floor)


def strided_operand(rows: int, cols: int, *, col_major: bool, dtype, device, batch: int | None = None,
                    generator=None) -> torch.Tensor:
    """A random (batch?, rows, cols) tensor, stored row-major or column-major (a transposed view)."""
    shape = (cols, rows) if col_major else (rows, cols)
    if batch is not None:
        shape = (batch, ) + shape
    t = torch.randn(shape, dtype=torch.float32, device=device, generator=generator).to(dtype)
    return t.transpose(-1, -2) if col_major else t
