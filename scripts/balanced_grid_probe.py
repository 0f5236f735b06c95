"""Many-wave dense shapes at the power cap: the full persistent grid (132 programs, a part-filled last wave) against
the balanced one (cdiv(tiles, waves) programs: 128 on these shapes, every wave full, each wave one 16 x 8 block of
128x256 tiles in the g16 order), each sustained back to back next to cuBLAS, in one process.

Each side patches heuristics.BALANCED_GRID_MAX_WAVES (4, the rule before session 32, or None: no limit) and drops
the cached plans.

    [FP8=1] python scripts/balanced_grid_probe.py OUT.json [reps] [shapes...]

FP8=1: per-tensor e4m3 warpgemm.scaled_mm against torch._scaled_mm(use_fast_accum=True) instead of bf16 linear.
"""
import json
import os
import statistics
import sys

import torch

import warpgemm
from warpgemm import heuristics
from warpgemm.bench.timing import warm_gpu
from warpgemm.ops import gemm_impl, scaled

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from clock_probe import sustained  # noqa: E402

FP8 = os.environ.get("FP8") == "1"


def launch_grid() -> int | None:
    """The grid of the one plan made since the caches were dropped (None for a two-launch column split)."""
    plan = next(iter((scaled._PLANS if FP8 else gemm_impl._PLANS).values()))
    return getattr(plan.launch, "grid", None)


def forget():
    gemm_impl.forget_plans()
    scaled._PLANS.clear()
    scaled._RECIPES.clear()


def operands(M, N, K):
    """(ours, baseline, reference) callables: bf16 linear, or with FP8=1 per-tensor e4m3 scaled_mm (as `bench fp8`)."""
    g = torch.Generator(device="cuda").manual_seed(0)
    if FP8:
        from warpgemm.bench.fp8_bench import make_fp8_operands

        a, b, sa, sb = make_fp8_operands(M, N, K, "tensorwise")
        ref = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True).float()
        return (lambda: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16),
                lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True), ref)
    a = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
    w = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
    return (lambda: warpgemm.linear(a, w), lambda: torch.nn.functional.linear(a, w),
            torch.nn.functional.linear(a, w).float())


def main():
    out_path = sys.argv[1]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    shapes = sys.argv[3:] or ["8192x8192x8192", "16384x8192x8192", "4096x14336x4096", "16384x4096x14336",
                              "4096x8192x28672"]
    seconds = 1.2
    default_waves = heuristics.BALANCED_GRID_MAX_WAVES
    old_rule = int(os.environ.get("FULL_MAX_WAVES", "4"))  # the "full" side: the grid balanced up to 4 waves only
    warm_gpu(3.0)
    rows, table = [], []
    for shape in shapes:
        M, N, K = map(int, shape.split("x"))
        ours, theirs, ref = operands(M, N, K)

        def side(max_waves):
            heuristics.BALANCED_GRID_MAX_WAVES = max_waves
            forget()
            out = ours()
            grid = launch_grid()
            err = ((out.float() - ref).norm() / ref.norm()).item()
            return grid, err

        got = {"cublas": [], "full": [], "balanced": []}
        grids, errs = {}, {}
        for rep in range(reps):
            order = ["cublas", "full", "balanced", "cublas", "balanced", "full"]
            for name in (order if rep % 2 == 0 else order[::-1]):
                if name == "cublas":
                    fn = theirs
                else:
                    grids[name], errs[name] = side(old_rule if name == "full" else None)
                    fn = ours
                r = sustained(fn, 2 * M * N * K, seconds)
                got[name].append(r["tflops"])
                rows.append({"shape": shape, "side": name, "rep": rep, "grid": grids.get(name), **r})
        heuristics.BALANCED_GRID_MAX_WAVES = default_waves
        forget()
        med = {k: statistics.median(v) for k, v in got.items()}
        line = (f"{shape:>18} grid full {grids['full']} / balanced {grids['balanced']}: cuBLAS {med['cublas']:6.1f} "
                f"full {med['full']:6.1f} ({med['full'] / med['cublas']:.3f}) balanced {med['balanced']:6.1f} "
                f"({med['balanced'] / med['cublas']:.3f}) balanced/full {med['balanced'] / med['full']:.4f} "
                f"err {errs['full']:.1e}/{errs['balanced']:.1e}")
        print(line, flush=True)
        table.append(line)
    with open(out_path, "w") as f:
        json.dump({"probe": "balanced_grid", "fp8": FP8, "device": torch.cuda.get_device_name(), "seconds_each": seconds,
                   "rows": rows, "table": table}, f, indent=1)


if __name__ == "__main__":
    main()
