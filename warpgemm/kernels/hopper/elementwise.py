"""Host side of the warp-specialized elementwise kernel: 2-D stream geometry and cached launches."""
from __future__ import annotations

import math
from typing import NamedTuple

import torch
import triton

from ...config import StreamConfig, stream_launch_regs
from .elementwise_kernel import OPS, elementwise_kernel
from .launch import CachedKernel, LightDesc, full_desc, nvmma_layout, parts_source_hash


class StreamGeometry(NamedTuple):
    """Every tensor of an elementwise call seen as the same (rows, cols) matrix, each with its own row stride."""

    rows: int
    cols: int
    row_strides: tuple[int, ...]


def _merged_row_stride(shape, strides) -> int | None:
    """Stride of the merged leading dimensions of a tensor whose last dimension is contiguous, or None."""
    if shape[-1] != 1 and strides[-1] != 1:
        return None
    row_stride = None
    expect = None
    for size, stride in zip(reversed(shape[:-1]), reversed(strides[:-1])):
        if size == 1:
            continue
        if row_stride is None:
            row_stride = expect = stride
        elif stride != expect:
            return None
        expect = stride * size
    return row_stride if row_stride is not None else shape[-1]


def stream_geometry(tensors, block_y: int) -> StreamGeometry | None:
    """A 2-D view shared by same-shape tensors that TMA can stream, or None (then another path is taken).

    All contiguous: any factorization of numel works; (numel / block_y, block_y) makes every tile one contiguous
    chunk. Otherwise rows = the merged leading dimensions, cols = the last one, if each tensor allows it.
    """
    t0 = tensors[0]
    itemsize = t0.element_size()
    align = 16 // itemsize
    if any(t.data_ptr() % 16 for t in tensors) or t0.dim() == 0:
        return None
    n = t0.numel()
    if all(t.is_contiguous() for t in tensors):
        width = block_y if n % block_y == 0 else t0.shape[-1]
        if width % align:
            return None
        return StreamGeometry(n // width, width, (width, ) * len(tensors))
    shape = tuple(t0.shape)
    strides = []
    for t in tensors:
        rs = _merged_row_stride(shape, t.stride())
        rows = math.prod(shape[:-1])
        if rs is None or (rows > 1 and (rs <= 0 or rs % align)):
            return None
        strides.append(rs if rows > 1 else -(-shape[-1] // align) * align)
    return StreamGeometry(math.prod(shape[:-1]), shape[-1], tuple(strides))


class StreamLaunch:
    __slots__ = ("cfg", "geom", "block", "layout", "grid", "kernel")

    def __init__(self, cfg: StreamConfig, geom: StreamGeometry, dtype: torch.dtype, op: str, num_sms: int):
        self.cfg, self.geom = cfg, geom
        self.block = (cfg.block_x, cfg.block_y)
        self.layout = nvmma_layout(self.block, dtype, swizzle=False)
        tiles = triton.cdiv(geom.rows, cfg.block_x) * triton.cdiv(geom.cols, cfg.block_y)
        if cfg.tiles_per_program:
            self.grid = triton.cdiv(tiles, cfg.tiles_per_program)
        else:
            self.grid = min(tiles, num_sms * cfg.ctas_per_sm)
        num_warps, maxnreg = stream_launch_regs(cfg)
        constexprs = dict(OP=OPS[op], LOAD_SLOTS=cfg.load_slots, STORE_SLOTS=cfg.store_slots, IO_REGS=cfg.io_regs,
                          PARTS_HASH=parts_source_hash())
        self.kernel = CachedKernel(elementwise_kernel, constexprs, num_warps, maxnreg)

    def launch(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, alpha: float) -> None:
        g = self.geom
        ts = (a, b, c)

        def full_args():
            return [full_desc(t, (g.rows, g.cols), (rs, 1), self.block, self.layout)
                    for t, rs in zip(ts, g.row_strides)] + [alpha]

        light = [LightDesc(t, (g.rows, g.cols), (rs, 1)) for t, rs in zip(ts, g.row_strides)]
        self.kernel.launch(self.grid, c.device.index, full_args, (*light, alpha))
