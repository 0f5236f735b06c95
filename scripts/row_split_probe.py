"""Would a second launch for a nearly empty last tile-row pay? M = 128 q + r with small r (token counts such as 528,
273 or 4113) runs a last row of tiles that is mostly padding. For each shape: warpgemm.matmul on all rows, and the
same product as two warpgemm.matmul calls, rows [0, 128 q) and [128 q, M) (each planned by the heuristics: the r rows
get decode tiles or a GEMV), into row slices of one output; timed against torch.matmul in alternating rounds and
checked against an fp32 product.

    python scripts/row_split_probe.py OUT.json [--shapes MxNxK,...] [--rounds R] [--nn]
"""
from __future__ import annotations

import argparse

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.testing import add_probe_rows, probe_operands, rel_error, write_probe_result

SHAPES = ("544x20768x1760,528x9960x1056,273x25296x1616,191x21952x4624,415x2936x3440,132x2752x2704,4113x4096x4096,"
          "1040x8192x8192,2064x14336x4096,4100x14336x4096")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of an (N, K) weight's W.T")
    args = ap.parse_args()
    result = {"environment": environment(), "nn": args.nn, "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        m0 = M // 128 * 128
        a, w, ref = probe_operands(M, N, K)
        b = w.t().contiguous() if args.nn else w.t()
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)

        def whole():
            warpgemm.matmul(a, b, out=c)

        def split():
            warpgemm.matmul(a[:m0], b, out=c[:m0])
            warpgemm.matmul(a[m0:], b, out=c[m0:])

        fns, errs = {"cublas": lambda: torch.matmul(a, b)}, {}
        for name, fn in (("whole", whole), (f"rows [0, {m0}) + [{m0}, {M})", split)):
            c.fill_(float("nan"))
            fn()
            errs[name] = rel_error(c, ref)
            fns[name] = fn
        add_probe_rows(result, shape, rounds_ms(fns, args.rounds, 60), errs)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
