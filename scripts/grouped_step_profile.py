"""torch.profiler over a few of our MoE training steps (scripts/grouped_train_step.py's largest case by default):
the GPU kernels and the host ops of a step, by total device time, beside torch._grouped_mm's step.

    python scripts/grouped_step_profile.py [G T K N]
"""
import sys

import torch
import warpgemm
from warpgemm.bench.timing import print_torch_profile


def main():
    G, T, K, N = (int(v) for v in sys.argv[1:5]) if len(sys.argv) > 4 else (64, 32768, 2048, 1024)
    g = torch.Generator(device="cuda").manual_seed(G)
    x = torch.randn(T, K, device="cuda", generator=g).to(torch.bfloat16).requires_grad_()
    w = torch.randn(G, N, K, device="cuda", generator=g).to(torch.bfloat16).transpose(1, 2).detach().requires_grad_()
    offs = (torch.arange(1, G + 1, device="cuda") * (T // G)).to(torch.int32)
    dy = torch.randn(T, N, device="cuda", generator=g).to(torch.bfloat16)
    for name, fn in (("warpgemm", warpgemm.grouped_mm), ("torch", torch._grouped_mm)):
        def step():
            x.grad = w.grad = None
            fn(x, w, offs).backward(dy)
        step()
        print(f"==== {name}: w.grad strides {w.grad.stride()} (w {w.stride()})")
        print_torch_profile(step, warmup=4, calls=5, sort_by="cuda_time_total", rows=14)


if __name__ == "__main__":
    main()
