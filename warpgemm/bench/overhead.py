"""Eager host overhead per call: back-to-back calls on a problem small enough that the CPU is the bottleneck.

A 256^3 GEMM takes a few microseconds on the GPU, so N queued calls take N x (host time per call); the wall time
of the loop over N is the per-call overhead the user pays in eager mode. Measured for warpgemm and torch in the
same process, alternating; the last row is a training step of one layer (forward and backward: three GEMMs).
"""
from __future__ import annotations

import statistics

import torch

from .timing import eager_ms


def measure_overhead(size: int = 256, iters: int = 2000, rounds: int = 5, dtype=torch.bfloat16) -> dict:
    import warpgemm

    a = torch.randn(size, size, device="cuda", dtype=dtype)
    w = torch.randn(size, size, device="cuda", dtype=dtype)
    bias = torch.randn(size, device="cuda", dtype=dtype)
    out_ours, out_torch = torch.empty(size, size, device="cuda", dtype=dtype), torch.empty_like(a)
    xg, wg, bg = (t.clone().requires_grad_() for t in (a, w, bias))
    dy = torch.randn(size, size, device="cuda", dtype=dtype)

    def train_step(linear):
        def step():  # a training step's layer: forward, backward into fresh .grad tensors
            xg.grad = wg.grad = bg.grad = None
            linear(xg, wg, bg).backward(dy)
        return step

    pairs = {
        "matmul(a, w.T)": (lambda: warpgemm.matmul(a, w.T), lambda: torch.matmul(a, w.T)),
        "matmul(a, w.T, out=c)": (lambda: warpgemm.matmul(a, w.T, out=out_ours),
                                  lambda: torch.matmul(a, w.T, out=out_torch)),
        "linear(a, w, bias)": (lambda: warpgemm.linear(a, w, bias),
                               lambda: torch.nn.functional.linear(a, w, bias)),
        "linear(a, w, bias).backward(dy)": (train_step(warpgemm.linear), train_step(torch.nn.functional.linear)),
    }
    out = {}
    for name, (ours, theirs) in pairs.items():
        for fn in (ours, theirs):
            for _ in range(50):
                fn()
        times = {"warpgemm": [], "torch": []}
        for r in range(rounds):
            order = [("warpgemm", ours), ("torch", theirs)]
            for key, fn in (order if r % 2 == 0 else order[::-1]):
                times[key].append(eager_ms(fn, iters)[1] * 1e3)
        out[name] = {"warpgemm_us": statistics.median(times["warpgemm"]),
                     "torch_us": statistics.median(times["torch"]),
                     "rounds_warpgemm_us": times["warpgemm"], "rounds_torch_us": times["torch"]}
    return {"size": size, "iters": iters, "rounds": rounds, "calls": out}
