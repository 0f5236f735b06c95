"""Where do the heuristics trail cuBLAS? Random shapes (log-uniform M, N, K; seeded), each checked against an fp32
product and timed against torch.matmul in alternating rounds; the config and ratio per shape, worst first.

    python scripts/scan_probe.py OUT.json [--count N] [--seed S] [--rounds R] [--m-range LO,HI] [--nn] [--llm]

--llm: M drawn as always (any integer in --m-range), N and K from the (N, K) of common LLM weights instead of at
random (multiples of 8): the products a model's layers make for a batch of any token count.
"""
from __future__ import annotations

import argparse
import json
import math
import random
import statistics

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.testing import probe_operands, rel_error


# (N, K) of LLM weights: Llama-3 8B/70B projections (4096, 14336, 8192, 28672) and Llama-2 7B/13B (11008, 5120,
# 13824), each in both orientations (up and down projections).
LLM_WEIGHTS = ((4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672),
               (11008, 4096), (4096, 11008), (5120, 5120), (13824, 5120), (5120, 13824))


def log_uniform(rng, lo, hi, step=8):
    return max(lo, int(math.exp(rng.uniform(math.log(lo), math.log(hi)))) // step * step)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--count", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--m-range", default="65,4096")
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of an (N, K) weight's W.T")
    ap.add_argument("--llm", action="store_true", help="(N, K) drawn from LLM_WEIGHTS, M any integer in the range")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    mlo, mhi = (int(x) for x in args.m_range.split(","))
    if args.llm:
        shapes = [(log_uniform(rng, mlo, mhi, 1), *rng.choice(LLM_WEIGHTS)) for _ in range(args.count)]
    else:
        shapes = [(log_uniform(rng, mlo, mhi, 1), log_uniform(rng, 1024, 32768), log_uniform(rng, 1024, 8192))
                  for _ in range(args.count)]
    result = {"environment": environment(), "seed": args.seed, "llm": args.llm, "nn": args.nn, "rows": []}
    warm_gpu(2.0)
    for M, N, K in shapes:
        a, w, ref = probe_operands(M, N, K)
        b = w.t().contiguous() if args.nn else w.t()
        err = rel_error(warpgemm.matmul(a, b), ref)
        times = rounds_ms({"ours": lambda: warpgemm.matmul(a, b), "cublas": lambda: torch.matmul(a, b)},
                          args.rounds, 40)
        med = {k: statistics.median(v) for k, v in times.items()}
        plan = warpgemm.explain(a, b)
        row = {"shape": f"{M}x{N}x{K}", "ms": med["ours"], "ms_cublas": med["cublas"],
               "ratio": med["cublas"] / med["ours"], "rel_error": err, "plan": plan}
        result["rows"].append(row)
        print(f"{row['shape']:>18} ratio {row['ratio']:.3f} err {err:.1e}", flush=True)
        del a, w, b
    result["rows"].sort(key=lambda r: r["ratio"])
    ratios = [r["ratio"] for r in result["rows"]]
    result["geomean"] = math.exp(sum(map(math.log, ratios)) / len(ratios))
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print(f"geomean {result['geomean']:.3f}; worst:")
    for r in result["rows"][:12]:
        cfg = r["plan"].split("config=", 1)[-1]
        print(f"{r['shape']:>18} {r['ratio']:.3f} {cfg[:90]}")
    if any(not r["rel_error"] < 1e-2 for r in result["rows"]):
        raise SystemExit("a result is wrong")


if __name__ == "__main__":
    main()
