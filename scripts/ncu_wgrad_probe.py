"""The weight gradient of E128 T16384 K7168 N2048 (grouped_mm's ragged-K form) at c tokens a group, for Nsight
Compute: what differs between 1 token a group (1.22 ms, as fast as storing the zero tiles) and 16 (1.44 ms, not at
the power cap: wgrad_power.json)? Compiles before the profiled range; one call per routing named on the command line.

    ncu --clock-control none --profile-from-start off --metrics gpu__time_duration.sum,dram__bytes_write.sum,... \
        python3 scripts/ncu_wgrad_probe.py c1 c16 c128 skewed
WGRAD_GROUP_M=g forces the shipped tile with bands of g tile-rows (ragged_band_probe.py).
"""
import os
import sys

import torch

import warpgemm
from warpgemm.bench.moe_bench import routing
from warpgemm.ops.grouped_ragged_k import ragged_k_config

E, T, K, N = 128, 16384, 7168, 2048
x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
dy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
out = torch.empty(E, K, N, device="cuda", dtype=torch.bfloat16)
cfg = None
if os.environ.get("WGRAD_GROUP_M"):
    cfg = ragged_k_config(K, N, T, E, x.dtype, x.dtype)[0].replace(group_m=int(os.environ["WGRAD_GROUP_M"]))
offs = []
for name in sys.argv[1:]:
    counts = routing(E, T, "skewed") if name == "skewed" else [int(name[1:])] * E
    offs.append(torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32))
    warpgemm.grouped_mm(x.t(), dy, offs[-1], out=out, config=cfg)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for o in offs:
    warpgemm.grouped_mm(x.t(), dy, o, out=out, config=cfg)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
