"""fp8 tile sweep: forced scaled_mm configs against torch._scaled_mm(use_fast_accum=True) on chosen shapes, in
alternating rounds in one process (what the fp8 heuristics rest on; notes/perf.md).

    python scripts/fp8_sweep.py OUT.json [ROUNDS]
"""
import json
import sys

import torch

import warpgemm
from warpgemm.bench.fp8_bench import make_fp8_operands
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import bench_ms, warm_gpu
from warpgemm.config import GemmConfig as C, check_config
from warpgemm.heuristics import choose_fp8_config

SHAPES = [(2048, 2048, 2048), (1024, 4096, 4096), (1024, 14336, 4096), (4096, 28672, 8192), (16384, 4096, 4096),
          (128, 4096, 4096), (128, 4096, 14336), (128, 8192, 8192), (256, 14336, 4096), (256, 8192, 28672),
          (1, 4096, 4096), (16, 4096, 4096), (64, 4096, 14336), (64, 14336, 4096)]
BIG = [C(128, 256, 128, 4, 8, store_chunks=4), C(128, 256, 128, 4, 8, group_m=16, store_chunks=4),
       C(128, 256, 128, 3, 8), C(128, 256, 128, 3, 8, store_chunks=2), C(256, 128, 128, 4, 8, store_chunks=4),
       C(128, 128, 128, 6, 4), C(128, 128, 128, 5, 4, consumers=2), C(128, 256, 64, 6, 8, store_chunks=4)]
MID = [C(128, 128, 128, 6, 4), C(64, 128, 128, 8, 4), C(64, 64, 256, 6, 4), C(64, 128, 256, 4, 4),
       C(64, 256, 128, 6, 4), C(128, 128, 128, 6, 4, split_k=2)]
DECODE = [C(64, 16, 256, 8, 4, swap_ab=True), C(64, 16, 256, 5, 4, swap_ab=True),
          C(32, 16, 256, 8, 4, swap_ab=True), C(64, 32, 256, 8, 4, swap_ab=True),
          C(64, 64, 256, 6, 4, swap_ab=True), C(64, 128, 256, 5, 4), C(64, 64, 256, 6, 4)]


def main():
    out, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
    warm_gpu(3.0)
    rows = []
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for M, N, K in SHAPES:
        a, b, sa, sb = make_fp8_operands(M, N, K, "tensorwise")
        cands = DECODE if M <= 64 else MID if M <= 512 and M < 1024 else BIG
        chosen, _ = choose_fp8_config(M, N, K, torch.bfloat16, sms)
        cands = [c for c in dict.fromkeys([chosen] + cands) if check_config(c, a.dtype, torch.bfloat16) is None]
        fns = {}
        for c in cands:
            fn = (lambda c=c: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, config=c))
            try:
                fn()
                fns[c.name] = fn
            except Exception as e:  # a variant that does not compile or launch is reported, not timed
                print(f"  {c.name}: {type(e).__name__}: {str(e)[:200]}", flush=True)
        fns["torch"] = lambda: torch._scaled_mm(a, b, sa, sb, out_dtype=torch.bfloat16, use_fast_accum=True)
        times = {k: [] for k in fns}
        for _ in range(rounds):
            for k, f in fns.items():
                times[k].append(bench_ms(f))
        med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
        for k in fns:
            if k == "torch":
                continue
            rows.append(dict(shape=f"{M}x{N}x{K}", config=k, chosen=k == chosen.name, ms=med[k], ms_torch=med["torch"],
                             ratio=med["torch"] / med[k]))
        best = max((r for r in rows if r["shape"] == f"{M}x{N}x{K}"), key=lambda r: r["ratio"])
        print(f"{M}x{N}x{K}: chosen {chosen.name} {med['torch'] / med[chosen.name]:.3f}; best {best['config']} "
              f"{best['ratio']:.3f}", flush=True)
    json.dump(dict(environment=environment(), rounds=rounds, rows=rows), open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
