#!/usr/bin/env bash
# Session 28 probes on few-row products (issues 4, 6), each step its own process, results under $1:
#  pdl_*      `bench decode --m 32,64` with WARPGEMM_PDL=1 (the rule) and =all (the plain 33-64-row tile too), twice
#  m64_forced `bench decode --m 64` with the swap-AB 64x64 and the plain 64x128 tiles forced on all six weights
#  m128_graph `bench decode --m 128`: the M = 128 row of `mid` timed as decode times it (CUDA graphs, cold weights)
#  sweep_mid  `bench sweep --suite mid` over the 128x256 (3 stages; 4 stages + chunked stores) and 128x128 tiles
#   bash scripts/few_rows_probe.sh "$OUT/work"; STEPS="pdl m64" selects steps
source "$(dirname "$0")/gpu_env.sh" "$@"
steps=${STEPS:-"pdl m64 m128 sweep"}
run() { local name=$1; shift; timeout "${LIMIT:-200}" "$@" > "$out/$name.log" 2>&1; echo "$name rc=$?"; }
for s in $steps; do
  case $s in
    pdl) for r in 1 2; do for p in 1 all; do
           WARPGEMM_PDL=$p run pdl_${p}_r$r $py -m warpgemm bench decode --m 32,64 --rounds 2 --no-eager \
             --json "$out/pdl_${p}_r$r.json"; done; done ;;
    m64) run m64_forced $py -m warpgemm bench decode --m 64 --rounds 2 --no-eager \
           --configs 64x64x128_s6_w4_g8_swap,64x128x128_s4_w4_g8 --json "$out/m64_forced.json" ;;
    m128) run m128_graph $py -m warpgemm bench decode --m 128 --rounds 2 --no-eager --json "$out/m128_graph.json" ;;
    sweep) LIMIT=300 run sweep_mid $py -m warpgemm bench sweep --suite mid --rounds 2 \
           --configs 128x256x64_s3_w8_g8,128x256x64_s4_w8_g8_c4,128x128x64_s6_w4_g8 --json "$out/sweep_mid.json" ;;
  esac
done
$py - "$out" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    d = json.load(open(f))
    rows = d["results"]
    cell = lambda r: f"{r['shape']}:{r['config'].split('_')[0]}{'s' if 'swap' in r['config'] else ''}" \
        f"{'c4' if 'c4' in r['config'] else ''}{'/s3' if '_s3_' in r['config'] else ''}:" \
        + (f"{r['tbs']:.2f}/" if "tbs" in r else "") + f"{r['ratio']:.3f}"
    print(os.path.basename(f), d.get("geomean_ratio"), " ".join(cell(r) for r in rows))
PY
