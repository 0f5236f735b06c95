"""What rows that start off 32-byte sectors cost, and which tiles pay least (bf16 with K = 8 mod 16).

For each shape (B = W.T of an (N, K) weight; with --nn a (K, N) row-major B) the heuristics' plan, and each config of
--configs forced, run on the operands as allocated and on the same logical tensors as views into rows padded to 128
bytes (what TMA reads at full speed; the copy that would cost is not timed), timed against torch.matmul in alternating
rounds and checked against an fp32 product. --split adds the heuristics with only A's and only B's rows padded,
--rule-off the heuristics without the off-sector rules (cluster pairs, no 128x128 tiles alone); --random N draws shapes;
--via-matmul times whole warpgemm.matmul calls (with any per-call copy a forced config needs).

    python scripts/off_sector_probe.py OUT.json [--shapes MxNxK,...] [--rounds R] [--nn] [--configs a,b]
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import math
import random
from unittest import mock

import torch

import warpgemm
from warpgemm import heuristics
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.candidates import parse_config_list
from warpgemm.ops import gemm_impl
from warpgemm.testing import add_probe_rows, padded_rows, probe_operands, rel_error, write_probe_result

SHAPES = ("1099x8568x1704,1682x10688x1752,688x7880x7512,1357x16552x2424,4096x4096x4104,1000x1000x1000,"
          "2048x2048x2056,512x14336x4104,128x8192x8200,16x4096x4104,64x14336x4104")


RULES = ("off_sector.OFF_SECTOR_CLUSTERS", "OFF_SECTOR_NO_MEDIUM")


def plan(a3, b3, c3, config=None, rule=True, rules=RULES):
    """The heuristics' plan (or `config`'s); rule=False: with the heuristics' flags `rules` off (by default all the
    off-sector rules: off_sector.off_sector_config's cluster pairs and OFF_SECTOR_NO_MEDIUM)."""
    gemm_impl._PLANS.clear()
    heuristics.choose_config.cache_clear()
    try:
        with contextlib.ExitStack() as stack:
            for flag in rules if not rule else ():  # rule on: the heuristics as shipped
                # A flag of heuristics, or "module.FLAG" of another warpgemm module (one_partition_rule.ONE_...).
                module, _, name = flag.rpartition(".")
                owner = importlib.import_module(f"warpgemm.{module}") if module else heuristics
                stack.enter_context(mock.patch.object(owner, name, False))
            return gemm_impl.plan_hopper(a3, b3, c3, None, config, may_tune=False)
    finally:
        heuristics.choose_config.cache_clear()


def random_shapes(count, seed):
    """Log-uniform M 65-4096, N 1024-32768 (multiples of 8), K 1024-8192 moved to 8 mod 16 (rows off sectors)."""
    rng = random.Random(seed)
    lu = lambda lo, hi: int(math.exp(rng.uniform(math.log(lo), math.log(hi))))  # noqa: E731
    return [f"{lu(65, 4096)}x{lu(1024, 32768) // 8 * 8}x{lu(1024, 8192) // 16 * 16 + 8}" for _ in range(count)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--nn", action="store_true", help="B row-major (K, N) instead of an (N, K) weight's W.T")
    ap.add_argument("--configs", default="", help="comma-separated config names, each forced on both layouts")
    ap.add_argument("--no-padded", action="store_true", help="only the operands as allocated")
    ap.add_argument("--split", action="store_true", help="also the heuristics with only A, only B padded")
    ap.add_argument("--rule-off", nargs="?", const=",".join(RULES), default="",
                    help="also the heuristics with these flags off (comma-separated names in heuristics, or "
                         "module.NAME in another warpgemm module; default all off-sector rules)")
    ap.add_argument("--random", type=int, default=0, help="this many random shapes (random_shapes) instead")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--transposed", action="store_true",
                    help="also C = (B^T A^T)^T through warpgemm.matmul, with the copy of C^T into C timed")
    ap.add_argument("--via-matmul", action="store_true",
                    help="time warpgemm.matmul(config=...) calls, so per-call copies count (not with --rule-off)")
    args = ap.parse_args()
    if args.via_matmul and args.rule_off:
        raise SystemExit("--via-matmul times cached plans: the rule cannot be switched off per call")
    configs = {"heuristics": None, **(parse_config_list(args.configs) if args.configs else {})}
    shapes = random_shapes(args.random, args.seed) if args.random else args.shapes.split(",")
    result = {"environment": environment(), "nn": args.nn, "rows": []}
    warm_gpu(2.0)
    print(f"{'shape':>16} {'variant':>36} {'us':>8} {'vs cuBLAS':>9}  config")
    for shape in shapes:
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        b = w.t().contiguous() if args.nn else w.t()
        layouts = {"": (a, b)}
        if not args.no_padded:
            a_pad, b_pad = padded_rows(a), padded_rows(b) if args.nn else padded_rows(w).t()
            layouts[" padded"] = (a_pad, b_pad)
            if args.split:
                layouts.update({" A padded": (a_pad, b), " B padded": (a, b_pad)})
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fns, errs, names = {"cublas": lambda: torch.matmul(a, b)}, {}, {}
        runs = [(cname + lname, cfg, x, y, True) for cname, cfg in configs.items() for lname, (x, y) in layouts.items()
                if cfg is None or lname in ("", " padded")]
        if args.rule_off:
            off = ("the off-sector rules" if args.rule_off == ",".join(RULES) else args.rule_off.split(".")[-1])
            runs.append((f"heuristics without {off}", None, a, b, False))
        rules = args.rule_off.split(",") if args.rule_off else RULES
        for name, cfg, x, y, rule in runs:
            a3, b3, c3 = x.unsqueeze(0), y.unsqueeze(0), c.unsqueeze(0)
            p = plan(a3, b3, c3, cfg, rule, rules)
            c.fill_(float("nan"))
            if args.via_matmul:
                warpgemm.matmul(x, y, out=c, config=cfg)
            else:
                p.launch.launch(a3, b3, c3, None)
            errs[name] = rel_error(c, ref)
            split = getattr(p.launch, "n1", 0)
            names[name] = p.config.name + (f"+{p.launch.tail.cfg.name}@{split}" if split else "")
            if args.via_matmul:
                fns[name] = (lambda x, y, cfg: (lambda: warpgemm.matmul(x, y, out=c, config=cfg)))(x, y, cfg)
            else:
                fns[name] = (lambda p, a3, b3, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(p, a3, b3, c3)
        if args.transposed:
            # C = (B^T A^T)^T: the kernel reads A^T as a K-major B (a pair can take it) and C^T is copied into C.
            ct = torch.empty(N, M, device="cuda", dtype=torch.bfloat16)
            plan_t = plan(b.t().unsqueeze(0), a.t().unsqueeze(0), ct.unsqueeze(0))

            def transposed():
                warpgemm.matmul(b.t(), a.t(), out=ct)
                c.copy_(ct.t())

            c.fill_(float("nan"))
            transposed()
            errs["transposed problem"] = rel_error(c, ref)
            names["transposed problem"] = plan_t.config.name + " (+ copy of C)"
            fns["transposed problem"] = transposed
        add_probe_rows(result, shape, rounds_ms(fns, args.rounds, 60), errs, names)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
