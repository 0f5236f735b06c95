"""Swap-AB tiles whose width fits x's rows: the heuristics' rule for 65-700 rows of x (bf16, fp16 and fp8; the weight
contiguous along K, as an nn.Linear weight, or along N); from 1000 rows (to 4096) in place of one-warpgroup 128x128
tiles where the tile count fits the SMs better (16-bit, x and weight along K, rows on 32-byte sectors): +7.4%
after an L2 flush and +5.4% back to back on held-out shapes (701-999 rows keep the plain tiles: they lost there back
to back).

A plain tile puts x's rows on wgmma's M side, in 64- or 128-row steps: 147 rows cost two 128-row tile-rows (256, 57%
of them real), 544 rows five (640). cuBLAS computes such products transposed, with x's rows on wgmma's N side,
where any multiple of 8 is a width: 147 rows in one 152-wide tile, 544 in three 192-wide ones (scripts/
cublas_kernels.py on the session-21 scan's weakest shapes: 136-192-wide tiles on every one of them). Here the
kernel's swap-AB form does the same with a two-part width (config.TWO_PART_WIDTHS; Triton's tensors need
power-of-two sides): 128 weight rows on two warpgroups by 80-192 rows of x, stored through shared memory in C's
orientation with TMA (epilogue.TmaStoreEpilogue, TRANSPOSED). Taken where it pads x's rows 10% less than the
heuristics' plan and a wave model (tile counts against the SMs, tile-times fitted to measured shapes) favours it;
checked held out against the heuristics without the rule (results/2026-11-26-swap-rows/, notes/perf.md, session 21).
"""
from __future__ import annotations

import torch

from .config import GemmConfig, cdiv, check_config

_SWAP = dict(block_k=64, consumer_warps=8, group_m=8, swap_ab=True)
# Tiles of 128 weight rows by `width` rows of x, by width: two-part widths stored in rest-wide chunks, 128 in two;
# as many stages as 227 KB of shared memory holds beside a 16-bit output's two chunk buffers.
SWAP_ROWS: dict[int, GemmConfig] = {
    80: GemmConfig(block_m=128, block_n=80, stages=7, store_chunks=5, **_SWAP),
    96: GemmConfig(block_m=128, block_n=96, stages=6, store_chunks=3, **_SWAP),
    128: GemmConfig(block_m=128, block_n=128, stages=5, store_chunks=2, **_SWAP),
    144: GemmConfig(block_m=128, block_n=144, stages=5, store_chunks=9, **_SWAP),
    160: GemmConfig(block_m=128, block_n=160, stages=5, store_chunks=5, **_SWAP),
    192: GemmConfig(block_m=128, block_n=192, stages=4, store_chunks=3, **_SWAP),
}
# fp8 (scaled_mm): the same tiles with K steps of the same 128 bytes (128 fp8 elements), so the same rings fit.
SWAP_ROWS_FP8: dict[int, GemmConfig] = {w: cfg.replace(block_k=128) for w, cfg in SWAP_ROWS.items()}
SWAP_ROWS_ENABLED = True
SWAP_ROWS_FP8_ENABLED = True
# Weights contiguous along N too (B row-major (K, N)): the kernel then reads its A (the weight) MN-major. The model
# was fitted on K-major weights only; held out on N-major ones (scripts/swap_rows_probe.py --nn, seed 45): 1.177x over
# the heuristics without the rule, 21 of 24 ahead, 0.741 -> 0.872x cuBLAS.
SWAP_ROWS_N_MAJOR = True
SWAP_ROWS_MIN_M = 65  # fewer rows are decode's (swap-AB tiles 16-64 wide, heuristics.DECODE)
SWAP_ROWS_MAX_M = 700  # the rows measured
SWAP_ROWS_MAX_PADDING = 0.9  # x's padded rows, as a fraction of the current plan's, at most (so never at M = 128 k)
# Tile-times in a wave model fitted to 62 measured shapes (results/2026-11-26-swap-rows/, notes/perf.md): a swap-AB
# tile's time per output element is 1.3 times a 128x256 plain tile's, and a plain tile's relative to that tile by
# shape (128x128 on one warpgroup 0.65 at these sizes: above heuristics.TAIL_TILE_TIME, fitted on larger K).
SWAP_TILE_TIME = 1.3
PLAIN_TILE_TIME = {(128, 256): 1.0, (256, 128): 1.0, (128, 192): 0.85, (128, 160): 0.72, (128, 128): 0.65,
                   (64, 128): 0.25, (64, 64): 0.125}
# 512+ rows on 128x256 tiles: those tiles win (7 held-out shapes of 536-646 rows: 0.88-1.02, geomean 0.956).
SWAP_ROWS_LARGE_MAX_M = 511
# Past SWAP_ROWS_MAX_M x's rows fill several swap-AB tiles, and what matters is no longer the padding but how the tile
# count fits the SMs: the width (160 or 192) with the fewest wave-times, at SWAP_WIDE_TILE_TIME a tile-time per output
# element against a 128x256 tile's, replaces a one-warpgroup 128x128 plan of no more wave-times (ties go to the swap-AB
# tile). Forced against that plan (results/2026-11-27-s43/c5/): 1735x2904x2672 160 wide +17% after a flush (cuBLAS
# runs 132 256x160 tiles there), 2276x2288x1872 192 wide +10%; the tile-times that fit those two
# are 1.18-1.33. 1.15 was then checked held out (c7/, 15 shapes): +2.6%, 9 ahead, the worst -9.5%. Replacing other
# plans (128x160 two-part tiles) or taking 128-wide swap tiles lost held out (c6/); 144 is left out: its 16-column
# part re-reads the weight's slab for a ninth of the work (session 19) and lost where its count spilled a wave.
# 16-bit products with x and the weight read in place along K and every operand's rows on 32-byte sectors (rows off
# sectors take the cluster pairs of off_sector.py), unbatched, as measured. x read along M (A column-major) was timed
# after (s44/c13/, 8 shapes): -1.8% after a flush and -0.8% back to back against the 128x128 plan, 160-wide tiles -20%
# on two of them, so there the plain tile stays.
# Back to back over cold weights (c10/, the same 15 shapes as c7/) it ran 0.902 -> 0.897x, 7 of 15 ahead, its three
# losses (M 713-814 against weights of 6184-17768 rows) 7-14% behind. So it starts at 1000 rows, checked on 14 fresh
# shapes of 1000-4096 rows (results/2026-11-27-s44/, seed 440): 0.825 -> 0.886x after a flush (+7.4%, 10 ahead) and
# 0.859 -> 0.905x back to back (+5.4%, 11 ahead); behind on 1727x6016x8000 (-5% both ways), 3501x5232x1984 (-7% /
# -6%), 1023x5376x6224 (-2% / -1%), and in `bench odd` on 1536x4096x4096 (-1.5 to -3.6% in session 43). The tuner
# times these tiles from 701 rows (tuning.candidates_for).
SWAP_WIDE_ROWS_ENABLED = True
SWAP_WIDE_ROWS_MIN_M = 1000
SWAP_WIDE_ROWS_MAX_M = 4096
SWAP_WIDE_TILE_TIME = 1.15
SWAP_WIDE_WIDTHS = (160, 192)


def rows_fit(M: int) -> tuple[int, int]:
    """(parts, width): the fewest x tiles of at most 192 rows that cover M rows, each of the narrowest width that
    does (544 rows: three of 192; 273: two of 144; 147: one of 160)."""
    parts = -(-M // max(SWAP_ROWS))
    width = min(w for w in SWAP_ROWS if parts * w >= M)
    return parts, width


def plain_time(cfg: GemmConfig, M: int, N: int, num_sms: int) -> float:
    """Waves of cfg's tiles times their tile-time, in 128x256 tile-times."""
    bm, bn = cfg.block_m, cfg.block_n
    tile = PLAIN_TILE_TIME.get((bm, bn), bm * bn / (128 * 256))  # other tiles: by area
    return cdiv(cdiv(M, bm) * cdiv(N, bn), num_sms) * tile


def swap_time(parts: int, width: int, N: int, num_sms: int, tile_time: float = SWAP_TILE_TIME) -> float:
    return cdiv(parts * cdiv(N, 128), num_sms) * width / 256 * tile_time


def wide_rows_fit(M: int, N: int, num_sms: int) -> tuple[float, int, int]:
    """(wave-times, parts, width) of the SWAP_WIDE_WIDTHS tile with the fewest wave-times over M rows of x (past
    SWAP_ROWS_MAX_M); on a tie the wider tile (fewer tiles, each weight slab read by fewer of them)."""
    time, neg_width = min((swap_time(cdiv(M, w), w, N, num_sms, SWAP_WIDE_TILE_TIME), -w) for w in SWAP_WIDE_WIDTHS)
    return time, cdiv(M, -neg_width), -neg_width


def swap_rows_config(cfg: GemmConfig, batches: int, M: int, N: int, num_sms: int, in_dtype: torch.dtype,
                     out_dtype: torch.dtype, weight_k_major: bool = True, rows_off_sector: bool = False,
                     x_k_major: bool = True) -> tuple[GemmConfig, str] | None:
    """The swap-AB tile that replaces the heuristics' plain `cfg` for an unbatched 16-bit or fp8 product, with the
    reason; None to keep `cfg` (decode's swap-AB tiles, split or stream-K plans, batched products, on which the rule
    was not measured; shapes where it saves little padding or the wave model favours cfg). weight_k_major: the weight
    (the product's B) is read along K; else along N (SWAP_ROWS_N_MAJOR). rows_off_sector: an operand's rows start
    off 32-byte sectors (past SWAP_ROWS_MAX_M rows such products keep their plan). x_k_major: x (the product's A)
    is read in place along K (past SWAP_ROWS_MAX_M rows others keep their plan)."""
    fp8 = in_dtype.itemsize == 1
    if (not SWAP_ROWS_ENABLED or (fp8 and not SWAP_ROWS_FP8_ENABLED) or not (weight_k_major or SWAP_ROWS_N_MAJOR)
            or batches != 1
            or not SWAP_ROWS_MIN_M <= M <= max(SWAP_ROWS_MAX_M, SWAP_WIDE_ROWS_MAX_M)
            or in_dtype.itemsize not in (1, 2) or cfg.swap_ab
            or cfg.split_k > 1 or cfg.stream_k or (cfg.block_n >= 256 and M > SWAP_ROWS_LARGE_MAX_M)):
        return None
    if M > SWAP_ROWS_MAX_M:
        return _wide_rows_config(cfg, M, N, num_sms, in_dtype, out_dtype, weight_k_major and x_k_major,
                                 rows_off_sector)
    parts, width = rows_fit(M)
    padded = parts * width
    plain_rows = cdiv(M, cfg.block_m) * cfg.block_m
    if padded > SWAP_ROWS_MAX_PADDING * plain_rows:
        return None
    ours, theirs = swap_time(parts, width, N, num_sms), plain_time(cfg, M, N, num_sms)
    if ours > theirs:
        return None
    swap = (SWAP_ROWS_FP8 if fp8 else SWAP_ROWS)[width]
    if check_config(swap, in_dtype, out_dtype) is not None:
        return None
    return swap, (f"M={M}: {parts} swap-AB tile(s) of {width} rows of x (x on wgmma's N side) pad them to {padded} "
                  f"where {cfg.name} pads to {plain_rows}: {swap.name}, {ours:.2f} 128x256 wave-times against "
                  f"{theirs:.2f}")


def _wide_rows_config(cfg: GemmConfig, M: int, N: int, num_sms: int, in_dtype: torch.dtype, out_dtype: torch.dtype,
                      both_k_major: bool, rows_off_sector: bool) -> tuple[GemmConfig, str] | None:
    """swap_rows_config over SWAP_WIDE_ROWS_MIN_M-SWAP_WIDE_ROWS_MAX_M rows: the wave model alone decides.
    both_k_major: x and the weight both read in place along K (the layout measured)."""
    if (not SWAP_WIDE_ROWS_ENABLED or not SWAP_WIDE_ROWS_MIN_M <= M <= SWAP_WIDE_ROWS_MAX_M or in_dtype.itemsize != 2
            or not both_k_major
            or rows_off_sector or (cfg.block_m, cfg.block_n, cfg.consumer_warps) != (128, 128, 4)):
        return None
    ours, parts, width = wide_rows_fit(M, N, num_sms)
    theirs = plain_time(cfg, M, N, num_sms)
    swap = SWAP_ROWS[width]
    if ours > theirs or check_config(swap, in_dtype, out_dtype) is not None:
        return None
    return swap, (f"M={M}: {parts} swap-AB tiles of {width} rows of x (x on wgmma's N side) fit the SMs in "
                  f"{ours:.2f} 128x256 wave-times against {theirs:.2f} for {cfg.name}: {swap.name}")
