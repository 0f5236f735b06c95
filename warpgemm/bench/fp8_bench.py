"""`warpgemm bench fp8`: warpgemm.scaled_mm against torch._scaled_mm on the same fp8 operands, same process.

Operands are e4m3 quantized from random bf16 with a per-tensor (or per-row / per-column) amax scale, as a serving
stack quantizes them; the weight is an (N, K) row-major matrix passed as W.T, the layout torch._scaled_mm
requires. The baseline runs with use_fast_accum=True, the accumulation warpgemm's kernel does (no promotion);
torch's default (use_fast_accum=False) is timed once per shape as well and reported alongside.

Suites `decode` (M = 1-64 against the six LLM weights) and `small` are timed as `bench decode` times bf16: CUDA-graph
replays of one call per cold weight copy (copies overflow the L2), in TB/s of weight + x + y bytes.
"""
from __future__ import annotations

import torch

from ..testing import rel_error
from .gemm_bench import environment
from .suites import GEMM_SUITES
from .timing import alternate, bench_ms, geomean, warm_gpu

E4M3 = torch.float8_e4m3fn
E4M3_MAX = 448.0
SCALINGS = ("tensorwise", "rowwise")


def quantize(x: torch.Tensor, dim: int | None):
    """x in e4m3 and the fp32 scale that dequantizes it: one for the whole tensor (dim None) or one per slice along
    `dim` (keepdim), from the absolute maximum."""
    amax = x.abs().amax() if dim is None else x.abs().amax(dim=dim, keepdim=True)
    scale = (amax.float().clamp(min=1e-12) / E4M3_MAX)
    return (x.float() / scale).to(E4M3), scale


def plan_name(a: torch.Tensor, b: torch.Tensor, scale_a: torch.Tensor, scale_b: torch.Tensor) -> str:
    """The config warpgemm.scaled_mm(a, b, scale_a, scale_b) with a bf16 output runs (its plan's: the heuristics and
    what they weigh of the operands, such as rows off 32-byte sectors)."""
    from ..ops.scaled import plan, scale_mode

    M, N = a.shape[0], b.shape[1]
    c = torch.empty(M, N, dtype=torch.bfloat16, device=a.device)  # the device's SM count
    return plan(a, b, c, scale_mode(scale_a, scale_b, M, N), False, None).config.name


def make_fp8_operands(M: int, N: int, K: int, scaling: str):
    """(a (M, K), b = W.T (K, N), scale_a, scale_b) in the shapes torch._scaled_mm takes for `scaling`."""
    x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    if scaling == "tensorwise":
        (a, sa), (w8, sw) = quantize(x, None), quantize(w, None)
        return a, w8.T, sa.reshape(()), sw.reshape(())
    if scaling == "rowwise":
        (a, sa), (w8, sw) = quantize(x, 1), quantize(w, 1)
        return a, w8.T, sa, sw.T  # (M, 1) and (1, N)
    raise ValueError(f"scaling must be one of {SCALINGS}, got {scaling!r}")


def run_fp8_suite(suite: str = "dense", scaling: str = "tensorwise", rounds: int = 5, warmup_s: float = 3.0,
                  progress=print) -> dict:
    import warpgemm

    if suite in ("decode", "small"):
        return run_fp8_graph_suite(suite, scaling, rounds, warmup_s, progress)

    if suite not in GEMM_SUITES:
        raise ValueError(f"suite must be one of {sorted(GEMM_SUITES)}, got {suite!r}")
    cases = GEMM_SUITES[suite]()
    warm_gpu(warmup_s)
    rows, skipped = [], []
    for case in cases:
        if case.K % 16 or case.N % 16:
            # torch._scaled_mm refuses them (cuBLASLt wants multiples of 16): no baseline to time against.
            skipped.append(case.label)
            progress(f"{case.label:>20} skipped: torch._scaled_mm needs K and N multiples of 16")
            continue
        a, b, sa, sb = make_fp8_operands(case.M, case.N, case.K, scaling)
        ours = lambda: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)  # noqa: E731
        fast = lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)  # noqa: E731
        exact = lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)  # noqa: E731
        got, want = ours(), fast()
        ref = torch.matmul(a.float(), b.float()) * sa.reshape(-1, 1) * sb.reshape(1, -1)
        t = alternate(ours, fast, rounds=rounds)
        nbytes = case.M * case.K + case.N * case.K + 2 * case.M * case.N
        ms_exact = bench_ms(exact)
        row = {
            "shape": case.label, "M": case.M, "N": case.N, "K": case.K, "config": plan_name(a, b, sa, sb),
            "ms": t.ms_a, "ms_baseline": t.ms_b, "ms_baseline_promoted": ms_exact,
            "tflops": case.flops / t.ms_a / 1e9, "tflops_baseline": case.flops / t.ms_b / 1e9,
            "tflops_baseline_promoted": case.flops / ms_exact / 1e9,
            # fp8 operands, bf16 output: what a weight-streaming (few-row) product must move at least.
            "tbs": nbytes / t.ms_a / 1e9, "tbs_baseline": nbytes / t.ms_b / 1e9,
            "ratio": t.ms_b / t.ms_a, "ratio_vs_promoted": ms_exact / t.ms_a,
            "rounds_ms": t.rounds_a, "rounds_ms_baseline": t.rounds_b,
            "rel_err": rel_error(got, ref), "rel_err_baseline": rel_error(want, ref),
        }
        rows.append(row)
        progress(f"{case.label:>20} {row['config']:>26} {row['ms']:8.3f} ms {row['tflops']:7.1f} TFLOP/s baseline "
                 f"{row['tflops_baseline']:7.1f} ratio {row['ratio']:.3f} (promoted {row['ratio_vs_promoted']:.3f}) "
                 f"err {row['rel_err']:.1e} / {row['rel_err_baseline']:.1e}")
        a = b = got = want = ref = None  # free the operands before the next case's
    return {
        "suite": f"fp8-{suite}", "dtype": "e4m3 -> bf16", "scaling": scaling,
        "layout": "a (M,K) row-major x b = W.T of an (N,K) row-major weight",
        "baseline": "torch._scaled_mm(use_fast_accum=True) (cuBLASLt); ms_baseline_promoted: use_fast_accum=False",
        "method": (f"{rounds} alternating rounds of triton.testing.do_bench medians after {warmup_s}s warm-up; median "
                   "over rounds; ratio = baseline ms / warpgemm ms; the promoted baseline timed once per shape"),
        "environment": environment(),
        "geomean_ratio": geomean(r["ratio"] for r in rows),
        "min_ratio": min((r["ratio"] for r in rows), default=float("nan")),
        "geomean_ratio_vs_promoted": geomean(r["ratio_vs_promoted"] for r in rows),
        "results": rows,
        "skipped_no_baseline": skipped,
    }


def run_fp8_graph_suite(suite: str = "decode", scaling: str = "tensorwise", rounds: int = 5, warmup_s: float = 3.0,
                        progress=print) -> dict:
    """Suite `decode` (M = 1-64 rows against each LLM weight) or `small` (suites.small_suite): cold copies of the
    weight, both sides back to back in CUDA graphs."""
    import warpgemm

    from .decode_bench import decode_cases, summarize, weight_copies

    cases = decode_cases() if suite == "decode" else [tuple(c) for c in GEMM_SUITES[suite]()]
    warm_gpu(warmup_s)
    rows = []
    for m, n, k in cases:
        copies = weight_copies(n * k)
        ops = [make_fp8_operands(m, n, k, scaling) for _ in range(copies)]  # a, W.T, scales: one set per copy
        nbytes = n * k + m * k + 2 * m * n

        def ours():
            for a, b, sa, sb in ops:
                warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16)

        def theirs():
            for a, b, sa, sb in ops:
                torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)

        a, b, sa, sb = ops[0]
        ref = torch.matmul(a.float(), b.float()) * sa.reshape(-1, 1) * sb.reshape(1, -1)
        err = rel_error(warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16), ref)
        err_base = rel_error(torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True), ref)
        g = alternate(ours, theirs, rounds=rounds, use_graph=True)
        row = {"M": m, "N": n, "K": k, "shape": f"{m}x{n}x{k}", "weight_mb": n * k / 2**20, "copies": copies,
               "config": plan_name(a, b, sa, sb), "us": g.ms_a * 1e3 / copies, "us_baseline": g.ms_b * 1e3 / copies,
               "rounds_us": [t * 1e3 / copies for t in g.rounds_a],
               "rounds_us_baseline": [t * 1e3 / copies for t in g.rounds_b], "rel_err": err,
               "rel_err_baseline": err_base}
        row["ratio"] = row["us_baseline"] / row["us"]
        row["tbs"] = nbytes / (row["us"] * 1e-6) / 1e12
        row["tbs_baseline"] = nbytes / (row["us_baseline"] * 1e-6) / 1e12
        # Field names shared with the other fp8 suites (the CLI's table).
        row.update(ms=row["us"] / 1e3, tflops=2 * m * n * k / row["us"] / 1e6,
                   tflops_baseline=2 * m * n * k / row["us_baseline"] / 1e6, ratio_vs_promoted=float("nan"))
        rows.append(row)
        progress(f"{row['shape']:>16} {row['config']:>26} {row['us']:7.2f} us {row['tbs']:5.2f} TB/s  torch "
                 f"{row['us_baseline']:7.2f} us {row['tbs_baseline']:5.2f} TB/s  ratio {row['ratio']:.3f}  "
                 f"err {err:.1e} / {err_base:.1e}")
        ops = a = b = sa = sb = ref = None
        torch.cuda.empty_cache()
    res = {"suite": f"fp8-{suite}", "dtype": "e4m3 -> bf16", "scaling": scaling,
           "layout": "x (M,K) row-major x b = W.T of an (N,K) row-major weight",
           "baseline": "torch._scaled_mm(use_fast_accum=True) (cuBLASLt)", "environment": environment(),
           "method": (f"CUDA-graph replay of one call per weight copy (copies overflow L2 twice over), {rounds} "
                      "alternating rounds of triton do_bench_cudagraph medians; time per call = loop time / copies; "
                      "bandwidth = (weight + x + y bytes) / time"),
           "results": rows}
    res.update(summarize(rows))
    res["geomean_ratio_vs_promoted"] = float("nan")
    return res
