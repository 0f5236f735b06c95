#!/usr/bin/env bash
# Programmatic dependent launch settings compared in alternating processes, back to back in CUDA graphs
# (scripts/graph_mid_probe.py: one call per cold weight copy, ours against F.linear in the same process).
#   PDL_MODES="1 all" bash scripts/pdl_ab.sh "$OUT"     # WARPGEMM_PDL values, in turn, $PDL_REPS times
# Cases: M in $PDL_M x (N, K) in $PDL_SHAPES ("NxK,NxK"), plus $PDL_EXTRA ("MxNxK,...": more single cases).
source "$(dirname "$0")/gpu_env.sh" "$@"
for rep in $(seq "${PDL_REPS:-2}"); do
    for mode in ${PDL_MODES:-1 all 0}; do
        WARPGEMM_PDL=$mode timeout 250 $py scripts/graph_mid_probe.py "$out/pdl-${mode}_run${rep}.json" \
            "${PDL_M:-128,256}" auto "${PDL_SHAPES:-4096x4096,14336x4096,4096x14336,8192x8192,28672x8192,8192x28672}" \
            "${PDL_EXTRA:-}" > "$out/pdl-${mode}_run${rep}.log" 2>&1 || tail -5 "$out/pdl-${mode}_run${rep}.log"
    done
done
$py - "$out" ${PDL_MODES:-1 all 0} <<'PY'
import glob, json, sys
out, modes = sys.argv[1], sys.argv[2:]
rows = {}
for mode in modes:
    for f in sorted(glob.glob(f"{out}/pdl-{mode}_run*.json")):
        for r in json.load(open(f))["results"]:
            rows.setdefault(r["shape"], {}).setdefault(mode, []).append((r["tbs"], r["ratio"], r["config"]))
print(f"{'shape':>16} {'config':>26}  " + "  ".join(f"{'WARPGEMM_PDL=' + m + ' TB/s (ratio)':<26}" for m in modes))
for shape, d in rows.items():
    cell = lambda m: " ".join(f"{t:.2f}({q:.3f})" for t, q, _ in d.get(m, []))
    print(f"{shape:>16} {d[modes[0]][0][2][:26]:>26}  " + "  ".join(f"{cell(m):<26}" for m in modes))
PY
