"""Where the host time of an eager warpgemm.linear call goes: cProfile over back-to-back decode-sized calls.

    python scripts/host_profile.py [M N K]
"""
import sys

import torch

import warpgemm
from warpgemm.bench.timing import eager_ms, print_host_profile


def main():
    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (1, 256, 256)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    for fn, name in ((lambda: warpgemm.linear(x, w), "warpgemm.linear"),
                     (lambda: torch.nn.functional.linear(x, w), "F.linear")):
        for _ in range(200):
            fn()
        host_ms, wall_ms = eager_ms(fn, 3000)
        print(f"{name}: {wall_ms * 1e3:.1f} us per call (host-bound loop; {host_ms * 1e3:.1f} us to issue)")
    print_host_profile(lambda: warpgemm.linear(x, w), 3000, rows=22)


if __name__ == "__main__":
    main()
