"""Run under LD_PRELOAD=tmap_log.so (scripts/tmap_shim/run.sh): torch.matmul (cuBLAS) and warpgemm.matmul on the same
shapes, rows on and off 32-byte sectors, with a marker line in $TMAP_LOG before each, so the TMA descriptors each
side builds (box, swizzle, L2 promotion, strides) can be compared. Also times both sides on each shape and prints the
cuBLAS kernel name."""
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import warpgemm
from warpgemm.bench.timing import bench_ms

log = os.environ.get("TMAP_LOG")
shapes = [tuple(int(v) for v in s.split("x")) for s in sys.argv[1].split(",")]


def mark(text):
    if log:
        with open(log, "a") as f:
            f.write(f"### {text}\n")
    print(text, flush=True)


for M, N, K in shapes:
    a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
    mark(f"cublas {M}x{N}x{K} a={a.data_ptr() % 128} w={w.data_ptr() % 128}")
    torch.matmul(a, w.T)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        torch.matmul(a, w.T)
        torch.cuda.synchronize()
    names = [e.name for e in p.events() if e.device_type.name == "CUDA"]
    mark(f"ours {M}x{N}x{K}")
    warpgemm.matmul(a, w.T)
    torch.cuda.synchronize()
    mark(f"timing {M}x{N}x{K} (both sides)")
    t_c = bench_ms(lambda: torch.matmul(a, w.T)) * 1e3
    t_o = bench_ms(lambda: warpgemm.matmul(a, w.T)) * 1e3
    mark(f"times {M}x{N}x{K}: cuBLAS {t_c:.1f} us ours {t_o:.1f} us ratio {t_c / t_o:.3f} kernels {names}")
