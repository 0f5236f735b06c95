"""The eager column of `bench decode` on the 4096^2 weight, M = 1-64, twice in one process (so each M runs at two
positions), with Python's garbage collector on and then off; and each M's host time per call (warpgemm.linear and
F.linear, 2000 calls issued back to back: the time to issue them, and until the GPU has finished them).
    python scripts/eager_decode_probe.py OUT.json"""
import gc
import json
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.decode_bench import run_decode_suite
from warpgemm.bench.timing import eager_ms

cases = [(m, 4096, 4096) for m in (1, 4, 16, 32, 64)] * 2
out = {}
for label in ("gc_on", "gc_off"):
    if label == "gc_off":
        gc.collect()
        gc.disable()
    res = run_decode_suite(rounds=2, cases=cases, eager=True, warmup_s=2.0, progress=lambda s: None)
    out[label] = [{k: r[k] for k in ("shape", "config", "us", "us_baseline", "eager_us", "eager_us_baseline")}
                  for r in res["results"]]
    for r in out[label]:
        print(label, r["shape"], r["config"], f"graph {r['us']:.2f} eager {r['eager_us']:.2f} "
              f"(F.linear {r['eager_us_baseline']:.2f})", flush=True)
gc.enable()
host = []
for m in (1, 4, 16, 32, 64):
    x, w = torch.randn(m, 4096, device="cuda", dtype=torch.bfloat16), torch.randn(4096, 4096, device="cuda",
                                                                                   dtype=torch.bfloat16)
    for name, fn in (("warpgemm", lambda: warpgemm.linear(x, w)), ("F.linear", lambda: F.linear(x, w))):
        fn()
        issue, wall = eager_ms(fn, 2000)
        host.append({"M": m, "fn": name, "issue_us": issue * 1e3, "wall_us": wall * 1e3})
        print(f"host M={m} {name}: issue {issue * 1e3:.2f} us/call, wall {wall * 1e3:.2f} us/call", flush=True)
out["host"] = host
json.dump(out, open(sys.argv[1], "w"), indent=1)
