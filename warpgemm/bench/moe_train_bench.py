"""`warpgemm bench moe --train`: a mixture-of-experts layer's training step against torch._grouped_mm's, same
process. out = grouped_mm(x, W, offs) with x (T, K) and experts W stored (E, N, K) and read as (E, K, N), both
requiring grad, then out.backward(dY) into fresh .grad: the forward, dX (the token form on the transposed
experts) and dW (the ragged-K form), plus autograd's own work, on `bench moe`'s cases and routings.
"""
from __future__ import annotations

import torch

from .gemm_bench import environment
from .moe_bench import MOE_CASES, _chunked_rel_error, routing
from .timing import alternate, geomean, warm_gpu
from ..testing import rel_error


def _step(grouped_mm, x: torch.Tensor, w: torch.Tensor, offs: torch.Tensor, dy: torch.Tensor):
    def step():
        x.grad = w.grad = None
        grouped_mm(x, w, offs).backward(dy)
        return x.grad, w.grad
    return step


def run_moe_train_suite(kinds=("skewed", "uniform", "empty"), rounds: int = 3, progress=print) -> dict:
    import warpgemm

    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16).requires_grad_()
        w = (torch.randn(case.experts, case.N, case.K, device="cuda", generator=gen) / case.K ** 0.5).to(
            torch.bfloat16).transpose(1, 2).detach().requires_grad_()
        dy = torch.randn(case.tokens, case.N, device="cuda", generator=gen).to(torch.bfloat16)
        for kind in kinds:
            offs = torch.tensor(routing(case.experts, case.tokens, kind), device="cuda").cumsum(0).to(torch.int32)
            ours, theirs = _step(warpgemm.grouped_mm, x, w, offs, dy), _step(torch._grouped_mm, x, w, offs, dy)
            dx, dw = (t.clone() for t in ours())  # also compiles and warms
            dx_t, dw_t = theirs()
            diff_dx, diff_dw = rel_error(dx, dx_t.float()), _chunked_rel_error(dw, dw_t)
            same_layout = dw.stride() == w.stride()
            del dx, dw, dx_t, dw_t
            t = alternate(ours, theirs, rounds=rounds)
            flops = 3 * case.flops
            row = {"case": case.label, "routing": kind, "experts": case.experts, "tokens": case.tokens, "K": case.K,
                   "N": case.N, "ms": t.ms_a, "ms_grouped_mm": t.ms_b, "rounds_ms": t.rounds_a,
                   "rounds_ms_grouped_mm": t.rounds_b, "tflops": flops / t.ms_a / 1e9,
                   "tflops_grouped_mm": flops / t.ms_b / 1e9, "ratio_vs_grouped_mm": t.ms_b / t.ms_a,
                   "rel_diff_dx": diff_dx, "rel_diff_dw": diff_dw, "dw_in_experts_layout": same_layout}
            rows.append(row)
            progress(f"{case.label:>28} {kind:>8} {t.ms_a:8.3f} ms {row['tflops']:6.1f} TF/s  torch "
                     f"{row['tflops_grouped_mm']:6.1f} TF/s  ratio {row['ratio_vs_grouped_mm']:.3f}  diff dX "
                     f"{diff_dx:.1e} dW {diff_dw:.1e}")
        del x, w, dy
    return {"suite": "moe-train", "environment": environment(),
            "baseline": "torch._grouped_mm forward + backward (CUTLASS)",
            "method": f"{rounds} alternating rounds of do_bench medians; a step = grouped_mm(x, W, offs).backward(dY) "
                      "with x.grad and W.grad reset; TFLOP/s count its 3 grouped GEMMs",
            "geomean_vs_grouped_mm": geomean(r["ratio_vs_grouped_mm"] for r in rows),
            "min_vs_grouped_mm": min(r["ratio_vs_grouped_mm"] for r in rows), "results": rows}
