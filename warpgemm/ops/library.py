"""torch.library registration: `torch.ops.warpgemm.bmm` / `bmm_out`, their fake (meta) implementations and the
autograd formula, so the ops trace under torch.compile(fullgraph=True) and differentiate.

The ops take the 3-D form the kernels solve (see gemm_impl); the public functions reshape around them with
ordinary torch view ops. A forced GemmConfig crosses the op boundary as a list of ints.
"""
from __future__ import annotations

from typing import List, Optional

import torch
from torch import Tensor

from ..config import GemmConfig
from .batching import batch_count
from . import transforms
from .eager_autograd import EagerOp
from .checks import check_out_not_aliasing, check_out_not_static
from .gemm_impl import bmm_into


def _config(values: Optional[List[int]]) -> GemmConfig | None:
    return None if values is None else GemmConfig.from_list(values)


def bmm_eager(a: Tensor, b: Tensor, bias: Optional[Tensor], out_dtype: Optional[torch.dtype],
              config: Optional[List[int]]) -> Tensor:
    c = torch.empty((batch_count(a, b), a.shape[1], b.shape[2]), dtype=out_dtype or a.dtype, device=a.device)
    bmm_into(a, b, bias, c, _config(config))
    return c


@torch.library.custom_op("warpgemm::bmm", mutates_args=())
def bmm(a: Tensor, b: Tensor, bias: Optional[Tensor], out_dtype: Optional[torch.dtype],
        config: Optional[List[int]]) -> Tensor:
    """(Ba, M, K) @ (Bb, K, N) (+ bias) with Ba, Bb in {1, batches}; fp32 accumulation."""
    transforms.refuse_tangents("bmm", a, b, bias)
    return bmm_eager(a, b, bias, out_dtype, config)


@bmm.register_fake
def _bmm_fake(a, b, bias, out_dtype, config):
    return a.new_empty((batch_count(a, b), a.shape[1], b.shape[2]), dtype=out_dtype or a.dtype)


@torch.library.custom_op("warpgemm::bmm_out", mutates_args=("out", ))
def bmm_out(a: Tensor, b: Tensor, bias: Optional[Tensor], out: Tensor, config: Optional[List[int]]) -> None:
    """Like bmm, written into `out` (batches, M, N) of any strides."""
    # The public call checked these already, except under torch.compile, where storage addresses are not traced and
    # fake tensors carry no static-weight mark.
    check_out_not_aliasing(out, a=a, b=b, bias=bias)
    check_out_not_static(out)
    transforms.refuse_tangents("bmm_out", a, b, bias)
    bmm_into(a, b, bias, out, _config(config))


@bmm_out.register_fake
def _bmm_out_fake(a, b, bias, out, config):
    return None


def _setup_context(ctx, inputs, output):
    a, b, bias, out_dtype, config = inputs
    # dA needs only b and dB only a, so a frozen weight's layer keeps no activation alive (torch's mm saves the same).
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    ctx.save_for_backward(b if need_a else None, a if need_b else None)
    ctx.a_like = (a.shape[0], a.dtype, column_major(a))
    ctx.b_like = (b.shape[0], b.dtype, column_major(b))
    ctx.bias_dtype = None if bias is None else bias.dtype


def column_major(x: Tensor) -> bool:
    """Whether a (batch, rows, cols) operand is stored column by column: its gradient is then made the same way, as
    torch's mm backward does (an nn.Linear weight read as W.T gets a contiguous W-shaped gradient)."""
    return x.shape[2] > 1 and x.stride(2) != 1 and x.stride(1) == 1


def product_operands(left: Tensor, right: Tensor, columns: bool) -> tuple[Tensor, Tensor]:
    """The kernel's (a3, b3) for left @ right, column by column when `columns`: computed as (right^T @ left^T)^T,
    whose product the caller transposes back."""
    return (right.transpose(1, 2), left.transpose(1, 2)) if columns else (left, right)


def backward_operands(grad: Tensor, a: Optional[Tensor], b: Optional[Tensor]) -> tuple:
    """The (left, right) of dA = grad @ b^T and of dB = a^T @ grad; None for a gradient whose operand is not saved."""
    return (None if b is None else (grad, b.transpose(1, 2)), None if a is None else (a.transpose(1, 2), grad))


def _product(left: Tensor, right: Tensor, out_dtype, columns: bool) -> Tensor:
    """left @ right (batched), column by column when `columns`."""
    c = BMM(*product_operands(left, right, columns), None, out_dtype, None)
    return c.transpose(1, 2) if columns else c


def bias_gradient(grad: Tensor, dims: tuple, bias_dtype: torch.dtype) -> Tensor:
    """The bias's gradient: grad summed over `dims` in fp32, rounded once to the bias's dtype. torch's sum of a bf16
    or fp16 tensor keeps an fp32 accumulator: one launch where the dtypes agree (as F.linear's backward does)."""
    if not dims:
        raise ValueError("bias_gradient needs the dimensions to sum over (an empty tuple sums over all of them)")
    if grad.dtype == bias_dtype:
        return grad.sum(dims)
    return grad.sum(dims, dtype=torch.float32).to(bias_dtype)


def gradient_operand(grad: Tensor, dtype: torch.dtype) -> tuple[Tensor, Optional[Tensor]]:
    """The output's gradient as an operand of the backward GEMMs (inputs of `dtype`), and the scale their fp32
    results must be multiplied by (None: none).

    An fp32 gradient (the forward ran with out_dtype=torch.float32) cast to fp16 overflows past 65504 and flushes
    below 6e-8, though the gradients it makes may fit fp16 well. So it is divided by the power of two that brings its
    largest magnitude into [2^14, 2^15) (a device scalar: no synchronization; exact, and it keeps fp16's whole normal
    range below the largest entry), and the products are multiplied back in fp32. A gradient holding inf or NaN, or
    all zeros, keeps the plain cast. bf16 has fp32's range: a plain cast."""
    if grad.dtype == dtype:
        return grad, None
    if dtype != torch.float16 or grad.dtype != torch.float32:
        return grad.to(dtype), None
    amax = grad.abs().amax()
    usable = torch.isfinite(amax) & (amax > 0)
    # The exponent at least -126: a scale in fp32's normal range (a gradient of denormals stays finite).
    scale = torch.where(usable, torch.exp2((torch.floor(torch.log2(amax)) - 14).clamp(min=-126)),
                        torch.ones_like(amax))
    return (grad / scale).to(dtype), scale


def finish_gradient(grad_fp32: Tensor, batches: int, dtype: torch.dtype, scale: Optional[Tensor],
                    column_major: bool = False) -> Tensor:
    """A backward product (fp32 where scaled or broadcast) as the gradient of an operand of `batches` batches and
    `dtype`: summed over the batches it was broadcast across (in the product's own orientation, so a column-major
    product stays column-major: a sum returns a contiguous tensor), multiplied back by the gradient's scale (after
    the sum: a smaller tensor), in its dtype."""
    if batches == 1 and grad_fp32.shape[0] != 1:
        grad_fp32 = (grad_fp32.transpose(1, 2).sum(0, keepdim=True).transpose(1, 2) if column_major
                     else grad_fp32.sum(0, keepdim=True))
    if scale is not None:
        grad_fp32 = grad_fp32 * scale
    return grad_fp32.to(dtype)


def _torch_backward(grad: Tensor, a: Optional[Tensor], b: Optional[Tensor], needs: tuple, a_like: tuple,
                    b_like: tuple, bias_dtype):
    """The gradients with torch ops (fp32 products, one rounding): for a gradient that carries a forward-AD tangent
    (forward-over-reverse), which the kernels would drop."""
    (a_batches, a_dtype, _), (b_batches, b_dtype, _) = a_like, b_like
    da = db = dbias = None
    if needs[0]:
        da = finish_gradient(torch.matmul(grad.float(), b.float().transpose(1, 2)), a_batches, a_dtype, None)
    if needs[1]:
        db = finish_gradient(torch.matmul(a.float().transpose(1, 2), grad.float()), b_batches, b_dtype, None)
    if needs[2]:
        dbias = bias_gradient(grad, (0, 1), bias_dtype)
    return da, db, dbias


def backward_3d(grad: Tensor, saved: tuple, needs: tuple, a_like: tuple, b_like: tuple, bias_dtype):
    """(dA, dB, dbias) of (Ba, M, K) @ (Bb, K, N) (+ bias) from the output's gradient `grad` (batches, M, N).
    saved: (b, a) as the forward saved them (None where no gradient needs it); needs: whether a, b and bias need
    gradients; a_like, b_like: (batches, dtype, column_major) of each operand."""
    b, a = saved
    if transforms.tangent(grad):
        return _torch_backward(grad, a, b, needs, a_like, b_like, bias_dtype)
    (a_batches, a_dtype, a_columns), (b_batches, b_dtype, b_columns) = a_like, b_like
    # dA and dB go through the same kernels; a broadcast operand's gradient is accumulated in fp32 over batches.
    g, scale = gradient_operand(grad, a_dtype)
    da = db = dbias = None
    for_a, for_b = backward_operands(g, a, b)
    if needs[0]:
        wide = scale is not None or (a_batches == 1 and g.shape[0] != 1)
        da = finish_gradient(_product(*for_a, torch.float32 if wide else None, a_columns),
                             a_batches, a_dtype, scale, a_columns)
    if needs[1]:
        wide = scale is not None or (b_batches == 1 and g.shape[0] != 1)
        db = finish_gradient(_product(*for_b, torch.float32 if wide else None, b_columns),
                             b_batches, b_dtype, scale, b_columns)
    if needs[2]:
        dbias = bias_gradient(grad, (0, 1), bias_dtype)
    return da, db, dbias


def _backward(ctx, grad: Tensor):
    return (*backward_3d(grad, ctx.saved_tensors, ctx.needs_input_grad, ctx.a_like, ctx.b_like, ctx.bias_dtype),
            None, None)


bmm.register_autograd(_backward, setup_context=_setup_context)
# What the public ops and the backward call: the registered op, or in plain eager calls its implementation.
BMM = EagerOp(torch.ops.warpgemm.bmm, bmm_eager, _setup_context, _backward)
