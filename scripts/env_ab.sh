#!/usr/bin/env bash
# Environment settings compared in alternating processes, back to back in CUDA graphs (scripts/graph_mid_probe.py:
# one call per cold weight copy, ours against F.linear in the same process).
#   AB_MODES="base:WARPGEMM_PDL=1 late:WARPGEMM_PDL_TRIGGER=late" bash scripts/env_ab.sh "$OUT"
# Each mode is label:VAR=value[,VAR=value...]; each is run $AB_REPS times in turn.
# Cases: M in $AB_M x (N, K) in $AB_SHAPES ("NxK,NxK"), plus $AB_EXTRA ("MxNxK,...": more single cases).
source "$(dirname "$0")/gpu_env.sh" "$@"
modes=${AB_MODES:?set AB_MODES}
for rep in $(seq "${AB_REPS:-2}"); do
    for mode in $modes; do
        label=${mode%%:*}
        IFS=, read -ra assigns <<< "${mode#*:}"
        env "${assigns[@]}" timeout "${AB_TIMEOUT:-250}" $py scripts/graph_mid_probe.py "$out/ab-${label}_run${rep}.json" \
            "${AB_M:-4,16,64}" auto "${AB_SHAPES:-4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672}" \
            "${AB_EXTRA:-}" > "$out/ab-${label}_run${rep}.log" 2>&1 || tail -5 "$out/ab-${label}_run${rep}.log"
    done
done
$py - "$out" $(for m in $modes; do echo "${m%%:*}"; done) <<'PY'
import glob, json, math, sys
out, labels = sys.argv[1], sys.argv[2:]
rows = {}
for lbl in labels:
    for f in sorted(glob.glob(f"{out}/ab-{lbl}_run*.json")):
        for r in json.load(open(f))["results"]:
            rows.setdefault(r["shape"], {}).setdefault(lbl, []).append((r["tbs"], r["ratio"]))
print(f"{'shape':>16}  " + "  ".join(f"{lbl + ' TB/s (ratio)':<24}" for lbl in labels))
for shape, d in rows.items():
    cell = lambda m: " ".join(f"{t:.2f}({q:.3f})" for t, q in d.get(m, []))
    print(f"{shape:>16}  " + "  ".join(f"{cell(m):<24}" for m in labels))
for lbl in labels:
    logs = [math.log(max(q for _, q in d[lbl])) for d in rows.values() if lbl in d]
    print(f"{lbl}: geomean of best ratio {math.exp(sum(logs) / max(len(logs), 1)):.4f} over {len(logs)} shapes")
PY
