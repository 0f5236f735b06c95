"""Does a grouped GEMM's time follow rounds of tiles (the persistent grid's last, partly filled round costing a
whole tile-time) or its work? Eight experts, K = 14336, N = 4096 (16 column tiles of 256): routings with 131, 132
and 133 row tiles of 128 give 2096, 2112 (exactly 16 rounds on 132 SMs) and 2128 tiles (16 rounds + 16 tiles).
Prints us per call, TFLOP/s, and the time of each routing relative to 132 row tiles, beside its work ratio and its
rounds ratio. Also times torch._grouped_mm and the loop of matmuls on the same routings.

    python scripts/grouped_wave_probe.py [out.json] [order, e.g. 133,132,131]
"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.timing import alternate, warm_gpu

K, N, E = 14336, 4096, 8
ROUTINGS = {  # row tiles: sum of ceil(rows / 128) over experts
    131: [6528, 1024, 128, 2432, 384, 256, 2048, 3968],
    132: [6528, 1024, 128, 2432, 384, 256, 2048, 3968 + 128],
    133: [6528, 1024, 128, 2432, 384, 256, 2048, 3968 + 256],
}


def main():
    torch.manual_seed(0)
    warm_gpu(3.0)
    w = torch.randn(E, N, K, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    rows = []
    order = [int(v) for v in sys.argv[2].split(",")] if len(sys.argv) > 2 else list(ROUTINGS)
    for tiles_m in order:
        sizes = ROUTINGS[tiles_m]
        assert sum(-(-s // 128) for s in sizes) == tiles_m
        T = sum(sizes)
        x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
        offs = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
        bounds = [0] + offs.tolist()
        ours = lambda: warpgemm.grouped_mm(x, w, offs)
        theirs = lambda: torch._grouped_mm(x, w, offs)
        loop = lambda: [x[bounds[i]:bounds[i + 1]] @ w[i] for i in range(E)]
        t = alternate(ours, theirs, rounds=3)
        t_loop = alternate(loop, theirs, rounds=2)
        rows.append(dict(tiles_m=tiles_m, tiles=tiles_m * N // 256, T=T, us=t.ms_a * 1e3, us_grouped_mm=t.ms_b * 1e3,
                         us_loop=t_loop.ms_a * 1e3, tflops=2 * T * K * N / t.ms_a / 1e9))
    base = next(r for r in rows if r["tiles_m"] == 132)
    for r in rows:
        r["time_vs_132"] = r["us"] / base["us"]
        r["work_vs_132"] = r["T"] / base["T"]
        r["rounds_vs_132"] = -(-r["tiles"] // 132) / 16
        print(f"{r['tiles_m']} row tiles ({r['tiles']} tiles): ours {r['us']:.1f} us ({r['tflops']:.0f} TF/s), "
              f"_grouped_mm {r['us_grouped_mm']:.1f}, loop {r['us_loop']:.1f}; time {r['time_vs_132']:.3f} vs work "
              f"{r['work_vs_132']:.3f} and rounds {r['rounds_vs_132']:.3f} of the 132-tile routing")
    if len(sys.argv) > 1:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), open(sys.argv[1], "w"), indent=1)


if __name__ == "__main__":
    main()
