"""Does a GEMM at the 700 W cap run faster when some rows of A are zero? (the price of padded MMA rows)

    python3 scripts/zero_rows_probe.py OUT.json [MxNxK ...]

A grouped tile whose rows run past its group's end multiplies the next group's real rows and throws the result
away; TMA zero-fills rows past a tensor's end, so per-group bounds (the loop of matmuls, torch._grouped_mm) pay
for such rows with zero operands. If zero operands cost the tensor cores little energy, padded rows cost a capped
GEMM little time only when they are zero. Here A keeps the last `z` of every 128 rows at zero (z = 0, 16, 64, 128)
and each side runs back to back for a few seconds while nvidia-smi samples clock and power (clock_probe.py).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from clock_probe import sustained  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402


def main():
    out_path = sys.argv[1]
    shapes = sys.argv[2:] or ["8192x8192x8192"]
    rows = []
    warm_gpu(3.0)
    for shape in shapes:
        M, N, K = map(int, shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(0)
        a0 = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
        for zero in (0, 16, 64, 128):
            a = a0.clone()
            a.view(M // 128, 128, K)[:, 128 - zero:, :] = 0
            ours, theirs = (lambda: warpgemm.linear(a, w)), (lambda: torch.nn.functional.linear(a, w))
            for side, fn in (("warpgemm", ours), ("cublas", theirs), ("warpgemm", ours)):
                row = {"shape": shape, "zero_rows_per_128": zero, "side": side,
                       **sustained(fn, 2 * M * N * K, 2.0)}
                rows.append(row)
                print(f"{shape} zero {zero:3d}/128 {side:8s} {row['tflops']:6.1f} TF/s  {row['sm_clock_mhz']} MHz "
                      f"{row['power_w']} W", flush=True)
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    with open(out_path, "w") as f:
        json.dump({"probe": "zero_rows", "environment": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
