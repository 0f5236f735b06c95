#!/usr/bin/env bash
# Probe (session 34): the weight's evict-first hint on the last tile-row's loads only (several tile-rows read each
# weight panel; the last to read a line demotes it) against the shipped rule (all readers, K <= 16384) and all readers
# at any K. Needs scripts/hint_last_probe.diff applied (git apply) on the device copy: it adds WARPGEMM_HINT_LAST.
# One process per mode, separate Triton caches; results and summary.txt under the first argument.
source "$(dirname "$0")/gpu_env.sh" "$@"
S=${HL_SHAPES:-256x8192x28672,512x8192x28672,256x28672x8192,512x28672x8192,256x8192x8192,512x8192x8192,512x4096x14336,256x4096x14336,512x14336x4096,512x4096x4096,384x14336x4096,320x8192x8192}
K=warpgemm.kernels.hopper.gemm.WEIGHT_HINT_MAX_SHARED_K=65536
run() {  # label env set timing rep
    TRITON_CACHE_DIR=/tmp/tc_hl$2 WARPGEMM_HINT_LAST=$2 LABEL=$1 SET=$3 timeout 200 $py scripts/setting_probe.py \
        "$out/hl_$4_$1_r$5.json" "$S" "$4" 3 > "/tmp/hl_$4_$1_r$5.log" 2>&1 || tail -3 "/tmp/hl_$4_$1_r$5.log"
}
for rep in 1 2; do run base 0 "" flush $rep; run all 0 "$K" flush $rep; run last 1 "$K" flush $rep; done
run base 0 "" b2b 1; run all 0 "$K" b2b 1; run last 1 "$K" b2b 1
$py - "$out" <<'PY' | tee "$out/summary.txt"
import collections, glob, json, math, sys
out = sys.argv[1]; cells = collections.defaultdict(list); cfg = {}
for f in sorted(glob.glob(f"{out}/hl_*.json")):
    d = json.load(open(f)); t = "b2b" if d["back_to_back"] else "flush"
    for r in d["results"]:
        cells[(t, r["shape"], d["label"])].append(r["ratio"]); cfg[r["shape"], d["label"]] = r["config"]
gm = lambda v: math.exp(sum(map(math.log, v)) / len(v))
for t in ("flush", "b2b"):
    shapes = list(dict.fromkeys(k[1] for k in cells if k[0] == t)); cols = collections.defaultdict(list)
    print(f"{t}: ratio vs cuBLAS (mean over processes)")
    for s in shapes:
        m = {l: sum(cells[(t, s, l)]) / len(cells[(t, s, l)]) for l in ("base", "all", "last") if cells[(t, s, l)]}
        for l, v in m.items(): cols[l].append(v)
        print(f"  {s:>16} {cfg[s, 'base'][:24]:>24} " + " ".join(f"{l} {v:.3f}" for l, v in m.items()))
    print("  geomean " + " ".join(f"{l} {gm(v):.3f}" for l, v in cols.items()))
PY
