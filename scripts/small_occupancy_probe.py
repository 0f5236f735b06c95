"""Small products with few tiles of several K steps: more, smaller programs, several resident per SM?

Question (`bench small`'s weak shape, session 23's weak spot): 1536x384x512 runs 72 64x128 tiles of 8 K steps
(0.86x cuBLAS), 536x256x520 / 1496x72x552 / 464x912x520 0.75-0.80x; cuBLAS spreads such products over more SMs.
Smaller tiles pass one wave (64x64: 144 tiles at 1536x384), and a persistent grid then gives 12 programs two tiles
each. With a short ring a one-partition program takes 40-80 KB of shared memory, so two or three fit on an SM:
launched one program per tile (grid = tiles) every tile starts at once. Prediction: +10-15% where the heuristics'
tile fills 50-100% of the SMs.

Variants are forced configs, planned as warpgemm.matmul plans them; NAME:tiles launches one program per tile.
Timed as scripts/fixed_cost_probe.py times (CUPTI kernel durations and start-to-start spacing over a CUDA graph).
    python scripts/small_occupancy_probe.py OUT.json --shapes 1536x384x512 --variants CFG[:tiles],... [--stages 2,3]
--stages: the heuristics' one-partition config at other ring depths (the rule gives it as many slots as K steps).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixed_cost_probe import time_variants  # noqa: E402

from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402
from warpgemm.candidates import parse_config  # noqa: E402
from warpgemm.ops import gemm_impl  # noqa: E402
from warpgemm.testing import probe_product, write_probe_result  # noqa: E402


def launcher(a3, b3, c3, cfg, per_tile: bool):
    p = gemm_impl.plan_hopper(a3, b3, c3, None, cfg, may_tune=False)
    if per_tile:
        p.launch.grid = p.launch.tiles
        p.launch.bound = None
    return (lambda: p.launch.launch(a3, b3, c3, None)), p.launch.grid


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--variants", default="")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--stages", default="", help="also the heuristics' one-partition config at these ring depths")
    args = ap.parse_args()
    result = {"environment": environment(), "rows": []}
    warm_gpu(1.0)
    for shape in args.shapes.split(","):
        a, b, c, ref, a3, b3, c3 = probe_product(shape)
        gemm_impl._PLANS.clear()
        heur = gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)
        fns = {"cublas": (lambda: torch.matmul(a, b, out=c)),
               f"heuristics {heur.config.name}": (lambda: heur.launch.launch(a3, b3, c3, None))}
        for depth in [int(v) for v in args.stages.split(",") if v]:
            if not heur.config.warp_specialize and depth != heur.config.stages:
                fn, grid = launcher(a3, b3, c3, heur.config.replace(stages=depth), False)
                fns[f"heuristics at s{depth}"] = fn
        for spec in [s for s in args.variants.split(",") if s]:
            name, _, mode = spec.partition(":")
            fn, grid = launcher(a3, b3, c3, parse_config(name), mode == "tiles")
            fns[f"{name} grid {grid}"] = fn
        for _ in range(args.rounds):
            time_variants(result, shape, fns, c, ref, args.calls)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
