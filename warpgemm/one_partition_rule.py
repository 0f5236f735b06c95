"""The heuristics' rule for the one-partition kernel (GemmConfig.warp_specialize=False,
kernels/hopper/one_partition.py).

Triton's warp_specialize costs every program ~0.4 us to start and end its partitions (scripts/one_partition_probe.py:
the same GEMM body with and without an idle worker partition, 0.35-0.45 us apart at 64^3-512^3). A product whose
tiles all fit in one wave and whose K fits in the ring (every program loads its one tile's K steps at once) needs no
producer warp running ahead, so the chosen tile runs in one partition, with a ring only as deep as its K steps
(each slot costs its barrier inits and a predicated load in the prologue: 256^3 on 64x64x128 tiles 2.75 us with 6
slots, 2.46 with 2) and at most MAX_SLOTS deep. Measured (results/2026-11-26-one-partition/, CUPTI kernel times in
CUDA graphs): 256^3 3.02 -> 2.46 us (cuBLAS 2.50), 512^3 3.55 -> 3.10 (3.17). Longer K stays warp-specialized: at
1024^3 (16 K steps on 64x128x64 tiles) and 256x4096x4096 the one-partition form with 8 slots was 2% slower; with 4
slots plain 64-row tiles are ahead up to 16 K steps (LONGER_K below).
Dense products chosen by the heuristics, 16-bit (ops/gemm_impl.resolve_config) or fp8 (ops/scaled.plan) inputs; a
forced config is run as given.
"""
from __future__ import annotations

import torch

from .config import GemmConfig, cdiv, check_config

ONE_PARTITION_ENABLED = True
# 64x64 tiles that fill at most 40% of the SMs run as 64x32 ones: twice the SMs take in the operands of a product
# that is all latency and per-SM ingest (weak.json, forced: 536x256x520 4.22 -> 3.78 us, 216x392x656 4.26 -> 3.71,
# 1496x72x552 4.54 -> 3.95; cuBLAS 3.33-3.36; where 64x32 tiles pass one wave, 464x912x520, they lose 40%). Held out
# (narrow_seed3.json, 31 shapes with up to half the SMs): 1.053x but 0.88-0.97x on the five with 60-63 tiles, while
# the 25 with up to 56 gained 1.076x (min 1.00): hence 40%.
NARROW_HALVES = True
NARROW_HALVES_MAX_FILL = 0.4
# At most 4 slots: a unit issues its first loads (one per slot) before its first wgmma, and past 4 that prologue costs
# more than a deeper ring buys; later steps reuse slots as their wgmmas retire (results/2026-11-26-small-suite/
# flat_depth.json, 12 shapes at 2-4 slots and the K steps' own depth: at 5-8 K steps 4 slots were 1.06-1.16x faster
# than 5-8, e.g. 1536x384x512 4.54 -> 3.95 us; at <= 4 steps the own depth stays best).
RING_CAP = True
MAX_SLOTS = 4
# Plain 64-row tiles of one wave take it past their own ring too, up to LONGER_K_MAX_STEPS K steps and K <= 2048:
# with 4 slots refilled as wgmmas retire, one partition keeps up with the producer warp at 8-16 steps and saves its
# start and end. Found on 7 hot shapes (results/2026-11-26-small-suite/longer_k_*.json: 1024^3 6.2 -> 5.95 us), held
# out on shapes drawn where it fires (results/2026-11-26-longer-k/, CUDA graphs, 3 rounds): bf16 hot 1.111x (17
# shapes, min 1.031), cold weights 1.082x (13, min 0.933), fp8 hot 1.127x (10, min 1.066), cold 1.094x (10, min
# 1.011). Swap-AB tiles and long K stream weights (decode: one partition 0.99-1.01x, flat_decode.json; mid
# 0.96-1.02x, flat_mid.json): not them.
LONGER_K = True
LONGER_K_MAX_STEPS = 16
LONGER_K_MAX_K = 2048


def tile_count(cfg: GemmConfig, batches: int, M: int, N: int) -> int:
    """Output tiles of `cfg` on a (batches, M, N) product (swap-AB tiles are weight rows by x rows)."""
    rows, cols = (N, M) if cfg.swap_ab else (M, N)
    return batches * cdiv(rows, cfg.block_m) * cdiv(cols, cfg.block_n)


def eligible(cfg: GemmConfig, in_dtype: torch.dtype = torch.bfloat16) -> bool:
    """Whether the one-partition kernel can run `cfg`'s tiles from `in_dtype` inputs (config.check_config is the one
    judge: whole tiles of a power-of-two width on one consumer, alone); whether the variant fits beside the call's
    output is checked on the variant itself."""
    return cfg.warp_specialize and check_config(cfg.replace(warp_specialize=False), in_dtype, torch.bfloat16) is None


def one_partition_config(cfg: GemmConfig, batches: int, M: int, N: int, K: int, num_sms: int,
                         in_dtype: torch.dtype, out_dtype: torch.dtype) -> tuple[GemmConfig, str] | None:
    """`cfg` (the heuristics' choice) in one partition, with the reason, where every program runs one tile whose K
    steps all fit in `cfg`'s ring (plain 64-row tiles with LONGER_K: number at most LONGER_K_MAX_STEPS, or the ring
    if deeper); else None. The one-partition ring holds min(K steps, MAX_SLOTS) slots, at least 2."""
    if not ONE_PARTITION_ENABLED or not eligible(cfg, in_dtype):
        return None
    tiles = tile_count(cfg, batches, M, N)
    steps = cdiv(K, cfg.block_k)
    # The tiles and K that longer_k_*.json measured (not weight streams: fp8 128x4096x4096 has 16 K steps of 256).
    longer = LONGER_K and RING_CAP and cfg.block_m == 64 and not cfg.swap_ab and K <= LONGER_K_MAX_K
    max_steps = max(cfg.stages, LONGER_K_MAX_STEPS) if longer else cfg.stages
    if tiles > num_sms or steps > max_steps:
        return None
    flat = cfg.replace(warp_specialize=False, stages=max(2, min(steps, MAX_SLOTS) if RING_CAP else steps))
    why = ""
    if (NARROW_HALVES and not cfg.swap_ab and cfg.block_m == 64 and cfg.block_n == 64
            and tiles <= NARROW_HALVES_MAX_FILL * num_sms):
        halves = flat.replace(block_n=32)
        if check_config(halves, in_dtype, out_dtype) is None:
            flat, tiles, why = halves, batches * cdiv(M, 64) * cdiv(N, 32), ", 64x32 tiles: up to twice the SMs"
    if check_config(flat, in_dtype, out_dtype) is not None:
        return None
    return flat, (f"one partition: {tiles} tiles for {num_sms} SMs, {steps} K steps in a {flat.stages}-slot ring "
                  f"(no producer warp, no partition start and end){why}")


def applied(cfg: GemmConfig, why: str, batches: int, M: int, N: int, K: int, num_sms: int, in_dtype: torch.dtype,
            out_dtype: torch.dtype) -> tuple[GemmConfig, str]:
    """(config, reason) after the rule: the heuristics' last step in gemm_impl.resolve_config and scaled.plan."""
    flat = one_partition_config(cfg, batches, M, N, K, num_sms, in_dtype, out_dtype)
    return (flat[0], f"{why}; {flat[1]}") if flat is not None else (cfg, why)


def one_partition_variants(configs, in_dtype: torch.dtype = torch.bfloat16) -> tuple[GemmConfig, ...]:
    """What the rule can make of `configs` (the shipped ones for `in_dtype`: heuristics.SHIPPED_CONFIGS, or
    FP8_CONFIGS with an fp8 dtype): each eligible config in one partition with its own ring (RING_CAP off), the
    capped one and the shortest, so tests and compile checks cover every end of every ring it can choose."""
    out = []
    for cfg in configs:
        if eligible(cfg, in_dtype):
            widths = [cfg.block_n] + ([32] if not cfg.swap_ab and cfg.block_m == 64 and cfg.block_n == 64 else [])
            for bn in widths:  # 32: NARROW_HALVES
                out += [cfg.replace(warp_specialize=False, block_n=bn, stages=s)
                        for s in (cfg.stages, min(cfg.stages, MAX_SLOTS), 2)]
    return tuple(dict.fromkeys(out))
