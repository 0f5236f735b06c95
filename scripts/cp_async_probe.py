"""cp.async against TMA for operands whose rows start off 32-byte sectors (kernels/hopper/async_loads.py).

For each shape (bf16, B = W.T of an (N, K) weight; with --nn a (K, N) row-major B) the heuristics' plan is built three
ways and timed against torch.matmul in alternating rounds: as shipped (off-sector operands by cp.async), with every
operand by TMA (gemm.CP_ASYNC_OFF_SECTOR off), and by TMA on the same logical tensors as views into buffers whose
rows are padded to 128 bytes (what TMA reads at full speed; the copy that would cost is not timed); with --everywhere
also those padded views by cp.async (the cp.async path's own cost). Each result is checked against an fp32 product.

    python scripts/cp_async_probe.py OUT.json [--shapes MxNxK,...] [--rounds R] [--nn]
"""
from __future__ import annotations

import argparse
import json
import statistics
from unittest import mock

import torch

from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.kernels.hopper import gemm as hopper_gemm
from warpgemm.ops import gemm_impl
from warpgemm.testing import rel_error

SHAPES = ("1099x8568x1704,1682x10688x1752,688x7880x7512,1357x16552x2424,4096x4096x4104,1000x1000x1000,"
          "2048x2048x2056,512x14336x4104,128x8192x8200,16x4096x4104,64x14336x4104")


def padded(rows, cols, src):
    """A (rows, cols) view of src's values whose rows start 128 bytes apart at least."""
    pitch = -(-cols // 64) * 64
    view = torch.empty(rows, pitch, device="cuda", dtype=src.dtype)[:, :cols]
    view.copy_(src)
    return view


def plan(a3, b3, c3, cp_async=True, everywhere=False, config=None):
    """The heuristics' plan (or `config`'s); cp_async off: every operand by TMA; everywhere: every operand by
    cp.async, rows on sectors or not (what the cp.async path costs by itself)."""
    gemm_impl._PLANS.clear()
    with mock.patch.object(hopper_gemm, "CP_ASYNC_OFF_SECTOR", cp_async), \
            mock.patch.object(hopper_gemm, "off_sector", (lambda g, itemsize: True) if everywhere
                              else hopper_gemm.off_sector):
        return gemm_impl.plan_hopper(a3, b3, c3, None, config, may_tune=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of an (N, K) weight's W.T")
    ap.add_argument("--everywhere", action="store_true", help="also the padded operands by cp.async")
    ap.add_argument("--configs", default="", help="comma-separated config names, each forced by TMA on both layouts")
    args = ap.parse_args()
    from warpgemm.candidates import parse_config_list

    configs = parse_config_list(args.configs) if args.configs else {}
    result = {"environment": environment(), "nn": args.nn, "rows": []}
    warm_gpu(2.0)
    print(f"{'shape':>16} {'variant':>10} {'us':>8} {'vs cuBLAS':>9}  config / operands")
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", generator=g).bfloat16()
        w = torch.randn(N, K, device="cuda", generator=g).bfloat16()
        ref = a.float() @ w.float().t()
        b = w.t().contiguous() if args.nn else w.t()
        b_pad = padded(K, N, b) if args.nn else padded(N, K, w).t()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fns, errs, info = {"cublas": lambda: torch.matmul(a, b)}, {}, {}
        a_pad = padded(M, K, a)
        variants = (("cp.async", a, b, True, False), ("TMA", a, b, False, False), ("TMA padded", a_pad, b_pad, False,
                                                                                     False))
        variants = tuple(v + (None, ) for v in variants)
        if args.everywhere:
            variants += (("cp.async padded", a_pad, b_pad, True, True, None), )
        for cname, cfg in configs.items():
            variants += ((f"{cname} TMA", a, b, False, False, cfg), (f"{cname} TMA padded", a_pad, b_pad, False, False,
                                                                       cfg))
        for name, x, y, cp, everywhere, cfg in variants:
            a3, b3, c3 = x.unsqueeze(0), y.unsqueeze(0), c.unsqueeze(0)
            p = plan(a3, b3, c3, cp, everywhere, cfg)
            c.fill_(float("nan"))
            p.launch.launch(a3, b3, c3, None)
            errs[name] = rel_error(c, ref)
            launch = p.launch.main if hasattr(p.launch, "tail") else p.launch
            info[name] = {"config": p.config.name, "cp_async_ab": list(launch.caller_async_ops())}
            fns[name] = (lambda p, a3, b3, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(p, a3, b3, c3)
        times = rounds_ms(fns, args.rounds, 60)
        med = {k: statistics.median(v) for k, v in times.items()}
        for name in info:
            row = {"shape": shape, "variant": name, "ms": med[name], "ms_cublas": med["cublas"],
                   "ratio_vs_cublas": med["cublas"] / med[name], "rel_error": errs[name], "rounds_ms": times[name],
                   "rounds_ms_cublas": times["cublas"], **info[name]}
            result["rows"].append(row)
            print(f"{shape:>16} {name:>10} {med[name] * 1e3:8.1f} {row['ratio_vs_cublas']:9.3f}  {info[name]['config']} "
                  f"cp.async A,B={info[name]['cp_async_ab']} err {errs[name]:.1e}", flush=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    if any(not r["rel_error"] < 1e-2 for r in result["rows"]):
        raise SystemExit("a result is wrong")


if __name__ == "__main__":
    main()
