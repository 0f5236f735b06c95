#!/usr/bin/env bash
# Session 47: the eager training path (ops/eager_autograd.py) on the GPU: host time of a step, per-GEMM and step
# ratios, `bench train`, and the GPU suites whose backward it now runs.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
$py scripts/train_trace_probe.py > "$out/trace.txt" 2>&1; head -5 "$out/trace.txt"
$py scripts/train_host_probe.py > "$out/host.txt" 2>&1; head -9 "$out/host.txt"
timeout 150 $py scripts/train_probe.py "$out/train_probe.json" 3 > "$out/train_probe.log" 2>&1
grep -E "step|dw " "$out/train_probe.log"
timeout 300 $py -m pytest -q -n 4 tests/test_gpu_gemm.py tests/test_gpu_grouped.py tests/test_gpu_elementwise.py \
    > "$out/tests.log" 2>&1
tail -2 "$out/tests.log"
timeout 200 $py -m warpgemm bench train --rounds 3 --json "$out/bench_train.json" > "$out/bench_train.log" 2>&1
tail -16 "$out/bench_train.log"
