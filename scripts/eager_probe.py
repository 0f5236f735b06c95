"""`bench decode`'s eager column taken apart: for each row count, the do_bench time of the loop over the weight
copies (what the column reports), the host time to issue that loop (after a sync, no flush), and the loop timed
back to back without L2 flushes; ours against F.linear in the same process.

    python scripts/eager_probe.py [M,M,...] [N K] [OUT.json]
"""
import json
import sys

import torch

from warpgemm.bench.decode_bench import linear_loops, weight_copies
from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import alternate, eager_ms, warm_gpu


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

        ours, theirs = linear_loops(x, weights)
        for fn in (ours, theirs):
            for _ in range(50):
                fn()
        e = alternate(ours, theirs, rounds=3)
        row = {"M": m, "N": n, "K": k, "copies": copies,
               "eager_us": e.ms_a * 1e3 / copies, "eager_us_baseline": e.ms_b * 1e3 / copies,
               "issue_us": min(eager_ms(ours, 20)[0] for _ in range(3)) * 1e3 / copies,
               "issue_us_baseline": min(eager_ms(theirs, 20)[0] for _ in range(3)) * 1e3 / copies}
        row["eager_ratio"] = row["eager_us_baseline"] / row["eager_us"]
        rows.append(row)
        print(f"M={m:>3} {n}x{k}: eager {row['eager_us']:6.2f} vs {row['eager_us_baseline']:6.2f} us "
              f"(ratio {row['eager_ratio']:.3f}); host issue {row['issue_us']:6.2f} vs "
              f"{row['issue_us_baseline']:6.2f} us per call", flush=True)
    if out_path:
        json.dump({"environment": environment(), "results": rows}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
