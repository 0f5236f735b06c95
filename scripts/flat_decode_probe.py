"""Decode probe: the heuristics' tile run in one partition (GemmConfig(warp_specialize=False)) on long-K weights.

Question (issue 6): session 23 measured what Triton's warp_specialize costs a program (0.35-0.45 us: partition start
and end) and ships the one-partition kernel only where a program's whole unit fits its ring. A decode call is
13-165 us of one weight stream per program, most programs run one unit, and session 22's teardown change
showed that a few tenths of a microsecond per program reach `bench decode` (0.14-0.40 us a shape). In one partition
the consumer warps refill each slot right after the wgmma that read it retires, which is when the producer warp
would have seen the slot empty. Prediction: 0.2-0.4 us off every one-unit decode call (4096^2: +2-3%, 112-470 MB
weights +0.3-1%); programs of two or more units lose (the ring drains between units).

Each candidate is the config warpgemm.linear resolves for the shape, as is and in one partition (also one slot
deeper where it fits), planned as linear plans it and timed as `bench decode` times (CUDA-graph replay, one call per
cold weight copy, alternating rounds).
    python scripts/flat_decode_probe.py OUT.json [M,..] [--mid]   # --mid: the M = 128-256 rows of `bench mid`
"""
import sys

import torch

from warpgemm import _env
from warpgemm.config import check_config
from warpgemm.ops import gemm_impl

from _decode_probe import run_probe


def candidates(m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    a3, b3, c3 = x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0)
    cfg, _ = gemm_impl.resolve_config(None, a3, c3, b3)
    variants = {"ws": cfg.replace(warp_specialize=True)}
    for extra in (0, 1):
        flat = cfg.replace(warp_specialize=False, stages=cfg.stages + extra)
        if check_config(flat, torch.bfloat16, torch.bfloat16) is None:
            variants[f"flat_s{flat.stages}"] = flat
    print(f"{m}x{n}x{k}: {cfg.name} -> {', '.join(variants)}", flush=True)
    out = {}
    for label, c in variants.items():
        launch = gemm_impl.plan_hopper(a3, b3, c3, None, c).launch

        def run(x, w, y, launch=launch):
            launch.launch(x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0), None)
        out[label] = run
    return out


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    mid = "--mid" in sys.argv
    ms = [int(v) for v in args[1].split(",")] if len(args) > 1 else ([128, 256] if mid else [4, 16, 32, 64])
    print(f"{torch.cuda.get_device_name()}  SMs {_env.num_sms(0)}", flush=True)
    run_probe("flat_decode", candidates, ms, args[0])
