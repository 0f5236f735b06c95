"""Where a linear layer's training step spends host time on our path: torch.profiler (CPU + CUDA activity) over
steps of ours, the table sorted by self CPU time (CUDA runtime calls such as syncs or mallocs show there), the
source torch runs around a custom op's CUDA implementation, and host times of the registered op alone with and
without autograd.

    python scripts/train_trace_probe.py [M N K]
"""
import inspect
import sys

import torch
from torch._library import custom_ops

import warpgemm
from warpgemm.bench.timing import eager_ms, print_torch_profile


def host_us(fn, count=200):
    """Host time per call (to issue it) of `count` back-to-back calls after 10 untimed ones (bench.timing.eager_ms)."""
    for _ in range(10):
        fn()
    return eager_ms(fn, count)[0] * 1e3


def main():
    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else (2048, 4096, 4096)
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16).requires_grad_()
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).requires_grad_()
    dy = torch.randn(m, n, device="cuda", dtype=torch.bfloat16)
    a3, b3 = x.detach().unsqueeze(0), w.detach().t().unsqueeze(0)
    a3g = x.unsqueeze(0)
    op = torch.ops.warpgemm.bmm
    print(f"op, no grad inputs:       {host_us(lambda: op(a3, b3, None, None, None)):7.1f} us")
    print(f"op, A requires grad:      {host_us(lambda: op(a3g, b3, None, None, None)):7.1f} us")
    with torch.no_grad():
        print(f"op, A requires grad, no_grad: {host_us(lambda: op(a3g, b3, None, None, None)):7.1f} us")
    print(f"linear, both require grad: {host_us(lambda: warpgemm.linear(x, w)):7.1f} us")
    print(f"F.linear, both require grad: {host_us(lambda: torch.nn.functional.linear(x, w)):7.1f} us")

    def step():
        x.grad = w.grad = None
        warpgemm.linear(x, w).backward(dy)

    print_torch_profile(step, warmup=10, calls=20, sort_by="self_cpu_time_total", rows=30)
    src = inspect.getsource(custom_ops)
    at = src.find("def backend_impl")
    print(src[at:at + 2500])


if __name__ == "__main__":
    main()
