"""The ragged-K form (grouped_mm 2-D x 2-D, the MoE weight gradient) against torch._grouped_mm in this process:
`bench moe --wgrad`'s cases plus two of many small groups, where the per-tile work of the scheduler (each group's
start read from offs) weighs the most. Run once per package version (PYTHONPATH) in alternating processes and
compare the ratios. JSON to argv[1]; argv[2] a label; argv[3] rounds (default 3).
"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.moe_bench import MOE_CASES, MoeCase, routing
from warpgemm.bench.timing import alternate, warm_gpu

# Many groups of few tokens: 64x128 tiles, up to 512 ends before a group's start.
EXTRA = [MoeCase(512, 16384, 512, 512), MoeCase(256, 8192, 1024, 256)]


def main():
    out, label = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    warm_gpu(2.0)
    rows = []
    for case in MOE_CASES + EXTRA:
        gen = torch.Generator(device="cuda").manual_seed(0)
        x = torch.randn(case.tokens, case.K, device="cuda", generator=gen).to(torch.bfloat16)
        dy = torch.randn(case.tokens, case.N, device="cuda", generator=gen).to(torch.bfloat16)
        for kind in ("skewed", "empty"):
            offs = torch.tensor(routing(case.experts, case.tokens, kind), device="cuda").cumsum(0).to(torch.int32)
            ours = warpgemm.grouped_mm(x.t(), dy, offs)
            ref = torch._grouped_mm(x.t(), dy, offs)
            err = ((ours.float() - ref.float()).norm() / ref.float().norm()).item()
            del ours, ref
            t = alternate(lambda: warpgemm.grouped_mm(x.t(), dy, offs), lambda: torch._grouped_mm(x.t(), dy, offs),
                          rounds=rounds)
            rows.append({"case": case.label, "routing": kind, "ms": t.ms_a, "ms_grouped_mm": t.ms_b,
                         "ratio": t.ms_b / t.ms_a, "rel_diff": err})
            print(f"{label} {case.label:>30} {kind:>7} {t.ms_a:8.4f} ms  ratio {t.ms_b / t.ms_a:.3f}  diff {err:.1e}",
                  flush=True)
        torch.cuda.empty_cache()
    json.dump({"label": label, "device": torch.cuda.get_device_name(), "rounds": rounds, "results": rows},
              open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
