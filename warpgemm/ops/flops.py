"""FLOP formulas of the registered GEMM ops for torch.utils.flop_counter.FlopCounterMode (MFU accounting counts
them as it counts aten.mm / aten._grouped_mm / aten._scaled_mm). The public ops send their calls through these
registered ops whenever a dispatch mode is active (checks.under_dispatch_mode), so the eager fast paths are counted
too. Each formula takes the ops' arguments with tensors replaced by their shapes."""
from __future__ import annotations

import torch
from torch.utils.flop_counter import register_flop_formula

from . import elementwise, grouped, library, scaled  # noqa: F401  (the ops must be registered first)


@register_flop_formula([torch.ops.warpgemm.bmm, torch.ops.warpgemm.bmm_out])
def _bmm_flops(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """(Ba, M, K) @ (Bb, K, N), Ba and Bb in {1, batches} (batches may be 0: library.batch_count's rule)."""
    batches = a_shape[0] if a_shape[0] != 1 else b_shape[0]
    return 2 * batches * a_shape[1] * a_shape[2] * b_shape[2]


@register_flop_formula(torch.ops.warpgemm.grouped_mm_tokens)
def _tokens_flops(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """(T, K) tokens, each against one (K, N) expert."""
    return 2 * a_shape[0] * a_shape[1] * b_shape[2]


@register_flop_formula(torch.ops.warpgemm.grouped_mm_ragged_k)
def _ragged_k_flops(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    """(M, T) @ (T, N), the T tokens split among the groups."""
    return 2 * a_shape[0] * a_shape[1] * b_shape[1]


@register_flop_formula(torch.ops.warpgemm.scaled_mm)
def _scaled_flops(a_shape, b_shape, *args, out_shape=None, **kwargs) -> int:
    return 2 * a_shape[0] * a_shape[1] * b_shape[1]
