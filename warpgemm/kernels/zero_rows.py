"""Zero, in place and on the device, the rows of a (T, C) tensor at or past the last group's end: the largest entry
of offs, clamped to [0, T], as the grouped kernels read offs (no host synchronization).

The token form leaves those rows unwritten (as torch._grouped_mm does), but a gradient must hold zeros there.
masked_fill over the whole tensor read and wrote every element: 0.29 ms a step for a 32768 x 2048 gradient, more
than a third of the GEMM it follows (results/2026-11-28-s48/, notes/perf.md "session 48"). This kernel writes
only the rows past the end; where every token belongs to a group each program reads offs and returns.

A plain Triton kernel: it also runs under the interpreter on CPU.
"""
import torch
import triton
import triton.language as tl

from .. import _env
from .hopper.launch import CachedKernel

_BLOCK_R, _BLOCK_C = 32, 128


# The sizes and strides are not specialized on, so one binary per (dtypes, BLOCK_G, alignment) serves every call and
# the cached launch may reuse it.
@triton.jit(do_not_specialize=["num_groups", "rows", "cols", "row_stride", "col_stride"])
def zero_rows_past_end_kernel(x_ptr, offs_ptr, num_groups, rows, cols, row_stride, col_stride,
                              BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_G: tl.constexpr):
    end = tl.zeros([], dtype=tl.int32)  # (starting at 0 clamps a negative end)
    for g0 in range(0, num_groups, BLOCK_G):
        idx = g0 + tl.arange(0, BLOCK_G)
        end = tl.maximum(end, tl.max(tl.load(offs_ptr + idx, mask=idx < num_groups, other=0), 0))
    end = tl.minimum(end, rows)
    n_blocks = tl.cdiv(rows, BLOCK_R)
    for rb in range(end // BLOCK_R + tl.program_id(0), n_blocks, tl.num_programs(0)):
        r = rb * BLOCK_R + tl.arange(0, BLOCK_R)
        live = (r >= end) & (r < rows)
        for c0 in range(0, cols, BLOCK_C):
            c = c0 + tl.arange(0, BLOCK_C)
            ptr = x_ptr + r[:, None].to(tl.int64) * row_stride + c[None, :].to(tl.int64) * col_stride
            tl.store(ptr, tl.zeros([BLOCK_R, BLOCK_C], dtype=x_ptr.dtype.element_ty),
                     mask=live[:, None] & (c[None, :] < cols))


# (device, x's and offs' dtypes, BLOCK_G, x and offs 16-byte aligned) -> CachedKernel (after the first call the
# launch skips Triton's Python binder).
_LAUNCHES: dict[tuple, object] = {}


def zero_rows_past_end(x: torch.Tensor, offs: torch.Tensor) -> None:
    """x (T, C): rows >= clamp(max(offs), 0, T) set to zero in place. offs: int32 (G,), G > 0, on x's device."""
    if x.numel() == 0:
        return
    if offs.stride(0) != 1:
        offs = offs.contiguous()
    groups = offs.shape[0]
    block_g = min(1024, 1 << (max(groups, 16) - 1).bit_length())
    args = (x, offs, groups, x.shape[0], x.shape[1], x.stride(0), x.stride(1))
    constexprs = dict(BLOCK_R=_BLOCK_R, BLOCK_C=_BLOCK_C, BLOCK_G=block_g)
    if not x.is_cuda:
        zero_rows_past_end_kernel[(min(4, triton.cdiv(x.shape[0], _BLOCK_R)), )](*args, **constexprs)
        return
    device = x.device.index
    key = (device, x.dtype, offs.dtype, block_g, x.data_ptr() % 16 == 0, offs.data_ptr() % 16 == 0)
    launch = _LAUNCHES.get(key)
    if launch is None:
        launch = _LAUNCHES[key] = CachedKernel(zero_rows_past_end_kernel, constexprs, num_warps=4, maxnreg=None,
                                               num_warps_param=False)
    grid = max(1, min(_env.sms_for(x.device), -(-x.shape[0] // _BLOCK_R)))
    if torch._C._cuda_getDevice() != device:
        with torch.cuda.device(device):
            launch.launch(grid, device, lambda: args, args)
    else:
        launch.launch(grid, device, lambda: args, args)
