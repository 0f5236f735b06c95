#!/bin/bash
# Session 45, call 7: the audit's mends on the GPU (the fp16 backward of fp32 outputs, grouped_mm's weight gradient,
# group_gemm's and add/mul's refusals, explain): the CPU suites on CUDA tensors, and the GPU suites they touch.
export PYTHONPATH=$PWD
mkdir -p $OUT/c7
timeout 540 python -m pytest -q -n 4 -p no:cacheprovider tests/test_validation.py tests/test_gpu_grouped.py \
    tests/test_gpu_group_gemm.py tests/test_gpu_elementwise.py tests/test_gpu_fuzz.py tests/test_gpu_static_weights.py \
    "tests/test_gpu_gemm.py" -k "not slow" > $OUT/c7/pytest.log 2>&1
echo "pytest rc=$?"; tail -4 $OUT/c7/pytest.log
