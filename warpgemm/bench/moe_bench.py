"""`warpgemm bench moe`: grouped_mm against torch._grouped_mm and a loop of torch.matmul, same process.

Routing is drawn from a fixed seed: "skewed" gives experts log-normal shares (some many tokens, some few),
"uniform" equal shares, "empty" skewed with a quarter of the experts receiving nothing.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from ..testing import rel_error
from .gemm_bench import environment
from .timing import alternate, geomean, warm_gpu


class MoeCase(NamedTuple):
    experts: int
    tokens: int
    K: int
    N: int

    @property
    def label(self) -> str:
        return f"E{self.experts} T{self.tokens} K{self.K} N{self.N}"

    @property
    def flops(self) -> int:
        return 2 * self.tokens * self.K * self.N


MOE_CASES = [MoeCase(8, 4096, 4096, 14336), MoeCase(8, 16384, 4096, 14336), MoeCase(8, 16384, 14336, 4096),
             MoeCase(64, 8192, 2048, 1408), MoeCase(128, 16384, 7168, 2048), MoeCase(256, 32768, 7168, 2048),
             MoeCase(128, 65536, 2048, 1536), MoeCase(32, 512, 4096, 1536)]


def routing(experts: int, tokens: int, kind: str, seed: int = 0) -> list[int]:
    g = torch.Generator().manual_seed(seed)
    if kind == "uniform":
        shares = torch.ones(experts)
    else:
        shares = torch.exp(torch.randn(experts, generator=g) * 1.0)
        if kind == "empty":
            shares[torch.randperm(experts, generator=g)[:experts // 4]] = 0
    counts = torch.floor(shares / shares.sum() * tokens).long()
    counts[int(torch.argmax(shares))] += tokens - int(counts.sum())
    return counts.tolist()


def run_moe_suite(kinds=("skewed", "uniform", "empty"), rounds: int = 3, back_to_back: bool = False,
                  progress=print) -> dict:
    """back_to_back: CUDA-graph replay of calls that follow each other (the experts of every case overflow the L2, so
    each call streams them cold) instead of do_bench's one call after an L2 flush, which leaves the L2 full of dirty
    lines that the timed call writes back (notes/perf.md, "how the L2 is cleared")."""
    import warpgemm

    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16)
        w = torch.randn(case.experts, case.N, case.K, device="cuda", generator=gen).to(torch.bfloat16)
        b = w.transpose(1, 2)  # (E, K, N) view of nn.Linear-layout expert weights
        for kind in kinds:
            counts = routing(case.experts, case.tokens, kind)
            offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
            bounds = [(int(s), int(e)) for s, e in zip([0] + offs.tolist()[:-1], offs.tolist())]
            ours = lambda: warpgemm.grouped_mm(a, b, offs)  # noqa: E731
            theirs = lambda: torch._grouped_mm(a, b, offs)  # noqa: E731

            def loop():
                out = torch.empty(case.tokens, case.N, device="cuda", dtype=torch.bfloat16)
                for e, (s, t) in enumerate(bounds):
                    if t > s:
                        torch.matmul(a[s:t], b[e], out=out[s:t])
                return out

            diff = rel_error(ours(), theirs().float())
            t_torch = alternate(ours, theirs, rounds=rounds, use_graph=back_to_back)
            t_loop = alternate(ours, loop, rounds=rounds, use_graph=back_to_back)
            ms = min(t_torch.ms_a, t_loop.ms_a)
            row = {"case": case.label, "routing": kind, "experts": case.experts, "tokens": case.tokens, "K": case.K,
                   "N": case.N, "ms": ms, "ms_grouped_mm": t_torch.ms_b, "ms_loop": t_loop.ms_b,
                   "tflops": case.flops / ms / 1e9, "tflops_grouped_mm": case.flops / t_torch.ms_b / 1e9,
                   "ratio_vs_grouped_mm": t_torch.ms_b / t_torch.ms_a, "ratio_vs_loop": t_loop.ms_b / t_loop.ms_a,
                   "weight_tb_s": (w.numel() * 2 + a.numel() * 2 + case.tokens * case.N * 2) / ms / 1e9,
                   "rel_diff_vs_grouped_mm": diff, "config": warpgemm.ops.grouped.planned_name(a, b)}
            rows.append(row)
            progress(f"{case.label:>28} {kind:>8} {ms:8.3f} ms {row['tflops']:6.1f} TF/s  vs _grouped_mm "
                     f"{row['ratio_vs_grouped_mm']:.3f}  vs loop {row['ratio_vs_loop']:.3f}  diff {diff:.1e}")
    fine = [r["ratio_vs_grouped_mm"] for r in rows if r["experts"] >= 64]
    return {"suite": "moe", "environment": environment(), "baseline": "torch._grouped_mm and a loop of torch.matmul",
            "method": f"{rounds} alternating rounds of "
                      + ("do_bench_cudagraph (calls back to back)" if back_to_back else "do_bench")
                      + " medians per pair", "back_to_back": back_to_back,
            "geomean_vs_grouped_mm_64plus_experts": geomean(fine) if fine else None,
            "geomean_vs_grouped_mm": geomean(r["ratio_vs_grouped_mm"] for r in rows), "results": rows}


def _chunked_rel_error(out: torch.Tensor, ref: torch.Tensor, chunk: int = 8) -> float:
    """rel_error over (E, K, N) outputs a few experts at a time (the float64 copies of a whole one may not fit)."""
    num = den = 0.0
    for e in range(0, out.shape[0], chunk):
        num += (out[e:e + chunk].double() - ref[e:e + chunk].double()).norm().item() ** 2
        den += ref[e:e + chunk].double().norm().item() ** 2
    return (num / den) ** 0.5 if den > 0 else num ** 0.5


def run_moe_wgrad_suite(kinds=("skewed", "uniform", "empty"), rounds: int = 3, progress=print) -> dict:
    """The weight gradients of the same cases: dW[e] = x[tokens of e]^T @ dy[tokens of e] (grouped_mm's 2-D x 2-D
    form, groups along K) against torch._grouped_mm's and a loop of torch.matmul, do_bench after an L2 flush.
    With many experts the (E, K, N) output is most of the bytes: "tb_s" counts inputs and output."""
    import warpgemm
    from ..ops.grouped_ragged_k import ragged_k_config

    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16)
        dy = torch.randn(case.tokens, case.N, device="cuda", generator=gen).to(torch.bfloat16)
        for kind in kinds:
            counts = routing(case.experts, case.tokens, kind)
            offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
            bounds = [(int(s), int(e)) for s, e in zip([0] + offs.tolist()[:-1], offs.tolist())]
            ours = lambda: warpgemm.grouped_mm(x.t(), dy, offs)  # noqa: E731
            theirs = lambda: torch._grouped_mm(x.t(), dy, offs)  # noqa: E731

            def loop():
                out = torch.empty(case.experts, case.K, case.N, device="cuda", dtype=torch.bfloat16)
                for e, (s, t) in enumerate(bounds):
                    torch.matmul(x[s:t].t(), dy[s:t], out=out[e])
                return out

            diff = _chunked_rel_error(ours(), theirs())
            t_torch = alternate(ours, theirs, rounds=rounds)
            t_loop = alternate(ours, loop, rounds=rounds)
            ms = min(t_torch.ms_a, t_loop.ms_a)
            nbytes = (case.experts * case.K * case.N + x.numel() + dy.numel()) * 2
            row = {"case": case.label, "routing": kind, "experts": case.experts, "tokens": case.tokens, "K": case.K,
                   "N": case.N, "ms": ms, "ms_grouped_mm": t_torch.ms_b, "ms_loop": t_loop.ms_b,
                   "tflops": case.flops / ms / 1e9, "tflops_grouped_mm": case.flops / t_torch.ms_b / 1e9,
                   "ratio_vs_grouped_mm": t_torch.ms_b / t_torch.ms_a, "ratio_vs_loop": t_loop.ms_b / t_loop.ms_a,
                   "tb_s": nbytes / ms / 1e9, "rel_diff_vs_grouped_mm": diff,
                   "config": ragged_k_config(case.K, case.N, case.tokens, case.experts, x.dtype,
                                             x.dtype)[0].name}
            rows.append(row)
            progress(f"{case.label:>28} {kind:>8} {ms:8.3f} ms {row['tflops']:6.1f} TF/s {row['tb_s']:5.2f} TB/s  "
                     f"vs _grouped_mm {row['ratio_vs_grouped_mm']:.3f}  vs loop {row['ratio_vs_loop']:.3f}  "
                     f"diff {diff:.1e}")
    fine = [r["ratio_vs_grouped_mm"] for r in rows if r["experts"] >= 64]
    return {"suite": "moe-wgrad", "environment": environment(),
            "baseline": "torch._grouped_mm (2-D x 2-D) and a loop of torch.matmul",
            "method": f"{rounds} alternating rounds of do_bench medians per pair",
            "geomean_vs_grouped_mm_64plus_experts": geomean(fine) if fine else None,
            "geomean_vs_grouped_mm": geomean(r["ratio_vs_grouped_mm"] for r in rows), "results": rows}
