"""Is the many-expert weight gradient (grouped_mm's ragged-K form) held by the 700 W power cap?

wgrad_bound.json: E128 T16384 K7168 N2048 takes 1.21 ms when every group is empty (the kernel only stores zero
tiles, 3.1 TB/s), 1.22 ms at 1 token a group, 1.44 at 16, 1.58 at 128, 1.89 skewed (the same tokens), and
torch._grouped_mm follows the same curve. If the stores alone already draw near the cap, every joule of MMA and
load work adds time, and no reordering of units can overlap them (interleaving groups was slower:
ragged_window.json). Each call runs back to back for 2 s while nvidia-smi samples SM clock, power and throttle
reasons (clock_probe.sample_while); the 16- and 128-token routings also with all-zero operands (the same loads and
MMAs, less switching energy).

    PYTHONPATH=. python3 scripts/wgrad_power_probe.py OUT.json
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from clock_probe import sample_while  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.moe_bench import routing  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else None


def main() -> None:
    out_path = sys.argv[1]
    E, T, K, N = 128, 16384, 7168, 2048
    x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
    xz, dyz = torch.zeros_like(x), torch.zeros_like(dy)
    out = torch.empty(E, K, N, device="cuda", dtype=torch.bfloat16)
    out_bytes = out.numel() * 2
    offs = {name: torch.tensor(c, device="cuda").cumsum(0).to(torch.int32)
            for name, c in {"c0": [0] * E, "c1": [1] * E, "c16": [16] * E, "c128": [128] * E,
                            "skewed": routing(E, T, "skewed")}.items()}
    fns = {"fill zero_": lambda: out.zero_()}
    for name, o in offs.items():
        fns[f"ours {name}"] = lambda o=o: warpgemm.grouped_mm(x.t(), dy, o, out=out)
        fns[f"torch {name}"] = lambda o=o: torch._grouped_mm(x.t(), dy, o)
    for name in ("c16", "c128"):
        fns[f"ours {name} zero data"] = lambda o=offs[name]: warpgemm.grouped_mm(xz.t(), dyz, o, out=out)
    warm_gpu(2.0)
    rows = []
    for name, fn in fns.items():
        calls, elapsed, samples = sample_while(fn, 2.0)
        s = elapsed / calls
        row = {"fn": name, "us": s * 1e6, "out_tb_s": out_bytes / s / 1e12,
               "sm_clock_mhz": median([r[1] for r in samples]), "power_w": median([r[2] for r in samples]),
               "power_max_w": max((r[2] for r in samples), default=None), "reasons": median([r[3] for r in samples])}
        rows.append(row)
        print(f"{name:24s} {row['us']:8.1f} us {row['out_tb_s']:5.2f} TB/s  {row['sm_clock_mhz']} MHz "
              f"{row['power_w']} W (max {row['power_max_w']}) {row['reasons']}", flush=True)
    with open(out_path, "w") as f:
        json.dump({"probe": "wgrad_power", "case": f"E{E} T{T} K{K} N{N}", "environment": environment(),
                   "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
