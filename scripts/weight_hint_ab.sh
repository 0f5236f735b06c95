#!/usr/bin/env bash
# A/B of the weight loads' L2 evict-first hint (WARPGEMM_WEIGHT_HINT=0 against the default, 1), one process per
# setting and suite, settings alternating; each ratio is against torch in the same process.
#   OUT=dir SUITES="mid mid-b2b decode" RUNS=1 bash scripts/weight_hint_ab.sh
set -euo pipefail
OUT=${OUT:?set OUT to a results folder}
SUITES=${SUITES:-"mid mid-b2b"}
RUNS=${RUNS:-1}
export PYTHONPATH=${PYTHONPATH:-$PWD}
for run in $(seq 1 "$RUNS"); do
  for suite in $SUITES; do
    for h in 0 1; do
      case $suite in
        mid) args="mid --rounds 3" ;;
        mid-b2b) args="mid --back-to-back --rounds 2" ;;
        mid-nn) args="mid --layout nn --rounds 3" ;;
        mid-fp16) args="mid --dtype fp16 --rounds 3" ;;
        decode) args="decode --rounds 2" ;;
        small) args="small" ;;
        fp8-decode) args="fp8 --suite decode --rounds 2" ;;
        fp8-small) args="fp8 --suite small" ;;
        fp8-mid) args="fp8 --suite mid --rounds 3" ;;
        *) echo "unknown suite $suite" >&2; exit 2 ;;
      esac
      WARPGEMM_WEIGHT_HINT=$h python3 -m warpgemm bench $args --json "$OUT/${suite}_h${h}_r${run}.json" \
        > "$OUT/${suite}_h${h}_r${run}.log" 2>&1
    done
  done
done
python3 - "$OUT" <<'PY'
import glob, json, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*_h[01]_r*.json"))):
    d = json.load(open(f))
    suite, h, run = os.path.basename(f)[:-5].rsplit("_", 2)
    for r in d["results"]:
        rows.setdefault((suite, r["shape"]), {}).setdefault(h, []).append(r["ratio"])
    g = d.get("geomean_ratio")
    print(f"{suite:>10} {h} {run} geomean {g:.3f}" + (f" min TB/s >=64MB {d['min_tbs_large_weights']:.2f} "
          f"32MB {d['min_tbs_small_weights']:.2f}" if "min_tbs_large_weights" in d else ""))
for (suite, shape), v in rows.items():
    a, b = (sum(v.get(k, [0])) / max(len(v.get(k, [])), 1) for k in ("h0", "h1"))
    print(f"{suite:>10} {shape:>16} off {a:.3f} on {b:.3f} on/off {b / a if a else 0:.3f}")
PY
