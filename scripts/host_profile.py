"""Where the host time of an eager warpgemm.linear call goes: cProfile over back-to-back decode-sized calls.

    python scripts/host_profile.py [M N K]
"""
import cProfile
import pstats
import sys
import time

import torch

import warpgemm


def main():
    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (1, 256, 256)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for fn, name in ((lambda: warpgemm.linear(x, w), "warpgemm.linear"),
                     (lambda: torch.nn.functional.linear(x, w), "F.linear")):
        for _ in range(200):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(3000):
            fn()
        torch.cuda.synchronize()
        print(f"{name}: {(time.perf_counter() - t0) / 3000 * 1e6:.1f} us per call (host-bound loop)")
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(3000):
        warpgemm.linear(x, w)
    prof.disable()
    torch.cuda.synchronize()
    pstats.Stats(prof).sort_stats("tottime").print_stats(22)


if __name__ == "__main__":
    main()
