"""Does the number of TMA boxes a B tile arrives in cost time? The same kernel config with B loaded as one box and
as 2-16 row pieces of it (GemmConfig.b_pieces_for forced for the probe; the pieces land in the same slot, so the
arithmetic is unchanged), timed in alternating rounds, each checked against an fp32 product. Two-part tiles load B
in rest-wide pieces (128x144: nine boxes of 16 rows a K step); this separates that cost from their small wgmma.

    python scripts/b_pieces_probe.py OUT.json [--shapes MxNxK,...] [--config NAME] [--pieces 1,4,16]
"""
from __future__ import annotations

import argparse
from unittest import mock

import torch

from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.candidates import parse_config
from warpgemm.config import GemmConfig
from warpgemm.kernels.hopper.gemm import GemmLaunch
from warpgemm.kernels.hopper import tma_operands as tma
from warpgemm.testing import add_probe_rows, probe_operands, rel_error, write_probe_result


def launch_with_pieces(cfg, pieces, a3, b3, c3):
    with mock.patch.object(GemmConfig, "b_pieces_for", lambda self, b_kmajor: pieces):
        launch = GemmLaunch(cfg, tma.describe(a3, 2), tma.describe(b3, 1), tma.describe(c3, 2), False, False, False,
                            torch.cuda.get_device_properties(0).multi_processor_count)
        launch.launch(a3, b3, c3, None)  # compiles under the patched property
    return launch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default="8192x8192x8192,4096x4096x4096,2048x8192x2048")
    ap.add_argument("--config", default="128x256x64_s3_w8_g8")
    ap.add_argument("--pieces", default="1,4,16")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    cfg = parse_config(args.config)
    result = {"environment": environment(), "config": cfg.name, "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        a3, b3 = a.unsqueeze(0), w.t().unsqueeze(0)
        fns, errs = {"cublas": lambda: torch.matmul(a, w.t())}, {}
        for p in (int(x) for x in args.pieces.split(",")):
            c3 = torch.full((1, M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            launch = launch_with_pieces(cfg, p, a3, b3, c3)
            errs[f"{p} pieces"] = rel_error(c3[0], ref)
            fns[f"{p} pieces"] = (lambda launch, c3: (lambda: launch.launch(a3, b3, c3, None)))(launch, c3)
        add_probe_rows(result, shape, rounds_ms(fns, args.rounds, 80), errs)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
