"""Gluon CUDA-core GEMVs for 1-16 rows of x (warpgemm's gemv_rows_kernel, and one with a cp.async ring) against
warpgemm.linear (swap-AB wgmma) and F.linear on the decode weights. Question: does the batch-1 GEMV's lead (many short programs the hardware balances over the SMs) carry over
to a few rows once the accumulator no longer grows with the K step (partial sums folded inside each thread)?

    python3 scripts/gemv_rows_probe.py OUT.json [1,2,4,8] [variants as kind:bn:bk:warps:extra,...]
"""
import sys

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from triton.experimental.gluon.language.nvidia.ampere import async_copy as cp

from _decode_probe import run_probe
from warpgemm.kernels.gemv_rows import _row_offsets, gemv_rows_kernel
from warpgemm.kernels.hopper.launch import CachedKernel
from warpgemm.kernels.hopper.partitions import allow_dependents, wait_for_prior_grid

# (kind, weight rows per program, K step, warps, extra): kind "rows" = warpgemm's gemv_rows_kernel (extra: unused),
# "ring" = gemv_ring_kernel (extra: stages). The runs in results/2026-11-23-gemv-rows/ were made with this probe's
# first version, whose own copy of the rows kernel (since replaced by warpgemm's) also had a "pre" variant that
# issued the next step's loads before this step's FMAs: slower on 23 of 24 row/weight pairs, since removed.
VARIANTS = [("rows", 4, 1024, 4, 0), ("ring", 4, 1024, 4, 4), ("ring", 4, 1024, 4, 6), ("ring", 8, 512, 2, 6),
            ("ring", 2, 1024, 4, 6), ("ring", 4, 512, 2, 8)]


@gluon.jit
def gemv_ring_kernel(x_ptr, w_ptr, y_ptr, M, N, K, sxm, swn, sym, M_ROWS: gl.constexpr, BLOCK_N: gl.constexpr,
                     BLOCK_K: gl.constexpr, STAGES: gl.constexpr, num_warps: gl.constexpr):
    # As gemv_rows_kernel, but the weight goes through a cp.async ring in shared memory: the bytes in flight are
    # no longer held in registers. Each thread reads back exactly the 16-byte pieces it copied (same layout), so
    # its own wait_group is all the synchronization a stage needs.
    VEC: gl.constexpr = 8
    CH: gl.constexpr = BLOCK_K // VEC
    L4: gl.constexpr = gl.BlockedLayout(size_per_thread=[M_ROWS, BLOCK_N, 1, VEC], threads_per_warp=[1, 1, 32, 1],
                                        warps_per_cta=[1, 1, num_warps, 1], order=[3, 2, 1, 0])
    LW: gl.constexpr = gl.SliceLayout(0, L4)
    LX: gl.constexpr = gl.SliceLayout(1, L4)
    LA: gl.constexpr = gl.SliceLayout(3, L4)
    LY: gl.constexpr = gl.SliceLayout(2, LA)
    SMEM: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, order=[2, 1, 0])
    allow_dependents()
    wait_for_prior_grid()
    wr = gl.program_id(0) * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, gl.SliceLayout(2, LW)))
    w_off, _ = _row_offsets(gl.where(wr < N, wr, 0), swn, 1, CH, VEC, LW)
    xm = gl.arange(0, M_ROWS, layout=gl.SliceLayout(1, gl.SliceLayout(2, LX)))
    x_off, _ = _row_offsets(xm, sxm, 1, CH, VEC, LX)
    x_mask = gl.expand_dims(gl.expand_dims(xm < M, 1), 2) & (x_off >= 0)
    ring = gl.allocate_shared_memory(w_ptr.dtype.element_ty, [STAGES, BLOCK_N, CH, VEC], SMEM)
    steps = gl.cdiv(K, BLOCK_K)
    for s in gl.static_range(STAGES - 1):
        cp.async_copy_global_to_shared(ring.index(s), w_ptr + w_off + s * BLOCK_K, mask=(w_off >= 0) & (s < steps))
        cp.commit_group()
    acc = gl.zeros([M_ROWS, BLOCK_N, CH], gl.float32, LA)
    for i in range(steps):
        cp.wait_group(STAGES - 2)
        w = ring.index(i % STAGES).load(LW)
        nxt = i + STAGES - 1
        cp.async_copy_global_to_shared(ring.index(nxt % STAGES), w_ptr + w_off + nxt * BLOCK_K,
                                       mask=(w_off >= 0) & (nxt < steps))
        cp.commit_group()
        x = gl.load(x_ptr + x_off + i * BLOCK_K, mask=x_mask, other=0.0)
        acc += gl.sum(gl.expand_dims(w.to(gl.float32), 0) * gl.expand_dims(x.to(gl.float32), 1), axis=3)
    cp.wait_group(0)
    y = gl.sum(acc, axis=2)
    ym = gl.arange(0, M_ROWS, layout=gl.SliceLayout(1, LY))
    yn = gl.program_id(0) * BLOCK_N + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, LY))
    y_off = gl.expand_dims(ym.to(gl.int64) * sym, 1) + gl.expand_dims(yn, 0)
    gl.store(y_ptr + y_off, y.to(y_ptr.dtype.element_ty), mask=gl.expand_dims(ym < M, 1) & gl.expand_dims(yn < N, 0))


def parse(spec):
    return [(s.split(":")[0], *(int(v) for v in s.split(":")[1:])) for s in spec.split(",")]


def candidates_for(variants):
    def candidates(m, n, k):
        out = {}
        for kind, bn, bk, nw, extra in variants:
            if k % bk or m * bn > 64:
                continue
            rows = 1 << (m - 1).bit_length()
            if kind == "rows":
                ck = CachedKernel(gemv_rows_kernel, dict(M_ROWS=rows, BLOCK_N=bn, BLOCK_K=bk, HAS_BIAS=False,
                                                         EVEN_K=True, PDL=True, W_EVICT=""), num_warps=nw,
                                  maxnreg=None, pdl=True)
            else:
                ck = CachedKernel(gemv_ring_kernel, dict(M_ROWS=rows, BLOCK_N=bn, BLOCK_K=bk, STAGES=extra),
                                  num_warps=nw, maxnreg=None, pdl=True)
            grid = triton.cdiv(n, bn)

            def launch(x, w, y, ck=ck, grid=grid, kind=kind):
                if kind == "rows":
                    args = (x, w, y, y, m, n, k, x.stride(0), 1, w.stride(0), y.stride(0), 1)
                else:
                    args = (x, w, y, m, n, k, x.stride(0), w.stride(0), y.stride(0))
                ck.launch(grid, x.device.index, lambda: args, args)
            out[f"{kind} n{bn} k{bk} w{nw}" + (f" s{extra}" if kind == "ring" else "")] = launch
        return out
    return candidates


if __name__ == "__main__":
    ms = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "1,2,4,8").split(",")]
    run_probe("gemv_rows", candidates_for(parse(sys.argv[3]) if len(sys.argv) > 3 else VARIANTS), ms, sys.argv[1])
