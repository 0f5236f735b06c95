"""How swap_rows.py's wave model sorts measured shapes: for each shape of the given probe results (swap_rows_probe.py
JSON: "rule" against "rule off"; off_sector_probe.py JSON with forced swap configs: the fitted width against
"heuristics"), the measured gain of the swap tile over the plain plan and the model's prediction, and the geomean of
the gains it would keep and drop. No GPU needed.

    python scripts/swap_rows_fit.py results/2026-11-26-swap-rows/first_rule_heldout_41.json ... [--swap 1.3]
"""
from __future__ import annotations

import argparse
import json
import math

from warpgemm import swap_rows
from warpgemm.candidates import parse_config

SMS = 132


def measured(paths):
    """(M, N, K, gain, plain config name) per shape."""
    for path in paths:
        by = {}
        for r in json.load(open(path))["rows"]:
            by.setdefault(r["shape"], {})[r["variant"]] = r
        for shape, v in by.items():
            M, N, K = (int(x) for x in shape.split("x"))
            if "rule" in v:
                yield M, N, K, v["rule off"]["ms"] / v["rule"]["ms"], v["rule off"]["config"]
            else:
                fitted = swap_rows.SWAP_ROWS[swap_rows.rows_fit(M)[1]].name
                if fitted in v:
                    yield M, N, K, v["heuristics"]["ms"] / v[fitted]["ms"], v["heuristics"]["config"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json", nargs="+")
    ap.add_argument("--swap", type=float, default=swap_rows.SWAP_TILE_TIME, help="swap tile-time per element")
    args = ap.parse_args()
    swap_rows.SWAP_TILE_TIME = args.swap
    kept, dropped = [], []
    for M, N, K, gain, plain in sorted(measured(args.json)):
        cfg = parse_config(plain.split("+")[0])
        parts, width = swap_rows.rows_fit(M)
        theirs, ours = swap_rows.plain_time(cfg, M, N, SMS), swap_rows.swap_time(parts, width, N, SMS)
        keep = ours <= theirs and not (cfg.block_n >= 256 and M > swap_rows.SWAP_ROWS_LARGE_MAX_M)
        (kept if keep else dropped).append(gain)
        print(f"{M:5d}x{N}x{K:<6d} gain {gain:.3f} predicted {theirs / ours:.2f} {'kept' if keep else '    '} {plain}")
    for name, gains in (("kept", kept), ("dropped", dropped)):
        if gains:
            geo = math.exp(sum(math.log(g) for g in gains) / len(gains))
            print(f"{name}: {len(gains)} shapes, geomean gain {geo:.3f}, {sum(g > 1 for g in gains)} ahead")


if __name__ == "__main__":
    main()
