"""Where does `bench train`'s step lose or win? Each of a linear layer's three GEMMs timed alone against torch's
same product, then the whole step, all alternating with torch in the same process.
  fwd   Y = X W^T          (A row-major, B = W^T column-major: the `dense` suite's layout)
  dx    dX = dY W          (B row-major: `--layout nn`)
  dw    dW = dY^T X        (A = dY^T column-major, B row-major: what the backward launches for an nn.Linear weight)
  dwT   dW^T = X^T dY      (the other orientation of the same product, transposed on return)
  step  linear(x, W).backward(dY) against F.linear's
Usage: python scripts/train_probe.py OUT.json [rounds] [MxNxK,...]
"""
import json
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import alternate, warm_gpu

out_path = sys.argv[1]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
shapes = ([tuple(int(v) for v in s.split("x")) for s in sys.argv[3].split(",")] if len(sys.argv) > 3
          else [(4096, 4096, 4096), (4096, 14336, 4096), (16384, 4096, 4096), (2048, 4096, 4096)])


def pieces(m, n, k):
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, k, device="cuda", generator=g).bfloat16()
    w = (torch.randn(n, k, device="cuda", generator=g) / k ** 0.5).bfloat16()
    dy = torch.randn(m, n, device="cuda", generator=g).bfloat16()
    xg, wg = x.clone().requires_grad_(), w.clone().requires_grad_()

    def step(fn):
        def run():
            xg.grad = wg.grad = None
            fn(xg, wg).backward(dy)
        return run

    return {
        "fwd": (lambda: warpgemm.linear(x, w), lambda: F.linear(x, w)),
        "dx": (lambda: warpgemm.matmul(dy, w), lambda: torch.matmul(dy, w)),
        "dw": (lambda: warpgemm.matmul(dy.t(), x), lambda: torch.matmul(dy.t(), x)),
        "dwT": (lambda: warpgemm.matmul(x.t(), dy).t(), lambda: torch.matmul(x.t(), dy).t()),
        "step": (step(warpgemm.linear), step(F.linear)),
    }


warm_gpu(3.0)
rows = []
for m, n, k in shapes:
    for name, (ours, theirs) in pieces(m, n, k).items():
        ours(), theirs()
        t = alternate(ours, theirs, rounds=rounds)
        rows.append({"shape": f"{m}x{n}x{k}", "piece": name, "ms": t.ms_a, "ms_torch": t.ms_b,
                     "ratio": t.ms_b / t.ms_a, "rounds": t.rounds_a, "rounds_torch": t.rounds_b})
        print(f"{m}x{n}x{k:<6} {name:>5} ours {t.ms_a:7.3f} torch {t.ms_b:7.3f} ratio {t.ms_b / t.ms_a:.3f}",
              flush=True)
    torch.cuda.empty_cache()
for m, n, k in shapes[:2]:
    x = torch.empty(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.empty(n, k, device="cuda", dtype=torch.bfloat16)
    dy = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    for name, (a, b) in {"fwd": (x, w.t()), "dx": (dy, w), "dw": (dy.t(), x), "dwT": (x.t(), dy)}.items():
        print(f"{m}x{n}x{k} {name}: {warpgemm.explain(a, b)}".replace("\n", " | ")[:400])
json.dump({"environment": environment(), "rows": rows}, open(out_path, "w"), indent=1)
