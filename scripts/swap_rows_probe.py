"""Held-out check of the swap-AB row-fit rule (warpgemm/swap_rows.py): random shapes whose plan the rule changes,
the heuristics as shipped against the same heuristics with the rule switched off, both against torch.matmul (B = W.T
of an (N, K) weight; --nn: B row-major (K, N), the rule switched on for that layout too), alternating rounds, each
checked against an fp32 product.

    python scripts/swap_rows_probe.py OUT.json [--count N] [--seed S] [--draws D] [--m-range LO,HI] [--rounds R]
        [--shapes MxNxK,...] [--nn]
"""
from __future__ import annotations

import argparse
import contextlib
import math
import random
import statistics
from unittest import mock

import torch

from warpgemm import heuristics, swap_rows
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.ops import gemm_impl
from warpgemm.testing import add_probe_rows, probe_operands, rel_error, write_probe_result


def plan(a3, b3, c3, rule: bool, nn: bool = False):
    gemm_impl._PLANS.clear()
    heuristics.choose_config.cache_clear()
    with contextlib.ExitStack() as stack:
        if not rule:
            stack.enter_context(mock.patch.object(swap_rows, "SWAP_ROWS_ENABLED", False))
        if nn:
            stack.enter_context(mock.patch.object(swap_rows, "SWAP_ROWS_N_MAJOR", True))
        return gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)


def label(p) -> str:
    split = getattr(p.launch, "n1", 0)
    return p.config.name + (f"+{p.launch.tail.cfg.name}@{split}" if split else "")


def drawn_shapes(args) -> list[tuple[int, int, int]]:
    """Log-uniform M in --m-range, N 1024-32768 and K 1024-8192 (multiples of 8), kept where the rule changes the
    plan (decided on meta tensors: no GPU time)."""
    if args.shapes:
        return [tuple(int(v) for v in s.split("x")) for s in args.shapes.split(",")]
    rng = random.Random(args.seed)
    lo, hi = (int(v) for v in args.m_range.split(","))
    lu = lambda a, b: int(math.exp(rng.uniform(math.log(a), math.log(b))))  # noqa: E731
    out = []
    for _ in range(args.draws):
        M, N, K = lu(lo, hi), lu(1024, 32768) // 8 * 8, lu(1024, 8192) // 8 * 8
        a = torch.empty(1, M, K, device="meta", dtype=torch.bfloat16)
        if args.nn:
            b = torch.empty(1, K, N, device="meta", dtype=torch.bfloat16)
        else:
            b = torch.empty(1, N, K, device="meta", dtype=torch.bfloat16).transpose(1, 2)
        c = torch.empty(1, M, N, device="meta", dtype=torch.bfloat16)
        if plan(a, b, c, True, args.nn).config != plan(a, b, c, False, args.nn).config:
            out.append((M, N, K))
        if len(out) == args.count:
            break
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--count", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--draws", type=int, default=400)
    ap.add_argument("--m-range", default="65,700")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default="")
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N), with the rule switched on for it")
    args = ap.parse_args()
    shapes = drawn_shapes(args)
    result = {"environment": environment(), "seed": args.seed, "m_range": args.m_range, "nn": args.nn, "rows": []}
    warm_gpu(2.0)
    for M, N, K in shapes:
        a, w, ref = probe_operands(M, N, K)
        b = w.t().contiguous() if args.nn else w.t()
        a3, b3 = a.unsqueeze(0), b.unsqueeze(0)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        c3 = c.unsqueeze(0)
        fns, errs, names = {"cublas": lambda: torch.matmul(a, b)}, {}, {}
        for name, rule in (("rule", True), ("rule off", False)):
            p = plan(a3, b3, c3, rule, args.nn)
            c.fill_(float("nan"))
            p.launch.launch(a3, b3, c3, None)
            errs[name], names[name] = rel_error(c, ref), label(p)
            fns[name] = (lambda p: (lambda: p.launch.launch(a3, b3, c3, None)))(p)
        add_probe_rows(result, f"{M}x{N}x{K}", rounds_ms(fns, args.rounds, 60), errs, names)
    rows = {(r["shape"], r["variant"]): r for r in result["rows"]}
    gains = [rows[(s, "rule off")]["ms"] / rows[(s, "rule")]["ms"] for s in dict.fromkeys(r["shape"] for r in
                                                                                           result["rows"])]
    if gains:
        result["gain_geomean"] = math.exp(statistics.fmean(math.log(x) for x in gains))
        print(f"rule against rule off: geomean {result['gain_geomean']:.3f}, {sum(x > 1 for x in gains)} of "
              f"{len(gains)} ahead, min {min(gains):.3f}")
        for variant in ("rule", "rule off"):
            r = [x["ratio_vs_cublas"] for x in result["rows"] if x["variant"] == variant]
            print(f"{variant}: geomean vs cuBLAS {math.exp(statistics.fmean(math.log(v) for v in r)):.3f}")
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
