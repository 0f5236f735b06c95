"""What a split-K tile would cost with a free reduction, on the few-row `mid` shapes (M = 128-256 by default).

    PYTHONPATH=. python3 scripts/split_cost_probe.py OUT.json            # mid shapes, do_bench as `bench mid`
    PYTHONPATH=. python3 scripts/split_cost_probe.py OUT.json --decode   # swap-AB tiles, timed as `bench decode`

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
from warpgemm.candidates import parse_config
from warpgemm.config import check_config
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.kernels.hopper import gemm as gemm_mod
from warpgemm.ops import api, gemm_impl

sys.path.insert(0, os.path.dirname(__file__))
from _probe_epilogues import SplitNoPartials, SplitStoreOnly  # noqa: E402

# SPLIT_SHAPES / SPLIT_CONFIGS (comma-separated) replace the defaults.
SHAPES = (os.environ.get("SPLIT_SHAPES") or "128x4096x4096,128x14336x4096,128x8192x8192,256x4096x4096,"
          "256x14336x4096,256x8192x8192").split(",")
SPLITS = (os.environ.get("SPLIT_CONFIGS") or "64x128x64_s8_w4_g8_sk2,128x128x64_s6_w4_g8_sk2,128x128x64_s6_w4_g8_sk4,"
          "128x256x64_s3_w8_g8_sk4,128x256x64_s3_w8_g8_sk8").split(",")
VARIANTS = {"full": gemm_mod.PartialSumEpilogue, "store_only": SplitStoreOnly, "no_partials": SplitNoPartials}


DECODE = [(4096, 4096, 4, "64x16x256_s5_w4_g8_swap"), (4096, 4096, 16, "64x16x256_s5_w4_g8_swap"),
          (14336, 4096, 4, "64x16x256_s5_w4_g8_swap")]


def decode_main(out_path: str) -> None:
    """The swap-AB decode tiles split in K (2 and 4 parts) three ways, against whole tiles and F.linear, timed as
    `bench decode` times: CUDA-graph replay of one call per cold weight copy."""
    from warpgemm.bench.decode_bench import weight_copies
    from warpgemm.bench.timing import graph_rounds_us

    warm_gpu(2.0)
    rows = []
    real = gemm_mod.PartialSumEpilogue
    for n, k, m, whole in DECODE:
        copies = weight_copies(n * k * 2)
        weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        for split in (2, 4):
            cfg = parse_config(f"{whole}_sk{split}")
            for variant, cls in VARIANTS.items():
                gemm_mod.PartialSumEpilogue = cls
                api._RECIPES.clear()
                gemm_impl._PLANS.clear()
                fns = {"split": lambda: [warpgemm.matmul(x, w.T, config=cfg) for w in weights],
                       "warpgemm.linear": lambda: [warpgemm.linear(x, w) for w in weights],
                       "F.linear": lambda: [torch.nn.functional.linear(x, w) for w in weights]}
                ts = {name: min(t) for name, t in graph_rounds_us(fns, per_call=copies).items()}
                rows.append({"M": m, "N": n, "K": k, "config": cfg.name, "variant": variant, "us": ts["split"],
                             "us_whole": ts["warpgemm.linear"], "us_f_linear": ts["F.linear"]})
                print(f"{m:>2}x{n}x{k} {cfg.name:>30} {variant:>11} {ts['split']:6.2f} us  whole "
                      f"{ts['warpgemm.linear']:6.2f}  F.linear {ts['F.linear']:6.2f}", flush=True)
        weights = x = None
        torch.cuda.empty_cache()
    gemm_mod.PartialSumEpilogue = real
    with open(out_path, "w") as f:
        json.dump({"probe": "split_cost_decode", "environment": environment(), "rows": rows}, f, indent=2)


def main() -> None:
    if "--decode" in sys.argv:
        return decode_main(sys.argv[1])
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
            if units > 2 * 132:
                print(f"{shape}: {name} skipped ({units} units, over two waves)", flush=True)
                continue
            reason = check_config(cfg, torch.bfloat16, torch.bfloat16)
            if reason is not None:
                print(f"{shape}: {name} skipped ({reason})", flush=True)
                continue
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
