"""The pieces of a mixture-of-experts layer's training step (scripts/grouped_train_step.py), ours against
torch._grouped_mm's, each alone without autograd: forward x @ W[g], dX = dY @ W[g]^T, dW[g] = x_g^T dY_g; and our
step's extra pass (_zero_past_end on dX). Wall ms per call of back-to-back calls (GPU-bound at these sizes),
median of 5 alternating rounds.

    python scripts/grouped_step_pieces.py [OUT.json]
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.timing import eager_ms
from warpgemm.ops.grouped import _zero_past_end

CASES = [(8, 8192, 4096, 2048), (64, 32768, 2048, 1024)]  # G T K N


def main():
    rows = []
    for G, T, K, N in CASES:
        g = torch.Generator(device="cuda").manual_seed(G)
        x = torch.randn(T, K, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(G, N, K, device="cuda", generator=g).to(torch.bfloat16).transpose(1, 2)
        cuts = torch.sort(torch.randint(0, T // 16 + 1, (G - 1, ), device="cuda", generator=g)).values * 16
        offs = torch.cat([cuts, torch.tensor([T], device="cuda")]).to(torch.int32)
        dy = torch.randn(T, N, device="cuda", generator=g).to(torch.bfloat16)
        dx = torch.randn(T, K, device="cuda", generator=g).to(torch.bfloat16)
        pieces = {
            "forward": ((x, w), {}),
            "dX": ((dy, w.transpose(1, 2)), {}),
            "dW": ((x.t(), dy), {}),
        }
        row = {"G": G, "T": T, "K": K, "N": N}
        for name, (args, kw) in pieces.items():
            fns = {"warpgemm": lambda: warpgemm.grouped_mm(*args, offs),
                   "torch": lambda: torch._grouped_mm(*args, offs)}
            times = {k: [] for k in fns}
            for fn in fns.values():
                eager_ms(fn, 5)
            for r in range(5):
                for k in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
                    times[k].append(eager_ms(fns[k], 30)[1])
            row[name] = {k: statistics.median(v) for k, v in times.items()}
            print(f"G{G} T{T} K{K} N{N} {name:>8}: ours {row[name]['warpgemm']:.4f} ms torch "
                  f"{row[name]['torch']:.4f} ratio {row[name]['torch'] / row[name]['warpgemm']:.3f}", flush=True)
        eager_ms(lambda: _zero_past_end(dx, offs), 5)
        row["zero_past_end"] = statistics.median(eager_ms(lambda: _zero_past_end(dx, offs), 30)[1] for _ in range(3))
        print(f"G{G} T{T} K{K} N{N} zero_past_end {row['zero_past_end']:.4f} ms", flush=True)
        rows.append(row)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
