#!/usr/bin/env bash
# Module settings compared in alternating processes (scripts/setting_probe.py), after an L2 flush and/or back to back.
#   AB_MODES="base: hint512:warpgemm.kernels.hopper.gemm.WEIGHT_HINT_MAX_ROWS=512" AB_SHAPES="512x4096x4096,..." \
#   AB_TIMING="flush b2b" AB_REPS=2 bash scripts/setting_ab.sh "$OUT"
# Each mode is label:SET (SET as setting_probe.py takes it; empty for the defaults).
source "$(dirname "$0")/gpu_env.sh" "$@"
for timing in ${AB_TIMING:-flush}; do
    for rep in $(seq "${AB_REPS:-2}"); do
        for mode in ${AB_MODES:?set AB_MODES}; do
            [[ $mode == *:* ]] || { echo "AB_MODES: expected label:SET, got $mode" >&2; exit 2; }
            label=${mode%%:*} f="$out/ab_${timing}_${mode%%:*}_r${rep}"
            rm -f "$f.json"  # a failed or timed-out run must not leave an older result to be counted
            LABEL=$label SET=${mode#*:} timeout "${AB_TIMEOUT:-200}" $py scripts/setting_probe.py "$f.json" \
                "${AB_SHAPES:?set AB_SHAPES}" "$timing" "${AB_ROUNDS:-3}" > "$f.log" 2>&1 || tail -5 "$f.log"
        done
    done
done
$py - "$out" <<'PY'
import collections, glob, json, math, sys
out = sys.argv[1]
cells, configs, labels = collections.defaultdict(list), collections.defaultdict(dict), []
for f in sorted(glob.glob(f"{out}/ab_*.json")):
    d = json.load(open(f))
    t, lbl = ("b2b" if d["back_to_back"] else "flush"), d["label"]
    labels += [lbl] if lbl not in labels else []
    for r in d["results"]:
        cells[(t, r["shape"], lbl)].append(r["ratio"])
        configs[r["shape"]][lbl] = r["config"]
for t in ("flush", "b2b"):
    shapes = list(dict.fromkeys(k[1] for k in cells if k[0] == t))
    if not shapes:
        continue
    print(f"--- {t}: ratio vs cuBLAS per process, " + " / ".join(labels) + " (configs differ: *)")
    for s in shapes:
        row = "  ".join(",".join(f"{q:.3f}" for q in cells[(t, s, m)]) for m in labels)
        star = "*" if len(set(configs[s].values())) > 1 else " "
        print(f"{s:>18}{star} {' | '.join(configs[s][m] for m in labels if m in configs[s]):>60}  {row}")
    common = [s for s in shapes if all(cells[(t, s, m)] for m in labels)]  # shapes every setting timed
    for m in labels:
        logs = [math.log(sum(cells[(t, s, m)]) / len(cells[(t, s, m)])) for s in common]
        print(f"{t} {m}: geomean of mean ratios {math.exp(sum(logs) / max(len(logs), 1)):.4f} over {len(logs)} shapes"
              + (f" (of {len(shapes)}: the others lack a setting)" if len(common) < len(shapes) else ""))
PY
