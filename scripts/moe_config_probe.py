"""Probe: grouped_mm configs on the fine-grained MoE cases (skewed routing), each against torch._grouped_mm."""
import torch
import triton

import warpgemm
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.config import GemmConfig

CONFIGS = [GemmConfig(64, 128, 64, 8, 4), GemmConfig(128, 128, 64, 6, 4), GemmConfig(128, 256, 64, 3, 8),
           GemmConfig(64, 256, 64, 4, 4), GemmConfig(128, 128, 64, 5, 4, consumers=2)]
for case in MOE_CASES[3:]:
    a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
    b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
    offs = torch.tensor(routing(case.experts, case.tokens, "skewed"), device="cuda").cumsum(0).to(torch.int32)
    base = triton.testing.do_bench(lambda: torch._grouped_mm(a, b, offs))
    cells = []
    for cfg in CONFIGS:
        ms = triton.testing.do_bench(lambda: warpgemm.grouped_mm(a, b, offs, config=cfg))
        cells.append(f"{cfg.name}={base / ms:.3f}")
    print(case.label, " ".join(cells), flush=True)
