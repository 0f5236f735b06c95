"""Where a short GEMM's time goes: the kernel's own duration against the spacing of back-to-back launches.

Small products (256^3-1024^3) and the 32 MB decode weight run 0.5-1 us longer than cuBLAS per call, whatever the
tile. For each shape and each variant (cuBLAS through torch.matmul; the heuristics' plan; --configs forced), a CUDA
graph of --calls back-to-back calls is replayed under torch.profiler (CUPTI activity records). Reported per variant:
the median duration of its GEMM kernel(s), and the median start-to-start spacing of consecutive calls in the graph
(duration + the gap the hardware leaves between two kernels). Checked against an fp32 product.

    python scripts/fixed_cost_probe.py OUT.json [--shapes MxNxK,...] [--configs a,b] [--calls 40] [--flat]
"""
from __future__ import annotations

import argparse
import statistics

import torch
from torch.profiler import ProfilerActivity, profile

from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import warm_gpu
from warpgemm.candidates import parse_config_list
from warpgemm.config import check_config
from warpgemm.ops import gemm_impl
from warpgemm.testing import probe_operands, rel_error, write_probe_result

SHAPES = "64x64x64,256x256x256,512x512x512,1024x1024x1024,128x4096x4096,16x4096x4096"


def kernel_events(fn, calls: int):
    """(name, start us, duration us) of every GPU kernel in a graph of `calls` calls of fn, replayed once under the
    profiler after a warm replay."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            fn()
    graph.replay()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    events = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    return sorted(((e.name, e.time_range.start, e.time_range.end - e.time_range.start) for e in events),
                  key=lambda t: t[1])


def summarize(events):
    gemms = [e for e in events if "memset" not in e[0].lower() and "memcpy" not in e[0].lower()]
    starts = [s for _, s, _ in gemms]
    spacing = [b - a for a, b in zip(starts, starts[1:])]
    names = sorted({n for n, _, _ in gemms})
    return {"kernels": names, "duration_us": statistics.median(d for _, _, d in gemms),
            "spacing_us": statistics.median(spacing) if spacing else float("nan"), "count": len(gemms)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--configs", default="")
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--flat", action="store_true",
                    help="also time the heuristics' config in one partition (warp_specialize=False)")
    args = ap.parse_args()
    configs = {"heuristics": None, **(parse_config_list(args.configs) if args.configs else {})}
    result = {"environment": environment(), "rows": []}
    warm_gpu(1.0)
    print(f"{'shape':>16} {'variant':>30} {'kernel us':>9} {'spacing us':>10}  kernels")
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        b = w.t()
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fns = {"cublas": (lambda: torch.matmul(a, b, out=c)), }
        for name, cfg in configs.items():
            gemm_impl._PLANS.clear()
            a3, b3, c3 = a.unsqueeze(0), b.unsqueeze(0), c.unsqueeze(0)
            p = gemm_impl.plan_hopper(a3, b3, c3, None, cfg, may_tune=False)
            fns[name] = (lambda p, a3, b3, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(p, a3, b3, c3)
            if name == "heuristics" and args.flat and check_config(p.config.replace(warp_specialize=False),
                                                                     a.dtype, c.dtype) is None:
                flat = gemm_impl.plan_hopper(a3, b3, c3, None, p.config.replace(warp_specialize=False),
                                             may_tune=False)
                fns["heuristics flat"] = (lambda p, a3, b3, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(
                    flat, a3, b3, c3)
        time_variants(result, shape, fns, c, ref, args.calls)
    write_probe_result(args.json, result)


def time_variants(result: dict, shape: str, fns: dict, c: torch.Tensor, ref: torch.Tensor, calls: int) -> None:
    """Check each variant's product (into NaN-filled c) and time it; append and print its row."""
    for name, fn in fns.items():
        c.fill_(float("nan"))
        fn()
        err = rel_error(c, ref)
        row = {"shape": shape, "variant": name, "rel_error": err, **summarize(kernel_events(fn, calls))}
        result["rows"].append(row)
        print(f"{shape:>16} {name:>30} {row['duration_us']:9.2f} {row['spacing_us']:10.2f}  "
              f"{','.join(k[:60] for k in row['kernels'])} err {err:.1e}", flush=True)


if __name__ == "__main__":
    main()
