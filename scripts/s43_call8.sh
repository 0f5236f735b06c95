#!/bin/bash
# Session 43, call 8: the swap-AB rule past 700 rows on the GPU: test_gpu_swap_rows (with the new test) and
# test_gpu_gemm (the heuristics' plans over many shapes), then `bench odd` (its 1536^3, 1536x4096x4096 and
# 1024x2304x4096 change plan) and `bench round` (no plan change: a control).
export PYTHONPATH=$PWD
mkdir -p $OUT/c8
timeout 300 python -m pytest -q -x tests/test_gpu_swap_rows.py tests/test_gpu_gemm.py > $OUT/c8/pytest.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/c8/pytest.log
timeout 120 python -m warpgemm bench odd --rounds 2 --json $OUT/c8/bench_odd.json > $OUT/c8/bench_odd.log 2>&1
echo "odd rc=$?"; tail -16 $OUT/c8/bench_odd.log
