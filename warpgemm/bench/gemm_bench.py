"""`warpgemm bench dense`: warpgemm against torch.matmul (cuBLAS) on the same operands, same process."""
from __future__ import annotations

import datetime
import platform
import subprocess
from pathlib import Path

import torch

from .. import __version__, tuning
from ..testing import rel_error
from .suites import GEMM_SUITES, GemmCase
from .timing import alternate, geomean, warm_gpu

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
LAYOUTS = {
    "nt": "A (M,K) row-major x W (N,K) as W.T, the nn.Linear weight layout",
    "nn": "A (M,K) row-major x B (K,N) row-major",
    # A training step's weight gradient, dW = dY.T @ X: dY (tokens, out) and X (tokens, in) both row-major, so A is
    # read along M and B along N.
    "tn": "A = G.T of a (K,M) row-major G x B (K,N) row-major, the weight-gradient layout",
}


def make_weight(case: GemmCase, dtype: torch.dtype, layout: str, device: str = "cuda") -> torch.Tensor:
    if layout == "nt":
        return torch.randn(case.N, case.K, device=device, dtype=dtype).T
    if layout in ("nn", "tn"):
        return torch.randn(case.K, case.N, device=device, dtype=dtype)
    raise ValueError(f"layout must be one of {sorted(LAYOUTS)}, got {layout!r}")


def plan_name(a: torch.Tensor, b: torch.Tensor) -> str:
    """The config warpgemm.matmul(a, b) runs (the plan's, with everything the heuristics weigh: layouts, row
    alignment, the tuning cache), and a column split's tail launch."""
    from ..ops import gemm_impl

    c = torch.empty(1, a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)  # the device's SM count
    p = gemm_impl.plan_hopper(a.unsqueeze(0), b.unsqueeze(0), c, None, None, may_tune=False)
    if not hasattr(p, "config"):
        return "gemv"
    tail = getattr(p.launch, "tail", None)
    return p.config.name + (f"+{tail.cfg.block_m}x{tail.cfg.block_n}@{p.launch.n1}" if tail is not None else "")


def make_operands(case: GemmCase, dtype: torch.dtype, layout: str, device: str = "cuda"):
    b = make_weight(case, dtype, layout, device)
    if layout == "tn":
        return torch.randn(case.K, case.M, device=device, dtype=dtype).T, b
    return torch.randn(case.M, case.K, device=device, dtype=dtype), b


def source_commit(where: Path = Path(__file__).parent) -> str | None:
    """The short commit of the checkout holding `where` (the package), with "+modified" when a tracked file differs
    from it or an untracked file sits in the package (a copied working tree can carry an older .git: say so rather
    than name a commit that did not run). None when git is missing or the package is not tracked there (an
    installed copy inside some other repository)."""
    def git(*args) -> str:
        return subprocess.run(["git", *args], capture_output=True, text=True, cwd=where, timeout=5).stdout.strip()

    try:
        if not git("ls-files", "--", "__init__.py"):
            return None
        commit = git("rev-parse", "--short", "HEAD") or None
    except Exception:
        return None
    try:
        tracked = git("status", "--porcelain", "--untracked-files=no")
        untracked = git("status", "--porcelain", "--untracked-files=all", "--", ".")
        if commit and (tracked or untracked):
            commit += "+modified"
    except Exception:
        commit = commit and commit + "+unknown"
    return commit


def environment() -> dict:
    commit = source_commit()
    import triton

    return {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "warpgemm": __version__,
        "commit": commit,
        "python": platform.python_version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        # Tuned winners replace the heuristics' configs where the cache has them (warpgemm/tuning.py).
        "tuning": {"mode": tuning.mode(), "cache": tuning.cache_path(),
                   "entries": len(tuning.entries()) if tuning.mode() != "off" else 0},
    }


def _time_case(case: GemmCase, torch_dtype: torch.dtype, layout: str, rounds: int, calibrate: bool,
               back_to_back: bool) -> dict:
    """One suite row: warpgemm (or torch, calibrating) against torch.matmul on fresh operands, alternating rounds."""
    import warpgemm

    from .decode_bench import weight_copies

    a, b = make_operands(case, torch_dtype, layout)
    ours = (lambda: torch.matmul(a, b)) if calibrate else (lambda: warpgemm.matmul(a, b))
    baseline = lambda: torch.matmul(a, b)  # noqa: E731
    got, want = ours(), baseline()  # also compiles / warms both
    diff = rel_error(got, want.float())
    if back_to_back:
        copies = weight_copies(b.numel() * b.element_size())
        bs = [b] + [make_weight(case, torch_dtype, layout) for _ in range(copies - 1)]
        ours_all = (lambda: [torch.matmul(a, w) for w in bs]) if calibrate else \
            (lambda: [warpgemm.matmul(a, w) for w in bs])
        t = alternate(ours_all, lambda: [torch.matmul(a, w) for w in bs], rounds=rounds, use_graph=True)
        t = t._replace(ms_a=t.ms_a / copies, ms_b=t.ms_b / copies, rounds_a=[x / copies for x in t.rounds_a],
                       rounds_b=[x / copies for x in t.rounds_b])
    else:
        t = alternate(ours, baseline, rounds=rounds)
    return {
        "shape": case.label, "M": case.M, "N": case.N, "K": case.K,
        "config": "cuBLAS (calibration)" if calibrate else plan_name(a, b),
        "ms": t.ms_a, "ms_baseline": t.ms_b,
        "tflops": case.flops / t.ms_a / 1e9, "tflops_baseline": case.flops / t.ms_b / 1e9,
        "ratio": t.ms_b / t.ms_a,
        "rounds_ms": t.rounds_a, "rounds_ms_baseline": t.rounds_b,
        "rel_diff_vs_baseline": diff,
    }


def run_gemm_suite(suite: str = "dense", dtype: str = "bf16", layout: str = "nt", rounds: int = 5,
                   calibrate: bool = False, warmup_s: float = 3.0, back_to_back: bool = False,
                   progress=print) -> dict:
    """Time every case of a suite; with `calibrate`, torch against itself (the noise floor of a claim).

    Default timing: do_bench, one call after an L2 flush. back_to_back: CUDA-graph replay of one call per cold copy of
    B (copies overflow the L2, as `bench decode` times), so each call follows the one before as in a model's layers;
    that is where programmatic dependent launch, launch gaps and the previous call's tail show."""
    torch_dtype = DTYPES[dtype]
    cases = GEMM_SUITES[suite]()
    warm_gpu(warmup_s)
    rows = []
    for case in cases:
        # One function call per case: its operands are freed before the next case allocates its own.
        row = _time_case(case, torch_dtype, layout, rounds, calibrate, back_to_back)
        rows.append(row)
        progress(f"{case.label:>20} {row['config']:>24} {row['ms']:8.3f} ms {row['tflops']:7.1f} TFLOP/s "
                 f"baseline {row['tflops_baseline']:7.1f} ratio {row['ratio']:.3f} "
                 f"diff {row['rel_diff_vs_baseline']:.1e}")
    return {
        "suite": suite, "dtype": dtype, "layout": layout, "layout_desc": LAYOUTS[layout],
        "baseline": "torch.matmul (cuBLAS)", "calibration": calibrate,
        "method": (f"{rounds} alternating rounds of triton.testing.do_bench_cudagraph medians after {warmup_s}s "
                   "warm-up, one call per cold copy of B (copies overflow L2; time per call = replay / copies)"
                   if back_to_back else
                   f"{rounds} alternating rounds of triton.testing.do_bench medians after {warmup_s}s warm-up")
                  + "; median over rounds; ratio = baseline ms / warpgemm ms",
        "back_to_back": back_to_back,
        "environment": environment(),
        "geomean_ratio": geomean(r["ratio"] for r in rows),
        "min_ratio": min(r["ratio"] for r in rows),
        "results": rows,
    }
