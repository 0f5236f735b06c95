"""One grouped_mm call and one torch._grouped_mm call on a MoE case, for Nsight Compute to measure (duration, L2
and DRAM bytes). Compiles before the profiled range.

    ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_read.sum \
        python3 scripts/ncu_moe_probe.py 4 uniform
"""
import sys

import torch

import warpgemm
from warpgemm.bench.moe_bench import MOE_CASES, routing

case = MOE_CASES[int(sys.argv[1])]
how = sys.argv[2]
a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
offs = torch.tensor(routing(case.experts, case.tokens, how), device="cuda").cumsum(0).to(torch.int32)
warpgemm.grouped_mm(a, b, offs)
torch._grouped_mm(a, b, offs)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
warpgemm.grouped_mm(a, b, offs)
torch._grouped_mm(a, b, offs)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
