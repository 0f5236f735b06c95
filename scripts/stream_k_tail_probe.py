"""Probe: does stream-K pay on dense shapes whose last wave of 128x256 tiles is partly filled?

    PYTHONPATH=. python3 scripts/stream_k_tail_probe.py OUT.json [MxNxK ...]

Reading (session 27, scripts/tile_timeline_probe.py): on 8192^3 and the other many-wave dense shapes every program
runs at the same speed (tile times within 1%), but the last wave holds 4-76 of 132 tiles, so ~3% of the kernel's
SM-time idles at the end; a tile of that wave runs only 6-10% faster than a full wave's. Stream-K gives every
program the same number of K steps. Forced here on the heuristics' tile (the whole product in stream-K order, which
also gives up the band order's L2 sharing): if even that keeps up with whole tiles, stream-K over the last wave
alone would gain. Timed as `bench dense` times (do_bench after an L2 flush, alternating rounds), cuBLAS alongside.
"""
import dataclasses
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.config import GemmConfig

sys.path.insert(0, os.path.dirname(__file__))
from tile_timeline_probe import weight_product  # noqa: E402

DEFAULT = ["8192x8192x8192", "16384x4096x14336", "4096x14336x4096", "16384x8192x8192", "4096x4096x14336",
           "1024x28672x8192", "512x14336x4096", "1024x14336x4096", "256x28672x8192", "512x28672x8192"]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "stream_k_tail.json"
    shapes = [tuple(int(v) for v in s.split("x")) for s in (sys.argv[2:] or DEFAULT)]
    warm_gpu(3.0)
    rows = []
    print(f"{'shape':>18} {'whole':>8} {'streamk':>8} {'cuBLAS':>8} {'sk/whole':>8} {'whole/cu':>8}")
    for M, N, K in shapes:
        a, w, cfg = weight_product(M, N, K)
        try:
            sk = dataclasses.replace(cfg, stream_k=True)
            warpgemm.explain(a, w.T, config=sk)
        except ValueError:
            sk = GemmConfig(128, 256, 64, stages=3, consumer_warps=8, group_m=16, stream_k=True)
        ref = torch.matmul(a.float(), w.T.float())
        err = ((warpgemm.matmul(a, w.T, config=sk).float() - ref).norm() / ref.norm()).item()
        fns = {"whole": lambda: warpgemm.matmul(a, w.T), "streamk": lambda: warpgemm.matmul(a, w.T, config=sk),
               "cublas": lambda: torch.matmul(a, w.T)}
        for fn in fns.values():
            fn()
        t = rounds_ms(fns, rounds=3, rep_ms=150)
        med = {k: sorted(v)[1] for k, v in t.items()}
        print(f"{M}x{N}x{K:>6} {med['whole'] * 1e3:8.1f} {med['streamk'] * 1e3:8.1f} {med['cublas'] * 1e3:8.1f} "
              f"{med['whole'] / med['streamk']:8.3f} {med['cublas'] / med['whole']:8.3f} {sk.name} err {err:.1e}",
              flush=True)
        rows.append({"shape": f"{M}x{N}x{K}", "plan": warpgemm.explain(a, w.T), "streamk": sk.name,
                     "rounds_ms": t, "median_ms": med,
                     "streamk_rel_err": err})
    with open(out, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
