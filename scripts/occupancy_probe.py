"""Decode probe: one program per swap-AB tile instead of a persistent grid, with 1, 2 or 4 programs resident per SM.

Question (issue 6): the weights whose swap-AB tiles outnumber the SMs (14336x4096: 224 64-row tiles, 28672x8192:
448) stream 5-7% below the CUDA-core GEMV on the same weight, where single-round shapes (<= 132 tiles) are within
1%. If the loss is the persistent programs' unequal share (92 programs with two tiles, 40 with one), launching one
program per tile with a smaller ring, so that two or four programs sit on an SM at once and every tile starts at
the same time, should recover it; with one program per SM it shows whether the hardware's hand-out alone helps.

Each variant is a forced config planned like warpgemm.linear's own, with the grid (and the register cap that
decides how many programs fit on an SM) overridden. Timed as `bench decode` times (_decode_probe.run_probe).
    python scripts/occupancy_probe.py OUT.json [M,M,..]
Outcome (notes/perf.md, 2026-11-23): several programs per SM lose; one per tile matches the persistent grid.
"""
import sys

import torch

from warpgemm import _env
from warpgemm.config import GemmConfig, check_config
from warpgemm.kernels.hopper import gemm as hopper_gemm
from warpgemm.ops import gemm_impl

from _decode_probe import run_probe


def swap(bn, bk, stages, split_k=1):
    return GemmConfig(block_m=64, block_n=bn, block_k=bk, stages=stages, consumer_warps=4, group_m=8,
                      split_k=split_k, swap_ab=True)


def plan_with(cfg: GemmConfig, x, w, y, per_sm: int | None):
    """The plan warpgemm.linear would run for this forced config; per_sm: None keeps the heuristic grid, else one
    program per tile with the register cap set so that per_sm programs fit on an SM."""
    orig = hopper_gemm.launch_warps
    if per_sm:
        hopper_gemm.launch_warps = lambda c: (c.consumer_warps, 65536 // (32 * (c.consumer_warps + 4) * per_sm))
    try:
        plan = gemm_impl.plan_hopper(x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0), None, cfg)
    finally:
        hopper_gemm.launch_warps = orig
    if per_sm:
        plan.launch.grid = plan.launch.tiles
    return plan


def variants(m: int) -> dict[str, tuple[GemmConfig, int | None]]:
    bn = 16 if m <= 16 else 32 if m <= 32 else 64
    if bn == 16:
        base = swap(16, 256, 5)
        out = {"tiles_x1": (base, 1), "k256s2_x2": (swap(16, 256, 2), 2), "k128s5_x2": (swap(16, 128, 5), 2),
               "k128s2_x4": (swap(16, 128, 2), 4), "sk2": (base.replace(split_k=2), None)}
    elif bn == 32:
        base = swap(32, 256, 4)
        out = {"tiles_x1": (base, 1), "k256s2_x2": (swap(32, 256, 2), 2), "k128s4_x2": (swap(32, 128, 4), 2),
               "k64s3_x4": (swap(32, 64, 3), 4)}
    else:
        base = swap(64, 128, 6)
        out = {"tiles_x1": (base, 1), "k128s2_x2": (swap(64, 128, 2), 2), "k64s5_x2": (swap(64, 64, 5), 2)}
    for label, (cfg, _) in out.items():
        assert check_config(cfg, torch.bfloat16, torch.bfloat16) is None, (label, cfg)
    return out


_REPORTED: set = set()


def candidates(m, n, k):
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    out = {}
    for label, (cfg, per_sm) in variants(m).items():
        plan = plan_with(cfg, x, w, y, per_sm)
        launch = plan.launch

        def run(x, w, y, launch=launch, label=label):
            launch.launch(x.unsqueeze(0), w.t().unsqueeze(0), y.unsqueeze(0), None)
            if (label, m) not in _REPORTED and launch.kernel.compiled is not None:
                _REPORTED.add((label, m))  # a label names a different config for each x-tile height
                c = launch.kernel.compiled
                print(f"  {label}: {c.n_regs} regs/thread, {c.metadata.shared} B shared, maxnreg "
                      f"{launch.kernel.maxnreg}", flush=True)
        out[f"{label}({launch.grid})"] = run
    return out


if __name__ == "__main__":
    ms = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else [4, 16, 32, 64]
    print(f"{torch.cuda.get_device_name()}  SMs {_env.num_sms(0)}", flush=True)
    run_probe("occupancy", candidates, ms, sys.argv[1])
