"""What read bandwidth can any kernel reach on a decode-sized weight, timed the way `bench decode` times?

Each weight size of the decode suite is read by (1) a plain streaming kernel that sums the weight (the read
ceiling: vector loads, no tensor cores, several grid sizes), (2) a CUDA-core GEMV (y = W x for one row of x),
(3) warpgemm.linear and (4) F.linear, all as CUDA-graph replays of one call per cold weight copy (the copies
overflow L2 twice over, as in the suite), alternating rounds. Prints TB/s per kernel and size; JSON to argv[1].
"""
import json
import sys

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

from warpgemm.bench.decode_bench import linear_loops, weight_copies
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import graph_rounds_us, warm_gpu


@triton.jit
def stream_sum_kernel(w_ptr, out_ptr, numel, BLOCK: tl.constexpr):
    # Persistent: program p reads chunks p, p + P, ... (each BLOCK contiguous elements) and stores one sum.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, numel, nprog * BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(w_ptr + offs, mask=offs < numel, other=0.0).to(tl.float32)
    tl.store(out_ptr + pid, tl.sum(acc, 0))


@triton.jit
def gemv_kernel(w_ptr, x_ptr, y_ptr, N, K, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per BLOCK_N weight rows, the whole K: y[n] = sum_k W[n, k] x[k], fp32 accumulation.
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        cols = k0 + tl.arange(0, BLOCK_K)
        w = tl.load(w_ptr + rows[:, None] * K + cols[None, :], mask=(rows[:, None] < N) & (cols[None, :] < K),
                    other=0.0)
        x = tl.load(x_ptr + cols, mask=cols < K, other=0.0)
        acc += w.to(tl.float32) * x.to(tl.float32)[None, :]
    tl.store(y_ptr + rows, tl.sum(acc, 1).to(y_ptr.dtype.element_ty), mask=rows < N)


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "read_ceiling.json"
    shapes = [(4096, 4096), (14336, 4096), (8192, 8192), (28672, 8192)]
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    warm_gpu(2.0)
    rows = []
    for n, k in shapes:
        copies = weight_copies(n * k * 2)
        weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        x = torch.randn(1, k, device="cuda", dtype=torch.bfloat16)
        y = torch.empty(n, device="cuda", dtype=torch.bfloat16)
        sums = torch.empty(64 * sms, device="cuda", dtype=torch.float32)
        ref = F.linear(x.float(), weights[-1].float())  # run() leaves y for the last copy
        kernels = {}
        for grid_mult in (1, 2, 4, 8):
            for block in (4096, 8192):
                for warps in (4, 8):
                    def run(g=grid_mult * sms, b=block, nw=warps):
                        for w in weights:
                            stream_sum_kernel[(g, )](w, sums, w.numel(), BLOCK=b, num_warps=nw)
                    kernels[f"stream g{grid_mult}x b{block} w{warps}"] = run
        for bn in (4, 8, 16):
            for bk in (256, 512, 1024):
                def run(bn=bn, bk=bk):
                    for w in weights:
                        gemv_kernel[(triton.cdiv(n, bn), )](w, x, y, n, k, BLOCK_N=bn, BLOCK_K=bk, num_warps=4)
                kernels[f"gemv n{bn} k{bk}"] = run
                run()
                err = ((y.float() - ref[0]).norm() / ref[0].norm()).item()
                assert err < 1e-2, (n, k, bn, bk, err)

        ours, theirs = linear_loops(x, weights)
        kernels["warpgemm.linear"] = ours
        kernels["F.linear"] = theirs
        nbytes = n * k * 2
        times = graph_rounds_us(kernels, per_call=copies)
        for name, ts in times.items():
            us = min(ts)
            rows.append({"N": n, "K": k, "weight_mb": nbytes / 2**20, "kernel": name, "us": us,
                         "rounds_us": ts, "tbs": nbytes / (us * 1e-6) / 1e12})
        del weights
        torch.cuda.empty_cache()
    json.dump({"probe": "read_ceiling", "environment": environment(), "results": rows}, open(out_path, "w"),
              indent=1)
    for n, k in shapes:
        sel = [r for r in rows if r["N"] == n and r["K"] == k]
        best_stream = max((r for r in sel if r["kernel"].startswith("stream")), key=lambda r: r["tbs"])
        best_gemv = max((r for r in sel if r["kernel"].startswith("gemv")), key=lambda r: r["tbs"])
        named = {r["kernel"]: r for r in sel}
        print(f"{n}x{k} ({n * k * 2 / 2**20:.0f} MB): best stream {best_stream['tbs']:.3f} TB/s "
              f"({best_stream['kernel']}, {best_stream['us']:.2f} us)  best gemv {best_gemv['tbs']:.3f} "
              f"({best_gemv['kernel']})  warpgemm {named['warpgemm.linear']['tbs']:.3f}  "
              f"F.linear {named['F.linear']['tbs']:.3f}")


if __name__ == "__main__":
    main()
