#!/bin/bash
# Session 45, call 9: after the review mends. The fp16 / fp32-output gradients against float64 (power-of-two scale),
# the GPU tests of the backward paths and of the validation on CUDA, and `bench groups` (group_gemm's per-problem
# checks added host time: is README's 1.76x still what a call gets?).
export PYTHONPATH=$PWD
mkdir -p $OUT/c9
timeout 60 python scripts/fp16_fp32out_grad_check.py 2>&1 | grep -v Warn | tee $OUT/c9/grad_check.txt | tail -3
timeout 200 python -m pytest -q -n 4 -p no:cacheprovider tests/test_validation.py tests/test_gpu_grouped.py \
    tests/test_gpu_group_gemm.py tests/test_gpu_elementwise.py -k "not slow" > $OUT/c9/pytest.log 2>&1
echo "pytest rc=$?"; tail -1 $OUT/c9/pytest.log
timeout 200 python -m warpgemm bench groups --json $OUT/c9/bench_groups.json > $OUT/c9/bench_groups.log 2>&1
echo "bench groups rc=$?"; tail -3 $OUT/c9/bench_groups.log
