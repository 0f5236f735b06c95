"""Where the time of a split-K GEMM goes on few-tile shapes (M = 128-256): each config timed over a range of K
against cuBLAS in the same process. A fixed cost per call shows as the intercept of time against K, the
streaming rate as the slope. Writes JSON to argv[1] (default: print only).

    PYTHONPATH=. python3 scripts/splitk_probe.py "$OUT/splitk_probe.json"
    CONFIGS=128x256x64_s3_w8_g8_sk4 SHAPES=128x4096x4096 python3 scripts/splitk_probe.py
"""
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.candidates import parse_config
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.testing import rel_error

DEFAULT_SHAPES = ("128x4096x512,128x4096x2048,128x4096x4096,128x4096x16384,256x4096x4096,128x8192x8192,"
                  "128x28672x8192")
DEFAULT_CONFIGS = ("64x128x64_s8_w4_g8,128x128x64_s6_w4_g8,128x128x64_s6_w4_g8_sk2,128x128x64_s6_w4_g8_sk4,"
                   "128x256x64_s3_w8_g8,128x256x64_s3_w8_g8_sk2,128x256x64_s3_w8_g8_sk4,128x256x64_s3_w8_g8_sk8")


def main() -> None:
    shapes = [tuple(int(x) for x in s.split("x")) for s in os.environ.get("SHAPES", DEFAULT_SHAPES).split(",")]
    configs = [parse_config(c) for c in os.environ.get("CONFIGS", DEFAULT_CONFIGS).split(",")]
    rounds = int(os.environ.get("ROUNDS", "2"))
    warm_gpu(2.0)
    rows = []
    for M, N, K in shapes:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        want = (a.float() @ w.float().T)
        for cfg in configs:
            err = rel_error(warpgemm.matmul(a, w.T, config=cfg), want)
            t = alternate(lambda: warpgemm.matmul(a, w.T, config=cfg), lambda: torch.matmul(a, w.T), rounds=rounds,
                          rep_ms=40)
            row = {"M": M, "N": N, "K": K, "config": cfg.name, "us": t.ms_a * 1e3, "us_cublas": t.ms_b * 1e3,
                   "ratio": t.ms_b / t.ms_a, "rel_error": err}
            rows.append(row)
            print(f"{M:>4}x{N:>5}x{K:>5} {cfg.name:>28} {row['us']:8.1f} us  cuBLAS {row['us_cublas']:8.1f} us  "
                  f"ratio {row['ratio']:.3f}  err {err:.1e}", flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
