"""`warpgemm bench train`: one linear layer's training step, forward and backward, against F.linear's in the same
process. y = linear(x, W) with x (M, K) and an nn.Linear weight W (N, K), both requiring grad, then y.backward(dY):
three GEMMs (Y = X W^T, dX = dY W, dW = dY^T X) plus autograd's own work, on the dense suite's LLM weights at two
token counts. What a training user times first; it also times the backward's gradient layouts (ops/library.py).
"""
from __future__ import annotations

import torch

from ..testing import rel_error
from .gemm_bench import DTYPES, environment
from .suites import LLM_NK, GemmCase
from .timing import alternate, geomean, warm_gpu

TRAIN_TOKENS = (4096, 16384)


def train_cases() -> list[GemmCase]:
    return [GemmCase(m, n, k) for m in TRAIN_TOKENS for n, k in LLM_NK]


def _step(linear, x: torch.Tensor, w: torch.Tensor, dy: torch.Tensor):
    def step():
        x.grad = w.grad = None
        linear(x, w).backward(dy)
        return x.grad, w.grad
    return step


def _time_case(case: GemmCase, dtype: torch.dtype, rounds: int) -> dict:
    import warpgemm

    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(case.M, case.K, device="cuda", generator=g).to(dtype).requires_grad_()
    w = (torch.randn(case.N, case.K, device="cuda", generator=g) / case.K ** 0.5).to(dtype).requires_grad_()
    dy = torch.randn(case.M, case.N, device="cuda", generator=g).to(dtype)
    ours, theirs = _step(warpgemm.linear, x, w, dy), _step(torch.nn.functional.linear, x, w, dy)
    (dx, dw), (dx_t, dw_t) = [t.clone() for t in ours()], [t.clone() for t in theirs()]  # also compiles and warms
    t = alternate(ours, theirs, rounds=rounds)
    flops = 3 * case.flops
    return {"shape": case.label, "M": case.M, "N": case.N, "K": case.K, "ms": t.ms_a, "ms_baseline": t.ms_b,
            "tflops": flops / t.ms_a / 1e9, "tflops_baseline": flops / t.ms_b / 1e9, "ratio": t.ms_b / t.ms_a,
            "rounds_ms": t.rounds_a, "rounds_ms_baseline": t.rounds_b,
            "rel_diff_dx": rel_error(dx, dx_t.float()), "rel_diff_dw": rel_error(dw, dw_t.float()),
            "dw_contiguous": dw.is_contiguous()}


def run_train_suite(dtype: str = "bf16", rounds: int = 5, warmup_s: float = 3.0, progress=print) -> dict:
    torch_dtype = DTYPES[dtype]
    warm_gpu(warmup_s)
    rows = []
    for case in train_cases():
        row = _time_case(case, torch_dtype, rounds)
        rows.append(row)
        progress(f"{case.label:>20} {row['ms']:8.3f} ms {row['tflops']:7.1f} TFLOP/s baseline "
                 f"{row['tflops_baseline']:7.1f} ratio {row['ratio']:.3f} diff dX {row['rel_diff_dx']:.1e} "
                 f"dW {row['rel_diff_dw']:.1e}")
    return {"suite": "train", "dtype": dtype, "baseline": "torch.nn.functional.linear forward + backward (cuBLAS)",
            "method": f"{rounds} alternating rounds of triton.testing.do_bench medians after {warmup_s}s warm-up; "
                      "a step = linear(x, W).backward(dY) with x.grad and W.grad reset; TFLOP/s count its 3 GEMMs",
            "environment": environment(), "geomean_ratio": geomean(r["ratio"] for r in rows),
            "min_ratio": min(r["ratio"] for r in rows), "results": rows}
