"""Does the way the L2 is cleared before each timed call change the ratios of `bench mid` and `bench moe`?

triton's do_bench clears the L2 by zeroing a 256 MB buffer before every repetition, which leaves the L2 full of
dirty lines: the timed call then pays for writing them back while it streams its own operands. Three methods, each
with ours and torch alternating over rounds in the same process:
  zero   triton.testing.do_bench (what `bench mid` and `bench moe` use)
  read   the same loop, but the 256 MB buffer is read (summed), so the L2 holds clean lines when the call starts
  graph  CUDA-graph replay of one call per cold copy of the weight, as `bench decode` times (copies overflow L2)
Usage: python scripts/flush_probe.py OUT.json [rounds] [MxNxK,...]
Given shapes, those (B = W.T) replace the `mid` shapes and the MoE cases.
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.decode_bench import weight_copies
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.moe_bench import routing
from warpgemm.bench.suites import LLM_NK
from warpgemm.bench.timing import bench_graph_ms, bench_ms, warm_gpu

FLUSH = torch.empty(256 * 2**20 // 4, dtype=torch.int32, device="cuda")
FLUSH_SUM = torch.empty((), dtype=torch.int64, device="cuda")


def read_flushed_ms(fn, rep_ms: int = 100) -> float:
    """do_bench's loop with a read in place of the zeroing write: median of single calls timed by events."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        torch.sum(FLUSH, 0, out=FLUSH_SUM)
        fn()
    end.record()
    torch.cuda.synchronize()
    reps = max(10, int(rep_ms / (start.elapsed_time(end) / 5)))
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(reps)]
    for s, e in events:
        torch.sum(FLUSH, 0, out=FLUSH_SUM)
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in events)


def graph_ms(fns, per_call: int) -> float:
    return bench_graph_ms(lambda: [f() for f in fns], 100) / per_call


def time_pair(ours, theirs, ours_rot, theirs_rot, copies, rounds):
    """{method: (ms ours, ms theirs)} medians over alternating rounds."""
    out = {}
    for method in ("zero", "read", "graph"):
        ta, tb = [], []
        for r in range(rounds):
            pair = [(ours, ours_rot, ta), (theirs, theirs_rot, tb)]
            for fn, rot, acc in (pair if r % 2 == 0 else pair[::-1]):
                if method == "zero":
                    acc.append(bench_ms(fn))
                elif method == "read":
                    acc.append(read_flushed_ms(fn))
                else:
                    acc.append(graph_ms(rot, copies))
        out[method] = (statistics.median(ta), statistics.median(tb))
    return out


def main():
    out_path = sys.argv[1]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    warm_gpu(3.0)
    rows = []
    cases = [(m, n, k) for m in (128, 256) for n, k in LLM_NK] + [(2048, 2048, 2048), (1024, 4096, 4096)]
    if len(sys.argv) > 3:
        cases = [tuple(int(v) for v in s.split("x")) for s in sys.argv[3].split(",")]
    for m, n, k in cases:
        copies = weight_copies(n * k * 2)
        ws = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        res = time_pair(lambda: warpgemm.matmul(x, ws[0].T), lambda: torch.matmul(x, ws[0].T),
                        [lambda w=w: warpgemm.matmul(x, w.T) for w in ws],
                        [lambda w=w: torch.matmul(x, w.T) for w in ws], copies, rounds)
        rows.append({"case": f"{m}x{n}x{k}", "bytes": (n * k + m * k + m * n) * 2, **{
            f"{meth}_ms": list(v) for meth, v in res.items()}})
        del ws
        torch.cuda.empty_cache()
        _print(rows[-1])
    for e, t, k, n in [(32, 512, 4096, 1536)] if len(sys.argv) <= 3 else []:
        a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(e, n, k, device="cuda", dtype=torch.bfloat16)
        b = w.transpose(1, 2)
        for kind in ("skewed", "uniform", "empty"):
            offs = torch.tensor(routing(e, t, kind), device="cuda").cumsum(0).to(torch.int32)
            ours = lambda: warpgemm.grouped_mm(a, b, offs)  # noqa: E731
            theirs = lambda: torch._grouped_mm(a, b, offs)  # noqa: E731
            res = time_pair(ours, theirs, [ours], [theirs], 1, rounds)
            rows.append({"case": f"E{e} T{t} K{k} N{n} {kind}", "bytes": (w.numel() + a.numel() + t * n) * 2,
                         **{f"{meth}_ms": list(v) for meth, v in res.items()}})
            _print(rows[-1])
    json.dump({"probe": "flush", "environment": environment(), "rounds": rounds, "results": rows},
              open(out_path, "w"), indent=1)


def _print(row):
    cells = []
    for meth in ("zero", "read", "graph"):
        ours, theirs = row[f"{meth}_ms"]
        cells.append(f"{meth} {row['bytes'] / ours / 1e9:.2f}/{row['bytes'] / theirs / 1e9:.2f} TB/s "
                     f"{theirs / ours:.3f}x")
    print(f"{row['case']:>28}  " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
