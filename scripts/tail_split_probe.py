"""The heuristic's plan on each shape (with the column split of a short last wave, heuristics.tail_split_columns,
where the rule takes it) against forced one-launch configs, each against cuBLAS in the same process in
alternating rounds. Writes JSON to argv[1] (default: print only).

    PYTHONPATH=. python3 scripts/tail_split_probe.py "$OUT/tail_split_probe.json"
    SHAPES=1024x14336x4096 CONFIGS=128x256x64_s3_w8_g8,128x128x64_s6_w4_g8 ROUNDS=5 python3 scripts/tail_split_probe.py
"""
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.candidates import parse_config
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.heuristics import LARGE
from warpgemm.ops.gemm_impl import _PLANS
from warpgemm.testing import rel_error

DEFAULT_SHAPES = "1024x14336x4096,512x28672x8192,1024x14336x8192,2048x14336x4096,1024x28672x4096,4096x4096x4096"


def main() -> None:
    shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ.get("SHAPES", DEFAULT_SHAPES).split(",")]
    rounds = int(os.environ.get("ROUNDS", "3"))
    plans = [("heuristic", None)] + [(c, parse_config(c)) for c in os.environ.get("CONFIGS", LARGE.name).split(",")]
    warm_gpu(2.0)
    rows = []
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        want = a.float() @ w.float().T
        _PLANS.clear()
        for name, cfg in plans:
            err = rel_error(warpgemm.matmul(a, w.T, config=cfg), want)
            reason = warpgemm.explain(a, w.T, config=cfg)
            t = alternate(lambda: warpgemm.matmul(a, w.T, config=cfg), lambda: torch.matmul(a, w.T), rounds=rounds,
                          rep_ms=60)
            row = {"M": M, "N": N, "K": K, "plan": name, "split": "second launch" in reason, "us": t.ms_a * 1e3,
                   "us_cublas": t.ms_b * 1e3, "ratio": t.ms_b / t.ms_a, "rel_error": err}
            rows.append(row)
            print(f"{M}x{N}x{K:<6} {name:>24} split={row['split']!s:>5} {row['us']:9.1f} us  cuBLAS "
                  f"{row['us_cublas']:9.1f} us  ratio {row['ratio']:.3f}  err {err:.1e}", flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"environment": environment(), "rounds": rounds, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
