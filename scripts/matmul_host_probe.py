"""Why `bench overhead` reads warpgemm.matmul(a, w.T) 4-9 us a call slower than torch.matmul at 256^3 while
warpgemm.linear(a, w, bias) is even with F.linear (results/2026-11-2[24]-*/gpu_check.log).

Checks whether repeated matmul calls hit the eager recipe cache (counts calls of the validation path), then
times each piece alone (host time to issue 200 calls from an idle GPU, best of 5) and prints a cProfile of the
matmul call.

    python scripts/matmul_host_probe.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import eager_ms, print_host_profile
from warpgemm.ops import api


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "matmul_host.json"
    n = 256
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    wt = w.T
    for _ in range(20):
        warpgemm.matmul(a, w.T)
        warpgemm.linear(a, w, bias)
        warpgemm.linear(a, w)

    calls = {"prepare": 0}
    real_prepare = api._prepare

    def counting_prepare(*args, **kw):
        calls["prepare"] += 1
        return real_prepare(*args, **kw)

    api._prepare = counting_prepare
    for _ in range(100):
        warpgemm.matmul(a, w.T)
    after_matmul = calls["prepare"]
    for _ in range(100):
        warpgemm.linear(a, w, bias)
    api._prepare = real_prepare
    key = api._recipe_key(a, wt, None, None, None)
    recipe = api._RECIPES.get(key)
    info = dict(prepare_calls_in_100_matmuls=after_matmul,
                prepare_calls_in_100_linears=calls["prepare"] - after_matmul,
                matmul_recipe=None if recipe is None else dict(out_shape=recipe.out_shape,
                                                               launch=type(recipe.launch).__name__,
                                                               config=getattr(getattr(recipe.launch, "cfg", None), "name",
                                                                              None)))
    print(info, flush=True)
    c = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    pieces = {
        "torch.matmul(a, w.T)": lambda: torch.matmul(a, w.T),
        "warpgemm.matmul(a, w.T)": lambda: warpgemm.matmul(a, w.T),
        "torch.matmul(a, wt)": lambda: torch.matmul(a, wt),
        "warpgemm.matmul(a, wt)": lambda: warpgemm.matmul(a, wt),
        "F.linear(a, w, bias)": lambda: F.linear(a, w, bias),
        "warpgemm.linear(a, w, bias)": lambda: warpgemm.linear(a, w, bias),
        "F.linear(a, w)": lambda: F.linear(a, w),
        "warpgemm.linear(a, w)": lambda: warpgemm.linear(a, w),
        "w.T": lambda: w.T,
        "recipe key (a, wt)": lambda: api._recipe_key(a, wt, None, None, None),
        "recipe key linear": lambda: ("linear", ) + api._recipe_key(a, w, bias, None, None),
        "a.new_empty": lambda: a.new_empty((n, n)),
        "matmul launch (prepared c)": (lambda: recipe.launch.launch(a, wt, c, None)) if recipe else (lambda: None),
        "is_compiling": lambda: torch.compiler.is_compiling(),
        "_needs_grad": lambda: api._needs_grad(a, wt, None),
    }
    rounds = {}
    for _ in range(5):
        for name, fn in pieces.items():
            for _ in range(20):
                fn()
            rounds.setdefault(name, []).append(eager_ms(fn, 200)[0] * 1e3)
    best = {k: min(v) for k, v in rounds.items()}
    for k, v in best.items():
        print(f"{k:>30}: {v:6.2f} us", flush=True)
    print_host_profile(lambda: warpgemm.matmul(a, w.T), 2000, rows=20)
    with open(out_path, "w") as f:
        json.dump(dict(environment=environment(), info=info, us_per_call=best, rounds=rounds), f, indent=1,
                  default=str)


if __name__ == "__main__":
    main()
