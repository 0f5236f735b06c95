"""Whether TMA's zero fill of a weight box's rows past the weight's last row (the last tile-column of B = W.T, K-major)
is slow like A's (scripts/partial_rows_probe.py, gemm.edge_pieces). One config forced, after an L2 flush, in
alternating rounds:
  cols   - x @ W[:N].T as users call it (the last tile-column's B box partly past W's end: zero-filled);
  pad0   - the weight padded with rows of zeros to whole tile-columns (no box past the end; a wider output);
  cublas - torch.matmul on the N columns.

    python scripts/partial_cols_probe.py OUT.json [--m 512,...] [--n 3900,...] [--k 14336] [--config NAME]
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.candidates import parse_config_list
from warpgemm.testing import rel_error


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--m", default="512,1024")
    ap.add_argument("--n", default="3900,4000,4096")
    ap.add_argument("--k", type=int, default=14336)
    ap.add_argument("--config", default="128x128x64_s6_w4_g8")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    (cfg,) = parse_config_list(args.config).values()
    bn = cfg.block_m if cfg.swap_ab else cfg.block_n
    warm_gpu(2.0)
    rows = []
    for M in (int(v) for v in args.m.split(",")):
        x = torch.randn(M, args.k, device="cuda", dtype=torch.bfloat16)
        for N in (int(v) for v in args.n.split(",")):
            P = -(-N // bn) * bn
            full = torch.randn(P, args.k, device="cuda", dtype=torch.bfloat16)
            w = full[:N].clone()
            pad0 = full.clone()
            pad0[N:] = 0
            fns = {"cols": lambda: warpgemm.matmul(x, w.t(), config=cfg),
                   "pad0": lambda: warpgemm.matmul(x, pad0.t(), config=cfg),
                   "cublas": lambda: torch.matmul(x, w.t())}
            err = rel_error(fns["cols"](), x.float() @ w.float().t())
            t = {k: statistics.median(v) * 1e3 for k, v in rounds_ms(fns, args.rounds).items()}
            rows.append({"M": M, "N": N, "K": args.k, "config": cfg.name, "us": t, "rel_error": err})
            print(f"{M:5d}x{N}x{args.k} " + " ".join(f"{k} {v:7.1f}" for k, v in t.items()) + f"  err {err:.1e}",
                  flush=True)
            json.dump({"environment": environment(), "rows": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
