"""Probe: when does each persistent program start, finish each tile and end? Would tiles handed out by a device
counter (dynamic scheduling) finish the kernel sooner than the static p, p + P, ... walk?

    git apply scripts/tile_timeline_probe.diff      # instruments partitions.wgmma_consumer (probe only)
    PYTHONPATH=. python3 scripts/tile_timeline_probe.py OUT.json [MxNxK ...]
    PROBE_STREAM_K=1 ...                             # the heuristics' tile forced to stream-K

With scripts/stream_k_tail_hybrid.diff applied too, stream-K covers only the last, partly filled wave.

The patch makes consumer 0 of every program write %globaltimer_lo at its start, after each unit's store is issued
and after its last store drained, with its %smid and unit count, into 64 floats per program of the partials
argument, past the two stream-K partial tiles per program (this script sizes the buffer so). Each call runs after
an L2 flush, as do_bench times.

Reading (session 27): a static walk gives every program the same number of tiles, so the kernel lasts as long as
its slowest program; if programs run at unequal speeds (their SM's place on the L2 fabric, their GPC's load), a
counter would let the fast ones take more tiles. The simulation takes each program's measured mean tile time and
replays the same tiles both ways: static (the measured walk) and greedy (each tile to the program free first,
over every SM). Its ratio is the most such a scheduler could gain, before the counter's own cost.
"""
import dataclasses
import json
import math
import os
import sys

import torch

import warpgemm
from warpgemm.kernels.hopper import scratch
from warpgemm.ops.gemm_impl import resolve_config

SLOTS = 64
DEFAULT = ["8192x8192x8192", "4096x4096x4096", "2048x2048x2048", "16384x4096x14336", "4096x14336x4096",
           "16384x8192x8192", "1024x4096x4096", "512x14336x4096", "512x4096x4096", "256x8192x8192",
           "128x14336x4096", "512x28672x8192"]


def weight_product(M: int, N: int, K: int):
    """(x, W, the heuristics' GemmConfig) of x @ W.T with random bf16 operands (seed 0), W an (N, K) weight."""
    torch.manual_seed(0)
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    cfg, _ = resolve_config(None, a.unsqueeze(0), torch.empty(1, M, N, device="meta", dtype=a.dtype), w.T.unsqueeze(0))
    return a, w, cfg


def _signed(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= (1 << 31) else x


def find_records(whole: torch.Tensor, tile: int, sms: int) -> torch.Tensor:
    """The records of a launch of G programs start at 2 * G * tile floats (past its stream-K partials): the largest G
    whose records all carry start and end times (above the true G the buffer is still NaN)."""
    for grid in range(sms, 0, -1):
        recs = whole[2 * grid * tile:2 * grid * tile + grid * SLOTS].view(grid, SLOTS)
        if not (torch.isnan(recs[:, 0]).any() or torch.isnan(recs[:, 63]).any()):
            return recs
    raise RuntimeError("no program records: is scripts/tile_timeline_probe.diff applied?")


def read_programs(recs: torch.Tensor) -> list[dict]:
    raw = recs.contiguous().view(torch.int32).cpu().tolist()
    missing = torch.isnan(recs).cpu().tolist()
    t0 = raw[0][0]
    progs = []
    for p, (row, gone) in enumerate(zip(raw, missing)):
        n = row[2]
        # With two ping-pong consumers only consumer 0's units (every other one) have an end time.
        ends = [_signed(v - t0) for v, m in zip(row[3:3 + min(n, 60)], gone[3:3 + min(n, 60)]) if not m]
        progs.append({"p": p, "smid": row[1], "units": n, "start": _signed(row[0] - t0), "ends": ends,
                      "final": _signed(row[63] - t0)})
    return progs


def simulate(progs: list[dict], sms: int) -> dict:
    """Static against greedy assignment of the same tiles, with each program's measured mean tile time."""
    rates = []
    for g in progs:
        last = g["ends"][-1] if g["ends"] else g["final"]
        rates.append((last - g["start"]) / max(g["units"], 1))
    starts = [g["start"] for g in progs]
    tail = sum(g["final"] - (g["ends"][-1] if g["ends"] else g["final"]) for g in progs) / len(progs)
    static = max(s + g["units"] * r for s, g, r in zip(starts, progs, rates)) + tail
    tiles = sum(g["units"] for g in progs)
    mean_rate = sum(rates) / len(rates)
    # Extra SMs (a balanced grid launched fewer programs than SMs) join at the mean rate and the mean start.
    free = list(starts) + [sum(starts) / len(starts)] * max(0, sms - len(progs))
    rate = list(rates) + [mean_rate] * max(0, sms - len(progs))
    for _ in range(tiles):
        j = min(range(len(free)), key=free.__getitem__)
        free[j] += rate[j]
    greedy = max(free) + tail
    span = max(g["final"] for g in progs) - min(starts)
    idle = sum(max(g["final"] for g in progs) - g["final"] for g in progs) / (len(progs) * span)
    lo, hi = min(rates), max(rates)
    sd = math.sqrt(sum((r - mean_rate) ** 2 for r in rates) / len(rates))
    return {"span_ns": span, "static_sim_ns": static, "greedy_sim_ns": greedy, "gain": static / greedy,
            "end_idle_frac": idle, "tile_ns_mean": mean_rate, "tile_ns_min": lo, "tile_ns_max": hi,
            "tile_ns_cv": sd / mean_rate, "start_spread_ns": max(starts) - min(starts)}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tile_timeline.json"
    shapes = [tuple(int(v) for v in s.split("x")) for s in (sys.argv[2:] or DEFAULT)]
    dev = torch.cuda.current_device()
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    stream_k = os.environ.get("PROBE_STREAM_K") == "1"
    tile_elems = 128 * 256  # the largest tile: every launch's records start past 2 * grid of its partials
    whole = torch.empty(2 * sms * tile_elems + sms * SLOTS, dtype=torch.float32, device="cuda")
    semaphores = torch.zeros(1 << 16, dtype=torch.int32, device="cuda")
    scratch._DUMMY[dev] = (whole, semaphores)
    scratch._BY_STREAM[(dev, torch.cuda.current_stream().cuda_stream)] = (whole, semaphores)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda")
    report = {"device": torch.cuda.get_device_name(), "sms": sms, "shapes": []}
    print(f"{'shape':>18} {'config':>26} {'grid':>4} {'us':>8} {'gain':>6} {'idle':>6} {'cv':>6} "
          f"{'tmin/tmax':>10} {'start':>6}")
    for M, N, K in shapes:
        a, w, cfg = weight_product(M, N, K)
        tile = cfg.block_m * cfg.block_n
        cfg = dataclasses.replace(cfg, stream_k=True) if stream_k else None
        plan = warpgemm.explain(a, w.T, config=cfg)
        for _ in range(3):
            warpgemm.matmul(a, w.T, config=cfg)
        reps = []
        for _ in range(12):
            flush.zero_()
            whole.fill_(float("nan"))
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            warpgemm.matmul(a, w.T, config=cfg)
            e1.record()
            torch.cuda.synchronize()
            progs = read_programs(find_records(whole, tile, sms))
            grid = len(progs)
            sim = simulate(progs, sms)
            sim["event_us"] = e0.elapsed_time(e1) * 1e3
            reps.append({"sim": sim, "programs": progs})
        med = sorted(reps, key=lambda r: r["sim"]["span_ns"])[len(reps) // 2]["sim"]
        gains = sorted(r["sim"]["gain"] for r in reps)
        cfg = str(plan).split("config=")[-1][:26] if "config=" in str(plan) else str(plan)[:26]
        print(f"{M}x{N}x{K:>6} {cfg:>26} {grid:>4} {med['span_ns'] / 1e3:8.1f} {gains[len(gains) // 2]:6.3f} "
              f"{med['end_idle_frac']:6.3f} {med['tile_ns_cv']:6.3f} "
              f"{med['tile_ns_min'] / med['tile_ns_max']:10.3f} {med['start_spread_ns'] / 1e3:6.2f}", flush=True)
        mid = sorted(range(len(reps)), key=lambda r: reps[r]["sim"]["span_ns"])[len(reps) // 2]
        report["shapes"].append({"shape": f"{M}x{N}x{K}", "plan": str(plan), "grid": grid, "stream_k": stream_k,
                                 "median_gain": gains[len(gains) // 2], "sims": [r["sim"] for r in reps],
                                 "median_programs": reps[mid]["programs"]})
    with open(out, "w") as f:
        json.dump(report, f)


if __name__ == "__main__":
    main()
