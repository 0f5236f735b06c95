"""Where the host time of an eager group_gemm call goes: unit costs of the torch calls it makes, then cProfile
over back-to-back calls.

    python scripts/group_host_profile.py [problems]
"""
import sys
import time

import torch

import warpgemm
from warpgemm.bench.groups_bench import mixed_problems
from warpgemm.bench.timing import eager_ms, print_host_profile


def per_call_us(fn, n=2000):
    """Host time per call (issue time from an idle GPU), after a warm-up."""
    for _ in range(50):
        fn()
    return eager_ms(fn, n)[0] * 1e3


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    _, la, lb = mixed_problems(count, seed=count)
    a = la[0]
    flat = torch.empty(1 << 20, dtype=torch.bfloat16, device="cuda")
    host = torch.arange(16 * count, dtype=torch.int64)
    units = {
        "a.device": lambda: a.device,
        "a.get_device()": lambda: a.get_device(),
        "a.is_cuda": lambda: a.is_cuda,
        "a.shape": lambda: a.shape,
        "a.stride()": lambda: a.stride(),
        "a.data_ptr()": lambda: a.data_ptr(),
        "a.dtype": lambda: a.dtype,
        "flat.as_strided": lambda: flat.as_strided((64, 64), (64, 1), 4096),
        "torch.empty cuda": lambda: torch.empty(4096, dtype=torch.bfloat16, device=a.device),
        "torch.empty pinned": lambda: torch.empty(16 * count, dtype=torch.int64, pin_memory=True),
        "pinned .to(cuda, non_blocking)": lambda: host.pin_memory().to(a.device, non_blocking=True),
        "pageable .to(cuda, non_blocking)": lambda: host.to(a.device, non_blocking=True),
        "is_current_stream_capturing": lambda: torch.cuda.is_current_stream_capturing(),
        "current raw stream": lambda: torch._C._cuda_getCurrentRawStream(0),
        "torch.matmul(a, b) (loop step)": lambda: torch.matmul(la[0], lb[0]),
        f"group_gemm x{count}": lambda: warpgemm.group_gemm(la, lb),
    }
    for name, fn in units.items():
        print(f"{name:36s} {per_call_us(fn, 500 if 'group' in name else 2000):8.2f} us")
    # Host time per call while the GPU is busy (a deep queue, as in a training step): a copy that waits on the
    # stream shows here as host time approaching the queued GPU work.
    big = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16)
    for n in (20, 500):
        torch.cuda.synchronize()
        for _ in range(4):
            big @ big  # ~6 ms of queued GPU work
        t0 = time.perf_counter()
        for _ in range(n):
            warpgemm.group_gemm(la, lb)
        host = (time.perf_counter() - t0) / n * 1e6
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / n * 1e6
        print(f"{n:4d} calls behind 6 ms of GPU work: host {host:7.1f} us/call, wall {wall:7.1f} us/call")
    print_host_profile(lambda: warpgemm.group_gemm(la, lb), 300)


if __name__ == "__main__":
    main()
