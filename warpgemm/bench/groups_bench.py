"""`warpgemm bench groups`: group_gemm (one launch) against a Python loop of torch.matmul, timed eagerly on
both sides (wall time of back-to-back calls, synchronized at the ends): how users call it."""
from __future__ import annotations

import statistics

import torch

from .gemm_bench import environment
from .timing import bench_graph_ms, eager_ms, geomean, warm_gpu


def mixed_problems(count: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    pick = lambda choices: choices[int(torch.randint(len(choices), (1,), generator=g))]  # noqa: E731
    shapes = [(pick([16, 64, 128, 200, 512, 1024]), pick([256, 512, 1024, 2048]), pick([256, 512, 1024, 4096]))
              for _ in range(count)]
    la = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, k, n in shapes]
    lb = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for m, k, n in shapes]
    return shapes, la, lb


def run_groups_suite(counts=(4, 8, 16, 32, 64), rounds: int = 5, iters: int = 20, tile: str | None = None,
                     progress=print) -> dict:
    import warpgemm
    from warpgemm.ops import group_gemm as op

    if tile is not None and tile not in ("small", "medium", "large"):
        raise ValueError(f"tile must be small, medium or large, got {tile!r}")
    op.FORCE_TILE = tile

    warm_gpu(1.0)
    rows = []
    for count in counts:
        shapes, la, lb = mixed_problems(count, seed=count)
        ours = lambda: warpgemm.group_gemm(la, lb)  # noqa: E731
        loop = lambda: [torch.matmul(a, b) for a, b in zip(la, lb)]  # noqa: E731
        got, want = ours(), loop()
        diff = max(((x.float() - y.float()).norm() / y.float().norm().clamp_min(1e-30)).item()
                   for x, y in zip(got, want))
        ta, tb = [], []
        for r in range(rounds):
            for fn, acc in ((ours, ta), (loop, tb)) if r % 2 == 0 else ((loop, tb), (ours, ta)):
                acc.append(eager_ms(fn, iters)[1])
        ms, ms_loop = statistics.median(ta), statistics.median(tb)
        host, host_loop = [statistics.median([eager_ms(fn, iters)[0] for _ in range(3)]) for fn in (ours, loop)]
        gpu, gpu_loop = bench_graph_ms(ours), bench_graph_ms(loop)  # GPU time alone: CUDA-graph replay
        flops = sum(2 * m * k * n for m, k, n in shapes)
        rows.append({"problems": count, "shapes": shapes, "ms": ms, "ms_loop": ms_loop, "ratio_vs_loop": ms_loop / ms,
                     "host_ms": host, "host_ms_loop": host_loop, "gpu_ms": gpu, "gpu_ms_loop": gpu_loop,
                     "tflops": flops / ms / 1e9, "tflops_loop": flops / ms_loop / 1e9, "max_rel_diff": diff})
        progress(f"{count:3d} problems  group_gemm {ms:.3f} ms  loop {ms_loop:.3f} ms  ratio {ms_loop / ms:.3f} "
                 f"diff {diff:.1e}  host {host:.3f} / {host_loop:.3f} ms  gpu {gpu:.3f} / {gpu_loop:.3f} ms")
    return {"suite": "groups", "environment": environment(), "baseline": "Python loop of torch.matmul",
            "method": f"eager wall time of {iters} back-to-back calls, {rounds} alternating rounds, median",
            "tile": tile or "heuristic",
            "geomean_ratio_vs_loop": geomean(r["ratio_vs_loop"] for r in rows), "results": rows}
