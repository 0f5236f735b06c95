"""Host time of a linear layer's training step (forward + backward), ours against F.linear's, and what moves it.

Per step, timed on the host with perf_counter over back-to-back steps: the forward's issue time, the backward's,
and the step's wall time once the GPU has finished. Variants: as is; with Python's garbage collector off; with a
short GIL switch interval (the backward of a Python autograd function runs on the CUDA device's autograd thread,
which must take the GIL from the main thread); forward only. Then cProfile of ours.

    python scripts/train_host_probe.py [M N K]
"""
import contextlib
import gc
import statistics
import sys
import threading
import time

import torch
import torch.nn.functional as F

import warpgemm
from scripts.train_host_parts import layer
from warpgemm.bench.timing import print_host_profile


def main():
    x, w, dy = layer((2048, 4096, 4096))
    main_thread = threading.get_ident()
    seen = set()

    def hook(grad):
        seen.add(threading.get_ident() == main_thread)
        return grad

    def steps(fn, count):
        fwd, bwd = [], []
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(count):
            x.grad = w.grad = None
            t0 = time.perf_counter()
            y = fn(x, w)
            t1 = time.perf_counter()
            y.backward(dy)
            t2 = time.perf_counter()
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
        issued = time.perf_counter() - start
        torch.cuda.synchronize()
        wall = time.perf_counter() - start
        return (statistics.median(fwd) * 1e6, statistics.median(bwd) * 1e6, issued / count * 1e6,
                wall / count * 1e6)

    @contextlib.contextmanager
    def gc_off():
        gc.disable()
        try:
            yield
        finally:
            gc.enable()

    @contextlib.contextmanager
    def short_switch():
        old = sys.getswitchinterval()
        sys.setswitchinterval(1e-6)
        try:
            yield
        finally:
            sys.setswitchinterval(old)

    h = x.register_hook(hook)
    warpgemm.linear(x, w).backward(dy)
    h.remove()
    print(f"x's gradient hook ran on the main thread: {seen}")
    for label, ctx in (("as is", contextlib.nullcontext), ("gc off", gc_off), ("switch 1us", short_switch)):
        for fn, name in ((warpgemm.linear, "warpgemm"), (F.linear, "F.linear")):
            with ctx():
                steps(fn, 20)
                f, b, i, wl = steps(fn, 200)
            print(f"{label:>10} {name:>9}: forward {f:7.1f} us  backward {b:7.1f} us  issued {i:7.1f} us/step  "
                  f"wall {wl:7.1f} us/step", flush=True)
    with torch.no_grad():
        for fn, name in ((warpgemm.linear, "warpgemm"), (F.linear, "F.linear")):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                fn(x, w)
            t1 = time.perf_counter()
            torch.cuda.synchronize()
            print(f"no_grad forward {name}: issued {(t1 - t0) / 200 * 1e6:.1f} us/call")

    def step():
        x.grad = w.grad = None
        warpgemm.linear(x, w).backward(dy)

    print_host_profile(step, 50, rows=25)


if __name__ == "__main__":
    main()
