#!/usr/bin/env bash
# Session 30, last call: the static-weight and decode GPU tests on the final tree, `bench decode --static-weights`
# at M = 1, 2, 4, 16, 32, 64 (eager column too), and the default plan at M = 1 and 2 (the GEMVs that static
# weights now skip), one process each. Results under $1.
source "$(dirname "$0")/gpu_env.sh" "$@"
timeout 200 $py -m pytest -q -m gpu tests/test_gpu_static_weights.py tests/test_gpu_decode.py -n 4 \
  -p no:cacheprovider > "$out/tests.log" 2>&1; echo "tests rc=$?"; tail -3 "$out/tests.log"
timeout 300 $py -m warpgemm bench decode --rounds 2 --static-weights --m 1,2,4,16,32,64 \
  --json "$out/bench_decode_static.json" > "$out/bench_decode_static.log" 2>&1; echo "static rc=$?"
timeout 100 $py -m warpgemm bench decode --rounds 2 --no-eager --m 1,2 --json "$out/bench_decode_gemv.json" \
  > "$out/bench_decode_gemv.log" 2>&1; echo "gemv rc=$?"
$py - "$out" <<'PY'
import json, math, os, sys
out = sys.argv[1]
st = json.load(open(os.path.join(out, "bench_decode_static.json")))
gv = {r["shape"]: r for r in json.load(open(os.path.join(out, "bench_decode_gemv.json")))["results"]}
suite = [r for r in st["results"] if r["M"] != 2]
for r in st["results"]:
    g = gv.get(r["shape"])
    print(f"{r['shape']:>14} {r['config'][:20]:>20} {r['tbs']:.3f} TB/s {r['ratio']:.3f}x eager "
          f"{r.get('eager_ratio', float('nan')):.3f}x" + (f" | gemv {g['tbs']:.3f} {g['ratio']:.3f}x" if g else ""))
geo = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs))
print(f"suite (M = 1,4,16,32,64): geomean {geo([r['ratio'] for r in suite]):.4f} min {min(r['ratio'] for r in suite):.4f}"
      f" eager {geo([r['eager_ratio'] for r in suite]):.4f} min {min(r['eager_ratio'] for r in suite):.4f}")
big = [r["tbs"] for r in suite if r["weight_mb"] >= 64]
small = [r["tbs"] for r in suite if r["weight_mb"] < 64]
print(f"min TB/s >= 64 MB {min(big):.3f}; 4096^2 {min(small):.3f}")
PY
