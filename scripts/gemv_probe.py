"""CUDA-core GEMV (warpgemm/kernels/gemv.py) variants against warpgemm.linear and F.linear on the decode weights.

    python3 scripts/gemv_probe.py OUT.json [1,2,4]
"""
import sys

import triton

from _decode_probe import run_probe
from warpgemm.kernels.gemv import gemv_kernel

VARIANTS = [(2, 1024, 4), (4, 512, 4), (4, 1024, 4), (8, 512, 4), (8, 256, 4), (16, 1024, 4), (4, 512, 8)]


def candidates(m, n, k):
    def launch(x, w, y, bn, bk, nw):
        gemv_kernel[(triton.cdiv(n, bn), )](x, w, y, y, m, n, k, x.stride(0), x.stride(1), w.stride(0), y.stride(0),
                                           y.stride(1), M_ROWS=1 << (m - 1).bit_length(), BLOCK_N=bn, BLOCK_K=bk,
                                           HAS_BIAS=False, EVEN_K=k % bk == 0, num_warps=nw)
    return {f"gemv n{bn} k{bk} w{nw}": (lambda x, w, y, v=(bn, bk, nw): launch(x, w, y, *v))
            for bn, bk, nw in VARIANTS}


if __name__ == "__main__":
    run_probe("gemv", candidates, [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "1,2,4").split(",")],
              sys.argv[1])
