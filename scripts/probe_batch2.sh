#!/usr/bin/env bash
# Session check of the band-16 rule: shipped-config GPU tests, `bench dense` (3 rounds), band height on the 8-expert MoE.
source "$(dirname "$0")/gpu_env.sh" "$@"
timeout 180 $py -m pytest -q -m gpu tests/test_gpu_gemm.py -k "g16 or heuristic" -p no:warnings -p no:cacheprovider \
    > "$out/gpu-tests-g16.log" 2>&1; echo "tests rc=$?"; tail -3 "$out/gpu-tests-g16.log"
timeout 420 $py -m warpgemm bench dense --rounds 3 --json "$out/bench_dense.json" > "$out/bench_dense.log" 2>&1
echo "bench rc=$?"
CONFIGS=128x256x64_s3_w8_g8,128x256x64_s3_w8_g16 CASES=0,1,2 ROUTINGS=skewed,uniform,empty timeout 240 \
    $py scripts/moe_config_probe.py "$out/moe_e8_group_m.json" > "$out/moe_e8_group_m.log" 2>&1; echo "moe rc=$?"
tail -22 "$out/moe_e8_group_m.log"; tail -28 "$out/bench_dense.log"
