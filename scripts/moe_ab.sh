#!/usr/bin/env bash
# `bench moe` for a committed revision against the working tree, in alternating processes (each against
# torch._grouped_mm in its own process), then a per-case table of both.
#   git archive --prefix=base/ HEAD warpgemm | tar -x -C .ab   # the revision to compare with, untracked
#   MOE_REPS=2 bash scripts/moe_ab.sh "$OUT"                   # .ab/base/warpgemm vs ./warpgemm
source "$(dirname "$0")/gpu_env.sh" "$@"
here=$PWD
for rep in $(seq "${MOE_REPS:-2}"); do
    for side in base work; do
        root=$here; [ "$side" = base ] && root=$here/.ab/base
        PYTHONPATH=$root timeout "${MOE_LIMIT:-240}" $py -m warpgemm bench moe --rounds "${MOE_ROUNDS:-2}" \
            ${MOE_ARGS:-} --json "$out/moe_${side}_run${rep}.json" > "$out/moe_${side}_run${rep}.log" 2>&1 \
            || tail -5 "$out/moe_${side}_run${rep}.log"
    done
done
$py - "$out" <<'PY'
import glob, json, math, sys
out = sys.argv[1]
rows = {}
for side in ("base", "work"):
    for f in sorted(glob.glob(f"{out}/moe_{side}_run*.json")):
        for r in json.load(open(f))["results"]:
            rows.setdefault((r["case"], r["routing"]), {}).setdefault(side, []).append(r["ratio_vs_grouped_mm"])
print(f"{'case':>26} {'routing':>8}  {'base ratio':>14}  {'work ratio':>14}")
gm = {"base": [], "work": []}
for (case, routing), d in rows.items():
    if all(d.get(side) for side in gm):  # a case some run did not reach counts for neither side
        for side in gm:
            gm[side].append(sum(math.log(v) for v in d[side]) / len(d[side]))
    print(f"{case:>26} {routing:>8}  " + "  ".join(f"{' '.join(f'{v:.3f}' for v in d.get(s, [])):>14}"
                                                  for s in ("base", "work")))
print("geomean vs torch._grouped_mm: " + "  ".join(f"{s} {math.exp(sum(v) / max(len(v), 1)):.3f} ({len(v)} cases)"
                                                  for s, v in gm.items()))
PY
