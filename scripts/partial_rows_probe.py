"""Why a nearly empty last tile-row is slow (session 40: 389x4096x14336 on 128x128 tiles 130 us, 512 rows on the same
128 tiles 86 us). For each M and weight, one config forced, four ways in alternating rounds after an L2 flush:
  rows    - the product of M rows as users call it (the last tile-row's A box partly out of bounds: zero-filled);
  pad0    - the rows padded to the tile-row count with zeros in memory (same tiles, no out-of-bounds box);
  padrand - the same padded rows filled with random values (the full product of that many rows);
  cublas  - torch.matmul on the M rows.

    python scripts/partial_rows_probe.py OUT.json [--m 384,389,...] [--nk 4096x14336,...] [--config NAME]
        [--set module.attr=value,...]

--set: module settings applied first (warpgemm.kernels.hopper.gemm.EDGE_PIECES=1 turns the pieces off), as
scripts/setting_probe.py takes them. --fp8: e4m3 operands with per-tensor scales through scaled_mm (the config an fp8
one; cublas is then torch._scaled_mm with use_fast_accum=True).
"""
from __future__ import annotations

import argparse
import ast
import importlib
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
    ap.add_argument("--m", default="256,259,320,384,385,389,448,500,512")
    ap.add_argument("--nk", default="4096x14336,8192x8192")
    ap.add_argument("--config", default="128x128x64_s6_w4_g8")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--set", default="")
    ap.add_argument("--fp8", action="store_true")
    args = ap.parse_args()
    for item in filter(None, args.set.split(",")):
        target, value = item.split("=", 1)
        module, attr = target.rsplit(".", 1)
        setattr(importlib.import_module(module), attr, ast.literal_eval(value))
    (cfg,) = parse_config_list(args.config).values()
    warm_gpu(2.0)
    rows = []
    for nk in args.nk.split(","):
        N, K = (int(v) for v in nk.split("x"))
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        for M in (int(v) for v in args.m.split(",")):
            P = -(-M // cfg.block_m) * cfg.block_m
            full = torch.randn(P, K, device="cuda", dtype=torch.bfloat16)
            a = full[:M].clone()
            pad0 = full.clone()
            pad0[M:] = 0
            if args.fp8:
                one = torch.ones((), device="cuda")
                w8, a8, p8, f8 = (t.to(torch.float8_e4m3fn) for t in (w, a, pad0, full))
                fns = {"rows": lambda: warpgemm.scaled_mm(a8, w8.t(), one, one, out_dtype=torch.bfloat16, config=cfg),
                       "pad0": lambda: warpgemm.scaled_mm(p8, w8.t(), one, one, out_dtype=torch.bfloat16, config=cfg),
                       "padrand": lambda: warpgemm.scaled_mm(f8, w8.t(), one, one, out_dtype=torch.bfloat16,
                                                             config=cfg),
                       "cublas": lambda: torch._scaled_mm(a8, w8.t(), one, one, out_dtype=torch.bfloat16,
                                                          use_fast_accum=True)}
                ref = a8.float() @ w8.float().t()
            else:
                fns = {"rows": lambda: warpgemm.matmul(a, w.t(), config=cfg),
                       "pad0": lambda: warpgemm.matmul(pad0, w.t(), config=cfg),
                       "padrand": lambda: warpgemm.matmul(full, w.t(), config=cfg),
                       "cublas": lambda: torch.matmul(a, w.t())}
                ref = a.float() @ w.float().t()
            err = rel_error(fns["rows"](), ref)
            t = {k: statistics.median(v) * 1e3 for k, v in rounds_ms(fns, args.rounds).items()}
            rows.append({"M": M, "N": N, "K": K, "config": cfg.name, "set": args.set, "fp8": args.fp8, "us": t,
                         "rel_error": err})
            print(f"{M:5d}x{N}x{K} " + " ".join(f"{k} {v:7.1f}" for k, v in t.items()) + f"  err {err:.1e}",
                  flush=True)
            json.dump({"environment": environment(), "rows": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
