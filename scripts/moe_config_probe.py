"""Probe: grouped_mm configs on the MoE cases, each against torch._grouped_mm in the same process.

    PYTHONPATH=. python3 scripts/moe_config_probe.py [json]
    CONFIGS=128x256x64_s3_w8_g8,128x128x128_s3_w4_g8 ROUTINGS=uniform CASES=3,4 python3 scripts/moe_config_probe.py
    CONFIGS=auto,...    # "auto": grouped_mm's own choice (no config forced)
    EXTRA=64:256:2048:1408,8:64:4096:14336 CASES= ...   # more cases (experts:tokens:K:N), e.g. decode-time MoE
"""
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.moe_bench import MOE_CASES, MoeCase, routing
from warpgemm.candidates import parse_config
from warpgemm.bench.timing import alternate, warm_gpu

CONFIGS = os.environ.get("CONFIGS", "64x128x64_s8_w4_g8,128x128x64_s6_w4_g8,128x256x64_s3_w8_g8,64x256x64_s4_w4_g8,"
                                    "128x128x64_s5_w4_g8_pp")
configs = [None if c == "auto" else parse_config(c) for c in CONFIGS.split(",")]
cases = [MOE_CASES[int(i)] for i in os.environ.get("CASES", "3,4,5,6,7").split(",") if i]
cases += [MoeCase(*(int(v) for v in c.split(":"))) for c in os.environ.get("EXTRA", "").split(",") if c]
routings = os.environ.get("ROUTINGS", "skewed").split(",")
warm_gpu(2.0)
rows = []
for case in cases:
    a = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
    b = torch.randn(case.experts, case.N, case.K, device="cuda").to(torch.bfloat16).transpose(1, 2)
    for how in routings:
        offs = torch.tensor(routing(case.experts, case.tokens, how), device="cuda").cumsum(0).to(torch.int32)
        want = torch._grouped_mm(a, b, offs)
        cells = []
        for cfg in configs:
            got = warpgemm.grouped_mm(a, b, offs, config=cfg)
            name = "auto" if cfg is None else cfg.name
            assert torch.equal(got, want) or (got.float() - want.float()).abs().max() < 1e-1, name
            t = alternate(lambda: warpgemm.grouped_mm(a, b, offs, config=cfg), lambda: torch._grouped_mm(a, b, offs),
                          rounds=2, rep_ms=60)
            weight_tbs = case.experts * case.K * case.N * 2 / (t.ms_a * 1e-3) / 1e12
            rows.append({"case": case.label, "routing": how, "config": name, "ms": t.ms_a,
                         "ms_grouped_mm": t.ms_b, "ratio": t.ms_b / t.ms_a, "weight_tb_s": weight_tbs})
            cells.append(f"{name}={t.ms_b / t.ms_a:.3f}({weight_tbs:.2f}TB/s)")
        print(f"{case.label} {how}: " + " ".join(cells), flush=True)
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump(rows, f, indent=1)
