"""A mixture-of-experts layer's training step, ours against torch._grouped_mm's: out = grouped_mm(x, W, offs) with
x (T, K) and W (G, K, N) (an nn.Linear-style (G, N, K) weight transposed) both requiring grad, then
out.backward(dY) into fresh .grad: the forward, dX (tokens form) and dW (ragged-K form). Per step: host (time to
issue) and wall ms, median of 5 rounds alternating the two, and the gradients' error against float32. Small cases
show the host cost, larger ones the kernels.

    python scripts/grouped_train_step.py [OUT.json]
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.timing import eager_ms
from warpgemm.testing import rel_error

CASES = [(8, 512, 512, 512), (32, 2048, 1024, 512), (8, 8192, 4096, 2048), (64, 32768, 2048, 1024)]  # G T K N


def main():
    rows = []
    for G, T, K, N in CASES:
        g = torch.Generator(device="cuda").manual_seed(G)
        x = torch.randn(T, K, device="cuda", generator=g).to(torch.bfloat16).requires_grad_()
        w = (torch.randn(G, N, K, device="cuda", generator=g) / K ** 0.5).to(torch.bfloat16)
        w = w.transpose(1, 2).detach().requires_grad_()  # (G, K, N), read along K
        # uneven groups, multiples of 16 tokens
        cuts = torch.sort(torch.randint(0, T // 16 + 1, (G - 1, ), device="cuda", generator=g)).values * 16
        offs = torch.cat([cuts, torch.tensor([T], device="cuda")]).to(torch.int32)
        dy = torch.randn(T, N, device="cuda", generator=g).to(torch.bfloat16)

        def step(fn):
            def run():
                x.grad = w.grad = None
                fn(x, w, offs).backward(dy)
            return run

        fns = {"warpgemm": step(warpgemm.grouped_mm), "torch": step(torch._grouped_mm)}
        grads = {}
        for name, fn in fns.items():
            fn()
            grads[name] = (x.grad.clone(), w.grad.clone())
        iters = max(20, min(400, int(2e12 / (6 * T * K * N))))
        for fn in fns.values():
            eager_ms(fn, 10)
        host, wall = {k: [] for k in fns}, {k: [] for k in fns}
        for r in range(5):
            for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                h, wl = eager_ms(fns[name], iters)
                host[name].append(h)
                wall[name].append(wl)
        xr = x.detach().float().requires_grad_()
        wr = w.detach().float().requires_grad_()
        ends = offs.tolist()
        outs, start = [], 0
        for e, gi in zip(ends, range(G)):
            outs.append(xr[start:e] @ wr[gi])
            start = e
        torch.cat(outs).backward(dy.float())
        row = {"G": G, "T": T, "K": K, "N": N, "iters": iters}
        for name in fns:
            row[name] = {"host_ms": statistics.median(host[name]), "wall_ms": statistics.median(wall[name]),
                         "dx_err": rel_error(grads[name][0], xr.grad), "dw_err": rel_error(grads[name][1], wr.grad)}
        row["wall_ratio"] = row["torch"]["wall_ms"] / row["warpgemm"]["wall_ms"]
        rows.append(row)
        print(f"G{G} T{T} K{K} N{N}: host us ours {row['warpgemm']['host_ms'] * 1e3:7.1f} torch "
              f"{row['torch']['host_ms'] * 1e3:7.1f} | wall ms ours {row['warpgemm']['wall_ms']:.4f} torch "
              f"{row['torch']['wall_ms']:.4f} ratio {row['wall_ratio']:.3f} | err dx {row['warpgemm']['dx_err']:.1e}"
              f"/{row['torch']['dx_err']:.1e} dw {row['warpgemm']['dw_err']:.1e}/{row['torch']['dw_err']:.1e}",
              flush=True)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
