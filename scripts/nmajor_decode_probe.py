"""Decode-sized products against an N-major weight (B row-major (K, N): x @ W with W stored K x N), the layout the
48-64-row decode rule was not measured on (session 29): the heuristics' plan, the plain 64x128x128 s4 tile and swap-AB 64x64x128 s6,
each against torch.matmul on the same operands, CUDA-graph replay over cold weight copies, 2 alternating rounds.
Usage: python scripts/nmajor_decode_probe.py OUT.json"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.decode_bench import weight_copies
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.candidates import parse_config

CONFIGS = [None] + [parse_config(c) for c in ("64x128x128_s4_w4_g8", "64x64x128_s6_w4_g8_swap")]  # None: the plan
rows = []
warm_gpu(2.0)
for m in (48, 64):
    for n, k in ((14336, 4096), (28672, 8192), (18944, 3584)):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        ws = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for _ in range(weight_copies(n * k * 2))]
        want = x.float() @ ws[0].float()
        print(warpgemm.explain(x, ws[0]), flush=True)
        for cfg in CONFIGS:
            got = warpgemm.matmul(x, ws[0], config=cfg)
            err = ((got.float() - want).norm() / want.norm()).item()
            g = alternate(lambda: [warpgemm.matmul(x, w, config=cfg) for w in ws],
                          lambda: [torch.matmul(x, w) for w in ws], rounds=2, use_graph=True)
            us = g.ms_a * 1e3 / len(ws)
            tbs = (n * k + m * k + m * n) * 2 / (us * 1e-6) / 1e12
            name = "plan" if cfg is None else cfg.name
            rows.append({"shape": f"{m}x{n}x{k}", "layout": "nn", "config": name, "us": us, "tbs": tbs,
                         "ratio": g.ms_b / g.ms_a, "rel_error_vs_fp32": err})
            print(f"{m}x{n}x{k} nn {name:>26} {tbs:.3f} TB/s {g.ms_b / g.ms_a:.3f}x torch err {err:.1e}",
                  flush=True)
json.dump({"results": rows, "device": torch.cuda.get_device_name()}, open(sys.argv[1], "w"), indent=1)
