"""Why `bench overhead` reads warpgemm.matmul(a, w.T) slower than torch.matmul at 256^3 while linear is not:
host time to issue (idle GPU, short bursts), wall time of long bursts, GPU time per call (CUDA graph), and
whether the eager recipe is hit, for each call.

    python scripts/overhead_probe.py [OUT.json]
"""
import json
import statistics
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import bench_graph_ms, eager_ms
from warpgemm.ops import api


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else None
    s = 256
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(s, device="cuda", dtype=torch.bfloat16)
    calls = {
        "warpgemm.matmul(a, w.T)": lambda: warpgemm.matmul(a, w.T),
        "torch.matmul(a, w.T)": lambda: torch.matmul(a, w.T),
        "warpgemm.matmul(a, w.T, bias)": lambda: warpgemm.matmul(a, w.T, bias=bias),
        "warpgemm.linear(a, w)": lambda: warpgemm.linear(a, w),
        "warpgemm.linear(a, w, bias)": lambda: warpgemm.linear(a, w, bias),
        "F.linear(a, w, bias)": lambda: F.linear(a, w, bias),
        "F.linear(a, w)": lambda: F.linear(a, w),
    }
    for fn in calls.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    rows = {}
    for name, fn in calls.items():
        before = len(api._RECIPES)
        host = [eager_ms(fn, 200)[0] * 1e3 for _ in range(7)]
        wall = [eager_ms(fn, 3000)[1] * 1e3 for _ in range(3)]
        gpu = bench_graph_ms(fn, 50) * 1e3
        rows[name] = {"host_us": statistics.median(host), "wall_3000_us": statistics.median(wall), "graph_us": gpu,
                      "recipes_added": len(api._RECIPES) - before}
    print(f"{'call':>32} {'host us':>8} {'wall us':>8} {'graph us':>9}")
    for name, r in rows.items():
        print(f"{name:>32} {r['host_us']:8.2f} {r['wall_3000_us']:8.2f} {r['graph_us']:9.2f}")
    print("recipes:", len(api._RECIPES), [k[0] if isinstance(k[0], str) else "matmul" for k in api._RECIPES])
    if out_path:
        with open(out_path, "w") as f:
            json.dump({"rows": rows, "environment": environment()}, f, indent=2)


if __name__ == "__main__":
    main()
