#!/usr/bin/env bash
# Session 48, call 9: after the review mends. The new GPU tests, the grouped and GEMM suites' training parts, then
# the MoE step and the linear step's host rows. Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 300 $py -m pytest -q -n 4 tests/test_gpu_linear_backward.py tests/test_gpu_grouped_backward.py \
    tests/test_gpu_grouped.py tests/test_gpu_gemm.py > "$out/tests.log" 2>&1
grep -E "passed|failed|Error" "$out/tests.log" | tail -6
timeout 90 $py scripts/grouped_train_step.py "$out/grouped_train_step.json" 2>&1 | tee "$out/grouped_train_step.txt"
timeout 90 $py -m warpgemm bench overhead --json "$out/bench_overhead.json" > "$out/bench_overhead.log" 2>&1
tail -4 "$out/bench_overhead.log"
