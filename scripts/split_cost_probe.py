"""What a split-K tile would cost with a free reduction, on the few-row `mid` shapes (M = 128-256).

    PYTHONPATH=. python3 scripts/split_cost_probe.py OUT.json

Each split config runs three ways (scripts/_probe_epilogues.py; wrong sums by design, timing only):
  full         the shipped partial-sum epilogue (fp32 partials, semaphore, the last part sums them in order)
  store_only   partials and semaphore, but the last part stores its own accumulator (no reduction reads)
  no_partials  every part stores its own tile (no partials at all: the split schedule alone)
next to the config the heuristics pick and cuBLAS, in alternating rounds. If no_partials is not clearly ahead of
the shipped config, no reduction scheme can make split-K win there.
"""
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.sweep import parse_config
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.kernels.hopper import gemm as gemm_mod
from warpgemm.ops import api, gemm_impl

sys.path.insert(0, os.path.dirname(__file__))
from _probe_epilogues import SplitNoPartials, SplitStoreOnly  # noqa: E402

SHAPES = ["128x4096x4096", "128x14336x4096", "128x8192x8192", "256x4096x4096", "256x14336x4096", "256x8192x8192"]
SPLITS = ["64x128x64_s8_w4_g8_sk2", "128x128x64_s6_w4_g8_sk2", "128x128x64_s6_w4_g8_sk4",
          "128x256x64_s3_w8_g8_sk4", "128x256x64_s3_w8_g8_sk8"]
VARIANTS = {"full": gemm_mod.PartialSumEpilogue, "store_only": SplitStoreOnly, "no_partials": SplitNoPartials}


def main() -> None:
    warm_gpu(2.0)
    rows = []
    real = gemm_mod.PartialSumEpilogue
    for shape in SHAPES:
        M, N, K = (int(x) for x in shape.split("x"))
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        runs = [("shipped", None, "plain")]
        for name in SPLITS:
            cfg = parse_config(name)
            units = -(-M // cfg.block_m) * -(-N // cfg.block_n) * cfg.split_k
            if units <= 2 * 132:
                runs += [(name, cfg, v) for v in VARIANTS]
        for name, cfg, variant in runs:
            gemm_mod.PartialSumEpilogue = VARIANTS.get(variant, real)
            api._RECIPES.clear()
            gemm_impl._PLANS.clear()
            fn = (lambda: warpgemm.linear(a, w)) if cfg is None else (lambda: warpgemm.matmul(a, w.T, config=cfg))
            fn()
            t = alternate(fn, lambda: torch.nn.functional.linear(a, w), rounds=3, rep_ms=60)
            rows.append({"shape": shape, "config": name, "variant": variant, "us": t.ms_a * 1e3,
                         "us_cublas": t.ms_b * 1e3, "ratio": t.ms_b / t.ms_a})
            print(f"{shape:>15} {name:>26} {variant:>11} {t.ms_a * 1e3:7.1f} us  cuBLAS {t.ms_b * 1e3:7.1f} us "
                  f"{t.ms_b / t.ms_a:6.3f}x", flush=True)
    gemm_mod.PartialSumEpilogue = real
    with open(sys.argv[1], "w") as f:
        json.dump({"probe": "split_cost", "environment": environment(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
