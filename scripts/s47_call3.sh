#!/usr/bin/env bash
# Session 47: linear's one-node training call (ops/linear_autograd.py) on the GPU: host parts, a step's host time,
# step ratios, `bench train`, and the GEMM suite whose training tests it runs.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
$py scripts/train_host_parts.py > "$out/parts.txt" 2>&1; grep -v Warn "$out/parts.txt" | grep " us"
$py scripts/backward_parts.py > "$out/backward_parts.txt" 2>&1; grep " us" "$out/backward_parts.txt"
$py scripts/train_host_probe.py > "$out/host.txt" 2>&1; sed -n 2,3p "$out/host.txt"
timeout 150 $py scripts/train_probe.py "$out/train_probe.json" 3 > "$out/train_probe.log" 2>&1
grep -E "step" "$out/train_probe.log"
timeout 200 $py -m warpgemm bench train --rounds 3 --json "$out/bench_train.json" > "$out/bench_train.log" 2>&1
tail -16 "$out/bench_train.log"
timeout 200 $py -m pytest -q -n 4 tests/test_gpu_gemm.py > "$out/tests.log" 2>&1
tail -2 "$out/tests.log"
