"""Interleaving groups in the ragged-K (MoE weight-gradient) walk: does it overlap MMA-bound and store-bound units?

wgrad_bound.json (same directory as this probe's results) showed the E128/E256 K7168 N2048 gradients at 1.21 /
2.43 ms when every group is empty (the kernel only stores its zero tiles: 3.1 TB/s), 1.58 / 3.46 ms at 128
tokens a group, and 1.89 / 3.86 ms with the same tokens skewed: walked group after group, every SM runs a big
group's MMA-bound units at the same time, then the small groups' store-bound ones. This times the shipped tile with
units interleaved over windows of W groups (kernels/hopper/ragged_k.py), W = 1 (the walk before) and larger, for
`bench moe --wgrad`'s cases, against torch._grouped_mm, checking each window's output equals W = 1's bitwise.
3 alternating rounds, do_bench (L2 flushed before each call).

    python scripts/ragged_window_probe.py OUT.json [W ...]

Needs the tree of commit 4f5a01b (ops.grouped_ragged_k.ragged_k_window and the windowed scheduler); the window
was not kept (notes/perf.md, 2026-11-25). Each timed call re-plans (the window is swapped per call), which adds
host time that shows on the sub-millisecond cases (E32 T512): compare windows there, not ratios to torch.
"""
import json
import sys

import torch
from triton.testing import do_bench

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.ops import grouped_ragged_k


def with_window(w):
    grouped_ragged_k._PLANS.clear()
    grouped_ragged_k.ragged_k_window = lambda *args: w


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "ragged_window.json"
    windows = [int(v) for v in sys.argv[2:]] or [1, 5, 7, 13]
    rows = []
    for case in MOE_CASES:
        x = torch.randn(case.tokens, case.K, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(case.tokens, case.N, device="cuda", dtype=torch.bfloat16)
        flops = 2 * case.tokens * case.K * case.N
        for kind in ("skewed", "uniform", "empty"):
            offs = torch.tensor(routing(case.experts, case.tokens, kind), device="cuda").cumsum(0).to(torch.int32)
            with_window(windows[0])
            base = warpgemm.grouped_mm(x.t(), dy, offs)
            same = {}
            for w in windows:
                with_window(w)
                same[w] = bool(torch.equal(warpgemm.grouped_mm(x.t(), dy, offs), base))
            del base
            fns = {"torch": lambda: torch._grouped_mm(x.t(), dy, offs)}
            for w in windows:
                fns[f"w{w}"] = (lambda w=w: (with_window(w), warpgemm.grouped_mm(x.t(), dy, offs)))
            times = {}
            for rnd in range(3):
                order = list(fns.items())
                for key, fn in (order if rnd % 2 == 0 else order[::-1]):
                    if key.startswith("w"):
                        fn()  # plan (and compile) outside the timing
                    times.setdefault(key, []).append(do_bench(fn, warmup=10, rep=60))
            ms = {k: min(v) for k, v in times.items()}
            row = dict(case=case.label, routing=kind, ms=ms, rounds=times, bitwise_equal_to_first=same,
                       ratio_vs_torch={k: ms["torch"] / v for k, v in ms.items() if k != "torch"},
                       tflops={k: flops / v / 1e9 for k, v in ms.items()})
            rows.append(row)
            print(f"{case.label:28s} {kind:8s} torch {ms['torch']:.3f} ms | " +
                  "  ".join(f"{k} {ms[k]:.3f} ({row['ratio_vs_torch'][k]:.3f}x)" for k in fns if k != "torch") +
                  ("" if all(same.values()) else f"  NOT EQUAL {same}"), flush=True)
    with open(out_path, "w") as f:
        json.dump(dict(environment=environment(), windows=windows, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
