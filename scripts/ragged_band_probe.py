"""Band height of the ragged-K (MoE weight-gradient) walk: do the input panels survive the output stream in L2?

ncu_wgrad.txt (E128 T16384 K7168 N2048, shipped 128x256 tile in bands of 8 tile-rows) read 909 MB from DRAM at
128 tokens a group where the inputs are 302 MB, and 965 MB skewed: the panels are read ~3 times while each group's
29 MB of output streams through the L2. Within a group, a band of GROUP_M tile-rows walks its columns; dy's
column panels (tokens x 256) are used again by every band, x's row panels (tokens x 128) only within one. Bands
of 1 tile-row touch all of dy's panels every 8 units (hot in L2) and each x panel for 8 units in a row (read once),
so the DRAM reads should fall towards the inputs' size. This times the shipped tile with bands of 1, 2, 4, 8 and
the whole column (GROUP_M = 64 > tiles_m) against torch._grouped_mm; 3 alternating rounds, do_bench.

    python scripts/ragged_band_probe.py OUT.json
"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.ops.grouped_ragged_k import ragged_k_config

BANDS = [1, 2, 4, 8, 64]


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "ragged_band.json"
    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES:
        if case.experts < 32:
            continue
        x = torch.randn(case.tokens, case.K, device="cuda", dtype=torch.bfloat16)
        dy = torch.randn(case.tokens, case.N, device="cuda", dtype=torch.bfloat16)
        auto = ragged_k_config(case.K, case.N, case.tokens, case.experts, x.dtype, x.dtype)[0]
        for kind in ("skewed", "uniform", "empty"):
            offs = torch.tensor(routing(case.experts, case.tokens, kind), device="cuda").cumsum(0).to(torch.int32)
            theirs = lambda: torch._grouped_mm(x.t(), dy, offs)  # noqa: E731
            line = {}
            for g in BANDS:
                cfg = auto.replace(group_m=g)
                ours = lambda cfg=cfg: warpgemm.grouped_mm(x.t(), dy, offs, config=cfg)  # noqa: E731
                t = alternate(ours, theirs, rounds=3, rep_ms=60)
                line[g] = t.ms_b / t.ms_a
                rows.append(dict(case=case.label, routing=kind, config=cfg.name, group_m=g,
                                 shipped=cfg == auto, ms=t.ms_a, ms_grouped_mm=t.ms_b, ratio=t.ms_b / t.ms_a,
                                 rounds=t.rounds_a, rounds_grouped_mm=t.rounds_b))
            print(f"{case.label:26s} {kind:8s} {auto.name:24s} " +
                  "  ".join(f"g{g} {r:.3f}" for g, r in line.items()), flush=True)
    with open(out_path, "w") as f:
        json.dump(dict(environment=environment(), bands=BANDS, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
