"""Which tile serves a MoE call whose many experts hold well under 128 tokens each?

    PYTHONPATH=. python3 scripts/moe_sparse_probe.py OUT.json
    MEANS=20,32 python3 scripts/moe_sparse_probe.py OUT.json             # other mean rows per expert
    ROUTING=skewed MEANS=48,64 python3 scripts/moe_sparse_probe.py OUT.json

64-256 experts; by default random top-1 routings with MEANS tokens an expert on average (multinomial, redrawn until
no expert exceeds 128, so every expert fits one row tile; 128: exactly 128 each), or with ROUTING=skewed
`bench moe`'s log-normal shares (big experts included). grouped_mm's own choice ("auto") against each candidate
tile forced (the weight-streaming 128x256x128, 128x128x128, 128x256x64, 64x128x64) and torch._grouped_mm, under
do_bench (L2 flushed before each call), 3 alternating rounds.
"""
import json
import os
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import bench_ms, warm_gpu
from warpgemm.bench.moe_bench import routing
from warpgemm.heuristics import GROUPED_LARGE, GROUPED_NARROW_N, GROUPED_STREAM, SMALL

CASES = [(128, 7168, 2048), (256, 7168, 2048), (64, 2048, 1408), (128, 2048, 1536)]  # experts, K, N
MEANS = tuple(int(m) for m in os.environ.get("MEANS", "24,48,96").split(","))  # 128: exactly 128 an expert


def draw_counts(experts: int, mean: int, g: torch.Generator) -> torch.Tensor:
    """Tokens per expert: exactly 128 each for mean 128, else a random top-1 routing redrawn until none exceeds 128
    (ROUTING=skewed: `bench moe`'s log-normal shares instead, big experts included)."""
    if os.environ.get("ROUTING") == "skewed":
        return torch.tensor(routing(experts, experts * mean, "skewed", seed=mean))
    if mean == 128:
        return torch.full((experts,), 128)
    while True:
        counts = torch.bincount(torch.randint(0, experts, (experts * mean,), generator=g), minlength=experts)
        if int(counts.max()) <= 128:
            return counts


def main() -> None:
    warm_gpu(2.0)
    rows = []
    g = torch.Generator().manual_seed(0)
    for experts, K, N in CASES:
        b = torch.randn(experts, N, K, device="cuda").to(torch.bfloat16).transpose(1, 2)
        for mean in MEANS:
            counts = draw_counts(experts, mean, g)
            a = torch.randn(int(counts.sum()), K, device="cuda").to(torch.bfloat16)
            offs = counts.cumsum(0).to(torch.int32).cuda()
            fns = {"auto": lambda: warpgemm.grouped_mm(a, b, offs), "grouped_mm": lambda: torch._grouped_mm(a, b, offs)}
            for cfg in (GROUPED_STREAM, GROUPED_NARROW_N, GROUPED_LARGE, SMALL):
                fns[cfg.name] = lambda cfg=cfg: warpgemm.grouped_mm(a, b, offs, config=cfg)
            want = torch._grouped_mm(a, b, offs).float()
            for name, fn in fns.items():
                err = ((fn().float() - want).norm() / want.norm()).item()
                assert err < 1e-2, (name, err)
            times = {k: [] for k in fns}
            for r in range(3):
                for k in (list(fns) if r % 2 == 0 else list(reversed(fns))):
                    times[k].append(bench_ms(fns[k], 60) * 1e3)
            us = {k: statistics.median(v) for k, v in times.items()}
            tbs = {k: experts * K * N * 2 / (v * 1e-6) / 1e12 for k, v in us.items()}
            rows.append({"experts": experts, "K": K, "N": N, "mean_rows": mean, "max_rows": int(counts.max()),
                         "us": us, "weight_tb_s": tbs})
            print(f"E{experts} K{K} N{N} mean {mean} (max {int(counts.max())}): " +
                  " ".join(f"{k}={v:.1f}us/{tbs[k]:.2f}" for k, v in us.items()), flush=True)
        b = None
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump({"probe": "moe_sparse", "environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
