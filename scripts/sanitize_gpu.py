"""Small launches of every kernel family, for compute-sanitizer (memcheck, racecheck):

    compute-sanitizer --tool memcheck python scripts/sanitize_gpu.py
    ONLY_CONFIGS=32x16x256_s5_w4_g8_swap compute-sanitizer ...            # the GEMM loop over these configs only
    TRITON_INSTRUMENTATION_MODE=consan python scripts/sanitize_gpu.py    # triton's race/deadlock checker
"""
import os

import torch
import triton

import warpgemm
from warpgemm.bench.elementwise_bench import SWEEP_CONFIGS
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.testing import strided_operand

if os.environ.get("TRITON_INSTRUMENTATION_MODE"):  # consan builds need global scratch memory
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
g = torch.Generator(device="cuda").manual_seed(0)
only = [c for c in os.environ.get("ONLY_CONFIGS", "").split(",") if c]
for cfg in [c for c in SHIPPED_CONFIGS if not only or c.name in only]:
    for a_col in (False, True):
        for b_col in (False, True):
            if cfg.block_m < 64 and not b_col:
                continue  # 32-row swap-AB tiles take K-contiguous weights only (a forced config raises)
            for m, n, k in [(7, 65, 127), (129, 257, 300), (4, 100, 520)]:
                a = strided_operand(m, k, col_major=a_col, dtype=torch.bfloat16, device="cuda", generator=g)
                b = strided_operand(k, n, col_major=b_col, dtype=torch.bfloat16, device="cuda", generator=g)
                warpgemm.matmul(a, b, config=cfg)
x = torch.randn(3, 130, 70, device="cuda", dtype=torch.bfloat16)
w = torch.randn(90, 70, device="cuda", dtype=torch.bfloat16)
warpgemm.linear(x, w, torch.randn(90, device="cuda", dtype=torch.bfloat16))
warpgemm.matmul(x, w.T, out_dtype=torch.float32)
# The one- and two-row GEMVs (kernels/gemv.py, kernels/gemv_rows.py): ragged N and K, bias, and x rows further apart
# than K starting off 16-byte alignment.
for rows in (1, 2):
    for n, k in [(5, 7), (67, 1030), (33, 4099)]:
        xs = torch.randn(rows, k + 24, device="cuda", dtype=torch.bfloat16)[:, 3:3 + k]
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        warpgemm.linear(xs, w, torch.randn(n, device="cuda", dtype=torch.bfloat16))
        warpgemm.linear(xs.contiguous(), w)
for cfg in (None, SWEEP_CONFIGS[0], SWEEP_CONFIGS[4]):
    a = torch.randn(300, 1000, device="cuda")
    warpgemm.add(a, a, alpha=0.5, config=cfg)
torch.cuda.synchronize()
print("sanitize script done")
