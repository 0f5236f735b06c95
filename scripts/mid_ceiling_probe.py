"""How far is each `mid` product from a plain read of its weight, timed as `bench mid` times (do_bench after an L2
flush)? For every case: warpgemm.matmul, torch.matmul (cuBLAS) and a plain streaming kernel that only sums the weight
(scripts/read_ceiling_probe.py's kernel, no tensor cores; after a flush it is no ceiling: the GEMM's evict-first
weight loads beat it at M = 128), in alternating rounds in one process; then the cuBLAS kernel that torch runs (its
name gives the tile). Prints a table, JSON to argv[1].

    python3 scripts/mid_ceiling_probe.py OUT.json [MxNxK,...]
"""
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import warpgemm
from warpgemm.bench.gemm_bench import environment, make_operands, plan_name
from warpgemm.bench.suites import GemmCase, mid_suite
from warpgemm.bench.timing import bench_ms, warm_gpu

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from read_ceiling_probe import stream_sum_kernel  # noqa: E402


def cublas_kernel(a, b) -> str:
    """The name of the longest-running kernel of torch.matmul(a, b) (the GEMM, not a memset or split-K reduction)."""
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a, b)
        torch.cuda.synchronize()
    events = [e for e in p.events() if e.device_type.name == "CUDA"]
    longest = max(events, key=lambda e: getattr(e, "device_time", None) or e.cuda_time, default=None)
    return longest.name[:100] if longest is not None else "?"


def time_case(case: GemmCase, sms: int) -> dict:
    a, b = make_operands(case, torch.bfloat16, "nt")
    w = b.t()  # the (N, K) weight, contiguous
    assert w.is_contiguous()
    sums = torch.empty(8 * sms, device="cuda", dtype=torch.float32)
    sides = {"ours": lambda: warpgemm.matmul(a, b), "cublas": lambda: torch.matmul(a, b)}
    for g in (2, 4, 8):
        sides[f"read g{g}"] = (lambda g=g: stream_sum_kernel[(g * sms, )](w, sums, w.numel(), BLOCK=8192,
                                                                          num_warps=8))
    for f in sides.values():
        f()
    times = {k: [] for k in sides}
    for _ in range(3):
        for k, f in sides.items():
            times[k].append(bench_ms(f) * 1e3)
    us = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    best_read = min(v for k, v in us.items() if k.startswith("read"))
    wbytes = w.numel() * 2
    row = {"shape": case.label, "M": case.M, "N": case.N, "K": case.K, "config": plan_name(a, b),
           "cublas_kernel": cublas_kernel(a, b), "us": us, "rounds_us": times, "read_us": best_read,
           "weight_mb": wbytes / 1e6, "read_tbs": wbytes / best_read / 1e6,
           "ratio": us["cublas"] / us["ours"], "ours_over_read": us["ours"] / best_read,
           "cublas_over_read": us["cublas"] / best_read}
    print(f"{case.label:>16} {row['config']:>34} ours {us['ours']:7.1f} cuBLAS {us['cublas']:7.1f} read "
          f"{best_read:7.1f} us ({row['read_tbs']:.2f} TB/s)  ratio {row['ratio']:.3f}  ours/read "
          f"{row['ours_over_read']:.3f}  {row['cublas_kernel'][:60]}", flush=True)
    return row


def main():
    out_path = sys.argv[1]
    cases = ([GemmCase(*(int(v) for v in s.split("x"))) for s in sys.argv[2].split(",")] if len(sys.argv) > 2
             else mid_suite())
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    warm_gpu(2.0)
    rows = []
    for case in cases:
        rows.append(time_case(case, sms))  # one call per case: its operands are freed on return
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"probe": "mid_ceiling", "environment": environment(), "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
