"""Which tile suits grouped_mm's 2-D x 2-D (weight-gradient) form? Every config the form accepts (shipped ones and
the sweep's candidates), forced, on `bench moe --wgrad`'s cases, against torch._grouped_mm in the same process
(do_bench after an L2 flush, alternating pairs). JSON to argv[1]; argv[2:] routing kinds (default skewed).
RAGGED_SWEEP_CONFIGS (comma-separated config names) limits the configs; RAGGED_SWEEP_ROUNDS sets the rounds (2)."""
import json
import os
import sys

import torch

import warpgemm
from warpgemm.bench.moe_bench import MOE_CASES, routing
from warpgemm.candidates import CANDIDATES
from warpgemm.bench.timing import alternate, warm_gpu
from warpgemm.config import check_config
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.ops.grouped_ragged_k import forced_config_problem, ragged_k_config


def main():
    kinds = sys.argv[2:] or ["skewed"]
    configs = [c for c in dict.fromkeys(SHIPPED_CONFIGS + CANDIDATES)
               if forced_config_problem(c) is None and check_config(c, torch.bfloat16, torch.bfloat16) is None]
    if os.environ.get("RAGGED_SWEEP_CONFIGS"):
        names = os.environ["RAGGED_SWEEP_CONFIGS"].split(",")
        configs = [c for c in configs if c.name in names]
    rounds = int(os.environ.get("RAGGED_SWEEP_ROUNDS", "2"))
    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES:
        x = torch.randn(case.tokens, case.K, device="cuda").to(torch.bfloat16)
        dy = torch.randn(case.tokens, case.N, device="cuda").to(torch.bfloat16)
        for kind in kinds:
            offs = torch.tensor(routing(case.experts, case.tokens, kind), device="cuda").cumsum(0).to(torch.int32)
            theirs = lambda: torch._grouped_mm(x.t(), dy, offs)  # noqa: E731
            auto = ragged_k_config(case.K, case.N, case.tokens, case.experts, x.dtype, x.dtype)[0]
            line = {}
            for cfg in configs:
                ours = lambda: warpgemm.grouped_mm(x.t(), dy, offs, config=cfg)  # noqa: E731
                t = alternate(ours, theirs, rounds=rounds, rep_ms=60)
                line[cfg.name] = t.ms_b / t.ms_a
                rows.append(dict(case=case.label, routing=kind, config=cfg.name, auto=cfg == auto, ms=t.ms_a,
                                 ms_grouped_mm=t.ms_b, ratio=t.ms_b / t.ms_a))
            best = max(line, key=line.get)
            print(f"{case.label:26s} {kind:8s} auto {auto.name} {line[auto.name]:.3f}  best {best} {line[best]:.3f}  "
                  + " ".join(f"{v:.2f}" for v in line.values()), flush=True)
    print("configs:", [c.name for c in configs])
    with open(sys.argv[1], "w") as f:
        json.dump(dict(device=torch.cuda.get_device_name(), rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
