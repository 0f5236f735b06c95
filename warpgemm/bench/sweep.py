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


def _time_configs(case, configs, torch_dtype, layout: str, rounds: int, rep_ms: int) -> dict:
    """{config: (its do_bench medians, cuBLAS's next to each, its relative difference from cuBLAS)} on one case's
    fresh operands, which are freed on return (before the next case allocates its own)."""
    import warpgemm

    a, b = make_operands(case, torch_dtype, layout)
    want = torch.matmul(a, b).float()
    diffs = {c: rel_error(warpgemm.matmul(a, b, config=c), want) for c in configs}
    times = {c: ([], []) for c in configs}
    # Rounds walk the configs in alternating order, and cuBLAS is re-timed next to every config, so drift
    # between configs and rounds does not leak into ratios.
    for r in range(rounds):
        for cfg in (configs if r % 2 == 0 else configs[::-1]):
            times[cfg][0].append(bench_ms(lambda: warpgemm.matmul(a, b, config=cfg), rep_ms))
            times[cfg][1].append(bench_ms(lambda: torch.matmul(a, b), rep_ms))
    return {c: (times[c][0], times[c][1], diffs[c]) for c in configs}


def run_sweep(suite: str = "mid", dtype: str = "bf16", layout: str = "nt", configs=None, rep_ms: int = 50,
              warmup_s: float = 2.0, rounds: int = 1, progress=print) -> dict:
    import statistics

    configs = configs or SUITE_CANDIDATES[suite]
    torch_dtype = DTYPES[dtype]
    warm_gpu(warmup_s)
    rows = []
    for case in GEMM_SUITES[suite]():
        valid = [c for c in configs if check_config(c, torch_dtype, torch_dtype) is None]
        for cfg, (ours_ms, base_ms, diff) in _time_configs(case, valid, torch_dtype, layout, rounds, rep_ms).items():
            ms, ms_base = statistics.median(ours_ms), statistics.median(base_ms)
            rows.append({"shape": case.label, "M": case.M, "N": case.N, "K": case.K, "config": cfg.name,
                         "ms": ms, "ms_baseline": ms_base, "ratio": ms_base / ms,
                         "ratio_rounds": [b_ / a_ for a_, b_ in zip(ours_ms, base_ms)],
                         "tflops": case.flops / ms / 1e9, "rel_diff_vs_baseline": diff})
            progress(f"{case.label:>18} {cfg.name:>30} {ms:8.4f} ms ratio {ms_base / ms:.3f} diff {diff:.1e}")
    best = {}
    for r in rows:
        if r["rel_diff_vs_baseline"] < 1e-2 and r["ratio"] > best.get(r["shape"], {}).get("ratio", 0):
            best[r["shape"]] = r
    return {"suite": suite, "dtype": dtype, "layout": layout, "environment": environment(),
            "method": f"{rounds} round(s); per config per round: do_bench median ({rep_ms} ms) then cuBLAS do_bench "
                      "median on the same operands; medians over rounds",
            "results": rows, "best": list(best.values())}
