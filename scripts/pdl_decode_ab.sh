#!/usr/bin/env bash
# Session 29: programmatic dependent launch on the decode tiles, on and off: `bench decode --no-eager --rounds 2` at
# M = 4, 16, 32, 40, 64 with WARPGEMM_PDL=1 (the rule: swap-AB launches) and =0, alternating processes. Results under $1.
source "$(dirname "$0")/gpu_env.sh" "$@"
for pdl in ${ORDER:-1 0}; do
  WARPGEMM_PDL=$pdl timeout 200 $py -m warpgemm bench decode --m ${MS:-4,16,32,40,64} --rounds 2 --no-eager \
    --json "$out/pdl$pdl.json" > "$out/pdl$pdl.log" 2>&1; echo "pdl$pdl rc=$?"
done
$py - "$out" <<'PY'
import json, os, sys
rows = {p: {r["shape"]: r for r in json.load(open(os.path.join(sys.argv[1], f"pdl{p}.json")))["results"]} for p in (1, 0)}
for shape, on in rows[1].items():
    off = rows[0][shape]
    print(f"{shape:>14} {on['config'][:24]:>24} on {on['tbs']:.3f} ({on['ratio']:.3f}x) off {off['tbs']:.3f} "
          f"({off['ratio']:.3f}x) off/on {on['us'] / off['us']:.3f}")
PY
