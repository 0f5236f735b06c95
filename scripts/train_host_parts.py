"""Host cost of the parts of an eager training step on our path (small shapes, so the GPU never limits): per call,
median of 5 loops of 300 calls after a warm-up.

    python scripts/train_host_parts.py [M N K]
"""
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.ops import api, checks, library
from warpgemm.ops.batching import to_batched


def per_call_us(fn, count=300, loops=5):
    for _ in range(30):
        fn()
    runs = []
    for _ in range(loops):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(count):
            fn()
        runs.append((time.perf_counter() - t0) / count * 1e6)
    torch.cuda.synchronize()
    return statistics.median(runs)


class Identity(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        return g


def layer(default=(256, 256, 256)):
    """A linear layer's x (M, K) and weight (N, K), both requiring grad, and an output gradient dY (M, N): bf16 on
    the GPU, M N K from the command line (else `default`)."""
    m, n, k = (int(v) for v in sys.argv[1:4]) if len(sys.argv) > 3 else default
    x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16).requires_grad_()
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16).requires_grad_()
    return x, w, torch.randn(m, n, device="cuda", dtype=torch.bfloat16)


def main():
    x, w, dy = layer()
    m, n = dy.shape
    xd, wd = x.detach(), w.detach()
    shapes = api.matmul_shapes(x, w.t())
    a3, b3 = to_batched(shapes)
    c3 = torch.empty(1, m, n, device="cuda", dtype=torch.bfloat16)
    y = warpgemm.linear(x, w)

    def step(fn):
        def run():
            x.grad = w.grad = None
            fn(x, w).backward(dy)
        return run

    rows = {
        "F.linear forward (grad)": lambda: F.linear(x, w),
        "linear forward (grad)": lambda: warpgemm.linear(x, w),
        "linear forward (no grad: recipe)": lambda: warpgemm.linear(xd, wd),
        "F.linear step": step(F.linear),
        "linear step": step(warpgemm.linear),
        "_prepare": lambda: api._prepare(x, w.t(), None, None, None, None, ("input", "weight")),
        "matmul_shapes + to_batched": lambda: to_batched(api.matmul_shapes(x, w.t())),
        "bmm_eager": lambda: library.bmm_eager(a3.detach(), b3.detach(), None, None, None),
        "bmm_into (given c3)": lambda: library.bmm_into(a3.detach(), b3.detach(), None, c3),
        "torch.empty": lambda: torch.empty((1, m, n), dtype=torch.bfloat16, device="cuda"),
        "plain_context": checks.plain_context,
        "Function.apply (identity)": lambda: Identity.apply(x),
        "BMM (grad, Function)": lambda: library.BMM(a3, b3, None, None, None),
        "autograd.grad of y (retain)": lambda: torch.autograd.grad(y, (x, w), dy, retain_graph=True),
    }
    for name, fn in rows.items():
        print(f"{name:>36}: {per_call_us(fn):7.1f} us", flush=True)


if __name__ == "__main__":
    main()
