#!/bin/bash
# Session 43, call 1: the weight-gradient layout (A read along M, B along N) on the dense, mid and odd suites, and a
# fresh nt odd run beside it. Every figure against torch.matmul in the same process.
export PYTHONPATH=$PWD
mkdir -p $OUT/c1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/c1/gpu.txt
run() { local name=$1; shift; local t0=$SECONDS
  timeout ${T:-200} python -m warpgemm bench "$@" --json $OUT/c1/$name.json > $OUT/c1/$name.log 2>&1
  echo "$name rc=$? $((SECONDS - t0)) s" | tee -a $OUT/c1/times.txt; }
run odd_tn odd --layout tn --rounds 2
run odd_nt odd --layout nt --rounds 2
run mid_tn mid --layout tn --rounds 3
T=300 run dense_tn dense --layout tn --rounds 2
python - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/c1/*.json")):
    d = json.load(open(f))
    print(os.path.basename(f), f"geomean {d['geomean_ratio']:.3f} min {d['min_ratio']:.3f}")
    for r in d["results"]:
        print(f"  {r['shape']:>18} {r['config']:>36} {r['ratio']:.3f}")
PY
