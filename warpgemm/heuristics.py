"""Map a problem to a GemmConfig with no tuning cost.

The rules are few and measured (see notes/perf.md): the widest tile that still fills the GPU, a 64-row tile
when M is tiny, and the first shipped config the validity predicate accepts for the dtypes.
"""
from __future__ import annotations

import functools

import torch

from .config import GemmConfig, check_config

# Two consumer warpgroups share a 128x256 tile: each issues m64n256k16 wgmma, the widest there is.
LARGE = GemmConfig(block_m=128, block_n=256, block_k=64, stages=3, consumer_warps=8, group_m=8)
# One warpgroup on 128x128: twice the tiles, for problems that leave SMs idle at 128x256, and fp32 outputs.
MEDIUM = GemmConfig(block_m=128, block_n=128, block_k=64, stages=4, consumer_warps=4, group_m=8)
# One warpgroup on 64-row tiles: M <= 64 wastes half of every 128-row wgmma.
SMALL_M = GemmConfig(block_m=64, block_n=128, block_k=64, stages=6, consumer_warps=4, group_m=8)

SHIPPED_CONFIGS: tuple[GemmConfig, ...] = (LARGE, MEDIUM, SMALL_M)


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@functools.lru_cache(maxsize=4096)
def choose_config(batches: int, M: int, N: int, K: int, in_dtype: torch.dtype, out_dtype: torch.dtype,
                  num_sms: int) -> tuple[GemmConfig, str]:
    """The config for a (batches, M, N, K) problem and a short reason (for WARPGEMM_LOG / explain)."""
    if M <= 64:
        order, why = (SMALL_M, MEDIUM), f"M={M} <= 64: 64-row tiles"
    elif batches * _cdiv(M, 128) * _cdiv(N, 256) >= num_sms // 2:
        order, why = (LARGE, MEDIUM), "enough 128x256 tiles to fill the SMs"
    else:
        order, why = (MEDIUM, SMALL_M), "few tiles: 128x128 to spread over more SMs"
    for cfg in order:
        if check_config(cfg, in_dtype, out_dtype) is None:
            return cfg, why
    for cfg in SHIPPED_CONFIGS:
        if check_config(cfg, in_dtype, out_dtype) is None:
            return cfg, "fallback: first shipped config valid for the dtypes"
    raise AssertionError("no shipped config is valid")  # the test suite keeps this unreachable
