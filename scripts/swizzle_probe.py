"""Does a narrower shared-memory swizzle make TMA read operand rows that start off 32-byte sectors any faster?

Question (notes/perf.md, session 25): bf16 rows of K = 8 mod 16 elements cost our one-wave products 1.34-1.41x
(688x632x1688 against 1696), and ncu counts 2.25x the L2 requests; cuBLAS's same kernel pays 1.15x. Our operand
boxes are 128-byte rows (128-byte swizzle). With a 64- or 32-byte swizzle the TMA boxes are 64 or 32 bytes wide
(Triton splits a K step into more of them) and wgmma reads the narrower swizzle; if the request cost is per box row
crossing a line, narrower rows might cross fewer.

The layout of A's and B's descriptors (and so of their ring slots) is replaced with --swizzle bytes for this process
only; each setting must run in its own process (compiled kernels are cached per process).
    python scripts/swizzle_probe.py OUT.json --swizzle 64 --shapes 688x632x1688,688x632x1696 [--configs CFG,...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from triton.experimental.gluon import language as gl

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixed_cost_probe import time_variants  # noqa: E402

from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402
from warpgemm.candidates import parse_config  # noqa: E402
from warpgemm.kernels.hopper import gemm as gemm_module  # noqa: E402
from warpgemm.ops import gemm_impl  # noqa: E402
from warpgemm.testing import probe_product, write_probe_result  # noqa: E402


def patch_operand_swizzle(swizzle: int) -> None:
    """GemmLaunch builds its descriptors a, b, c in that order: give the first two `swizzle`-byte layouts."""
    original = gemm_module.full_desc
    calls = {"n": 0}

    def full_desc(base, shape, strides, block, layout):
        operand = calls["n"] % 3 < 2
        calls["n"] += 1
        if operand and swizzle != 128:
            layout = gl.NVMMASharedLayout(swizzle_byte_width=swizzle, element_bitwidth=base.element_size() * 8,
                                          rank=len(block))
        return original(base, shape, strides, block, layout)

    gemm_module.full_desc = full_desc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--swizzle", type=int, default=128, choices=(32, 64, 128))
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--configs", default="", help="forced configs besides the heuristics' plan")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    patch_operand_swizzle(args.swizzle)
    result = {"environment": environment(), "swizzle": args.swizzle, "rows": []}
    warm_gpu(1.0)
    for shape in args.shapes.split(","):
        a, b, c, ref, a3, b3, c3 = probe_product(shape)
        gemm_impl._PLANS.clear()
        plans = {"heuristics": gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)}
        for name in [s for s in args.configs.split(",") if s]:
            plans[name] = gemm_impl.plan_hopper(a3, b3, c3, None, parse_config(name), may_tune=False)
        fns = {"cublas": (lambda: torch.matmul(a, b, out=c))}
        for name, p in plans.items():
            label = f"{name} {p.config.name}" if name == "heuristics" else name
            fns[f"sw{args.swizzle} {label}"] = (lambda p=p: p.launch.launch(a3, b3, c3, None))
        for _ in range(args.rounds):
            time_variants(result, shape, fns, c, ref, args.calls)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
