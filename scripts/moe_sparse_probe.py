"""Which tile serves a MoE call whose experts all fit one row tile but hold well under 128 tokens each?

    PYTHONPATH=. python3 scripts/moe_sparse_probe.py OUT.json

grouped_mm sends calls where no expert has a second 128-row tile to the weight-streaming tile (128x256x128 s2 c4),
chosen on uniform routings of exactly 128 tokens an expert. moe_split_probe.py found 128x128x128 faster on the
one-tile experts of skewed routings (tens of tokens each). Here: random top-1 routings with 24-96 tokens an
expert on average (multinomial, so no expert reaches 129; MEANS=128: exactly 128 each), the shipped dispatch against forced tiles and
torch._grouped_mm, do_bench (L2 flushed), 3 alternating rounds.
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
