"""Probe: module settings of the heuristics or the launch (a rule's threshold) compared in separate processes, ours
against torch.matmul in one process, as `bench mid` times (do_bench after an L2 flush) or back to back over cold
weight copies (--back-to-back's CUDA graphs).

    SET="warpgemm.kernels.hopper.gemm.WEIGHT_HINT_MAX_ROWS=512" \
        python3 scripts/setting_probe.py OUT.json MxNxK,MxNxK,... [flush|b2b] [rounds]

FRESH_TRITON_CACHE=1 compiles everything afresh in a temporary Triton cache (for settings that change a PTX pass but
not a kernel's constexprs: session 37 ran a policy fraction in ptx_hints this way, see git history).

LAYOUT=nn times B row-major (K, N) instead of W.T (setting_ab.sh passes it through).

SET: comma-separated module.attribute=value (a Python literal), applied before the first plan (plans and recipes are
cached per process, so run one process per setting and compare the ratios: cuBLAS is timed in each process, so each
carries its own baseline). scripts/setting_ab.sh alternates the processes. A name that another module imported by
value (`from .swap_rows import PLAIN_TILE_TIME`) is not reached by setting it on its own module.
"""
import ast
import importlib
import json
import os
import sys
import tempfile

if os.environ.get("FRESH_TRITON_CACHE") == "1":
    # Settings that change a PTX pass (not the kernel's constexprs) must not find binaries compiled under another.
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="triton-cache-")

import torch

from warpgemm.bench.gemm_bench import _time_case, environment
from warpgemm.bench.suites import GemmCase
from warpgemm.bench.timing import warm_gpu

settings = {}
for item in filter(None, os.environ.get("SET", "").split(",")):  # values with commas are not supported
    if "=" not in item or "." not in item.split("=", 1)[0]:
        raise SystemExit(f"SET: expected module.attribute=value, got {item!r}")
    target, value = item.split("=", 1)
    module, attr = target.rsplit(".", 1)
    mod = importlib.import_module(module)
    if not hasattr(mod, attr):
        raise SystemExit(f"SET: {module} has no attribute {attr}")
    setattr(mod, attr, ast.literal_eval(value))
    settings[target] = getattr(mod, attr)
out_path = sys.argv[1]
cases = [GemmCase(*(int(v) for v in s.split("x"))) for s in sys.argv[2].split(",")]
timing = sys.argv[3] if len(sys.argv) > 3 else "flush"
if timing not in ("flush", "b2b"):
    raise SystemExit(f"timing: expected flush or b2b, got {timing!r}")
b2b = timing == "b2b"
layout = os.environ.get("LAYOUT", "nt")  # nn: B row-major (K, N), as `bench --layout nn`
if layout not in ("nt", "nn"):
    raise SystemExit(f"LAYOUT: expected nt or nn, got {layout!r}")
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
warm_gpu(2.0)
res = []
for case in cases:
    r = _time_case(case, torch.bfloat16, layout, rounds, False, b2b)
    res.append(r)
    print(f"{settings or 'defaults'} {'b2b' if b2b else 'flush'} {case.label:>18} {r['config']:>34} "
          f"{r['ms'] * 1e3:8.1f} us  cuBLAS {r['ms_baseline'] * 1e3:8.1f} us  ratio {r['ratio']:.3f}", flush=True)
json.dump({"settings": settings, "label": os.environ.get("LABEL", ""), "back_to_back": b2b, "rounds": rounds,
           "layout": layout,
           "environment": environment(), "results": res}, open(out_path, "w"), indent=1)
