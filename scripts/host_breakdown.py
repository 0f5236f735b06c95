"""The eager host path of warpgemm.linear, piece by piece, against F.linear: decode-sized calls over rotating weight
copies (as `bench decode`'s eager column issues them).

    python scripts/host_breakdown.py [M N K] [OUT.json]

Each piece is timed alone (host time from an idle GPU, bench.timing.eager_ms, 20 loops over the copies), so the
pieces add up to roughly the whole call. results/2026-11-23-eager/host_breakdown_*.json were taken with 100 loops, which filled the
launch queue: their two "whole call" lines read the kernels' GPU time, not the host's (the pieces are right)."""
import json
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import eager_ms
from warpgemm.ops import api


def main():
    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (4, 4096, 4096)
    out_path = sys.argv[4] if len(sys.argv) > 4 else None
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(5)]
    w = ws[0]
    for v in ws:
        warpgemm.linear(x, v)
    key = ("linear", ) + api._recipe_key(x, w, None, None, None)
    recipe = api._RECIPES[key]
    launch = recipe.launch
    c = torch.empty(recipe.out_shape, dtype=recipe.out_dtype, device=recipe.device)
    dev = x.device
    pieces = {
        "F.linear (whole call)": lambda: [F.linear(x, v) for v in ws],
        "warpgemm.linear (whole call)": lambda: [warpgemm.linear(x, v) for v in ws],
        "recipe key": lambda: [("linear", ) + api._recipe_key(x, v, None, None, None) for v in ws],
        "key + lookup": lambda: [api._RECIPES.get(("linear", ) + api._recipe_key(x, v, None, None, None))
                                 for v in ws],
        "_needs_grad": lambda: [api._needs_grad(x, v, None) for v in ws],
        "_cuda_getDevice": lambda: [torch._C._cuda_getDevice() for v in ws],
        "torch.empty(out)": lambda: [torch.empty(recipe.out_shape, dtype=recipe.out_dtype, device=recipe.device)
                                     for v in ws],
        "x.new_empty(out)": lambda: [x.new_empty(recipe.out_shape) for v in ws],
        "current raw stream": lambda: [torch._C._cuda_getCurrentRawStream(dev.index) for v in ws],
        "launch (prepared output)": lambda: [launch.launch(x, v, c, None) for v in ws],
    }
    rows = {}
    for rnd in range(3):
        for name, fn in pieces.items():
            for _ in range(20):
                fn()
            rows.setdefault(name, []).append(eager_ms(fn, 20)[0] * 1e3 / len(ws))  # host time
    res = {name: min(v) for name, v in rows.items()}
    for name, us in res.items():
        print(f"{name:>32}: {us:6.2f} us")
    if out_path:
        json.dump({"shape": [m, n, k], "environment": environment(), "us_per_call": res, "rounds": rows},
                  open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
