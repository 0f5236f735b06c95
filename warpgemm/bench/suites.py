"""Named, fixed benchmark suites: the shapes every figure in the notes and issues refers to."""
from __future__ import annotations

from typing import NamedTuple

# (N, K) of the LLM projection weights in the suites: Llama-style 8B / 70B attention and MLP shapes.
LLM_NK = [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672)]


class GemmCase(NamedTuple):
    M: int
    N: int
    K: int

    @property
    def label(self) -> str:
        return f"{self.M}x{self.N}x{self.K}"

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K


def dense_suite() -> list[GemmCase]:
    squares = [GemmCase(s, s, s) for s in (2048, 4096, 8192)]
    return squares + [GemmCase(m, n, k) for m in (1024, 4096, 16384) for n, k in LLM_NK]


def mid_suite() -> list[GemmCase]:
    """M = 128-512: where cuBLAS is weakest on LLM weights (188-615 TFLOP/s on our H100)."""
    return [GemmCase(m, n, k) for m in (128, 256, 512) for n, k in LLM_NK]


def quick_suite() -> list[GemmCase]:
    """A short subset for the GPU check command."""
    return [GemmCase(8192, 8192, 8192), GemmCase(4096, 4096, 4096), GemmCase(4096, 14336, 4096),
            GemmCase(1024, 8192, 8192)]


def odd_suite() -> list[GemmCase]:
    """Sizes that are not the LLM weights' powers of two, as users try them: squares of 1536-3072, and shapes whose
    128x256 tile count leaves a wave partly filled on 132 SMs (cuBLAS fits its tile width to them)."""
    shapes = [(1536, 1536, 1536), (2560, 2560, 2560), (3072, 3072, 3072), (3072, 3072, 1024), (1536, 4096, 4096),
              (1280, 5120, 5120), (3000, 5000, 2000), (2000, 2000, 8000), (777, 4096, 11008), (1024, 2304, 4096),
              (6144, 1536, 4096), (1280, 6912, 4096)]
    return [GemmCase(*s) for s in shapes]


def round_suite() -> list[GemmCase]:
    """Round decimal sizes, the first products users time (1000^3-8000^3 and mixes). Odd thousands give K = 8 mod 16:
    bf16 rows that start 16 bytes into a 32-byte sector, which no other suite has (off_sector.py). 4097^3 (rows not
    even 16-byte aligned: a padded copy here, a slow cuBLAS kernel there, 3.3x in session 34) is left out: one
    cuBLAS fallback would dominate the geomean."""
    shapes = [(1000, 1000, 1000), (2000, 2000, 2000), (3000, 3000, 3000), (4000, 4000, 4000), (5000, 5000, 5000),
              (6000, 6000, 6000), (8000, 8000, 8000), (1000, 4096, 4096), (4096, 4096, 1000), (3000, 8192, 3000),
              (10000, 10000, 1000), (1000, 5000, 3000)]
    return [GemmCase(*s) for s in shapes]


def decode_gemm_suite() -> list[GemmCase]:
    """`bench decode`'s rows and weights as plain cases (bench fp8 times them after an L2 flush: weights cold)."""
    return [GemmCase(m, n, k) for m in (1, 4, 16, 32, 64) for n, k in LLM_NK]


def small_suite() -> list[GemmCase]:
    """Products of a few microseconds, the first things users time: one wave of tiles or less, K of 128-768 (N and K
    multiples of 16, so `bench fp8` has torch._scaled_mm to time against). Where the fixed cost of a call decides:
    the one-partition kernel's ground (warpgemm/one_partition_rule.py). Timed back to back (`bench small`): after an
    L2 flush such a call's few microseconds are lost in the flush's write-backs and the launch."""
    shapes = [(128, 128, 128), (256, 256, 256), (384, 384, 384), (512, 512, 512), (256, 1024, 256),
              (1024, 512, 256), (768, 768, 128), (96, 2048, 512), (512, 512, 768), (1024, 1024, 256),
              (320, 1536, 384), (1536, 384, 512)]
    return [GemmCase(*s) for s in shapes]


GEMM_SUITES = {"dense": dense_suite, "mid": mid_suite, "quick": quick_suite, "decode": decode_gemm_suite,
               "odd": odd_suite, "round": round_suite, "small": small_suite}
