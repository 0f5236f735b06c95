"""128x256 tiles over one to two waves at 512-2047 rows: the heuristics' plan against the 128x256 tile with a
3-stage ring and whole-tile stores (heuristics.LARGE, what M >= 512 takes past one wave) and with a 4th stage and
chunked stores (LARGE_ONE_WAVE, what 256-511 rows take at any wave count), and cuBLAS (torch.matmul).
Timed twice per shape, each in alternating rounds: do_bench (one call after an L2 flush, as `bench mid`/`dense`)
and back to back in a CUDA graph over cold copies of the weight (as `--back-to-back`).

    python scripts/few_wave_probe.py OUT.json [MxNxK,...] [--rounds 3] [--configs NAME,NAME,...]

--configs times those configs (names as `bench sweep --configs` takes them) instead of the two LARGE tiles; --nn
gives B row-major (K, N) instead of W.T; --x-m-major gives A column-major (x read along M).
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

import warpgemm
from warpgemm.bench.decode_bench import weight_copies
from warpgemm.bench.gemm_bench import environment, plan_name
from warpgemm.bench.timing import graph_rounds_us, rounds_ms, warm_gpu
from warpgemm.candidates import parse_config_list
from warpgemm.heuristics import LARGE, LARGE_ONE_WAVE
from warpgemm.testing import rel_error

SHAPES = ("512x14336x4096,1024x8192x8192,1024x8192x28672,512x28672x8192,"  # suite shapes (the last: 3.4 waves)
          "640x12288x4096,768x8192x4096,768x11008x4096,1024x6144x4096,1280x5120x8192,1536x4096x4096,"
          "512x10240x8192,896x7168x2048,1024x5120x14336,600x12288x4096")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("shapes", nargs="?", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--configs", default="")
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of W.T of an (N, K) weight")
    ap.add_argument("--x-m-major", action="store_true", help="A (x) column-major: the transpose of a (K, M) tensor")
    args = ap.parse_args()
    warm_gpu(3.0)
    env = environment()
    rows = []
    for text in args.shapes.split(","):
        M, N, K = (int(v) for v in text.split("x"))
        a = (torch.randn(K, M, device="cuda", dtype=torch.bfloat16).t() if args.x_m_major
             else torch.randn(M, K, device="cuda", dtype=torch.bfloat16))
        # nn: w holds B's transpose as a view, so `w.t()` below is B row-major (K, N) and contiguous.
        w = (torch.randn(K, N, device="cuda", dtype=torch.bfloat16).t() if args.nn
             else torch.randn(N, K, device="cuda", dtype=torch.bfloat16))
        want = (a.float() @ w.float().t())
        variants = {"plan": None, **(parse_config_list(args.configs) if args.configs else
                                     {"large_s3": LARGE, "large_s4c4": LARGE_ONE_WAVE})}
        fns = {name: (lambda cfg=cfg: warpgemm.matmul(a, w.t(), config=cfg)) for name, cfg in variants.items()}
        fns["cublas"] = lambda: torch.matmul(a, w.t())
        errs = {name: rel_error(fn(), want) for name, fn in fns.items()}
        dob = rounds_ms(fns, rounds=args.rounds)
        copies = weight_copies(w.numel() * w.element_size())
        # randn_like keeps w's strides (nt: K contiguous; nn: N contiguous). From session 35 to 44 this line built
        # every copy N-contiguous, so in nt mode the back-to-back column timed copies 2..n as B row-major
        # (notes/perf.md, session 44); the do_bench column and --nn were right.
        ws = [w] + [torch.randn_like(w) for _ in range(copies - 1)]
        assert all(x.stride() == w.stride() for x in ws)
        gfns = {name: (lambda cfg=cfg: [warpgemm.matmul(a, x.t(), config=cfg) for x in ws])
                for name, cfg in variants.items()}
        gfns["cublas"] = lambda: [torch.matmul(a, x.t()) for x in ws]
        b2b = graph_rounds_us(gfns, rounds=max(2, args.rounds - 1), per_call=copies)
        layout = ("nn" if args.nn else "nt") + ("+x_m_major" if args.x_m_major else "")
        row = {"shape": text, "M": M, "N": N, "K": K, "layout": layout, "plan": plan_name(a, w.t()),
               "tiles_128x256": -(-M // 128) * -(-N // 256), "rel_error_vs_fp32": errs,
               "do_bench_ms": {k: statistics.median(v) for k, v in dob.items()}, "do_bench_rounds_ms": dob,
               "b2b_us": {k: statistics.median(v) for k, v in b2b.items()}, "b2b_rounds_us": b2b}
        rows.append(row)
        d, g = row["do_bench_ms"], row["b2b_us"]
        print(f"{text:>17} {row['tiles_128x256']:4d} tiles plan {row['plan']:>34} | do_bench vs cuBLAS "
              + " ".join(f"{k} {d['cublas'] / d[k]:.3f}" for k in variants)
              + " | b2b " + " ".join(f"{k} {g['cublas'] / g[k]:.3f}" for k in variants), flush=True)
        # Written after every shape: a run cut off by the device's time limit keeps what it measured.
        json.dump({"environment": env, "method": "do_bench medians and CUDA-graph replays over cold weight "
                   "copies, alternating rounds; ratio = cuBLAS time / variant time", "results": rows},
                  open(args.out, "w"), indent=1)


if __name__ == "__main__":
    main()
