"""Probe: grouped_mm with and without the short row tile (a group's last tile of <= 64 rows multiplied at one
warpgroup's height), each against torch._grouped_mm, in one process and alternating rounds.

    PYTHONPATH=. python3 scripts/short_tile_probe.py [json]      # CASES=0,1,... ROUTINGS=skewed,empty ROUNDS=3
"""
import json
import os
import sys

import torch

import warpgemm
import warpgemm.kernels.hopper.gemm as gm
import warpgemm.ops.grouped as grouped
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.bench.timing import bench_ms, warm_gpu

cases = [MOE_CASES[int(i)] for i in os.environ.get("CASES", ",".join(map(str, range(len(MOE_CASES))))).split(",")]
routings = os.environ.get("ROUTINGS", "skewed,empty").split(",")
rounds = int(os.environ.get("ROUNDS", "3"))
warm_gpu(2.0)
rows = []
for case in cases:
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(case.experts, case.N, case.K, device="cuda", generator=gen).to(torch.bfloat16).transpose(1, 2)
    for how in routings:
        offs = torch.tensor(routing(case.experts, case.tokens, how), device="cuda").cumsum(0).to(torch.int32)
        want = torch._grouped_mm(a, b, offs).float()
        plans, outs = {}, {}
        for short in (True, False):
            gm.SHORT_TILES = short
            grouped._PLANS = {}
            outs[short] = warpgemm.grouped_mm(a, b, offs).float()
            plans[short] = grouped._PLANS
        gm.SHORT_TILES = True
        errs = {s: ((o - want).norm() / want.norm()).item() for s, o in outs.items()}

        def run(short):
            grouped._PLANS = plans[short]
            return warpgemm.grouped_mm(a, b, offs)

        fns = {"short": lambda: run(True), "full": lambda: run(False), "torch": lambda: torch._grouped_mm(a, b, offs)}
        times = {k: [] for k in fns}
        for r in range(rounds):
            for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                times[k].append(bench_ms(fns[k], 100))
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        row = {"case": case.label, "routing": how, "ms_short": med["short"], "ms_full": med["full"],
               "ms_grouped_mm": med["torch"], "ratio_short": med["torch"] / med["short"],
               "ratio_full": med["torch"] / med["full"], "rel_err_short": errs[True], "rel_err_full": errs[False],
               "bitwise_equal": bool(torch.equal(outs[True], outs[False])), "rounds_ms": times}
        rows.append(row)
        print(f"{case.label:>28} {how:>8}  full {row['ratio_full']:.3f}  short {row['ratio_short']:.3f}  "
              f"({med['full']:.3f} -> {med['short']:.3f} ms, equal={row['bitwise_equal']})", flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
