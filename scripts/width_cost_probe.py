"""What a tile's width costs at equal tile counts: 128-row tiles 128 (two warpgroups), 160 (128 + 32), 192 (128 + 64)
and 256 columns wide (and 144 = 128 + 16), each on a product whose N gives it exactly `tiles` tiles (N = tiles / tile-rows x width), so
every program runs the same number of tiles. The time per tile against the 128x256 tile's says what a part of 32 or
64 columns costs beside the 128-column main part, and so what a tile of three parts (224 = 128 + 64 + 32) would cost
before it is built: t224 ~ t192 + t160 - t128 if each part's cost adds. do_bench (one call after an L2 flush, as the
suites time), alternating rounds.

    python scripts/width_cost_probe.py OUT.json [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.candidates import parse_config
from warpgemm.testing import rel_error

WIDTHS = {128: "128x128x64_s6_w8_g8", 144: "128x144x64_s6_w8_g8_c9", 160: "128x160x64_s5_w8_g8_c5",
          192: "128x192x64_s4_w8_g16_c3", 256: "128x256x64_s4_w8_g8_c4"}
# (rows, K, tiles): one wave of 128 tiles at 256 rows, two at 512 rows, and a long K.
CASES = [(256, 4096, 128), (256, 8192, 128), (512, 4096, 256), (512, 8192, 256)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warm_gpu(3.0)
    rows = []
    for M, K, tiles in CASES:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        fns, errs, shapes, keep = {}, {}, {}, []
        for width, name in WIDTHS.items():
            N = tiles // (M // 128) * width
            w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
            keep.append(w)
            cfg = parse_config(name)
            fns[width] = (lambda w=w, cfg=cfg: warpgemm.matmul(a, w.t(), config=cfg))
            errs[width] = rel_error(fns[width](), a.float() @ w.float().t())
            shapes[width] = f"{M}x{N}x{K}"
            fns[f"cublas_{width}"] = (lambda w=w: torch.matmul(a, w.t()))
        ms = rounds_ms(fns, rounds=args.rounds)
        med = {str(k): statistics.median(v) for k, v in ms.items()}
        per_tile = {w: med[str(w)] / med["256"] for w in WIDTHS}
        est224 = per_tile[192] + per_tile[160] - per_tile[128]
        row = {"M": M, "K": K, "tiles": tiles, "shapes": {str(k): v for k, v in shapes.items()},
               "configs": {str(k): v for k, v in WIDTHS.items()}, "median_ms": med, "rounds_ms":
               {str(k): v for k, v in ms.items()}, "rel_error_vs_fp32": {str(k): v for k, v in errs.items()},
               "tile_time_vs_256": {str(k): v for k, v in per_tile.items()}, "additive_estimate_224": est224,
               "vs_cublas": {str(w): med[f"cublas_{w}"] / med[str(w)] for w in WIDTHS}}
        rows.append(row)
        print(f"M={M} K={K} tiles={tiles}: tile time vs 128x256 " +
              " ".join(f"{w}:{per_tile[w]:.3f}" for w in WIDTHS) + f" | 224 est {est224:.3f} | vs cuBLAS " +
              " ".join(f"{w}:{row['vs_cublas'][str(w)]:.3f}" for w in WIDTHS) +
              f" | err max {max(errs.values()):.1e}", flush=True)
        del keep
    json.dump({"environment": environment(), "method": "do_bench medians over alternating rounds; tile time = "
               "config time / 128x256 time at equal tile counts", "results": rows}, open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
