"""Short-program decode GEMM on tensor cores (plain Triton tl.dot, cp.async pipelined) against warpgemm.linear and
F.linear at M = 4-64: does the GEMV's balance (thousands of programs the hardware hands out) carry over to rows
the CUDA cores cannot afford?

    python3 scripts/dot_gemv_probe.py OUT.json [4,16,64]
"""
import sys

import triton
import triton.language as tl

from _decode_probe import run_probe


@triton.jit
def dot_gemv_kernel(x_ptr, w_ptr, y_ptr, M, N, K, sxm, swn, sym, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                    BLOCK_K: tl.constexpr):
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    live = rows < N
    rows = tl.where(live, rows, 0)
    ms = tl.arange(0, BLOCK_M)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        x = tl.load(x_ptr + ms[:, None] * sxm + ks[None, :], mask=ms[:, None] < M, other=0.0)
        w = tl.load(w_ptr + rows[None, :].to(tl.int64) * swn + ks[:, None])
        acc = tl.dot(x, w, acc)
    tl.store(y_ptr + ms[:, None] * sym + rows[None, :], acc.to(y_ptr.dtype.element_ty),
             mask=(ms[:, None] < M) & live[None, :])


VARIANTS = [(32, 256, 3), (64, 128, 4), (64, 256, 3), (128, 128, 3)]


def candidates(m, n, k):
    bm = max(16, 1 << (m - 1).bit_length())

    def launch(x, w, y, bn, bk, st):
        dot_gemv_kernel[(triton.cdiv(n, bn), )](x, w, y, m, n, k, x.stride(0), w.stride(0), y.stride(0), BLOCK_M=bm,
                                               BLOCK_N=bn, BLOCK_K=bk, num_warps=4, num_stages=st)
    return {f"dot n{bn} k{bk} s{st}": (lambda x, w, y, v=(bn, bk, st): launch(x, w, y, *v)) for bn, bk, st in VARIANTS}


if __name__ == "__main__":
    run_probe("dot_gemv", candidates, [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "4,16,64").split(",")],
              sys.argv[1])
