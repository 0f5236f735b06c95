"""Is it the row alignment or the ragged K that makes shapes with K (or N) off a multiple of 64 slow? The same product
timed with its operands' rows as allocated (K * 2 bytes apart: 16-byte aligned only) and with the same logical
tensors as views into buffers whose rows are padded to 128 bytes (a ragged last K step either way), each checked
against an fp32 product and timed against torch.matmul on the plain tensors in alternating rounds.

    python scripts/align_probe.py OUT.json [--shapes MxNxK,...] [--rounds R]
"""
from __future__ import annotations

import argparse
import statistics

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.testing import padded_rows, probe_operands, rel_error, write_probe_result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default="1099x8568x1704,688x7880x7512,1208x1048x2632,1000x1000x1000,4096x4096x4104")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    result = {"environment": environment(), "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        ap_, wp = padded_rows(a), padded_rows(w)
        c_plain = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        c_pad = padded_rows(torch.empty(M, N, device="cuda", dtype=torch.bfloat16))
        variants = {"plain": (a, w, c_plain), "AB rows aligned": (ap_, wp, c_plain),
                    "C rows aligned": (a, w, c_pad), "all rows aligned": (ap_, wp, c_pad)}
        fns, errs = {"cublas": lambda: torch.matmul(a, w.t())}, {}
        for name, (x, y, c) in variants.items():
            c.fill_(float("nan"))
            warpgemm.matmul(x, y.t(), out=c)
            errs[name] = rel_error(c, ref)
            fns[name] = (lambda x, y, c: (lambda: warpgemm.matmul(x, y.t(), out=c)))(x, y, c)
        times = rounds_ms(fns, args.rounds, 40)
        med = {k: statistics.median(v) for k, v in times.items()}
        for name in variants:
            row = {"shape": shape, "variant": name, "ms": med[name], "ms_cublas": med["cublas"],
                   "ratio": med["cublas"] / med[name], "rel_error": errs[name], "rounds_ms": times[name]}
            result["rows"].append(row)
            print(f"{shape:>16} {name:>18} {med[name] * 1e3:8.1f} us ratio {row['ratio']:.3f} err {errs[name]:.1e}",
                  flush=True)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
