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


def decode_gemm_suite() -> list[GemmCase]:
    """`bench decode`'s rows and weights as plain cases (bench fp8 times them after an L2 flush: weights cold)."""
    return [GemmCase(m, n, k) for m in (1, 4, 16, 32, 64) for n, k in LLM_NK]


GEMM_SUITES = {"dense": dense_suite, "mid": mid_suite, "quick": quick_suite, "decode": decode_gemm_suite}
