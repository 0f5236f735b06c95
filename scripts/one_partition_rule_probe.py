"""The one-partition rule (warpgemm/one_partition_rule.py) on the shapes it changes: warpgemm.matmul with the rule on
and off (or only its --flag switch), and cuBLAS (torch.matmul), alternating in --rounds rounds, each timed as fixed_cost_probe times a variant
(CUPTI kernel durations and start-to-start spacing over a CUDA graph of --calls calls). Shapes: the fixed list, plus
--random N shapes drawn with --seed (16-bit rows aligned, so each call is one kernel) whose plan the switch changes.

    python scripts/one_partition_rule_probe.py OUT.json [--random 30] [--seed 1] [--rounds 2] [--flag NARROW_HALVES]
--fp8: warpgemm.scaled_mm (per-tensor scales, e4m3, bf16 out) against torch._scaled_mm(use_fast_accum=True), each side
of the rule as the config it resolves to, forced (sizes drawn as multiples of 16, as torch._scaled_mm needs).
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixed_cost_probe import kernel_events, summarize  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm import one_partition_rule  # noqa: E402
from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402
from warpgemm.heuristics import choose_config, choose_fp8_config  # noqa: E402
from warpgemm.ops import gemm_impl  # noqa: E402
from warpgemm.testing import probe_operands, rel_error  # noqa: E402

FIXED = "64x64x64,128x128x128,256x256x256,384x384x384,512x512x512,256x1024x256,1024x512x256,768x768x128,96x2048x512"


E4 = torch.float8_e4m3fn


def rule_config(M, N, K, sms, fp8=False):
    if fp8:
        cfg, _ = choose_fp8_config(M, N, K, torch.bfloat16, sms)
    else:
        cfg, _ = choose_config(1, M, N, K, torch.bfloat16, torch.bfloat16, sms)
    flat = one_partition_rule.one_partition_config(cfg, 1, M, N, K, sms, E4 if fp8 else torch.bfloat16,
                                                   torch.bfloat16)
    return flat[0] if flat else cfg


def fires(M, N, K, sms, flag, fp8=False):
    """Whether switching `flag` off changes the plan of this shape (K-contiguous operands, 16-bit rows aligned)."""
    on = rule_config(M, N, K, sms, fp8)
    setattr(one_partition_rule, flag, False)
    try:
        return rule_config(M, N, K, sms, fp8) != on
    finally:
        setattr(one_partition_rule, flag, True)


def draw(count, seed, sms, flag, fp8=False, max_k=None):
    rng = random.Random(seed)
    shapes = []
    while len(shapes) < count:
        if fp8:  # torch._scaled_mm takes N and K in multiples of 16
            M, N, K = rng.randint(2, 192) * 8, rng.randint(1, 96) * 16, rng.randint(1, (max_k or 1536) // 16) * 16
        else:
            M, N, K = rng.randint(2, 192) * 8, rng.randint(2, 192) * 8, rng.randint(2, (max_k or 768) // 8) * 8
        if fires(M, N, K, sms, flag, fp8):
            shapes.append(f"{M}x{N}x{K}")
    return shapes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=FIXED)
    ap.add_argument("--random", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--flag", default="ONE_PARTITION_ENABLED",
                    help="the one_partition_rule switch that 'off' turns off (NARROW_HALVES: the 64x32 sub-rule)")
    ap.add_argument("--fp8", action="store_true", help="scaled_mm against torch._scaled_mm (see the docstring)")
    ap.add_argument("--max-k", type=int, default=None, help="largest K drawn (default 768; fp8 1536)")
    ap.add_argument("--cold", action="store_true", help="each call of the graph on its own copy of the weight (copies "
                    "overflow the L2, as `bench small` / `bench decode` time), not one hot weight")
    args = ap.parse_args()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    shapes = args.shapes.split(",") + draw(args.random, args.seed, sms, args.flag, args.fp8, args.max_k)
    result = {"environment": environment(), "method": "CUPTI kernel durations (median) and start-to-start spacing "
              f"over a CUDA graph of {args.calls} calls, alternating rounds", "rows": []}
    warm_gpu(1.0)
    print(f"{'shape':>16} {'config on':>34} {'cuBLAS':>7} {'on':>7} {'off':>7} {'on/off':>7} {'cuBLAS/on':>9}")
    for shape in shapes:
        M, N, K = (int(x) for x in shape.split("x"))
        if args.fp8:
            result["rows"].append(fp8_row(shape, M, N, K, sms, args))
            continue
        a, w, ref = probe_operands(M, N, K)
        b = w.t()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        bs, calls = weight_set(b, args)
        times = {"cublas": [], "on": [], "off": []}
        names = {}
        for _ in range(args.rounds):
            for variant in ("cublas", "on", "off"):
                if variant == "cublas":
                    fn = cycled(lambda bb: torch.matmul(a, bb, out=c), bs)
                else:
                    setattr(one_partition_rule, args.flag, variant == "on")
                    gemm_impl._PLANS.clear()
                    names[variant] = gemm_impl.plan_hopper(a.unsqueeze(0), b.unsqueeze(0), c.unsqueeze(0), None,
                                                           None, may_tune=False).config.name
                    c.fill_(float("nan"))
                    warpgemm.matmul(a, b, out=c)
                    err = rel_error(c, ref)
                    if not err < 1e-2:
                        raise SystemExit(f"{shape} rule {variant}: error {err}")
                    fn = cycled(lambda bb: warpgemm.matmul(a, bb, out=c), bs)
                times[variant].append(summarize(kernel_events(fn, calls)))
        setattr(one_partition_rule, args.flag, True)
        med = {v: statistics.median(t["spacing_us"] for t in ts) for v, ts in times.items()}
        dur = {v: statistics.median(t["duration_us"] for t in ts) for v, ts in times.items()}
        row = {"shape": shape, "config_on": names["on"], "config_off": names["off"], "spacing_us": med,
               "duration_us": dur, "rounds": times, "on_over_off": med["off"] / med["on"],
               "on_over_cublas": med["cublas"] / med["on"]}
        result["rows"].append(row)
        print(f"{shape:>16} {names['on']:>34} {med['cublas']:7.2f} {med['on']:7.2f} {med['off']:7.2f} "
              f"{row['on_over_off']:7.3f} {row['on_over_cublas']:9.3f}", flush=True)
    summarize_rows(result)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)


def weight_set(b, args):
    """[b] and the graph's call count, or with --cold enough copies of b to overflow the L2 and one call per copy."""
    if not args.cold:
        return [b], args.calls
    from warpgemm.bench.decode_bench import weight_copies

    copies = weight_copies(b.numel() * b.element_size())
    return [b] + [b.clone(memory_format=torch.preserve_format) if b.is_contiguous() else b.t().clone().t()
                  for _ in range(copies - 1)], max(args.calls, copies)


def cycled(call, items):
    """fn() that calls call(item) on the next of items each time (captured in a graph: one item per captured call)."""
    state = {"i": 0}

    def fn():
        item = items[state["i"] % len(items)]
        state["i"] += 1
        return call(item)
    return fn


def fp8_row(shape, M, N, K, sms, args) -> dict:
    """One fp8 shape: torch._scaled_mm and scaled_mm on the rule's config and on the config without it (forced)."""
    a16, w16, _ = probe_operands(M, N, K)
    a, w = (a16 * 2).to(E4), (w16 * 2).to(E4)
    sa, sb = torch.tensor(0.5, device="cuda"), torch.tensor(0.25, device="cuda")
    ref = (a.float() @ w.float().T) * 0.125
    on = rule_config(M, N, K, sms, fp8=True)
    setattr(one_partition_rule, args.flag, False)
    off = rule_config(M, N, K, sms, fp8=True)
    setattr(one_partition_rule, args.flag, True)
    ws, calls = weight_set(w.t(), args)
    fns = {"cublas": cycled(lambda b: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True),
                            ws),
           "on": cycled(lambda b: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, config=on), ws),
           "off": cycled(lambda b: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, config=off), ws)}
    for variant, fn in fns.items():
        err = rel_error(fn(), ref)
        if not err < 2e-2:
            raise SystemExit(f"{shape} fp8 {variant}: error {err}")
    times = {v: [] for v in fns}
    for _ in range(args.rounds):
        for variant, fn in fns.items():
            times[variant].append(summarize(kernel_events(fn, calls)))
    med = {v: statistics.median(t["spacing_us"] for t in ts) for v, ts in times.items()}
    dur = {v: statistics.median(t["duration_us"] for t in ts) for v, ts in times.items()}
    row = {"shape": shape, "config_on": on.name, "config_off": off.name, "spacing_us": med, "duration_us": dur,
           "rounds": times, "on_over_off": med["off"] / med["on"], "on_over_cublas": med["cublas"] / med["on"]}
    print(f"{shape:>16} {on.name:>34} {med['cublas']:7.2f} {med['on']:7.2f} {med['off']:7.2f} "
          f"{row['on_over_off']:7.3f} {row['on_over_cublas']:9.3f}", flush=True)
    return row


def summarize_rows(result: dict) -> None:
    changed = [r for r in result["rows"] if r["config_on"] != r["config_off"]]
    for key in ("on_over_off", "on_over_cublas"):
        vals = [r[key] for r in changed]
        result[f"geomean_{key}"] = statistics.geometric_mean(vals) if vals else None
        result[f"min_{key}"] = min(vals) if vals else None
    print(f"{len(changed)} shapes changed: speed-up over the rule off {result['geomean_on_over_off']:.3f} "
          f"(min {result['min_on_over_off']:.3f}); against cuBLAS {result['geomean_on_over_cublas']:.3f} "
          f"(min {result['min_on_over_cublas']:.3f}) [spacing]")


if __name__ == "__main__":
    main()
