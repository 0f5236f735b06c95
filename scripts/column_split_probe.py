"""Column splits beyond the LARGE rule: does a first launch of whole waves of big tiles plus a second launch of
smaller tiles over the last columns beat one launch on shapes outside the suites (1536^3 and kin, where cuBLAS
fits its tile count to the SMs)? Every variant is checked against an fp32 product (NaN-filled output) and timed
against torch.matmul in alternating rounds.

    python scripts/column_split_probe.py OUT.json [--rounds N] [--shapes MxNxK,...] [--alone] [--wide]
                                         [--heuristics-only] [--nn] [--configs NAME,...]

--wide adds the two-part-width tiles (candidates.WIDE_CANDIDATES: 192 to 80 columns) to the tiles tried; --alone
times every tile alone and no column splits. Every run also times the heuristics' plan without each later rule
(MOCKS): 192- and 160-column tiles ("no wide"), 128x128 tiles alone, the column split's launch cost growing at short
K, 128x256 tiles under 512 rows, 160-column tiles alone ("no 160"), the 72-128-row rule ("no one-row"). --configs
replaces the tiles tried by the named configs (candidates.parse_config).
"""
from __future__ import annotations

import argparse
import json
import statistics
from unittest import mock

import torch

from warpgemm import heuristics
from warpgemm.candidates import WIDE_CANDIDATES
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.ops import gemm_impl
from warpgemm.testing import probe_operands, rel_error

SHAPES = ["1536x1536x1536", "1536x1536x6144", "2048x2048x2048", "3072x3072x3072", "1280x5120x5120",
          "3000x5000x2000", "2000x2000x8000", "777x4096x11008", "1536x4096x4096", "2560x2560x2560"]
TILES = {"LARGE": heuristics.LARGE, "LARGE_c4": heuristics.LARGE_ONE_WAVE, "MEDIUM": heuristics.MEDIUM,
         "SMALL": heuristics.SMALL, "NARROW": heuristics.NARROW}


def cdiv(a, b):
    return -(-a // b)


MOCKS = {"no wide": ("WIDE_MIN_GAIN", 0.0), "no medium": ("medium_tile_time", lambda *a: float("inf")),
         "no short-K cost": ("TAIL_COST_K", 0), "no few-row large": ("FEW_ROWS_LARGE_MIN_M", 1 << 30),
         "no 160": ("WIDE_160_TILE_TIME", float("inf")), "no one-row": ("ONE_ROW_MAX_M", 0)}


def plan(a3, b3, c3, main=None, tail=None, n1=0):
    """The launch the heuristics would build, or `main` over columns [0, n1) and `tail` over the rest
    (main: a key of MOCKS, the heuristics' plan without one of its later rules)."""
    gemm_impl._PLANS.clear()
    if main is None:
        return gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)
    if main in MOCKS:
        # The heuristics with one later rule switched off and the others left on (so "no medium" at short K gives the
        # 128x256 tile alone, not the split of before both rules).
        attr, value = MOCKS[main]
        heuristics.choose_config.cache_clear()
        try:
            with mock.patch.object(heuristics, attr, value):
                return gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)
        finally:
            heuristics.choose_config.cache_clear()
    with mock.patch.object(gemm_impl, "resolve_config", lambda config, a3, c3, b3=None: (main, "probe")), \
            mock.patch.object(heuristics, "tail_split_columns", lambda *args: n1), \
            mock.patch.object(heuristics, "TAIL", tail or heuristics.TAIL):
        return gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)


def variants(M, N, sms, alone=False, heuristics_only=False):
    out = [("heuristics", None, None, 0), ("heuristics without wide tiles", "no wide", None, 0),
           ("heuristics without medium alone", "no medium", None, 0),
           ("heuristics without the short-K split cost", "no short-K cost", None, 0),
           ("heuristics without 128x256 tiles under 512 rows", "no few-row large", None, 0),
           ("heuristics without 128x160 tiles", "no 160", None, 0),
           ("heuristics without the one-row rule", "no one-row", None, 0)]
    if heuristics_only:
        return out
    for mname, main in TILES.items():
        out.append((f"{mname}", main, None, 0))
        if alone:
            continue
        rows, tiles_n = cdiv(M, main.block_m), cdiv(N, main.block_n)
        waves = rows * tiles_n // sms
        if waves < 1:
            continue
        cols = waves * sms // rows
        if cols >= tiles_n or cols < 1:
            continue
        for tname, tail in TILES.items():
            if tail.block_m * tail.block_n >= main.block_m * main.block_n:
                continue
            n1 = cols * main.block_n
            out.append((f"{mname}+{tname}@{n1}", main, tail, n1))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--alone", action="store_true")
    ap.add_argument("--wide", action="store_true")
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of an (N, K) weight's W.T")
    ap.add_argument("--configs", default="", help="comma-separated config names tried instead of TILES")
    ap.add_argument("--heuristics-only", action="store_true",
                    help="only the heuristics' plan, with each later rule (MOCKS) switched off in turn")
    args = ap.parse_args()
    if args.wide:
        TILES.update({f"WIDE_{c.name}": c for c in WIDE_CANDIDATES})
    if args.configs:
        from warpgemm.candidates import parse_config_list

        TILES.clear()
        TILES.update(parse_config_list(args.configs))
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    result = {"environment": environment(), "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        b = w.t().contiguous() if args.nn else w.t()  # --nn: B (K, N) row-major, as torch.matmul(a, b) users have it
        a3, b3 = a.unsqueeze(0), b.unsqueeze(0)
        fns, errs, names = {"cublas": lambda: torch.matmul(a, b)}, {}, {}
        for name, main_cfg, tail, n1 in variants(M, N, sms, args.alone, args.heuristics_only):
            c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            c3 = c.unsqueeze(0)
            p = plan(a3, b3, c3, main_cfg, tail, n1)
            p.launch.launch(a3, b3, c3, None)
            errs[name] = rel_error(c, ref)
            split = getattr(p.launch, "n1", 0)  # a column split the heuristics chose (ColumnSplitLaunch)
            names[name] = p.config.name + (f"+{p.launch.tail.cfg.name}@{split}" if split else "")
            fns[name] = (lambda p, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(p, c3)
        times = rounds_ms(fns, args.rounds, 80)
        med = {k: statistics.median(v) for k, v in times.items()}
        for k in fns:
            if k == "cublas":
                continue
            row = {"shape": shape, "variant": k, "config": names[k], "ms": med[k], "ms_cublas": med["cublas"],
                   "ratio": med["cublas"] / med[k], "rounds_ms": times[k], "rel_error": errs[k]}
            result["rows"].append(row)
            print(f"{shape:>16} {k:>24} {med[k] * 1e3:8.1f} us ratio {row['ratio']:.3f} err {errs[k]:.1e}",
                  flush=True)
        del a, w, b, ref
    bad = [r for r in result["rows"] if not r["rel_error"] < 1e-2]
    result["ok"] = not bad
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    print("best per shape:")
    for shape in args.shapes.split(","):
        rows = [r for r in result["rows"] if r["shape"] == shape]
        h = next(r for r in rows if r["variant"] == "heuristics")
        b = max(rows, key=lambda r: r["ratio"])
        print(f"{shape:>16} heuristics {h['ratio']:.3f} ({h['config']})  best {b['ratio']:.3f} {b['variant']}")
    if bad:
        raise SystemExit(f"{len(bad)} variants wrong: {[(r['shape'], r['variant']) for r in bad]}")


if __name__ == "__main__":
    main()
