"""Are the fine-grained MoE cases held by the 700 W power cap? Power and SM clock while each side runs back to back.

    PYTHONPATH=. python3 scripts/moe_power_probe.py OUT.json [CASE_INDEX ...]   # indices into MOE_CASES (default 4)
    ONE_CONFIGS=64x256x64_s4_w4_g4 ROUTINGS=skewed python3 scripts/moe_power_probe.py ...  # more one-tile-half tiles

For each case and routing: grouped_mm (shipped dispatch), torch._grouped_mm, and the call's two halves alone (the
experts with at most 128 tokens, one row tile each, and the rest), the one-tile half also with the swap-AB tile
(tokens on wgmma's N side: no padded rows of 128). Each runs back to back for 2 s while nvidia-smi samples SM clock
and power (clock_probe.py). If the whole call sits at the cap with the clock below its maximum, time follows energy,
and padded MMA rows cost time even where the call streams weights.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from clock_probe import sample_while  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm.bench.gemm_bench import environment  # noqa: E402
from warpgemm.bench.moe_bench import MOE_CASES, routing  # noqa: E402
from warpgemm.candidates import parse_config  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402
from warpgemm.heuristics import GROUPED_SWAP  # noqa: E402

ONE_TILE = 128
ONE_CONFIGS = [parse_config(c) for c in os.environ.get("ONE_CONFIGS", "").split(",") if c]
ROUTINGS = os.environ.get("ROUTINGS", "skewed,uniform").split(",")


def offsets(counts):
    return torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)


def median(values):
    values = sorted(values)
    return values[len(values) // 2] if values else None


def main() -> None:
    out_path = sys.argv[1]
    cases = [MOE_CASES[int(i)] for i in (sys.argv[2:] or ["4"])]
    warm_gpu(2.0)
    rows = []
    for case in cases:
        a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
        b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
        for how in ROUTINGS:
            counts = routing(case.experts, case.tokens, how)
            one = [c if c <= ONE_TILE else 0 for c in counts]
            multi = [c if c > ONE_TILE else 0 for c in counts]
            offs, offs_one, offs_multi = offsets(counts), offsets(one), offsets(multi)
            fns = {"whole": (lambda: warpgemm.grouped_mm(a, b, offs), counts),
                   "torch": (lambda: torch._grouped_mm(a, b, offs), counts)}
            if any(multi) and any(one):
                fns["one auto"] = (lambda: warpgemm.grouped_mm(a, b, offs_one), one)
                fns["one swap"] = (lambda: warpgemm.grouped_mm(a, b, offs_one, config=GROUPED_SWAP), one)
                for cfg in ONE_CONFIGS:
                    fns[f"one {cfg.name}"] = (lambda cfg=cfg: warpgemm.grouped_mm(a, b, offs_one, config=cfg), one)
                fns["multi auto"] = (lambda: warpgemm.grouped_mm(a, b, offs_multi), multi)
            for name, (fn, used) in fns.items():
                calls, elapsed, samples = sample_while(fn, 2.0)
                s = elapsed / calls
                experts = sum(1 for c in used if c)
                weight_tbs = experts * case.K * case.N * 2 / s / 1e12
                tflops = 2 * sum(used) * case.K * case.N / s / 1e12
                row = {"case": case.label, "routing": how, "fn": name, "us": s * 1e6, "experts": experts,
                       "tokens": sum(used), "weight_tb_s": weight_tbs, "tflops": tflops,
                       "sm_clock_mhz": median([x[1] for x in samples]), "power_w": median([x[2] for x in samples]),
                       "reasons": median([x[3] for x in samples])}
                rows.append(row)
                print(f"{case.label} {how:7s} {name:24s} {row['us']:8.1f} us {weight_tbs:5.2f} TB/s {tflops:6.1f} "
                      f"TF/s  {row['sm_clock_mhz']} MHz {row['power_w']} W {row['reasons']}", flush=True)
        a = b = None
        torch.cuda.empty_cache()
    with open(out_path, "w") as f:
        json.dump({"probe": "moe_power", "environment": environment(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
