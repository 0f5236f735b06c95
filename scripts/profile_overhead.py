"""cProfile of eager warpgemm.matmul calls at a small size: where the host time per call goes."""
import cProfile
import pstats
import sys

import torch

import warpgemm

size = int(sys.argv[1]) if len(sys.argv) > 1 else 256
a = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
w = torch.randn(size, size, device="cuda", dtype=torch.bfloat16)
for _ in range(100):
    warpgemm.matmul(a, w.T)
torch.cuda.synchronize()
prof = cProfile.Profile()
prof.enable()
for _ in range(2000):
    warpgemm.matmul(a, w.T)
prof.disable()
torch.cuda.synchronize()
pstats.Stats(prof).sort_stats("tottime").print_stats(25)
