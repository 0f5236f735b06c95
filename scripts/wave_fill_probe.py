"""Does wave fill pay where a last wave of tiles is partly filled? For each shape: the heuristics' plan, the same
tile with wave_fill=True, and other tiles with wave fill where their plan cuts tiles, next to cuBLAS (torch.matmul,
B = W.T) in alternating rounds. Every variant is checked element by element against an fp32 product first.

    python scripts/wave_fill_probe.py OUT.json [--suite odd,mid] [--shapes MxNxK,...] [--rounds N]
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch
import triton

import warpgemm
from warpgemm import heuristics
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.suites import GEMM_SUITES
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.config import check_config
from warpgemm.kernels.hopper import wave_fill_plan as wf

OTHER_TILES = {"LARGE_c4": heuristics.LARGE_ONE_WAVE, "LARGE": heuristics.LARGE, "MEDIUM": heuristics.MEDIUM,
               "WIDE": heuristics.WIDE, "SMALL": heuristics.SMALL}


def plan_of(cfg, M, N, K, sms):
    tiles = triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n)
    return tiles, wf.plan(tiles, triton.cdiv(K, cfg.block_k), sms, cfg.block_k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--suite", default="odd,mid")
    ap.add_argument("--shapes", default="")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--heuristics-tile", action="store_true", help="only the heuristics' tile with wave fill")
    ap.add_argument("--no-check", action="store_true",
                    help="time without the error check (WARPGEMM_FILL_DIAG runs, whose results are wrong)")
    args = ap.parse_args()
    bf = torch.bfloat16
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = [(c.M, c.N, c.K) for s in args.suite.split(",") if s for c in GEMM_SUITES[s]()]
    shapes += [tuple(int(x) for x in s.split("x")) for s in args.shapes.split(",") if s]
    result = {"environment": environment(), "sms": sms, "rows": [],
              "fill_diag": int(__import__("os").environ.get("WARPGEMM_FILL_DIAG", "0"))}
    warm_gpu(2.0)
    table = []
    for M, N, K in shapes:
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        a = torch.randn(M, K, device="cuda", generator=g).to(bf)
        w = torch.randn(N, K, device="cuda", generator=g).to(bf)
        ref = a.float() @ w.float().t()
        scale = ref.abs().max().item()
        torch_err = (torch.matmul(a, w.t()).float() - ref).abs().max().item()
        chosen, _ = heuristics.choose_config(1, M, N, K, bf, bf, sms)
        variants = {"heuristics": None}
        if not chosen.swap_ab and check_config(chosen.replace(wave_fill=True), bf, bf) is None \
                and plan_of(chosen, M, N, K, sms)[1].tail_steps:
            variants["heuristics_tile_fill"] = chosen.replace(wave_fill=True)
        for name, cfg in ({} if args.heuristics_tile else OTHER_TILES).items():
            fill = cfg.replace(wave_fill=True)
            if fill != variants.get("heuristics_tile_fill") and plan_of(cfg, M, N, K, sms)[1].tail_steps:
                variants[name + "_fill"] = fill
        if len(variants) == 1:
            continue
        fns, errs = {"cublas": lambda: torch.matmul(a, w.t())}, {}
        for name, cfg in variants.items():
            out = torch.full((M, N), float("nan"), device="cuda", dtype=bf)
            warpgemm.matmul(a, w.t(), out=out, config=cfg)
            err = (out.float() - ref).abs().max().item()
            errs[name] = err
            assert args.no_check or (err == err and err <= 2 * torch_err + 1e-3 * scale), (M, N, K, name, err,
                                                                                          torch_err)
            fns[name] = (lambda cfg, out: (lambda: warpgemm.matmul(a, w.t(), out=out, config=cfg)))(cfg, out)
        times = rounds_ms(fns, args.rounds, 80)
        med = {k: statistics.median(v) for k, v in times.items()}
        for name, cfg in variants.items():
            c = cfg or chosen
            tiles, pl = plan_of(c, M, N, K, sms)
            row = {"shape": f"{M}x{N}x{K}", "variant": name, "config": c.name, "tiles": tiles, "plan": pl._asdict(),
                   "ms": med[name], "ms_cublas": med["cublas"], "rounds_ms": times[name],
                   "rounds_ms_cublas": times["cublas"], "vs_cublas": med["cublas"] / med[name],
                   "vs_heuristics": med["heuristics"] / med[name], "max_error": errs[name],
                   "max_error_torch": torch_err}
            result["rows"].append(row)
            table.append(row)
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    print(f"{'shape':>18} {'variant':>22} {'config':>34} {'tiles':>5} {'L':>3} {'us':>8} {'vs cuBLAS':>9} {'vs heur':>7}")
    for r in table:
        print(f"{r['shape']:>18} {r['variant']:>22} {r['config']:>34} {r['tiles']:>5} {r['plan']['tail_steps']:>3} "
              f"{r['ms'] * 1e3:8.1f} {r['vs_cublas']:9.3f} {r['vs_heuristics']:7.3f}")


if __name__ == "__main__":
    main()
