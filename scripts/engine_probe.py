"""Is a Python backward slower on the autograd engine's CUDA device thread than on the main thread? linear's
backward timed inside the engine (perf_counter around LinearFunction.backward), the same formula called on the main
thread and on a plain Python thread, and the whole backward() call. Small shapes: the GPU never limits.

    python scripts/engine_probe.py [M N K]
"""
import statistics
import threading
import time

import torch

import warpgemm
from scripts.train_host_parts import layer
from warpgemm.ops import linear_autograd


def main():
    x, w, dy = layer()
    m, k = x.shape
    inside = []
    original = linear_autograd.LinearFunction.backward

    def timed(ctx, grad):
        t0 = time.perf_counter()
        r = original(ctx, grad)
        inside.append(time.perf_counter() - t0)
        return r

    linear_autograd.LinearFunction.backward = staticmethod(timed)
    y = warpgemm.linear(x, w)
    calls = []
    for _ in range(330):
        t0 = time.perf_counter()
        torch.autograd.grad(y, (x, w), dy, retain_graph=True)
        calls.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    print(f"backward() call {statistics.median(calls[30:]) * 1e6:7.1f} us; inside LinearFunction.backward on the "
          f"engine thread {statistics.median(inside[30:]) * 1e6:7.1f} us")
    ctx = y.grad_fn

    def direct(out):
        for _ in range(330):
            t0 = time.perf_counter()
            original(ctx, dy)
            out.append(time.perf_counter() - t0)

    main_times, thread_times = [], []
    direct(main_times)
    t = threading.Thread(target=direct, args=(thread_times,))
    t.start()
    t.join()
    torch.cuda.synchronize()
    print(f"same backward on the main thread {statistics.median(main_times[30:]) * 1e6:7.1f} us, on a Python thread "
          f"{statistics.median(thread_times[30:]) * 1e6:7.1f} us")
    s = torch.randn(m, k, device="cuda").requires_grad_()
    y2 = (s * 1).sum()
    c2 = []
    for _ in range(330):
        t0 = time.perf_counter()
        torch.autograd.grad(y2, (s,), retain_graph=True)
        c2.append(time.perf_counter() - t0)
    print(f"backward() of a one-node C++ graph {statistics.median(c2[30:]) * 1e6:7.1f} us")


if __name__ == "__main__":
    main()
