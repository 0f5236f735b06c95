"""Host time of an eager `matmul(..., out=)` call with and without its recipe (the recorded plan that skips
validation and planning), in one process: the recipe is switched off by keying no out= call. Also the plain call
(no out=) and torch.matmul(..., out=) for reference. Shapes: 256^3 (host-bound) and 8x4096x4096 (a decode step).

    python scripts/out_recipe_probe.py OUT.json
"""
import json
import statistics
import sys

import torch

import warpgemm
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import eager_ms, print_host_profile
from warpgemm.ops import api


def main():
    out_path = sys.argv[1] if len(sys.argv) > 1 else "out_recipe.json"
    real_key = api._recipe_key

    def no_out_key(a, b, bias, out_dtype, config, out=None):
        return None if out is not None else real_key(a, b, bias, out_dtype, config)

    rows = {}
    for m, n, k in ((256, 256, 256), (8, 4096, 4096)):
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
        c, c_torch = torch.empty(m, n, device="cuda", dtype=torch.bfloat16), torch.empty(m, n, device="cuda",
                                                                                          dtype=torch.bfloat16)
        ref = a.float() @ w.float().T
        fns = {
            "warpgemm out= (recipe)": lambda: warpgemm.matmul(a, w.T, out=c),
            "warpgemm out= (no recipe)": lambda: warpgemm.matmul(a, w.T, out=c),
            "warpgemm (no out)": lambda: warpgemm.matmul(a, w.T),
            "torch.matmul out=": lambda: torch.matmul(a, w.T, out=c_torch),
        }
        times = {name: [] for name in fns}
        for r in range(5):
            for name, fn in (fns.items() if r % 2 == 0 else reversed(fns.items())):
                api._recipe_key = no_out_key if "no recipe" in name else real_key
                for _ in range(50):
                    fn()
                times[name].append(eager_ms(fn, 2000)[1] * 1e3)
        api._recipe_key = real_key
        c.fill_(float("nan"))
        warpgemm.matmul(a, w.T, out=c)
        err = ((c.float() - ref).norm() / ref.norm()).item()
        shape = f"{m}x{n}x{k}"
        rows[shape] = {name: {"median_us": statistics.median(t), "rounds_us": t} for name, t in times.items()}
        rows[shape]["rel_error_out_recipe"] = err
        print(shape, " ".join(f"{name}: {statistics.median(t):.1f} us" for name, t in times.items()),
              f"rel err {err:.1e}")
    print("profile of the out= call with its recipe (256^3):")
    a = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(256, 256, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16)
    print_host_profile(lambda: warpgemm.matmul(a, w.T, out=c), 3000, rows=12)
    with open(out_path, "w") as f:
        json.dump({"environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
