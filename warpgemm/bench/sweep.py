"""`warpgemm bench sweep`: every candidate config on every shape of a suite, each against cuBLAS in the same
round. This is how the heuristics' rules were measured (notes/perf.md); it is not run per call."""
from __future__ import annotations

import torch

from ..candidates import SUITE_CANDIDATES
from ..config import check_config
from ..testing import rel_error
from .gemm_bench import DTYPES, environment, make_operands
from .suites import GEMM_SUITES
from .timing import bench_ms, warm_gpu


def run_sweep(suite: str = "mid", dtype: str = "bf16", layout: str = "nt", configs=None, rep_ms: int = 50,
              warmup_s: float = 2.0, rounds: int = 1, progress=print) -> dict:
    import statistics

    import warpgemm

    configs = configs or SUITE_CANDIDATES[suite]
    torch_dtype = DTYPES[dtype]
    warm_gpu(warmup_s)
    rows = []
    for case in GEMM_SUITES[suite]():
        a, b = make_operands(case, torch_dtype, layout)
        want = torch.matmul(a, b).float()
        valid = [c for c in configs if check_config(c, torch_dtype, torch_dtype) is None]
        diffs = {c: rel_error(warpgemm.matmul(a, b, config=c), want) for c in valid}
        times = {c: ([], []) for c in valid}
        # Rounds walk the configs in alternating order, and cuBLAS is re-timed next to every config, so drift
        # between configs and rounds does not leak into ratios.
        for r in range(rounds):
            for cfg in (valid if r % 2 == 0 else valid[::-1]):
                times[cfg][0].append(bench_ms(lambda: warpgemm.matmul(a, b, config=cfg), rep_ms))
                times[cfg][1].append(bench_ms(lambda: torch.matmul(a, b), rep_ms))
        for cfg in valid:
            ms, ms_base = statistics.median(times[cfg][0]), statistics.median(times[cfg][1])
            diff = diffs[cfg]
            rows.append({"shape": case.label, "M": case.M, "N": case.N, "K": case.K, "config": cfg.name,
                         "ms": ms, "ms_baseline": ms_base, "ratio": ms_base / ms,
                         "ratio_rounds": [b_ / a_ for a_, b_ in zip(*times[cfg])],
                         "tflops": case.flops / ms / 1e9, "rel_diff_vs_baseline": diff})
            progress(f"{case.label:>18} {cfg.name:>30} {ms:8.4f} ms ratio {ms_base / ms:.3f} diff {diff:.1e}")
        del a, b, want
    best = {}
    for r in rows:
        if r["rel_diff_vs_baseline"] < 1e-2 and r["ratio"] > best.get(r["shape"], {}).get("ratio", 0):
            best[r["shape"]] = r
    return {"suite": suite, "dtype": dtype, "layout": layout, "environment": environment(),
            "method": f"{rounds} round(s); per config per round: do_bench median ({rep_ms} ms) then cuBLAS do_bench "
                      "median on the same operands; medians over rounds",
            "results": rows, "best": list(best.values())}
