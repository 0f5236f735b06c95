"""`bench decode`'s eager column taken apart: for each row count, the do_bench time of the loop over the weight
copies (what the column reports), the host time to issue that loop (after a sync, no flush), and the loop timed
back to back without L2 flushes; ours against F.linear in the same process.

    python scripts/eager_probe.py [M,M,...] [N K] [OUT.json]
"""
import json
import sys
import time

import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.bench.decode_bench import weight_copies
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import alternate, warm_gpu


def issue_us(fn, loops=20):
    """Host time to issue `loops` calls of fn, from an idle GPU, per call of fn."""
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(loops):
        fn()
    us = (time.perf_counter() - start) * 1e6 / loops
    torch.cuda.synchronize()
    return us


def main():
    ms = [int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "4,16,64").split(",")]
    n, k = (int(sys.argv[2]), int(sys.argv[3])) if len(sys.argv) > 3 else (4096, 4096)
    out_path = sys.argv[4] if len(sys.argv) > 4 else None
    warm_gpu(2.0)
    copies = weight_copies(n * k * 2)
    weights = [torch.randn(n, k, device="cuda", dtype=torch.bfloat16) for _ in range(copies)]
    rows = []
    for m in ms:
        x = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)

        def ours():
            for w in weights:
                warpgemm.linear(x, w)

        def theirs():
            for w in weights:
                F.linear(x, w)

        for fn in (ours, theirs):
            for _ in range(50):
                fn()
        e = alternate(ours, theirs, rounds=3)
        row = {"M": m, "N": n, "K": k, "copies": copies,
               "eager_us": e.ms_a * 1e3 / copies, "eager_us_baseline": e.ms_b * 1e3 / copies,
               "issue_us": min(issue_us(ours) for _ in range(3)) / copies,
               "issue_us_baseline": min(issue_us(theirs) for _ in range(3)) / copies}
        row["eager_ratio"] = row["eager_us_baseline"] / row["eager_us"]
        rows.append(row)
        print(f"M={m:>3} {n}x{k}: eager {row['eager_us']:6.2f} vs {row['eager_us_baseline']:6.2f} us "
              f"(ratio {row['eager_ratio']:.3f}); host issue {row['issue_us']:6.2f} vs "
              f"{row['issue_us_baseline']:6.2f} us per call", flush=True)
    if out_path:
        json.dump({"environment": environment(), "results": rows}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
