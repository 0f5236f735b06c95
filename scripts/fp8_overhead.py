"""Eager host cost per call of scaled_mm against torch._scaled_mm at a size where the host is the bottleneck.

    python scripts/fp8_overhead.py [SIZE]
"""
import sys

import torch

import warpgemm
from warpgemm.bench.fp8_bench import make_fp8_operands
from warpgemm.bench.timing import eager_ms


def per_call_us(fn, calls=3000):
    """Wall time per call of `calls` back-to-back calls after 200 untimed ones (bench.timing.eager_ms)."""
    for _ in range(200):
        fn()
    return eager_ms(fn, calls)[1] * 1e3


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 256
    for scaling in ("tensorwise", "rowwise"):
        a, b, sa, sb = make_fp8_operands(n, n, n, scaling)
        ours = per_call_us(lambda: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16))
        theirs = per_call_us(lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True))
        print(f"{scaling} {n}^3: scaled_mm {ours:.1f} us/call, torch._scaled_mm {theirs:.1f} us/call")
