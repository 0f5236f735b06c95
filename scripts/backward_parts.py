"""Host cost of the backward of a linear layer on our path, in parts (small shapes: the GPU never limits):
the autograd engine with a Python node against a C++ one, our backward formula called on the main thread, and
its products. Per call, median of 5 loops of 300 calls.

    python scripts/backward_parts.py [M N K]
"""
import types

import torch

import warpgemm
from warpgemm.ops import library
from scripts.train_host_parts import Identity, layer, per_call_us


def main():
    x, w, dy = layer()
    m, k = x.shape
    xd, wd = x.detach(), w.detach()
    a3, b3, g3 = xd.unsqueeze(0), wd.t().unsqueeze(0), dy.unsqueeze(0)
    ctx = types.SimpleNamespace(saved_tensors=(b3, a3), needs_input_grad=(True, True, False, False, False),
                                a_like=(1, torch.bfloat16, False), b_like=(1, torch.bfloat16, True), bias_dtype=None)
    s = torch.randn(m, k, device="cuda").requires_grad_()
    y_ident = Identity.apply(s).sum()
    y_plain = (s * 1).sum()
    y_ours = warpgemm.linear(x, w)
    y_ours3 = library.BMM(x.unsqueeze(0), w.t().unsqueeze(0), None, None, None)
    rows = {
        "grad through a C++ node": lambda: torch.autograd.grad(y_plain, (s,), retain_graph=True),
        "grad through a Python node": lambda: torch.autograd.grad(y_ident, (s,), retain_graph=True),
        "grad of linear (views + node)": lambda: torch.autograd.grad(y_ours, (x, w), dy, retain_graph=True),
        "grad of BMM output (node only)": lambda: torch.autograd.grad(y_ours3, (x, w), g3, retain_graph=True),
        "_backward on the main thread": lambda: library._backward(ctx, g3),
        "two bmm_eager (its products)": lambda: (library.bmm_eager(g3, b3.transpose(1, 2), None, None, None),
                                                 library.bmm_eager(g3.transpose(1, 2), a3, None, None, None)),
        "gradient_operand": lambda: library.gradient_operand(g3, torch.bfloat16),
    }
    for name, fn in rows.items():
        print(f"{name:>36}: {per_call_us(fn):7.1f} us", flush=True)


if __name__ == "__main__":
    main()
