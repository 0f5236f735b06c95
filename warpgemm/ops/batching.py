"""torch.matmul's shape rules, reduced to the one problem the kernels solve: (Ba, M, K) @ (Bb, K, N) with Ba and
Bb each 1 (shared by every batch) or the batch count.

All reshaping here is done with torch view ops outside the custom op, so autograd and torch.compile see it.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch


class MatmulShapes(NamedTuple):
    a2: torch.Tensor  # a with 1-D promoted to (1, K)
    b2: torch.Tensor  # b with 1-D promoted to (K, 1)
    batch: tuple[int, ...]
    M: int
    K: int
    N: int
    out_shape: tuple[int, ...]


def matmul_shapes(a: torch.Tensor, b: torch.Tensor) -> MatmulShapes:
    da, db = a.dim(), b.dim()
    if da == 0 or db == 0:
        raise ValueError(f"matmul needs a and b with at least 1 dimension, got a {da}-D and b {db}-D")
    a2 = a.unsqueeze(0) if da == 1 else a
    b2 = b.unsqueeze(-1) if db == 1 else b
    M, K = a2.shape[-2], a2.shape[-1]
    Kb, N = b2.shape[-2], b2.shape[-1]
    if K != Kb:
        raise ValueError(f"b must have {K} rows (the last dimension of a, shape {tuple(a.shape)}), "
                         f"got b of shape {tuple(b.shape)}")
    ba, bb = tuple(a2.shape[:-2]), tuple(b2.shape[:-2])
    try:
        # torch.broadcast_shapes costs ~5 us per call; the common cases need none of its generality.
        batch = ba if (ba == bb or not bb) else bb if not ba else tuple(torch.broadcast_shapes(ba, bb))
    except RuntimeError:
        raise ValueError(f"the batch dimensions of a {ba} and b {bb} "
                         "do not broadcast") from None
    out_shape = batch + ((M, ) if da > 1 else ()) + ((N, ) if db > 1 else ())
    return MatmulShapes(a2, b2, batch, M, K, N, out_shape)


def _to_3d(x: torch.Tensor, batch: tuple[int, ...]) -> torch.Tensor:
    # Sizes are spelled out (no -1): with an empty dimension a -1 would be ambiguous.
    rows, cols = x.shape[-2], x.shape[-1]
    own = tuple(x.shape[:-2])
    if x.dim() == 3 and (own == batch or own[0] == 1):
        return x
    if math.prod(own) == 1:
        return x.reshape(1, rows, cols)  # shared by every batch: the kernel reads batch 0
    if own == batch:
        return x.reshape(math.prod(batch), rows, cols)  # a view unless the batch dims cannot be merged
    return x.expand(batch + (rows, cols)).reshape(math.prod(batch), rows, cols)  # partial broadcast: copied


def to_batched(s: MatmulShapes) -> tuple[torch.Tensor, torch.Tensor]:
    """(a3, b3) for a non-empty problem. When b is shared and a's batch can be merged into its rows, a becomes
    one tall matrix: (B*M, K) @ (K, N) is one GEMM with B times the rows, not B small ones."""
    if not s.batch:
        return s.a2.unsqueeze(0), s.b2.unsqueeze(0)
    a3 = _to_3d(s.a2, s.batch)
    b3 = _to_3d(s.b2, s.batch)
    # The batch merges into the rows when its stride lines up with them (else the batched form stays). Decided
    # from the strides, not by trying view(): under torch.compile a failed view on fake tensors is an error no
    # except clause sees.
    if b3.shape[0] == 1 and a3.shape[0] > 1 and (s.M == 1 or a3.stride(0) == s.M * a3.stride(1)):
        a3 = a3.view(1, a3.shape[0] * s.M, s.K)
    return a3, b3


def batch_count(a3: torch.Tensor, b3: torch.Tensor) -> int:
    """Batches of (Ba, M, K) @ (Bb, K, N) with Ba, Bb in {1, B}: B, which may be 0 (not max(Ba, Bb))."""
    return a3.shape[0] if a3.shape[0] != 1 else b3.shape[0]
