"""`warpgemm bench groups`: group_gemm (one launch) against a Python loop of torch.matmul, timed eagerly on
both sides (wall time of back-to-back calls, synchronized at the ends): how users call it."""
from __future__ import annotations

import statistics
import time

import torch

from .gemm_bench import environment
from .timing import geomean, warm_gpu


def mixed_problems(count: int, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    pick = lambda choices: choices[int(torch.randint(len(choices), (1,), generator=g))]  # noqa: E731
    shapes = [(pick([16, 64, 128, 200, 512, 1024]), pick([256, 512, 1024, 2048]), pick([256, 512, 1024, 4096]))
              for _ in range(count)]
    la = [torch.randn(m, k, device="cuda", dtype=torch.bfloat16) for m, k, n in shapes]
    lb = [torch.randn(k, n, device="cuda", dtype=torch.bfloat16) for m, k, n in shapes]
    return shapes, la, lb


def eager_ms(fn, iters: int) -> float:
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - start) * 1e3 / iters


def host_ms(fn, iters: int) -> float:
    """Host time per call: the time to issue the calls, the GPU being idle at the start (the launch queue does
    not fill in this many calls, so issuing never waits on the GPU)."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    issued = time.perf_counter() - start
    torch.cuda.synchronize()
    return issued * 1e3 / iters


def graph_ms(fn, iters: int) -> float:
    """GPU time per call: `iters` calls captured in one CUDA graph, replayed (no host work in the timing)."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        for _ in range(iters):
            fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph.replay()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(3):
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / iters)
    return statistics.median(times)


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
                acc.append(eager_ms(fn, iters))
        ms, ms_loop = statistics.median(ta), statistics.median(tb)
        host, host_loop = statistics.median(host_ms(ours, iters) for _ in range(3)), \
            statistics.median(host_ms(loop, iters) for _ in range(3))
        gpu, gpu_loop = graph_ms(ours, iters), graph_ms(loop, iters)
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
