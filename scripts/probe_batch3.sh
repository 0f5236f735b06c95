#!/usr/bin/env bash
# Full GPU suite and `bench moe` after the band-16 rules.
source "$(dirname "$0")/gpu_env.sh" "$@"
timeout 400 $py -m pytest -q -m gpu tests -p no:warnings -p no:cacheprovider -x > "$out/gpu-tests-full.log" 2>&1
echo "tests rc=$?"; grep -E "passed|failed|Error" "$out/gpu-tests-full.log" | head -5
timeout 180 $py -m warpgemm bench moe --rounds 3 --json "$out/bench_moe.json" > "$out/bench_moe.log" 2>&1
echo "moe rc=$?"; tail -34 "$out/bench_moe.log"
