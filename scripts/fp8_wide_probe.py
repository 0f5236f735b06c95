"""Do 128x192 tiles help fp8 (scaled_mm) where they help bf16? For each shape: scaled_mm with its heuristics'
config and with forced 128x192 fp8 tiles (K steps of 128 fp8 elements, 3 or 4 stages), each checked against
torch._scaled_mm on the same operands and timed in alternating rounds against it (use_fast_accum=True).

    python scripts/fp8_wide_probe.py OUT.json [--rounds N] [--shapes MxNxK,...] [--scaling tensorwise|rowwise]
                                      [--configs NAME,...] [--rule-off]
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import statistics
from unittest import mock

import torch

import warpgemm
from warpgemm import heuristics
from warpgemm.bench.fp8_bench import make_fp8_operands
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.candidates import parse_config_list
from warpgemm.config import GemmConfig
from warpgemm.ops.scaled import plan, scale_mode
from warpgemm.testing import rel_error

SHAPES = ("3072x3072x3072,1536x1536x1536,3072x3072x1024,1024x2304x4096,6144x1536x4096,1280x6912x4096,"
          "4096x4096x4096,2560x2560x2560")
VARIANTS = {"heuristics": None,
            "WIDE_s3": GemmConfig(128, 192, 128, 3, 8, group_m=16, store_chunks=3),
            "WIDE_s4": GemmConfig(128, 192, 128, 4, 8, group_m=16, store_chunks=3)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--scaling", default="tensorwise")
    ap.add_argument("--configs", default="",
                    help="comma-separated config names timed instead of the 128x192 ones ('none': heuristics only)")
    ap.add_argument("--rule-off", nargs="?", const="off_sector.OFF_SECTOR_CLUSTERS", default="",
                    help="also the plan the heuristics make with these flags off (comma-separated, heuristics' NAME "
                         "or module.NAME of another warpgemm module; default the off-sector pairs; forced: same "
                         "launch)")
    args = ap.parse_args()
    if args.configs:
        VARIANTS.clear()
        VARIANTS.update({"heuristics": None, **(parse_config_list(args.configs) if args.configs != "none" else {})})
    result = {"environment": environment(), "scaling": args.scaling, "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, b, sa, sb = make_fp8_operands(M, N, K, args.scaling)
        want = torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
        fns = {"torch": lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)}
        errs = {}
        mode = scale_mode(sa, sb, M, N)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        chosen = plan(a, b, c, mode, False, None).config.name
        variants = dict(VARIANTS)
        if args.rule_off:
            with contextlib.ExitStack() as stack:
                for flag in args.rule_off.split(","):  # FLAG (heuristics') or module.FLAG (swap_rows.FLAG, ...)
                    module, _, name = flag.rpartition(".")
                    owner = importlib.import_module(f"warpgemm.{module}") if module else heuristics
                    stack.enter_context(mock.patch.object(owner, name, False))
                variants["rule off"] = plan(a, b, c, mode, False, None).config
        for name, cfg in variants.items():
            errs[name] = rel_error(warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, config=cfg),
                                   want.float())
            fns[name] = (lambda cfg: (lambda: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16,
                                                                 config=cfg)))(cfg)
        times = rounds_ms(fns, args.rounds, 80)
        med = {k: statistics.median(v) for k, v in times.items()}
        for k, cfg in variants.items():
            row = {"shape": shape, "variant": k, "config": cfg.name if cfg else chosen, "ms": med[k],
                   "ms_torch": med["torch"], "ratio": med["torch"] / med[k], "rounds_ms": times[k],
                   "rel_diff_vs_torch": errs[k]}
            result["rows"].append(row)
            print(f"{shape:>16} {k:>10} {row['config']:>26} {med[k] * 1e3:8.1f} us ratio {row['ratio']:.3f} "
                  f"diff {errs[k]:.1e}", flush=True)
        del a, b, want
    result["ok"] = all(r["rel_diff_vs_torch"] < 1e-2 for r in result["rows"])
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    if not result["ok"]:
        raise SystemExit("a variant differs from torch._scaled_mm")


if __name__ == "__main__":
    main()
