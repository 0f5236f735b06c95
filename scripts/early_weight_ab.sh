#!/usr/bin/env bash
# Session 30 (probe tree only: WARPGEMM_EARLY_WEIGHT no longer exists; see results/2026-11-27-static-weights/
# PROVENANCE.txt): swap-AB launches that load a ring-full of the weight before they wait on the prior grid
# (WARPGEMM_EARLY_WEIGHT=1, every such launch; partitions.tma_producer) against the default, `bench decode
# --no-eager --rounds 2` in alternating processes; first the decode and fuzz GPU tests with it on. Results under $1.
source "$(dirname "$0")/gpu_env.sh" "$@"
if [ -z "${SKIP_TESTS:-}" ]; then
  WARPGEMM_EARLY_WEIGHT=1 timeout 240 $py -m pytest -q -m gpu tests/test_gpu_decode.py tests/test_gpu_fuzz.py -n 4 \
    -p no:cacheprovider > "$out/tests_early.log" 2>&1; echo "tests rc=$?"; tail -2 "$out/tests_early.log"
fi
for mode in ${ORDER:-0 1}; do
  WARPGEMM_EARLY_WEIGHT=$mode timeout 200 $py -m warpgemm bench decode --m ${MS:-4,16,32,64} --rounds 2 --no-eager \
    --json "$out/early$mode${TAG:-}.json" > "$out/early$mode${TAG:-}.log" 2>&1; echo "early$mode rc=$?"
done
$py - "$out" "${TAG:-}" <<'PY'
import json, math, os, sys
out, tag = sys.argv[1], sys.argv[2]
rows = {p: {r["shape"]: r for r in json.load(open(os.path.join(out, f"early{p}{tag}.json")))["results"]} for p in (0, 1)}
logs = {0: [], 1: []}
for shape, off in rows[0].items():
    on = rows[1][shape]
    logs[0].append(math.log(off["ratio"])); logs[1].append(math.log(on["ratio"]))
    print(f"{shape:>14} {on['config'][:22]:>22} off {off['tbs']:.3f} ({off['ratio']:.3f}x) on {on['tbs']:.3f} "
          f"({on['ratio']:.3f}x) on/off {off['us'] / on['us']:.3f}")
for p in (0, 1):
    print(f"early={p}: geomean {math.exp(sum(logs[p]) / len(logs[p])):.4f}")
PY
