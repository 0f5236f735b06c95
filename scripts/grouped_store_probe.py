"""Probe: what the masked store of groups' partial row tiles costs in `bench moe` cases. Times grouped_mm with
the row-bounded epilogue (as shipped), with every tile stored through TMA (WRONG rows at group ends: timing
only), with every tile masked, and with the plain TMA epilogue, whose batch coordinate (the group) puts every
group after the first outside the output so that TMA writes nothing (the cost of no stores at all); each
against torch._grouped_mm in alternating rounds.

    PYTHONPATH=. python3 scripts/grouped_store_probe.py [json]     # CASES=6,1 ROUTINGS=skewed,uniform
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import warpgemm  # noqa: E402
import warpgemm.kernels.hopper.gemm as gm  # noqa: E402
import warpgemm.ops.grouped as grouped  # noqa: E402
from _probe_epilogues import MaskedOnly, TmaEveryTile  # noqa: E402
from warpgemm.bench.moe_bench import MOE_CASES, routing  # noqa: E402
from warpgemm.bench.timing import bench_ms, warm_gpu  # noqa: E402
from warpgemm.kernels.hopper import epilogue as ep  # noqa: E402

cases = [MOE_CASES[int(i)] for i in os.environ.get("CASES", "6,3,0").split(",")]
routings = os.environ.get("ROUTINGS", "skewed,empty,uniform").split(",")
rounds = int(os.environ.get("ROUNDS", "3"))
orig = gm.kernel_constexprs
variants = {"rowbound": None, "tma_every_tile": TmaEveryTile, "masked_only": MaskedOnly,
            "no_store_past_group_0": ep.TmaStoreEpilogue}


def plans_for(epilogue):
    def patched(*args, **kw):
        d = orig(*args, **kw)
        if epilogue is not None and kw.get("grouped") and not args[0].swap_ab:
            d["EpilogueImpl"] = epilogue
        return d
    gm.kernel_constexprs = patched
    grouped._PLANS = {}
    return patched


warm_gpu(2.0)
rows = []
for case in cases:
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(case.experts, case.N, case.K, device="cuda", generator=gen).to(torch.bfloat16).transpose(1, 2)
    for how in routings:
        offs = torch.tensor(routing(case.experts, case.tokens, how), device="cuda").cumsum(0).to(torch.int32)
        plans = {}
        for name, epi in variants.items():
            plans_for(epi)
            warpgemm.grouped_mm(a, b, offs)  # plan and compile with this epilogue
            plans[name] = grouped._PLANS
            gm.kernel_constexprs = orig

        def run(name):
            grouped._PLANS = plans[name]
            return warpgemm.grouped_mm(a, b, offs)

        fns = {n: (lambda n=n: run(n)) for n in variants}
        fns["torch"] = lambda: torch._grouped_mm(a, b, offs)
        times = {k: [] for k in fns}
        for r in range(rounds):
            for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                times[k].append(bench_ms(fns[k], 100))
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        row = {"case": case.label, "routing": how, **{f"ms_{k}": v for k, v in med.items()},
               **{f"ratio_{k}": med["torch"] / med[k] for k in variants}, "rounds_ms": times}
        rows.append(row)
        print(f"{case.label:>28} {how:>8} " + " ".join(f"{k} {med['torch'] / med[k]:.3f}" for k in variants)
              + f"  ({' '.join(f'{v:.3f}' for v in med.values())} ms)", flush=True)
grouped._PLANS = {}
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=1)
