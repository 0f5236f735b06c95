"""The mma.sync GEMV (warpgemm/kernels/gemv_mma.py) for 3-16 rows of x against warpgemm.linear (the swap-AB wgmma
kernel at these rows) and F.linear on the decode weights, timed as `bench decode` times. Question: with the products
on the tensor cores, do the CUDA-core GEMVs' short programs (2.61-3.09 TB/s at two rows) carry over to 4-16 rows?

    python3 scripts/gemv_mma_probe.py OUT.json [4,8,16] [warps:unroll:row_loads,...]
"""
import sys

import torch

from _decode_probe import run_probe
from warpgemm.kernels.gemv_mma import GemvMmaLaunch

VARIANTS = [(8, 4, 0), (8, 2, 0), (8, 4, 1), (4, 8, 1)]  # warps, unroll, row_loads


def candidates_for(variants):
    def candidates(m, n, k):
        out = {}
        x3 = torch.empty(1, m, k, device="cuda", dtype=torch.bfloat16)
        w3 = torch.empty(n, k, device="cuda", dtype=torch.bfloat16).t().unsqueeze(0)
        y3 = torch.empty(1, m, n, device="cuda", dtype=torch.bfloat16)
        for warps, unroll, row_loads in variants:
            ml = GemvMmaLaunch(x3, w3, y3, False, num_warps=warps, unroll=unroll, row_loads=bool(row_loads))
            out[f"mma w{warps} u{unroll}" + (" rows" if row_loads else "")] = lambda x, w, y, ml=ml: ml.launch(x, w, y, None)
        return out
    return candidates


if __name__ == "__main__":
    ms = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "4,8,16").split(",")]
    variants = ([tuple(int(v) for v in s.split(":")) for s in sys.argv[3].split(",")] if len(sys.argv) > 3
                else VARIANTS)
    run_probe("gemv_mma", candidates_for(variants), ms, sys.argv[1])
