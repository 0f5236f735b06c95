"""Probe: where the time of one grouped_mm call goes on the GPU (the row-tile table kernel, the GEMM, the gap).

    PYTHONPATH=. python3 scripts/grouped_kernel_times.py [json]
    CASES=32:512:4096:1536 ROUTING=uniform CONFIG=64x32x256_s4_w4_g8_swap python3 scripts/grouped_kernel_times.py

For each case: torch.profiler's mean device time per kernel over 50 calls, and the time per call of the same loop
(CUDA events), so (per call - sum of kernels) is what the launches leave idle between them.
"""
import json
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import warpgemm
from warpgemm.bench.moe_bench import MoeCase, routing
from warpgemm.candidates import parse_config
from warpgemm.bench.timing import warm_gpu

CASES = [MoeCase(*(int(v) for v in c.split(":")))
         for c in os.environ.get("CASES", "32:512:4096:1536,64:8192:2048:1408").split(",")]
ROUTINGS = os.environ.get("ROUTING", "uniform,skewed").split(",")
CONFIG = parse_config(os.environ["CONFIG"]) if os.environ.get("CONFIG") else None
CALLS = 50

warm_gpu(1.0)
rows = []
for case in CASES:
    a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
    b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
    for how in ROUTINGS:
        offs = torch.tensor(routing(case.experts, case.tokens, how), device="cuda").cumsum(0).to(torch.int32)
        for _ in range(3):
            warpgemm.grouped_mm(a, b, offs, config=CONFIG)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(CALLS):
            warpgemm.grouped_mm(a, b, offs, config=CONFIG)
        end.record()
        torch.cuda.synchronize()
        per_call_us = start.elapsed_time(end) * 1e3 / CALLS
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(CALLS):
                warpgemm.grouped_mm(a, b, offs, config=CONFIG)
            torch.cuda.synchronize()
        kernels = {}
        for evt in prof.key_averages():
            if evt.device_type == torch.autograd.DeviceType.CUDA and evt.count:
                kernels[evt.key[:60]] = evt.device_time_total / CALLS
        busy = sum(kernels.values())
        row = {"case": case.label, "routing": how, "config": CONFIG.name if CONFIG else "heuristic",
               "per_call_us": per_call_us, "kernels_us": kernels, "idle_us": per_call_us - busy}
        rows.append(row)
        print(f"{case.label} {how}: per call {per_call_us:.1f} us, idle {per_call_us - busy:.1f} us; "
              + "; ".join(f"{k[:40]} {v:.1f}" for k, v in kernels.items()), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)
