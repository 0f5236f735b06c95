#!/usr/bin/env bash
# Session 30: static weights (warpgemm.mark_static). The static-weight and decode GPU tests, then `bench decode`
# with --static-weights (eager column too) and without it (the default path), one process each. Results under $1.
source "$(dirname "$0")/gpu_env.sh" "$@"
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 300 $py -m pytest -q -m gpu tests/test_gpu_static_weights.py tests/test_gpu_decode.py -n 4 \
    -p no:cacheprovider > "$out/tests.log" 2>&1; echo "tests rc=$?"; tail -3 "$out/tests.log"
fi
timeout 280 $py -m warpgemm bench decode --rounds 2 --static-weights --json "$out/bench_decode_static.json" \
  > "$out/bench_decode_static.log" 2>&1; echo "static rc=$?"
timeout 200 $py -m warpgemm bench decode --rounds 2 --no-eager --json "$out/bench_decode_default.json" \
  > "$out/bench_decode_default.log" 2>&1; echo "default rc=$?"
$py - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
runs = {k: json.load(open(os.path.join(out, f"bench_decode_{k}.json"))) for k in ("static", "default")}
rows = {k: {r["shape"]: r for r in v["results"]} for k, v in runs.items()}
for shape, s in rows["static"].items():
    d = rows["default"][shape]
    print(f"{shape:>14} {s['config'][:20]:>20} static {s['tbs']:.3f} TB/s {s['ratio']:.3f}x eager "
          f"{s.get('eager_ratio', float('nan')):.3f}x | default {d['tbs']:.3f} {d['ratio']:.3f}x")
for k, v in runs.items():
    print(k, {key: round(val, 4) for key, val in v.items() if key.startswith(("geomean", "min_"))})
PY
