"""`warpgemm bench decode`: y = x @ W.T for decode-sized batches (M = 1, 4, 16, 32, 64 rows, or any given) against
F.linear (cuBLAS).

In a model every layer's weight comes from HBM, so each side cycles through enough copies of the weight to
overflow the 50 MB L2 (each call finds its weight cold) and the figure is the effective bandwidth: weight +
activation + output bytes over the time of one call. Both sides are timed as CUDA-graph replays of one call per
weight copy (launch overhead out of the picture, as in a captured decode step), and again eagerly (the host cost
of each call included), alternating rounds in one process.
"""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .. import _env
from ..heuristics import choose_config, gemv_reason
from ..testing import rel_error
from .gemm_bench import environment
from .suites import LLM_NK
from .timing import alternate, geomean, warm_gpu

DECODE_M = (1, 4, 16, 32, 64)
L2_BYTES = 50 * 2**20
# Weights >= this many bytes are held to the "large weight" bandwidth target.
LARGE_WEIGHT_BYTES = 64 * 2**20


def decode_cases(ms=DECODE_M):
    """(M, N, K) of the suite: every M of `ms` (any positive values) against each of the six LLM weights."""
    if not ms or any(m < 1 for m in ms):
        raise ValueError(f"M values must be positive, got {list(ms)}")
    return [(m, n, k) for n, k in LLM_NK for m in ms]


def linear_loops(x: torch.Tensor, weights: list, config=None):
    """The two loops `bench decode` times: one warpgemm.linear (forced `config`, if any) and one F.linear per weight
    copy."""
    import warpgemm

    def ours():
        for w in weights:
            warpgemm.linear(x, w, config=config)

    def theirs():
        for w in weights:
            F.linear(x, w)

    return ours, theirs


def weight_copies(weight_bytes: int) -> int:
    """Enough copies that the ones cycled through between two uses of the same copy overflow L2 twice over."""
    return max(2, math.ceil(2 * L2_BYTES / weight_bytes) + 1)


def fit_to_rows(cfg, m: int, dtype=torch.bfloat16):
    """A swept swap-AB config with its x-side tile no taller than M needs (16/32/64 rows) and the deepest ring that
    still fits. A tile narrower than M is kept: x's rows then split over several tiles that share a weight panel."""
    from ..config import check_config

    if not cfg.swap_ab or cfg.store_chunks > 1:  # tiles wide along x (swap_rows.py) are kept as they are
        return cfg
    cfg = cfg.replace(block_n=min(cfg.block_n, 16 if m <= 16 else 32 if m <= 32 else 64))
    while cfg.stages > 2 and check_config(cfg, dtype, dtype) is not None:
        cfg = cfg.replace(stages=cfg.stages - 1)
    return cfg


def run_decode_suite(rounds: int = 5, rep_ms: int = 100, warmup_s: float = 3.0, configs=None, eager: bool = True,
                     cases=None, progress=print, static_weights: bool = False) -> dict:
    """configs: optional list of GemmConfig to time instead of the heuristic's choice (a sweep). static_weights:
    mark every weight copy with warpgemm.mark_static (an inference model's weights: static_weights.py)."""
    import warpgemm

    dtype = torch.bfloat16
    warm_gpu(warmup_s)
    rows = []
    sms = _env.num_sms(torch.cuda.current_device())
    for m, n, k in decode_cases() if cases is None else cases:
        x = torch.randn(m, k, device="cuda", dtype=dtype)
        copies = weight_copies(n * k * 2)
        weights = [torch.randn(n, k, device="cuda", dtype=dtype) for _ in range(copies)]
        if static_weights:
            for w in weights:
                warpgemm.mark_static(w)
        nbytes = (n * k + m * k + m * n) * 2
        want = F.linear(x.float(), weights[0].float())
        chosen, why = choose_config(1, m, n, k, dtype, dtype, sms)
        # x @ W.T with W (N, K) row-major: contiguous along K. Static weights may skip the GEMVs (the plan says).
        gemv_why = gemv_reason(1, m, True, dtype)
        if gemv_why and static_weights and "path=gemv" not in warpgemm.explain(x, weights[0].T):
            gemv_why = None
        why = gemv_why or why
        for cfg in dict.fromkeys(fit_to_rows(c, m) for c in configs) if configs else [None]:
            name = "gemv" if cfg is None and gemv_why else (cfg or chosen).name

            ours, theirs = linear_loops(x, weights, cfg)
            err = rel_error(warpgemm.linear(x, weights[0], config=cfg), want)
            torch.cuda.synchronize()
            g = alternate(ours, theirs, rounds=rounds, rep_ms=rep_ms, use_graph=True)
            row = {"M": m, "N": n, "K": k, "shape": f"{m}x{n}x{k}", "weight_mb": n * k * 2 / 2**20,
                   "copies": copies, "config": name, "config_reason": why if cfg is None else "forced (sweep)",
                   "us": g.ms_a * 1e3 / copies, "us_baseline": g.ms_b * 1e3 / copies,
                   "rounds_us": [t * 1e3 / copies for t in g.rounds_a],
                   "rounds_us_baseline": [t * 1e3 / copies for t in g.rounds_b],
                   "rel_error_vs_fp32": err}
            row["ratio"] = row["us_baseline"] / row["us"]
            row["tbs"] = nbytes / (row["us"] * 1e-6) / 1e12
            row["tbs_baseline"] = nbytes / (row["us_baseline"] * 1e-6) / 1e12
            if eager:
                e = alternate(ours, theirs, rounds=rounds, rep_ms=rep_ms)
                row["eager_us"] = e.ms_a * 1e3 / copies
                row["eager_us_baseline"] = e.ms_b * 1e3 / copies
                row["eager_ratio"] = e.ms_b / e.ms_a
            rows.append(row)
            progress(f"{row['shape']:>16} {name:>36} {row['us']:7.2f} us {row['tbs']:5.2f} TB/s  cuBLAS "
                     f"{row['us_baseline']:7.2f} us {row['tbs_baseline']:5.2f} TB/s  ratio {row['ratio']:.3f}"
                     + (f"  eager {row['eager_ratio']:.3f}" if eager else "") + f"  err {err:.1e}")
        del x, weights, want
        torch.cuda.empty_cache()
    res = {"suite": "decode", "dtype": "bf16", "layout": "x (M,K) @ W.T, W (N,K) row-major",
           "baseline": "torch.nn.functional.linear (cuBLAS)", "environment": environment(),
           "static_weights": static_weights,
           "method": f"CUDA-graph replay of one call per weight copy (copies overflow L2 twice over), "
                     f"{rounds} alternating rounds of triton do_bench_cudagraph medians; eager: do_bench of the "
                     f"same loop; time per call = loop time / copies; bandwidth = (weight + x + y bytes) / time",
           "results": rows}
    if configs is None:
        res.update(summarize(rows))
    return res


def summarize(rows) -> dict:
    large = [r for r in rows if r["weight_mb"] * 2**20 >= LARGE_WEIGHT_BYTES]
    small = [r for r in rows if r["weight_mb"] * 2**20 < LARGE_WEIGHT_BYTES]
    out = {"geomean_ratio": geomean(r["ratio"] for r in rows), "min_ratio": min(r["ratio"] for r in rows),
           "min_tbs_large_weights": min((r["tbs"] for r in large), default=float("nan")),
           "min_tbs_small_weights": min((r["tbs"] for r in small), default=float("nan"))}
    if all("eager_ratio" in r for r in rows):
        out["geomean_eager_ratio"] = geomean(r["eager_ratio"] for r in rows)
        out["min_eager_ratio"] = min(r["eager_ratio"] for r in rows)
    return out
