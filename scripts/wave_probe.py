"""Probe: does a problem's time follow its bytes/FLOPs, or its waves of tiles? Times N = one wave, N of a suite
shape, and N = two waves of the heuristic's tile, for decode rows (CUDA graphs, cold weights) and mid rows.

    PYTHONPATH=. python3 scripts/wave_probe.py [json]

If time(suite N) is close to time(two waves) rather than in proportion to N, the last, partly filled wave costs a
whole wave: a schedule that spreads the tail's K steps over all SMs would gain.
"""
import json
import sys

import torch

import warpgemm
from warpgemm import _env
from warpgemm.bench.decode_bench import run_decode_suite
from warpgemm.bench.timing import alternate, warm_gpu

sms = _env.num_sms(0)
rows = []
# Decode: 64-row weight tiles, so one wave is 64 * sms rows of the weight.
decode_cases = [(m, n, 4096) for m in (1, 64) for n in (64 * sms, 14336, 128 * sms)]
res = run_decode_suite(rounds=2, rep_ms=60, warmup_s=1.0, eager=False, cases=decode_cases,
                       progress=lambda s: print(s, flush=True))
rows += [dict(r, kind="decode") for r in res["results"]]
# Mid: M = 256 with 128x128 tiles (2 row tiles): one wave is 64 * sms columns.
warm_gpu(1.0)
for m, n, k in [(256, 64 * sms, 4096), (256, 14336, 4096), (256, 128 * sms, 4096)]:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    t = alternate(lambda: warpgemm.matmul(a, w.t()), lambda: torch.matmul(a, w.t()), rounds=3, rep_ms=60)
    cfg, _ = warpgemm.choose_config(1, m, n, k, torch.bfloat16, torch.bfloat16, sms)
    row = {"kind": "mid", "shape": f"{m}x{n}x{k}", "N": n, "config": cfg.name, "us": t.ms_a * 1e3,
           "us_baseline": t.ms_b * 1e3, "ratio": t.ms_b / t.ms_a, "us_per_1k_cols": t.ms_a * 1e6 / n}
    rows.append(row)
    print(f"mid {row['shape']:>16} {cfg.name:>24} {row['us']:7.1f} us (cuBLAS {row['us_baseline']:7.1f}) "
          f"{row['us_per_1k_cols']:.2f} us per 1k columns", flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)
