"""Few output tiles over a long K: 128x128 tiles cut along K (split-K) instead of whole 64x64 tiles.

Where an (M, N) output makes at most half the SMs' worth of 64x128 tiles, the heuristics take 64x64 tiles
(heuristics.NARROW) so that twice the SMs stream operands. Over a long K each of those programs streams its 64-row
panels of A and B alone, and the product runs well under cuBLAS (random shapes, results/2026-11-27-s39/scan/: 0.61-0.85x
on 34-110 such tiles with K of 4152-7816). A 128x128 tile moves half the bytes per FLOP of a 64x64 one; cut into S
parts of K (split_k=S: fp32 partials summed in part order by the last part, bitwise repeatable), T tiles make T * S
units, up to a wave (2-3 parts over 64x64 and 64x128 tiles were timed too, and lost to 4 over 128x128 nearly
everywhere). Forced on the scans' weakest shapes (fewtiles/), 128x128 sk4 ran 1.05-1.50x the plan where the
plan filled at most ~70% of the SMs and K per part was >= 1024 (104x2832x7816 +18% after a flush / +29% back to back;
B read along N: 90x1048x6664 +44-50%, 204x1352x6224 +23-38%, 160x1904x5192 +5-7%); behind where the 64x64 tiles
already filled the SMs (128x4096x14336, a `mid` shape, 128 tiles: -11%) or K was short (175x1808x2344 -15%;
353x2528x1936 and 312x1520x2584 lost with every split).
"""
from __future__ import annotations

import torch

from .config import GemmConfig, cdiv

FEW_TILES_SPLIT = True
# The plan's 64x64 tiles fill at most this share of the SMs (measured wins at 0.26-0.68, the loss at 0.97).
FEW_TILES_SPLIT_MAX_FILL = 0.7
# K at least this: wins at 4152-7816 (1038-1954 per part), the short-K losses at 2344-2584.
FEW_TILES_SPLIT_MIN_K = 4096
# The shapes measured and held out: 65-512 rows against 1024-8192-wide outputs. Outside them (e.g. thousands of rows
# against an output 16-64 wide, whose 128-wide tiles would be mostly padding) the 64x64 tiles stay.
FEW_TILES_SPLIT_MAX_M, FEW_TILES_SPLIT_MIN_N = 512, 1024
# Four parts. Where the heuristics take 64x64 tiles at all, 64x128 tiles number at most half the SMs
# (heuristics._large_or_other), so 128x128 tiles at most a quarter of them and four parts fit one wave on 132 SMs (the
# check below stays for other SM counts).
SPLIT_PARTS = 4
SPLIT_TILE = GemmConfig(block_m=128, block_n=128, block_k=64, stages=6, consumer_warps=4, group_m=8,
                        split_k=SPLIT_PARTS)


def few_tiles_split(batches: int, M: int, N: int, K: int, num_sms: int,
                    in_dtype: torch.dtype) -> tuple[GemmConfig, str] | None:
    """SPLIT_TILE and why, for a product the heuristics would run on 64x64 tiles; None to keep them. Unbatched
    products of 16-bit inputs only (what was measured)."""
    narrow_tiles = cdiv(M, 64) * cdiv(N, 64)
    if (not FEW_TILES_SPLIT or batches != 1 or in_dtype.itemsize != 2 or K < FEW_TILES_SPLIT_MIN_K
            or M > FEW_TILES_SPLIT_MAX_M or N < FEW_TILES_SPLIT_MIN_N
            or narrow_tiles > FEW_TILES_SPLIT_MAX_FILL * num_sms):
        return None
    tiles = cdiv(M, 128) * cdiv(N, 128)
    if tiles * SPLIT_PARTS > num_sms:
        return None
    return SPLIT_TILE, (f"{narrow_tiles} 64x64 tiles for {num_sms} SMs over K={K}: {tiles} 128x128 tiles in "
                        f"{SPLIT_PARTS} parts of K ({tiles * SPLIT_PARTS} units)")
