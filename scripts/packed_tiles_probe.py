"""Decode probe: packed 32-row swap-AB tiles against 64-row ones, at several ring depths.

Question (issue 6): the 32-row tile used to keep each A box in the lower half of a 64-row slot whose upper half
was zero, so half of every A slot in flight was padding (11-23: +1-2.6% on 4096^2 and 14336x4096 at M <= 16, a
loss at 32-64 rows). Packed, the boxes sit back to back and wgmma reads the next box as its discarded upper rows
(partitions.GemmOperands.a_chunk_tile): the same ring then holds twice the weight, or the same weight in half the
shared memory. Prediction: the packed tile reads like split-K with a free reduction did (11-24: +3% on 4096^2 and
14336x4096 at M = 4), and wins at 32-64 rows too once the ring is as deep in bytes as the 64-row tile's.

Each candidate is a forced config planned as warpgemm.linear plans it; timed as `bench decode` times.
    git apply results/2026-11-25-packed/packed_tiles.diff   # the packed kernel (not kept; without it the 32-row
    python scripts/packed_tiles_probe.py OUT.json [M,..]    # configs run the padded slots, and s7/s9 do not fit)
SHALLOW=1 / TALL=1: the shipped tiles with fewer stages / 128-row swap-AB tiles (run on the tree without the diff).
Outcome (notes/perf.md, 2026-11-25 session 12): WRONG. Packed s5 reads like the padded tile; deeper rings are no
faster; tall tiles lose.
"""
import os
import sys

import torch

from warpgemm import _env
from warpgemm.config import GemmConfig, check_config
from warpgemm.ops import gemm_impl

from _decode_probe import run_probe


def swap(bm, bn, bk, stages):
    return GemmConfig(block_m=bm, block_n=bn, block_k=bk, stages=stages, consumer_warps=4, swap_ab=True)


def shallow_variants(m: int) -> dict[str, GemmConfig]:
    """SHALLOW=1: the shipped tiles with fewer stages (deeper packed rings read no faster: is less in flight
    better?)."""
    if m <= 16:
        return {f"{t}_s{s}": swap(bm, 16, 256, s) for t, bm in (("r64", 64), ("r32", 32)) for s in (3, 4, 5)}
    if m <= 32:
        return {f"{t}_s{s}": swap(bm, 32, 256, s) for t, bm in (("r64", 64), ("r32", 32)) for s in (3, 4)}
    return {f"r64_s{s}": swap(64, 64, 128, s) for s in (4, 5, 6)}


def tall_variants(m: int) -> dict[str, GemmConfig]:
    """TALL=1: 128 weight rows per swap-AB tile (one warpgroup, two 64-row wgmmas), so x is re-read from L2 by half
    as many tiles: at 32-64 rows x's bytes per tile are half to all of the weight's."""
    if m <= 32:
        return {"r64_s4": swap(64, 32, 256, 4), "t128_s2": swap(128, 32, 256, 2), "t128k128_s5": swap(128, 32, 128, 5)}
    return {"r64_s6": swap(64, 64, 128, 6), "t128_s4": swap(128, 64, 128, 4), "t128k64_s8": swap(128, 64, 64, 8)}


def variants(m: int) -> dict[str, GemmConfig]:
    if os.environ.get("SHALLOW") == "1":
        return shallow_variants(m)
    if os.environ.get("TALL") == "1":
        return tall_variants(m)
    if m <= 16:
        out = {"r64_s5": swap(64, 16, 256, 5), "p32_s5": swap(32, 16, 256, 5), "p32_s7": swap(32, 16, 256, 7),
               "p32_s9": swap(32, 16, 256, 9)}
    elif m <= 32:
        out = {"r64_s4": swap(64, 32, 256, 4), "p32_s4": swap(32, 32, 256, 4), "p32_s6": swap(32, 32, 256, 6)}
    else:
        out = {"r64_s6": swap(64, 64, 128, 6), "p32_s6": swap(32, 64, 128, 6), "p32_s8": swap(32, 64, 128, 8),
               "p32k256_s4": swap(32, 64, 256, 4)}
    for label, cfg in out.items():
        assert check_config(cfg, torch.bfloat16, torch.bfloat16) is None, (label, cfg)
    return out


def candidates(m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    out = {}
    for label, cfg in variants(m).items():
        launch = gemm_impl.plan_hopper(x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0), None, cfg).launch

        def run(x, w, y, launch=launch):
            launch.launch(x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0), None)
        out[label] = run
    return out


if __name__ == "__main__":
    ms = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else [4, 16, 32, 64]
    print(f"{torch.cuda.get_device_name()}  SMs {_env.num_sms(0)}", flush=True)
    run_probe("packed_tiles", candidates, ms, sys.argv[1])
