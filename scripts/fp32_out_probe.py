"""Which tile should a bf16 GEMM with an fp32 output take? The 128x256 tiles' single-buffer epilogue does not fit
an fp32 output tile beside their ring, so the heuristics fell back to 128x128 tiles with 4 stages (until
heuristics.LARGE_FP32_OUT, chosen from this probe's first run); a 128x256 tile stored in 4 column chunks and the
128x192 tile both fit. Each config is checked against an fp32 product
(NaN-filled output) and timed in alternating rounds next to cuBLAS's bf16-output matmul (a reference point only:
cuBLAS is not asked for fp32 outputs here).

    python scripts/fp32_out_probe.py OUT.json [--rounds N] [--shapes MxNxK,...] [--configs NAME,...]

--configs: config names (candidates.parse_config) timed instead of the default tiles, next to the heuristics' plan.
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

import warpgemm
from warpgemm import heuristics
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.config import check_config
from warpgemm.testing import probe_operands, rel_error

SHAPES = "8192x8192x8192,4096x4096x4096,4096x14336x4096,1024x8192x8192,3072x3072x3072,2048x2048x2048,16384x4096x4096"
CONFIGS = {"heuristics": None, "MEDIUM_FP32_OUT": heuristics.MEDIUM_FP32_OUT,
           "LARGE_s3_c4": heuristics.LARGE.replace(store_chunks=4),
           "LARGE_s3_c4_g16": heuristics.LARGE_TALL_BANDS.replace(store_chunks=4), "WIDE": heuristics.WIDE}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--configs", default="")
    args = ap.parse_args()
    if args.configs:
        from warpgemm.candidates import parse_config_list

        CONFIGS.clear()
        CONFIGS.update({"heuristics": None, **parse_config_list(args.configs)})
    f32, bf = torch.float32, torch.bfloat16
    for name, cfg in CONFIGS.items():
        assert cfg is None or check_config(cfg, bf, f32) is None, name
    result = {"environment": environment(), "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        fns, errs = {"cublas_bf16_out": lambda: torch.matmul(a, w.t())}, {}
        for name, cfg in CONFIGS.items():
            out = torch.full((M, N), float("nan"), device="cuda", dtype=f32)
            warpgemm.matmul(a, w.t(), out=out, config=cfg)
            errs[name] = rel_error(out, ref)
            fns[name] = (lambda cfg, out: (lambda: warpgemm.matmul(a, w.t(), out=out, config=cfg)))(cfg, out)
        times = rounds_ms(fns, args.rounds, 80)
        med = {k: statistics.median(v) for k, v in times.items()}
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        chosen = heuristics.choose_config(1, M, N, K, bf, f32, sms)
        for k in CONFIGS:
            row = {"shape": shape, "variant": k, "config": (CONFIGS[k] or chosen[0]).name, "ms": med[k],
                   "ms_cublas_bf16_out": med["cublas_bf16_out"],
                   "ratio_to_cublas_bf16": med["cublas_bf16_out"] / med[k],
                   "speedup_vs_heuristics": med["heuristics"] / med[k], "rounds_ms": times[k], "rel_error": errs[k]}
            result["rows"].append(row)
            print(f"{shape:>18} {k:>16} {row['config']:>26} {med[k] * 1e3:9.1f} us  vs heuristics "
                  f"{row['speedup_vs_heuristics']:.3f}  vs cuBLAS(bf16 out) {row['ratio_to_cublas_bf16']:.3f} "
                  f"err {errs[k]:.1e}", flush=True)
        del a, w, ref
    result["ok"] = all(r["rel_error"] < 1e-2 for r in result["rows"])
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    if not result["ok"]:
        raise SystemExit("a config's result is wrong")


if __name__ == "__main__":
    main()
