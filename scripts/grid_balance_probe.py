"""Probe: a persistent grid of P = cdiv(tiles, waves) programs (every program runs the same number of tiles) against
the full grid of min(SMs, tiles) (the last wave partly filled), on shapes whose tiles make a fraction of a wave over.

    PYTHONPATH=. python3 scripts/grid_balance_probe.py [json]
Decode shapes: CUDA graphs, weights rotated out of L2 (bench decode's method). Mid shapes: do_bench, alternating.
"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.decode_bench import run_decode_suite
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.kernels.hopper import gemm as gemm_mod
from warpgemm.ops import api, gemm_impl

_orig_init = gemm_mod.GemmLaunch.__init__
BALANCE = False


def _init(self, *args, **kwargs):
    _orig_init(self, *args, **kwargs)
    if BALANCE and not self.cfg.stream_k and self.cfg.split_k == 1:
        waves = -(-self.tiles // self.grid)
        self.grid = -(-self.tiles // waves)


gemm_mod.GemmLaunch.__init__ = _init


def set_policy(balanced: bool) -> None:
    global BALANCE
    BALANCE = balanced
    api._RECIPES.clear()
    gemm_impl._PLANS.clear()


DECODE = [(m, 14336, 4096) for m in (1, 16, 32, 64)] + [(m, 28672, 8192) for m in (1, 16, 32, 64)]
MID = [(256, 14336, 4096), (512, 14336, 4096), (256, 28672, 8192), (128, 28672, 8192)]
warm_gpu(2.0)
rows = []
for balanced in (False, True):
    set_policy(balanced)
    res = run_decode_suite(rounds=2, eager=False, cases=DECODE, warmup_s=0.5, progress=lambda s: None)
    for r in res["results"]:
        rows.append({"policy": "balanced" if balanced else "full", "shape": r["shape"], "config": r["config"],
                     "us": r["us"], "ratio": r["ratio"], "tbs": r["tbs"]})
        print(f"{rows[-1]['policy']:>9} {r['shape']:>14} {r['config']:>26} {r['us']:8.2f} us {r['tbs']:.2f} TB/s "
              f"ratio {r['ratio']:.3f}")
for m, n, k in MID:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    cells = {}
    for balanced in (False, True):
        set_policy(balanced)
        warpgemm.linear(a, w)
        t = alternate(lambda: warpgemm.linear(a, w), lambda: torch.nn.functional.linear(a, w), rounds=3, rep_ms=60)
        cells[balanced] = t
        rows.append({"policy": "balanced" if balanced else "full", "shape": f"{m}x{n}x{k}", "us": t.ms_a * 1e3,
                     "ratio": t.ms_b / t.ms_a})
        print(f"{rows[-1]['policy']:>9} {m}x{n}x{k:<6} {t.ms_a * 1e3:8.2f} us ratio {t.ms_b / t.ms_a:.3f}")
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "results": rows}, f, indent=2)
