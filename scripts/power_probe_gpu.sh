#!/usr/bin/env bash
# Clocks/power under load, ncu sections for the dense tile vs cuBLAS, and group_m 8 vs 16 on M >= 4096.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi -q -d POWER,CLOCK > "$out/smi_power_clock.txt" 2>&1
timeout 200 $py scripts/clock_probe.py "$out/clock_probe.json" 8192x8192x8192,4096x14336x4096,16384x8192x8192 \
    128x256x64_s3_w8_g8,128x256x64_s3_w8_g16 2.5 2>&1 | tee "$out/clock_probe.log"
for shape in 4096x14336x4096 8192x8192x8192; do
  timeout 150 ncu --profile-from-start off --clock-control none --section SpeedOfLight --section ComputeWorkloadAnalysis \
      --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis \
      $py scripts/ncu_gemm_probe.py $shape 128x256x64_s3_w8_g8,128x256x64_s3_w8_g16 > "$out/ncu_dense_$shape.txt" 2>&1
done
timeout 200 $py - "$out" <<'PY' 2>&1 | tail -16
import json, sys
from warpgemm.bench import sweep, suites
from warpgemm.bench.sweep import parse_config
suites.GEMM_SUITES["big"] = lambda: [c for c in suites.dense_suite() if c.M >= 4096]
res = sweep.run_sweep("big", configs=[parse_config(c) for c in ("128x256x64_s3_w8_g8", "128x256x64_s3_w8_g16")],
                      rounds=3, progress=lambda *_: None)
json.dump(res, open(sys.argv[1] + "/sweep_big_g8_g16.json", "w"), indent=1)
for r in res["results"]:
    print(f"{r['shape']:>18} {r['config']:>22} {r['ratio']:.3f}")
PY
