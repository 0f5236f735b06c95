"""Host-side geometry of TMA operands: which 3-D tensors a TMA descriptor can describe, and how.

A TMA descriptor needs a 16-byte aligned base, a contiguous innermost dimension and every other stride a
positive multiple of 16 bytes (device descriptors do not check this and silently read the wrong bytes, so it is
checked here, before anything is built). A dimension of size 1 is never stepped over, so its stride is free:
it is replaced by a legal one, which lets a (1, K) row, a single batch or an (M, 1) column go through untouched.
Anything else is copied into a padded buffer whose rows are whole 32-byte sectors (COPY_ROW_BYTES).

Geometry depends only on shapes, strides, itemsize and base alignment, so callers can cache it per call
signature and pair it with each call's tensors.
"""
from __future__ import annotations

from typing import NamedTuple

import torch


class TmaGeometry(NamedTuple):
    """A 3-D tensor as a TMA descriptor sees it: (batch, outer, inner) with inner stride 1.

    `contiguous_dim` says which dimension of the logical (batch, d1, d2) tensor is the descriptor's inner one:
    2 (d2 contiguous, "row-major") or 1 (d1 contiguous, "column-major").
    """

    shape: tuple[int, int, int]
    strides: tuple[int, int, int]
    contiguous_dim: int


def _round_up(x: int, m: int) -> int:
    return (x + m - 1) // m * m


def geometry(shape, strides, itemsize: int, aligned: bool, contiguous_dim: int) -> TmaGeometry | None:
    """The descriptor geometry of a (batch, d1, d2) tensor read along `contiguous_dim`, or None if TMA can't."""
    if not aligned:
        return None
    align = 16 // itemsize
    nb, d1, d2 = shape
    sb, s1, s2 = strides
    if contiguous_dim == 2:
        inner, outer, s_inner, s_outer = d2, d1, s2, s1
    else:
        inner, outer, s_inner, s_outer = d1, d2, s1, s2
    if s_inner != 1 and inner != 1:
        return None
    if outer == 1:
        s_outer = _round_up(inner, align)
    elif s_outer <= 0 or s_outer % align:
        return None
    if nb == 1:
        sb = _round_up(outer * s_outer, align)
    elif sb <= 0 or sb % align:
        return None
    return TmaGeometry((nb, outer, inner), (sb, s_outer, 1), contiguous_dim)


def describe(x: torch.Tensor, contiguous_dim: int) -> TmaGeometry | None:
    return geometry(x.shape, x.stride(), x.element_size(), x.data_ptr() % 16 == 0, contiguous_dim)


def describe_any(x: torch.Tensor, preferred_dim: int) -> TmaGeometry | None:
    """Try the preferred orientation first, then the other one."""
    return describe(x, preferred_dim) or describe(x, 3 - preferred_dim)


# A padded copy's rows start on 32-byte sectors: TMA reads rows that start 16 bytes into one at 1.25-1.7x the cost
# (results/2026-11-26-parts/align.json).
COPY_ROW_BYTES = 32


def off_sector(g: TmaGeometry, itemsize: int) -> bool:
    """Whether some row (or batch) of the operand starts 16 bytes into a 32-byte sector (its stride is an odd
    multiple of 16 bytes): TMA reads such rows 1.25-1.7x slower, so the heuristics weigh them (heuristics.py,
    off_sector.py). Strides only: a view whose base alone sits off a sector is not seen (the plan keys record
    16-byte alignment only)."""
    nb, outer, _ = g.shape
    return (outer > 1 and g.strides[1] * itemsize % 32 != 0) or (nb > 1 and g.strides[0] * itemsize % 32 != 0)


def padded_geometry(shape, itemsize: int, contiguous_dim: int) -> TmaGeometry:
    """The geometry of `padded_copy(x, contiguous_dim)` for an x of this shape."""
    nb, d1, d2 = shape
    align = COPY_ROW_BYTES // itemsize
    inner, outer = (d2, d1) if contiguous_dim == 2 else (d1, d2)
    pitch = _round_up(inner, align)
    return geometry((nb, d1, d2), (outer * pitch, pitch, 1) if contiguous_dim == 2 else (outer * pitch, 1, pitch),
                    itemsize, True, contiguous_dim)


def padded_copy(x: torch.Tensor, contiguous_dim: int) -> torch.Tensor:
    """Copy `x` into a fresh buffer whose rows (along `contiguous_dim`) start on 32-byte sector boundaries."""
    nb, d1, d2 = x.shape
    align = COPY_ROW_BYTES // x.element_size()
    if contiguous_dim == 2:
        buf = torch.empty((nb, d1, _round_up(d2, align)), dtype=x.dtype, device=x.device)
        view = buf[:, :, :d2]
    else:
        buf = torch.empty((nb, d2, _round_up(d1, align)), dtype=x.dtype, device=x.device)
        view = buf[:, :, :d1].transpose(1, 2)
    view.copy_(x)
    return view


def output_buffer(shape: tuple[int, int, int], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """A row-major output the TMA store can write: rows padded to whole 32-byte sectors when N * itemsize is not.

    Returns the logical (batch, M, N) view; the caller copies it out when it is not the user's tensor.
    """
    nb, m, n = shape
    # Rows exactly as padded_geometry describes them (the plans pair this buffer with that geometry).
    pitch = _round_up(n, COPY_ROW_BYTES // dtype.itemsize)
    if pitch == n:
        return torch.empty(shape, dtype=dtype, device=device)
    return torch.empty((nb, m, pitch), dtype=dtype, device=device)[:, :, :n]
