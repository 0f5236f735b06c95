#!/usr/bin/env bash
# For the next GPU session: what session 48 changed after its device time ran out. The token form's recorded
# backward (ops/grouped_recorded.py: from the second backward of a signature dX and dW launch from the recorded
# plans) and the launch helpers it shares with the general path (grouped.tokens_launch, grouped_ragged_k.
# ragged_launch). The grouped suites, then the MoE step probe and `bench moe --train`. Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 300 $py -m pytest -q -n 4 tests/test_gpu_grouped_backward.py tests/test_gpu_grouped.py \
    tests/test_gpu_group_gemm.py tests/test_gpu_linear_backward.py tests/test_gpu_fuzz.py > "$out/tests.log" 2>&1
grep -E "passed|failed|Error" "$out/tests.log" | tail -6
timeout 90 $py scripts/grouped_train_step.py "$out/grouped_train_step.json" 2>&1 | tee "$out/grouped_train_step.txt"
timeout 200 $py -m warpgemm bench moe --train --rounds 3 --json "$out/bench_moe_train.json" > "$out/bench_moe_train.log" 2>&1
tail -3 "$out/bench_moe_train.log"
