#!/usr/bin/env bash
# For the next GPU session: what session 47 changed after its device time ran out. The output of matmul / linear
# is now the tensor itself (not a view of the 3-D buffer), static-weight marks live in the registry only, linear's
# training node is taken under dispatch modes too, legacy vmap tensors go to the registered ops. The suites those
# touch, then `bench train` and the step probe (scripts/train_probe.py). Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 330 $py -m pytest -q -n 4 tests/test_gpu_gemm.py tests/test_gpu_grouped.py tests/test_gpu_elementwise.py \
    tests/test_gpu_static_weights.py tests/test_gpu_decode.py tests/test_gpu_fuzz.py > "$out/tests.log" 2>&1
tail -3 "$out/tests.log"
timeout 120 $py -m warpgemm bench train --rounds 3 --json "$out/bench_train.json" > "$out/bench_train.log" 2>&1
tail -16 "$out/bench_train.log"
timeout 100 $py scripts/train_probe.py "$out/train_probe.json" 3 > "$out/train_probe.log" 2>&1
grep step "$out/train_probe.log"
timeout 120 $py -m warpgemm bench overhead --json "$out/bench_overhead.json" > "$out/bench_overhead.log" 2>&1
tail -9 "$out/bench_overhead.log"
