"""warpgemm.tune on three one-wave products: does the tuner time its one-partition candidates (tuning.candidates_for)
and keep one where it leads? Prints each problem's candidate count, the fastest four and what was kept.
    WARPGEMM_CACHE_DIR=/tmp/wgcache python scripts/tuner_flat_check.py
"""
import torch

import warpgemm

for M, N, K in ((688, 632, 1696), (416, 1120, 1808), (1024, 1024, 1024)):
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    res = warpgemm.tune(x, w.t(), rep_ms=10)
    rows = sorted([r for r in res.rows if r[1] is not None], key=lambda r: r[1])
    flat = [r for r in res.rows[1:] if r[0].endswith("_flat")]  # rows[0] is the heuristics' own
    bad = [r for r in res.rows if r[1] is None]
    print(f"{M}x{N}x{K}: {len(res.rows) - 1} candidates, {len(flat)} one-partition, failed {len(bad)} {bad[:2]}")
    print(f"  {res.rows[0][0]} {res.rows[0][1] * 1e3:.2f} us; fastest:",
          ", ".join(f"{r[0]} {r[1] * 1e3:.2f}" for r in rows[:4]), "; kept:", res.config.name if res.config else None)
