"""Timing that survives power and clock drift: both sides measured in the same process, alternating.

Measured one after the other, cuBLAS against itself read 0.93-1.09 on large GEMMs on our H100s; alternating
A B / B A rounds after a few seconds of warm-up brought that to 0.96-1.01 per shape (design.md). Each round
takes triton's do_bench median (it clears L2 before every repetition), and the result is the median over rounds.
"""
from __future__ import annotations

import statistics
import time
from typing import Callable, NamedTuple

import torch


class PairTiming(NamedTuple):
    ms_a: float
    ms_b: float
    rounds_a: list[float]
    rounds_b: list[float]


def warm_gpu(seconds: float = 3.0) -> None:
    """Run dense matmuls for a few seconds so clocks and power settle before anything is timed."""
    x = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        for _ in range(10):
            torch.matmul(x, x)
        torch.cuda.synchronize()


def bench_ms(fn: Callable[[], object], rep_ms: int = 100, warmup_ms: int = 25) -> float:
    import triton

    return triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="median")


def bench_graph_ms(fn: Callable[[], object], rep_ms: int = 100) -> float:
    """CUDA-graph replay timing, for launches so short that launch overhead would dominate."""
    import triton

    return triton.testing.do_bench_cudagraph(fn, rep=rep_ms, return_mode="median")


def eager_ms(fn: Callable[[], object], iters: int) -> tuple[float, float]:
    """(host ms, wall ms) per call of `iters` back-to-back eager calls, from an idle GPU: host = the time to issue
    them (the launch queue does not fill in a few thousand small calls, so issuing never waits on the GPU),
    wall = until the GPU has finished them too."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(iters):
        fn()
    issued = time.perf_counter() - start
    torch.cuda.synchronize()
    return issued * 1e3 / iters, (time.perf_counter() - start) * 1e3 / iters


def print_host_profile(fn: Callable[[], object], calls: int, rows: int = 25, sort: str = "tottime") -> None:
    """cProfile over `calls` back-to-back eager calls of fn, the `rows` costliest functions by `sort` (own time,
    or "cumulative"): where a call's host time goes."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        fn()
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats(sort).print_stats(rows)


def print_torch_profile(fn: Callable[[], object], warmup: int, calls: int, sort_by: str, rows: int) -> None:
    """torch.profiler (CPU and CUDA) over `calls` calls of fn after `warmup` untimed ones: its table of the `rows`
    first ops by `sort_by` (e.g. "cuda_time_total", "self_cpu_time_total")."""
    from torch.profiler import ProfilerActivity, profile

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by=sort_by, row_limit=rows, max_name_column_width=60))


def alternate(fn_a: Callable[[], object], fn_b: Callable[[], object], rounds: int = 5, rep_ms: int = 100,
              use_graph: bool = False) -> PairTiming:
    """Median times of fn_a and fn_b over `rounds` rounds, the order flipping every round."""
    timer = bench_graph_ms if use_graph else bench_ms
    ra, rb = [], []
    for r in range(rounds):
        if r % 2 == 0:
            ra.append(timer(fn_a, rep_ms))
            rb.append(timer(fn_b, rep_ms))
        else:
            rb.append(timer(fn_b, rep_ms))
            ra.append(timer(fn_a, rep_ms))
    return PairTiming(statistics.median(ra), statistics.median(rb), ra, rb)


def geomean(values) -> float:
    values = [v for v in values if v > 0]
    return statistics.geometric_mean(values) if values else float("nan")


def graph_rounds_us(fns: dict[str, Callable[[], object]], rounds: int = 2, rep_ms: int = 60,
                    per_call: int = 1) -> dict[str, list[float]]:
    """CUDA-graph replay time of each fn in us (divided by per_call), per round; rounds walk the dict forwards and
    backwards in turn, so drift during a round does not favour the entries timed first."""
    for fn in fns.values():
        fn()  # compile and warm every entry before any is timed
    torch.cuda.synchronize()
    return alternating_rounds(fns, rounds, lambda fn: bench_graph_ms(fn, rep_ms) * 1e3 / per_call)


def rounds_ms(fns: dict[str, Callable[[], object]], rounds: int = 3, rep_ms: int = 80) -> dict[str, list[float]]:
    """bench_ms of each fn per round, rounds walking the dict forwards and backwards in turn (the probes' timing)."""
    return alternating_rounds(fns, rounds, lambda fn: bench_ms(fn, rep_ms))


def alternating_rounds(fns: dict[str, Callable[[], object]], rounds: int,
                       timer: Callable[[Callable[[], object]], float]) -> dict[str, list[float]]:
    """timer(fn) of each fn per round; even rounds walk the dict in order, odd ones in reverse, so drift during a
    round does not favour the entries timed first."""
    times = {name: [] for name in fns}
    for r in range(rounds):
        for name in (list(fns) if r % 2 == 0 else list(reversed(fns))):
            times[name].append(timer(fns[name]))
    return times
