"""Does warp specialization itself cost a short GEMM its fixed time? (session 23 probe, notes/perf.md)

After session 22, a 256^3 product still ran 2.9-3.0 us against cuBLAS's 2.5 with the tile the heuristics choose,
and every tile tried trailed by about 0.4 us. Triton's warp_specialize adds, per program, CTA-wide barriers and
register reallocation at the partitions' start and end. This probe times a GEMM written without partitions (one
warpgroup issues the TMA loads S steps ahead and the wgmma, then stores through TMA; one tile per program), the
same body run as the default partition of a warp_specialize with an idle one-warp worker, the heuristics' plan,
and cuBLAS, with fixed_cost_probe's CUPTI timing over a CUDA graph.

    python scripts/one_partition_probe.py OUT.json [--shapes MxNxK,...] [--tiles 64x64x64_s4,...]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fixed_cost_probe import time_variants  # noqa: E402

from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402
from warpgemm.ops import gemm_impl  # noqa: E402
from warpgemm.testing import probe_operands, write_probe_result  # noqa: E402

SHAPES = "64x64x64,256x256x256,512x512x512,1024x1024x1024,2048x2048x512,128x4096x4096,16x4096x4096"


@gluon.jit
def _one_tile(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, c_smem, STAGES: gl.constexpr):
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[0]
    pid = gl.program_id(0)
    tiles_n = gl.cdiv(c_desc.shape[1], BN)
    off_m = (pid // tiles_n) * BM
    off_n = (pid % tiles_n) * BN
    k_steps = gl.cdiv(a_desc.shape[1], BK)
    nbytes: gl.constexpr = a_desc.block_type.nbytes + b_desc.block_type.nbytes
    for i in gl.static_range(STAGES):
        pred = i < k_steps
        mbarrier.expect(ready.index(i), nbytes, pred=pred)
        tma.async_copy_global_to_shared(a_desc, [off_m, i * BK], ready.index(i), a_bufs.index(i), pred=pred)
        tma.async_copy_global_to_shared(b_desc, [off_n, i * BK], ready.index(i), b_bufs.index(i), pred=pred)
    layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[gl.num_warps(), 1],
                                                     instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, layout)
    for k in range(k_steps):
        s = k % STAGES
        mbarrier.wait(ready.index(s), (k // STAGES) & 1)
        acc = warpgroup_mma(a_bufs.index(s), b_bufs.index(s).permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=(acc,))
        # Step k-1's wgmma has retired: its slot takes step k-1+STAGES.
        nk = k - 1 + STAGES
        ps = (k + STAGES - 1) % STAGES
        pred = (k >= 1) & (nk < k_steps)
        mbarrier.expect(ready.index(ps), nbytes, pred=pred)
        tma.async_copy_global_to_shared(a_desc, [off_m, nk * BK], ready.index(ps), a_bufs.index(ps), pred=pred)
        tma.async_copy_global_to_shared(b_desc, [off_n, nk * BK], ready.index(ps), b_bufs.index(ps), pred=pred)
    acc = warpgroup_mma_wait(0, deps=(acc,))
    c_smem.store(acc.to(c_desc.dtype))
    fence_async_shared()
    tma.async_copy_shared_to_global(c_desc, [off_m, off_n], c_smem)
    tma.store_wait(0)


@gluon.jit
def _idle(ready):
    pass


@gluon.jit
def one_partition_gemm(a_desc, b_desc, c_desc, STAGES: gl.constexpr, WS: gl.constexpr, num_warps: gl.constexpr):
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [STAGES] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [STAGES] + b_desc.block_type.shape, b_desc.layout)
    c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
    if WS:
        gl.warp_specialize([(_one_tile, (a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, c_smem, STAGES)),
                            (_idle, (ready,))], [1], [24])
    else:
        _one_tile(a_desc, b_desc, c_desc, a_bufs, b_bufs, ready, c_smem, STAGES)


def parse_tile(text):
    dims, stages = text.split("_s")
    bm, bn, bk = (int(x) for x in dims.split("x"))
    return bm, bn, bk, int(stages)


def launcher(a, w, c, tile, ws):
    bm, bn, bk, stages = tile
    lay = lambda shape: gl.NVMMASharedLayout.get_default_for(shape, gl.bfloat16)  # noqa: E731
    a_desc = TensorDescriptor.from_tensor(a, [bm, bk], lay([bm, bk]))
    b_desc = TensorDescriptor.from_tensor(w, [bn, bk], lay([bn, bk]))
    c_desc = TensorDescriptor.from_tensor(c, [bm, bn], lay([bm, bn]))
    grid = (triton.cdiv(a.shape[0], bm) * triton.cdiv(w.shape[0], bn),)
    warps = 4 if bm <= 64 else 8
    return lambda: one_partition_gemm[grid](a_desc, b_desc, c_desc, stages, ws, num_warps=warps)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default=SHAPES)
    ap.add_argument("--tiles", default="64x64x64_s4,128x128x64_s4")
    ap.add_argument("--calls", type=int, default=40)
    args = ap.parse_args()
    result = {"environment": environment(), "rows": []}
    warm_gpu(1.0)
    print(f"{'shape':>16} {'variant':>30} {'kernel us':>9} {'spacing us':>10}")
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        fns = {"cublas": lambda: torch.matmul(a, w.t(), out=c)}
        gemm_impl._PLANS.clear()
        a3, b3, c3 = a.unsqueeze(0), w.t().unsqueeze(0), c.unsqueeze(0)
        p = gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)
        fns[f"ours {p.config.name}"] = lambda: p.launch.launch(a3, b3, c3, None)
        for text in args.tiles.split(","):
            tile = parse_tile(text)
            for ws in (False, True):
                fns[f"{'ws ' if ws else 'flat '}{text}"] = launcher(a, w, c, tile, ws)
        time_variants(result, shape, fns, c, ref, args.calls)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
