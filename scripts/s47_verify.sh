#!/usr/bin/env bash
# For the next GPU session: what session 46 changed and could not run on the GPU (its device time ran out).
# The GPU suites the backward's gradient layouts and the torch.func / forward-AD / FLOP-counter paths touch, the
# bad-offset cases added after review, then `bench train` (forward + backward vs F.linear). Results under $out.
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 420 $py -m pytest -q -n 4 tests/test_gpu_gemm.py tests/test_gpu_fuzz.py tests/test_gpu_grouped.py \
    tests/test_gpu_variants.py > "$out/tests.log" 2>&1
tail -3 "$out/tests.log"
timeout 300 $py -m warpgemm bench train --rounds 3 --json "$out/bench_train.json" > "$out/bench_train.log" 2>&1
tail -16 "$out/bench_train.log"
