#!/usr/bin/env bash
# Session 29's closing device call, results under $1: the GPU suite in two parts (-n 4), `bench decode --rounds 2`,
# and the 41-47-row boundary of the decode rule (plain 64x128x128 s4 vs swap 64x64x128 s6 at M = 36 and 44).
source "$(dirname "$0")/gpu_env.sh" "$@"
first="tests/test_gpu_fuzz.py tests/test_gpu_one_partition.py tests/test_gpu_fp8.py tests/test_gpu_gemm.py"
timeout 230 $py -m pytest -q -m gpu $first -n 4 -p no:cacheprovider > "$out/gpu_tests_a.log" 2>&1; echo "tests a rc=$?"
ignores=$(for f in $first; do printf -- "--ignore=%s " "$f"; done)
timeout 170 $py -m pytest -q -m gpu tests $ignores -n 4 -p no:cacheprovider > "$out/gpu_tests_b.log" 2>&1
echo "tests b rc=$?"
timeout 170 $py -m warpgemm bench decode --rounds 2 --json "$out/bench_decode.json" > "$out/bench_decode.log" 2>&1
echo "bench decode rc=$?"
timeout 80 $py scripts/graph_mid_probe.py "$out/boundary.json" 36,44 64x128x128_s4_w4_g8,64x64x128_s6_w4_g8_swap \
  14336x4096,22016x4096,28672x8192 > "$out/boundary.log" 2>&1; echo "boundary rc=$?"
tail -n 2 "$out"/gpu_tests_*.log; tail -n 45 "$out/bench_decode.log"
$py - "$out" <<'PY'
import collections, json, os, sys
t = collections.defaultdict(dict)
for r in json.load(open(os.path.join(sys.argv[1], "boundary.json")))["results"]:
    t[r["shape"]][r["config"].replace("_w4_g8", "")] = r["tbs"]
for shape, row in t.items():
    print(f"  {shape:>14} " + " ".join(f"{c}:{v:.3f}" for c, v in row.items()))
PY
