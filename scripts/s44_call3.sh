#!/bin/bash
# Session 44, call 3: swap-AB tiles from 1000 rows on by default (swap_rows.SWAP_WIDE_ROWS_MIN_M=1000): the GPU tests of
# the swap-AB tiles (row edges to 4096 rows, the heuristics' own choice with a bias), then `bench odd` (its
# 1536x4096x4096 changes plan) and `bench round` (no plan change: a control).
export PYTHONPATH=$PWD
mkdir -p $OUT/c3
timeout 200 python -m pytest -q tests/test_gpu_swap_rows.py > $OUT/c3/pytest.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/c3/pytest.log
timeout 150 python -m warpgemm bench odd --rounds 2 --json $OUT/c3/bench_odd.json > $OUT/c3/bench_odd.log 2>&1
echo "odd rc=$?"; tail -16 $OUT/c3/bench_odd.log
