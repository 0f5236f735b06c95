"""Shared driver of the decode probes (gemv_probe.py, dot_gemv_probe.py): candidate kernels against warpgemm.linear
and F.linear on the six decode weights, timed as `bench decode` times (CUDA-graph replay of one call per cold weight
copy, copies overflow L2), two rounds in alternating order. Each candidate is checked against fp32 first."""
import json

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.decode_bench import weight_copies
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.suites import LLM_NK
from warpgemm.bench.timing import graph_rounds_us, warm_gpu


def run_probe(name: str, candidates, ms, out_path: str, shapes=LLM_NK) -> list[dict]:
    """candidates(m, n, k) -> {label: launch(x, w, y)}: the kernels to try for one shape."""
    warm_gpu(2.0)
    rows = []
    for n, k in shapes:
        copies = weight_copies(n * k * 2)
        weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
        for m in ms:
            x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
            y = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            ref = F.linear(x.float(), weights[0].float())
            kernels = {}
            for label, launch in candidates(m, n, k).items():
                y.fill_(float("nan"))
                launch(x, weights[0], y)
                err = ((y.float() - ref).norm() / ref.norm()).item()
                assert err < 1e-2, (label, m, n, k, err)
                kernels[label] = lambda launch=launch: [launch(x, w, y) for w in weights]
            kernels["warpgemm.linear"] = lambda: [warpgemm.linear(x, w) for w in weights]
            kernels["F.linear"] = lambda: [F.linear(x, w) for w in weights]
            nbytes = (n * k + m * k + m * n) * 2
            for label, ts in graph_rounds_us(kernels, per_call=copies).items():
                rows.append({"M": m, "N": n, "K": k, "kernel": label, "us": min(ts), "rounds_us": ts,
                             "tbs": nbytes / (min(ts) * 1e-6) / 1e12})
            named = {r["kernel"]: r for r in rows if (r["M"], r["N"], r["K"]) == (m, n, k)}
            others = " ".join(f"{lbl}={r['tbs']:.2f}" for lbl, r in named.items()
                              if lbl not in ("warpgemm.linear", "F.linear"))
            print(f"{m:>2}x{n}x{k}: warpgemm {named['warpgemm.linear']['tbs']:.3f}  F.linear "
                  f"{named['F.linear']['tbs']:.3f} TB/s  {others}", flush=True)
        del weights
        torch.cuda.empty_cache()
    json.dump({"probe": name, "environment": environment(), "results": rows}, open(out_path, "w"), indent=1)
    return rows
