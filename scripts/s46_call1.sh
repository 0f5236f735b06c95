#!/usr/bin/env bash
# Session 46, calls 1-4: the ragged-K groups' running-maximum start (GPU tests), then the ragged-K form against
# torch._grouped_mm for HEAD (.ab/base, carried), other versions (.ab/<side>, SIDES) and the working tree in
# alternating processes. TESTS=0 skips the tests.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
if [ "${TESTS:-1}" = 1 ]; then
    timeout 300 $py -m pytest -q -n 4 tests/test_gpu_grouped.py > "$out/tests_grouped.log" 2>&1
    tail -3 "$out/tests_grouped.log"
fi
here=$PWD
for rep in 1 2; do
    for side in ${SIDES:-base} work; do
        root=$here; [ "$side" = work ] || root=$here/.ab/$side
        PYTHONPATH=$root timeout 150 $py scripts/ragged_start_probe.py "$out/ragged_${side}_r$rep.json" $side 3 \
            > "$out/ragged_${side}_r$rep.log" 2>&1 || tail -3 "$out/ragged_${side}_r$rep.log"
    done
done
$py - "$out" <<'PY'
import glob, json, math, sys
out = sys.argv[1]
cells = {}
for f in sorted(glob.glob(f"{out}/ragged_*_r*.json")):
    d = json.load(open(f))
    for r in d["results"]:
        cells.setdefault((r["case"], r["routing"]), {}).setdefault(d["label"], []).append(r["ratio"])
logs = {s: [] for d in cells.values() for s in d}
for (case, kind), d in cells.items():
    print(f"{case:>30} {kind:>7}  " + "  ".join(f"{s} {' '.join(f'{v:.3f}' for v in d.get(s, []))}" for s in logs))
    if all(d.get(s) for s in logs):
        for s in logs:
            logs[s].append(sum(map(math.log, d[s])) / len(d[s]))
print("geomean vs torch._grouped_mm: "
      + "  ".join(f"{s} {math.exp(sum(v) / max(len(v), 1)):.3f}" for s, v in logs.items()))
PY
