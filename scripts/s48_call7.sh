#!/usr/bin/env bash
# Session 48, call 7: the MoE training step's two fixes (experts' gradient in their own layout; rows past the end
# zeroed in place by kernels/zero_rows.py). Their GPU tests and the grouped suite, then the step against
# torch._grouped_mm and its profile. Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 240 $py -m pytest -q -n 4 tests/test_gpu_grouped_backward.py tests/test_gpu_grouped.py \
    tests/test_gpu_group_gemm.py > "$out/tests.log" 2>&1
grep -E "passed|failed|Error" "$out/tests.log" | tail -6
timeout 120 $py scripts/grouped_train_step.py "$out/grouped_train_step.json" 2>&1 | tee "$out/grouped_train_step.txt"
timeout 60 $py scripts/grouped_step_profile.py > "$out/profile.txt" 2>&1
grep -E "====|AccumulateGrad  |masked_fill |zero_rows|gemm_kernel|copy_ " "$out/profile.txt" | cut -c1-60,130-200
