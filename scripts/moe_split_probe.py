"""Would the fine-grained MoE cases gain from running their one-tile experts with the weight-streaming tile and the
rest with the reuse tile (two launches, one per section of experts)?

    PYTHONPATH=. python3 scripts/moe_split_probe.py OUT.json

For each >= 64-expert case and skewed / empty routing, the call is cut into its two halves: the experts with at
most 128 tokens (one row tile each, the rest given no tokens) and the experts with more. Each half is timed alone
with the configs a split launch could give it, next to the whole call (shipped dispatch) and torch._grouped_mm,
all under do_bench (L2 flushed before every call), 3 rounds in alternating order. The sum of the two halves' best
times is what two back-to-back launches could take at most (each half also pays its own launch and cold start).
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.bench.timing import bench_ms, warm_gpu
from warpgemm.heuristics import GROUPED_LARGE, GROUPED_NARROW_N, GROUPED_STREAM

ONE_TILE = 128


def offsets(counts):
    return torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)


def main() -> None:
    warm_gpu(2.0)
    rows = []
    for case in [c for c in MOE_CASES if c.experts >= 64]:
        a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
        b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
        for how in ("skewed", "empty"):
            counts = routing(case.experts, case.tokens, how)
            one = [c if c <= ONE_TILE else 0 for c in counts]
            multi = [c if c > ONE_TILE else 0 for c in counts]
            offs, offs_one, offs_multi = offsets(counts), offsets(one), offsets(multi)
            fns = {"whole": lambda: warpgemm.grouped_mm(a, b, offs),
                   "grouped_mm": lambda: torch._grouped_mm(a, b, offs),
                   "multi auto": lambda: warpgemm.grouped_mm(a, b, offs_multi)}
            for cfg in (None, GROUPED_LARGE, GROUPED_STREAM, GROUPED_NARROW_N):
                fns[f"one {cfg.name if cfg else 'auto'}"] = (
                    lambda cfg=cfg: warpgemm.grouped_mm(a, b, offs_one, config=cfg))
            for fn in fns.values():
                fn()
            times = {k: [] for k in fns}
            for r in range(3):
                for k in (list(fns) if r % 2 == 0 else list(reversed(fns))):
                    times[k].append(bench_ms(fns[k], 60) * 1e3)
            us = {k: statistics.median(v) for k, v in times.items()}
            best_one = min((v, k) for k, v in us.items() if k.startswith("one "))
            split = best_one[0] + us["multi auto"]
            row = {"case": case.label, "routing": how, "one_tile_experts": sum(1 for c in one if c),
                   "multi_tile_experts": sum(1 for c in multi if c), "us": us, "best_one": best_one[1],
                   "split_us": split, "split_vs_whole": us["whole"] / split,
                   "whole_vs_grouped_mm": us["grouped_mm"] / us["whole"]}
            rows.append(row)
            print(f"{case.label} {how}: whole {us['whole']:.1f} us (gmm {us['grouped_mm']:.1f}); multi "
                  f"{us['multi auto']:.1f}; one " + " ".join(f"{k[4:]}={v:.1f}" for k, v in us.items()
                                                              if k.startswith("one ")) +
                  f"; split {split:.1f} -> {us['whole'] / split:.3f}x whole", flush=True)
        a = b = None
        torch.cuda.empty_cache()
    with open(sys.argv[1], "w") as f:
        json.dump({"probe": "moe_split", "environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
