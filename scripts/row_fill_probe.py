"""Session 43's question: on tiles the edge-shift rule leaves alone (two warpgroups: 128x160, 128x192, 128x256 and
swap-AB two-part widths), does TMA's zero fill past A's last row (or the weight's, under swap-AB) cost the weak
512-1023-row LLM products their time? Per product, each launch planned under its own setting and called directly
(no per-call planning), in alternating rounds after an L2 flush:
  plan  - as shipped;
  tp    - gemm.EDGE_SHIFT_TWO_PART on (shifted edges for two-part widths too);
  any   - gemm.edge_shift's class test dropped (any warp-specialized whole-tile launch of one consumer partition,
          128x256 tiles included);
  padA  - the plan's config over A padded with rows of zeros to whole tile-rows (C padded alike): the fill made free;
  cublas - torch.matmul.
Each launch reads and writes in place (asserted) and is checked against an fp32 product.

    python scripts/row_fill_probe.py OUT.json --shapes MxNxK,... [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import statistics

import torch

from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.kernels.hopper import gemm
from warpgemm.ops import gemm_impl
from warpgemm.testing import rel_error

_shipped_edge_shift = gemm.edge_shift


def any_class_edge_shift(cfg, rows, cols, grouped=False, ragged_k=False):
    if grouped or ragged_k or cfg.stream_k or not cfg.warp_specialize or cfg.consumers != 1:
        return 0
    bits = 1 if cols > cfg.block_n and cols % cfg.block_n else 0
    if cfg.cluster_m == 1 and rows > cfg.block_m and rows % cfg.block_m:
        bits |= 2
    return bits


def planned(x, w, out, mode, cfg=None):
    gemm.EDGE_SHIFT_TWO_PART = mode == "tp"
    gemm.edge_shift = any_class_edge_shift if mode == "any" else _shipped_edge_shift
    gemm_impl.forget_plans()
    a3, b3, c3 = x.unsqueeze(0), w.t().unsqueeze(0), out.unsqueeze(0)
    p = gemm_impl.plan_hopper(a3, b3, c3, None, cfg, may_tune=False)
    assert not (p.a_copy or p.b_copy or p.c_staged), f"plan copies an operand: {p}"
    gemm.EDGE_SHIFT_TWO_PART, gemm.edge_shift = False, _shipped_edge_shift
    shift = max(k.constexprs.get("EDGE_SHIFT", 0) for k in gemm_impl._kernels(p.launch))
    return p, shift, lambda: p.launch.launch(a3, b3, c3, None)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    warm_gpu(2.0)
    rows = []
    for shape in args.shapes.split(","):
        M, N, K = (int(v) for v in shape.split("x"))
        x = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        ref = x.float() @ w.float().t()
        fns, outs, names, errs = {}, {}, {}, {}
        for mode in ("plan", "tp", "any"):
            outs[mode] = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
            p, shift, fns[mode] = planned(x, w, outs[mode], mode)
            names[mode] = f"{p.config.name}/shift{shift}"
        cfg = p.config
        rows_a = cfg.block_n if cfg.swap_ab else cfg.block_m  # x's rows lie on the tile's N side under swap-AB
        P = -(-M // rows_a) * rows_a
        xp = torch.zeros(P, K, device="cuda", dtype=torch.bfloat16)
        xp[:M] = x
        outs["padA"] = torch.full((P, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        _, shift, fns["padA"] = planned(xp, w, outs["padA"], "plan", cfg)
        names["padA"] = f"{cfg.name}/shift{shift}"
        for mode, f in fns.items():
            f()
            errs[mode] = rel_error(outs[mode][:M], ref)
        fns["cublas"] = lambda x=x, w=w: torch.matmul(x, w.t())
        t = {k: statistics.median(v) * 1e3 for k, v in rounds_ms(fns, args.rounds).items()}
        rows.append({"M": M, "N": N, "K": K, "configs": names, "us": t, "rel_error": errs})
        print(f"{shape:>16} {names['plan']:>30} {names['tp'][-6:]} {names['any'][-6:]} "
              + " ".join(f"{k} {v:7.1f}" for k, v in t.items()) + f"  err {max(errs.values()):.1e}", flush=True)
        json.dump({"environment": environment(), "rows": rows}, open(args.out, "w"), indent=1)
        del x, w, xp, outs


if __name__ == "__main__":
    main()
