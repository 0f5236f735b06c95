"""What bounds the many-expert weight gradients (grouped_mm's ragged-K form, `bench moe --wgrad`)?

E128 T16384 K7168 N2048 writes a 3.76 GB (E, K, N) output at 1.9-2.1 TB/s, where a plain fill writes ~3.3 TB/s
(results/2026-11-24-ragged-k). The probe times the same call with every group holding c tokens, c = 0 (no K
step: each tile only stores zeros through the kernel's own epilogue and tile order), 1, 16, 64, 128, 256, and
the bench's skewed routing, for ours (the shipped config, and forced alternatives), torch._grouped_mm, and a fill
of an output of the same size. Time against c separates the stores' own cost (c = 0) from the per-K-step cost.
Ours and torch alternate per cell, 3 rounds, do_bench (L2 flushed before each call).

    python scripts/wgrad_bound_probe.py OUT.json
"""
import json
import sys

import torch
from triton.testing import do_bench

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.moe_bench import routing

CASES = [(128, 16384, 7168, 2048), (256, 32768, 7168, 2048), (64, 8192, 2048, 1408)]
FORCED = {
    "128x128x64_s6": warpgemm.GemmConfig(128, 128, 64, stages=6, consumer_warps=4),
    "64x128x64_s8": warpgemm.GemmConfig(64, 128, 64, stages=8, consumer_warps=4),
}


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "wgrad_bound.json"
    rows = []
    for E, T, K, N in CASES:
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
        out = torch.empty(E, K, N, device="cuda", dtype=torch.bfloat16)
        out_bytes = out.numel() * 2
        routings = {f"c{c}": [c] * E for c in (0, 1, 16, 64, 128, 256) if c * E <= T}
        routings["skewed"] = routing(E, T, "skewed")
        fill = {}
        for rnd in range(3):
            fill.setdefault("zero_", []).append(do_bench(lambda: out.zero_(), warmup=25, rep=100))
            fill.setdefault("fill_(1)", []).append(do_bench(lambda: out.fill_(1.0), warmup=25, rep=100))
        row = dict(case=f"E{E} T{T} K{K} N{N}", out_gb=out_bytes / 1e9,
                   fill_ms={k: min(v) for k, v in fill.items()}, routings={})
        print(f"E{E} T{T} K{K} N{N}: zero_ {min(fill['zero_']):.3f} ms "
              f"({out_bytes / min(fill['zero_']) / 1e9:.2f} TB/s)", flush=True)
        for name, counts in routings.items():
            offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
            fns = {"ours": lambda: warpgemm.grouped_mm(x.t(), dy, offs),
                   "torch": lambda: torch._grouped_mm(x.t(), dy, offs)}
            for cname, cfg in FORCED.items():
                fns[cname] = lambda cfg=cfg: warpgemm.grouped_mm(x.t(), dy, offs, config=cfg)
            times = {}
            for rnd in range(3):
                order = list(fns.items())
                for key, fn in (order if rnd % 2 == 0 else order[::-1]):
                    times.setdefault(key, []).append(do_bench(fn, warmup=10, rep=60))
            ms = {k: min(v) for k, v in times.items()}
            row["routings"][name] = dict(ms=ms, rounds=times, tokens=sum(counts),
                                         out_tb_s={k: out_bytes / v / 1e9 for k, v in ms.items()})
            print(f"  {name:7s} " + "  ".join(f"{k} {v:.3f} ms ({out_bytes / v / 1e9:.2f} TB/s)"
                                             for k, v in ms.items()), flush=True)
        rows.append(row)
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump(dict(environment=environment(), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
