"""Where a split tile's time goes: the same split configs with the partial-sum epilogue replaced by measurement-only
variants (scripts/_probe_epilogues.py: each part stores its own tile; parts store partials and count themselves but
nobody sums), each against cuBLAS in alternating rounds. Wrong results by design; timing only.

    PYTHONPATH=. python3 scripts/split_cost_probe.py "$OUT/split_cost_probe.json"
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

CASES = [("1024x14336x4096", "128x256x64_s3_w8_g8"), ("1024x14336x4096", "128x256x64_s3_w8_g8_sk2t"),
         ("512x14336x4096", "128x256x64_s3_w8_g8"), ("512x14336x4096", "128x256x64_s3_w8_g8_sk4t"),
         ("256x14336x4096", "128x128x64_s6_w4_g8"), ("256x14336x4096", "128x128x64_s6_w4_g8_sk2t")]
VARIANTS = {"full": gemm_mod.PartialSumEpilogue, "store_only": SplitStoreOnly, "no_partials": SplitNoPartials}


def main() -> None:
    warm_gpu(2.0)
    rows = []
    real = gemm_mod.PartialSumEpilogue
    for shape, name in CASES:
        M, N, K = (int(x) for x in shape.split("x"))
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        cfg = parse_config(name)
        for variant, cls in (VARIANTS.items() if cfg.split_k > 1 else [("plain", real)]):
            gemm_mod.PartialSumEpilogue = cls
            api._RECIPES.clear()
            gemm_impl._PLANS.clear()
            warpgemm.matmul(a, w.T, config=cfg)
            t = alternate(lambda: warpgemm.matmul(a, w.T, config=cfg), lambda: torch.matmul(a, w.T), rounds=3,
                          rep_ms=60)
            rows.append({"shape": shape, "config": name, "variant": variant, "us": t.ms_a * 1e3,
                         "us_cublas": t.ms_b * 1e3})
            print(f"{shape:>16} {name:>26} {variant:>12} {t.ms_a * 1e3:8.1f} us  cuBLAS {t.ms_b * 1e3:8.1f} us",
                  flush=True)
    gemm_mod.PartialSumEpilogue = real
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"environment": environment(), "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
