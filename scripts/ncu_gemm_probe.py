"""One call each of a few GEMM configs and of cuBLAS on one shape, for Nsight Compute to measure (duration, L2
and DRAM bytes). Run under ncu; compile happens in a warm-up call before the profiled range starts.

    ncu --clock-control none --metrics gpu__time_duration.sum,lts__t_bytes.sum,dram__bytes_read.sum \
        python3 scripts/ncu_gemm_probe.py 128x4096x4096 64x128x64_s8_w4_g8,128x256x64_s3_w8_g8_sk4

HINT=<l2_load_hint_probe.POLICIES name> adds that probe's L2 policies to gemm_kernel's TMA loads (use a fresh
TRITON_CACHE_DIR); L2_PERSIST_MB=n sets the context's L2 set-aside for evict-last lines first.
"""
import os
import sys

import torch

import warpgemm
from warpgemm.candidates import parse_config

if os.environ.get("HINT", "none") != "none":  # L2 policies on the TMA loads (l2_load_hint_probe.py)
    sys.path.insert(0, os.path.dirname(__file__))
    from l2_load_hint_probe import POLICIES, install
    install(*POLICIES[os.environ["HINT"]], [])
if os.environ.get("L2_PERSIST_MB"):
    sys.path.insert(0, os.path.dirname(__file__))
    from l2_load_hint_probe import set_persisting_l2
    set_persisting_l2(float(os.environ["L2_PERSIST_MB"]))
M, N, K = (int(x) for x in sys.argv[1].split("x"))
configs = [parse_config(c) for c in sys.argv[2].split(",")]
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
for cfg in configs:  # compile outside the profiled calls
    warpgemm.matmul(a, w.T, config=cfg)
torch.matmul(a, w.T)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStart()
for cfg in configs:
    warpgemm.matmul(a, w.T, config=cfg)
torch.matmul(a, w.T)
torch.cuda.synchronize()
torch.cuda.cudart().cudaProfilerStop()
