"""Probe: host and wall time per eager grouped_mm call on small MoE problems (host-bound), against
torch._grouped_mm in the same process. Run once per revision (PYTHONPATH) to compare revisions.

    PYTHONPATH=. python3 scripts/grouped_eager_host.py OUT.json
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.timing import eager_ms

CASES = [(8, 64, 512, 512), (32, 512, 1024, 512), (64, 256, 512, 256), (128, 1024, 512, 256)]  # G, T, K, N
rows = []
for G, T, K, N in CASES:
    a = torch.randn(T, K, device="cuda").to(torch.bfloat16)
    b = torch.randn(G, N, K, device="cuda").to(torch.bfloat16).transpose(1, 2)
    sizes = torch.randint(0, 2 * T // G + 1, (G, ), generator=torch.Generator().manual_seed(G))
    sizes[-1] = max(0, T - int(sizes[:-1].sum()))
    offs = sizes.cumsum(0).clamp(max=T).to(torch.int32).cuda()
    fns = {"warpgemm": lambda: warpgemm.grouped_mm(a, b, offs), "torch": lambda: torch._grouped_mm(a, b, offs)}
    for f in fns.values():
        f()
    got = {name: [] for name in fns}
    for _ in range(5):
        for name, f in fns.items():
            got[name].append(eager_ms(f, 300))
    row = dict(G=G, T=T, K=K, N=N)
    for name, v in got.items():
        row[f"{name}_host_us"] = statistics.median(h for h, _ in v) * 1e3
        row[f"{name}_wall_us"] = statistics.median(w for _, w in v) * 1e3
    rows.append(row)
    print(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
json.dump(rows, open(sys.argv[1], "w"), indent=1)
