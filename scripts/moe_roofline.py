"""The most any kernel could gain over torch._grouped_mm on `bench moe`'s >= 64-expert cases (issue 5's 1.8x target).

For each case the floor time is max(bytes / HBM bandwidth, FLOPs / tensor-core peak), with bytes = the weights of
the experts that receive tokens (the routing is re-drawn from the bench's seed) + the tokens + the output, each moved
once, and no launch or fill cost; the bound is torch's measured time
over that floor. Two roofs: this H100's measured ones (3.0 TB/s copy ceiling, notes/perf.md; 800 TFLOP/s, above the
~700-760 sustained at the 700 W cap) and the data-sheet peaks (3.35 TB/s HBM3, 989 TFLOP/s dense bf16).

    python scripts/moe_roofline.py [results/.../bench_moe.json]
"""
import json
import math
import sys

from warpgemm.bench.moe_bench import routing

ROOFS = {"measured (3.0 TB/s, 800 TFLOP/s)": (3.0e12, 800e12),
         "data sheet (3.35 TB/s, 989 TFLOP/s)": (3.35e12, 989e12)}


def bounds(results, bw, peak):
    rows = []
    for r in results:
        if r["experts"] < 64:
            continue
        E, T, K, N = r["experts"], r["tokens"], r["K"], r["N"]
        used = sum(1 for n in routing(E, T, r["routing"]) if n > 0)
        floor_s = max((used * K * N + T * K + T * N) * 2 / bw, 2 * T * K * N / peak)
        rows.append((f"{r['case']} {r['routing']}", r["ms_grouped_mm"] * 1e-3 / floor_s, r["ratio_vs_grouped_mm"]))
    return rows


if __name__ == "__main__":
    path = sys.argv[1] if len(sys.argv) > 1 else "results/2026-11-24-ragged-k/bench_moe.json"
    results = json.load(open(path))["results"]
    for name, (bw, peak) in ROOFS.items():
        rows = bounds(results, bw, peak)
        print(f"roof {name}:")
        for case, bound, ours in rows:
            print(f"  {case:<36} bound {bound:5.2f}x  measured {ours:5.3f}x")
        print(f"  geomean bound {math.exp(sum(math.log(b) for _, b, _ in rows) / len(rows)):.3f}x (target 1.8x)")
