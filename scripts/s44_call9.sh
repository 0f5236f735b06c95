#!/bin/bash
# Session 44, call 9: the heuristics' plans over many shapes with the swap-AB rule on from 1000 rows
# (tests/test_gpu_gemm.py) and the tuner's GPU tests (its candidates include these tiles from 701 rows).
export PYTHONPATH=$PWD
mkdir -p $OUT/c9
timeout 480 python -m pytest -q -x tests/test_gpu_gemm.py tests/test_gpu_tuning.py > $OUT/c9/pytest.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/c9/pytest.log
