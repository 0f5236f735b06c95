"""How far a Python autograd node can bring a linear layer's training step toward F.linear's host time: per step
(forward + backward into fresh .grad, bias included), median of 5 loops of 300, small shapes (the GPU never limits).

Rows: F.linear; warpgemm.linear; a Python autograd.Function wrapping F.linear (forward F.linear without grad,
backward torch's three ops: the floor of any Python node); and each with the autograd engine's device threads
off (set_multithreading_enabled(False): the backward runs on the calling thread).

    python scripts/train_step_floor.py [M N K]
"""
import torch
import torch.nn.functional as F

import warpgemm
from scripts.train_host_parts import layer, per_call_us


class TorchNode(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w, b):
        ctx.save_for_backward(x, w)
        return F.linear(x, w, b)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        return g @ w, g.t() @ x, g.sum(0)


def main():
    x, w, dy = layer()
    b = torch.randn(w.shape[0], device="cuda", dtype=w.dtype).requires_grad_()

    def step(fn):
        def run():
            x.grad = w.grad = b.grad = None
            fn(x, w, b).backward(dy)
        return run

    rows = {"F.linear": step(F.linear), "warpgemm.linear": step(warpgemm.linear),
            "Python node around F.linear": step(TorchNode.apply)}
    for name, fn in rows.items():
        print(f"{name:>40}: {per_call_us(fn):7.1f} us", flush=True)
    with torch.autograd.set_multithreading_enabled(False):
        for name in rows:
            print(f"{name + ', engine threads off':>40}: {per_call_us(rows[name]):7.1f} us", flush=True)


if __name__ == "__main__":
    main()
