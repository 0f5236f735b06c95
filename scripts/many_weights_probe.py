"""Eager host time per warpgemm.linear call when a model cycles through many weights of one shape (every layer's
q/o projection is its own tensor): a few copies against more copies than any per-launch cache holds. Against F.linear
on the same loop. Question: does a per-call cost (a tensor map encoded again for a weight address not cached) appear
only past some number of distinct weights?

    python3 scripts/many_weights_probe.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import eager_ms, warm_gpu

rows = []
warm_gpu(1.0)
for n, k in ((1024, 1024), (4096, 4096)):
    pool = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(160)]
    for m in (1, 4, 16):
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for copies in (8, 40, 160):
            ws = pool[:copies]
            calls = max(1, 640 // copies)

            def ours():
                for _ in range(calls):
                    for w in ws:
                        warpgemm.linear(x, w)

            def theirs():
                for _ in range(calls):
                    for w in ws:
                        F.linear(x, w)

            ours(), theirs()  # plans, compiles, cached maps for the weights seen
            res = {}
            for label, fn in (("warpgemm", ours), ("F.linear", theirs), ("warpgemm", ours), ("F.linear", theirs)):
                host, wall = eager_ms(fn, 3)
                res.setdefault(label, []).append((host * 1e3 / (calls * copies), wall * 1e3 / (calls * copies)))
            row = {"M": m, "N": n, "K": k, "copies": copies}
            for label, v in res.items():
                row[label + "_host_us"] = min(h for h, _ in v)
                row[label + "_wall_us"] = min(w for _, w in v)
            rows.append(row)
            print(f"{m:>2}x{n}x{k} {copies:>3} weights: host us/call warpgemm {row['warpgemm_host_us']:.2f} "
                  f"F.linear {row['F.linear_host_us']:.2f}; wall {row['warpgemm_wall_us']:.2f} / "
                  f"{row['F.linear_wall_us']:.2f}", flush=True)
    del pool
json.dump({"probe": "many_weights", "environment": environment(), "results": rows}, open(sys.argv[1], "w"), indent=1)
