"""A training step's host time, ours against F.linear's, built up: forward only; forward + autograd.grad (no
accumulation into .grad); forward + backward() into .grad reset each step; the same with .grad kept (accumulated).
Then a one-node graph built fresh each call, with a Python node (an autograd.Function) and with a C++ one.
Small shapes: the GPU never limits. Per step, median of 5 loops of 300.

    python scripts/step_parts.py [M N K]
"""

import torch
import torch.nn.functional as F

import warpgemm
from scripts.train_host_parts import Identity, layer, per_call_us


def main():
    x, w, dy = layer()
    m, k = x.shape

    def reset(fn):
        def run():
            x.grad = w.grad = None
            fn(x, w).backward(dy)
        return run

    for name, fn in (("warpgemm", warpgemm.linear), ("F.linear", F.linear)):
        parts = {
            "forward": lambda: fn(x, w),
            "forward + autograd.grad": lambda: torch.autograd.grad(fn(x, w), (x, w), dy),
            "forward + backward(), .grad reset": reset(fn),
            "forward + backward(), accumulated": lambda: fn(x, w).backward(dy),
        }
        print(name + ": " + ", ".join(f"{p} {per_call_us(f):.1f} us" for p, f in parts.items()), flush=True)
    # Is a fresh graph's Python node dear in itself? A one-node graph, Python node against C++ node.
    s = torch.randn(m, k, device="cuda").requires_grad_()
    one = {
        "python node, fresh graph": lambda: torch.autograd.grad(Identity.apply(s).sum(), (s,)),
        "c++ node, fresh graph": lambda: torch.autograd.grad((s * 1).sum(), (s,)),
    }
    print(", ".join(f"{p} {per_call_us(f):.1f} us" for p, f in one.items()), flush=True)


if __name__ == "__main__":
    main()
