#!/usr/bin/env bash
# Session 48, calls 2-3: linear's recorded backward (ops/linear_autograd.py _BACKWARDS) and the one-launch bias
# gradient. Its GPU test and the GEMM suite, then the host-time rows (bench overhead, the step floor probe), the step
# probe and `bench train`. Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 200 $py -m pytest -q -n 4 tests/test_gpu_linear_backward.py tests/test_gpu_gemm.py > "$out/tests.log" 2>&1
grep -E "passed|failed|Error" "$out/tests.log" | tail -5
timeout 60 $py scripts/train_step_floor.py 2>&1 | tee "$out/step_floor.txt"
timeout 120 $py -m warpgemm bench overhead --json "$out/bench_overhead.json" > "$out/bench_overhead.log" 2>&1
tail -9 "$out/bench_overhead.log"
timeout 100 $py scripts/train_probe.py "$out/train_probe.json" 3 > "$out/train_probe.log" 2>&1
grep step "$out/train_probe.log"
timeout 120 $py -m warpgemm bench train --rounds 3 --json "$out/bench_train.json" > "$out/bench_train.log" 2>&1
tail -3 "$out/bench_train.log"
